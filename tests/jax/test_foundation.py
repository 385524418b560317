"""The first programs JAX runs on StableRT, checked against JAX's own CPU backend."""
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax


def run_on(device, fn, *args):
    args = [jax.device_put(a, device) for a in args]
    with jax.default_device(device):
        return fn(*args)


def test_devices_are_listed(stablert_device):
    devices = jax.devices("stablert")
    assert len(devices) == 1
    assert devices[0].platform == "stablert"
    assert devices[0].id == 0
    assert devices[0].process_index == 0


def test_add_integers(stablert_device):
    with jax.default_device(stablert_device):
        result = jnp.add(1, 1)
    assert result.devices() == {stablert_device}
    assert int(result) == 2


def test_jit_multiply_float(stablert_device):
    with jax.default_device(stablert_device):
        result = jax.jit(lambda x: x * 2)(1.0)
    assert result.devices() == {stablert_device}
    assert float(result) == 2.0


DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, jnp.bfloat16, np.float32, np.float64, np.complex64, np.complex128]
SHAPES = [(), (0,), (7,), (3, 4), (2, 3, 5), (2, 0, 3), (1, 1, 1, 2)]


def test_program_without_results_runs(stablert_device):
    # JAX passes no output lists for an executable with no results.
    with jax.default_device(stablert_device):
        assert lax.while_loop(lambda _: False, lambda _: (), ()) == ()
        x = jax.device_put(np.float32(3), stablert_device)
        assert jax.jit(lambda v: ())(x) == ()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_device_put_round_trip(stablert_device, dtype, shape):
    rng = np.random.default_rng(sum(shape) + len(shape))
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    x = jax.device_put(a, stablert_device)
    assert x.devices() == {stablert_device}
    back = np.asarray(x)
    assert back.dtype == a.dtype and back.shape == a.shape
    np.testing.assert_array_equal(back, a)


@pytest.mark.parametrize("dtype", [np.int32, np.float64, np.uint8], ids=lambda d: np.dtype(d).name)
def test_device_put_of_strided_views(stablert_device, dtype):
    base = np.arange(4 * 6 * 5).astype(dtype).reshape(4, 6, 5)
    for view in (base.T, base[::2, 1::3, ::-1], base.transpose(1, 0, 2)[:, :3], np.asfortranarray(base)):
        x = jax.device_put(view, stablert_device)
        np.testing.assert_array_equal(np.asarray(x), view)


def test_jit_matches_cpu_backend(stablert_device, cpu_device):
    f = jax.jit(lambda x, y: x * y + 3.0)
    a = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    b = np.full((3, 4), 0.5, np.float32)
    expected = run_on(cpu_device, f, a, b)
    got = run_on(stablert_device, f, a, b)
    assert got.devices() == {stablert_device}
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-6)


