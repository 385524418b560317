"""Constant folding (passes/fold_constants.h): plan steps, compile time and per-call time of a
program whose index tables, masks and scalars come from constants, and of a 10^7-element
iota + broadcast program that must stay symbolic. Run it against two builds (STABLERT_LIBRARY_PATH)
to compare; prints compile-time counters from the dump and the best of 7 x 2000 calls."""
import os, sys, time, glob, json, tempfile
os.environ.setdefault("JAX_PLATFORMS", "cpu,stablert")
os.environ.setdefault("JAX_ENABLE_X64", "1")
import jax, jax.numpy as jnp, numpy as np
from jax import lax
dev = jax.devices("stablert")[0]

def tables(x):  # index tables, masks and scalars computed from constants, applied to x
    i = jnp.arange(64, dtype=jnp.int32)
    perm = (i * 37 + 11) % 64
    scale = jnp.float32(3) * jnp.float32(4) - jnp.sqrt(jnp.float32(16))
    w = jnp.asarray(np.linspace(-1, 1, 64, dtype=np.float32))
    bias = (w * 2 + 1).reshape(8, 8).T.reshape(64)
    return x[perm] * scale + bias + (i % 2 == 0).astype(jnp.float32)

def large(x):
    n = 10 ** 7
    return jnp.arange(n, dtype=jnp.int32) * 3 + jnp.full((n,), 5, jnp.int32) + x

def counters(fn, args):
    d = tempfile.mkdtemp()
    t = time.perf_counter()
    jax.jit(fn).lower(*args).compile(compiler_options={"xla_dump_to": d})
    dt = time.perf_counter() - t
    c = json.load(open(glob.glob(d + "/stablert.*.timings.json")[0]))
    p = open(glob.glob(d + "/stablert.*.passes.txt")[0]).read()
    return dt, c, p

x = jax.device_put(np.arange(64, dtype=np.float32), dev)
xs = jax.device_put(np.int32(1), dev)
for name, fn, args in [("tables", tables, (x,)), ("large", large, (xs,))]:
    runs = [counters(fn, args) for _ in range(5)]
    c = runs[-1][1]
    print(name, "compile ms min/max", round(min(r[0] for r in runs) * 1e3, 2), round(max(r[0] for r in runs) * 1e3, 2),
          "passes_us", sorted(r[1]["phases_us"]["passes"] for r in runs)[2],
          "plan_steps", c["counters"]["plan_steps"], "constants", c["counters"]["plan_constants"],
          "largest_constant_bytes", c["counters"]["largest_constant_bytes"])
    print("  ", [l for l in runs[-1][2].splitlines() if l.startswith("fold")])
f = jax.jit(tables)
f(x).block_until_ready()
best = []
for _ in range(7):
    t = time.perf_counter()
    for _ in range(2000):
        y = f(x)
    y.block_until_ready()
    best.append((time.perf_counter() - t) / 2000 * 1e6)
print("tables per call us: best", round(min(best), 2), "range", round(min(best), 2), "-", round(sorted(best)[-2], 2))
