"""Donation of sharded arrays: every device's shard of a donated parameter becomes that
device's shard of the updated parameter, and results equal JAX's CPU backend's."""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P


def shard_pointers(array):
    return sorted((shard.device.id, shard.data.unsafe_buffer_pointer()) for shard in array.addressable_shards)


def allocations(mesh):
    stats = [device.memory_stats() for device in mesh.devices.flat]
    return sum(s["num_allocs"] for s in stats) if all(stats) else 0  # JAX's CPU devices keep none


def sgd(params, x):
    def loss(p):
        h = jnp.tanh(x @ p["w"] + p["b"])
        return jnp.mean(h ** 2)
    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value


def test_a_sharded_training_step_updates_every_shard_in_place(mesh_pair):
    rng = np.random.default_rng(0)
    host = {"w": rng.standard_normal((512, 1024)).astype(np.float32) / 20,
            "b": rng.standard_normal(1024).astype(np.float32) / 10}
    x = rng.standard_normal((64, 512)).astype(np.float32)
    specs = {"w": P(None, "x"), "b": P("x")}
    outcome = []
    for mesh in mesh_pair((4,), ("x",)):
        params = jax.device_put(host, jax.tree.map(lambda s: NamedSharding(mesh, s), specs))
        xs = jax.device_put(x, NamedSharding(mesh, P()))
        step = jax.jit(sgd, donate_argnums=0)
        params, loss = step(params, xs)
        jax.block_until_ready(params)
        before = {k: shard_pointers(v) for k, v in params.items()}
        count = allocations(mesh)
        for _ in range(3):
            params, loss = step(params, xs)
        jax.block_until_ready((params, loss))
        after = {k: shard_pointers(v) for k, v in params.items()}
        outcome.append((params, loss, before == after, allocations(mesh) - count))
    (got, got_loss, same, new), (want, want_loss, _, _) = outcome
    assert same, "each device's parameter shards keep their storage"
    assert new == 3 * 4  # the loss on each of 4 devices per step, nothing else
    for name in host:
        assert got[name].sharding.spec == want[name].sharding.spec
        np.testing.assert_allclose(np.asarray(got[name]), np.asarray(want[name]), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(got_loss), np.asarray(want_loss), rtol=1e-5)


def test_sharded_results_not_computable_in_place_are_correct(mesh_pair):
    # A transposed and a reversed result from the donated array, on 2x2 devices.
    a = np.arange(256 * 256, dtype=np.float32).reshape(256, 256) / 100
    results = []
    for mesh in mesh_pair((2, 2), ("x", "y")):
        s = NamedSharding(mesh, P("x", "y"))
        x = jax.jit(lambda v: v + 0, out_shardings=s)(jax.device_put(a, s))
        results.append(jax.jit(lambda v: (v.T, v[::-1] * 2), donate_argnums=0)(x))
    for got, want in zip(*[jax.tree.leaves(r) for r in results]):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
