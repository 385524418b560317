"""Throughput of the vector elementwise math: unary ops over 4M f32 elements on StableRT and
on JAX's CPU backend (XLA) in the same process, best of --repeats (after warm-up), in G
elements per second. Run it under different STABLERT_ISA levels (or libraries) to compare.

    PYTHONPATH=python STABLERT_LIBRARY_PATH=build/libstablert_pjrt.so \
        .venv/bin/python benchmarks/vector_math_benchmark.py [--repeats 50]
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
    args = parser.parse_args()
    import jax
    import jax.numpy as jnp
    from jax import lax
    rng = np.random.default_rng(0)
    x = rng.standard_normal(args.n).astype(np.float32) * 4
    positive = np.abs(x) + np.float32(1e-3)
    work = [("tanh", jnp.tanh, x), ("exp", jnp.exp, x), ("log", jnp.log, positive), ("logistic", lax.logistic, x),
            ("expm1", jnp.expm1, x), ("log1p", jnp.log1p, positive), ("sin", jnp.sin, x), ("sqrt", jnp.sqrt, positive),
            ("a*b (multiply)", lambda v: v * v, x)]
    print(f"STABLERT_ISA={os.environ.get('STABLERT_ISA', 'best')}  n={args.n}  cores={os.cpu_count()}")
    for name, fn, data in work:
        row = [f"{name:16s}"]
        for label in ("stablert", "cpu"):
            device = jax.devices(label)[0]
            arg = jax.device_put(data, device)
            f = jax.jit(fn)
            f(arg).block_until_ready()
            best = float("inf")
            for _ in range(args.repeats):
                t = time.perf_counter()
                f(arg).block_until_ready()
                best = min(best, time.perf_counter() - t)
            row.append(f"{'StableRT' if label == 'stablert' else 'XLA'} {args.n / best / 1e9:6.2f} G/s")
        print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
