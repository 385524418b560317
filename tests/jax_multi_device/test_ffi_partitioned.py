"""XLA FFI calls in sharded programs on 4 StableRT devices, compared with XLA:CPU's 4 devices.

A target registered with jax.ffi.register_ffi_target_as_batch_partitionable and called with
the frontend attribute `num_batch_dims` runs on every device's shards of its leading
dimensions (no gather), as XLA's batch partitioner runs it; the handlers are the C++ test
kernels of tests/ffi/ffi_test_kernels.cc, and one of them adds the ordinal of the device it
runs on, so the results show which device ran each shard.
"""
import ctypes
import os
import pathlib
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import core, dispatch
from jax._src.interpreters import mlir
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

_TARGETS = {"stablert_test_add_device_ordinal": "StablertTestAddDeviceOrdinal",
            "stablert_test_part_count": "StablertTestCountCall",
            "stablert_test_part_scale": "StablertTestScale"}


def _library_path():
    override = os.environ.get("STABLERT_FFI_TEST_LIBRARY")
    if override:
        return pathlib.Path(override)
    plugin = os.environ.get("STABLERT_LIBRARY_PATH")
    if plugin:
        return pathlib.Path(plugin).parent / "libstablert_ffi_test_kernels.so"
    return pathlib.Path(__file__).resolve().parents[2] / "build" / "libstablert_ffi_test_kernels.so"


@pytest.fixture(scope="module", autouse=True)
def library():
    path = _library_path()
    if not path.exists():
        pytest.skip(f"FFI test kernels not built (looked for {path}); set STABLERT_FFI_TEST_LIBRARY")
    lib = ctypes.cdll.LoadLibrary(str(path))
    for target, symbol in _TARGETS.items():
        for platform in ("cpu", "stablert"):
            jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(getattr(lib, symbol)), platform=platform)
        jax.ffi.register_ffi_target_as_batch_partitionable(target)
    return lib


# A primitive lowering to a batch partitionable FFI call (as jax's linalg lowerings do).
batch_call_p = core.Primitive("stablert_test_batch_call")
dispatch.simple_impl(batch_call_p)
batch_call_p.def_abstract_eval(lambda x, **_: core.ShapedArray(x.shape, x.dtype))


def _batch_call_lowering(ctx, x, *, target, batch_dims, attributes):
    frontend = mlir.ir_attribute({"num_batch_dims": str(batch_dims)})
    return jax.ffi.ffi_lowering(target, extra_attributes={"mhlo.frontend_attributes": frontend})(
        ctx, x, **dict(attributes))


mlir.register_lowering(batch_call_p, _batch_call_lowering)


def batch_call(x, target, batch_dims=1, **attributes):
    return batch_call_p.bind(x, target=target, batch_dims=batch_dims, attributes=tuple(sorted(attributes.items())))


def _mesh(platform, count):
    return Mesh(np.array(jax.devices(platform)[:count]), ("i",))


def _run(platform, fn, x, spec, count):
    mesh = _mesh(platform, count)
    sharding = NamedSharding(mesh, spec)
    out = jax.jit(fn, out_shardings=sharding)(jax.device_put(x, sharding))
    return np.asarray(out), out


@pytest.mark.parametrize("shape,batch_dims", [((8, 4, 3), 1), ((16, 1024), 1), ((4, 8, 5, 2), 2)])
def test_batch_partitioned_call_runs_on_each_devices_shard_as_on_cpu(device_count, shape, batch_dims):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    spec = P("i") if batch_dims == 1 else P(None, "i")

    def f(x):
        return batch_call(x, "stablert_test_add_device_ordinal", batch_dims)

    cpu, _ = _run("cpu", f, x, spec, device_count)
    stablert, out = _run("stablert", f, x, spec, device_count)
    np.testing.assert_array_equal(stablert, cpu)
    # Each device added its own ordinal to its shard: the call ran there, on that shard.
    for shard in out.addressable_shards:
        ordinal = shard.device.id
        np.testing.assert_array_equal(np.asarray(shard.data), x[shard.index] + ordinal)


def test_batch_partitioned_call_runs_once_per_device(device_count, library):
    calls = library.stablert_test_calls
    calls.restype = ctypes.c_int64
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    counts = {}
    for platform in ("cpu", "stablert"):
        f = jax.jit(lambda x: batch_call(x, "stablert_test_part_count") * 2,
                    out_shardings=NamedSharding(_mesh(platform, device_count), P("i")))
        xs = jax.device_put(x, NamedSharding(_mesh(platform, device_count), P("i")))
        np.asarray(f(xs))  # compiles
        before = calls()
        np.testing.assert_array_equal(np.asarray(f(xs)), x * 2)
        counts[platform] = calls() - before
    assert counts == {"cpu": device_count, "stablert": device_count}


def test_batch_partitioned_call_among_other_ops_matches_cpu(device_count):
    x = np.random.default_rng(2).standard_normal((32, 128)).astype(np.float32)

    def f(x):
        y = batch_call(jnp.sin(x) + 1, "stablert_test_part_scale", scale=np.float32(-0.5))
        return jnp.tanh(y) * 3 + x

    cpu, _ = _run("cpu", f, x, P("i"), device_count)
    stablert, _ = _run("stablert", f, x, P("i"), device_count)
    np.testing.assert_allclose(stablert, cpu, rtol=1e-6, atol=1e-6)


def test_batch_partitioned_call_in_shard_map_matches_cpu(device_count):
    x = np.random.default_rng(3).standard_normal((8, 5)).astype(np.float32)
    results = []
    for platform in ("cpu", "stablert"):
        mesh = _mesh(platform, device_count)
        f = jax.jit(jax.shard_map(partial(batch_call, target="stablert_test_add_device_ordinal"), mesh=mesh,
                                  in_specs=P("i"), out_specs=P("i"), check_vma=False))
        results.append(np.asarray(f(jax.device_put(x, NamedSharding(mesh, P("i"))))))
    np.testing.assert_array_equal(results[1], results[0])
    rows = x.shape[0] // device_count
    np.testing.assert_array_equal(results[1], x + np.repeat(np.arange(device_count, dtype=np.float32), rows)[:, None])
