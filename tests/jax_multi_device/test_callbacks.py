"""Host callbacks on several devices, compared with JAX's CPU backend with as many devices:
inside shard_map and pmap (once per device, with that device's block), on a sharded jit (once,
on the whole array), and ordered io_callbacks per device."""
import collections

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback
from jax.sharding import NamedSharding, PartitionSpec as P

from conftest import meshes

shard_map = jax.shard_map


def per_device_calls(platform, n):
    """io_callback (ordered) twice per device in a shard_map: what each device's calls saw."""
    mesh = meshes(platform, (n,), ("x",))
    seen = collections.defaultdict(list)

    def host(shard_id, x):
        seen[int(shard_id[0])].append(np.asarray(x).tolist())

    def body(shard_ids, x):
        io_callback(host, None, shard_ids, x, ordered=True)
        io_callback(host, None, shard_ids, x + 1, ordered=True)

    f = jax.jit(shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=None))
    sharding = NamedSharding(mesh, P("x"))
    f(jax.device_put(np.arange(n, dtype=np.int32), sharding),
      jax.device_put(np.arange(2 * n, dtype=np.int32), sharding))
    jax.effects_barrier()
    return dict(seen)


def test_ordered_io_callback_in_shard_map_runs_per_device_in_order(device_count):
    got = per_device_calls("stablert", device_count)
    assert got == per_device_calls("cpu", device_count)
    assert got == {k: [[2 * k, 2 * k + 1], [2 * k + 1, 2 * k + 2]] for k in range(device_count)}


def test_pure_callback_in_shard_map_computes_each_block(device_count):
    def run(platform):
        mesh = meshes(platform, (device_count,), ("x",))
        block = jax.ShapeDtypeStruct((3,), np.float32)
        f = jax.jit(shard_map(lambda x: jax.pure_callback(lambda b: b * 2 + 1, block, x),
                              mesh=mesh, in_specs=P("x"), out_specs=P("x")))
        return np.asarray(f(jax.device_put(np.arange(3 * device_count, dtype=np.float32), NamedSharding(mesh, P("x")))))

    np.testing.assert_array_equal(run("stablert"), run("cpu"))


