"""pmap and shard_map: the body runs once per device with real collectives; results equal
JAX's CPU backend's with the same number of devices."""
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

shard_map = jax.shard_map


def test_pmap_psum():
    devices = jax.devices("stablert")[:4]
    out = jax.pmap(lambda x: x + jax.lax.psum(x, "i"), axis_name="i", devices=devices)(jnp.arange(4))
    np.testing.assert_array_equal(np.asarray(out), [6, 7, 8, 9])
    assert {d.platform for d in out.devices()} == {"stablert"}


def test_pmap_collectives():
    devices = jax.devices("stablert")[:4]
    cpu = jax.devices("cpu")[:4]

    def fn(x):
        return (jax.lax.pmean(x, "i"), jax.lax.pmax(x, "i"), jax.lax.all_gather(x, "i"),
                jax.lax.ppermute(x, "i", [(k, (k + 1) % 4) for k in range(4)]), jax.lax.axis_index("i"))

    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = jax.pmap(fn, axis_name="i", devices=devices)(x)
    want = jax.pmap(fn, axis_name="i", devices=cpu)(x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_pmap_psum_over_uneven_groups():
    groups = [[0], [1, 2, 3]]
    fn = lambda x: x - jax.lax.psum(x, "i", axis_index_groups=groups)
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    got = jax.pmap(fn, "i", devices=jax.devices("stablert")[:4])(x)
    want = jax.pmap(fn, "i", devices=jax.devices("cpu")[:4])(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want))


def run_both(mesh_pair, shape, names, body, in_specs, out_specs, inputs, check_vma=False):
    results = []
    for mesh in mesh_pair(shape, names):
        args = [jax.device_put(a, NamedSharding(mesh, spec)) for a, spec in zip(inputs, in_specs)]
        fn = shard_map(body, mesh=mesh, in_specs=tuple(in_specs), out_specs=out_specs, check_vma=check_vma)
        results.append(jax.jit(fn)(*args))
    return results


def assert_same(got, want):
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        assert {d.platform for d in g.devices()} == {"stablert"}
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
        for shard in g.addressable_shards:
            np.testing.assert_array_equal(np.asarray(shard.data), np.asarray(g)[shard.index])


X = np.arange(64, dtype=np.float32).reshape(8, 8) / 8

# (name, body, out_specs) over a 1-D mesh "i" of 4 devices, input sharded P("i").
ONE_D = [
    ("psum", lambda x: jax.lax.psum(x, "i"), P()),
    ("pmean", lambda x: x - jax.lax.pmean(x, "i"), P("i")),
    ("pmax_pmin", lambda x: (jax.lax.pmax(x, "i"), jax.lax.pmin(x, "i")), (P(), P())),
    ("all_gather", lambda x: jax.lax.all_gather(x, "i"), P()),
    ("all_gather_tiled", lambda x: jax.lax.all_gather(x, "i", tiled=True), P()),
    ("all_gather_axis1", lambda x: jax.lax.all_gather(x, "i", axis=1, tiled=True), P()),
    ("psum_scatter", lambda x: jax.lax.psum_scatter(x.reshape(8, 2), "i", tiled=True), P("i")),
    ("psum_scatter_dim1", lambda x: jax.lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True), P("i")),
    ("psum_scatter_untiled", lambda x: jax.lax.psum_scatter(x.reshape(4, 4), "i"), P("i")),
    ("ppermute", lambda x: jax.lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]), P("i")),
    ("ppermute_partial", lambda x: jax.lax.ppermute(x, "i", [(0, 2), (1, 0)]), P("i")),
    ("all_to_all", lambda x: jax.lax.all_to_all(x, "i", 1, 0, tiled=True), P("i")),
    ("all_to_all_same_dim", lambda x: jax.lax.all_to_all(x, "i", 1, 1, tiled=True), P("i")),
    ("axis_index", lambda x: x * jax.lax.axis_index("i").astype(x.dtype), P("i")),
    ("psum_int", lambda x: jax.lax.psum((x * 8).astype(jnp.int32), "i"), P()),
]


