"""Indexing: gather (NumPy indexing forms, every out-of-bounds mode, batching dims), scatter
(set/add/mul/min/max, out-of-bounds updates dropped or clipped, duplicate indices, batching dims),
dynamic_slice and dynamic_update_slice (out-of-bounds starts are clamped). Index dtypes vary."""
from __future__ import annotations

import functools
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from . import not_yet
from .compare import Call, check_cases

DATA_DTYPES = I.ALL
ARITH_DTYPES = I.INT + I.FLOAT  # scatter add/mul/min/max


def _arr(dtype, shape, seed=0):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return I.random(dtype, shape, seed)
    n = int(np.prod(shape))
    # distinct small values, so that a misplaced element shows and sums stay exact
    vals = (np.arange(n) % 61 - 30) if I.is_int(dtype) and I.iinfo(dtype).min < 0 else (np.arange(n) % 61)
    vals = I.rng(seed).permutation(vals) if n else vals
    out = vals.astype(dtype).reshape(shape)
    if dtype.kind == "c":
        out = out + 1j * out[::-1].reshape(shape)
    return out.astype(dtype)


IDX = np.array([0, 3, -1, 2, 9, -7, 3], np.int32)  # negative and out-of-bounds for a size-5 axis


def gather_cases(dt):
    x = _arr(dt, (5, 4, 3))
    return {
        "int_array": Call(lambda x, i: x[i], x, np.array([4, 0, 2, 2], np.int32)),
        "negative": Call(lambda x, i: x[i], x, np.array([-1, -5, -2], np.int32)),
        "int64_index": Call(lambda x, i: x[:, i], x, np.array([[3, 1], [0, 2]], np.int64)),
        "uint8_index": Call(lambda x, i: x[i, 1:], x, np.array([1, 4, 0], np.uint8)),
        "two_arrays": Call(lambda x, i, j: x[i, :, j], x, np.array([0, 4, 1], np.int32), np.array([2, 0, 1], np.int32)),
        "scalar_index": Call(lambda x, i: x[i], x, np.array(3, np.int32)),
        "newaxis_mixed": Call(lambda x, i: x[None, i, ::2], x, np.array([[1], [3]], np.int32)),
        "take_along_axis": Call(lambda x, i: jnp.take_along_axis(x, i, axis=1), x,
                                np.array(I.rng(2).integers(0, 4, (5, 6, 3)), np.int32)),
        "empty_index": Call(lambda x, i: x[i], x, np.zeros((0,), np.int32)),
        "empty_operand_dim": Call(lambda x, i: x[:, i], np.zeros((0, 4), dt), np.array([1, 2], np.int32)),
        # out-of-bounds indices, every mode JAX offers
        "oob_clip": Call(lambda x, i: jnp.take(x, i, axis=0, mode="clip"), x, IDX),
        "oob_fill": Call(lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=x.dtype.type(7)
                                               if dt != np.bool_ else True), x, IDX),
        "oob_fill_default": Call(lambda x, i: x.at[i].get(mode="fill"), x, IDX),
        "oob_wrap": Call(lambda x, i: jnp.take(x, i, axis=0, mode="wrap"), x, IDX),
        "oob_promise_in_bounds": Call(lambda x, i: x.at[i].get(mode="promise_in_bounds"), x,
                                      np.array([0, 4, 2], np.int32)),
        "lax_gather_window": Call(
            lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0, 2),
                                                                     start_index_map=(0, 1)),
                                    slice_sizes=(1, 3, 1), mode=lax.GatherScatterMode.CLIP),
            _arr(dt, (5, 6, 2)), np.array([[0, 0], [4, 5], [2, 4], [-3, 1]], np.int32)),
    }


