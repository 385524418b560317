"""Memory and time of a donated training step: an MLP's Adam step, `jax.jit(step,
donate_argnums=0)`, over parameters and optimizer state of a few tens of MB.

Each library runs in its own process (the buffer cache and the peak RSS are per process):

    python benchmarks/donation_benchmark.py [--library path/to/libstablert_pjrt.so ...]

Per library it reports the state's size, the best time per step over several runs, the
resident memory after warm-up and the peak above it while stepping (VmHWM after resetting
it through /proc/self/clear_refs), and the device's buffer allocations per step where the
library counts them (PJRT_Device_MemoryStats).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

SIZES = [1024, 2048, 2048, 1024]  # 8.4 M parameters: 34 MB, 101 MB with Adam's moments
BATCH = 128


def _status(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _child(steps, runs, donate):
    import jax
    import jax.numpy as jnp
    import numpy as np

    def loss_fn(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.relu(h @ w + b)
        w, b = params[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    def adam_step(state, x, y):
        params, m, v, t = state
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        t = t + 1
        m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
        v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
        tf = t.astype(jnp.float32)
        scale = jnp.sqrt(1 - 0.999 ** tf) / (1 - 0.9 ** tf)
        params = jax.tree.map(lambda p, m, v: p - 1e-4 * scale * m / (jnp.sqrt(v) + 1e-8), params, m, v)
        return (params, m, v, t), loss

    rng = np.random.default_rng(0)
    params = [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32))
              for a, b in zip(SIZES[:-1], SIZES[1:])]
    zeros = jax.tree.map(np.zeros_like, params)
    device = jax.devices("stablert")[0]
    state = jax.device_put((params, zeros, jax.tree.map(np.copy, zeros), np.int32(0)), device)
    x = jax.device_put(rng.standard_normal((BATCH, SIZES[0])).astype(np.float32), device)
    y = jax.device_put(rng.standard_normal((BATCH, SIZES[-1])).astype(np.float32), device)
    state_bytes = sum(leaf.nbytes for leaf in jax.tree.leaves(state))
    step = jax.jit(adam_step, donate_argnums=0 if donate else ())
    for _ in range(3):
        state, loss = step(state, x, y)
    jax.block_until_ready(state)

    def allocs():
        try:
            stats = device.memory_stats()
            return stats["num_allocs"] if stats else None
        except Exception:  # noqa: BLE001 - a library without the statistics
            return None

    rss = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    before = allocs()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(steps):
            state, loss = step(state, x, y)
        jax.block_until_ready((state, loss))
        times.append((time.perf_counter() - start) / steps)
    after = allocs()
    peak = _status("VmHWM")
    json.dump({"state_mb": state_bytes / 1e6, "best_ms": min(times) * 1e3, "worst_ms": max(times) * 1e3,
               "rss_mb": rss / 1e6, "peak_above_mb": (peak - rss) / 1e6,
               "allocs_per_step": None if before is None else (after - before) / (steps * runs),
               "loss": float(loss)}, sys.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", action="append", help="libstablert_pjrt.so to measure (repeatable)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-donate", action="store_true", help="also measure the step without donation")
    args = parser.parse_args()
    if args.child:
        _child(args.steps, args.runs, not args.no_donate)
        return
    libraries = args.library or [os.environ.get("STABLERT_LIBRARY_PATH", "")]
    print(f"{'library':<50} {'state MB':>8} {'best ms':>8} {'worst ms':>8} {'RSS MB':>7} "
          f"{'peak+ MB':>8} {'allocs/step':>11}")
    runs = [(library, donate) for library in libraries for donate in ((True, False) if args.no_donate else (True,))]
    for library, donate in runs:
        env = dict(os.environ, JAX_PLATFORMS="stablert")
        if library:
            env["STABLERT_LIBRARY_PATH"] = library
        command = [sys.executable, __file__, "--child", "--steps", str(args.steps), "--runs", str(args.runs)]
        out = subprocess.run(command + ([] if donate else ["--no-donate"]), env=env, check=True,
                             capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        allocs = "n/a" if r["allocs_per_step"] is None else f"{r['allocs_per_step']:.1f}"
        name = library[-40:] + ("" if donate else " (no donation)")
        print(f"{name:<50} {r['state_mb']:8.1f} {r['best_ms']:8.1f} {r['worst_ms']:8.1f} "
              f"{r['rss_mb']:7.0f} {r['peak_above_mb']:8.1f} {allocs:>11}")


if __name__ == "__main__":
    main()
