"""XLA FFI handlers (jax.ffi) on StableRT, compared with XLA:CPU running the same handlers.

The handlers are C++ written against the ffi.h jaxlib ships (tests/ffi/ffi_test_kernels.cc,
built as libstablert_ffi_test_kernels.so next to the plugin), registered for both `cpu` and
`stablert`; every call runs on both backends in this process and the results must agree.
"""
import ctypes
import os
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

_TARGETS = {
    "stablert_test_scale": "StablertTestScale",
    "stablert_test_axpy": "StablertTestAxpy",
    "stablert_test_attributes": "StablertTestAttributes",
    "stablert_test_row_sum_and_count": "StablertTestRowSumAndCount",
    "stablert_test_fail": "StablertTestFail",
    "stablert_test_set_first": "StablertTestSetFirst",
    "stablert_test_count_call": "StablertTestCountCall",
    "stablert_test_square_on_thread_pool": "StablertTestSquareOnThreadPool",
}


def _library_path():
    override = os.environ.get("STABLERT_FFI_TEST_LIBRARY")
    if override:
        return pathlib.Path(override)
    plugin = os.environ.get("STABLERT_LIBRARY_PATH")
    if plugin:
        return pathlib.Path(plugin).parent / "libstablert_ffi_test_kernels.so"
    # The installed package (test.sh): the test kernels are in the source tree's build/.
    return pathlib.Path(__file__).resolve().parents[2] / "build" / "libstablert_ffi_test_kernels.so"


@pytest.fixture(scope="module", autouse=True)
def registered():
    path = _library_path()
    if path is None or not path.exists():
        pytest.skip(f"FFI test kernels not built (looked for {path}); set STABLERT_FFI_TEST_LIBRARY")
    library = ctypes.cdll.LoadLibrary(str(path))
    for target, symbol in _TARGETS.items():
        for platform in ("cpu", "stablert"):
            jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(library, symbol)), platform=platform)
    return library


def _run(device, fn, *args):
    with jax.default_device(device):
        placed = [jax.device_put(a, device) for a in args]
        out = jax.jit(fn)(*placed)
    return jax.tree.map(np.asarray, out)


def _both(fn, *args):
    cpu = _run(jax.devices("cpu")[0], fn, *args)
    stablert = _run(jax.devices("stablert")[0], fn, *args)
    return cpu, stablert


def _assert_same(cpu, stablert):
    for c, s in zip(jax.tree.leaves(cpu), jax.tree.leaves(stablert)):
        assert c.dtype == s.dtype and c.shape == s.shape
        np.testing.assert_array_equal(s, c)


def _scale(x, scale=2.0):
    return jax.ffi.ffi_call("stablert_test_scale", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, scale=np.float32(scale))