def gather_batched_cases(dt):
    xs = _arr(dt, (3, 5, 4))
    return {
        # vmap over both operand and indices: gather with operand_batching_dims
        "vmap_both": Call(jax.vmap(lambda x, i: x[i]), xs, np.array([[0, 4], [2, 2], [1, 3]], np.int32)),
        "vmap_both_axis1": Call(jax.vmap(lambda x, i: x[:, i], in_axes=(1, 0)), xs,
                                np.array([[0, 3], [2, 2], [1, 0], [3, 3], [0, 1]], np.int32)),
        "vmap_oob_fill": Call(jax.vmap(lambda x, i: x.at[i].get(mode="fill")), xs,
                              np.array([[0, 9], [-9, 2], [4, 5]], np.int32)),
        "explicit_batching_dims": Call(
            lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(
                offset_dims=(1,), collapsed_slice_dims=(1,), start_index_map=(1,),
                operand_batching_dims=(0,), start_indices_batching_dims=(0,)), slice_sizes=(1, 1, 4),
                mode=lax.GatherScatterMode.CLIP),
            xs, np.array([[1], [4], [7]], np.int32)),
    }


@pytest.mark.parametrize("op,dtype", [not_yet.param(op, dt) for op in ("gather", "gather_batched")
                                      for dt in DATA_DTYPES])
def test_gather(op, dtype):
    make = gather_cases if op == "gather" else gather_batched_cases
    check_cases(None, make(np.dtype(dtype)), op=op, dtype=dtype, mode="exact")


SCATTER_KINDS = ("set", "add", "mul", "min", "max")


def scatter_cases(dt, kind):
    x = _arr(dt, (5, 3))
    upd = lambda shape, seed: (I.small_ints(dt, shape, seed) if kind != "mul"
                               else np.ones(shape, dt) + (I.small_ints(dt, shape, seed) % 2).astype(dt))

    def at(x, i, u, mode=None, **kw):
        return getattr(x.at[i], kind)(u, mode=mode, **kw)

    dup = np.array([1, 1, 3, 1, 0], np.int32)
    uniq = np.array([4, 0, 2], np.int32)
    oob = np.array([0, 5, -1, 7, -6, 2], np.int32)
    cases = {
        "unique": Call(lambda x, i, u: at(x, i, u), x, uniq, upd((3, 3), 1)),
        "unique_sorted_hint": Call(lambda x, i, u: at(x, i, u, unique_indices=True, indices_are_sorted=True), x,
                                   np.array([0, 2, 4], np.int32), upd((3, 3), 2)),
        "negative": Call(lambda x, i, u: at(x, i, u), x, np.array([-1, -5], np.int32), upd((2, 3), 3)),
        "scalar_update_broadcast": Call(lambda x, i, u: at(x, i, u), x, uniq, upd((), 4)),
        "element_2d_index": Call(lambda x, i, j, u: at(x, (i, j), u), x, np.array([0, 4, 2], np.int64),
                                 np.array([2, 0, 1], np.int64), upd((3,), 5)),
        "empty_index": Call(lambda x, i, u: at(x, i, u), x, np.zeros((0,), np.int32), upd((0, 3), 6)),
        # out-of-bounds updates: dropped (JAX's default for scatter) or clipped
        "oob_drop": Call(lambda x, i, u: at(x, i, u, mode="drop"), x, oob, upd((6, 3), 7)),
        "oob_default": Call(lambda x, i, u: at(x, i, u), x, oob, upd((6, 3), 8)),
        "oob_clip": Call(lambda x, i, u: at(x, i, u, mode="clip"), x, np.array([9, -9], np.int32), upd((2, 3), 9)),
    }
    if kind != "set":
        # duplicate indices combine (order does not matter for these exact values); for set the
        # winner of a duplicate is implementation-defined, so set is checked on unique indices only
        cases["duplicates"] = Call(lambda x, i, u: at(x, i, u), x, dup, upd((5, 3), 10))
        cases["duplicates_oob_drop"] = Call(lambda x, i, u: at(x, i, u, mode="drop"), x,
                                            np.array([1, 9, 1, -9], np.int32), upd((4, 3), 11))
    return cases


def _scatter_params():
    out = []
    for kind in SCATTER_KINDS:
        dts = DATA_DTYPES if kind == "set" else ARITH_DTYPES
        out += [not_yet.param(f"scatter_{kind}", dt) for dt in dts]
    return out


@pytest.mark.parametrize("op,dtype", _scatter_params())
def test_scatter(op, dtype):
    kind = op.split("_", 1)[1]
    check_cases(None, scatter_cases(np.dtype(dtype), kind), op=op, dtype=dtype, mode="exact")


