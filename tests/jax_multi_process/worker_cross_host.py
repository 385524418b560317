"""One process of a multi-process StableRT job: jax.device_put of arrays onto another process's
devices (PJRT cross-host transfers), with no JAX flag. Every shard that arrives is compared with
the numpy array it was made from (the exact values: a transfer copies bytes). Prints
"OK <check>" per passed check; any failure raises (non-zero exit)."""
import os

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding

jax.distributed.initialize()

count, pid = jax.process_count(), jax.process_index()
per_process = int(os.environ["STABLERT_DEVICE_COUNT"])
backend = jax.extend.backend.get_backend()
assert getattr(backend, "supports_cross_host_transfers", False), "the backend does not report cross-host transfers"
src_pid, dst_pid = 0, count - 1


def mesh_of(devices):
    return Mesh(np.array(devices), ("x",))


def check_shards(z, x, expected_devices):
    """z's shards in this process are x's slices, on exactly the devices of z's sharding here."""
    own = [d for d in expected_devices if d.process_index == pid]
    assert sorted(s.device.id for s in z.addressable_shards) == sorted(d.id for d in own), (
        z.addressable_shards, own)
    for shard in z.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), x[shard.index])


# Single device, numpy and uncommitted (jnp) input; int32 and a float of a realistic size
# (4 MiB: several of the transport's 1 MiB pieces).
rng = np.random.default_rng(0)
for name, make in [("numpy", lambda: np.arange(64, dtype=np.int32).reshape(8, 8)),
                   ("uncommitted", lambda: jnp.arange(64, dtype=jnp.int32).reshape(8, 8)),
                   ("float32_4MiB", lambda: rng.standard_normal((1024, 1024)).astype(np.float32))]:
    x = make()
    src = jax.local_devices(process_index=src_pid)[0]
    dst = jax.local_devices(process_index=dst_pid)[0]
    y = jax.device_put(x, SingleDeviceSharding(src))
    z = jax.device_put(y, SingleDeviceSharding(dst))
    assert z.sharding == SingleDeviceSharding(dst), z.sharding
    check_shards(z, np.asarray(x), [dst])
    print(f"OK single_device_{name}", flush=True)

# jax.device_put(array, device) onto another process's device.
x = np.arange(48, dtype=np.float32).reshape(6, 8)
y = jax.device_put(x, jax.local_devices(process_index=src_pid)[-1])
z = jax.device_put(y, jax.local_devices(process_index=dst_pid)[-1])
check_shards(z, x, [jax.local_devices(process_index=dst_pid)[-1]])
print("OK device_put_to_device", flush=True)

# Named sharding: process src's devices -> process dst's, numpy and uncommitted input.
for name, make in [("numpy", lambda: np.arange(16 * per_process * 4, dtype=np.int32).reshape(4 * per_process, 16)),
                   ("uncommitted", lambda: jnp.arange(16 * per_process * 4, dtype=jnp.int32).reshape(4 * per_process, 16))]:
    x = make()
    src_s = NamedSharding(mesh_of(jax.local_devices(process_index=src_pid)), P("x"))
    dst_devices = jax.local_devices(process_index=dst_pid)
    dst_s = NamedSharding(mesh_of(dst_devices), P("x"))
    z = jax.device_put(jax.device_put(x, src_s), dst_s)
    check_shards(z, np.asarray(x), dst_devices)
    print(f"OK named_{name}", flush=True)

# Replicated: the first half of the job's devices -> the second half.
half = jax.device_count() // 2
x = rng.standard_normal((8, 8)).astype(np.float32)
src_s = NamedSharding(mesh_of(jax.devices()[:half]), P())
dst_s = NamedSharding(mesh_of(jax.devices()[half:]), P())
z = jax.device_put(jax.device_put(x, src_s), dst_s)
check_shards(z, x, jax.devices()[half:])
print("OK named_replicated", flush=True)

# A batch of bfloat16, int8 and float32 arrays in one device_put, sharded over process src's
# devices -> process dst's.
src_devices = jax.local_devices(process_index=src_pid)
dst_devices = jax.local_devices(process_index=dst_pid)
xs = [rng.standard_normal((2 * per_process, 8)).astype(jnp.bfloat16),
      np.arange(per_process * 3 * 5, dtype=np.int8).reshape(per_process * 3, 5),
      rng.standard_normal((per_process, 256, 64)).astype(np.float32)]
src_s = NamedSharding(mesh_of(src_devices), P("x"))
dst_s = NamedSharding(mesh_of(dst_devices), P("x"))
ys = [jax.make_array_from_callback(x.shape, src_s, lambda index, x=x: x[index], dtype=x.dtype) for x in xs]
zs = jax.device_put(ys, dst_s)
for x, z in zip(xs, zs):
    check_shards(z, x, dst_devices)
print("OK batched", flush=True)

# A received array is usable at once: a jitted program on the destination devices reads it
# (it waits for the bytes), and the result goes back to the source processes.
x = np.arange(8 * per_process * 2, dtype=np.float32).reshape(8 * per_process, 2)
src_s = NamedSharding(mesh_of(jax.local_devices(process_index=src_pid)), P("x"))
dst_s = NamedSharding(mesh_of(jax.local_devices(process_index=dst_pid)), P("x"))
z = jax.device_put(jax.device_put(x, src_s), dst_s)
w = jax.jit(lambda v: v * 2 + 1)(z)
back = jax.device_put(w, src_s)
check_shards(back, x * 2 + 1, jax.local_devices(process_index=src_pid))
print("OK compute_and_back", flush=True)

# Mixed: half of the shards cross processes, half stay in the source process.
if per_process >= 2:
    x = jnp.arange(64).reshape(8, 8)
    src_s = NamedSharding(mesh_of(jax.local_devices(process_index=0)), P("x"))
    dst_devices = (jax.local_devices(process_index=1)[:per_process // 2] +
                   jax.local_devices(process_index=0)[:per_process // 2])
    z = jax.device_put(jax.device_put(x, src_s), NamedSharding(mesh_of(dst_devices), P("x")))
    check_shards(z, np.asarray(x), dst_devices)
    print("OK mixed_local_and_remote", flush=True)

print("OK all", flush=True)
jax.distributed.shutdown()
