"""Memory-bound kernels against the machine's limits and against XLA's CPU backend.

In one run it
  1. measures the machine's limits with benchmarks/machine_limits (a small C++ program built
     with the plugin: FMA peak on zmm/ymm, 1 and all threads; DRAM copy/triad over 256 MB;
     L2 copy/triad) and reads which vector ISA StableRT's kernels dispatch to under the
     current STABLERT_ISA;
  2. times each single-op jitted function on StableRT and on XLA:CPU in the same process
     (arguments on the device, one call until the result is ready, dispatch and output
     allocation included), best and median of --repeats after warm-up;
  3. prints per op: bytes the op must move (inputs read + outputs written), GB/s at the best
     time, that as % of the measured DRAM bandwidth, and StableRT's time / XLA's (below 1:
     StableRT is faster).

    PYTHONPATH=python STABLERT_LIBRARY_PATH=build/libstablert_pjrt.so \
      .venv/bin/python benchmarks/kernel_benchmark.py [--repeats 20] [--only transpose] [--markdown]
          [--device-operands]

The C++ program is separate because an FMA loop and a STREAM-like loop need the host's
vector ISA and raw threads, which Python cannot express without adding its own overhead; it
is found next to the plugin (build/benchmarks/machine_limits) or given with --limits.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

MB = 1e6


def _limits(path, dram_mb):
    out = subprocess.run([path, "--dram-mb", str(dram_mb)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _time(fn, args, repeats, clock=time.perf_counter):
    # Warm-up: at least 2 calls and 50 ms, so that the threads have settled on their cores
    # (after start-up the scheduler can keep two of them on one core for the first calls).
    start = time.perf_counter()
    for i in range(1000):
        _block(fn(*args))
        if i >= 1 and time.perf_counter() - start >= 0.05:
            break
    times = []
    for _ in range(repeats):
        t = clock()
        _block(fn(*args))
        times.append(clock() - t)
    return min(times), statistics.median(times)


def _block(result):
    if isinstance(result, (tuple, list)):
        for r in result:
            r.block_until_ready()
    else:
        result.block_until_ready()


def _nbytes(x):
    return int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize


def _workloads(jnp, lax, ml_dtypes):
    import jax
    rng = np.random.default_rng(0)
    f32 = np.float32

    def normal(*shape, dtype=f32):
        return rng.standard_normal(shape).astype(dtype)

    n = 4 * 1024 * 1024
    big = 16 * 1024 * 1024
    v = normal(n)
    w = normal(n)
    vb = normal(big)
    m = normal(2048, 2048)
    m16 = normal(4096, 4096)
    t3 = normal(64, 256, 256)
    bf = ml_dtypes.bfloat16
    items = []

    def add(group, name, fn, *args, flops=None):
        items.append((group, name, fn, args, flops))

    add("elementwise", "add 4M f32", lambda a, b: a + b, v, w)
    add("elementwise", "mul 16M f32", lambda a, b: a * b, vb, vb)
    add("elementwise", "add 4M bf16", lambda a, b: a + b, v.astype(bf), w.astype(bf))
    add("elementwise", "add 4M f64", lambda a, b: a + b, v.astype(np.float64), w.astype(np.float64))
    add("elementwise", "tanh 4M f32", jnp.tanh, v)
    u = v.view(np.uint32)
    amounts = (w.view(np.uint32) % 40).astype(np.uint32)  # 0..39: past the width too
    add("elementwise", "shift_left 4M u32", lax.shift_left, u, amounts)
    add("elementwise", "shift_right_logical 4M u32", lax.shift_right_logical, u, amounts)
    add("elementwise", "shift_right_arithmetic 4M i32", lax.shift_right_arithmetic, u.view(np.int32),
        amounts.view(np.int32))
    add("elementwise", "xor 4M u32", lax.bitwise_xor, u, amounts)
    add("elementwise", "threefry bits 4M u32", lambda k: jax.random.bits(jax.random.wrap_key_data(k), (n,), np.uint32),
        np.array([0, 42], np.uint32))
    for src, dst in [(f32, bf), (f32, np.float16), (f32, np.int32), (bf, f32), (np.float16, f32), (np.int32, f32),
                     (np.float64, f32), (f32, np.float64)]:
        x = (v * 100).astype(src)
        add("convert", f"convert {np.dtype(src).name}->{np.dtype(dst).name} 4M", lambda a, d=dst: a.astype(d), x)
    add("compare/select", "where(a>b,a,b) 4M f32", lambda a, b: jnp.where(a > b, a, b), v, w)
    add("compare/select", "a>b 4M f32", lambda a, b: a > b, v, w)
    add("compare/select", "where(p,a,b) 4M f32", lambda p, a, b: jnp.where(p, a, b), v > 0, v, w)
    add("compare/select", "clip 4M f32", lambda a: jnp.clip(a, -0.5, 0.5), v)
    add("broadcast", "row 2048 -> 2048x2048", lambda r: jnp.broadcast_to(r, (2048, 2048)), m[0])
    add("broadcast", "column 2048 -> 2048x2048", lambda c: jnp.broadcast_to(c[:, None], (2048, 2048)), m[:, 0])
    add("broadcast", "scalar -> 4M f32", lambda s: jnp.broadcast_to(s, (n,)), np.float32(1.5))
    add("copy", "concatenate axis 0 2x1024x2048", lambda a, b: jnp.concatenate([a, b], 0), m[:1024], m[1024:])
    add("copy", "concatenate axis 1 2x2048x1024", lambda a, b: jnp.concatenate([a, b], 1), m[:, :1024], m[:, 1024:])
    add("copy", "pad 2048x2048 by 1", lambda a: jnp.pad(a, 1), m)
    add("copy", "slice [1:-1,1:-1] 2048x2048", lambda a: a[1:-1, 1:-1], m)
    add("copy", "slice [:, ::2] 2048x2048", lambda a: a[:, ::2], m)
    add("copy", "reverse axis 0 2048x2048", lambda a: a[::-1], m)
    add("copy", "reverse axis 1 2048x2048", lambda a: a[:, ::-1], m)
    add("copy", "iota 2048x2048 i32 (dim 1)", lambda a: lax.broadcasted_iota(np.int32, a.shape, 1), m)
    add("transpose", "2048x2048 (1,0) f32", lambda a: a.T, m)
    add("transpose", "4096x4096 (1,0) f32", lambda a: a.T, m16)
    add("transpose", "2048x2048 (1,0) bf16", lambda a: a.T, m.astype(bf))
    for perm in [(0, 2, 1), (2, 0, 1), (1, 0, 2), (2, 1, 0), (1, 2, 0)]:
        add("transpose", f"64x256x256 {perm} f32", lambda a, p=perm: jnp.transpose(a, p), t3)
    for op, fn in [("sum", jnp.sum), ("max", jnp.max)]:
        add("reduce", f"{op} rows 2048x2048 f32", lambda a, f=fn: f(a, axis=1), m)
        add("reduce", f"{op} columns 2048x2048 f32", lambda a, f=fn: f(a, axis=0), m)
        add("reduce", f"{op} middle 64x256x256 f32", lambda a, f=fn: f(a, axis=1), t3)
        add("reduce", f"{op} all 16M f32", lambda a, f=fn: f(a), vb)
        add("reduce", f"{op} columns 256Kx16 f32", lambda a, f=fn: f(a, axis=0), m.reshape(1 << 18, 16))
    add("transpose", "64x512x512 (1, 0, 2) f32", lambda a: jnp.transpose(a, (1, 0, 2)), vb.reshape(64, 512, 512))
    add("reduce", "sum rows 2048x2048 bf16", lambda a: jnp.sum(a, axis=1), m.astype(bf))
    add("reduce", "sum rows 2048x2048 f64", lambda a: jnp.sum(a, axis=1), m.astype(np.float64))
    add("reduce", "min columns 2048x2048 i32", lambda a: jnp.min(a, axis=0), (m * 1000).astype(np.int32))
    add("argmax", "argmax rows 2048x2048 f32", lambda a: jnp.argmax(a, axis=1), m)
    add("argmax", "argmax columns 2048x2048 f32", lambda a: jnp.argmax(a, axis=0), m)
    add("argmax", "argmin rows 2048x2048 f32", lambda a: jnp.argmin(a, axis=1), m)
    add("argmax", "argmax all 4M f32", lambda a: jnp.argmax(a), v)
    add("argmax", "argmax rows 2048x2048 f32, s32 indices", lambda a: lax.argmax(a, 1, np.int32), m)
    add("argmax", "argmax columns 2048x2048 f32, s32 indices", lambda a: lax.argmax(a, 0, np.int32), m)
    add("argmax", "argmax middle 64x256x256 f32", lambda a: jnp.argmax(a, axis=1), t3)
    add("argmax", "argmin rows 2048x2048 f64", lambda a: jnp.argmin(a, axis=1), m.astype(np.float64))
    add("scan", "cumsum rows 2048x2048 f32", lambda a: jnp.cumsum(a, axis=1), m)
    add("scan", "cumsum columns 2048x2048 f32", lambda a: jnp.cumsum(a, axis=0), m)
    add("scan", "cummax 4M f32", lambda a: lax.cummax(a, axis=0), v)
    add("scan", "cumsum 4M f32", lambda a: lax.cumsum(a, axis=0), v)
    add("scan", "cumsum 4M f32 reverse", lambda a: lax.cumsum(a, axis=0, reverse=True), v)
    add("scan", "cummin 4M f32", lambda a: lax.cummin(a, axis=0), v)
    add("scan", "cummax 4M f32 reverse", lambda a: lax.cummax(a, axis=0, reverse=True), v)
    s1m = normal(1024 * 1024)
    add("sort", "sort 1M f32", jnp.sort, s1m)
    add("sort", "argsort 1M f32", jnp.argsort, s1m)
    add("sort", "sort 1M f32 keys + i32 values", lambda k, x: lax.sort((k, x), num_keys=1),
        s1m, np.arange(s1m.size, dtype=np.int32))
    add("sort", "sort rows 1000x1000 f32", lambda a: jnp.sort(a, axis=-1), normal(1000, 1000))
    # Products: GFLOP/s against the FMA peak (2 flops per multiply-add); matrix-vector
    # products are memory-bound, so their % DRAM column is the one to read.
    for size in (256, 512, 1024, 2048):
        add("dot", f"matmul {size}^3 f32", jnp.matmul, normal(size, size), normal(size, size),
            flops=2 * size ** 3)
    add("dot", "batched 512x32x32 f32", jnp.matmul, normal(512, 32, 32), normal(512, 32, 32),
        flops=2 * 512 * 32 ** 3)
    add("dot", "batched 64x128x128 f32", jnp.matmul, normal(64, 128, 128), normal(64, 128, 128),
        flops=2 * 64 * 128 ** 3)
    add("dot", "matrix-vector 1x4096 @ 4096x4096 f32", jnp.matmul, normal(1, 4096), m16,
        flops=2 * 4096 * 4096)
    add("dot", "matrix-vector 4096x4096 @ 4096 f32", jnp.matmul, m16, normal(4096),
        flops=2 * 4096 * 4096)
    return items


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", default="", help="substring of the group or op name")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--limits", default="", help="path of the machine_limits program")
    parser.add_argument("--dram-mb", type=int, default=256)
    parser.add_argument("--no-xla", action="store_true", help="time StableRT only")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time calls by the process's CPU time (all threads, spinning workers included) "
                             "instead of the wall clock: readable when other processes share the cores")
    parser.add_argument("--device-operands", action="store_true",
                        help="give each op operands computed on the device (a jitted copy of the host array) "
                             "instead of host arrays passed in place, as inside a program")
    args = parser.parse_args()

    library = os.environ.get("STABLERT_LIBRARY_PATH", "build/libstablert_pjrt.so")
    limits_path = args.limits or os.path.join(os.path.dirname(os.path.abspath(library)), "benchmarks", "machine_limits")
    limits = _limits(limits_path, args.dram_mb)
    dram = max(limits["dram_copy_all_gbs"], limits["dram_triad_all_gbs"])
    # Zen 4 runs zmm FMAs at the ymm rate, Zen 5 at twice it: the peak is the better of both.
    # With --cpu-time, a call's CPU time is rated against one core's peak by CPU time (the
    # work a core does while it runs, whichever of the cores runs it).
    if args.cpu_time:
        fma = max(limits.get("fma_zmm_1t_cpu_gflops", 0), limits.get("fma_ymm_1t_cpu_gflops", 0))
    else:
        fma = max(limits.get("fma_zmm_all_gflops", 0), limits.get("fma_ymm_all_gflops", 0))

    import jax
    jax.config.update("jax_enable_x64", True)  # f64 operands stay f64 (index results are then s64)
    import jax.numpy as jnp
    import ml_dtypes
    from jax import lax

    print(f"# jax {jax.__version__}; STABLERT_ISA={os.environ.get('STABLERT_ISA', '(unset)')} -> "
          f"StableRT kernels on {limits['stablert_isa']}; {os.cpu_count()} CPUs; "
          f"load {os.getloadavg()[0]:.2f}; {time.strftime('%Y-%m-%d %H:%M')}")
    print("# machine limits: " + ", ".join(
        f"{k} {v}" for k, v in limits.items() if k not in ("stablert_isa",)))
    print(f"# DRAM bandwidth used for %: {dram:.1f} GB/s (best of copy/triad, all threads, "
          f"{limits['dram_mb']} MB arrays); FMA peak used for %: {fma:.1f} GFLOP/s (best of zmm/ymm, "
          + ("one thread by CPU time); times are process CPU time per call" if args.cpu_time else "all threads)"))
    backends = ["stablert"] + ([] if args.no_xla else ["cpu"])
    header = ["group", "op", "MB moved", "StableRT best ms", "median", "GB/s", "% DRAM", "XLA best ms", "median",
              "GB/s", "StableRT/XLA", "StableRT GFLOP/s", "% FMA peak"]
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
    else:
        print(("{:<15}{:<40}{:>9}" + "{:>12}" * (len(header) - 3)).format(*header))
    for group, name, fn, fargs, flops in _workloads(jnp, lax, ml_dtypes):
        if args.only and args.only not in group and args.only not in name:
            continue
        results = {}
        moved = None
        for backend in backends:
            device = jax.devices(backend)[0]
            dargs = [jax.device_put(a, device) for a in fargs]
            if args.device_operands:
                # Buffers the backend allocated itself (a NumPy array is otherwise used in place,
                # on the pages NumPy's allocator gave it).
                dargs = [jax.jit(lambda v: v + jnp.zeros((), v.dtype))(a) if a.ndim else a for a in dargs]
            # keep_unused: an iota whose operand only gives its shape still runs on that
            # operand's device (JAX would otherwise drop it and run on the default backend).
            jitted = jax.jit(fn, keep_unused=True)
            try:
                out = jitted(*dargs)
                _block(out)
            except Exception as e:  # noqa: BLE001 - report and go on with the next op
                print(f"# {name} on {backend}: {type(e).__name__}: {str(e)[:200]}")
                results[backend] = None
                continue
            if moved is None:
                outs = out if isinstance(out, (tuple, list)) else [out]
                # An iota's operand only gives its shape: it is not read.
                moved = (0 if group == "copy" and name.startswith("iota") else sum(_nbytes(a) for a in dargs))
                moved += sum(_nbytes(o) for o in outs)
            results[backend] = _time(jitted, dargs, args.repeats,
                                     time.process_time if args.cpu_time else time.perf_counter)
        s, x = results.get("stablert"), results.get("cpu")
        cells = [group, name, f"{(moved or 0) / MB:.1f}"]
        for r in (s, x):
            if r is None:
                cells += ["-", "-", "-"] + (["-"] if r is s else [])
                continue
            gbs = moved / r[0] / 1e9
            cells += [f"{r[0] * 1e3:.3f}", f"{r[1] * 1e3:.3f}", f"{gbs:.1f}"]
            if r is s:
                cells.append(f"{100 * gbs / dram:.0f}%")
        cells.append(f"{s[0] / x[0]:.2f}" if s and x else "-")
        if flops and s:
            gflops = flops / s[0] / 1e9
            cells += [f"{gflops:.1f}", f"{100 * gflops / fma:.0f}%"]
        else:
            cells += ["", ""]
        if args.markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print(("{:<15}{:<40}{:>9}" + "{:>12}" * (len(cells) - 3)).format(*cells))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