def scatter_batched_cases(dt):
    xs = _arr(dt, (3, 5, 2))
    u = I.small_ints(dt, (3, 2, 2), 1)
    idx = np.array([[0, 4], [2, 9], [1, 3]], np.int32)
    return {
        "vmap_set": Call(jax.vmap(lambda x, i, u: x.at[i].set(u)), xs, idx, u),
        "vmap_add": Call(jax.vmap(lambda x, i, u: x.at[i].add(u)), xs, np.array([[0, 0], [2, 9], [3, 3]], np.int32), u),
        "explicit_batching_dims": Call(
            lambda x, i, u: lax.scatter_add(x, i, u, lax.ScatterDimensionNumbers(
                update_window_dims=(1,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
                operand_batching_dims=(0,), scatter_indices_batching_dims=(0,)),
                mode=lax.GatherScatterMode.FILL_OR_DROP),
            xs, np.array([[1], [4], [7]], np.int32), I.small_ints(dt, (3, 2), 2)),
    }


@pytest.mark.parametrize("op,dtype", [not_yet.param("scatter_batched", dt)
                                      for dt in (np.int32, np.float32, np.float64, np.int8)])
def test_scatter_batched(op, dtype):
    check_cases(None, scatter_batched_cases(np.dtype(dtype)), op=op, dtype=dtype, mode="exact")


def dynamic_slice_cases(dt):
    x = _arr(dt, (6, 5))
    ds = lambda x, i, j: lax.dynamic_slice(x, (i, j), (3, 2))
    return {
        "in_bounds": Call(ds, x, np.int32(1), np.int32(2)),
        "oob_high_clamped": Call(ds, x, np.int32(5), np.int32(100)),
        "oob_negative_clamped": Call(ds, x, np.int32(-2), np.int32(-100)),
        "int64_starts": Call(ds, x, np.int64(4), np.int64(3)),
        "uint32_starts": Call(ds, x, np.uint32(7), np.uint32(1)),
        "int8_starts": Call(ds, x, np.int8(-1), np.int8(127)),
        "full_size": Call(lambda x, i: lax.dynamic_slice(x, (i, i), (6, 5)), x, np.int32(3)),
        "zero_size": Call(lambda x, i: lax.dynamic_slice(x, (i, i), (0, 2)), x, np.int32(2)),
        "numpy_dynamic_index": Call(lambda x, i: x[i], x, np.int32(-2)),
        "in_loop": Call(lambda x: lax.fori_loop(0, 4, lambda k, acc: acc + lax.dynamic_slice(x, (k, 0), (3, 5)),
                                                jnp.zeros((3, 5), x.dtype)) if dt != np.bool_ else x, x),
    }


def dynamic_update_slice_cases(dt):
    x = _arr(dt, (6, 5))
    u = I.small_ints(dt, (3, 2), 4) if dt != np.bool_ else I.random(dt, (3, 2), 4)
    dus = lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j))
    return {
        "in_bounds": Call(dus, x, u, np.int32(1), np.int32(2)),
        "oob_high_clamped": Call(dus, x, u, np.int32(5), np.int32(100)),
        "oob_negative_clamped": Call(dus, x, u, np.int32(-2), np.int32(-100)),
        "int64_starts": Call(dus, x, u, np.int64(4), np.int64(3)),
        "uint8_starts": Call(dus, x, u, np.uint8(200), np.uint8(0)),
        "whole": Call(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, i)), x, _arr(dt, (6, 5), 9), np.int32(1)),
        "zero_size_update": Call(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, i)), x, np.zeros((0, 2), dt),
                                 np.int32(3)),
    }


@pytest.mark.parametrize("op,dtype", [not_yet.param(op, dt) for op in ("dynamic_slice", "dynamic_update_slice")
                                      for dt in DATA_DTYPES])
def test_dynamic_slicing(op, dtype):
    make = dynamic_slice_cases if op == "dynamic_slice" else dynamic_update_slice_cases
    check_cases(None, make(np.dtype(dtype)), op=op, dtype=dtype, mode="exact")


