"""One process of a multi-process StableRT job (run by `python -m stablert.launch`): checks the
job's devices, shard_map collectives across processes, a sharded training step,
multihost_utils.process_allgather and jax.make_array_from_process_local_data. References are
numpy, or JAX's CPU backend on this process's first CPU device with the global data. Prints
"OK <check>" per passed check; any failure raises (non-zero exit)."""
import hashlib
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

jax.distributed.initialize()

count, pid = jax.process_count(), jax.process_index()
per_process = int(os.environ["STABLERT_DEVICE_COUNT"])
n = count * per_process
assert count == int(os.environ["STABLERT_LAUNCH_NUM_PROCESSES"]), count
assert pid == int(os.environ["STABLERT_LAUNCH_PROCESS_ID"]), pid

# The job's devices: ids node_id * device_count + i, every process's listed, own addressable.
devices = jax.devices()
assert [d.platform for d in devices] == ["stablert"] * n, devices
assert [d.id for d in devices] == list(range(n)), devices
assert [d.process_index for d in devices] == [i // per_process for i in range(n)], devices
assert [d.id for d in jax.local_devices()] == list(range(pid * per_process, (pid + 1) * per_process))
assert jax.local_device_count() == per_process
print("OK devices", flush=True)

mesh = Mesh(np.array(devices), ("x",))
rows = 2 * n  # per device: divisible by n for psum_scatter / all_to_all
rng = np.random.default_rng(0)
g = rng.standard_normal((n * rows, 8)).astype(np.float32)


def global_array(a, spec):
    return jax.make_array_from_callback(a.shape, NamedSharding(mesh, spec), lambda index: a[index])


def gathered(x):
    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def smap(f, out_specs):
    return jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=out_specs, check_vma=False))


x = global_array(g, P("x"))
blocks = g.reshape(n, rows, 8)
tol = dict(rtol=1e-5, atol=1e-5)

out = smap(lambda b: jax.lax.psum(b, "x"), P())(x)
np.testing.assert_allclose(np.asarray(out.addressable_data(0)), blocks.sum(0), **tol)
print("OK psum", flush=True)

out = smap(lambda b: jax.lax.all_gather(b, "x", tiled=True), P())(x)
np.testing.assert_array_equal(np.asarray(out.addressable_data(0)), g)
print("OK all_gather", flush=True)

perm = [(i, (i + 1) % n) for i in range(n)]
out = smap(lambda b: jax.lax.ppermute(b, "x", perm), P("x"))(x)
np.testing.assert_array_equal(gathered(out), np.roll(blocks, 1, axis=0).reshape(g.shape))
print("OK ppermute", flush=True)

out = smap(lambda b: jax.lax.psum_scatter(b, "x", scatter_dimension=0, tiled=True), P("x"))(x)
np.testing.assert_allclose(gathered(out), blocks.sum(0), **tol)
print("OK psum_scatter", flush=True)

