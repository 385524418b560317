"""Inputs of the op matrix: dtypes, special values and the standard set of cases per dtype.

Every generator is deterministic (fixed seeds), so a failure reproduces run to run.
"""
from __future__ import annotations

import itertools

import jax.numpy as jnp
import ml_dtypes
import numpy as np

# ------------------------------------------------------------------------------------------------
# dtypes

BOOL = [np.dtype(np.bool_)]
SINT = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64)]
UINT = [np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64)]
INT = SINT + UINT
INT4 = [np.dtype(jnp.int4), np.dtype(jnp.uint4)]
FLOAT = [np.dtype(t) for t in (np.float16, jnp.bfloat16, np.float32, np.float64)]
FLOAT8 = [np.dtype(jnp.float8_e4m3fn), np.dtype(jnp.float8_e5m2)]
FLOAT8_ALL = FLOAT8 + [np.dtype(getattr(jnp, n)) for n in (
    "float8_e4m3b11fnuz", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3",
    "float8_e8m0fnu", "float4_e2m1fn")]
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
REAL = INT + FLOAT
NUMBER = INT + FLOAT + COMPLEX
ALL = BOOL + INT + FLOAT + COMPLEX
EVERY = BOOL + INT4 + INT + FLOAT8_ALL + FLOAT + COMPLEX  # for convert / bitcast


def name(dtype) -> str:
    return np.dtype(dtype).name