# Realistic sizes: the row fast paths (one contiguous row per index) against XLA, bitwise.
# Float sums are compared bitwise too: both backends apply duplicates in index order.
def _large_gather_cases():
    g = I.rng(7)
    f32 = np.float32
    ids_oob = g.integers(-60_000, 60_000, 1 << 16).astype(np.int32)  # negative and out of bounds
    return {
        "take_1M_of_1M": Call(lambda x, i: jnp.take(x, i, axis=0), g.standard_normal(1 << 20).astype(f32),
                              g.integers(-(1 << 20), 1 << 20, 1 << 20).astype(np.int32)),
        "embedding_50Kx128_64K": Call(lambda t, i: t[i], g.standard_normal((50_000, 128)).astype(f32),
                                      g.integers(0, 50_000, 1 << 16).astype(np.int32)),
        "embedding_clip_oob": Call(lambda t, i: jnp.take(t, i, axis=0, mode="clip"),
                                   g.standard_normal((50_000, 16)).astype(f32), ids_oob),
        "embedding_fill_oob": Call(lambda t, i: t.at[i].get(mode="fill", fill_value=-1),
                                   g.standard_normal((50_000, 16)).astype(f32), ids_oob),
        "take_axis1": Call(lambda x, i: jnp.take(x, i, axis=1), g.standard_normal((64, 4096)).astype(f32),
                           g.integers(-4096, 4096, 1000).astype(np.int32)),
        "two_index_rows": Call(lambda x, i, j: x[i, j], g.standard_normal((300, 200, 8)).astype(f32),
                               g.integers(0, 300, 5000).astype(np.int32), g.integers(-200, 200, 5000).astype(np.int32)),
        "int8_rows": Call(lambda x, i: x[i], g.integers(-128, 127, (4096, 33)).astype(np.int8),
                          g.integers(0, 4096, 70_000).astype(np.int32)),
        "bool_rows": Call(lambda x, i: x[i], g.random((4096, 5)) < 0.5, g.integers(0, 4096, 70_000).astype(np.int32)),
        "bf16_rows": Call(lambda x, i: x[i], g.standard_normal((4096, 7)).astype(jnp.bfloat16),
                          g.integers(0, 4096, 70_000).astype(np.int32)),
        "int64_index": Call(lambda x, i: x[i], g.standard_normal((1000, 3)).astype(np.float64),
                            g.integers(0, 1000, 100_000).astype(np.int64)),
    }


def _large_scatter_cases():
    g = I.rng(8)
    f32 = np.float32
    seg = g.integers(0, 1024, 1 << 18).astype(np.int32)
    dup = g.integers(-70_000, 70_000, 1 << 20).astype(np.int32)  # many duplicates, negative, out of bounds
    return {
        "segment_sum_256K_into_1K": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=1024),
                                         g.standard_normal((1 << 18, 4)).astype(f32), seg),
        "segment_sum_scalars": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=1024),
                                    g.standard_normal(1 << 18).astype(f32), seg),
        # segment sums of gathered rows: the gather folds into the scatter (scatter_add_gathered)
        "segment_sum_of_rows_taken": Call(lambda t, i, s: jax.ops.segment_sum(t[i], s, num_segments=1024),
                                          g.standard_normal((5000, 128)).astype(f32),
                                          g.integers(-5000, 5000, 1 << 16).astype(np.int32),
                                          np.sort(g.integers(-8, 1040, 1 << 16)).astype(np.int32)),
        "segment_sum_of_rows_taken_int64_f64": Call(
            lambda t, i, s: jax.ops.segment_sum(t[i], s, num_segments=100),
            g.standard_normal((300, 9)).astype(np.float64), g.integers(-400, 400, 5000).astype(np.int64),
            g.integers(-3, 103, 5000).astype(np.int64)),
        "segment_sum_of_rows_taken_small": Call(lambda t, i, s: jax.ops.segment_sum(t[i], s, num_segments=7),
                                                g.standard_normal((11, 3)).astype(f32),
                                                g.integers(0, 11, 40).astype(np.int32),
                                                g.integers(0, 9, 40).astype(np.int32)),
        "segment_max": Call(lambda d, s: jax.ops.segment_max(d, s, num_segments=1024),
                            g.standard_normal((1 << 18, 3)).astype(f32), seg),
        "segment_sum_int": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=1000),
                                g.integers(-1000, 1000, (1 << 18, 2)).astype(np.int32), seg),
        "add_1M_into_64K_dups_oob": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal(1 << 16).astype(f32), dup,
                                         g.standard_normal(1 << 20).astype(f32)),
        "add_wide_rows": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal((500, 512)).astype(f32),
                              g.integers(-600, 600, 3000).astype(np.int32), g.standard_normal((3000, 512)).astype(f32)),
        "set_unique_rows": Call(lambda x, i, u: x.at[i].set(u), g.standard_normal((50_000, 16)).astype(f32),
                                g.permutation(50_000)[: 1 << 14].astype(np.int32),
                                g.standard_normal((1 << 14, 16)).astype(f32)),
        "min_int_rows": Call(lambda x, i, u: x.at[i].min(u), g.integers(-50, 50, (2048, 9)).astype(np.int16),
                             g.integers(0, 2048, 100_000).astype(np.int32),
                             g.integers(-100, 100, (100_000, 9)).astype(np.int16)),
        "mul_bf16_rows": Call(lambda x, i, u: x.at[i].mul(u), np.ones((512, 6), jnp.bfloat16),
                              g.integers(0, 512, 4000).astype(np.int32),
                              (1 + (g.integers(0, 2, (4000, 6)) / 64)).astype(jnp.bfloat16)),
        "add_axis1": Call(lambda x, i, u: x.at[:, i].add(u), g.standard_normal((64, 1000)).astype(f32),
                          g.integers(-1000, 1000, 5000).astype(np.int32), g.standard_normal((64, 5000)).astype(f32)),
    }


