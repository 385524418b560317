"""Reductions × dtypes × axes: sum, prod, max, min, and, or, xor, argmax/argmin (variadic
reduce), reduce with a body no kernel recognizes, multi-operand reduce, cumulative reductions.
Edge cases: NaN propagation, ±0, ±inf, empty reduced dimensions (identity), scalars, no axes."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from . import not_yet
from .accuracy import check_accuracy, ld, lsum
from .compare import Call, check_cases


def _data(dtype, shape, seed=0, exact=False):
    """Values whose reductions are well-conditioned: small integers (exact in any summation order)
    when exact=True, else specials mixed with random values."""
    dtype = np.dtype(dtype)
    if exact or dtype == np.bool_:
        return I.small_ints(dtype, shape, seed)
    return I.random(dtype, shape, seed, scale=2.0)


def _specials_2d(dtype):
    sp = I.specials(dtype)
    n = len(sp)
    cols = 4
    rows = -(-n // cols)
    return np.resize(sp, rows * cols).reshape(rows, cols)


def _axes_cases(dtype, red, *, exact_large=True, specials=True):
    """The standard axis configurations for a reduction `red(x, axes)`."""
    dt = np.dtype(dtype)
    cases = {
        "all": Call(lambda x: red(x, (0, 1, 2)), _data(dt, (3, 4, 5), 1, exact=True)),
        "axis0": Call(lambda x: red(x, (0,)), _data(dt, (3, 4, 5), 2)),
        "axis12": Call(lambda x: red(x, (1, 2)), _data(dt, (3, 4, 5), 3)),
        "axis1_of_2d": Call(lambda x: red(x, (1,)), _data(dt, (6, 7), 4)),
        "no_axes": Call(lambda x: red(x, ()), _data(dt, (2, 3), 5)),
        "scalar": Call(lambda x: red(x, ()), _data(dt, (), 6)),
        "empty_reduced": Call(lambda x: red(x, (1,)), np.zeros((3, 0), dt)),
        "empty_kept": Call(lambda x: red(x, (1,)), np.zeros((0, 4), dt)),
        "all_empty": Call(lambda x: red(x, (0, 1)), np.zeros((0, 4), dt)),
        "large_1d": Call(lambda x: red(x, (0,)), _data(dt, (1000,), 7, exact=exact_large)),
        "large_rows": Call(lambda x: red(x, (1,)), _data(dt, (8, 300), 8, exact=exact_large)),
        "large_cols": Call(lambda x: red(x, (0,)), _data(dt, (300, 8), 9, exact=exact_large)),
    }
    if specials:
        cases["special_rows"] = Call(lambda x: red(x, (1,)), _specials_2d(dt))
        cases["special_cols"] = Call(lambda x: red(x, (0,)), _specials_2d(dt))
    dn = I.denormals_of(dt)
    if dn.size:
        cases["denormal"] = Call(lambda x: red(x, (0,)), dn)
    return cases


def _unit_factors(dtype, shape, seed):
    """Factors from {1, -1, 2, 0.5} (or {1, 2, 3} unsigned): products are exact in any order and
    do not overflow for the sizes used here."""
    dt = np.dtype(dtype)
    choices = [1, 2, 3] if (I.is_int(dt) and I.iinfo(dt).min == 0) else ([1, -1, 2, 1] if I.is_int(dt)
                                                                          else [1, -1, 2, 0.5])
    return np.array(choices)[I.rng(seed).integers(0, len(choices), shape)].astype(dt)


def _prod_data_cases(dtype, red):
    dt = np.dtype(dtype)
    cases = _axes_cases(dt, red)
    for name in ("all", "axis0", "axis12", "axis1_of_2d", "no_axes"):
        fn, (x,) = cases[name].fn, cases[name].args
        cases[name] = Call(fn, _unit_factors(dt, x.shape, len(name)))
    # long products: mostly ones, a few factors
    for name in ("large_1d", "large_rows", "large_cols"):
        fn, (x,) = cases[name].fn, cases[name].args
        f = np.ones(x.shape, dt)
        f.flat[::97] = _unit_factors(dt, f.flat[::97].shape, 3)
        cases[name] = Call(fn, f)
    return cases


REDUCTIONS = {
    "reduce_sum": (lambda x, a: lax.reduce_sum(x, a), I.INT + I.FLOAT + I.COMPLEX + I.FLOAT8 + I.INT4, _axes_cases),
    "reduce_prod": (lambda x, a: lax.reduce_prod(x, a), I.INT + I.FLOAT + I.COMPLEX, _prod_data_cases),
    "reduce_max": (lambda x, a: lax.reduce_max(x, a), I.BOOL + I.INT + I.FLOAT + I.FLOAT8 + I.INT4, _axes_cases),
    "reduce_min": (lambda x, a: lax.reduce_min(x, a), I.BOOL + I.INT + I.FLOAT + I.FLOAT8 + I.INT4, _axes_cases),
    "reduce_and": (lambda x, a: lax.reduce_and(x, a), I.BOOL + I.INT, _axes_cases),
    "reduce_or": (lambda x, a: lax.reduce_or(x, a), I.BOOL + I.INT, _axes_cases),
    "reduce_xor": (lambda x, a: lax.reduce_xor(x, a), I.BOOL + I.INT, _axes_cases),
    # a body no kernel recognizes (max of absolute values): the general-body path
    "reduce_general_body": (lambda x, a: lax.reduce(x, np.array(0, x.dtype),
                                                    lambda p, q: lax.max(lax.abs(p), lax.abs(q)), a),
                            I.SINT + I.FLOAT, _axes_cases),
}


@pytest.mark.parametrize("op,dtype", [not_yet.param(op, dt) for op, (_, dts, _) in REDUCTIONS.items()
                                      for dt in dts])
def test_reduction(op, dtype):
    red, _, make = REDUCTIONS[op]
    check_cases(None, make(dtype, red), op=op, dtype=dtype)


def _arg_cases(dtype, which):
    dt = np.dtype(dtype)
    f = (lambda x, axis: lax.argmax(x, axis, np.int32)) if which == "argmax" else (
        lambda x, axis: lax.argmin(x, axis, np.int32))
    ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, 1, 0, 1]]).astype(dt)
    cases = {
        "axis0": Call(lambda x: f(x, 0), _data(dt, (5, 6), 1)),
        "axis1": Call(lambda x: f(x, 1), _data(dt, (5, 6), 2)),
        "3d_axis1": Call(lambda x: f(x, 1), _data(dt, (2, 7, 3), 3)),
        "ties": Call(lambda x: f(x, 1), ties),
        "large": Call(lambda x: f(x, 0), _data(dt, (1000,), 4)),
        "special": Call(lambda x: f(x, 1), _specials_2d(dt)),
        "special_cols": Call(lambda x: f(x, 0), _specials_2d(dt)),
        "empty_kept": Call(lambda x: f(x, 1), np.zeros((0, 3), dt)),
        "int64_index": Call(lambda x: lax.argmax(x, 0, np.int64), _data(dt, (9, 2), 5)),
    }
    if I.is_float(dt):
        with np.errstate(invalid="ignore"):
            cases["nan_first_and_later"] = Call(lambda x: f(x, 1), np.array(
                [[np.nan, 1, 2], [1, np.nan, 5], [-np.inf, -np.inf, np.nan], [0.0, -0.0, 0.0]]).astype(dt))
    return cases


@pytest.mark.parametrize("op,dtype", [not_yet.param(op, dt) for op in ("argmax", "argmin")
                                      for dt in I.BOOL + I.INT + I.FLOAT])
def test_argminmax(op, dtype):
    check_cases(None, _arg_cases(dtype, op), op=op, dtype=dtype)


def _variadic(x, y):
    # (sum, max) of two operands at once, one body
    return lax.reduce((x, y), (np.array(0, x.dtype), np.array(I.iinfo(y.dtype).min if I.is_int(y.dtype) else -np.inf, y.dtype)),
                      lambda a, b: (lax.add(a[0], b[0]), lax.max(a[1], b[1])), (1,))


@pytest.mark.parametrize("op,dtype", [not_yet.param("reduce_variadic", dt) for dt in (np.int32, np.float32, np.float64)])
def test_reduce_variadic(op, dtype):
    dt = np.dtype(dtype)
    cases = {
        "basic": (_data(dt, (4, 9), 1, exact=True), _data(dt, (4, 9), 2)),
        "empty": (np.zeros((3, 0), dt), np.zeros((3, 0), dt)),
        "special": (np.resize(I.small_ints(dt, (8,), 3), (4, 8)), np.resize(I.specials(dt), (4, 8))),
    }
    check_cases(_variadic, cases, op=op, dtype=dt)


CUMULATIVE = {
    "cumsum": (lax.cumsum, I.INT + I.FLOAT + I.COMPLEX),
    "cumprod": (lax.cumprod, I.INT + I.FLOAT),
    "cummax": (lax.cummax, I.INT + I.FLOAT),
    "cummin": (lax.cummin, I.INT + I.FLOAT),
    "cumlogsumexp": (lax.cumlogsumexp, I.FLOAT),
}


@pytest.mark.parametrize("op,dtype", [not_yet.param(op, dt) for op, (_, dts) in CUMULATIVE.items() for dt in dts])
def test_cumulative(op, dtype):
    f, _ = CUMULATIVE[op]
    dt = np.dtype(dtype)
    exact = op in ("cumsum", "cumprod")
    small = (lambda shape, seed: (_unit_factors(dt, shape, seed) if op == "cumprod"
                                  else _data(dt, shape, seed, exact=exact)))
    cases = {
        "1d": Call(lambda x: f(x, 0), small((13,), 1)),
        "2d_axis0": Call(lambda x: f(x, 0), small((5, 4), 2)),
        "2d_axis1_reverse": Call(lambda x: f(x, 1, reverse=True), small((5, 4), 3)),
        "3d_axis1": Call(lambda x: f(x, 1), small((2, 6, 3), 4)),
        "long": Call(lambda x: f(x, 0), small((300,), 5)),
        # A window as long as the array: linear time, not one window per element.
        "very_long": Call(lambda x: f(x, 1, reverse=True), small((2, 200_000), 7)),
        "empty": Call(lambda x: f(x, 0), np.zeros((0, 3), dt)),
        "special": Call(lambda x: f(x, 0), _specials_2d(dt)),
    }
    check_cases(None, cases, op=op, dtype=dt)


# ----------------------------------------------------------------------------------------------
# Accuracy of long sums (more than 16M elements): StableRT against XLA and a long double reference
# (accuracy.py). Values: 0.1 repeated (a running f32 sum of them stalls at 2^21), random values,
# and mixed magnitudes with alternating signs; sums over the inner dimension, the outer one of
# a tall array, several dimensions, all of them, the mean, and a long cumsum.

N_LARGE = 25_165_824  # 3 * 2^23 (the shapes below need multiples of 4096 * 24)
N_16M = 4096 * 24 * 171  # 16,809,984


def _mixed(dt, n, seed):
    """Large (up to 1e4) and tiny (up to 1e-3) values with alternating signs, plus 0.25."""
    r = I.rng(seed)
    i = np.arange(n)
    x = np.where(i % 7 == 0, r.random(n) * 1e4, r.random(n) * 1e-3) * np.where(i % 2 == 0, 1.0, -1.0) + 0.25
    return x.astype(dt)


def _large_sums(x):
    return (jnp.sum(x), jnp.mean(x), x.reshape(-1, 16).sum(axis=0), x.reshape(-1, 3, 8).sum(axis=(0, 2)),
            x.reshape(4096, -1).sum(axis=1))


def _large_sums_reference(x):
    total = lsum(x)
    return (total, total / x.size, lsum(x.reshape(-1, 16), (0,)), lsum(x.reshape(-1, 3, 8), (0, 2)),
            lsum(x.reshape(4096, -1), (1,)))


_LARGE_NAMES = ["sum", "mean", "axis0 of (n/16, 16)", "axes (0, 2) of (n/24, 3, 8)", "axis1 of (4096, n/4096)"]


@pytest.mark.parametrize("values,dtype,n", [("tenths", np.float32, N_LARGE), ("random", np.float32, N_16M),
                                            ("mixed", np.float32, N_16M), ("tenths", np.float64, N_16M),
                                            ("mixed", np.float64, 4096 * 24 * 43), ("random", np.complex64, 4096 * 24 * 32)])
def test_large_sum_accuracy(values, dtype, n):
    """Sums of 16M-25M elements in every form (inner, outer, several and all dimensions, mean)."""
    dt = np.dtype(dtype)
    if values == "tenths":
        x = np.full(n, 0.1, dt)
    elif values == "random":
        x = I.rng(11).random(n).astype(dt)
        if dt.kind == "c":
            x = (x - 0.5j * I.rng(12).random(n)).astype(dt)
    else:
        x = _mixed(dt, n, 12)
    magnitude = None if values == "tenths" else (lambda v: _large_sums_reference(np.abs(v)))
    got, _ = check_accuracy(_large_sums, (x,), _large_sums_reference, magnitude=magnitude, op="reduce_sum_large",
                            dtype=dt, names=_LARGE_NAMES)
    if values == "tenths" and dt == np.float32:
        assert abs(float(got[1]) - 0.1) <= 1e-6, got[1]  # jnp.mean of 25,165,824 tenths


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_cumsum_accuracy(dtype):
    """cumsum of 2M elements (tenths, then random values), forward and reverse."""
    dt = np.dtype(dtype)
    x = np.concatenate([np.full(1 << 20, 0.1, dt), I.rng(13).random(1 << 20).astype(dt)])
    check_accuracy(lambda v: (jnp.cumsum(v), jnp.cumsum(v[::-1])[::-1]), (x,),
                   lambda v: (np.cumsum(ld(v)), np.cumsum(ld(v)[::-1])[::-1]), op="cumsum_long", dtype=dt,
                   names=["cumsum", "reverse cumsum"])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, jnp.bfloat16, np.float16])
def test_large_reduction_layouts(dtype):
    """Rows, columns, a middle dimension and everything of 4M-element arrays (the layouts the
    reduce kernels split across threads), as jnp's sum, max and min reach them: half-type sums
    widen to f32 inside the step (kernels/reduce_widened.h). Small integers, so every sum is
    exact in any order and the results must match XLA's bit for bit (accuracy on random
    values: test_large_sum_accuracy)."""
    dt = np.dtype(dtype)
    m = _data(dt, (2048, 2048), 21, exact=True)
    t3 = _data(dt, (64, 256, 256), 22, exact=True)
    tall = _data(dt, (4, 1 << 20), 23, exact=True)
    cases = {}
    for name, fn in [("sum", jnp.sum), ("max", jnp.max), ("min", jnp.min)]:
        cases[f"{name}_rows"] = Call(lambda x, f=fn: f(x, axis=1), m)
        cases[f"{name}_columns"] = Call(lambda x, f=fn: f(x, axis=0), m)
        cases[f"{name}_middle"] = Call(lambda x, f=fn: f(x, axis=1), t3)
        cases[f"{name}_all"] = Call(lambda x, f=fn: f(x), m)
        cases[f"{name}_long_rows"] = Call(lambda x, f=fn: f(x, axis=1), tall)
    check_cases(None, cases, op="reduce_large_layouts", dtype=dt, mode="exact")
