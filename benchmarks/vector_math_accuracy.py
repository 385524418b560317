"""Accuracy of the transcendental elementwise ops in ulps: StableRT and JAX's CPU backend
(XLA) in the same process, each against a higher-precision reference (float64 for f32
results, x87 long double for f64 results).

Inputs per function and type: random bit patterns (the whole range, both signs) and uniform
samples of a typical range, 2^20 of each (2^16 for erf_inv, whose reference is a bisection);
binary functions take independent bit patterns / samples for both operands. Only results
that are finite and normal, of normal inputs, are measured (elsewhere both backends flush
denormals; special values are checked by the op matrix, tests/jax/ops). Prints the max ulp
error per backend and the input where it occurs.

    PYTHONPATH=python STABLERT_LIBRARY_PATH=build/libstablert_pjrt.so \\
        .venv/bin/python benchmarks/vector_math_accuracy.py [--markdown] [--only erf,pow]
"""
from __future__ import annotations

import argparse
import math

import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)
_lgamma = np.frompyfunc(lambda v: math.lgamma(v) if not (v <= 0 and v == int(v)) else math.inf, 1, 1)


def erf_ref(x):
    return _erf(x.astype(np.float64)).astype(np.float64)


def lgamma_ref(x):
    return _lgamma(x.astype(np.float64)).astype(np.float64)


def erf_inv_ref(y):
    """Bisection on erf (erfc beyond 1/2) in float64: 64 halvings of [0, 6]."""
    y = y.astype(np.float64)
    a, q = np.abs(y), 1 - np.abs(y)
    lo, hi = np.zeros_like(a), np.full_like(a, 6.0)
    small = a < 0.5
    for _ in range(64):
        mid = 0.5 * (lo + hi)
        over = np.where(small, erf_ref(mid) > a, _erfc(mid).astype(np.float64) < q)
        hi, lo = np.where(over, mid, hi), np.where(over, lo, mid)
    # Below 1e-4 (past the bisection's resolution) the series sqrt(pi)/2 (y + pi y^3 / 12 + ...).
    series = 0.88622692545275801365 * y * (1 + 0.26179938779914943654 * y * y)
    with np.errstate(all="ignore"):
        return np.where(a < 1e-4, series, np.where(a < 1, np.copysign(0.5 * (lo + hi), y), np.nan))


def digamma_ref(x):
    """Reflection below 1/2, recurrence up to 30, 7 terms of the asymptotic series (long double)."""
    x = x.astype(np.longdouble)
    pi = np.longdouble("3.1415926535897932384626433832795029")
    with np.errstate(all="ignore"):
        pole = (x <= 0) & (x == np.rint(x))
        reflect = x < 0.5
        refl = np.where(reflect, -pi / np.tan(pi * (x - np.rint(x))), 0)
        z = np.where(reflect, 1 - x, x)
        shift = np.zeros_like(z)
        for _ in range(30):
            low = z < 30
            shift = np.where(low, shift - 1 / z, shift)
            z = np.where(low, z + 1, z)
        z2 = 1 / (z * z)
        series = np.zeros_like(z2)
        for term in (1 / 12, -691 / 32760, 1 / 132, -1 / 240, 1 / 252, -1 / 120, 1 / 12):  # highest first
            series = series * z2 + term
        series = series * z2
        return np.where(pole, np.nan, np.log(z) - 0.5 / z - series + shift + refl)


