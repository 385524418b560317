"""The `stablert` command-line tool on the host library, across plugins.

A program exported from JAX (`jax.export`, StableHLO bytecode) and the same program as the MLIR
text `jax.jit(f).lower(...).as_text()` prints are run by `stablert run` on StableRT and on
XLA's own CPU plugin (xla-cpu-pjrt, PJRT 0.81, found by its name `cpu`), and by
`stablert compare` on both; every output is checked against JAX's CPU backend in this
process, with the tolerances JAX's tests use for f32 matrix products.
"""
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import stablert
from cli_runner import run_cli

XLA_PLUGIN_DIR = pathlib.Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / "xla_plugins" / "xla_cpu_pjrt"

pytestmark = pytest.mark.skipif(
    not XLA_PLUGIN_DIR.is_dir(), reason="XLA's CPU plugin (pip package xla-cpu-pjrt, installed by setup.sh) is absent"
)


def f(x, w, b):
    return jnp.tanh(x @ w + b), jnp.sum(x, axis=1)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 256), dtype=np.float32)
    w = rng.standard_normal((256, 64), dtype=np.float32) / 16
    b = rng.standard_normal((64,), dtype=np.float32)
    directory = tmp_path_factory.mktemp("program")
    program = directory / "f.mlirbc"
    program.write_bytes(jax.export.export(jax.jit(f), platforms=["cpu"])(x, w, b).mlir_module_serialized)
    (directory / "f.mlir").write_text(jax.jit(f).lower(x, w, b).as_text())
    inputs = []
    for name, value in (("x", x), ("w", w), ("b", b)):
        np.save(directory / f"{name}.npy", value)
        inputs += ["--in", str(directory / f"{name}.npy")]
    cpu = jax.devices("cpu")[0]
    expected = jax.jit(f)(*(jax.device_put(v, cpu) for v in (x, w, b)))
    return program, inputs, [np.asarray(e) for e in expected]