@pytest.mark.parametrize("op", ["gather_large", "scatter_large"])
def test_large_row_forms(op):
    cases = _large_gather_cases() if op == "gather_large" else _large_scatter_cases()
    check_cases(None, cases, op=op, mode="exact")


# The index arithmetic JAX emits around gathers and scatters (negative-index normalization,
# converts of the indices, the [N] -> [N,1] view, fill mode's mask and select) is folded into
# the gather/scatter step (docs/decisions.md, "Index arithmetic folded into gathers and
# scatters"). Every folded form against XLA, bitwise: negative and out-of-bounds indices in
# each mode, every index dtype (x64 is on: int64 indices are converted to int32 by JAX), empty
# index arrays, and 1M-element sizes.
def _folded_index_cases():
    g = I.rng(9)
    f32 = np.float32
    n = 1 << 20
    x = g.standard_normal(n).astype(f32)
    oob = g.integers(-3 * n // 2, 3 * n // 2, n)  # negative and out of bounds both ways
    table = g.standard_normal((1 << 16, 16)).astype(f32)
    rows_oob = g.integers(-80_000, 80_000, 1 << 18)
    small = g.standard_normal(100).astype(f32)
    small_idx = np.array([0, 99, -1, -100, 100, -101, 7, 2**31 - 1, -2**31], np.int64)
    cases = {
        "take_fill_1M_int32": Call(lambda x, i: jnp.take(x, i, axis=0), x, oob.astype(np.int32)),
        "take_fill_1M_int64": Call(lambda x, i: jnp.take(x, i, axis=0), x, oob.astype(np.int64)),
        "take_fill_value_rows": Call(lambda t, i: jnp.take(t, i, axis=0, mode="fill", fill_value=-3.5), table,
                                     rows_oob.astype(np.int32)),
        "take_clip_1M": Call(lambda x, i: jnp.take(x, i, axis=0, mode="clip"), x, oob.astype(np.int32)),
        "index_1M_int32": Call(lambda x, i: x[i], x, oob.astype(np.int32)),
        "index_1M_int64": Call(lambda x, i: x[i], x, oob.astype(np.int64)),
        "index_1M_uint32": Call(lambda x, i: x[i], x, g.integers(0, n, n).astype(np.uint32)),
        "promise_in_bounds_1M": Call(lambda x, i: x.at[i].get(mode="promise_in_bounds"), x,
                                     g.integers(-n, n, n).astype(np.int32)),
        "rows_int64": Call(lambda t, i: jnp.take(t, i, axis=0), table, rows_oob.astype(np.int64)),
        "fill_nan_uint8": Call(lambda x, i: x.at[i].get(mode="fill", fill_value=np.nan), small,
                               np.arange(0, 256, 3).astype(np.uint8)),
        "take_int8": Call(lambda x, i: jnp.take(x, i), small, np.arange(-128, 128, 5).astype(np.int8)),
        "take_int16": Call(lambda x, i: jnp.take(x, i), small, np.arange(-300, 300, 7).astype(np.int16)),
        "take_uint16": Call(lambda x, i: jnp.take(x, i), small, np.arange(0, 65536, 613).astype(np.uint16)),
        "take_uint32_huge": Call(lambda x, i: jnp.take(x, i), small,
                                 np.array([0, 5, 99, 100, 2**31 - 1, 2**31, 2**32 - 1], np.uint32)),
        "take_uint64_huge": Call(lambda x, i: jnp.take(x, i), small,
                                 np.array([0, 5, 99, 100, 2**31, 2**32 + 3, 2**63, 2**64 - 1], np.uint64)),
        "index_int64_extremes": Call(lambda x, i: x[i], small, small_idx),
        "take_int64_extremes": Call(lambda x, i: jnp.take(x, i), small,
                                    np.array([0, -1, 2**32 + 5, -(2**32) - 5, 2**62, -(2**62)], np.int64)),
        "take_empty": Call(lambda x, i: jnp.take(x, i), small, np.zeros((0,), np.int32)),
        "index_empty_rows": Call(lambda t, i: t[i], table, np.zeros((0,), np.int64)),
        # scatter: normalization folded, out-of-bounds updates dropped
        "add_1M_int32": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal(1 << 16).astype(f32),
                             g.integers(-80_000, 80_000, n).astype(np.int32), g.standard_normal(n).astype(f32)),
        "add_1M_int64": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal(1 << 16).astype(f32),
                             g.integers(-80_000, 80_000, n).astype(np.int64), g.standard_normal(n).astype(f32)),
        "add_uint32": Call(lambda x, i, u: x.at[i].add(u), small,
                           np.array([0, 99, 100, 2**31, 2**32 - 1, 5], np.uint32), np.arange(6).astype(f32)),
        "add_rows_drop": Call(lambda x, i, u: x.at[i].add(u, mode="drop"), table, rows_oob.astype(np.int32),
                              g.standard_normal((1 << 18, 16)).astype(f32)),
        "add_rows_clip": Call(lambda x, i, u: x.at[i].add(u, mode="clip"), table, rows_oob.astype(np.int32),
                              g.standard_normal((1 << 18, 16)).astype(f32)),
        "set_rows_int64": Call(lambda x, i, u: x.at[i].set(u), table,
                               g.permutation(1 << 16)[: 1 << 14].astype(np.int64) - (1 << 15),
                               g.standard_normal((1 << 14, 16)).astype(f32)),
        "add_empty": Call(lambda x, i, u: x.at[i].add(u), small, np.zeros((0,), np.int32), np.zeros((0,), f32)),
        "segment_sum_int64_ids": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=1024),
                                      g.standard_normal((1 << 18, 16)).astype(f32),
                                      g.integers(-10, 1100, 1 << 18).astype(np.int64)),
    }
    return cases


