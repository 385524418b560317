"""Elementwise unary, binary and ternary arithmetic × every dtype it accepts × edge cases.

Compare, select and clamp are in test_compare.py."""
from __future__ import annotations

import numpy as np
import pytest
import jax.numpy as jnp
from jax import lax

from . import inputs as I
from .compare import check_cases
from .specs import Op, params

F, C = I.FLOAT, I.COMPLEX
# integer_pow exponents are checked on one signed and one unsigned type per width class
INT_SOME = [np.dtype(t) for t in (np.int8, np.int32, np.uint32, np.int64)]
FC = F + C
RTE, AFZ = lax.RoundingMethod.TO_NEAREST_EVEN, lax.RoundingMethod.AWAY_FROM_ZERO

# Per-op tolerances are JAX's own (jax._src.internal_test_util.lax_test_util.lax_ops, jax 0.10.2);
# the float64 1e-14 of the gamma family extends its lgamma/digamma/igamma entries to the other
# long decompositions of that family (rounding differences of a few ulps).
UNARY: dict[str, Op] = {
    "neg": Op(lax.neg, I.INT + I.INT4 + F + I.FLOAT8 + C, "lax.neg({})", mode="exact"),
    "abs": Op(lax.abs, I.SINT + F + I.FLOAT8 + C, "lax.abs({})"),
    "sign": Op(lax.sign, I.INT + I.INT4 + F + C, "lax.sign({})"),
    "floor": Op(lax.floor, F, "lax.floor({})", mode="exact"),
    "ceil": Op(lax.ceil, F, "lax.ceil({})", mode="exact"),
    "round_even": Op(lambda x: lax.round(x, RTE), F, "lax.round({}, lax.RoundingMethod.TO_NEAREST_EVEN)",
                     mode="exact"),
    "round_away": Op(lambda x: lax.round(x, AFZ), F, "lax.round({}, lax.RoundingMethod.AWAY_FROM_ZERO)",
                     mode="exact"),
    "is_finite": Op(lax.is_finite, F, "lax.is_finite({})"),
    "exp": Op(lax.exp, FC, "lax.exp({})"),
    "exp2": Op(lax.exp2, FC, "lax.exp2({})"),
    "expm1": Op(lax.expm1, FC, "lax.expm1({})", tol={np.float64: 1e-8}),
    "log": Op(lax.log, FC, "lax.log({})"),
    # float64: XLA's log1p is up to 128 ulp (1.4e-14) off near x = -0.4 (docs/benchmarks.md,
    # "Vector math"), StableRT's within 2.2 ulp.
    "log1p": Op(lax.log1p, FC, "lax.log1p({})", tol={np.float64: 3e-14}),
    "tanh": Op(lax.tanh, FC, "lax.tanh({})", tol={np.float64: 1e-9, np.complex128: 1e-7}),
    "logistic": Op(lax.logistic, FC, "lax.logistic({})"),
    "sin": Op(lax.sin, FC, "lax.sin({})"),
    "cos": Op(lax.cos, FC, "lax.cos({})"),
    "tan": Op(lax.tan, FC, "lax.tan({})", tol={np.float32: 3e-5}),
    "asin": Op(lax.asin, FC, "lax.asin({})", tol={np.complex128: 5e-12}),
    "acos": Op(lax.acos, FC, "lax.acos({})"),
    "atan": Op(lax.atan, FC, "lax.atan({})"),
    "sinh": Op(lax.sinh, FC, "lax.sinh({})"),
    "cosh": Op(lax.cosh, FC, "lax.cosh({})"),
    "asinh": Op(lax.asinh, FC, "lax.asinh({})", tol={np.complex64: 1e-4, np.complex128: 1e-5}),
    "acosh": Op(lax.acosh, FC, "lax.acosh({})"),
    "atanh": Op(lax.atanh, FC, "lax.atanh({})", tol={np.float64: 1e-9}),
    "sqrt": Op(lax.sqrt, FC, "lax.sqrt({})"),
    "rsqrt": Op(lax.rsqrt, FC, "lax.rsqrt({})"),
    "cbrt": Op(lax.cbrt, F, "lax.cbrt({})"),
    "square": Op(lax.square, FC + I.INT, "lax.square({})"),
    "reciprocal": Op(lax.reciprocal, FC, "lax.reciprocal({})"),
    "lgamma": Op(lax.lgamma, F, "lax.lgamma({})", tol={np.float32: 1e-5, np.float64: 1e-14}),
    # float32: XLA's digamma is 1.1e-6 off (absolute) near its zero at 1.4616 (digamma(1.4028176)
    # = -0.05849832; exactly -0.058499412, StableRT's -0.05849941).
    "digamma": Op(lax.digamma, F, "lax.digamma({})", tol={np.float32: 2e-6, np.float64: 1e-14}),
    "erf": Op(lax.erf, F, "lax.erf({})"),
    "erfc": Op(lax.erfc, F, "lax.erfc({})"),
    # float32: XLA's erf_inv is up to 3.4e-6 off near |x| = 1 (erf_inv(0.9997009) = 2.5569646,
    # exactly 2.5569558, StableRT's 2.5569558).
    "erf_inv": Op(lax.erf_inv, F, "lax.erf_inv({})", tol={np.float32: 1e-5, np.float64: 1e-9}),
    "bessel_i0e": Op(lax.bessel_i0e, F, "lax.bessel_i0e({})"),
    "bessel_i1e": Op(lax.bessel_i1e, F, "lax.bessel_i1e({})"),
    "real": Op(lax.real, C, "lax.real({})", mode="exact"),
    "imag": Op(lax.imag, C, "lax.imag({})", mode="exact"),
    "conj": Op(lax.conj, [np.dtype(np.float32), np.dtype(np.float64)] + C, "lax.conj({})", mode="exact"),
    "not": Op(lax.bitwise_not, I.BOOL + I.INT + I.INT4, "lax.bitwise_not({})"),
    "population_count": Op(lax.population_count, I.INT + I.INT4, "lax.population_count({})"),
    "clz": Op(lax.clz, I.INT + I.INT4, "lax.clz({})"),
    "integer_pow_2": Op(lambda x: lax.integer_pow(x, 2), INT_SOME + FC, "lax.integer_pow({}, 2)"),
    "integer_pow_3": Op(lambda x: lax.integer_pow(x, 3), INT_SOME + FC, "lax.integer_pow({}, 3)"),
    "integer_pow_7": Op(lambda x: lax.integer_pow(x, 7), INT_SOME + FC, "lax.integer_pow({}, 7)"),
    "integer_pow_0": Op(lambda x: lax.integer_pow(x, 0), INT_SOME + FC, "lax.integer_pow({}, 0)"),
    "integer_pow_-3": Op(lambda x: lax.integer_pow(x, -3), FC, "lax.integer_pow({}, -3)"),
    "reduce_precision_e5m10": Op(lambda x: lax.reduce_precision(x, 5, 10), [np.dtype(np.float32), np.dtype(np.float64)],
                                 "lax.reduce_precision({}, 5, 10)", mode="exact"),
    "reduce_precision_e8m7": Op(lambda x: lax.reduce_precision(x, 8, 7), [np.dtype(np.float32), np.dtype(np.float64)],
                                "lax.reduce_precision({}, 8, 7)", mode="exact"),
    "reduce_precision_e4m3": Op(lambda x: lax.reduce_precision(x, 4, 3), F,
                                "lax.reduce_precision({}, 4, 3)", mode="exact"),
}