def test_debug_print_in_shard_map_prints_each_block(device_count, capfd):
    outputs = []
    for platform in ("stablert", "cpu"):
        mesh = meshes(platform, (device_count,), ("x",))

        def body(x):
            jax.debug.print("block {}", x)
            return x

        f = jax.jit(shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
        f(jax.device_put(np.arange(2 * device_count), NamedSharding(mesh, P("x"))))
        jax.effects_barrier()
        outputs.append(sorted(capfd.readouterr().out.splitlines()))
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == device_count


def test_callbacks_on_a_sharded_jit_see_the_whole_array(device_count, capfd):
    outputs = []
    for platform in ("stablert", "cpu"):
        mesh = meshes(platform, (device_count,), ("x",))
        x = jax.device_put(np.arange(4 * device_count, dtype=np.float32).reshape(device_count, 4),
                           NamedSharding(mesh, P("x")))

        def f(v):
            jax.debug.print("sum {}", v.sum())
            y = jax.pure_callback(lambda a: np.cumsum(a, axis=0), jax.ShapeDtypeStruct(v.shape, v.dtype), v)
            return y * 2

        out = np.asarray(jax.jit(f)(x))
        jax.effects_barrier()
        outputs.append((out, capfd.readouterr().out))
    np.testing.assert_array_equal(outputs[0][0], outputs[1][0])
    assert outputs[0][1] == outputs[1][1] and outputs[0][1].count("sum") == 1


def test_pure_callback_in_pmap(device_count):
    def run(platform):
        f = jax.pmap(lambda v: jax.pure_callback(lambda a: a * a, jax.ShapeDtypeStruct((2,), np.int32), v) + 1,
                     devices=jax.devices(platform)[:device_count])
        return np.asarray(f(np.arange(2 * device_count, dtype=np.int32).reshape(device_count, 2)))

    np.testing.assert_array_equal(run("stablert"), run("cpu"))


def test_partitioned_callback_of_a_replicated_value_runs_on_every_device(device_count, capfd):
    outputs = []
    for platform in ("stablert", "cpu"):
        mesh = meshes(platform, (device_count,), ("x",))
        x = jax.device_put(np.arange(2 * device_count), NamedSharding(mesh, P("x")))
        jax.jit(lambda v: jax.debug.print("sum {}", v.sum(), partitioned=True))(x)
        jax.effects_barrier()
        outputs.append(capfd.readouterr().out)
    assert outputs[0] == outputs[1]
    assert outputs[0].count("sum") == device_count


def test_partitioned_callback_of_a_sharded_value_sees_each_device_block(device_count, capfd):
    results = []
    for platform in ("stablert", "cpu"):
        mesh = meshes(platform, (2, device_count // 2), ("x", "y"))
        x = jax.device_put(np.arange(4 * device_count).reshape(4, device_count), NamedSharding(mesh, P("y", "x")))
        seen = []

        def f(v):
            jax.debug.callback(lambda a, b: seen.append((a.tolist(), b.tolist())), v, v.T * 2, partitioned=True)
            jax.debug.print("block {}", v + 1, partitioned=True)

        jax.jit(f)(x)
        jax.effects_barrier()
        results.append((sorted(map(repr, seen)), sorted(capfd.readouterr().out.split("block"))))
    assert results[0] == results[1]
    assert len(results[0][0]) == device_count and len(results[0][1]) == device_count + 1


def test_inspect_array_sharding_in_jit_reports_the_sharding_cpu_reports(device_count):
    from jax._src import debugging

    def shardings(platform):
        seen = []
        mesh = meshes(platform, (2, device_count // 2), ("a", "b"))
        f = jax.jit(lambda v: (debugging.inspect_array_sharding(v, callback=lambda s: seen.append(s.spec)),
                               debugging.inspect_array_sharding(v * 2 + 1, callback=lambda s: seen.append(s.spec)),
                               v.sum())[2])
        for spec in (P("a"), P("b", "a"), P(None, ("a", "b")), P()):
            x = jax.device_put(np.arange(4.0 * device_count).reshape(4, device_count), NamedSharding(mesh, spec))
            f(x)
            f(x)  # XLA reports once, while compiling; StableRT on the first run
            jax.effects_barrier()
        return seen

    got = shardings("stablert")
    assert got == shardings("cpu")
    assert len(got) == 8


def shard_map_callback_programs(n):
    """Programs whose shard_map bodies call back to the host, each with what its callbacks saw
    (a list the callbacks append to) and its result."""
    def unordered_print(mesh, seen):
        def body(x):
            jax.debug.callback(lambda v: seen.append(("first", np.asarray(v).tolist())), x[0])
            return x * 2

        f = shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
        return f, [np.arange(2 * n, dtype=np.int32)]

    def pure_callback_then_psum(mesh, seen):
        def host(b):
            seen.append(("block", np.asarray(b).tolist()))
            return np.sin(b).astype(np.float32)

        def body(x):
            y = jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
            return jax.lax.psum(y * 3, "x")

        f = shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False)
        return f, [np.arange(4 * n, dtype=np.float32).reshape(2 * n, 2) / 7]

    def ordered_io_callback(mesh, seen):
        def body(x):
            io_callback(lambda v: seen.append(("a", np.asarray(v).tolist())), None, x, ordered=True)
            io_callback(lambda v: seen.append(("b", np.asarray(v).tolist())), None, x + 1, ordered=True)
            return x - 1

        f = shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
        return f, [np.arange(3 * n, dtype=np.int32)]

    return {"unordered_print": unordered_print, "pure_callback_then_psum": pure_callback_then_psum,
            "ordered_io_callback": ordered_io_callback}


@pytest.mark.parametrize("name", ["unordered_print", "pure_callback_then_psum", "ordered_io_callback"])
def test_callbacks_in_shard_map_run_per_device_in_the_partitioned_program(device_count, name, monkeypatch):
    """Host callbacks inside a shard_map no longer keep the program in the global view: each
    device's partition calls back with its own block (as XLA does, and as the global view did);
    the calls and results equal JAX's CPU backend's and the global view's."""
    runs = {}
    for mode, platform in (("partitioned", "stablert"), ("global", "stablert"), ("xla", "cpu")):
        if mode == "global":
            monkeypatch.setenv("STABLERT_PARTITIONER", "0")  # read at every compilation
        else:
            monkeypatch.delenv("STABLERT_PARTITIONER", raising=False)
        mesh = meshes(platform, (device_count,), ("x",))
        seen = []
        f, inputs = shard_map_callback_programs(device_count)[name](mesh, seen)
        jitted = jax.jit(f)
        args = [jax.device_put(a, NamedSharding(mesh, P("x"))) for a in inputs]
        out = np.asarray(jitted(*args))
        jax.effects_barrier()
        if mode == "partitioned":
            # Partitioned: the compiled program's parameters are the blocks.
            block = args[0].addressable_shards[0].data
            local = {"float32": "f32", "int32": "s32"}[str(block.dtype)] + str(list(block.shape)).replace(" ", "")
            text = jitted.lower(*args).compile().as_text() or ""  # no text: the global view
            header = text.splitlines()[0] if text else ""
            assert local in header, header
        runs[mode] = (out, seen)
    calls = len(runs["xla"][1])
    assert calls in (device_count, 2 * device_count), runs["xla"][1]
    for mode in ("partitioned", "global"):
        out, seen = runs[mode]
        np.testing.assert_allclose(out, runs["xla"][0], rtol=1e-6)
        assert sorted(map(repr, seen)) == sorted(map(repr, runs["xla"][1])), (mode, seen)
        if name == "ordered_io_callback":
            # Per device, "a" before "b": the block's "b" call sees the block plus one.
            for i, (tag, values) in enumerate(seen):
                if tag == "b":
                    assert ("a", [v - 1 for v in values]) in seen[:i], seen
