"""Multi-device benchmark: sharded programs on N StableRT devices, partitioned (each device
runs its shard, with collectives) and in the global view (`STABLERT_PARTITIONER=0`: one run
over the assembled global arrays), against JAX's CPU backend (XLA's SPMD partitioner) with
N devices, in one process.

For each workload: run time of one jitted call on sharded arguments until the result is
ready (dispatch included), best and median of --repeats after warm-up; ratios are against
XLA's best (below 1: faster).

    .venv/bin/python benchmarks/multi_device_benchmark.py [--devices 8] [--repeats 30]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    os.environ["STABLERT_DEVICE_COUNT"] = str(args.devices)
    os.environ["JAX_NUM_CPU_DEVICES"] = str(args.devices)
    os.environ.setdefault("JAX_PLATFORMS", "cpu,stablert")
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    n = args.devices
    rng = np.random.default_rng(0)
    f32 = np.float32
    # name -> (function, [(host array, spec)])
    workloads = {
        "elementwise tanh(a)*2+1, 1K f32": (lambda a: jnp.tanh(a) * 2 + 1, [(rng.standard_normal(1024).astype(f32), P("x"))]),
        "elementwise a*b+c, 4M f32": (lambda a, b, c: a * b + c,
                                      [(rng.standard_normal(1 << 22).astype(f32), P("x"))] * 3),
        "sum of squares, 4M f32": (lambda a: jnp.sum(a * a), [(rng.standard_normal(1 << 22).astype(f32), P("x"))]),
        "row-sharded matmul 1024x512 @ 512x512": (lambda a, b: a @ b,
                                                  [(rng.standard_normal((1024, 512)).astype(f32), P("x", None)),
                                                   (rng.standard_normal((512, 512)).astype(f32), P())]),
        "contraction-sharded matmul 512x1024 @ 1024x512": (
            lambda a, b: a @ b, [(rng.standard_normal((512, 1024)).astype(f32), P(None, "x")),
                                 (rng.standard_normal((1024, 512)).astype(f32), P("x", None))]),
        "softmax rows 1024x1024 f32": (jax.nn.softmax, [(rng.standard_normal((1024, 1024)).astype(f32), P("x", None))]),
        "MLP grad, batch-sharded 256x512": (
            jax.grad(lambda w1, w2, x: jnp.sum(jnp.tanh(jnp.tanh(x @ w1) @ w2) ** 2), argnums=(0, 1)),
            [(rng.standard_normal((512, 512)).astype(f32) / 20, P()),
             (rng.standard_normal((512, 128)).astype(f32) / 20, P()),
             (rng.standard_normal((256, 512)).astype(f32), P("x", None))]),
    }

    def timed(fn, call_args):
        jax.block_until_ready(fn(*call_args))
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            jax.block_until_ready(fn(*call_args))
            times.append(time.perf_counter() - start)
        return min(times), statistics.median(times)

    def fmt(seconds):
        return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"

    print(f"| workload ({n} devices) | XLA (best / median) | StableRT partitioned | ratio | "
          f"StableRT global view | ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (fn, inputs) in workloads.items():
        row = {}
        for mode, platform in (("xla", "cpu"), ("partitioned", "stablert"), ("global", "stablert")):
            os.environ["STABLERT_PARTITIONER"] = "0" if mode == "global" else "1"  # read at compilation
            mesh = Mesh(np.array(jax.devices(platform)[:n]), ("x",))
            call_args = [jax.device_put(a, NamedSharding(mesh, s)) for a, s in inputs]
            row[mode] = timed(jax.jit(lambda *a: fn(*a)), call_args)
        base = row["xla"][0]
        print(f"| {name} | {fmt(row['xla'][0])} / {fmt(row['xla'][1])} | "
              f"{fmt(row['partitioned'][0])} / {fmt(row['partitioned'][1])} | {row['partitioned'][0] / base:.2f} | "
              f"{fmt(row['global'][0])} / {fmt(row['global'][1])} | {row['global'][0] / base:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