def is_float(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype in FLOAT or dtype in FLOAT8_ALL


def is_int(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype in INT or dtype in INT4


def finfo(dtype):
    return ml_dtypes.finfo(dtype)


def iinfo(dtype):
    return ml_dtypes.iinfo(dtype)


# ------------------------------------------------------------------------------------------------
# special values


def float_specials(dtype) -> np.ndarray:
    """Zeros of both signs, ±1, halves (rounding ties), large and small normals, ±max, ±inf and
    NaN — whatever of these the dtype can represent. Denormals are a separate case."""
    dtype = np.dtype(dtype)
    fi = finfo(dtype)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2.0, 3.0, -3.0, 0.1, -0.7,
            10.0, -10.0, 100.0, -100.0, np.pi, -np.e, float(fi.eps), 1.0 + float(fi.eps),
            float(fi.max), -float(fi.max), float(fi.tiny), -float(fi.tiny)]
    if dtype in (np.dtype(np.float32), np.dtype(np.float64)):
        vals += [1e10, -1e10, 1e-10, 1e30, -1e30, 2.0 ** 24 + 1, 88.5, -88.5, 710.0, -745.5]
    vals += [np.inf, -np.inf, np.nan]
    with np.errstate(over="ignore", invalid="ignore"):
        # dtypes without inf (e4m3fn, fnuz) turn inf into NaN; without -0 they drop the sign.
        return np.array(vals, np.float64).astype(dtype)


def denormals(dtype) -> np.ndarray:
    """The smallest denormals of both signs, the largest denormal and one in between
    (empty for dtypes without denormals)."""
    dtype = np.dtype(dtype)
    fi = finfo(dtype)
    sub = float(getattr(fi, "smallest_subnormal", 0.0) or 0.0)
    tiny = float(fi.tiny)
    if not 0.0 < sub < tiny:
        return np.zeros((0,), dtype)
    vals = [sub, -sub, tiny / 2, -tiny / 4, tiny - sub, -(tiny - sub)]
    return np.array(vals, np.float64).astype(dtype)


def int_specials(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    ii = iinfo(dtype)
    vals = {0, 1, 2, 3, 5, 7, ii.max, ii.max - 1, ii.max // 2, ii.max // 2 + 1}
    if ii.min < 0:
        vals |= {-1, -2, -3, -7, ii.min, ii.min + 1}
    if ii.max > 100:
        vals |= {31, 32, 33, 63, 64, 100}
    vals = sorted(v for v in vals if ii.min <= v <= ii.max)
    return np.array(vals, object).astype(dtype) if dtype.itemsize < 8 else np.array(vals, dtype)


def complex_specials(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    parts = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-30, 1e30, np.inf, -np.inf, np.nan]
    vals = [complex(a, b) for a, b in itertools.product(parts, parts)]
    out = np.empty(len(vals), dtype)
    out.real = [v.real for v in vals]
    out.imag = [v.imag for v in vals]
    return out


def denormals_of(dtype) -> np.ndarray:
    """Denormals of a real floating dtype; of both parts for complex; none otherwise."""
    dtype = np.dtype(dtype)
    if is_float(dtype):
        return denormals(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        d = denormals(np.finfo(dtype).dtype)
        out = np.empty(2 * d.size, dtype)
        out.real = np.concatenate([d, np.ones_like(d)])
        out.imag = np.concatenate([np.ones_like(d), d])
        return out
    return np.zeros((0,), dtype)


def specials(dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array([False, True])
    if is_int(dtype):
        return int_specials(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return complex_specials(dtype)
    return float_specials(dtype)


# ------------------------------------------------------------------------------------------------
# random values


def rng(seed=0):
    return np.random.default_rng(seed)


def random(dtype, shape, seed=0, *, scale=3.0, low=None, high=None) -> np.ndarray:
    """Random values of `dtype`: normal*scale for floats (or uniform in [low, high)), full range
    for integers (or [low, high)), both parts for complex."""
    dtype = np.dtype(dtype)
    r = rng(seed)
    if dtype == np.bool_:
        return r.integers(0, 2, shape).astype(np.bool_)
    if is_int(dtype):
        ii = iinfo(dtype)
        lo = ii.min if low is None else max(low, ii.min)
        hi = ii.max if high is None else min(high - 1, ii.max)
        if dtype.itemsize == 8:
            return r.integers(lo, hi, shape, dtype=dtype, endpoint=True)
        return r.integers(lo, hi, shape, endpoint=True).astype(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        real = np.finfo(dtype).dtype
        out = np.empty(shape, dtype)
        out.real = random(real, shape, seed, scale=scale, low=low, high=high)
        out.imag = random(real, shape, seed + 1000, scale=scale, low=low, high=high)
        return out
    if low is not None:
        return r.uniform(low, high, shape).astype(dtype)
    return (r.standard_normal(shape) * scale).astype(dtype)


def small_ints(dtype, shape, seed=0):
    """Integers in [-8, 8) (or [0, 16) unsigned): no overflow in sums and products of a few."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return random(dtype, shape, seed)
    lo = 0 if (is_int(dtype) and iinfo(dtype).min == 0) else -8
    return rng(seed).integers(lo, lo + 16, shape).astype(dtype)


# ------------------------------------------------------------------------------------------------
# standard cases


def unary_cases(dtype, *, low=None, high=None) -> dict:
    """scalar, zero-size (two shapes), special values (1-D), random 2-D."""
    dtype = np.dtype(dtype)
    sp = specials(dtype)
    return {
        "scalar": (sp[min(2, len(sp) - 1)].reshape(()),),
        "empty": (np.zeros((0,), dtype),),
        "empty2d": (np.zeros((2, 0, 3), dtype),),
        "special": (sp,),
        "random": (random(dtype, (3, 5), seed=1, low=low, high=high),),
        **({"denormal": (dn,)} if (dn := denormals_of(dtype)).size else {}),
    }


def binary_cases(dtype, *, rhs_dtype=None, rhs_specials=None, low=None, high=None) -> dict:
    """scalar pair, zero-size, every pair of special values (overflow, division by zero, NaN
    and ±Inf combinations), random 2-D."""
    dtype = np.dtype(dtype)
    rhs_dtype = np.dtype(rhs_dtype or dtype)
    a = specials(dtype)
    b = specials(rhs_dtype) if rhs_specials is None else np.asarray(rhs_specials, rhs_dtype)
    x, y = np.meshgrid(a, b, indexing="ij")
    cases = {
        "scalar": (a[min(3, len(a) - 1)].reshape(()), b[min(2, len(b) - 1)].reshape(())),
        "empty": (np.zeros((0,), dtype), np.zeros((0,), rhs_dtype)),
        "special": (x.ravel(), y.ravel()),
        "random": (random(dtype, (3, 5), seed=2, low=low, high=high),
                   random(rhs_dtype, (3, 5), seed=3, low=low, high=high)),
    }
    da, db = denormals_of(dtype), (denormals_of(rhs_dtype) if rhs_specials is None else b[:0])
    if da.size or db.size:
        # every denormal against every special value, on either side
        xa, ya = np.meshgrid(da, b, indexing="ij")
        xb, yb = np.meshgrid(a, db, indexing="ij")
        cases["denormal"] = (np.concatenate([xa.ravel(), xb.ravel()]), np.concatenate([ya.ravel(), yb.ravel()]))
    return cases