# name: (jax function name, arity, reference on float64 / long double arrays, typical ranges,
#        types measured, samples)
def functions():
    from jax import lax
    import jax.numpy as jnp
    both = (np.float32, np.float64)
    return {
        "exp": (jnp.exp, np.exp, [(-100, 100)], both),
        "expm1": (jnp.expm1, np.expm1, [(-10, 10)], both),
        "log": (jnp.log, np.log, [(0, 10)], both),
        "log1p": (jnp.log1p, np.log1p, [(-1, 10)], both),
        "tanh": (jnp.tanh, np.tanh, [(-10, 10)], both),
        "logistic": (lax.logistic, lambda x: 1 / (1 + np.exp(-x)), [(-20, 20)], both),
        "sin": (jnp.sin, np.sin, [(-10, 10)], both),
        "cos": (jnp.cos, np.cos, [(-10, 10)], both),
        "tan": (jnp.tan, np.tan, [(-10, 10)], both),
        "sqrt": (jnp.sqrt, np.sqrt, [(0, 10)], both),
        "rsqrt": (lax.rsqrt, lambda x: 1 / np.sqrt(x), [(0, 10)], both),
        "cbrt": (jnp.cbrt, np.cbrt, [(-100, 100)], both),
        # f32 only: the references are float64 (erf, erf_inv, lgamma), and f64 runs XLA's own
        # decomposition on both backends.
        "erf": (lax.erf, erf_ref, [(-5, 5)], (np.float32,)),
        "erf_inv": (lax.erf_inv, erf_inv_ref, [(-1, 1)], (np.float32,), 1 << 16),
        "lgamma": (lax.lgamma, lgamma_ref, [(-10, 20)], (np.float32,)),
        "digamma": (lax.digamma, digamma_ref, [(-10, 20)], (np.float32,)),
        "pow": (lax.pow, np.power, [(0, 10), (-30, 30)], both),
        "atan2": (lax.atan2, np.arctan2, [(-10, 10), (-10, 10)], both),
    }


def inputs(dtype, lo, hi, n, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, np.iinfo(np.uint32 if dtype == np.float32 else np.uint64).max, n, dtype=np.uint64)
    random_bits = bits.astype(np.uint32 if dtype == np.float32 else np.uint64).view(dtype)
    typical = rng.uniform(lo, hi, n).astype(dtype)
    return np.concatenate([random_bits, typical])


def ulp_errors(result, reference, xs, dtype):
    info = np.finfo(dtype)
    with np.errstate(all="ignore"):
        ok = np.isfinite(reference) & (np.abs(reference) >= info.tiny) & (np.abs(reference) <= info.max)
        for x in xs:
            ok &= np.isfinite(x) & (np.abs(x) >= info.tiny)
        r = reference[ok]
        rounded = r.astype(dtype)
        exponent = np.maximum(np.frexp(rounded)[1] - 1, info.minexp)
        ulp = np.ldexp(np.ones_like(r), exponent - info.nmant)
        err = np.abs(result[ok].astype(r.dtype) - r) / ulp
    return err, [x[ok] for x in xs]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--only", default="", help="comma-separated function names")
    args = parser.parse_args()
    import jax
    jax.config.update("jax_enable_x64", True)
    devices = {"stablert": jax.devices("stablert")[0], "xla": jax.devices("cpu")[0]}
    only = set(filter(None, args.only.split(",")))
    rows = []
    for name, spec in functions().items():
        if only and name not in only:
            continue
        fn, ref_fn, ranges, dtypes = spec[:4]
        n = spec[4] if len(spec) > 4 else 1 << 20
        for dtype in dtypes:
            xs = [inputs(dtype, lo, hi, n, seed=1 + i) for i, (lo, hi) in enumerate(ranges)]
            with np.errstate(all="ignore"):
                wide = np.float64 if dtype == np.float32 else np.longdouble
                reference = np.asarray(ref_fn(*[x.astype(wide) for x in xs]))
            row = [name, np.dtype(dtype).name]
            for label, device in devices.items():
                result = np.asarray(jax.jit(fn)(*[jax.device_put(x, device) for x in xs]))
                err, at = ulp_errors(result, reference, xs, dtype)
                worst = int(np.argmax(err))
                row.append((float(err[worst]), ", ".join(f"{float(a[worst]):.9g}" for a in at)))
            rows.append(row)
            if not args.markdown:
                print(f"{name:9s} {row[1]:8s} stablert {row[2][0]:9.2f} ulp (x={row[2][1]})"
                      f"   xla {row[3][0]:9.2f} ulp (x={row[3][1]})", flush=True)
    if args.markdown:
        print("| function | dtype | StableRT max ulp | XLA max ulp |")
        print("|---|---|---:|---:|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2][0]:.2f} | {r[3][0]:.2f} |")


if __name__ == "__main__":
    main()