@pytest.mark.parametrize("shape", [(), (7,), (3, 5), (1 << 20,), (1024, 1024)])
def test_scale_matches_cpu(shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    cpu, stablert = _both(lambda x: _scale(x, 2.5), x)
    _assert_same(cpu, stablert)
    np.testing.assert_array_equal(stablert, x * np.float32(2.5))


def test_scale_runs_on_stablert():
    x = jax.device_put(np.arange(4, dtype=np.float32), jax.devices("stablert")[0])
    y = jax.jit(lambda x: _scale(x, 3.0))(x)
    assert y.devices() == {jax.devices("stablert")[0]}
    np.testing.assert_array_equal(np.asarray(y), np.arange(4, dtype=np.float32) * 3)


@pytest.mark.parametrize("dtype,size", [(np.float32, 1 << 20), (np.float64, 1000), (np.int32, 1000),
                                        (np.int64, 1 << 20), (np.uint8, 4096), (np.complex64, 1000)])
def test_any_buffer_dtypes_match_cpu(dtype, size):
    rng = np.random.default_rng(1)
    if np.issubdtype(dtype, np.complexfloating):
        x = (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(dtype)
        y = (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(dtype)
    elif np.issubdtype(dtype, np.floating):
        x, y = rng.standard_normal(size).astype(dtype), rng.standard_normal(size).astype(dtype)
    else:
        x, y = rng.integers(0, 50, size).astype(dtype), rng.integers(0, 50, size).astype(dtype)

    def f(x, y):
        return jax.ffi.ffi_call("stablert_test_axpy", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y, alpha=3.0)

    cpu, stablert = _both(f, x, y)
    _assert_same(cpu, stablert)


_ATTRIBUTES = dict(
    i8=np.int8(-5), i16=np.int16(-300), i32=np.int32(70000), i64=np.int64(-(1 << 40)), u8=np.uint8(200),
    u16=np.uint16(60000), u32=np.uint32(4000000000), u64=np.uint64(1 << 50), f32=np.float32(1.5),
    f64=np.float64(-2.25), flag=True, name="stablert", ints=np.array([1, 2, 3, 4], dtype=np.int64),
    floats=np.array([0.5, 0.25], dtype=np.float32),
    config={"a": np.int64(11), "b": np.float64(0.125), "label": "nested"})


# jax.ffi.ffi_call makes only top-level dictionaries hashable, so nested dictionaries are
# covered by src/kernels/ffi_params_test.cc and the C API test instead.
def _attributes_call():
    return jax.ffi.ffi_call("stablert_test_attributes", jax.ShapeDtypeStruct((17,), np.float64))(**_ATTRIBUTES)


def test_attributes_of_every_kind_match_cpu():
    cpu, stablert = _both(_attributes_call)
    _assert_same(cpu, stablert)
    name_code = 0.0
    for c in b"stablert":
        name_code = name_code * 31 + c
    expected = [-5, -300, 70000, -(1 << 40), 200, 60000, 4000000000, 1 << 50, 1.5, -2.25, 1, name_code,
                10 + 4000, 0.75 + 2000, 11, 0.125, 6]
    np.testing.assert_array_equal(stablert, np.array(expected, dtype=np.float64))


def _row_sum_and_count(x):
    return jax.ffi.ffi_call("stablert_test_row_sum_and_count",
                            (jax.ShapeDtypeStruct(x.shape[:-1], np.float32), jax.ShapeDtypeStruct((), np.int32)))(x)


@pytest.mark.parametrize("shape", [(4, 3), (1024, 1024)])
def test_multiple_results_match_cpu(shape):
    x = np.random.default_rng(2).standard_normal(shape).astype(np.float32)
    cpu, stablert = _both(_row_sum_and_count, x)
    _assert_same(cpu, stablert)
    assert int(stablert[1]) == int((x > 0).sum())


def test_results_feed_other_ops():
    x = np.random.default_rng(3).standard_normal((256, 64)).astype(np.float32)

    def f(x):
        sums, count = _row_sum_and_count(jnp.tanh(x) + 1)
        return _scale(sums * 2, 0.5) + count.astype(np.float32)

    cpu, stablert = _both(f, x)
    np.testing.assert_allclose(stablert, cpu, rtol=1e-6, atol=1e-5)


def test_result_aliasing_an_operand_starts_as_the_operand():
    x = np.random.default_rng(5).standard_normal(1 << 20).astype(np.float32)

    def f(x):
        call = jax.ffi.ffi_call("stablert_test_set_first", jax.ShapeDtypeStruct(x.shape, x.dtype),
                                input_output_aliases={0: 0})
        return call(x * 2, value=np.float32(-1.0))

    cpu, stablert = _both(f, x)
    _assert_same(cpu, stablert)
    assert stablert[0] == -1.0
    np.testing.assert_array_equal(stablert[1:], x[1:] * 2)


@pytest.mark.parametrize("vmap_method", ["broadcast_all", "sequential"])
def test_vmap_matches_cpu(vmap_method):
    x = np.random.default_rng(4).standard_normal((8, 128, 32)).astype(np.float32)

    def f(x):
        call = jax.ffi.ffi_call("stablert_test_row_sum_and_count",
                                (jax.ShapeDtypeStruct(x.shape[:-1], np.float32), jax.ShapeDtypeStruct((), np.int32)),
                                vmap_method=vmap_method)
        # The count is one scalar per call: under broadcast_all only the row sums are batched.
        return call(x)[0]

    cpu, stablert = _both(jax.vmap(f), x)
    _assert_same(cpu, stablert)
    np.testing.assert_allclose(stablert, x.sum(-1), rtol=1e-5, atol=1e-5)

    def g(x):
        return jax.ffi.ffi_call("stablert_test_scale", jax.ShapeDtypeStruct(x.shape, x.dtype),
                                vmap_method=vmap_method)(x, scale=np.float32(-1.5))

    cpu, stablert = _both(jax.vmap(g), x)
    _assert_same(cpu, stablert)


@pytest.mark.parametrize("size,tasks", [(1000, 1), (1 << 20, 64), (4096, 4096)])
def test_handler_scheduling_tasks_on_the_thread_pool_matches_cpu(size, tasks):
    # XLA_FFI_ThreadPool_Schedule: many small tasks, run by the pool's workers.
    x = np.random.default_rng(11).standard_normal(size).astype(np.float32)

    def f(x):
        return jax.ffi.ffi_call("stablert_test_square_on_thread_pool", jax.ShapeDtypeStruct(x.shape, x.dtype))(
            x, tasks=np.int32(tasks))

    cpu, stablert = _both(f, x)
    _assert_same(cpu, stablert)
    np.testing.assert_array_equal(stablert, x * x + 1)


def test_handler_error_fails_the_call_with_its_message():
    x = jax.device_put(np.ones(8, np.float32), jax.devices("stablert")[0])
    call = jax.ffi.ffi_call("stablert_test_fail", jax.ShapeDtypeStruct((8,), np.float32))
    with pytest.raises(Exception, match="stablert_test_fail.*failed on purpose with code 7"):
        np.asarray(jax.jit(lambda x: call(x, code=np.int32(7)))(x))


def test_unregistered_target_is_unimplemented_naming_it():
    x = jax.device_put(np.ones(8, np.float32), jax.devices("stablert")[0])
    call = jax.ffi.ffi_call("stablert_test_never_registered", jax.ShapeDtypeStruct((8,), np.float32))
    with pytest.raises(Exception, match="stablert_test_never_registered.*no XLA FFI handler is registered"):
        jax.jit(call)(x)


def test_registration_for_another_platform_name_is_an_error():
    from stablert import _ffi
    capsule = jax.ffi.pycapsule(ctypes.cdll.LoadLibrary(str(_library_path())).StablertTestScale)
    with pytest.raises(ValueError, match="platform 'tpu'"):
        _ffi.register_handler("stablert_test_wrong_platform", capsule, "tpu")
    with pytest.raises(ValueError, match="api_version=1"):
        _ffi.register_handler("stablert_test_legacy", capsule, "stablert", api_version=0)


def test_a_side_effecting_call_runs_even_if_its_result_is_unused(registered):
    calls = registered.stablert_test_calls
    calls.restype = ctypes.c_int64
    x = jax.device_put(np.arange(1024, dtype=np.float32), jax.devices("stablert")[0])

    def f(v):
        jax.ffi.ffi_call("stablert_test_count_call", jax.ShapeDtypeStruct(v.shape, v.dtype), has_side_effect=True)(v)
        return v * 2

    before = calls()
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), np.arange(1024, dtype=np.float32) * 2)
    assert calls() == before + 1


# jax.experimental.buffer_callback: jaxlib's own CPU handler (xla_buffer_python_cpu_callback),
# which finds the Python callable in the execution's FFI user data, runs on both backends.
from jax.experimental import buffer_callback as _bc  # noqa: E402


def _buffer_call(fn, result, **kwargs):
    return _bc.buffer_callback(fn, result, **kwargs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.bool_, np.complex64])