# Long arrays for the vector kernels (kernels/simd/): longer than every vector and unrolled
# block (AVX-512: 16 f32 lanes) with a tail, and the special values sprinkled between random
# values, so vectors mix lanes of the vector code and lanes it hands to the scalar op.
# Denormals stay in their own short case: XLA's results on them depend on where they are
# (log(denormal) is -103.97 in a short array, -inf inside a long vectorized one).
LONG = 4099


def _sprinkled(dtype, seed, stride, *, low=None, high=None):
    x = I.random(dtype, (LONG,), seed=seed, low=low, high=high)
    sp = I.specials(dtype)
    x[3::stride][:sp.size] = sp[:x[3::stride].size]
    return x


def _with_long(cases, dtype, arity, spec):
    if not I.is_float(dtype) or spec.cases:
        return cases
    cases = dict(cases)
    cases["long"] = tuple(_sprinkled(dtype, 20 + i, 37 + 4 * i, low=spec.low, high=spec.high) for i in range(arity))
    return cases


@pytest.mark.parametrize("op,dtype", params(UNARY))
def test_unary(op, dtype):
    spec = UNARY[op]
    cases = spec.cases(dtype) if spec.cases else I.unary_cases(dtype, low=spec.low, high=spec.high)
    cases = _with_long(cases, dtype, 1, spec)
    check_cases(spec.fn, cases, op=op, dtype=dtype, mode=spec.mode, tol=spec.tol, elementwise=True,
                expr=spec.expr)


def _shift_cases(dtype):
    bits = np.dtype(dtype).itemsize * 8
    amounts = np.array([0, 1, 3, bits - 1, bits, bits + 1, 2 * bits, 255 % (I.iinfo(dtype).max + 1)]
                       + ([-1, -bits] if I.iinfo(dtype).min < 0 else []), np.int64).astype(dtype)
    return I.binary_cases(dtype, rhs_specials=amounts)