out = smap(lambda b: jax.lax.all_to_all(b, "x", 0, 0, tiled=True), P("x"))(x)
expected = blocks.reshape(n, n, rows // n, 8).transpose(1, 0, 2, 3).reshape(g.shape)
np.testing.assert_array_equal(gathered(out), expected)
print("OK all_to_all", flush=True)

# A large all-reduce: 4 MiB per device, sent in many transport chunks.
big = rng.standard_normal((n * 1024, 1024)).astype(np.float32)
out = smap(lambda b: jax.lax.psum(b, "x"), P())(global_array(big, P("x")))
np.testing.assert_allclose(np.asarray(out.addressable_data(0)), big.reshape(n, 1024, 1024).sum(0), rtol=1e-5,
                           atol=1e-4)
# The segmented all-reduce gives every process the same bits.
digest = np.frombuffer(hashlib.sha256(np.asarray(out.addressable_data(0)).tobytes()).digest(), np.uint8)
digests = np.asarray(multihost_utils.process_allgather(digest))
assert all((d == digests[0]).all() for d in digests), digests
print("OK psum_4MiB", flush=True)

out = smap(lambda b: jax.lax.pmax(b, "x") - jax.lax.pmin(b, "x"), P())(x)
np.testing.assert_allclose(np.asarray(out.addressable_data(0)), blocks.max(0) - blocks.min(0), **tol)
print("OK pmax_pmin", flush=True)

# pmap over every process's devices.
local_values = np.arange(per_process, dtype=np.float32) + 10 * pid
out = jax.pmap(lambda v: jax.lax.psum(v, "i"), axis_name="i")(local_values)
total = sum(float((np.arange(per_process) + 10 * p).sum()) for p in range(count))
np.testing.assert_array_equal(np.asarray(out), np.full(per_process, total, np.float32))
print("OK pmap_psum", flush=True)

# A sharded training step over the global mesh, against JAX's CPU backend on the global data.
w0 = (rng.standard_normal((8, 4)) * 0.1).astype(np.float32)
y = rng.standard_normal((n * rows, 4)).astype(np.float32)


def step(w, xb, yb):
    def loss(w):
        return jnp.mean((jnp.tanh(xb @ w) - yb) ** 2)

    value, grad = jax.value_and_grad(loss)(w)
    return w - 0.1 * grad, value


replicated = NamedSharding(mesh, P())
batch = NamedSharding(mesh, P("x"))
train = jax.jit(step, in_shardings=(replicated, batch, batch), out_shardings=(replicated, replicated))
w, xs, ys = global_array(w0, P()), x, global_array(y, P("x"))
losses = []
for _ in range(3):
    w, value = train(w, xs, ys)
    losses.append(float(value.addressable_data(0)))
cpu = jax.local_devices(backend="cpu")[0]
ref_step = jax.jit(step)
w_ref = jax.device_put(w0, cpu)
ref_losses = []
for _ in range(3):
    w_ref, value = ref_step(w_ref, jax.device_put(g, cpu), jax.device_put(y, cpu))
    ref_losses.append(float(value))
np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
np.testing.assert_allclose(np.asarray(w.addressable_data(0)), np.asarray(w_ref), rtol=1e-5, atol=1e-6)
print("OK training_step", flush=True)

# process_allgather of host values, and an array from process-local data.
everyone = multihost_utils.process_allgather(np.array([pid, 10 * pid]))
np.testing.assert_array_equal(np.asarray(everyone), np.array([[p, 10 * p] for p in range(count)]))
print("OK process_allgather", flush=True)

local = np.arange(per_process * 3 * 2, dtype=np.float32).reshape(per_process * 3, 2) + 100 * pid
arr = jax.make_array_from_process_local_data(batch, local)
assert arr.shape == (n * 3, 2), arr.shape
total = jax.jit(jnp.sum, out_shardings=replicated)(arr)
expected_total = sum(float((np.arange(per_process * 6, dtype=np.float32) + 100 * p).sum()) for p in range(count))
np.testing.assert_allclose(float(total.addressable_data(0)), expected_total, rtol=1e-6)
np.testing.assert_array_equal(gathered(arr), np.concatenate(
    [np.arange(per_process * 6, dtype=np.float32).reshape(per_process * 3, 2) + 100 * p for p in range(count)]))
print("OK make_array_from_process_local_data", flush=True)

# A program on process 0's devices only: the other processes run nothing and own no result.
sub_mesh = Mesh(np.array(jax.devices()[:per_process]), ("x",))
small = np.arange(per_process * 4, dtype=np.float32)
on_first = jax.make_array_from_callback(small.shape, NamedSharding(sub_mesh, P("x")), lambda index: small[index],
                                        dtype=np.float32)
doubled = jax.jit(lambda v: v * 2)(on_first)
if pid == 0:
    shards = sorted(doubled.addressable_shards, key=lambda s: s.index[0].start)
    np.testing.assert_array_equal(np.concatenate([np.asarray(s.data) for s in shards]), small * 2)
else:
    assert not doubled.addressable_shards
print("OK program_on_other_processes_devices", flush=True)

multihost_utils.sync_global_devices("done")
print("OK all", flush=True)