@pytest.mark.parametrize("shape", [(), (3, 4), (512, 512)])
def test_buffer_callback_numpy_matches_cpu(dtype, shape):
    rng = np.random.default_rng(6)
    x = (rng.standard_normal(shape) * 10).astype(dtype)
    seen = []

    def callback(ctx, out, arg):
        assert ctx.stage == _bc.ExecutionStage.EXECUTE
        assert arg.shape == shape and out.shape == shape
        assert np.dtype(arg.dtype) == np.dtype(dtype) and np.dtype(out.dtype) == np.dtype(dtype)
        assert not arg.writeable and out.writeable
        a = np.asarray(arg)
        seen.append(a.copy())
        np.asarray(out)[...] = ~a if dtype == np.bool_ else a * 2 + 1

    def f(x):
        return _buffer_call(callback, jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    cpu, stablert = _both(f, x)
    _assert_same(cpu, stablert)
    assert len(seen) == 2
    np.testing.assert_array_equal(seen[1], x)
    np.testing.assert_array_equal(stablert, ~x if dtype == np.bool_ else x * 2 + 1)


def test_buffer_callback_has_no_gpu_stream():
    errors = []

    def callback(ctx, out, arg):
        try:
            ctx.stream
        except Exception as error:  # jaxlib: "XLA FFI GPU context is not available"
            errors.append(type(error).__name__ + ": " + str(error))
        np.asarray(out)[...] = np.asarray(arg)

    x = jax.device_put(np.arange(6, dtype=np.float32), jax.devices("stablert")[0])
    np.asarray(jax.jit(_buffer_call(callback, jax.ShapeDtypeStruct((6,), np.float32)))(x))
    assert len(errors) == 1 and "GPU context is not available" in errors[0], errors


def test_buffer_callback_dlpack_of_operands():
    x = np.random.default_rng(7).standard_normal((64, 33)).astype(np.float32)
    got = []

    def callback(ctx, out, arg):
        got.append(np.from_dlpack(arg).copy())
        np.asarray(out)[...] = 0

    jax.block_until_ready(jax.jit(_buffer_call(callback, jax.ShapeDtypeStruct(x.shape, x.dtype)))(
        jax.device_put(x, jax.devices("stablert")[0])))
    np.testing.assert_array_equal(got[0], x)


def test_buffer_callback_among_other_ops_and_several_results_matches_cpu():
    x = np.random.default_rng(8).standard_normal((300, 200)).astype(np.float32)

    def callback(ctx, outs, a, b):
        total, rows = outs
        np.asarray(total)[...] = np.asarray(a) + np.asarray(b)
        np.asarray(rows)[...] = np.asarray(a).sum(axis=1)

    def f(x):
        call = _buffer_call(callback, (jax.ShapeDtypeStruct(x.shape, x.dtype),
                                       jax.ShapeDtypeStruct(x.shape[:1], x.dtype)))
        total, rows = call(jnp.sin(x), x * 3)
        return jnp.tanh(total) * 2, rows + 1

    cpu, stablert = _both(f, x)
    for c, s in zip(cpu, stablert):
        np.testing.assert_allclose(s, c, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("vmap_method", ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all"])
def test_buffer_callback_vmap_matches_cpu(vmap_method):
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((5, 3, 4)).astype(np.float32), rng.standard_normal((5, 3, 4)).astype(np.float32)

    def callback(ctx, out, a, b):
        z = np.asarray(out)
        z[...] = np.asarray(a)
        z[...] += np.asarray(b)

    def f(x, y):
        return _buffer_call(callback, jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method=vmap_method)(x, y)

    cpu, stablert = _both(jax.vmap(f), x, y)
    _assert_same(cpu, stablert)
    np.testing.assert_array_equal(stablert, x + y)


def test_buffer_callback_updates_an_aliased_operand_in_place():
    x = np.random.default_rng(10).standard_normal((128, 128)).astype(np.float32)
    addresses = []

    def callback(ctx, out, arg):
        # One buffer for both, as XLA passes it: the result starts as the operand.
        addresses.append((np.asarray(out).ctypes.data, np.asarray(arg).ctypes.data))
        np.asarray(out)[::2] *= -1

    def f(x):
        return _buffer_call(callback, jax.ShapeDtypeStruct(x.shape, x.dtype), input_output_aliases={0: 0})(x + 1)

    cpu, stablert = _both(f, x)
    _assert_same(cpu, stablert)
    expected = x + 1
    expected[::2] *= -1
    np.testing.assert_array_equal(stablert, expected)
    assert [out == arg for out, arg in addresses] == [True, True]


def test_buffer_callback_with_side_effect_runs_without_results():
    calls = []
    fun = _buffer_call(lambda *_: calls.append(1), jax.ShapeDtypeStruct((), jnp.float32), has_side_effect=True)
    with jax.default_device(jax.devices("stablert")[0]):
        jax.block_until_ready(jax.jit(fun)())
        jax.block_until_ready(jax.jit(fun)())
    assert len(calls) == 2


def test_buffer_callback_error_fails_the_call_with_its_message():
    def callback(ctx, out, arg):
        raise RuntimeError("refused on purpose")

    x = jax.device_put(np.ones(4, np.float32), jax.devices("stablert")[0])
    with pytest.raises(Exception, match="refused on purpose"):
        np.asarray(jax.jit(_buffer_call(callback, jax.ShapeDtypeStruct((4,), np.float32)))(x))


def test_lapack_call_whose_frame_the_routine_cannot_take_compiles_and_fails_when_run(cpu_device, stablert_device):
    """XLA's CPU backend compiles a call to a registered FFI target without reading its
    signature; the handler fails when it decodes the call frame (JAX's ffi_test
    test_effects_hlo compiles `lapack_sgetrf_ffi` with no operands). StableRT, which lowers the
    LAPACK targets to its own kernels, compiles such a call to a step that fails when run."""

    def no_operands():
        jax.ffi.ffi_call("lapack_sgetrf_ffi", (), has_side_effect=True)()

    for device in (cpu_device, stablert_device):
        with jax.default_device(device):
            lowered = jax.jit(no_operands).lower()
            assert "has_side_effect = true" in lowered.as_text()
            assert "lapack_sgetrf_ffi" in lowered.compile().as_text()

    # A result and no operands: run (without side effects, so no runtime token keeps the error).
    call = jax.ffi.ffi_call("lapack_sgetrf_ffi", jax.ShapeDtypeStruct((2, 2), np.float32))
    with jax.default_device(cpu_device), pytest.raises(Exception, match="INVALID_ARGUMENT"):
        np.asarray(jax.jit(call)())
    with jax.default_device(stablert_device), pytest.raises(
            Exception, match=r"INVALID_ARGUMENT: stablehlo\.custom_call \(.*\): custom_call 'lapack_sgetrf_ffi': "
            r"expected operands$"):
        np.asarray(jax.jit(call)())
