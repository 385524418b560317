"""Accuracy of the transcendental elementwise ops in ulps: StableRT and JAX's CPU backend
(XLA) in the same process, each against a higher-precision reference (float64 for f32
results, x87 long double for f64 results).

Inputs per function and type: 2^20 random bit patterns (the whole range, both signs) and
2^20 uniform samples of a typical range. Only results that are finite and normal, of normal
inputs, are measured (elsewhere both backends flush denormals; special values are checked
by the op matrix, tests/jax/ops). Prints the max ulp error per backend.

    PYTHONPATH=python STABLERT_LIBRARY_PATH=build/libstablert_pjrt.so \
        .venv/bin/python benchmarks/vector_math_accuracy.py [--label after] [--markdown]
"""
from __future__ import annotations

import argparse

import numpy as np

FUNCTIONS = {  # name: (jax function, reference on long double / float64 arrays, typical range)
    "exp": ("exp", np.exp, (-100, 100)),
    "expm1": ("expm1", np.expm1, (-10, 10)),
    "log": ("log", np.log, (0, 10)),
    "log1p": ("log1p", np.log1p, (-1, 10)),
    "tanh": ("tanh", np.tanh, (-10, 10)),
    "logistic": ("logistic", lambda x: 1 / (1 + np.exp(-x)), (-20, 20)),
    "sin": ("sin", np.sin, (-10, 10)),
    "cos": ("cos", np.cos, (-10, 10)),
    "sqrt": ("sqrt", np.sqrt, (0, 10)),
    "rsqrt": ("rsqrt", lambda x: 1 / np.sqrt(x), (0, 10)),
}


def inputs(dtype, lo, hi, n=1 << 20):
    rng = np.random.default_rng(1)
    bits = rng.integers(0, np.iinfo(np.uint32 if dtype == np.float32 else np.uint64).max, n, dtype=np.uint64)
    random_bits = bits.astype(np.uint32 if dtype == np.float32 else np.uint64).view(dtype)
    typical = rng.uniform(lo, hi, n).astype(dtype)
    return np.concatenate([random_bits, typical])


def ulp_errors(result, reference, x, dtype):
    info = np.finfo(dtype)
    with np.errstate(all="ignore"):
        ok = (np.isfinite(reference) & np.isfinite(x) & (np.abs(reference) >= info.tiny)
              & (np.abs(reference) <= info.max) & (np.abs(x) >= info.tiny))
        r = reference[ok]
        rounded = r.astype(dtype)
        exponent = np.maximum(np.frexp(rounded)[1] - 1, info.minexp)
        ulp = np.ldexp(np.ones_like(r), exponent - info.nmant)
        err = np.abs(result[ok].astype(r.dtype) - r) / ulp
    return err, x[ok]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    import jax
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from jax import lax
    fns = {"exp": jnp.exp, "expm1": jnp.expm1, "log": jnp.log, "log1p": jnp.log1p, "tanh": jnp.tanh,
           "logistic": lax.logistic, "sin": jnp.sin, "cos": jnp.cos, "sqrt": jnp.sqrt, "rsqrt": lax.rsqrt}
    devices = {"stablert": jax.devices("stablert")[0], "xla": jax.devices("cpu")[0]}
    rows = []
    for name, (_, ref_fn, (lo, hi)) in FUNCTIONS.items():
        for dtype in (np.float32, np.float64):
            x = inputs(dtype, lo, hi)
            with np.errstate(all="ignore"):
                reference = ref_fn(x.astype(np.float64 if dtype == np.float32 else np.longdouble))
            row = [name, np.dtype(dtype).name]
            for label, device in devices.items():
                result = np.asarray(jax.jit(fns[name])(jax.device_put(x, device)))
                err, xs = ulp_errors(result, reference, x, dtype)
                worst = int(np.argmax(err))
                row.append((float(err[worst]), float(xs[worst])))
            rows.append(row)
            if not args.markdown:
                print(f"{name:9s} {row[1]:8s} stablert {row[2][0]:6.2f} ulp (x={row[2][1]:.9g})"
                      f"   xla {row[3][0]:6.2f} ulp (x={row[3][1]:.9g})", flush=True)
    if args.markdown:
        print("| function | dtype | StableRT max ulp | XLA max ulp |")
        print("|---|---|---|---|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2][0]:.2f} | {r[3][0]:.2f} |")


if __name__ == "__main__":
    main()