def _segment_max_cases():
    g = I.rng(10)
    specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40, 1.0, -1.0], np.float32)
    data = g.standard_normal((1 << 18, 16)).astype(np.float32)
    mask = g.random(data.shape) < 0.01
    data[mask] = g.choice(specials, mask.sum())
    ids = g.integers(-5, 1030, 1 << 18).astype(np.int32)
    data64 = g.standard_normal((20_000, 5)).astype(np.float64)
    data64[::97] = -0.0
    data64[::211] = np.nan
    return {
        "segment_max_rows_specials": Call(lambda d, s: jax.ops.segment_max(d, s, num_segments=1024), data, ids),
        "segment_min_rows_specials": Call(lambda d, s: jax.ops.segment_min(d, s, num_segments=1024), data, ids),
        "segment_max_f64": Call(lambda d, s: jax.ops.segment_max(d, s, num_segments=300), data64,
                                g.integers(0, 300, 20_000).astype(np.int32)),
        "scatter_max_rows": Call(lambda x, i, u: x.at[i].max(u), data[:4096], ids[:50_000] % 4096, data[:50_000]),
    }


@pytest.mark.parametrize("op", ["folded_index", "segment_max"])
def test_folded_index_forms(op):
    cases = _folded_index_cases() if op == "folded_index" else _segment_max_cases()
    check_cases(None, cases, op=op, mode="exact")


