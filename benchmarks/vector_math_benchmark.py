"""Throughput of the vector elementwise math: each op over 4M elements on StableRT and on JAX's
CPU backend (XLA) in the same process, best of --repeats (after warm-up), in G elements per
second. Run it under different STABLERT_ISA levels (or libraries) to compare; pin it to one
core (taskset -c 0) for per-core figures.

    PYTHONPATH=python STABLERT_LIBRARY_PATH=build/libstablert_pjrt.so \\
        .venv/bin/python benchmarks/vector_math_benchmark.py [--repeats 50] [--dtype float32]
        [--only erf,tanh]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--n", type=int, default=1 << 22)
    parser.add_argument("--dtype", default="float32", help="float32, float16, bfloat16 or float64")
    parser.add_argument("--only", default="", help="comma-separated op names")
    args = parser.parse_args()
    import jax
    import jax.numpy as jnp
    from jax import lax
    if args.dtype == "float64":
        jax.config.update("jax_enable_x64", True)
    dtype = jnp.dtype(args.dtype)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(args.n) * 4).astype(dtype)
    positive = (np.abs(x.astype(np.float32)) + np.float32(1e-3)).astype(dtype)
    unit = rng.uniform(-0.999, 0.999, args.n).astype(dtype)
    y = (rng.standard_normal(args.n) * 2).astype(dtype)
    work = [("tanh", jnp.tanh, (x,)), ("exp", jnp.exp, (x,)), ("log", jnp.log, (positive,)),
            ("logistic", lax.logistic, (x,)), ("silu", jax.nn.silu, (x,)), ("expm1", jnp.expm1, (x,)), ("log1p", jnp.log1p, (positive,)),
            ("sin", jnp.sin, (x,)), ("cos", jnp.cos, (x,)), ("tan", jnp.tan, (x,)), ("sqrt", jnp.sqrt, (positive,)),
            ("rsqrt", lax.rsqrt, (positive,)), ("cbrt", jnp.cbrt, (x,)), ("erf", lax.erf, (x,)),
            ("erf_inv", lax.erf_inv, (unit,)), ("lgamma", lax.lgamma, (positive,)),
            ("digamma", lax.digamma, (positive,)), ("pow", lax.pow, (positive, y)), ("atan2", lax.atan2, (x, y)),
            ("multiply", lax.mul, (x, y))]
    only = set(filter(None, args.only.split(",")))
    print(f"STABLERT_ISA={os.environ.get('STABLERT_ISA', 'best')}  n={args.n}  dtype={args.dtype}  "
          f"cores={len(os.sched_getaffinity(0))}")
    for name, fn, data in work:
        if only and name not in only:
            continue
        row = [f"{name:10s}"]
        for label in ("stablert", "cpu"):
            device = jax.devices(label)[0]
            arrays = [jax.device_put(a, device) for a in data]
            f = jax.jit(fn)
            f(*arrays).block_until_ready()
            best = float("inf")
            for _ in range(args.repeats):
                t = time.perf_counter()
                f(*arrays).block_until_ready()
                best = min(best, time.perf_counter() - t)
            row.append(f"{'StableRT' if label == 'stablert' else 'XLA'} {args.n / best / 1e9:6.2f} G/s")
        print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
