"""End-to-end benchmark: StableRT against JAX's CPU backend (XLA) in the same process.

For each workload (benchmarks/workloads.py) it measures, on both backends,
  - compile time: `jax.jit(f).lower(*args).compile()` (tracing and lowering excluded; the
    persistent compilation cache is off), best of --compile-repeats fresh compilations;
  - run time: one jitted call with its arguments on the device, until the result is ready
    (dispatch included), best and median of --repeats after warm-up;
  - with --memory, peak memory: in a fresh process per workload and backend, the growth of
    the process's resident set (its high-water mark, reset with /proc/self/clear_refs) from
    the arguments placed on the device through compiling and running twice;
and reports StableRT / XLA ratios (below 1: StableRT is faster). It also measures the
machine's limits the workloads are bounded by: memory bandwidth (a large NumPy copy) and
GEMM peak (NumPy's own BLAS on 2048x2048 float32, all threads and one thread), so that
throughput can be read against them.

    .venv/bin/python benchmarks/jax_benchmark.py [--repeats 30] [--only matmul] [--memory]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import workloads  # noqa: E402


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


def _rss_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _peak_memory_here(name, platform):
    """Prints the peak resident growth (bytes) of compiling and running workload `name`."""
    import gc
    import jax
    import jax.numpy as jnp
    from jax import lax
    jax.config.update("jax_enable_compilation_cache", False)
    device = jax.devices(platform)[0]
    for wname, fn, fn_args, _ in workloads(jax, jnp, lax):
        if wname != name:
            continue
        args = jax.block_until_ready(jax.device_put(fn_args, device))
        del fn_args
        gc.collect()
        before = _rss_kib("VmRSS")
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # resets VmHWM to the current resident set
        compiled = jax.jit(fn).lower(*args).compile()
        jax.block_until_ready(compiled(*args))
        jax.block_until_ready(compiled(*args))
        print((_rss_kib("VmHWM") - before) * 1024)
        return 0
    raise SystemExit(f"no workload named {name!r}")


def _peak_memory(name, platform):
    """Peak resident growth in bytes of workload `name` on `platform`, in a fresh process."""
    import subprocess
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--peak-memory-of", name, "--platform", platform],
                         capture_output=True, text=True, env=dict(os.environ, JAX_PLATFORMS="stablert,cpu"))
    if out.returncode != 0:
        raise RuntimeError(f"peak memory of {name} on {platform}: {out.stderr.strip().splitlines()[-1:]}")
    return int(out.stdout.strip().splitlines()[-1])


def _fmt_bytes(b):
    return f"{b / 2 ** 20:.0f} MiB" if b >= 2 ** 20 else f"{b / 1024:.0f} KiB"


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
    p.add_argument("--memory", action="store_true", help="also measure each workload's peak memory (slower)")
    p.add_argument("--peak-memory-of", help=argparse.SUPPRESS)
    p.add_argument("--platform", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.peak_memory_of:
        return _peak_memory_here(args.peak_memory_of, args.platform)

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

    memory_header = " peak memory XLA / StableRT |" if args.memory else ""
    print("\n| workload | compile XLA | compile StableRT | ratio | run XLA (best / median) "
          "| run StableRT (best / median) | ratio (best) | StableRT throughput |" + memory_header)
    print("|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if args.memory else ""))
    compile_ratios, run_ratios = [], []
    for name, fn, fn_args, work in workloads(jax, jnp, lax):
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
        memory = ""
        if args.memory:
            try:
                memory = f" {_fmt_bytes(_peak_memory(name, 'cpu'))} / {_fmt_bytes(_peak_memory(name, 'stablert'))} |"
            except RuntimeError as error:
                memory = f" error: {str(error)[:120]} |"
        print(f"| {name} | {_fmt_time(xc)} | {_fmt_time(sc)} | {sc / xc:.2f} | {_fmt_time(xb)} / {_fmt_time(xm)} "
              f"| {_fmt_time(sb)} / {_fmt_time(sm)} | {sb / xb:.2f} | {tput} |{memory}", flush=True)
    if run_ratios:
        geo = lambda r: float(np.exp(np.mean(np.log(r))))  # noqa: E731
        print(f"\nGeometric means, StableRT / XLA: compile {geo(compile_ratios):.2f}, run {geo(run_ratios):.2f} "
              f"({len(run_ratios)} workloads).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
