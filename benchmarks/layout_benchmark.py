"""Time arrays in non-row-major layouts on StableRT and on XLA:CPU in one process.

For an f32 array of --size x --size: `x * 2` with row-major and with column-major input and
output (`jit` with `Format(Layout(major_to_minor=...))`), `x.T` with the output layout left
to the compiler (`Layout.AUTO`), `device_put` into the column-major layout, and reading a
column-major array back into NumPy (row-major). Prints milliseconds, best and median of
--repeats runs.

usage: PYTHONPATH=python STABLERT_LIBRARY_PATH=build/libstablert_pjrt.so \\
       python benchmarks/layout_benchmark.py [--size 4096] [--repeats 7]
"""
import argparse
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu,stablert")
import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental.layout import Format, Layout  # noqa: E402
from jax._src.sharding_impls import make_single_device_sharding  # noqa: E402


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    times.sort()
    return f"{times[0] * 1e3:7.1f} / {times[len(times) // 2] * 1e3:7.1f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal((args.size, args.size)).astype(np.float32)
    print(f"f32[{args.size},{args.size}], ms best / median of {args.repeats}")
    print(f"{'backend':9s} {'x*2 row-major':>17s} {'x*2 col-major':>17s} {'AUTO x.T':>17s} "
          f"{'device_put col':>17s} {'np.asarray(col)':>17s}")
    for platform in ("stablert", "cpu"):
        device = jax.devices(platform)[0]
        sharding = make_single_device_sharding(device)
        col = Format(Layout(major_to_minor=(1, 0)), sharding)
        row = Format(Layout(major_to_minor=(0, 1)), sharding)
        x_row, x_col = jax.device_put(x, device), jax.device_put(x, col)
        twice_row = jax.jit(lambda a: a * 2, in_shardings=row, out_shardings=row)
        twice_col = jax.jit(lambda a: a * 2, in_shardings=col, out_shardings=col)
        transpose_auto = jax.jit(lambda a: a.T, out_shardings=Format(Layout.AUTO))
        # jax caches an array's NumPy value: a fresh array per read.
        fresh = iter([jax.block_until_ready(twice_col(x_col)) for _ in range(args.repeats)])
        print(f"{platform:9s} {timed(lambda: twice_row(x_row), args.repeats):>17s} "
              f"{timed(lambda: twice_col(x_col), args.repeats):>17s} "
              f"{timed(lambda: transpose_auto(x_row), args.repeats):>17s} "
              f"{timed(lambda: jax.device_put(x, col), args.repeats):>17s} "
              f"{timed(lambda: np.asarray(next(fresh)), args.repeats):>17s}")


if __name__ == "__main__":
    main()
