"""sort: one and several operands, num_keys, stability, every dimension, NaN/±0/±inf ordering
(JAX sorts floats in total order: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN), argsort,
descending sorts, top_k. Results are bitwise."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from . import compare as C
from . import inputs as I
from . import not_yet
from .compare import Call, check_cases


def _keys(dt, shape, seed, ties=True):
    """Random values with many ties (small range) mixed with the dtype's specials."""
    dt = np.dtype(dt)
    n = int(np.prod(shape))
    base = I.small_ints(dt, (n,), seed) if ties else I.random(dt, (n,), seed)
    sp = I.specials(dt)
    k = min(len(sp), n // 2)
    base[:k] = sp[:k]
    return I.rng(seed).permutation(base).reshape(shape)


def sort_cases(dt):
    cases = {
        "1d": Call(lambda x: lax.sort(x), _keys(dt, (41,), 1)),
        "2d_dim0": Call(lambda x: lax.sort(x, dimension=0), _keys(dt, (9, 5), 2)),
        "2d_dim1": Call(lambda x: lax.sort(x, dimension=1), _keys(dt, (5, 9), 3)),
        "3d_middle": Call(lambda x: lax.sort(x, dimension=1), _keys(dt, (2, 13, 3), 4)),
        "specials": Call(lambda x: lax.sort(x), I.specials(dt)[::-1].copy()),
        "long": Call(lambda x: lax.sort(x), _keys(dt, (2000,), 5, ties=False)),
        "empty": Call(lambda x: lax.sort(x), np.zeros((0,), dt)),
        "empty_rows": Call(lambda x: lax.sort(x, dimension=1), np.zeros((3, 0), dt)),
        "scalar_dim_size1": Call(lambda x: lax.sort(x, dimension=0), _keys(dt, (1, 4), 6)),
        # payload operand: stable sort keeps the order of equal keys
        "key_value_stable": Call(lambda k, v: lax.sort((k, v), num_keys=1, is_stable=True), _keys(dt, (60,), 7),
                                 np.arange(60, dtype=np.int32)),
        "two_keys": Call(lambda a, b, v: lax.sort((a, b, v), num_keys=2, is_stable=True), _keys(dt, (50,), 8),
                         _keys(dt, (50,), 9), np.arange(50, dtype=np.int32)),
        "argsort_stable": Call(lambda x: jnp.argsort(x, stable=True), _keys(dt, (7, 11), 10)),
        "descending": Call(lambda x: jnp.sort(x, descending=True, stable=True), _keys(dt, (33,), 11)),
    }
    if I.is_float(dt):
        with np.errstate(invalid="ignore"):
            z = np.array([0.0, -0.0, np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, -0.0], np.float64).astype(dt)
        z[3] = -abs(z[3])
        cases["signed_zeros_nans"] = Call(lambda x, v: lax.sort((x, v), num_keys=1, is_stable=True), z,
                                          np.arange(len(z), dtype=np.int32))
    return cases


@pytest.mark.parametrize("op,dtype", [not_yet.param("sort", dt) for dt in I.ALL + I.FLOAT8 + I.INT4])
def test_sort(op, dtype):
    check_cases(None, sort_cases(np.dtype(dtype)), op=op, dtype=dtype, mode="exact")


def top_k_cases(dt):
    return {
        "1d_k3": Call(lambda x: lax.top_k(x, 3), _keys(dt, (20,), 1, ties=False)),
        "2d_k1": Call(lambda x: lax.top_k(x, 1), _keys(dt, (4, 9), 2, ties=False)),
        "k_equals_n": Call(lambda x: lax.top_k(x, 6), _keys(dt, (3, 6), 3, ties=False)),
        "specials": Call(lambda x: lax.top_k(x, 4), I.specials(dt)),
        "k0": Call(lambda x: lax.top_k(x, 0), _keys(dt, (5,), 4)),
    }


@pytest.mark.parametrize("op,dtype", [not_yet.param("top_k", dt) for dt in I.INT + I.FLOAT])
def test_top_k(op, dtype):
    check_cases(None, top_k_cases(np.dtype(dtype)), op=op, dtype=dtype, mode="exact")


def _distinct(dt, shape, seed):
    """Distinct, exactly representable values (no NaN, one zero) in random order."""
    n = int(np.prod(shape))
    return ((I.rng(seed).permutation(n) - n // 2) * 0.5).astype(dt).reshape(shape)


def approx_top_k_cases(dt):
    """lax.approx_max_k/approx_min_k: custom_call ApproxTopK, which XLA's CPU backend computes
    exactly (sort by the comparator and slice; a reduce for k=1). Where a sort decides, values
    are distinct and not NaN: XLA's sort here is unstable and the comparator (a plain GT/LT) is
    no order on NaN, so the order of tied values or NaNs is unspecified."""
    return {
        "max_k3": Call(lambda x: lax.approx_max_k(x, 3), _distinct(dt, (4, 20), 1)),
        "min_k5_dim0": Call(lambda x: lax.approx_min_k(x, 5, reduction_dimension=0), _distinct(dt, (12, 3), 2)),
        "max_k1": Call(lambda x: lax.approx_max_k(x, 1), _keys(dt, (5, 9), 3)),
        "min_k1_specials": Call(lambda x: lax.approx_min_k(x, 1), I.specials(dt)),
        "max_k1_specials": Call(lambda x: lax.approx_max_k(x, 1), I.specials(dt)),
        "max_all_3d": Call(lambda x: lax.approx_max_k(x, 6, reduction_dimension=1), _distinct(dt, (2, 6, 3), 4)),
        "max_not_aggregated": Call(lambda x: lax.approx_max_k(x, 2, aggregate_to_topk=False),
                                   _distinct(dt, (2, 30), 5)),
        "empty_rows": Call(lambda x: lax.approx_max_k(x, 2), np.zeros((0, 4), dt)),
    }


@pytest.mark.parametrize("op,dtype", [not_yet.param("approx_top_k", dt) for dt in I.FLOAT])
def test_approx_top_k(op, dtype):
    check_cases(None, approx_top_k_cases(np.dtype(dtype)), op=op, dtype=dtype, mode="exact")


# ------------------------------------------------------------------------------------------------
# Sorts on integer keys (kernels/sort.cc): the comparators JAX emits run as vqsort / counting
# sorts. Compared with XLA bit for bit, NaN payloads and the signs of zeros included.

def _with_specials(dt, n, seed, ties):
    """n values of `dt` (many ties if `ties`), a tenth of them ±0, ±inf and NaNs of both signs
    and several payloads (floats)."""
    dt = np.dtype(dt)
    x = (I.small_ints(dt, (n,), seed) if ties else I.random(dt, (n,), seed))
    if I.is_float(dt):
        bits = {2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
        one = np.array([1], dt).view(bits)[0]
        with np.errstate(invalid="ignore"):
            sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan], np.float64).astype(dt)
        sp[5] = -abs(sp[5])
        nan_bits = sp[4:5].view(bits)[0]
        payloads = np.array([nan_bits | one.__class__(1), nan_bits | one.__class__(3)], bits).view(dt)
        payloads_neg = (-np.abs(payloads.astype(np.float64))).astype(dt) if dt.itemsize != 2 else payloads
        sp = np.concatenate([sp, payloads, payloads_neg])
        r = I.rng(seed + 100)
        pos = r.choice(n, n // 10, replace=False)
        x[pos] = sp[r.integers(0, len(sp), len(pos))]
    return x


def _bitwise_equal(got, want):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        if g.tobytes() != w.tobytes():
            diff = np.flatnonzero((g.reshape(-1).view(f"u{g.itemsize}") != w.reshape(-1).view(f"u{w.itemsize}"))
                                  if g.itemsize in (1, 2, 4, 8) else np.ones(g.size, bool))
            raise AssertionError(f"{g.dtype}{list(g.shape)}: {len(diff)} elements differ, first at {diff[:5]}: "
                                 f"got {g.reshape(-1)[diff[:5]]} want {w.reshape(-1)[diff[:5]]}")


def _run_both(fn, *args):
    """(XLA's results, StableRT's results)."""
    return [jax.block_until_ready(jax.jit(fn)(*[jax.device_put(a, device) for a in args]))
            for device in (C.cpu(), C.stablert())]


FAST_DTYPES = ["float32", "float64", "bfloat16", "float16", "int32", "uint8", "int8", "uint16", "int64",
               "uint32", "bool"]


def _fast_cases(dt):
    dt = np.dtype(dt)
    x = _with_specials(dt, 4099, 1, ties=True)
    rows = _with_specials(dt, 300 * 70, 2, ties=True).reshape(300, 70)
    cases = {
        "sort": (lambda x: jnp.sort(x), x),
        "sort_descending": (lambda x: jnp.sort(x, descending=True), x),
        "argsort": (lambda x: jnp.argsort(x), x),
        "argsort_descending": (lambda x: jnp.argsort(x, descending=True), x),
        "rows_last": (lambda x: jnp.sort(x, axis=-1), rows),
        "rows_axis0": (lambda x: jnp.sort(x, axis=0), rows),
        "argsort_axis0": (lambda x: jnp.argsort(x, axis=0), rows),
        "key_values": (lambda k, v, w: lax.sort((k, v, w), num_keys=1), x, I.random(np.float32, x.shape, 3),
                       np.arange(x.size, dtype=np.int32)[::-1].copy()),
        "key_values_axis0": (lambda k, v: lax.sort((k, v), dimension=0, num_keys=1), rows,
                             I.random(np.int16, rows.shape, 4)),
    }
    if not I.is_float(dt):
        # Unstable: ties may come out in any order, which only floats (±0, NaNs) could show.
        cases["sort_unstable"] = (lambda x: lax.sort(x, is_stable=False), x)
    return cases


@pytest.mark.parametrize("dtype", FAST_DTYPES)
@pytest.mark.parametrize("case", ["sort", "sort_unstable", "sort_descending", "argsort", "argsort_descending",
                                  "rows_last", "rows_axis0", "argsort_axis0", "key_values", "key_values_axis0"])
def test_sort_fast_path_bitwise(dtype, case):
    cases = _fast_cases(np.dtype(dtype))
    if case not in cases:
        pytest.skip("floats: an unstable sort's order of ties is unspecified")
    fn, *args = cases[case]
    want, got = _run_both(fn, *args)
    _bitwise_equal(got, want)


def test_sort_large_bitwise():
    """1M float32 (ties and specials), argsort with many duplicates, (1000, 1000) both axes."""
    x = _with_specials(np.float32, 1 << 20, 5, ties=False)
    dup = I.small_ints(np.float32, (1 << 20,), 6)
    m = _with_specials(np.float32, 1000 * 1000, 7, ties=False).reshape(1000, 1000)
    for fn, a in [(jnp.sort, x), (jnp.argsort, dup), (lambda a: jnp.argsort(a, descending=True), dup),
                  (lambda a: jnp.sort(a, axis=-1), m), (lambda a: jnp.sort(a, axis=0), m),
                  (lambda a: jnp.argsort(a, axis=0), m)]:
        want, got = _run_both(fn, a)
        _bitwise_equal(got, want)