# The fast paths of the forms JAX emits most, at realistic sizes, bitwise against XLA:
# vector element gathers (4-byte elements, int32 indices; lengths that are not a multiple
# of the vector width, negative and out-of-bounds indices in each mode), fixed-size row
# copies of 8 to 64 bytes, one-component scatters of single elements (fused loop) and rows
# split across threads by destination rows (each element sees its updates in index order,
# so sums and assignments with duplicates match XLA's sequential scatter exactly).
def _fast_path_cases():
    g = I.rng(11)
    f32 = np.float32
    n = (1 << 20) + 13
    x = g.standard_normal(n).astype(f32)
    ids = g.integers(-n - 1000, n + 1000, n).astype(np.int32)
    ints = g.integers(-1000, 1000, n).astype(np.int32)
    seg = g.integers(-20, 1040, 1 << 18).astype(np.int32)
    cases = {
        "take_fill_f32": Call(lambda x, i: jnp.take(x, i, axis=0), x, ids),
        "take_fill_value_int32": Call(lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-7), ints, ids),
        "take_clip_f32": Call(lambda x, i: jnp.take(x, i, axis=0, mode="clip"), x, ids),
        "index_f32": Call(lambda x, i: x[i], x, ids),
        "index_uint32_table": Call(lambda x, i: x[i], ints.astype(np.uint32), ids[:100_003]),
        "take_tail_only": Call(lambda x, i: jnp.take(x, i, axis=0), x, ids[:7]),
    }
    for width in (2, 4, 8, 16, 5):  # 8, 16, 32 and 64-byte rows; 20-byte rows element by element
        table = g.standard_normal((50_000, width)).astype(f32)
        cases[f"take_rows_{width}"] = Call(lambda t, i: jnp.take(t, i, axis=0), table,
                                           g.integers(-60_000, 60_000, 1 << 18).astype(np.int32))
    for width in (4, 8):  # f64 rows of 32 and 64 bytes: NaN fill (word by word impossible), zero fill
        table = g.standard_normal((30_000, width))
        rows = g.integers(-40_000, 40_000, 100_000).astype(np.int32)
        cases[f"take_rows_f64_{width}"] = Call(lambda t, i: jnp.take(t, i, axis=0), table, rows)
        cases[f"take_rows_f64_{width}_zero_fill"] = Call(
            lambda t, i: jnp.take(t, i, axis=0, mode="fill", fill_value=0.0), table, rows)
    cases.update({
        "segment_sum_scalars": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=1024),
                                    g.standard_normal(1 << 18).astype(f32), seg),
        "segment_sum_rows": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=1024),
                                 g.standard_normal((1 << 18, 16)).astype(f32), seg),
        "segment_sum_rows_8_f64": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=1000),
                                       g.standard_normal((1 << 17, 8)).astype(np.float64), seg[: 1 << 17]),
        "segment_sum_rows_int32": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=777),
                                       g.integers(-1000, 1000, (1 << 17, 12)).astype(np.int32), seg[: 1 << 17]),
        "add_scalars_1M": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal(1 << 16).astype(f32),
                               g.integers(-70_000, 70_000, n).astype(np.int32), g.standard_normal(n).astype(f32)),
        "add_rows_16": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal((1 << 16, 16)).astype(f32),
                            g.integers(-70_000, 70_000, 1 << 18).astype(np.int32),
                            g.standard_normal((1 << 18, 16)).astype(f32)),
        "add_rows_odd_count": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal((1001, 16)).astype(f32),
                                   g.integers(-1001, 1001, 200_000).astype(np.int32),
                                   g.standard_normal((200_000, 16)).astype(f32)),
        "set_rows_duplicates": Call(lambda x, i, u: x.at[i].set(u), g.standard_normal((4099, 8)).astype(f32),
                                    g.integers(-4099, 4099, 300_000).astype(np.int32),
                                    g.standard_normal((300_000, 8)).astype(f32)),
        "max_rows_clip": Call(lambda x, i, u: x.at[i].max(u, mode="clip"), g.standard_normal((3000, 16)).astype(f32),
                              g.integers(-5000, 5000, 100_000).astype(np.int32),
                              g.standard_normal((100_000, 16)).astype(f32)),
        "add_rows_int64_ids": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal((20_000, 16)).astype(f32),
                                   g.integers(-25_000, 25_000, 100_000).astype(np.int64),
                                   g.standard_normal((100_000, 16)).astype(f32)),
    })
    return cases


