"""Non-row-major array layouts (`jax.experimental.layout`) on StableRT, against JAX's CPU backend.

StableRT computes on row-major arrays and keeps other layouts at the executable's boundary:
buffers whose bytes are a dimension permutation, converted by the transpose kernel on the way
in and out (docs/decisions.md, "Array layouts").
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.layout import Format, Layout
from jax._src.sharding_impls import make_single_device_sharding


def _fmt(device, m2m):
    return Format(Layout(major_to_minor=m2m), make_single_device_sharding(device))


@pytest.mark.parametrize("shape,m2m", [((8, 128), (1, 0)), ((64, 96), (1, 0)), ((4, 6, 10), (2, 0, 1)),
                                       ((3, 5, 7), (1, 2, 0)), ((512, 384), (1, 0))])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, jnp.bfloat16, np.float64])
def test_device_put_with_layout_round_trips(stablert_device, cpu_device, shape, m2m, dtype):
    x = (np.arange(np.prod(shape)) % 113).astype(dtype).reshape(shape)
    results = {}
    for name, device in (("stablert", stablert_device), ("cpu", cpu_device)):
        out = jax.device_put(x, _fmt(device, m2m))
        assert out.format.layout.major_to_minor == m2m
        results[name] = np.asarray(out)
        # Computing on it reads it in its layout.
        results[name + "_sum"] = np.asarray(jax.jit(lambda a: a * 2 + 1)(out))
    np.testing.assert_array_equal(results["stablert"], x)
    np.testing.assert_array_equal(results["stablert"], results["cpu"])
    np.testing.assert_array_equal(results["stablert_sum"], results["cpu_sum"])


@pytest.mark.parametrize("shape", [(8, 128), (300, 200)])
def test_jit_input_and_output_layouts(stablert_device, cpu_device, shape):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    col = (1, 0)
    outs = {}
    for name, device in (("stablert", stablert_device), ("cpu", cpu_device)):
        f = jax.jit(lambda a: jnp.sin(a) @ a.T, in_shardings=_fmt(device, col), out_shardings=_fmt(device, col))
        arg = jax.device_put(x, _fmt(device, col))
        compiled = f.lower(arg).compile()
        assert compiled.input_formats[0][0].layout.major_to_minor == col
        assert compiled.output_formats.layout.major_to_minor == col
        out = f(arg)
        assert out.format.layout.major_to_minor == col
        # An uncommitted NumPy argument is put in the layout on the way in.
        out2 = f(x)
        outs[name] = (np.asarray(out), np.asarray(out2))
    np.testing.assert_allclose(outs["stablert"][0], outs["cpu"][0], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(outs["stablert"][1], outs["cpu"][1], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(outs["stablert"][0], np.sin(x) @ x.T, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("shape,fn", [((8, 8), lambda a: a.T), ((2, 4, 4), lambda a: a.T),
                                      ((16, 32), lambda a: a * 2), ((6, 8, 10), lambda a: jnp.transpose(a, (1, 2, 0)))])
def test_auto_output_layout_matches_cpu(stablert_device, cpu_device, shape, fn):
    x = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    got = {}
    for name, device in (("stablert", stablert_device), ("cpu", cpu_device)):
        compiled = jax.jit(fn, out_shardings=Format(Layout.AUTO)).lower(jax.device_put(x, device)).compile()
        out = compiled(jax.device_put(x, device))
        assert out.format == compiled.output_formats
        got[name] = (compiled.input_formats[0][0].layout.major_to_minor, compiled.output_formats.layout.major_to_minor,
                     np.asarray(out))
    assert got["stablert"][0] == got["cpu"][0]
    assert got["stablert"][1] == got["cpu"][1]
    np.testing.assert_array_equal(got["stablert"][2], got["cpu"][2])


def test_layout_constraint_sets_the_result_layout(stablert_device, cpu_device):
    x = np.arange(16 * 128, dtype=np.float32).reshape(16, 128)
    got = {}
    for name, device in (("stablert", stablert_device), ("cpu", cpu_device)):
        s = make_single_device_sharding(device)
        f = jax.jit(lambda a: jax.lax.with_sharding_constraint(a.T, Format(Layout(major_to_minor=(0, 1)), s)))
        out = f(jax.device_put(x, device))
        got[name] = (out.format.layout.major_to_minor, np.asarray(out))
    assert got["stablert"][0] == got["cpu"][0] == (0, 1)
    np.testing.assert_array_equal(got["stablert"][1], got["cpu"][1])


def test_donated_argument_in_a_layout(stablert_device):
    x = np.arange(128 * 16, dtype=np.float32).reshape(128, 16)
    fmt = _fmt(stablert_device, (1, 0))
    arr = jax.device_put(x, fmt)
    f = jax.jit(lambda a: a * a, in_shardings=fmt, out_shardings=fmt, donate_argnums=0)
    out = f(arr)
    assert arr.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), x * x)
    assert out.format.layout.major_to_minor == (1, 0)


def _geqrf(x, layout):
    from jax._src.lib import lapack
    lapack._lapack.initialize()
    ndim = x.ndim
    if layout == "column-major":
        m2m = tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)
        layouts = dict(input_layouts=[m2m], output_layouts=[m2m, None])
    else:  # the default: row-major, LAPACK then reads the bytes of the transpose
        layouts = {}
    out = [jax.ShapeDtypeStruct(x.shape, x.dtype),
           jax.ShapeDtypeStruct(x.shape[:-2] + (min(*x.shape[-2:]),), x.dtype)]
    return jax.ffi.ffi_call("lapack_sgeqrf_ffi", out, input_output_aliases={0: 0}, **layouts)(x)


@pytest.mark.parametrize("layout", ["row-major", "column-major"])
@pytest.mark.parametrize("shape", [(4, 5), (8, 4, 5), (3, 64, 48)])
def test_lapack_custom_call_in_declared_layouts_matches_cpu(stablert_device, cpu_device, layout, shape):
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    got = {}
    for name, device in (("stablert", stablert_device), ("cpu", cpu_device)):
        a, tau = jax.jit(lambda v: _geqrf(v, layout))(jax.device_put(x, device))
        got[name] = (np.asarray(a), np.asarray(tau))
    np.testing.assert_allclose(got["stablert"][0], got["cpu"][0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["stablert"][1], got["cpu"][1], rtol=1e-4, atol=1e-5)


def _dlpack_import(tensor, device):
    """jaxlib's DLPack import of a host tensor onto `device` (what jax.dlpack.from_dlpack does
    for the tensor's own backend): for a strided CPU tensor it asks PJRT for a view of the
    memory in the tensor's dimension order (PJRT_Client_CreateViewOfDeviceBuffer with a
    device layout)."""
    from jax._src.lib import _jax, jaxlib_extension_version
    from jax._src.typing import DLDeviceType

    capsule = tensor.__dlpack__()
    if jaxlib_extension_version >= 467:
        return _jax.dlpack_managed_tensor_to_buffer(capsule, device, None, None, int(DLDeviceType.kDLCPU))
    return _jax.dlpack_managed_tensor_to_buffer(capsule, device, None, None)


def _in_order(array, m2m):
    """A 64-byte aligned copy of `array` whose bytes lie in major_to_minor order `m2m`."""
    physical_shape = tuple(array.shape[d] for d in m2m)
    raw = np.empty(array.nbytes + 64, np.uint8)
    offset = (-raw.ctypes.data) % 64
    physical = raw[offset:offset + array.nbytes].view(array.dtype).reshape(physical_shape)
    physical[...] = np.transpose(array, m2m)
    return np.transpose(physical, np.argsort(m2m))


@pytest.mark.parametrize("shape,m2m", [((3, 4), (1, 0)), ((256, 384), (1, 0)), ((4, 6, 10), (2, 0, 1)),
                                       ((3, 5, 7), (1, 2, 0)), ((2, 3, 5), (0, 2, 1))])
def test_dlpack_import_in_another_dimension_order_is_a_view_in_that_layout(stablert_device, cpu_device, shape,
                                                                            m2m):
    host = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    tensor = _in_order(host, m2m)
    on_cpu = _dlpack_import(tensor, cpu_device)
    x = _dlpack_import(tensor, stablert_device)
    assert x.format.layout == on_cpu.format.layout
    assert x.format.layout.major_to_minor == m2m
    assert x.unsafe_buffer_pointer() == tensor.ctypes.data  # zero-copy
    np.testing.assert_array_equal(np.asarray(x), host)

    def fn(a):
        return jnp.sin(a) * 2 + jnp.sum(a, axis=-1, keepdims=True)

    np.testing.assert_allclose(np.asarray(jax.jit(fn)(x)), np.asarray(jax.jit(fn)(on_cpu)), rtol=1e-6, atol=1e-5)



@pytest.mark.parametrize("shape,src,dst", [((8, 128), (1, 0), (0, 1)), ((4, 6, 10), (2, 0, 1), (1, 2, 0)),
                                           ((300, 200), (0, 1), (1, 0))])
def test_device_array_put_into_another_layout_matches_cpu(stablert_device, cpu_device, shape, src, dst):
    # An array already on the device, put into another layout: JAX relayouts it with an
    # executable whose entry takes one layout and returns the other.
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    got = {}
    for name, device in (("stablert", stablert_device), ("cpu", cpu_device)):
        arr = jax.device_put(x, _fmt(device, src))
        out = jax.device_put(arr, _fmt(device, dst))
        got[name] = (arr.format.layout.major_to_minor, out.format.layout.major_to_minor, np.asarray(out))
    assert got["stablert"][:2] == got["cpu"][:2] == (src, dst)
    np.testing.assert_array_equal(got["stablert"][2], x)
    np.testing.assert_array_equal(got["stablert"][2], got["cpu"][2])


@pytest.mark.parametrize("memory_kind", ["pinned_host", "unpinned_host"])
def test_array_in_a_layout_copied_to_host_memory_matches_cpu(stablert_device, cpu_device, memory_kind):
    # A copy to another memory kind of the device (PJRT_Buffer_CopyToMemory) and back: as on
    # XLA's CPU backend, a copy between memory kinds is row-major.
    x = np.arange(6 * 8 * 10, dtype=np.float32).reshape(6, 8, 10)
    m2m = (2, 0, 1)
    got = {}
    for name, device in (("stablert", stablert_device), ("cpu", cpu_device)):
        if memory_kind not in {m.kind for m in device.addressable_memories()}:
            got[name] = None
            continue
        arr = jax.device_put(x, _fmt(device, m2m))
        host = jax.device_put(arr, arr.sharding.with_memory_kind(memory_kind))
        back = jax.device_put(host, arr.sharding)
        # Put into the host memory in a layout, then onto the device.
        host_fmt = jax.device_put(x, Format(Layout(major_to_minor=m2m), arr.sharding.with_memory_kind(memory_kind)))
        host_back = jax.device_put(host_fmt, arr.sharding)
        got[name] = (host.sharding.memory_kind, host.format.layout.major_to_minor,
                     back.format.layout.major_to_minor, host_fmt.format.layout.major_to_minor,
                     host_back.format.layout.major_to_minor,
                     np.asarray(host), np.asarray(back), np.asarray(host_fmt), np.asarray(host_back))
    assert got["stablert"] is not None, f"stablert has no {memory_kind} memory"
    for i in (5, 6, 7, 8):
        np.testing.assert_array_equal(got["stablert"][i], x)
    if got["cpu"] is None:
        return
    assert got["stablert"][:5] == got["cpu"][:5]
    for i in (5, 6, 7, 8):
        np.testing.assert_array_equal(got["stablert"][i], x)
        np.testing.assert_array_equal(got["stablert"][i], got["cpu"][i])
