"""End-to-end benchmark: StableRT against JAX's CPU backend (XLA) in the same process.

For each workload it measures, on both backends,
  - compile time: `jax.jit(f).lower(*args).compile()` (tracing and lowering excluded; the
    persistent compilation cache is off), best of --compile-repeats fresh compilations;
  - run time: one jitted call with its arguments on the device, until the result is ready
    (dispatch included), best and median of --repeats after warm-up;
and reports StableRT / XLA ratios (below 1: StableRT is faster). It also measures the
machine's limits the workloads are bounded by: memory bandwidth (a large NumPy copy) and
GEMM peak (NumPy's own BLAS on 2048x2048 float32, all threads and one thread), so that
throughput can be read against them.

    .venv/bin/python benchmarks/jax_benchmark.py [--repeats 30] [--only matmul] [--markdown]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def _machine_limits():
    out = {}
    n = 32 * 1024 * 1024  # 256 MB of float64
    a = np.ones(n)
    b = np.empty_like(a)
    best = min(_timed(lambda: np.copyto(b, a)) for _ in range(5))
    out["memory bandwidth (copy, read+write)"] = (2 * a.nbytes / best / 1e9, "GB/s")
    m = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    m @ m
    best = min(_timed(lambda: m @ m) for _ in range(5))
    out["GEMM peak (NumPy BLAS, f32 2048^3, all threads)"] = (2 * 2048 ** 3 / best / 1e9, "GFLOP/s")
    try:
        from threadpoolctl import threadpool_limits
        with threadpool_limits(1):
            best = min(_timed(lambda: m @ m) for _ in range(3))
        out["GEMM peak (NumPy BLAS, f32 2048^3, one thread)"] = (2 * 2048 ** 3 / best / 1e9, "GFLOP/s")
    except ImportError:
        pass
    return out


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _workloads(jax, jnp, lax):
    rng = np.random.default_rng(0)
    f32 = np.float32

    def normal(*shape):
        return rng.standard_normal(shape).astype(f32)

    def mlp_step(params, x, y):
        def loss(p):
            h = x
            for w, b in p[:-1]:
                h = jax.nn.relu(h @ w + b)
            w, b = p[-1]
            return jnp.mean(((h @ w + b) - y) ** 2)
        grads = jax.grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)

    mlp_params = [(normal(512, 1024) * 0.05, normal(1024) * 0.05), (normal(1024, 1024) * 0.03, normal(1024) * 0.03),
                  (normal(1024, 10) * 0.03, normal(10) * 0.03)]

    def attention(q, k, v):
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[-1])
        return jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s, axis=-1), v)

    def loop(x):
        return lax.fori_loop(0, 1000, lambda i, x: x * 0.999 + 1.0, x)

    # (name, function, arguments, work: (amount, unit) for a throughput column or None)
    return [
        ("add scalar (dispatch latency)", lambda x: x + 1, (f32(1),), None),
        ("elementwise a*b+c, tanh, 4M f32", lambda a, b, c: jnp.tanh(a * b + c), (normal(1 << 22),) * 3,
         (4 * 4 * (1 << 22), "GB/s")),
        ("reduce sum rows 4096x1024 f32", lambda x: jnp.sum(x, axis=1), (normal(4096, 1024),), (4 * 4096 * 1024, "GB/s")),
        ("softmax 1024x1024 f32", lambda x: jax.nn.softmax(x, axis=-1), (normal(1024, 1024),), None),
        ("matmul 256 f32", lambda a, b: a @ b, (normal(256, 256), normal(256, 256)), (2 * 256 ** 3, "GFLOP/s")),
        ("matmul 1024 f32", lambda a, b: a @ b, (normal(1024, 1024), normal(1024, 1024)), (2 * 1024 ** 3, "GFLOP/s")),
        ("matmul 2048 f32", lambda a, b: a @ b, (normal(2048, 2048), normal(2048, 2048)), (2 * 2048 ** 3, "GFLOP/s")),
        ("matrix-vector 1x4096x4096 f32", lambda a, b: a @ b, (normal(1, 4096), normal(4096, 4096)),
         (4 * 4096 * 4096, "GB/s")),
        ("batched matmul 64x128x128 f32", lambda a, b: a @ b, (normal(64, 128, 128), normal(64, 128, 128)),
         (2 * 64 * 128 ** 3, "GFLOP/s")),
        ("batched matmul 512x32x32 f32", lambda a, b: a @ b, (normal(512, 32, 32), normal(512, 32, 32)),
         (2 * 512 * 32 ** 3, "GFLOP/s")),
        ("matmul 1024 bf16", lambda a, b: a @ b,
         (normal(1024, 1024).astype(jnp.bfloat16), normal(1024, 1024).astype(jnp.bfloat16)), (2 * 1024 ** 3, "GFLOP/s")),
        ("conv2d NHWC 8x64x64x32 * 3x3x32x64", lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
         (normal(8, 64, 64, 32), normal(3, 3, 32, 64)), (2 * 8 * 64 * 64 * 64 * 3 * 3 * 32, "GFLOP/s")),
        ("attention b4 s256 h8 d64 f32", attention, (normal(4, 256, 8, 64),) * 3, None),
        ("MLP training step 512-1024-1024-10, batch 256", mlp_step, (mlp_params, normal(256, 512), normal(256, 10)), None),
        ("sort 1M f32", jnp.sort, (normal(1 << 20),), None),
        ("gather take 1M of 1M f32", lambda x, i: x[i], (normal(1 << 20), rng.integers(0, 1 << 20, 1 << 20)), None),
        ("scatter-add 1M into 64K f32", lambda x, i, u: x.at[i].add(u),
         (normal(1 << 16), rng.integers(0, 1 << 16, 1 << 20), normal(1 << 20)), None),
        ("fori_loop 1000 steps on 128 f32", loop, (normal(128),), None),
        ("cumsum 4M f32", jnp.cumsum, (normal(1 << 22),), None),
    ]


def _measure(jax, fn, args, device, repeats, compile_repeats):
    args = jax.device_put(args, device)
    compile_s = float("inf")
    for _ in range(compile_repeats):
        # A fresh function each time: JAX caches traces, lowerings and executables per function.
        lowered = jax.jit(lambda *a: fn(*a)).lower(*args)
        t = time.perf_counter()
        compiled = lowered.compile()
        compile_s = min(compile_s, time.perf_counter() - t)
    jax.block_until_ready(compiled(*args))
    jax.block_until_ready(compiled(*args))
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        runs.append(time.perf_counter() - t)
    return compile_s, min(runs), statistics.median(runs)


def _fmt_time(s):
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--compile-repeats", type=int, default=3)
    p.add_argument("--only", action="append", default=[],
                   help="run the workloads whose name contains this (repeatable: any of them)")
    args = p.parse_args(argv)

    os.environ.setdefault("JAX_PLATFORMS", "stablert,cpu")
    import jax
    import jax.numpy as jnp
    from jax import lax
    jax.config.update("jax_enable_compilation_cache", False)
    cpu, stablert = jax.devices("cpu")[0], jax.devices("stablert")[0]

    print(f"jax {jax.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print("\n| machine limit | measured |\n|---|---:|")
    for name, (value, unit) in _machine_limits().items():
        print(f"| {name} | {value:.1f} {unit} |")

    print("\n| workload | compile XLA | compile StableRT | ratio | run XLA (best / median) "
          "| run StableRT (best / median) | ratio (best) | StableRT throughput |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    compile_ratios, run_ratios = [], []
    for name, fn, fn_args, work in _workloads(jax, jnp, lax):
        if args.only and not any(part in name for part in args.only):
            continue
        try:
            xc, xb, xm = _measure(jax, fn, fn_args, cpu, args.repeats, args.compile_repeats)
            sc, sb, sm = _measure(jax, fn, fn_args, stablert, args.repeats, args.compile_repeats)
        except Exception as error:  # report and go on: one workload must not hide the others
            print(f"| {name} | error: {type(error).__name__}: {str(error).splitlines()[0][:120]} |||||||")
            continue
        compile_ratios.append(sc / xc)
        run_ratios.append(sb / xb)
        tput = f"{work[0] / sb / 1e9:.1f} {work[1]}" if work else ""
        print(f"| {name} | {_fmt_time(xc)} | {_fmt_time(sc)} | {sc / xc:.2f} | {_fmt_time(xb)} / {_fmt_time(xm)} "
              f"| {_fmt_time(sb)} / {_fmt_time(sm)} | {sb / xb:.2f} | {tput} |", flush=True)
    if run_ratios:
        geo = lambda r: float(np.exp(np.mean(np.log(r))))  # noqa: E731
        print(f"\nGeometric means, StableRT / XLA: compile {geo(compile_ratios):.2f}, run {geo(run_ratios):.2f} "
              f"({len(run_ratios)} workloads).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
