"""StableHLO as MLIR text through PJRT_Client_Compile (format "mlir").

Third-party hosts send what `jax.jit(f).lower(*args).as_text()` prints, not a portable
artifact. Each program's text (JAX's pretty form, with and without locations, and MLIR's
generic form) is written to a file and run by `stablert run` on the plugin under test: the
host library passes the text unchanged to PJRT_Client_Compile. Every output is checked
against JAX's CPU backend in this process, with JAX's tolerances for f32.
"""
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import stablert


def cli() -> str:
    library = pathlib.Path(stablert.library_path())
    beside = library.parent / "stablert"
    return str(beside) if beside.is_file() and os.access(beside, os.X_OK) else stablert.cli_path()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, VIRTUAL_ENV=sys.prefix)
    return subprocess.run([cli(), *args], capture_output=True, text=True, timeout=300, env=env)


def mlp(x, w, b):
    return jnp.tanh(x @ w + b), jnp.sum(x, axis=1)


def loops_and_sort(x, w, b):
    y = lax.fori_loop(0, 5, lambda i, v: v * 0.5 + jnp.sin(v), x)
    return jnp.sort(y, axis=1), jnp.cumsum(y, axis=0), jnp.argmax(y, axis=1)


def gathers_and_conv(x, w, b):
    idx = jnp.array([3, 0, 7, 1])
    taken = jnp.take(x, idx, axis=0)
    kernel = w[:9, :4].reshape(3, 3, 1, 4)
    image = x[None, :16, :16, None]
    conv = lax.conv_general_dilated(image, kernel, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
    cond = lax.cond(b[0] > 0, lambda: x[:4] * 2, lambda: x[:4] - 1)
    return taken, conv, cond, jnp.where(x > 0, x, b[0]).astype(jnp.float16), x[1:9:2, ::3]


PROGRAMS = {"mlp": mlp, "loops_and_sort": loops_and_sort, "gathers_and_conv": gathers_and_conv}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64), dtype=np.float32)
    w = rng.standard_normal((64, 16), dtype=np.float32) / 8
    b = rng.standard_normal((16,), dtype=np.float32)
    directory = tmp_path_factory.mktemp("inputs")
    args = []
    for name, value in (("x", x), ("w", w), ("b", b)):
        np.save(directory / f"{name}.npy", value)
        args += ["--in", str(directory / f"{name}.npy")]
    return (x, w, b), args


def texts(fn, values):
    lowered = jax.jit(fn, keep_unused=True).lower(*values)
    module = lowered.compiler_ir("stablehlo")
    return {
        "pretty": lowered.as_text(),
        "debug_info": lowered.as_text(debug_info=True),
        "generic": module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True),
    }


@pytest.mark.parametrize("form", ["pretty", "debug_info", "generic"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_text_program_matches_jax_cpu(inputs, tmp_path, name, form, cpu_device):
    values, args = inputs
    fn = PROGRAMS[name]
    text = texts(fn, values)[form]
    assert not text.startswith("ML\xefR")
    program = tmp_path / "program.mlir"
    program.write_text(text)
    result = run_cli("run", stablert.library_path(), str(program), *args, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    expected = jax.jit(fn, keep_unused=True)(*(jax.device_put(v, cpu_device) for v in values))
    for i, want in enumerate(jax.tree_util.tree_leaves(expected)):
        got = np.load(tmp_path / f"output{i}.npy")
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, (i, got.dtype, want.dtype)
        if want.dtype == np.float16:
            np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3)
        elif np.issubdtype(want.dtype, np.floating):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(got, want)


def test_text_and_bytecode_dump_alike(inputs, tmp_path):
    values, _ = inputs
    lowered = jax.jit(mlp).lower(*values)
    (tmp_path / "f.mlir").write_text(lowered.as_text())
    text = run_cli("dump", str(tmp_path / "f.mlir"))
    assert text.returncode == 0, text.stderr
    assert "stablehlo.dot_general" in text.stdout and "stablehlo.tanh" in text.stdout
    again = run_cli("dump", "--stablehlo", str(tmp_path / "f.mlir"))
    assert again.returncode == 0, again.stderr
    (tmp_path / "g.mlir").write_text(again.stdout)
    round_trip = run_cli("dump", str(tmp_path / "g.mlir"))
    assert round_trip.returncode == 0, round_trip.stderr
    assert round_trip.stdout == text.stdout


def test_malformed_and_chlo_text_are_clear_errors(inputs, tmp_path):
    values, args = inputs
    broken = lowered_text = jax.jit(mlp).lower(*values).as_text()
    broken = lowered_text.replace("stablehlo.tanh %", "stablehlo.tanh %missing_", 1)
    (tmp_path / "broken.mlir").write_text(broken)
    result = run_cli("run", stablert.library_path(), str(tmp_path / "broken.mlir"), *args)
    assert result.returncode == 1
    assert "INVALID_ARGUMENT" in result.stderr and "use of undefined value '%missing_" in result.stderr, result.stderr
    # CHLO ops (JAX emits them for erf_inv, lgamma, top_k, ...) are decomposed by portable
    # artifact serialization; the text reader names them.
    (tmp_path / "chlo.mlir").write_text(jax.jit(lambda x, w, b: lax.erf_inv(x * 0.1), keep_unused=True).lower(*values).as_text())
    result = run_cli("run", stablert.library_path(), str(tmp_path / "chlo.mlir"), *args)
    assert result.returncode == 1 and "chlo.erf_inv" in result.stderr, result.stderr
