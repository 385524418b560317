"""Sorting: StableRT against JAX's CPU backend (XLA) in the same process.

Workloads: jnp.sort of 1M float32, jnp.argsort of 1M float32, jnp.sort of (1000, 1000)
float32 along the last axis and along axis 0, lax.sort of (keys, values) with num_keys=1, and
a descending sort. Run time is one jitted call with its arguments on the device, until the
result is ready; best and median of --repeats after warm-up. Results are checked bitwise
against XLA's before timing.

    .venv/bin/python benchmarks/sort_benchmark.py [--repeats 15]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--only", default="")
    args = p.parse_args(argv)
    os.environ.setdefault("JAX_PLATFORMS", "stablert,cpu")
    import jax
    import jax.numpy as jnp
    from jax import lax
    cpu, stablert = jax.devices("cpu")[0], jax.devices("stablert")[0]
    rng = np.random.default_rng(0)
    x1m = rng.standard_normal(1 << 20).astype(np.float32)
    x2d = rng.standard_normal((1000, 1000)).astype(np.float32)
    vals = np.arange(1 << 20, dtype=np.int32)
    workloads = [
        ("sort 1M f32", jnp.sort, (x1m,)),
        ("argsort 1M f32", jnp.argsort, (x1m,)),
        ("sort (1000,1000) f32 axis -1", lambda x: jnp.sort(x, axis=-1), (x2d,)),
        ("sort (1000,1000) f32 axis 0", lambda x: jnp.sort(x, axis=0), (x2d,)),
        ("sort 1M f32 keys + i32 values", lambda k, v: lax.sort((k, v), num_keys=1), (x1m, vals)),
        ("sort 1M f32 descending", lambda x: jnp.sort(x, descending=True), (x1m,)),
    ]
    print(f"jax {jax.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print("\n| workload | XLA (best / median) | StableRT (best / median) | StableRT / XLA (best) |")
    print("|---|---:|---:|---:|")
    for name, fn, fn_args in workloads:
        if args.only and args.only not in name:
            continue
        results, times = [], []
        for device in (cpu, stablert):
            f = jax.jit(fn)
            dev_args = [jax.device_put(a, device) for a in fn_args]
            out = jax.block_until_ready(f(*dev_args))
            results.append([np.asarray(o) for o in jax.tree_util.tree_leaves(out)])
            ts = []
            for _ in range(args.repeats):
                t = time.perf_counter()
                jax.block_until_ready(f(*dev_args))
                ts.append(time.perf_counter() - t)
            times.append((min(ts), statistics.median(ts)))
        same = all(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
                   for a, b in zip(*results))
        (xb, xm), (sb, sm) = times
        print(f"| {name} | {xb * 1e3:.1f} / {xm * 1e3:.1f} ms | {sb * 1e3:.1f} / {sm * 1e3:.1f} ms "
              f"| {sb / xb:.2f}{'' if same else ' (RESULTS DIFFER)'} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
