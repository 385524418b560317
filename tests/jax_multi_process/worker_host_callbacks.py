"""One process of a multi-process StableRT job (run by `python -m stablert.launch`): host
callbacks inside a shard_map over every process's devices. As with jaxlib's CPU client, each
device calls back in the process that owns it, with its own block: jax.debug.print (JAX's
test_print_in_multihost_shard_map: each process prints its devices' values), a pure_callback
whose results feed a psum across processes, and ordered io_callbacks. References are numpy.
Prints "OK <check>" per passed check; any failure raises (non-zero exit)."""
import contextlib
import io
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.distributed.initialize()

count, pid = jax.process_count(), jax.process_index()
per_process = jax.local_device_count()
n = jax.device_count()
mesh = Mesh(np.array(jax.devices()), ("i",))
sharding = NamedSharding(mesh, P("i"))
local_ids = [d.id for d in jax.local_devices()]

# jax.debug.print in a shard_map (JAX's multiprocess pjit_test): each process prints the
# first element of each of its devices' blocks, once per device.
local_x = np.arange(per_process, dtype=np.int32) + pid * per_process
x = jax.make_array_from_process_local_data(sharding, local_x, (n,))


@jax.jit
@jax.shard_map(mesh=mesh, in_specs=P("i"), out_specs=P("i"))
def printed(v):
    jax.debug.print("{}", v[0], ordered=False)
    return v


buffer = io.StringIO()
with contextlib.redirect_stdout(buffer):
    out = printed(x)
    out.block_until_ready()
    jax.effects_barrier()
assert sorted(buffer.getvalue().split("\n")) == sorted([str(i) for i in local_x] + [""]), buffer.getvalue()
np.testing.assert_array_equal(np.asarray(out.addressable_data(0)), local_x[:1])
print("OK debug_print", flush=True)

# A pure_callback per block, its results summed across every process's devices.
rows = 3
g = (np.arange(n * rows * 4, dtype=np.float32).reshape(n * rows, 4) / 11).astype(np.float32)
seen = []


def host_sin(block):
    seen.append(np.asarray(block).copy())
    return np.sin(block).astype(np.float32)


@jax.jit
@jax.shard_map(mesh=mesh, in_specs=P("i"), out_specs=P(), check_vma=False)
def summed(v):
    y = jax.pure_callback(host_sin, jax.ShapeDtypeStruct(v.shape, v.dtype), v)
    return jax.lax.psum(y * 2, "i")


xg = jax.make_array_from_callback(g.shape, sharding, lambda index: g[index])
out = summed(xg)
want = (np.sin(g) * 2).reshape(n, rows, 4).sum(0)
np.testing.assert_allclose(np.asarray(out.addressable_data(0)), want, rtol=1e-5, atol=1e-5)
blocks = g.reshape(n, rows, 4)
assert sorted(b.tobytes() for b in seen) == sorted(blocks[i].tobytes() for i in local_ids), seen
print("OK pure_callback_psum", flush=True)

# Ordered io_callbacks: per device "a" then "b", in this process only for its own devices.
calls = []


def record(tag):
    def host(v):
        calls.append((tag, np.asarray(v).tolist()))
    return host


@jax.jit
@jax.shard_map(mesh=mesh, in_specs=P("i"), out_specs=P("i"))
def ordered(v):
    io_callback(record("a"), None, v, ordered=True)
    io_callback(record("b"), None, v + 100, ordered=True)
    return v * 3


y = jax.make_array_from_callback((2 * n,), sharding, lambda index: np.arange(2 * n, dtype=np.int32)[index])
for _ in range(2):
    out = ordered(y)
jax.effects_barrier()
np.testing.assert_array_equal(np.asarray(out.addressable_data(0)), (np.arange(2, dtype=np.int32) + 2 * local_ids[0]) * 3)
want_calls = sorted([("a", [2 * i, 2 * i + 1]) for i in local_ids] * 2 +
                    [("b", [2 * i + 100, 2 * i + 101]) for i in local_ids] * 2)
assert sorted(calls) == want_calls, calls
for k, (tag, values) in enumerate(calls):
    if tag == "b":  # this device's "a" of the same run came first
        assert calls[:k].count(("a", [v - 100 for v in values])) > calls[:k].count((tag, values)), calls
print("OK ordered_io_callback", flush=True)

jax.distributed.shutdown()
print("OK all", flush=True)