def test_compile_error_is_a_python_exception_not_a_crash(stablert_device):
    # A program the engine cannot run (here a custom call to a target no one registered)
    # fails at compile time with an error naming the op, not at run time and not a crash.
    f = jax.jit(lambda x: jax.ffi.ffi_call("stablert_no_such_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x))
    with pytest.raises(Exception, match=r"UNIMPLEMENTED: .*stablehlo\.custom_call"):
        run_on(stablert_device, f, np.arange(8, dtype=np.float32))
    # The plugin is still usable afterwards.
    assert int(run_on(stablert_device, jax.jit(lambda x: x + 1), np.int32(1))) == 2


def test_four_devices_from_the_environment():
    script = textwrap.dedent("""
        import jax, numpy as np
        devices = jax.devices("stablert")
        assert [d.id for d in devices] == [0, 1, 2, 3], devices
        for d in devices:
            x = jax.device_put(np.arange(5, dtype=np.int32) * d.id, d)
            assert x.devices() == {d}
            np.testing.assert_array_equal(np.asarray(x), np.arange(5) * d.id)
            y = jax.device_put(x, devices[(d.id + 1) % 4])
            np.testing.assert_array_equal(np.asarray(y), np.arange(5) * d.id)
        print("ok")
    """)
    env = dict(os.environ, STABLERT_DEVICE_COUNT="4", JAX_PLATFORMS="stablert")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


def test_compiler_options_are_checked(stablert_device):
    x = jax.device_put(np.float32(2), stablert_device)
    f = lambda v: v * 3
    # XLA's option names compile (they have no effect on StableRT); booleans must be booleans.
    out = jax.jit(f, compiler_options={"xla_embed_ir_in_executable": True, "xla_dump_max_hlo_modules": 2})(x)
    assert float(out) == 6.0
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option: 'invalid_key'"):
        jax.jit(f).lower(x).compile(compiler_options={"invalid_key": "invalid_value"})
    with pytest.raises(jax.errors.JaxRuntimeError, match="is not a valid bool value"):
        jax.jit(f).lower(x).compile(compiler_options={"xla_embed_ir_in_executable": "invalid_value"})


def test_dce_sink_is_accepted(stablert_device, cpu_device):
    def f(x):
        y = x + 1
        lax.dce_sink(y, prevent_mlir_dce=True)
        return x * 2

    for device in (stablert_device, cpu_device):
        x = jax.device_put(np.float32(3), device)
        assert float(jax.jit(f)(x)) == 6.0
    with jax.default_device(stablert_device):
        assert "dce_sink" in jax.jit(f).lower(np.float32(3)).compile().as_text()


def test_large_steps_split_across_threads_give_the_same_results(stablert_device, cpu_device):
    # Big enough for the executor to split dot, convolution, gather, unary and binary steps
    # over the thread pool.
    rng = np.random.default_rng(3)
    a = rng.standard_normal((384, 320)).astype(np.float32)
    b = rng.standard_normal((320, 352)).astype(np.float32)
    ints = rng.integers(-2**31, 2**31 - 1, size=300_000, dtype=np.int32)
    f = jax.jit(lambda a, b, i: (jnp.tanh(a) @ b, i * 3 + (i >> 2), jnp.exp(a) - a))
    got = f(*(jax.device_put(x, stablert_device) for x in (a, b, ints)))
    want = f(*(jax.device_put(x, cpu_device) for x in (a, b, ints)))
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=2e-5, atol=2e-4)
    np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
    np.testing.assert_allclose(np.asarray(got[2]), np.asarray(want[2]), rtol=1e-6)
    rows = rng.integers(-5, 400, size=(70_000,))  # out-of-range indices clamp, as on XLA
    take = jax.jit(lambda a, i: (a[i], a[:, 7][i]))
    for g, w in zip(take(jax.device_put(a, stablert_device), jax.device_put(rows, stablert_device)),
                    take(jax.device_put(a, cpu_device), jax.device_put(rows, cpu_device))):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    x = rng.standard_normal((4, 32, 32, 8)).astype(np.float32)
    w = rng.standard_normal((3, 3, 8, 16)).astype(np.float32)
    conv = jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
    np.testing.assert_allclose(np.asarray(conv(jax.device_put(x, stablert_device), jax.device_put(w, stablert_device))),
                               np.asarray(conv(jax.device_put(x, cpu_device), jax.device_put(w, cpu_device))),
                               rtol=2e-5, atol=2e-4)


def test_layouts_are_row_major_like_cpu(stablert_device, cpu_device):
    # The Layouts extension (capi/layouts_extension.h): compiled.input_formats/output_formats
    # and arrays' layouts are what XLA:CPU reports, answered without reading the program.
    def f(a, b):
        return a * b, a.sum(axis=1), b

    found = {}
    for device in (stablert_device, cpu_device):
        x = jax.device_put(np.ones((3, 4, 5), np.float32), device)
        s = jax.device_put(np.float32(2), device)
        compiled = jax.jit(f).lower(x, s).compile()
        found[device.platform] = ([fmt.layout for fmt in compiled.input_formats[0]],
                                  [fmt.layout for fmt in jax.tree.leaves(compiled.output_formats)],
                                  x.format.layout, s.format.layout)
        assert compiled(x, s)[1].shape == (3, 5)
    assert found["stablert"] == found["cpu"]
    assert found["stablert"][0][0].major_to_minor == (0, 1, 2)
