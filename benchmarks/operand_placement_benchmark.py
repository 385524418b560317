"""Operand placement and sharing for `jnp.tanh(a * b + c)` over 4M f32 (the end-to-end row
"elementwise a*b+c, tanh, 4M f32"), on stablert and XLA's CPU backend in one process.

  PYTHONPATH=python STABLERT_LIBRARY_PATH=build/libstablert_pjrt.so \\
    .venv/bin/python benchmarks/operand_placement_benchmark.py [--repeats 30]

Part 1, sharing: the row's arguments as the row makes them, one NumPy array passed three
times, for a host array that is 64-byte aligned and one at 16 mod 64: how many of the three
device arguments borrow the host array (one buffer read three times, or three copies), and
the best time per call.
Part 2, placement: three distinct host arrays borrowed at chosen offsets modulo 4 KiB (equal,
64/128 bytes apart, 1 KiB apart), and the output's offset; the best time per call on stablert.
Times are the best of `--repeats` calls by process CPU time (all threads) and by the wall
clock; read CPU time when other processes share the cores.
"""
import argparse
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "stablert,cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

N = 1 << 22
PLACEMENTS = [(0, 0, 0), (64, 64, 64), (0, 64, 128), (0, 128, 256), (0, 1024, 2048), (1024, 2048, 3072),
              (2048, 2048, 0)]


def _at(values, offset, modulo):
    """A copy of `values` whose data starts `offset` bytes past a multiple of `modulo`."""
    raw = np.empty(values.nbytes + 2 * modulo, np.uint8)
    start = (-raw.ctypes.data) % modulo + offset
    placed = raw[start:start + values.nbytes].view(values.dtype)
    placed[...] = values
    return placed


def _best(compiled, args, repeats):
    compiled(*args).block_until_ready()
    compiled(*args).block_until_ready()
    cpu = wall = float("inf")
    for _ in range(repeats):
        t, w = time.process_time(), time.perf_counter()
        compiled(*args).block_until_ready()
        cpu, wall = min(cpu, time.process_time() - t), min(wall, time.perf_counter() - w)
    return cpu, wall


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=30)
    args = p.parse_args()
    fn = lambda a, b, c: jnp.tanh(a * b + c)  # noqa: E731
    values = np.random.default_rng(0).standard_normal(N).astype(np.float32)
    cpu, stablert = jax.devices("cpu")[0], jax.devices("stablert")[0]
    print(f"jax {jax.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")

    print("\n| host array mod 64 | backend | arguments borrowed | CPU time | wall |\n|---:|---|---:|---:|---:|")
    for mod64 in (0, 16):
        host = _at(values, mod64, 64)
        for device in (cpu, stablert):
            put = jax.device_put((host,) * 3, device)
            borrowed = sum(a.unsafe_buffer_pointer() == host.ctypes.data for a in put)
            compiled = jax.jit(fn).lower(*put).compile()
            c, w = _best(compiled, put, args.repeats)
            print(f"| {mod64} | {device.platform} | {borrowed} of 3 | {c * 1e3:.2f} ms | {w * 1e3:.2f} ms |",
                  flush=True)

    print("\n| inputs mod 4 KiB | output mod 4 KiB | CPU time | wall |\n|---|---:|---:|---:|")
    compiled = None
    for offsets in PLACEMENTS:
        hosts = [_at(values, o, 4096) for o in offsets]
        put = [jax.device_put(h, stablert) for h in hosts]
        if not all(a.unsafe_buffer_pointer() == h.ctypes.data for a, h in zip(put, hosts)):
            raise SystemExit("a placed input was copied, not borrowed: placement not under control")
        compiled = compiled or jax.jit(fn).lower(*put).compile()
        out = compiled(*put)
        out_offset = out.unsafe_buffer_pointer() % 4096
        del out
        c, w = _best(compiled, put, args.repeats)
        print(f"| {', '.join(map(str, offsets))} | {out_offset} | {c * 1e3:.2f} ms | {w * 1e3:.2f} ms |", flush=True)


if __name__ == "__main__":
    main()
