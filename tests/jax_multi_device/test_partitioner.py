"""The SPMD partitioner (src/passes/sharding/partition.h): programs over sharded arrays run once per
device on its blocks, with collectives between devices. Results, output shardings and the
per-device data of unreduced (partial-sum) arrays equal JAX's CPU backend's; programs the
partitioner does not cover run in the global view with the same results."""
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P


def explicit_mesh(platform, shape, names):
    devices = np.array(jax.devices(platform)[: int(np.prod(shape))]).reshape(shape)
    return Mesh(devices, names, axis_types=(AxisType.Explicit,) * len(shape))


def shard_data(array):
    """Per-device data in device-id order."""
    return [np.asarray(s.data) for s in sorted(array.addressable_shards, key=lambda s: s.device.id)]


def assert_same_shards(got, want):
    assert got.sharding.spec == want.sharding.spec
    for g, w in zip(shard_data(got), shard_data(want)):
        np.testing.assert_allclose(g, w, rtol=1e-6)


UNREDUCED_PROGRAMS = {
    # out_shardings unreduced: a replicated value lives on the first device of the group,
    # a sharded one as its blocks placed in zeros.
    "identity_of_replicated": ((2,), lambda: (np.arange(4.0),), (P(),),
                               lambda x: jax.jit(lambda v: v, out_shardings=P(unreduced={"x"}))(x)),
    "identity_of_sharded": ((2,), lambda: (np.arange(4.0),), (P("x"),),
                            lambda x: jax.jit(lambda v: v, out_shardings=P(unreduced={"x"}))(x)),
    # a contraction over the sharded dimension kept as per-device partials
    "einsum": ((2, 2), lambda: (np.arange(8.0).reshape(4, 2),), (P("x", None),),
               lambda x: jax.jit(lambda v: jnp.einsum("ab->b", v, out_sharding=P(None, unreduced={"x"})))(x)),
    "matmul": ((2, 2), lambda: (np.arange(16.0).reshape(2, 8), np.arange(24.0).reshape(8, 3)),
               (P("y", "x"), P("x", None)),
               lambda a, b: jax.jit(lambda u, v: jnp.matmul(u, v, out_sharding=P("y", unreduced={"x"})))(a, b)),
    # a scatter-add of sharded indices: each device counts its own
    "bincount": ((2,), lambda: (np.array([1, 1, 0, 1], np.int32),), (P("x"),),
                 lambda x: jax.jit(lambda v: jnp.bincount(v, length=2, out_sharding=P(unreduced={"x"})))(x)),
    # a shard_map whose result is unreduced: the body's partials are the shards
    "shard_map": ((2,), lambda: (np.arange(8.0).reshape(4, 2),), (P("x"),),
                  lambda x: jax.jit(jax.shard_map(lambda a: a.sum(0, keepdims=True),
                                                  out_specs=P(None, unreduced={"x"}), check_vma=False))(x)),
}


@pytest.mark.parametrize("name", sorted(UNREDUCED_PROGRAMS))
def test_unreduced_results_hold_the_same_partials_as_xla(name):
    shape, inputs, specs, fn = UNREDUCED_PROGRAMS[name]
    names = ("x", "y")[: len(shape)]
    outs = []
    for platform in ("stablert", "cpu"):
        with jax.set_mesh(explicit_mesh(platform, shape, names)):
            args = [jax.device_put(a, s) for a, s in zip(inputs(), specs)]
            out = fn(*args)
            outs.append((out, np.asarray(jax.sharding.reshard(out, P()))))
    (got, got_sum), (want, want_sum) = outs
    assert_same_shards(got, want)
    np.testing.assert_allclose(got_sum, want_sum, rtol=1e-6)


def threefry_bits_plus(x):
    from jax._src.random import threefry2x32
    return threefry2x32.threefry_random_bits(jnp.array([0, 0], dtype="uint32"), 32, x.shape) + x


