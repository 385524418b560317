"""Compare (every direction, FLOAT/SIGNED/UNSIGNED and TOTALORDER comparison types), select,
select_n and clamp × every dtype × edge cases (NaN, ±0, ±inf, denormals, extremes)."""
from __future__ import annotations

import numpy as np
import pytest
from jax import lax

from . import inputs as I
from .compare import check_cases
from .specs import Op, params

ORDERED = I.INT + I.FLOAT + I.FLOAT8 + I.BOOL
ANY = ORDERED + I.COMPLEX
TOTAL = I.FLOAT + [np.dtype(np.int32), np.dtype(np.uint8)]

COMPARE: dict[str, Op] = {
    "eq": Op(lax.eq, ANY, "lax.eq({}, {})"),
    "ne": Op(lax.ne, ANY, "lax.ne({}, {})"),
    "lt": Op(lax.lt, ORDERED, "lax.lt({}, {})"),
    "le": Op(lax.le, ORDERED, "lax.le({}, {})"),
    "gt": Op(lax.gt, ORDERED, "lax.gt({}, {})"),
    "ge": Op(lax.ge, ORDERED, "lax.ge({}, {})"),
    # TOTALORDER comparisons, as JAX's sort comparators emit them (-NaN < -inf < ... < -0 < +0 < ... < NaN)
    "eq_totalorder": Op(lax.eq_to_p.bind, TOTAL, "lax.eq_to_p.bind({}, {})"),
    "lt_totalorder": Op(lax.lt_to_p.bind, TOTAL, "lax.lt_to_p.bind({}, {})"),
    "le_totalorder": Op(lax.le_to_p.bind, TOTAL, "lax.le_to_p.bind({}, {})"),
}


def _compare_cases(dtype):
    cases = I.binary_cases(dtype)
    if I.is_float(dtype):
        # NaN of both signs; total order distinguishes them
        with np.errstate(invalid="ignore"):
            nans = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0], np.float64).astype(dtype)
        nans[1] = -abs(nans[1]) if I.finfo(dtype).max > 0 else nans[1]
        x, y = np.meshgrid(nans, nans, indexing="ij")
        cases["signed_nan"] = (x.ravel(), y.ravel())
    return cases


@pytest.mark.parametrize("op,dtype", params(COMPARE))
def test_compare(op, dtype):
    spec = COMPARE[op]
    check_cases(spec.fn, _compare_cases(dtype), op=op, dtype=dtype, elementwise=True, expr=spec.expr)


def _clamp_cases(dtype):
    sp = I.specials(dtype)
    lo = np.full_like(sp, sp[len(sp) // 3])
    hi = np.full_like(sp, sp[2 * len(sp) // 3])
    cases = {
        "scalar": (sp[0].reshape(()), sp[1].reshape(()), sp[2].reshape(())),
        "empty": (np.zeros((0,), dtype),) * 3,
        "special_bounds_scalar": (sp[:1].reshape(()), sp, sp[-1:].reshape(())),
        "special_arrays": (lo, sp, hi),
        "random": (I.random(dtype, (3, 5), 1), I.random(dtype, (3, 5), 2), I.random(dtype, (3, 5), 3)),
    }
    dn = I.denormals_of(dtype)
    if dn.size:
        cases["denormal"] = (np.zeros_like(dn), dn, np.ones_like(dn))
    return cases


def _select_cases(dtype):
    sp = I.specials(dtype)
    pred = np.arange(len(sp)) % 3 == 0
    cases = {
        "scalar": (np.array(True), sp[0].reshape(()), sp[1].reshape(())),
        "scalar_pred": (np.array(False), sp, sp[::-1].copy()),
        "empty": (np.zeros((0,), bool), np.zeros((0,), dtype), np.zeros((0,), dtype)),
        "special": (pred, sp, sp[::-1].copy()),
        "random_2d": (I.random(np.bool_, (4, 6), 4), I.random(dtype, (4, 6), 5), I.random(dtype, (4, 6), 6)),
    }
    dn = I.denormals_of(dtype)
    if dn.size:
        cases["denormal"] = (np.arange(dn.size) % 2 == 0, dn, dn[::-1].copy())
    return cases


def _select_n_cases(dtype):
    sp = I.specials(dtype)
    which = (np.arange(len(sp)) % 3).astype(np.int32)
    return {
        "special": (which, sp, sp[::-1].copy(), np.roll(sp, 1)),
        "bool_which": (np.arange(len(sp)) % 2 == 0, sp, sp[::-1].copy()),
        "empty": (np.zeros((0,), np.int32),) + (np.zeros((0,), dtype),) * 3,
    }


SELECT: dict[str, Op] = {
    # data movement: results are compared bitwise (NaN payloads excepted)
    "select": Op(lax.select, I.ALL + I.FLOAT8 + I.INT4, "lax.select({}, {}, {})", mode="exact", cases=_select_cases),
    "select_n": Op(lax.select_n, I.ALL, "lax.select_n({}, {}, {}, {})", mode="exact", cases=_select_n_cases),
    # clamp = min(max(x, lo), hi): exact, its result is one of its operands
    "clamp": Op(lax.clamp, I.INT + I.FLOAT + I.FLOAT8, "lax.clamp({}, {}, {})", mode="exact", cases=_clamp_cases),
}


@pytest.mark.parametrize("op,dtype", params(SELECT))
def test_select_clamp(op, dtype):
    spec = SELECT[op]
    check_cases(spec.fn, spec.cases(dtype), op=op, dtype=dtype, mode=spec.mode, elementwise=True,
                expr=spec.expr)
