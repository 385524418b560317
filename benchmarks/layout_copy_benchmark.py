"""Time copies of arrays in a layout into host memory on StableRT and on XLA:CPU in one process.

`jax.device_put(arr, arr.sharding.with_memory_kind("pinned_host"))` of an f32 array already
on the device in the layout named: a memcpy for row-major arrays, a conversion to row-major
for the others (both backends give copies across memory kinds the default layout). Prints,
per copy, the best of --rounds rounds of --copies copies: CPU time of the process (all its
threads; steadier than wall time on a loaded machine) and wall time.

usage: PYTHONPATH=python STABLERT_LIBRARY_PATH=build/libstablert_pjrt.so \\
       python benchmarks/layout_copy_benchmark.py [--rounds 5] [--copies 20]
"""
import argparse
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu,stablert")
import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental.layout import Format, Layout  # noqa: E402
from jax._src.sharding_impls import make_single_device_sharding  # noqa: E402

CASES = [((1024, 1024), (1, 0)), ((1024, 1024), (0, 1)), ((64, 128, 256), (2, 0, 1))]


def bench(device, shape, m2m, kind, copies, rounds):
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    arr = jax.device_put(x, Format(Layout(major_to_minor=m2m), make_single_device_sharding(device)))
    dst = arr.sharding.with_memory_kind(kind)
    out = jax.device_put(arr, dst).block_until_ready()
    np.testing.assert_array_equal(np.asarray(out), x)
    cpu, wall = [], []
    for _ in range(rounds):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(copies):
            jax.device_put(arr, dst).block_until_ready()
        wall.append((time.perf_counter() - w0) / copies)
        cpu.append((time.process_time() - c0) / copies)
    return min(cpu) * 1e3, min(wall) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--copies", type=int, default=20)
    p.add_argument("--memory-kind", default="pinned_host")
    args = p.parse_args()
    print(f"load: {os.getloadavg()}")
    for shape, m2m in CASES:
        for platform in ("cpu", "stablert"):
            cpu_ms, wall_ms = bench(jax.devices(platform)[0], shape, m2m, args.memory_kind, args.copies, args.rounds)
            print(f"{platform:9s} {str(shape):16s} major_to_minor={m2m}: cpu time {cpu_ms:.3f} ms, wall {wall_ms:.3f} ms")


if __name__ == "__main__":
    main()