def _gamma_cases(dtype, *, integer_a=False):
    """Arguments of the incomplete gamma family in a sane range plus the edges (0, negative,
    NaN, inf). Huge arguments make their series loops run for tens of seconds on XLA too."""
    a = [0.5, 1.0, 2.5, 10.0, 1e-3, 0.0, -1.0, np.nan, np.inf]
    if integer_a:
        a = [0.0, 1.0, 2.0, 3.0, 5.0, -1.0, 1.5, np.nan]
    x = [0.0, 0.5, 1.0, 3.0, 20.0, 1e-3, -1.0, np.nan, np.inf]
    xa, xx = np.meshgrid(np.array(a, dtype), np.array(x, dtype), indexing="ij")
    r = I.rng(5)
    return {
        "scalar": (np.array(a[2], dtype), np.array(x[3], dtype)),
        "empty": (np.zeros((0,), dtype), np.zeros((0,), dtype)),
        "special": (xa.ravel(), xx.ravel()),
        "random": (np.floor(r.uniform(0, 6, 15)).astype(dtype) if integer_a else r.uniform(0.1, 8, 15).astype(dtype),
                   r.uniform(0.1, 12, 15).astype(dtype)),
    }


F64_32 = [np.dtype(np.float32), np.dtype(np.float64)]

BINARY: dict[str, Op] = {
    "add": Op(lax.add, I.INT + I.INT4 + F + I.FLOAT8 + C, "lax.add({}, {})"),
    "sub": Op(lax.sub, I.INT + I.INT4 + F + I.FLOAT8 + C, "lax.sub({}, {})"),
    "mul": Op(lax.mul, I.INT + I.INT4 + F + I.FLOAT8 + C, "lax.mul({}, {})"),
    "div": Op(lax.div, I.INT + I.INT4 + F + C, "lax.div({}, {})"),
    "rem": Op(lax.rem, I.INT + I.INT4 + F, "lax.rem({}, {})"),
    "pow": Op(lax.pow, FC, "lax.pow({}, {})"),
    "max": Op(lax.max, I.BOOL + I.INT + I.INT4 + F + I.FLOAT8 + C, "lax.max({}, {})"),
    "min": Op(lax.min, I.BOOL + I.INT + I.INT4 + F + I.FLOAT8 + C, "lax.min({}, {})"),
    "atan2": Op(lax.atan2, FC, "lax.atan2({}, {})"),
    "nextafter": Op(lax.nextafter, [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)],
                    "lax.nextafter({}, {})", mode="exact"),
    "and": Op(lax.bitwise_and, I.BOOL + I.INT + I.INT4, "lax.bitwise_and({}, {})"),
    "or": Op(lax.bitwise_or, I.BOOL + I.INT + I.INT4, "lax.bitwise_or({}, {})"),
    "xor": Op(lax.bitwise_xor, I.BOOL + I.INT + I.INT4, "lax.bitwise_xor({}, {})"),
    "shift_left": Op(lax.shift_left, I.INT + I.INT4, "lax.shift_left({}, {})", cases=_shift_cases),
    "shift_right_logical": Op(lax.shift_right_logical, I.INT + I.INT4, "lax.shift_right_logical({}, {})",
                              cases=_shift_cases),
    "shift_right_arithmetic": Op(lax.shift_right_arithmetic, I.INT + I.INT4, "lax.shift_right_arithmetic({}, {})",
                                 cases=_shift_cases),
    "mulhi": Op(lax.mulhi, I.INT, "lax.mulhi({}, {})"),
    "complex": Op(lax.complex, [np.dtype(np.float32), np.dtype(np.float64)], "lax.complex({}, {})",
                  mode="exact"),
    "igamma": Op(lax.igamma, [np.dtype(np.float32), np.dtype(np.float64)], "lax.igamma({}, {})", cases=_gamma_cases,
                 tol={np.float64: 1e-14}),
    "igammac": Op(lax.igammac, [np.dtype(np.float32), np.dtype(np.float64)], "lax.igammac({}, {})", cases=_gamma_cases,
                  tol={np.float64: 1e-14}),
    "igamma_grad_a": Op(lax.igamma_grad_a, [np.dtype(np.float64)],
                        "lax.igamma_grad_a({}, {})", cases=_gamma_cases,
                        tol={np.float64: 1e-14}),
    # float32: through lgamma/digamma; XLA's f32 value at (0.001, 1) is 1.3e-6 off
    # (597.22217; exactly 597.22295, StableRT's 597.22302).
    "random_gamma_grad": Op(lax.random_gamma_grad, [np.dtype(np.float32)],
                            "lax.random_gamma_grad({}, {})", cases=_gamma_cases,
                            tol={np.float32: 3e-6, np.float64: 1e-14}),
    "polygamma": Op(lax.polygamma, [np.dtype(np.float32), np.dtype(np.float64)], "lax.polygamma({}, {})",
                    tol={np.float64: 1e-14},
                    cases=lambda dt: _gamma_cases(dt, integer_a=True)),
    "zeta": Op(lax.zeta, [np.dtype(np.float32), np.dtype(np.float64)], "lax.zeta({}, {})", cases=_gamma_cases),
}