@pytest.mark.parametrize("form", ["bytecode", "text"])
@pytest.mark.parametrize("plugin", ["stablert", "cpu"])
def test_run_on_each_plugin_matches_jax_cpu(exported, tmp_path, plugin, form):
    program, inputs, expected = exported
    if form == "text":
        program = program.with_suffix(".mlir")
    target = stablert.library_path() if plugin == "stablert" else plugin
    result = run_cli("run", target, str(program), *inputs, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "output 0: f32[128,64]" in result.stdout and "output 1: f32[128]" in result.stdout, result.stdout
    for i, want in enumerate(expected):
        got = np.load(tmp_path / f"output{i}.npy")
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("form", ["bytecode", "text"])
def test_compare_stablert_with_xla_cpu(exported, form):
    program, inputs, _ = exported
    if form == "text":
        program = program.with_suffix(".mlir")
    result = run_cli("compare", stablert.library_path(), "cpu", str(program), *inputs)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count(" agree: ") == 2 and result.stdout.endswith("outputs agree\n"), result.stdout
    # Generated inputs are the same on both sides too.
    generated = run_cli("compare", stablert.library_path(), "cpu", str(program), "--seed", "3")
    assert generated.returncode == 0, generated.stdout + generated.stderr


def test_wrong_inputs_and_unknown_plugins_are_clear_errors(exported, tmp_path):
    program, inputs, _ = exported
    np.save(tmp_path / "bad.npy", np.zeros((3,), np.float32))
    bad = run_cli("run", "cpu", str(program), "--in", str(tmp_path / "bad.npy"))
    assert bad.returncode == 1 and "1 --in files for a program of 3 arguments" in bad.stderr, bad.stderr
    unknown = run_cli("info", "no_such_plugin")
    assert unknown.returncode == 1 and "no PJRT plugin named 'no_such_plugin'" in unknown.stderr, unknown.stderr
    usage = run_cli("compare", "cpu")
    assert usage.returncode == 2 and "usage: stablert compare" in usage.stderr, usage.stderr


def test_info_on_xla_cpu_names_its_version_and_absent_slots():
    result = run_cli("info", "cpu")
    assert result.returncode == 0, result.stderr
    assert "PJRT C API: 0.81" in result.stdout
    assert "absent: PJRT_Client_Load" in result.stdout  # added in 0.95
    assert "platform: cpu" in result.stdout
    # Present but stubs: found by calling each slot with null handles in a child process.
    assert "unimplemented: PJRT_LoadedExecutable_Fingerprint" in result.stdout, result.stdout


def _write_inputs(directory, values):
    args = []
    for i, value in enumerate(values):
        np.save(directory / f"in{i}.npy", value)
        args += ["--in", str(directory / f"in{i}.npy")]
    return args


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    """jax.export artifacts (Exported.serialize()): one device, and 2 devices with x split by rows."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 96), dtype=np.float32)
    w = rng.standard_normal((96, 32), dtype=np.float32) / 10
    b = rng.standard_normal((32,), dtype=np.float32)
    directory = tmp_path_factory.mktemp("artifacts")
    single = directory / "single.jaxexport"
    single.write_bytes(jax.export.export(jax.jit(f), platforms=["cpu"])(x, w, b).serialize())
    mesh = jax.sharding.AbstractMesh((2,), ("d",))
    P = jax.sharding.PartitionSpec
    rows, replicated = jax.sharding.NamedSharding(mesh, P("d", None)), jax.sharding.NamedSharding(mesh, P())
    sharded_f = jax.jit(f, in_shardings=(rows, replicated, replicated),
                        out_shardings=(rows, jax.sharding.NamedSharding(mesh, P("d"))))
    sharded = directory / "sharded.jaxexport"
    sharded.write_bytes(jax.export.export(sharded_f, platforms=["cpu"])(x, w, b).serialize())
    cpu = jax.devices("cpu")[0]
    expected = [np.asarray(e) for e in jax.jit(f)(*(jax.device_put(v, cpu) for v in (x, w, b)))]
    return single, sharded, _write_inputs(directory, (x, w, b)), expected


@pytest.mark.parametrize("plugin", ["stablert", "cpu"])
@pytest.mark.parametrize("which", ["single", "sharded"])
def test_jax_export_artifact_runs_on_each_plugin(artifacts, tmp_path, plugin, which):
    single, sharded, inputs, expected = artifacts
    program = single if which == "single" else sharded
    target = stablert.library_path() if plugin == "stablert" else plugin
    result = run_cli("run", target, str(program), *inputs, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for i, want in enumerate(expected):
        np.testing.assert_allclose(np.load(tmp_path / f"output{i}.npy"), want, rtol=1e-5, atol=1e-5)
    bench = run_cli("bench", target, str(program), *inputs, "--runs", "3")
    assert bench.returncode == 0 and f"{1 if which == 'single' else 2} device(s)" in bench.stdout, bench.stdout


@pytest.mark.parametrize("plugin", ["stablert", "cpu"])
@pytest.mark.parametrize("which", ["single", "sharded"])
def test_fortran_order_inputs_run_on_each_plugin(artifacts, tmp_path, plugin, which):
    """x and w saved in Fortran order: one device gets them as column-major host arrays (the
    plugin reorders them), two devices get row-major blocks cut on the host."""
    single, sharded, inputs, expected = artifacts
    paths = inputs[1::2]
    fortran = []
    for i, path in enumerate(paths):
        value = np.load(path)
        np.save(tmp_path / f"f{i}.npy", np.asfortranarray(value))
        assert np.load(tmp_path / f"f{i}.npy").flags.c_contiguous == (value.ndim < 2)
        fortran += ["--in", str(tmp_path / f"f{i}.npy")]
    program = single if which == "single" else sharded
    target = stablert.library_path() if plugin == "stablert" else plugin
    out = tmp_path / "out"
    out.mkdir()
    result = run_cli("run", target, str(program), *fortran, "--out", str(out))
    assert result.returncode == 0, result.stderr
    for i, want in enumerate(expected):
        np.testing.assert_allclose(np.load(out / f"output{i}.npy"), want, rtol=1e-5, atol=1e-5)


def test_compare_jax_export_artifact_sharded_over_two_devices(artifacts):
    _, sharded, inputs, _ = artifacts
    result = run_cli("compare", stablert.library_path(), "cpu", str(sharded), *inputs)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.endswith("outputs agree\n"), result.stdout


def test_mlir_text_is_passed_to_the_plugin_unchanged(exported, tmp_path):
    program, inputs, expected = exported
    text = tmp_path / "f.mlir"
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 256), dtype=np.float32)
    w = rng.standard_normal((256, 64), dtype=np.float32) / 16
    b = rng.standard_normal((64,), dtype=np.float32)
    text.write_text(jax.jit(f).lower(x, w, b).as_text())
    result = run_cli("run", "cpu", str(text), *inputs, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    for i, want in enumerate(expected):
        np.testing.assert_allclose(np.load(tmp_path / f"output{i}.npy"), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("command", ["info", "run", "bench", "compare", "conform"])
def test_every_command_has_help(command):
    result = run_cli(command, "--help")
    assert result.returncode == 0 and result.stdout.startswith(f"usage: stablert {command}"), result.stdout


def scan_with_carry(xs):
    """The corpus program sharding/jit_sharded_scan: neither result is annotated, so where the
    8 devices' shards of the carry and of ys lie is the compiler's choice."""
    return jax.lax.scan(lambda c, x: (c + x, c), jnp.zeros(4, jnp.float32), xs)


@pytest.fixture(scope="module")
def sharded_scan(tmp_path_factory):
    """jit_sharded_scan for a {a: 2, b: 4} mesh, xs split by columns over b: the artifact's
    bytecode, and its module as MLIR text."""
    xs = np.arange(1, 25, dtype=np.float32).reshape(6, 4) * np.float32(0.37)
    mesh = jax.sharding.AbstractMesh((2, 4), ("a", "b"))
    columns = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(None, "b"))
    exported = jax.export.export(jax.jit(scan_with_carry, in_shardings=(columns,)), platforms=["cpu"])(
        jax.ShapeDtypeStruct(xs.shape, xs.dtype))
    directory = tmp_path_factory.mktemp("sharded_scan")
    (directory / "scan.mlirbc").write_bytes(exported.mlir_module_serialized)
    (directory / "scan.mlir").write_text(exported.mlir_module())
    cpu = jax.devices("cpu")[0]
    expected = [np.asarray(e) for e in jax.jit(scan_with_carry)(jax.device_put(xs, cpu))]
    return directory, _write_inputs(directory, (xs,)), expected


@pytest.mark.parametrize("form", ["bytecode", "text"])
@pytest.mark.parametrize("plugin", ["stablert", "cpu"])
def test_sharded_scan_outputs_are_placed_by_the_executables_shardings(sharded_scan, tmp_path, plugin, form):
    directory, inputs, expected = sharded_scan
    program = directory / ("scan.mlirbc" if form == "bytecode" else "scan.mlir")
    target = stablert.library_path() if plugin == "stablert" else plugin
    result = run_cli("run", target, str(program), *inputs, "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "output 0: f32[4]" in result.stdout and "output 1: f32[6,4]" in result.stdout, result.stdout
    for i, want in enumerate(expected):
        np.testing.assert_allclose(np.load(tmp_path / f"output{i}.npy"), want, rtol=1e-6, atol=1e-6)


def test_compare_sharded_scan_across_plugins(sharded_scan):
    directory, inputs, _ = sharded_scan
    for name in ("scan.mlirbc", "scan.mlir"):
        result = run_cli("compare", stablert.library_path(), "cpu", str(directory / name), *inputs)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.endswith("outputs agree\n"), result.stdout