PROGRAMS = {
    "random_bits": (threefry_bits_plus, [np.arange(64, dtype=np.uint32).reshape(8, 8)], [P("x", "y")]),
    "sum_over_sharded_dim": (lambda a: jnp.sum(a, axis=0), [np.arange(64.0).reshape(8, 8)], [P("x", "y")]),
    "max_over_all": (lambda a: jnp.max(a), [np.sin(np.arange(64.0)).reshape(8, 8)], [P("x", "y")]),
    "matmul_contracting_sharded": (lambda a, b: jnp.tanh(a @ b), [np.arange(64.0).reshape(8, 8) / 64,
                                                                 np.cos(np.arange(64.0)).reshape(8, 8)],
                                   [P(None, "x"), P("x", "y")]),
    "transpose_reshape": (lambda a: (a.T.reshape(4, 16) * 2).sum(1), [np.arange(64.0).reshape(8, 8)], [P("x", "y")]),
    "iota_and_broadcast": (lambda a: a + jnp.arange(8.0)[None, :] + jnp.arange(8)[:, None], [np.ones((8, 8))],
                           [P("y", "x")]),
    "softmax": (jax.nn.softmax, [np.cos(np.arange(64.0)).reshape(8, 8)], [P("x", None)]),
    # embedding lookups: each device gathers its rows of indices
    "take_rows": (lambda t, i: jnp.take(t, i, axis=0) * 2, [np.arange(64.0).reshape(16, 4),
                                                           (np.arange(32) * 7 % 16).reshape(8, 4)],
                  [P(), P("x", "y")]),
    "take_from_sharded_table": (lambda t, i: jnp.take(t, i, axis=0).sum(-1),
                                [np.arange(64.0).reshape(16, 4), (np.arange(32) * 5 % 16).reshape(8, 4)],
                                [P(None, "y"), P("x", None)]),
    # data-parallel convolution: the forward pass on batch blocks, the kernel gradient as
    # per-device partials combined by an all-reduce
    "conv_and_kernel_grad": (
        lambda x, k: jax.grad(lambda k_, x_: jnp.sum(jnp.tanh(jax.lax.conv_general_dilated(
            x_, k_, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))) ** 2))(k, x),
        [np.sin(np.arange(4 * 8 * 8 * 4.0)).reshape(4, 8, 8, 4),
         np.cos(np.arange(3 * 3 * 4 * 8.0)).reshape(3, 3, 4, 8) / 6],
        [P(("x", "y")), P()]),
    # max pooling and its gradient (reduce_window, select_and_scatter) on batch blocks
    "max_pool_and_grad": (
        lambda x: jax.grad(lambda v: jnp.sum(jax.lax.reduce_window(
            v, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") ** 2))(x),
        [np.sin(np.arange(4 * 8 * 8 * 4.0)).reshape(4, 8, 8, 4)], [P(("x", "y"))]),
    # loops over blocks: carries keep their shardings
    "fori_loop": (lambda a: jax.lax.fori_loop(0, 5, lambda i, v: jnp.tanh(v) * 2 + i, a),
                  [np.arange(64.0).reshape(8, 8) / 64], [P("x", "y")]),
    "scan_rows": (lambda a: jax.lax.scan(lambda c, r: (c + r.sum(), c * r), jnp.zeros((8,)), a)[1],
                  [np.arange(64.0).reshape(8, 8) / 64], [P(None, "x")]),
    "scan_over_layers": (lambda a, w: jax.lax.scan(lambda c, wi: (jnp.tanh(c @ wi), None), a,
                                                   jnp.stack([w, w.T, w]))[0],
                         [np.arange(64.0).reshape(8, 8) / 64, np.cos(np.arange(64.0)).reshape(8, 8)],
                         [P("x", None), P()]),
    "while_until_sum": (lambda a: jax.lax.while_loop(lambda v: v.sum() < 1000, lambda v: v * 1.5 + 1, a),
                        [np.arange(64.0).reshape(8, 8) / 64], [P("x", "y")]),
    # an op without a partitioning rule: small, so it runs whole on every device
    "sort_of_sharded": (lambda a: jnp.sort(a, axis=0) + 1, [np.sin(np.arange(64.0)).reshape(8, 8)], [P("x", "y")]),
    # a large one: left to the global view
    "large_sort": (lambda a: jnp.sort(a, axis=0), [np.sin(np.arange(1 << 15, dtype=np.float32)).reshape(256, 128)],
                   [P("x", "y")]),
    "grad": (jax.grad(lambda a, b: jnp.sum(jnp.tanh(a @ b) ** 2)), [np.arange(64.0).reshape(8, 8) / 64,
                                                                     np.cos(np.arange(64.0)).reshape(8, 8)],
             [P("x", "y"), P("y", None)]),
}


# Programs the partitioner leaves to the global view.
GLOBAL_VIEW = {"large_sort"}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_partitioned_programs_equal_xla_and_the_global_view(name, monkeypatch):
    fn, inputs, specs = PROGRAMS[name]
    results = {}
    for mode, platform in (("partitioned", "stablert"), ("global", "stablert"), ("xla", "cpu")):
        if mode == "global":
            monkeypatch.setenv("STABLERT_PARTITIONER", "0")  # read at every compilation
        else:
            monkeypatch.delenv("STABLERT_PARTITIONER", raising=False)
        devices = np.array(jax.devices(platform)[:4]).reshape(2, 2)
        mesh = Mesh(devices, ("x", "y"))
        args = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in zip(inputs, specs)]
        jitted = jax.jit(lambda *a: fn(*a))  # a fresh function: compiled anew in each mode
        results[mode] = jitted(*args)
        if mode == "partitioned":
            # Partitioned or not shows in the compiled program's parameters: blocks or wholes.
            shard = args[0].addressable_shards[0].data
            local = {"float32": "f32", "uint32": "u32", "int32": "s32"}[str(shard.dtype)] + str(list(shard.shape)).replace(" ", "")
            text = jitted.lower(*args).compile().as_text()
            header = text.splitlines()[0] if text else ""
            assert (local in header) == (name not in GLOBAL_VIEW), header
    for mode in ("partitioned", "global"):
        got, want = results[mode], results["xla"]
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
        # The global view follows result shardings through fewer ops (result_sharding.cc);
        # the partitioned program's results are sharded as XLA's.
        if mode == "partitioned":
            assert got.sharding.spec == want.sharding.spec
        for shard in got.addressable_shards:
            np.testing.assert_array_equal(np.asarray(shard.data), np.asarray(got)[shard.index])


def test_compiled_text_is_the_per_device_program():
    """`compiled.as_text()` of a partitioned program is what each device runs: local shapes,
    an all-reduce where a reduction crosses devices, none for a pure map or for partials kept
    unreduced."""
    devices = np.array(jax.devices("stablert")[:4])
    mesh = Mesh(devices.reshape(2, 2), ("x", "y"))
    x = jax.device_put(np.arange(64, dtype=np.uint32).reshape(8, 8), NamedSharding(mesh, P("x", "y")))
    with jax.threefry_partitionable(True):
        pure_map = jax.jit(threefry_bits_plus).lower(x).compile().as_text()
    assert "u32[4,4]" in pure_map and "[8,8]" not in pure_map
    assert "all-reduce" not in pure_map and "all-gather" not in pure_map and "collective-permute" not in pure_map

    summed = jax.jit(lambda a: jnp.sum(a, axis=0)).lower(x.astype(np.float32)).compile().as_text()
    assert summed.count("all-reduce(") == 1 and "f32[4,4]" in summed

    with jax.set_mesh(explicit_mesh("stablert", (2, 2), ("x", "y"))):
        arr = jax.device_put(np.arange(8.0).reshape(4, 2), P("x", None))
        kept = jax.jit(lambda v: jnp.einsum("ab->b", v, out_sharding=P(None, unreduced={"x"}))).lower(arr)
        assert "all-reduce" not in kept.compile().as_text()


def test_gradient_accumulation_keeps_partials_through_the_loop():
    """Gradients accumulated over micro-batches as unreduced partials (JAX's explicit
    sharding): the loop carries per-device partials and one all-reduce combines them after
    it, as in XLA's program; the updated weights equal the CPU backend's."""
    def model(ws, xs):
        for w in ws:
            xs = jnp.tanh(xs @ w)
        return jnp.sum(xs)

    def step(ws, xs):
        def body(acc, x):
            grad = jax.grad(model)(ws, x)
            return jax.tree.map(jnp.add, acc, grad), None

        acc = jax.sharding.reshard(jax.tree.map(jnp.zeros_like, ws), P(unreduced={"x"}))
        acc, _ = jax.lax.scan(body, acc, xs)
        acc = jax.sharding.reshard(acc, P())
        return jax.tree.map(lambda w, g: w - 0.01 * g, jax.sharding.reshard(ws, P()), acc)

    rng = np.random.default_rng(0)
    w_host = [rng.standard_normal((4, 4)).astype(np.float32) / 2 for _ in range(3)]
    x_host = rng.standard_normal((3, 4, 4)).astype(np.float32)
    results = []
    for platform in ("stablert", "cpu"):
        with jax.set_mesh(explicit_mesh(platform, (2,), ("x",))):
            ws = tuple(jax.device_put(w, P(reduced={"x"})) for w in w_host)
            xs = jax.device_put(x_host, P(None, "x", None))
            jitted = jax.jit(step)
            results.append([np.asarray(w) for w in jitted(ws, xs)])
            if platform == "stablert":
                assert jitted.lower(ws, xs).compile().as_text().count("all-reduce(") == 1
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