@pytest.mark.parametrize("op,dtype", params(BINARY))
def test_binary(op, dtype):
    spec = BINARY[op]
    cases = spec.cases(dtype) if spec.cases else I.binary_cases(dtype, low=spec.low, high=spec.high)
    cases = _with_long(cases, dtype, 2, spec)
    check_cases(spec.fn, cases, op=op, dtype=dtype, mode=spec.mode, tol=spec.tol, elementwise=True,
                expr=spec.expr)


# Realistic sizes for the vector math: 2M elements (and a tail) per op, in each float type
# the vector kernels take (f16/bf16 computed in f32 lanes).
LARGE = (1 << 21) + 5
VECTOR_MATH = {
    "exp": (lax.exp, -80, 80), "expm1": (lax.expm1, -10, 10), "log": (lax.log, 0, 1e4),
    "log1p": (lax.log1p, -1, 1e4), "tanh": (lax.tanh, -10, 10), "logistic": (lax.logistic, -30, 30),
    "sin": (lax.sin, -100, 100), "cos": (lax.cos, -100, 100), "tan": (lax.tan, -100, 100),
    "sqrt": (lax.sqrt, 0, 1e4), "rsqrt": (lax.rsqrt, 0, 1e4), "cbrt": (lax.cbrt, -1e4, 1e4),
    "erf": (lax.erf, -5, 5), "erf_inv": (lax.erf_inv, -1, 1), "lgamma": (lax.lgamma, 0.01, 20),
    "digamma": (lax.digamma, 0.01, 20), "pow": (lax.pow, 0, 10), "atan2": (lax.atan2, -10, 10),
}
# lgamma and digamma of negative arguments are checked against a long double reference in
# src/kernels/vector_math_test.cc instead: there XLA's f32 results are up to 6.7e-6 (lgamma)
# and 1.3e-6 (digamma) off in absolute terms (2.6e-4 relative near digamma's zeros), StableRT's
# within 0.5 ulp.
F_VECTOR = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(jnp.bfloat16)]


@pytest.mark.parametrize("dtype", F_VECTOR, ids=lambda d: d.name)
@pytest.mark.parametrize("op", VECTOR_MATH)
def test_vector_math_large(op, dtype):
    fn, low, high = VECTOR_MATH[op]
    arity = 2 if op in ("pow", "atan2") else 1
    args = [I.random(dtype, (LARGE,), seed=30 + i, low=low, high=high) for i in range(arity)]
    if op == "pow":
        args[1] = I.random(dtype, (LARGE,), seed=40, low=-8, high=8)
    tol = UNARY[op].tol if op in UNARY else BINARY[op].tol
    check_cases(fn, {"large": tuple(args)}, op=op, dtype=dtype, tol=tol, elementwise=True)


def _betainc_cases(dtype):
    r = I.rng(7)
    a = r.uniform(0.1, 5, 40).astype(dtype)
    b = r.uniform(0.1, 5, 40).astype(dtype)
    x = r.uniform(0, 1, 40).astype(dtype)
    edge = np.array([0.0, 1.0, 0.5, -1.0, np.nan, np.inf], dtype)
    return {
        "scalar": (np.array(2.0, dtype), np.array(3.0, dtype), np.array(0.25, dtype)),
        "empty": (np.zeros((0,), dtype),) * 3,
        "random": (a, b, x),
        "edges": (np.ones(6, dtype), np.full(6, 2.0, dtype), edge),
    }


TERNARY: dict[str, Op] = {
    "betainc": Op(lax.betainc, [np.dtype(np.float32), np.dtype(np.float64)], "lax.betainc({}, {}, {})",
                  tol={np.float32: 2e-5, np.float64: 1e-12}, cases=_betainc_cases),
}


@pytest.mark.parametrize("op,dtype", params(TERNARY))
def test_ternary(op, dtype):
    spec = TERNARY[op]
    check_cases(spec.fn, spec.cases(dtype), op=op, dtype=dtype, mode=spec.mode, tol=spec.tol,
                elementwise=True, expr=spec.expr)
