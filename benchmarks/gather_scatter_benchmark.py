"""Gather and scatter: StableRT against JAX's CPU backend (XLA) in the same process.

Workloads are the forms JAX emits most (row gathers, embedding lookups, segment sums,
scatter-add with duplicates). Prints best and median run time per backend over --repeats
calls after warm-up, and the StableRT / XLA ratio of the best times.

    .venv/bin/python benchmarks/gather_scatter_benchmark.py [--repeats 30] [--only take]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _workloads(jax, jnp):
    rng = np.random.default_rng(0)
    f32 = np.float32

    def normal(*shape):
        return rng.standard_normal(shape).astype(f32)

    def ints(high, n):
        return rng.integers(0, high, n).astype(np.int32)

    return [
        ("take 1M of 1M f32", lambda x, i: jnp.take(x, i, axis=0), (normal(1 << 20), ints(1 << 20, 1 << 20))),
        ("x[i] 1M of 1M f32", lambda x, i: x[i], (normal(1 << 20), ints(1 << 20, 1 << 20))),
        ("embedding 50Kx128 f32, 64K ids", lambda t, i: t[i], (normal(50_000, 128), ints(50_000, 1 << 16))),
        ("take rows 256K of 64Kx16 f32", lambda x, i: jnp.take(x, i, axis=0), (normal(1 << 16, 16), ints(1 << 16, 1 << 18))),
        ("take axis=1 512x4096 f32, 1K ids", lambda x, i: jnp.take(x, i, axis=1), (normal(512, 4096), ints(4096, 1024))),
        ("segment_sum 256K rows x16 into 1K", lambda d, s: jax.ops.segment_sum(d, s, num_segments=1024),
         (normal(1 << 18, 16), ints(1024, 1 << 18))),
        ("segment_sum 256K scalars into 1K", lambda d, s: jax.ops.segment_sum(d, s, num_segments=1024),
         (normal(1 << 18), ints(1024, 1 << 18))),
        ("segment_max 256K rows x16 into 1K", lambda d, s: jax.ops.segment_max(d, s, num_segments=1024),
         (normal(1 << 18, 16), ints(1024, 1 << 18))),
        ("scatter-add 1M into 64K f32", lambda x, i, u: x.at[i].add(u),
         (normal(1 << 16), ints(1 << 16, 1 << 20), normal(1 << 20))),
        ("scatter-add rows 256K x16 into 64K", lambda x, i, u: x.at[i].add(u),
         (normal(1 << 16, 16), ints(1 << 16, 1 << 18), normal(1 << 18, 16))),
        ("scatter-set rows 64K x128 into 50K", lambda x, i, u: x.at[i].set(u),
         (normal(50_000, 128), ints(50_000, 1 << 16), normal(1 << 16, 128))),
    ]


def _measure(jax, fn, args, device, repeats):
    args = jax.device_put(args, device)
    compiled = jax.jit(fn).lower(*args).compile()
    for _ in range(3):
        jax.block_until_ready(compiled(*args))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--only", default="")
    options = parser.parse_args()
    import jax
    import jax.numpy as jnp
    cpu, stablert = jax.devices("cpu")[0], jax.devices("stablert")[0]
    print(f"{'workload':40s} {'StableRT best/median ms':>24s} {'XLA best/median ms':>20s} {'ratio':>6s}")
    for name, fn, args in _workloads(jax, jnp):
        if options.only not in name:
            continue
        s_best, s_med = _measure(jax, fn, args, stablert, options.repeats)
        x_best, x_med = _measure(jax, fn, args, cpu, options.repeats)
        print(f"{name:40s} {s_best * 1e3:11.3f} / {s_med * 1e3:8.3f} {x_best * 1e3:9.3f} / {x_med * 1e3:8.3f} "
              f"{s_best / x_best:6.2f}", flush=True)


if __name__ == "__main__":
    main()