def test_fast_path_forms():
    check_cases(None, _fast_path_cases(), op="gather_scatter_fast_paths", mode="exact")


# Row scatters of 256K to 1M updates into few rows (many duplicates per row), with negative
# and out-of-range indices in each scatter mode (dropped: FILL_OR_DROP; clipped), bitwise
# against XLA's sequential scatter: every destination element receives its updates in index
# order, whether the step runs on one thread or split by columns or destination rows. Each
# case is its own program, so each step's split is decided for its own shape.
@functools.lru_cache(maxsize=1)
def _few_rows_cases():
    g = I.rng(12)
    f32 = np.float32
    n = 1 << 20
    few = g.integers(-3, 11, n).astype(np.int32)  # 8 segments, some ids outside [0, 8)
    return {
        "segment_sum_1M_rows_16_into_8": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=8),
                                              g.standard_normal((n, 16)).astype(f32), few),
        "segment_sum_1M_scalars_into_8": Call(lambda d, s: jax.ops.segment_sum(d, s, num_segments=8),
                                              g.standard_normal(n).astype(f32), few),
        "segment_max_1M_rows_4_into_8": Call(lambda d, s: jax.ops.segment_max(d, s, num_segments=8),
                                             g.standard_normal((n, 4)).astype(f32), few),
        "add_256K_rows_16_into_64_drop": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal((64, 16)).astype(f32),
                                              g.integers(-80, 80, 1 << 18).astype(np.int32),
                                              g.standard_normal((1 << 18, 16)).astype(f32)),
        "add_256K_rows_16_into_64_clip": Call(lambda x, i, u: x.at[i].add(u, mode="clip"),
                                              g.standard_normal((64, 16)).astype(f32),
                                              g.integers(-80, 80, 1 << 18).astype(np.int32),
                                              g.standard_normal((1 << 18, 16)).astype(f32)),
        "set_512K_rows_8_into_100": Call(lambda x, i, u: x.at[i].set(u), g.standard_normal((100, 8)).astype(f32),
                                         g.integers(-120, 120, 1 << 19).astype(np.int32),
                                         g.standard_normal((1 << 19, 8)).astype(f32)),
        "add_128K_rows_64_into_1000": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal((1000, 64)).astype(f32),
                                           g.integers(-1100, 1100, 1 << 17).astype(np.int32),
                                           g.standard_normal((1 << 17, 64)).astype(f32)),
        "add_64K_rows_160_into_50_clip": Call(lambda x, i, u: x.at[i].add(u, mode="clip"),
                                              g.standard_normal((50, 160)).astype(f32),
                                              g.integers(-60, 60, 1 << 16).astype(np.int32),
                                              g.standard_normal((1 << 16, 160)).astype(f32)),
        "add_256K_rows_8_f64_into_16": Call(lambda x, i, u: x.at[i].add(u), g.standard_normal((16, 8)),
                                            g.integers(-20, 20, 1 << 18).astype(np.int32),
                                            g.standard_normal((1 << 18, 8))),
        # unique_indices is a promise JAX passes on to the scatter; the result is the same.
        "add_256K_unique_rows_16": Call(lambda x, i, u: x.at[i].add(u, unique_indices=True),
                                        g.standard_normal((1 << 18, 16)).astype(f32),
                                        g.permutation(1 << 18).astype(np.int32),
                                        g.standard_normal((1 << 18, 16)).astype(f32)),
    }


@pytest.mark.parametrize("case", list(_few_rows_cases()))
def test_large_scatters_into_few_rows(case):
    check_cases(None, {case: _few_rows_cases()[case]}, op="scatter_few_rows", mode="exact")
