"""Multi-device programs over 8 CPU devices: sharded jit (inputs, outputs, constraints,
meshes of several shapes), shard_map with every collective, explicit sharding, pmap."""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as Ps

from corpus_lib import P, S, i32


def _mesh(shape, names, axis_types=None):
    devices = np.array(jax.devices()[:int(np.prod(shape))]).reshape(shape)
    if axis_types:
        return Mesh(devices, names, axis_types=axis_types)
    return Mesh(devices, names)


def _sharded(mesh, shape, spec, dtype=jnp.float32):
    return S(shape, dtype, sharding=NamedSharding(mesh, spec))


def _smap(mesh, in_specs, out_specs, **kw):
    return lambda f: jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


def _jit_programs(m8, m24, m222):
    ns = lambda mesh, spec: NamedSharding(mesh, spec)  # noqa: E731
    return [
        P("jit_1d_mesh", lambda x, y: jnp.sin(x) + y, _sharded(m8, (16, 4), Ps("x")),
          _sharded(m8, (16, 4), Ps("x")), out_shardings=ns(m8, Ps("x"))),
        P("jit_2d_mesh_matmul", lambda a, b: a @ b, _sharded(m24, (8, 16), Ps("a", "b")),
          _sharded(m24, (16, 4), Ps("b", None)), out_shardings=ns(m24, Ps("a"))),
        P("jit_3d_mesh", lambda x: x * 2, _sharded(m222, (4, 4, 4), Ps("i", "j", "k"))),
        P("jit_replicated_out", lambda x: x.sum(axis=0), _sharded(m8, (8, 3), Ps("x")),
          out_shardings=ns(m8, Ps())),
        P("jit_multi_axis_dim", lambda x: jnp.exp(x), _sharded(m24, (8, 2), Ps(("a", "b")))),
        P("jit_partially_replicated", lambda x: x + 1, _sharded(m24, (4, 4), Ps(None, "b"))),
        P("jit_sharding_constraint", lambda x: lax.with_sharding_constraint(
            jnp.cos(x), ns(m24, Ps("b", "a"))) * 3, _sharded(m24, (8, 8), Ps("a"))),
        P("jit_uneven_reshard", lambda x: lax.with_sharding_constraint(
            x.reshape(12, 2), ns(m8, Ps(None, None))), _sharded(m8, (8, 3), Ps("x"))),
        P("jit_donated_sharded", lambda x, y: (x + y, x * y), _sharded(m8, (8,), Ps("x")),
          _sharded(m8, (8,), Ps("x")), donate_argnums=(0,)),
        P("jit_sharded_scan", lambda xs: lax.scan(lambda c, x: (c + x, c), jnp.zeros(4), xs),
          _sharded(m24, (6, 4), Ps(None, "b"))),
        P("jit_sharded_rng", lambda k: jax.random.normal(k, (16, 8), out_sharding=None),
          S((), jax.random.key(0).dtype)),
        P("jit_mesh_unused_axes", lambda x: x.T, _sharded(m222, (4, 6), Ps("j"))),
    ]


