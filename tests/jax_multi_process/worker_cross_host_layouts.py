"""One process of a multi-process job: jax.device_put of arrays in non-row-major layouts
(`jax.experimental.layout`) onto another process's devices, on StableRT or, with
CROSS_HOST_REFERENCE=cpu, on JAX's CPU backend (which does cross-host transfers only through
JAX's own socket transport, `jax_cross_host_transfer_socket_address`).

Prints, per case, "FORMAT <case> <major_to_minor>" (the received array's layout as JAX reports
it), "JIT <case> <bool> <major_to_minor>" (a jitted program on the destination devices reads it
correctly; its result's layout) and "VALUES <case> <bool>" (the received shards' values read
back with np.asarray equal the source array). The test compares FORMAT and JIT lines with the
CPU backend's. On StableRT every check must hold ("OK <case>"); on the CPU backend VALUES is
only reported (see test_multi_process.py)."""
import os
import socket

import jax

reference = os.environ.get("CROSS_HOST_REFERENCE") == "cpu"
per_process = int(os.environ["STABLERT_DEVICE_COUNT"])
if reference:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    jax.config.update("jax_cross_host_transfer_socket_address", f"127.0.0.1:{port}")
    jax.config.update("jax_num_cpu_devices", per_process)
jax.distributed.initialize()

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental.layout import Format, Layout  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding  # noqa: E402

pid = jax.process_index()
src_pid, dst_pid = 0, jax.process_count() - 1
src_devices = jax.local_devices(process_index=src_pid)
dst_devices = jax.local_devices(process_index=dst_pid)


def mesh_of(devices):
    return Mesh(np.array(devices), ("x",))


def m2m(array):
    return tuple(array.format.layout.major_to_minor)


def shards_equal(z, x):
    """Every shard of z in this process holds x's slice."""
    return all(np.array_equal(np.asarray(s.data), x[s.index]) for s in z.addressable_shards)


def check(case, x, layout, src_s, dst_s):
    y = jax.device_put(x, Format(Layout(major_to_minor=layout), src_s))
    assert m2m(y) == layout, (case, m2m(y))
    z = jax.device_put(y, dst_s)
    print(f"FORMAT {case} {m2m(z)}", flush=True)
    values = shards_equal(z, x)
    w = jax.jit(lambda v: v * 2 + 1)(z)
    jitted = shards_equal(w, (x * 2 + 1).astype(x.dtype))
    print(f"JIT {case} {jitted} {m2m(w)}", flush=True)
    # And back to the source process: the received array is sent on in turn.
    back = jax.device_put(z, src_s)
    values = values and shards_equal(back, x)
    print(f"VALUES {case} {values}", flush=True)
    if not reference:
        assert values and jitted, case
        print(f"OK {case}", flush=True)


rng = np.random.default_rng(0)
# One device to one device: rank 3, a rotation of the dimensions.
check("rank3_f32_201", np.arange(4 * 6 * 10, dtype=np.float32).reshape(4, 6, 10), (2, 0, 1),
      SingleDeviceSharding(src_devices[0]), SingleDeviceSharding(dst_devices[-1]))
# bfloat16, the other rotation.
check("rank3_bf16_120", rng.standard_normal((3, 5, 7)).astype(jnp.bfloat16), (1, 2, 0),
      SingleDeviceSharding(src_devices[-1]), SingleDeviceSharding(dst_devices[0]))
# Sharded over the source process's devices, column-major shards (large enough for the
# transpose to split over threads), onto the destination process's devices.
check("named_f32_10", rng.standard_normal((256 * per_process, 300)).astype(np.float32), (1, 0),
      NamedSharding(mesh_of(src_devices), P("x")), NamedSharding(mesh_of(dst_devices), P("x")))
# int8, sharded along the minor dimension of the layout.
check("named_int8_10", (np.arange(6 * 8 * per_process) % 113).astype(np.int8).reshape(6, 8 * per_process), (1, 0),
      NamedSharding(mesh_of(src_devices), P(None, "x")), NamedSharding(mesh_of(dst_devices), P(None, "x")))

print("OK all", flush=True)
jax.distributed.shutdown()