@pytest.mark.parametrize("name,body,out_specs", ONE_D, ids=[c[0] for c in ONE_D])
def test_shard_map_1d(mesh_pair, name, body, out_specs):
    got, want = run_both(mesh_pair, (4,), ("i",), body, [P("i")], out_specs, [X])
    assert_same(got, want)


# Over a 2 x 2 mesh ("x", "y"), input sharded P("x", "y").
TWO_D = [
    ("psum_x", lambda x: jax.lax.psum(x, "x"), P(None, "y")),
    ("psum_y", lambda x: jax.lax.psum(x, "y"), P("x")),
    ("psum_both", lambda x: jax.lax.psum(x, ("x", "y")), P()),
    ("all_gather_y", lambda x: jax.lax.all_gather(x, "y", axis=1, tiled=True), P("x")),
    ("psum_scatter_x", lambda x: jax.lax.psum_scatter(x, "x", tiled=True), P(("x",), "y")),
    ("ppermute_x", lambda x: jax.lax.ppermute(x, "x", [(0, 1), (1, 0)]), P("x", "y")),
    ("all_to_all_y", lambda x: jax.lax.all_to_all(x, "y", 0, 1, tiled=True), P("x", "y")),
    ("axis_index", lambda x: x + 10 * jax.lax.axis_index("x") + jax.lax.axis_index("y"), P("x", "y")),
]


@pytest.mark.parametrize("name,body,out_specs", TWO_D, ids=[c[0] for c in TWO_D])
def test_shard_map_2d(mesh_pair, name, body, out_specs):
    got, want = run_both(mesh_pair, (2, 2), ("x", "y"), body, [P("x", "y")], out_specs, [X])
    assert_same(got, want)


# Partially manual: only "x" is manual; "y" stays automatic (the body sees whole columns).
PARTIAL = [
    ("psum_x", lambda x: jax.lax.psum(x, "x"), P()),
    ("all_gather_x", lambda x: jax.lax.all_gather(x, "x", tiled=True) * 2, P()),
    ("ppermute_x", lambda x: jax.lax.ppermute(jnp.sin(x), "x", [(0, 1), (1, 0)]), P("x")),
    ("axis_index_x", lambda x: x.sum(axis=1, keepdims=True) + jax.lax.axis_index("x"), P("x")),
]


@pytest.mark.parametrize("name,body,out_specs", PARTIAL, ids=[c[0] for c in PARTIAL])
def test_shard_map_partially_manual(mesh_pair, name, body, out_specs):
    results = []
    for mesh in mesh_pair((2, 2), ("x", "y")):
        x = jax.device_put(X, NamedSharding(mesh, P("x", "y")))
        fn = shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=out_specs, axis_names={"x"}, check_vma=False)
        results.append(jax.jit(fn)(x))
    assert_same(*results)


def test_partially_manual_result_follows_a_constraint_on_the_automatic_axis(mesh_pair):
    # out_specs=P() over the manual "x" leaves the automatic "y" open: the body's sharding
    # constraint on "y" decides the result's sharding, as XLA's propagation does.
    results = []
    for mesh in mesh_pair((2, 2), ("x", "y")):
        sharding = NamedSharding(mesh, P("y"))
        body = lambda v: jax.lax.with_sharding_constraint(v * v, sharding)
        fn = shard_map(body, mesh=mesh, in_specs=P(), out_specs=P(), axis_names=frozenset({"x"}), check_vma=False)
        results.append(jax.jit(fn)(jax.device_put(X[:4], sharding)))
    assert_same(*results)
    assert results[0].sharding.spec == results[1].sharding.spec == P("y")


def test_nested_shard_map_inside_a_partially_manual_one(mesh_pair):
    # Outer region manual over "i", inner over "j": the inner result is split along "j" and
    # gathered back; the outer result along "i". Gradients flow through both.
    def f(mesh):
        def inner(x):
            return jnp.sin(x) * x + jax.lax.axis_index("j")

        def outer(x):
            y = shard_map(inner, in_specs=P(None, "j"), out_specs=P(None, "j"))(x)
            return y + jax.lax.psum(x.sum(), "i")

        return shard_map(outer, in_specs=P("i", None), out_specs=P("i", None), check_vma=False,
                         axis_names=frozenset({"i"}))

    results = []
    for mesh in mesh_pair((2, 2), ("i", "j")):
        with jax.set_mesh(mesh):
            v = jax.device_put(X[:4], NamedSharding(mesh, P("i", "j")))
            fn = f(mesh)
            results.append((jax.jit(fn)(v), jax.jit(jax.grad(lambda x: fn(x).sum()))(v)))
    assert_same(*results)