def _shard_map_programs(m8, m24):
    x8 = _sharded(m8, (16, 4), Ps("x"))
    return [
        P("shard_map_psum", _smap(m8, Ps("x"), Ps())(lambda b: lax.psum(b, "x")), x8),
        P("shard_map_pmean_pmax_pmin", _smap(m8, Ps("x"), Ps())(
            lambda b: (lax.pmean(b, "x"), lax.pmax(b, "x"), lax.pmin(b, "x"))), x8),
        P("shard_map_all_gather", _smap(m8, Ps("x"), Ps(), check_vma=False)(
            lambda b: lax.all_gather(b, "x", tiled=True)), x8),
        P("shard_map_all_gather_untiled", _smap(m8, Ps("x"), Ps(None, "x"))(
            lambda b: lax.all_gather(b, "x", axis=0)), x8),
        P("shard_map_psum_scatter", _smap(m8, Ps(), Ps("x"))(
            lambda b: lax.psum_scatter(b, "x", tiled=True)), S((16, 4))),
        P("shard_map_ppermute_ring", _smap(m8, Ps("x"), Ps("x"))(
            lambda b: lax.ppermute(b, "x", [(i, (i + 1) % 8) for i in range(8)])), x8),
        P("shard_map_all_to_all", _smap(m8, Ps("x"), Ps(None, "x"))(
            lambda b: lax.all_to_all(b, "x", 0, 1, tiled=True)), _sharded(m8, (64, 8), Ps("x"))),
        P("shard_map_axis_index", _smap(m8, Ps("x"), Ps("x"))(
            lambda b: b * lax.axis_index("x")), x8),
        P("shard_map_2d_mesh_psum_one_axis", _smap(m24, Ps("a", "b"), Ps(None, "b"))(
            lambda b: lax.psum(b, "a")), _sharded(m24, (8, 8), Ps("a", "b"))),
        P("shard_map_psum_both_axes", _smap(m24, Ps("a", "b"), Ps())(
            lambda b: lax.psum(b.sum(), ("a", "b"))), _sharded(m24, (8, 8), Ps("a", "b"))),
        P("shard_map_partial_auto", _smap(m24, Ps("a"), Ps("a"), axis_names={"a"})(
            lambda b: lax.psum(b, "a") + 1), _sharded(m24, (4, 8), Ps("a"))),
        P("shard_map_in_scan", lambda xs: lax.scan(lambda c, x: (c + _smap(m8, Ps("x"), Ps())(
            lambda b: lax.psum(b, "x"))(x), None), jnp.zeros((2, 2)), xs)[0],
          S((3, 16, 2))),
        P("shard_map_grad", jax.grad(lambda w, x: _smap(m8, (Ps(), Ps("x")), Ps())(
            lambda w, b: lax.psum(jnp.sum((b @ w) ** 2), "x"))(w, x)), S((4, 2)), x8),
        P("shard_map_nested_jit", _smap(m8, Ps("x"), Ps("x"))(jax.jit(lambda b: jnp.tanh(b) * 2)),
          x8),
        P("shard_map_cond_inside", _smap(m8, Ps("x"), Ps("x"))(
            lambda b: lax.cond(lax.axis_index("x") == 0, lambda v: v * 2, lambda v: v, b)), x8),
        P("shard_map_int_reduction", _smap(m8, Ps("x"), Ps())(lambda b: lax.psum(b, "x")),
          _sharded(m8, (8, 2), Ps("x"), i32)),
        P("shard_map_unchecked_vma", _smap(m8, Ps("x"), Ps("x"), check_vma=False)(
            lambda b: b + 1), x8),
        P("shard_map_pbroadcast", _smap(m8, Ps("x"), Ps("x"))(
            lambda b: b + lax.psum(jnp.ones(()), "x")), x8),
    ]


def _ragged_all_to_all(x, output, in_offsets, send_sizes, out_offsets):
    return lax.ragged_all_to_all(x, output, in_offsets, send_sizes, out_offsets,
                                 jnp.zeros_like(send_sizes), axis_name="x")


def _layout_program(m8):
    from jax.experimental.layout import Format, Layout
    sharding = NamedSharding(m8, Ps("x"))
    return P("jit_layout_mode", lambda v: v.T, S((8, 4)),
             in_shardings=Format(Layout((0, 1)), sharding))


def _more_programs(m8):
    return [
        P("constraint_unconstrained_dim", lambda v: lax.with_sharding_constraint(
            v * 2, NamedSharding(m8, Ps(Ps.UNCONSTRAINED, None))), S((8, 8))),
        P("shard_map_ragged_all_to_all", _smap(m8, (Ps("x"),) * 5, Ps("x"))(_ragged_all_to_all),
          *[S((64,), t) for t in (jnp.float32, jnp.float32, i32, i32, i32)]),
        P("device_put_to_one_device", lambda v: jax.device_put(v * 2, jax.devices()[3]), S((4,))),
        _layout_program(m8),
    ]


def _explicit_programs():
    m = _mesh((2, 4), ("a", "b"), axis_types=(AxisType.Explicit, AxisType.Explicit))
    x = _sharded(m, (8, 8), Ps("a", "b"))
    m8 = _mesh((8,), ("x",), axis_types=(AxisType.Explicit,))
    return [
        P("explicit_unreduced_result", lambda a, b: jnp.dot(
            a, b, out_sharding=NamedSharding(m8, Ps(None, unreduced={"x"}))),
          _sharded(m8, (4, 8), Ps(None, "x")), _sharded(m8, (8, 4), Ps("x", None))),
        P("explicit_elementwise", lambda v: jnp.sin(v) * 2, x),
        P("explicit_reshard", lambda v: jax.sharding.reshard(v, NamedSharding(m, Ps("b", "a"))),
          x),
        P("explicit_matmul_out_sharding", lambda a, b: jnp.matmul(
            a, b, out_sharding=NamedSharding(m, Ps("a"))),
          _sharded(m, (8, 8), Ps("a", None)), _sharded(m, (8, 4), Ps(None, None))),
    ]


def _pmap_programs():
    return [
        P("pmap_psum", jax.pmap(lambda x: lax.psum(x, "i"), axis_name="i"), S((8, 3))),
        P("pmap_axis_index", jax.pmap(lambda x: x * lax.axis_index("i"), axis_name="i"),
          S((4, 2))),
    ]


def programs():
    m8 = _mesh((8,), ("x",))
    m24 = _mesh((2, 4), ("a", "b"))
    m222 = _mesh((2, 2, 2), ("i", "j", "k"))
    return _jit_programs(m8, m24, m222) + _shard_map_programs(m8, m24) + \
        _explicit_programs() + _pmap_programs() + _more_programs(m8)
