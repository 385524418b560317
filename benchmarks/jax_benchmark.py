"""End-to-end benchmark: StableRT against JAX's CPU backend (XLA) in the same process.

For each workload (benchmarks/workloads.py) it measures, on both backends,
  - compile time: `jax.jit(f).lower(*args).compile()` (tracing and lowering excluded; the
    persistent compilation cache is off), best of --compile-repeats fresh compilations. This
    includes jaxlib's own per-executable work on both sides (for StableRT, serializing the
    program for the plugin and wrapping the executable);
  - compile time at the PJRT C API: the workload lowered once for the `stablert` device; the
    program bytes (the VHLO portable artifact jaxlib serializes for the plugin) and the
    CompileOptionsProto JAX sends with them are captured from the plugin's compilation dump;
    then StableRT's PJRT_Client_Compile (through ctypes) and XLA:CPU's `compile_and_load`
    each compile those same bytes with those same options, best of --compile-repeats
    (benchmarks/pjrt_compile_timer.py; compile_benchmark.py does the same over the corpus).
    Reported as XLA / StableRT (the project's target: at least 20x on the geometric mean,
    never below 1x); a side that cannot compile the program says why in the row;
  - run time: one jitted call with its arguments on the device, until the result is ready
    (dispatch included), best and median of --repeats after warm-up (at least 2 calls and 50 ms);
  - with --memory, peak memory: in a fresh process per workload and backend, the growth of
    the process's resident set (its high-water mark, reset with /proc/self/clear_refs) from
    the arguments placed on the device through compiling and running twice;
and reports StableRT / XLA ratios (below 1: StableRT is faster; the C-API compile column is
XLA / StableRT, a speedup). The summary gives the geometric means of the ratios, and at the
C API the worst workload and those below the target. It also measures the
machine's limits the workloads are bounded by: memory bandwidth (a large NumPy copy) and
GEMM peak (NumPy's own BLAS on 2048x2048 float32, all threads and one thread), so that
throughput can be read against them.

    .venv/bin/python benchmarks/jax_benchmark.py [--repeats 30] [--compile-repeats 3] [--only matmul] [--memory]
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

TARGET_CAPI_SPEEDUP = 20  # the project's compile-time target at the C API (README, docs/benchmarks.md)


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
    # Warm-up: at least 2 calls and 50 ms, so that the threads have settled on their cores
    # (after start-up the scheduler can keep two of them on one core for the first calls).
    start = time.perf_counter()
    for i in range(1000):
        jax.block_until_ready(compiled(*args))
        if i >= 1 and time.perf_counter() - start >= 0.05:
            break
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        runs.append(time.perf_counter() - t)
    return compile_s, min(runs), statistics.median(runs)


class _CapiCompile:
    """Compile time at the PJRT C API (benchmarks/pjrt_compile_timer.py): the workload lowered
    once for the `stablert` device, the program bytes and CompileOptionsProto JAX hands the
    plugin captured, then PJRT_Client_Compile (StableRT) and XLA:CPU's `compile_and_load`
    timed on those same bytes and options, best of `repeats` each."""

    def __init__(self, jax, stablert_device, repeats):
        import stablert
        from pjrt_compile_timer import StableRtCompiler, XlaCompiler
        self.jax, self.device, self.repeats = jax, stablert_device, repeats
        self.stablert = StableRtCompiler(stablert.library_path())
        self.xla = XlaCompiler()

    def measure(self, fn, args):
        """(XLA seconds or an error text, StableRT seconds or an error text). A function already
        wrapped in jax.jit is lowered as it is, so its donate_argnums reach the program."""
        from pjrt_compile_timer import best_of, capture_program
        jax = self.jax
        try:
            jitted = fn if hasattr(fn, "lower") else jax.jit(lambda *a: fn(*a))
            code, options = capture_program(jitted.lower(*jax.device_put(args, self.device)))
        except Exception as error:  # noqa: BLE001 - no program to time: both sides say why
            text = f"not captured: {_first_line(error)}"
            return text, text
        results = []
        for side, compiler in (("XLA", self.xla), ("StableRT", self.stablert)):
            try:
                results.append(best_of(lambda: compiler.compile_seconds(code, options), self.repeats))
            except Exception as error:  # noqa: BLE001 - jaxlib raises its own error types
                results.append(f"{side} cannot compile it: {_first_line(error)}")
        return tuple(results)


def _first_line(error):
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0][:120] if lines else ''}"


def _fmt_speedup(r):
    return f"{r:.0f}×" if r >= 10 else f"{r:.1f}×"


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

    capi = _CapiCompile(jax, stablert, args.compile_repeats)

    memory_header = " peak memory XLA / StableRT |" if args.memory else ""
    print("\n| workload | compile XLA | compile StableRT | ratio | C-API compile XLA | C-API compile StableRT "
          "| C-API XLA / StableRT | run XLA (best / median) | run StableRT (best / median) | ratio (best) "
          "| StableRT throughput |" + memory_header)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if args.memory else ""))
    compile_ratios, run_ratios = [], []
    capi_speedups, capi_failures = [], []
    for name, fn, fn_args, work in workloads(jax, jnp, lax):
        if args.only and not any(part in name for part in args.only):
            continue
        try:
            xc, xb, xm = _measure(jax, fn, fn_args, cpu, args.repeats, args.compile_repeats)
            sc, sb, sm = _measure(jax, fn, fn_args, stablert, args.repeats, args.compile_repeats)
            jax_error = None
        except Exception as error:  # report and go on: one workload must not hide the others
            jax_error = _first_line(error)
        cx, cs = capi.measure(fn, fn_args)
        if isinstance(cx, float) and isinstance(cs, float):
            capi_speedups.append((cx / cs, name))
            capi_cells = f"{_fmt_time(cx)} | {_fmt_time(cs)} | {_fmt_speedup(cx / cs)}"
        else:
            capi_failures.append(name)
            capi_cells = " | ".join(c if isinstance(c, str) else _fmt_time(c) for c in (cx, cs)) + " | -"
        if jax_error:
            print(f"| {name} | error: {jax_error} ||| {capi_cells} |||||" + ("|" if args.memory else ""), flush=True)
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
        print(f"| {name} | {_fmt_time(xc)} | {_fmt_time(sc)} | {sc / xc:.2f} | {capi_cells} "
              f"| {_fmt_time(xb)} / {_fmt_time(xm)} | {_fmt_time(sb)} / {_fmt_time(sm)} | {sb / xb:.2f} "
              f"| {tput} |{memory}", flush=True)
    geo = lambda r: float(np.exp(np.mean(np.log(r))))  # noqa: E731
    if run_ratios:
        print(f"\nGeometric means, StableRT / XLA: compile {geo(compile_ratios):.2f}, run {geo(run_ratios):.2f} "
              f"({len(run_ratios)} workloads).")
    if capi_speedups:
        worst, worst_name = min(capi_speedups)
        below = [f"{n} ({_fmt_speedup(r)})" for r, n in sorted(capi_speedups) if r < TARGET_CAPI_SPEEDUP]
        print(f"Compile at the C API, XLA / StableRT: geometric mean {_fmt_speedup(geo([r for r, _ in capi_speedups]))}"
              f", worst {_fmt_speedup(worst)} ({worst_name}), StableRT slower on "
              f"{sum(r < 1 for r, _ in capi_speedups)} ({len(capi_speedups)} workloads; "
              f"target {TARGET_CAPI_SPEEDUP}× on the geometric mean, never below 1×).")
        print(f"Below {TARGET_CAPI_SPEEDUP}× at the C API: {', '.join(below) if below else 'none'}.")
    if capi_failures:
        print(f"Not compiled at the C API by one side (see their rows): {', '.join(capi_failures)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
