"""FFT through JAX on StableRT and on XLA's CPU backend (DUCC), in the same process.

    .venv/bin/python benchmarks/fft_benchmark.py [--repeats 50]

Each case is one jitted program; the time is the best wall time of one call including
dispatch (block_until_ready) over the repeats, after a warm-up call (the best is stable on a
shared machine; medians drift with load). Prints a markdown table with the ratio
stablert / cpu (below 1: StableRT is faster).
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

CASES = [
    # name, function, input shape, dtype
    ("fft 1-D 1024 (batch 64)", jnp.fft.fft, (64, 1024), np.complex64),
    ("fft 1-D 4096 (batch 16)", jnp.fft.fft, (16, 4096), np.complex64),
    ("fft 2-D 256x256", jnp.fft.fft2, (256, 256), np.complex64),
    ("ifft 1-D 1000 (batch 64)", jnp.fft.ifft, (64, 1000), np.complex64),
    ("fft 1-D 1021 prime (batch 16)", jnp.fft.fft, (16, 1021), np.complex64),
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


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=50)
    args = p.parse_args()
    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    cpu, srt = jax.devices("cpu")[0], jax.devices("stablert")[0]
    print("| case | XLA:CPU (ms) | StableRT (ms) | StableRT / XLA |")
    print("|---|---:|---:|---:|")
    for name, fn, shape, dtype in CASES:
        x = rng.standard_normal(shape)
        if np.issubdtype(dtype, np.complexfloating):
            x = x + 1j * rng.standard_normal(shape)
        x = x.astype(dtype)
        t_cpu = bench(fn, x, cpu, args.repeats)
        t_srt = bench(fn, x, srt, args.repeats)
        print(f"| {name} | {t_cpu * 1e3:.3f} | {t_srt * 1e3:.3f} | {t_srt / t_cpu:.2f} |", flush=True)


if __name__ == "__main__":
    main()
