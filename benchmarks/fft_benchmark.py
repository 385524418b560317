"""FFT through JAX on StableRT and on XLA's CPU backend (DUCC), in the same process.

    .venv/bin/python benchmarks/fft_benchmark.py [--repeats 30] [--only SUBSTRING] [--compile]

Each case is one jitted program; the time is the best wall time of one call including
dispatch (block_until_ready) over the repeats, after a warm-up call (the best is stable on a
shared machine; medians drift with load). Prints a markdown table with the ratio
stablert / cpu (below 1: StableRT is faster). With --compile, also the time of
`jax.jit(f).lower(x).compile()` per backend (best of 3, fresh function each time, so no
cache hit): FFT plans must be built on the first run, not at compile time.
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

M = 1 << 20
CASES = [
    # name, function, input shape, dtype
    ("fft 1-D 1M c64", jnp.fft.fft, (M,), np.complex64),
    ("ifft 1-D 1M c64", jnp.fft.ifft, (M,), np.complex64),
    ("rfft 1-D 1M f32", jnp.fft.rfft, (M,), np.float32),
    ("irfft 1-D 1M c64", lambda x: jnp.fft.irfft(x, n=M), (M // 2 + 1,), np.complex64),
    ("fft 1-D 1M c128", jnp.fft.fft, (M,), np.complex128),
    ("rfft 1-D 1M f64", jnp.fft.rfft, (M,), np.float64),
    ("fft 2-D 1024x1024 c64", jnp.fft.fft2, (1024, 1024), np.complex64),
    ("rfft 2-D 1024x1024 f32", jnp.fft.rfft2, (1024, 1024), np.float32),
    ("fft 3-D 64x128x128 c64", jnp.fft.fftn, (64, 128, 128), np.complex64),
    ("fft 1-D 1024 (batch 1024) c64", jnp.fft.fft, (1024, 1024), np.complex64),
    ("fft 1-D 1024 (batch 64) c64", jnp.fft.fft, (64, 1024), np.complex64),
    ("fft 1-D 4096 (batch 16) c64", jnp.fft.fft, (16, 4096), np.complex64),
    ("fft 2-D 256x256 c64", jnp.fft.fft2, (256, 256), np.complex64),
    ("ifft 1-D 1000 (batch 64) c64", jnp.fft.ifft, (64, 1000), np.complex64),
    ("fft 1-D 1021 prime (batch 16) c64", jnp.fft.fft, (16, 1021), np.complex64),
    ("fft 1-D 1000003 prime c64", jnp.fft.fft, (1000003,), np.complex64),
    ("fft 1-D 1000000 c64", jnp.fft.fft, (1000000,), np.complex64),
    ("rfft 1-D 4096 (batch 16) f32", jnp.fft.rfft, (16, 4096), np.float32),
    ("fft 1-D 4096 (batch 16) c128", jnp.fft.fft, (16, 4096), np.complex128),
]


def bench(fn, x, device, repeats):
    x = jax.device_put(x, device)
    f = jax.jit(fn)
    f(x).block_until_ready()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f(x).block_until_ready()
        times.append(time.perf_counter() - t0)
    return min(times)


def compile_time(fn, x, device):
    x = jax.device_put(x, device)
    best = float("inf")
    for i in range(3):
        f = jax.jit(lambda v, i=i: fn(v))  # a new function each time: no compile-cache hit
        lowered = f.lower(x)
        t0 = time.perf_counter()
        lowered.compile()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--only", default="", help="run the cases whose name contains this")
    p.add_argument("--compile", action="store_true", help="also time compilation")
    args = p.parse_args()
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    cpu, srt = jax.devices("cpu")[0], jax.devices("stablert")[0]
    head = "| case | XLA:CPU (ms) | StableRT (ms) | StableRT / XLA |"
    if args.compile:
        head += " compile XLA (ms) | compile StableRT (ms) |"
    print(head)
    print("|---|---:|---:|---:|" + ("---:|---:|" if args.compile else ""))
    for name, fn, shape, dtype in CASES:
        if args.only not in name:
            continue
        x = rng.standard_normal(shape)
        if np.issubdtype(dtype, np.complexfloating):
            x = x + 1j * rng.standard_normal(shape)
        x = x.astype(dtype)
        t_cpu = bench(fn, x, cpu, args.repeats)
        t_srt = bench(fn, x, srt, args.repeats)
        row = f"| {name} | {t_cpu * 1e3:.3f} | {t_srt * 1e3:.3f} | {t_srt / t_cpu:.2f} |"
        if args.compile:
            row += f" {compile_time(fn, x, cpu) * 1e3:.1f} | {compile_time(fn, x, srt) * 1e3:.2f} |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