def test_shard_map_replicated_operand(mesh_pair):
    body = lambda x, w: jax.lax.psum(x @ w, "i")
    w = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    got, want = run_both(mesh_pair, (4,), ("i",), body, [P(None, "i"), P("i")], P(), [X, w])
    assert_same(got, want)


def test_grad_through_shard_map(mesh_pair):
    def loss(mesh):
        def body(x, w):
            return jax.lax.psum(jnp.sum(jnp.tanh(x * w) ** 2), "i")
        return lambda x, w: shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=P())(x, w)

    w = np.linspace(-1, 1, 8, dtype=np.float32)
    results = []
    for mesh in mesh_pair((4,), ("i",)):
        x = jax.device_put(X, NamedSharding(mesh, P("i")))
        wd = jax.device_put(w, NamedSharding(mesh, P()))
        results.append(jax.jit(jax.grad(loss(mesh), argnums=(0, 1)))(x, wd))
    assert_same(*results)


def test_shard_map_in_a_loop(mesh_pair):
    def body(x):
        return jax.lax.fori_loop(0, 3, lambda k, v: jax.lax.psum(v, "i") / 4 + k, x)
    got, want = run_both(mesh_pair, (4,), ("i",), body, [P("i")], P("i"), [X])
    assert_same(got, want)


MISMATCH = textwrap.dedent("""
    import time
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import Mesh, PartitionSpec as P
    mesh = Mesh(np.array(jax.devices("stablert")[:4]), ("i",))
    def body(x):
        # Only device 0 takes the branch with the psum: its peers never arrive.
        return jax.lax.cond(jax.lax.axis_index("i") == 0, lambda v: jax.lax.psum(v, "i"), lambda v: v, x)
    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=False))
    start = time.time()
    try:
        f(jnp.arange(8.0)).block_until_ready()
        print("NO ERROR")
    except Exception as e:
        print("ERROR", str(e))
    print("ELAPSED", time.time() - start)
""")


def test_mismatched_collective_times_out():
    env = dict(os.environ, STABLERT_COLLECTIVE_TIMEOUT_SECONDS="1", JAX_PLATFORMS="stablert", STABLERT_DEVICE_COUNT="4")
    done = subprocess.run([sys.executable, "-c", MISMATCH], env=env, capture_output=True, text=True, timeout=120)
    out = done.stdout
    assert "ERROR" in out and "NO ERROR" not in out, out + done.stderr
    assert "DEADLINE_EXCEEDED" in out and "stablehlo.all_reduce" in out, out
    assert "devices 1, 2, 3 did not reach" in out, out
    assert float(out.split("ELAPSED")[1]) < 30, out


def test_shard_map_inside_a_loop(mesh_pair):
    results = []
    for mesh in mesh_pair((4,), ("i",)):
        step = jax.shard_map(lambda v: jax.lax.psum(v, "i") / 4 + 1, mesh=mesh, in_specs=P("i"), out_specs=P("i"),
                             check_vma=False)
        x = jax.device_put(X, NamedSharding(mesh, P("i")))
        results.append(jax.jit(lambda v: jax.lax.fori_loop(0, 3, lambda k, a: step(a) * (k + 1), v))(x))
    assert_same(*results)


