"""Loops: StableRT against JAX's CPU backend (XLA) in the same process.

Workloads whose time is the loop machinery rather than the arithmetic:
  - scan n=200/400/800 over a 16x128 f32 carry stacking its outputs (a linear-time loop
    only if the stacked output is updated in place),
  - the gradient of an LSTM-like scan (200 steps, hidden 64, batch 16),
  - a 2000-step fori_loop of an explicit Euler step on an f32 scalar (per-iteration
    overhead of a small body), and scalar bodies that isolate per-iteration costs
    (an add, dependent multiply-adds, sin, exp; and one step: the call itself).
Run time: one jitted call with its arguments on the device, until the result is ready,
best and median of --repeats after warm-up.

    .venv/bin/python benchmarks/loop_benchmark.py [--repeats 30] [--only scan]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np


def _workloads(jax, jnp, lax):
    rng = np.random.default_rng(0)
    f32 = np.float32

    def normal(*shape):
        return rng.standard_normal(shape).astype(f32)

    def scan(c, w, xs):
        def body(c, x):
            c = jnp.tanh(c @ w * 0.01 + x)
            return c, c
        return lax.scan(body, c, xs)

    hidden, batch, steps = 64, 16, 200

    def lstm_loss(params, xs, h0, c0):
        wx, wh, b = params

        def cell(carry, x):
            h, c = carry
            z = x @ wx + h @ wh + b
            i, f, g, o = jnp.split(z, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h

        _, hs = lax.scan(cell, (h0, c0), xs)
        return jnp.mean(hs ** 2)

    lstm_params = (normal(32, 4 * hidden) * 0.1, normal(hidden, 4 * hidden) * 0.1, normal(4 * hidden) * 0.1)

    def euler(y):
        return lax.fori_loop(0, 2000, lambda i, y: y + 0.001 * (-0.5 * y + jnp.sin(y * 1.1) * 0.3 - y * y * 0.01 + 1.0), y)

    out = []
    for n in (200, 400, 800):
        out.append((f"scan n={n} 16x128 f32 stacked", scan, (normal(16, 128), normal(128, 128), normal(n, 16, 128))))
    out.append((f"LSTM gradient {steps} steps h{hidden} b{batch}", jax.grad(lstm_loss),
                (lstm_params, normal(steps, batch, 32), normal(batch, hidden), normal(batch, hidden))))
    out.append(("Euler fori_loop 2000 steps f32 scalar", euler, (f32(0.5),)))

    # Scalar bodies that isolate the per-iteration costs (2000 steps each, and one step: the
    # cost of the call itself).
    def muladd5(_, y):
        for _ in range(5):
            y = y * 0.999 + 0.001
        return y

    bodies = [("y + 1", lambda _, y: y + 1.0), ("five dependent y * 0.999 + 0.001", muladd5),
              ("sin(y) + 0.5", lambda _, y: jnp.sin(y) + 0.5), ("exp(-y) + 0.5", lambda _, y: jnp.exp(-y) + 0.5)]
    for label, body in bodies:
        out.append((f"scalar body {label}, 2000 steps", lambda y, body=body: lax.fori_loop(0, 2000, body, y),
                    (f32(0.5),)))
    out.append(("scalar body y + 1, 1 step (the call)", lambda y: lax.fori_loop(0, 1, lambda _, y: y + 1.0, y),
                (f32(0.5),)))
    return out


def _measure(jax, fn, args, device, repeats):
    args = jax.device_put(args, device)
    compiled = jax.jit(fn).lower(*args).compile()
    jax.block_until_ready(compiled(*args))
    jax.block_until_ready(compiled(*args))
    runs = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        runs.append(time.perf_counter() - t)
    return min(runs), statistics.median(runs)


def _fmt(s):
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.2f} ms"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--only", action="append", default=[], help="workloads whose name contains this (repeatable)")
    args = p.parse_args(argv)
    os.environ.setdefault("JAX_PLATFORMS", "stablert,cpu")
    import jax
    import jax.numpy as jnp
    from jax import lax
    cpu, stablert = jax.devices("cpu")[0], jax.devices("stablert")[0]
    print(f"jax {jax.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print("\n| workload | XLA (best / median) | StableRT (best / median) | ratio (best) |\n|---|---:|---:|---:|")
    for name, fn, fn_args in _workloads(jax, jnp, lax):
        if args.only and not any(part in name for part in args.only):
            continue
        xb, xm = _measure(jax, fn, fn_args, cpu, args.repeats)
        sb, sm = _measure(jax, fn, fn_args, stablert, args.repeats)
        print(f"| {name} | {_fmt(xb)} / {_fmt(xm)} | {_fmt(sb)} / {_fmt(sm)} | {sb / xb:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
