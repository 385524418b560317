"""jit over NamedSharding inputs on 1-D and 2-D meshes: results equal JAX's CPU backend's,
with the requested output shardings."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P


def run_both(mesh_pair, shape, names, fn, inputs, in_specs, out_specs=None):
    results = []
    for mesh in mesh_pair(shape, names):
        args = [jax.device_put(a, NamedSharding(mesh, spec)) for a, spec in zip(inputs, in_specs)]
        out_shardings = None if out_specs is None else jax.tree.map(lambda s: NamedSharding(mesh, s), out_specs)
        results.append((mesh, jax.jit(fn, out_shardings=out_shardings)(*args)))
    return results


def assert_same(stablert, cpu, mesh, out_specs=None):
    for got, want in zip(jax.tree.leaves(stablert), jax.tree.leaves(cpu)):
        assert got.devices() <= set(mesh.devices.flat)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
        for shard in got.addressable_shards:
            np.testing.assert_allclose(np.asarray(shard.data), np.asarray(got)[shard.index], rtol=0, atol=0)
    if out_specs is not None:
        for got, spec in zip(jax.tree.leaves(stablert), jax.tree.leaves(out_specs, is_leaf=lambda x: isinstance(x, P))):
            assert got.sharding.spec == spec


A = np.arange(64, dtype=np.float32).reshape(8, 8) / 7
B = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)


@pytest.mark.parametrize("spec", [P("x", "y"), P("x", None), P(None, "y"), P(), P(("x", "y"), None), P("y", "x")],
                         ids=str)
def test_elementwise_on_2d_mesh(mesh_pair, spec):
    (sm, s), (cm, c) = run_both(mesh_pair, (2, 2), ("x", "y"), lambda a, b: jnp.tanh(a) * b + 1, [A, B], [spec, spec])
    assert_same(s, c, sm)
    assert s.sharding.spec == c.sharding.spec


@pytest.mark.parametrize("out_spec", [P("x"), P(None), P("y")], ids=str)
def test_reduction_with_requested_output_sharding(mesh_pair, out_spec):
    fn = lambda a: a.sum(axis=1)
    (sm, s), (cm, c) = run_both(mesh_pair, (2, 2), ("x", "y"), fn, [A], [P("x", "y")], out_spec)
    assert_same(s, c, sm, out_spec)


def test_matmul_on_1d_mesh(mesh_pair):
    fn = lambda a, b: a @ b
    (sm, s), (cm, c) = run_both(mesh_pair, (4,), ("i",), fn, [A, B], [P("i", None), P(None, None)], P("i", None))
    assert_same(s, c, sm, P("i", None))


def test_grad_through_sharded_program(mesh_pair):
    fn = jax.grad(lambda a, b: jnp.sum(jnp.tanh(a * b) ** 2))
    (sm, s), (cm, c) = run_both(mesh_pair, (2, 2), ("x", "y"), fn, [A, B], [P("x", "y"), P(None, "y")])
    assert_same(s, c, sm)


def test_multiple_outputs_with_mixed_shardings(mesh_pair):
    fn = lambda a: (a + 1, a.T, a.max())
    specs = (P("x", "y"), P("y", "x"), P())
    (sm, s), (cm, c) = run_both(mesh_pair, (2, 2), ("x", "y"), fn, [A], [P("x", "y")], specs)
    assert_same(s, c, sm, specs)


def test_device_put_round_trips_shardings(mesh_pair):
    sm, _ = mesh_pair((2, 2), ("x", "y"))
    for spec in [P("x", "y"), P("y"), P(None, ("x", "y")), P()]:
        x = jax.device_put(A, NamedSharding(sm, spec))
        np.testing.assert_array_equal(np.asarray(x), A)
        resharded = jax.device_put(x, NamedSharding(sm, P("y", "x")))
        np.testing.assert_array_equal(np.asarray(resharded), A)


# Results left unsharded by the program take the sharding of the data they come from, as
# XLA's sharding propagation chooses it.
PROPAGATION = [
    ("matmul", lambda a, b: jnp.sin(a * 2) @ b.T),
    ("transpose", lambda a, b: a.T * 3),
    ("reduce", lambda a, b: a.sum(axis=1)),
    ("broadcast", lambda a, b: jnp.broadcast_to(a[None], (3, 8, 8))),
    ("reshape_unit_dim", lambda a, b: a.reshape(8, 1, 8)),
    ("batched_matmul", lambda a, b: jnp.einsum("bij,bjk->bik", a.reshape(2, 4, 8), b.reshape(2, 8, 4))),
    ("through_a_call", lambda a, b: jax.jit(lambda x: jnp.tanh(x).T)(a) + 1),
    # 3 rows do not split over 2 devices: the result is replicated, as on XLA.
    ("uneven_result", lambda a, b: a[:3] * 2),
    ("concatenate", lambda a, b: jnp.stack([a, b * 2], axis=-1)),
    ("gather_row", lambda a, b: a[:, jnp.array(3)]),
    ("gather_square", lambda a, b: a.reshape(2, 4, 8)[:, 1, :]),
    ("reverse", lambda a, b: a[::-1] + 1),
    ("while_loop", lambda a, b: jax.lax.fori_loop(0, 3, lambda i, x: jnp.sin(x) + i, a)),
    ("cond", lambda a, b: jax.lax.cond(a[0, 0] > 0, lambda x: x * 2, lambda x: -x, a)),
    # jax.random's threefry keys from sharded seeds: an open constraint on an empty mesh.
    ("threefry_keys", lambda a, b: jax.random.key_data(jax.vmap(jax.vmap(jax.random.key))(
        a.astype(jnp.uint32))).transpose(1, 0, 2)),
]


@pytest.mark.parametrize("name,fn", PROPAGATION, ids=[p[0] for p in PROPAGATION])
def test_open_result_shardings_follow_their_data(mesh_pair, name, fn):
    (sm, s), (cm, c) = run_both(mesh_pair, (2, 2), ("x", "y"), fn, [A, B], [P("x", "y"), P("x", "y")])
    assert_same(s, c, sm)
    assert s.sharding.spec == c.sharding.spec


def test_a_sharding_constraint_in_a_loop_body_shards_the_loop_result(mesh_pair):
    results = []
    for mesh in mesh_pair((2, 2), ("x", "y")):
        def f(a):
            step = lambda c, _: (jax.lax.with_sharding_constraint(c * 2, NamedSharding(mesh, P("y", "x"))), None)
            return jax.lax.scan(step, a, None, length=2)[0]
        results.append(jax.jit(f)(jax.device_put(A, NamedSharding(mesh, P()))))
    s, c = results
    assert_same(s, c, s.sharding.mesh)
    assert s.sharding.spec == c.sharding.spec == P("y", "x")


def test_a_donation_no_result_can_reuse_leaves_the_argument_valid(mesh_pair):
    # As on XLA: the sharded x (8x2) cannot back the 8x8 result, so it is not consumed;
    # a donation that fits is.
    import warnings

    a = np.arange(16, dtype=np.float32).reshape(8, 2)
    outcome = []
    for mesh in mesh_pair((2, 2), ("x", "y")):
        s = NamedSharding(mesh, P("x"))
        x, y = jax.device_put(a, s), jax.device_put(a, s)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Some donated buffers were not usable"
            product = jax.jit(lambda v: v @ v.T, donate_argnums=0)(x)
            doubled = jax.jit(lambda v: (v * 2).reshape(16), donate_argnums=0)(y)  # same bytes, new shape
        outcome.append((np.asarray(product), x.is_deleted(), np.asarray(doubled), y.is_deleted()))
    got, want = outcome
    assert got[1] is want[1] is False
    assert got[3] is want[3] is True
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[2], want[2])