def test_unreduced_results_and_operands():
    """Unreduced (partial-sum) values: every device holds the same partial as on the CPU
    backend, and every logical value, reshard and gradient is the CPU backend's."""
    from jax.sharding import AxisType

    a_host = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    b_host = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    results = []
    for platform in ("stablert", "cpu"):
        devices = np.array(jax.devices(platform)[:4]).reshape(2, 2)
        mesh = Mesh(devices, ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
        with jax.set_mesh(mesh):
            a = jax.device_put(a_host, P("x", "y"))
            b = jax.device_put(b_host, P("y", None))

            @jax.jit
            @shard_map(in_specs=(P("x", "y"), P("y", None)), out_specs=P("x", None, unreduced={"y"}))
            def matmul(x, y):
                return jnp.einsum("ab,bc->ac", x, y)

            out = matmul(a, b)
            assert out.sharding == NamedSharding(mesh, P("x", None, unreduced={"y"}))
            shards = {}  # row of the mesh ("x" position) -> the partials along "y"
            for shard in out.addressable_shards:
                row = int(np.argwhere(devices == shard.device)[0][0])
                shards.setdefault(row, []).append(np.asarray(shard.data))
            partial_sums = {k: sum(v) for k, v in shards.items()}
            per_device = [np.asarray(s.data) for s in sorted(out.addressable_shards, key=lambda s: s.device.id)]
            summed = jax.sharding.reshard(out, P("x", None))

            # An unreduced operand: the body sees partials that psum back to the value.
            @jax.jit
            @shard_map(in_specs=P("x", None, unreduced={"y"}), out_specs=P("x", None))
            def reduce_partials(p):
                return jax.lax.psum(p, "y")

            psummed = reduce_partials(out)

            def loss(x, y):
                return jax.sharding.reshard(matmul(x, y), P("x", None)).sum()

            grads = jax.jit(jax.grad(loss, argnums=(0, 1)))(a, b)
            results.append((partial_sums, np.asarray(summed), [np.asarray(g) for g in grads], np.asarray(psummed),
                            per_device))
    (got_partials, got, got_grads, got_psum, got_shards), (want_partials, want, want_grads, want_psum, want_shards) = results
    for g, w in zip(got_shards, want_shards):
        np.testing.assert_allclose(g, w, rtol=1e-6)
    np.testing.assert_allclose(got_psum, want_psum, rtol=1e-6)
    np.testing.assert_allclose(got, a_host @ b_host, rtol=1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for k in want_partials:
        np.testing.assert_allclose(got_partials[k], want_partials[k], rtol=1e-6)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_compiled_text_shows_what_each_device_runs():
    # A partitioned program's compiled text is the program one device runs (local shapes,
    # its collectives), as XLA's; a program left to the global view has no HLO form when it
    # holds Shardy ops (JAX gives None), and single-device programs show their HLO.
    devices = jax.devices("stablert")[:4]
    f = jax.pmap(lambda x: x - jax.lax.pmean(x, "i"), axis_name="i", devices=devices)
    text = f.lower(np.ones((4, 3), np.float32)).compile().as_text()
    assert "all-reduce(" in text and "f32[1,3]" in text and "f32[4,3]" not in text
    mesh = Mesh(np.array(devices).reshape(2, 2), ("i", "j"))
    partially_manual = jax.jit(shard_map(lambda a: jax.lax.psum(a, "i"), mesh=mesh, in_specs=P("i"), out_specs=P(),
                                         axis_names={"i"}, check_vma=False))
    x = jax.device_put(np.ones((4, 3), np.float32), NamedSharding(mesh, P("i")))
    assert partially_manual.lower(x).compile().as_text() is None
    with jax.default_device(devices[0]):
        assert "HloModule" in jax.jit(lambda x: x * 2).lower(1.0).compile().as_text()


def test_gradient_of_a_shard_map_keeps_its_sharding(mesh_pair):
    # The gradient is the result of a called function's manual region (out_specs P("x")).
    results = []
    for mesh in mesh_pair((4,), ("x",)):
        f = shard_map(lambda a: jax.lax.all_gather(a, "x", tiled=True), mesh=mesh, in_specs=P("x"), out_specs=P(),
                      check_vma=False)
        with jax.default_device(mesh.devices.flat[0]):
            grad = jax.jit(jax.grad(lambda x: jax.jit(f)(x).sum()))(jnp.arange(8.0))
        results.append(grad)
    assert_same(*results)
    assert results[0].sharding.spec == results[1].sharding.spec
