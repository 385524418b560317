"""Collectives across processes: StableRT vs XLA's CPU backend (Gloo collectives), per call.

Run under the launcher, once per backend:
    python -m stablert.launch -n 2 --devices-per-process 2 benchmarks/multi_process_benchmark.py stablert
    JAX_PLATFORMS=cpu python -m stablert.launch -n 2 benchmarks/multi_process_benchmark.py cpu
(cpu: JAX_NUM_CPU_DEVICES is set from STABLERT_DEVICE_COUNT, collectives through Gloo). Process 0
prints one line per collective and size: the best and median of `--repeats` timed calls (after
one warm-up), in milliseconds.
"""
import os
import sys
import time

backend = sys.argv[1] if len(sys.argv) > 1 else "stablert"
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 7
if backend == "cpu":
    os.environ["JAX_NUM_CPU_DEVICES"] = os.environ.get("STABLERT_DEVICE_COUNT", "2")

import jax  # noqa: E402

if backend == "cpu":
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize()

import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

devices = jax.devices(backend)
n = len(devices)
mesh = Mesh(np.array(devices), ("x",))


def smap(f, out_specs):
    return jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=out_specs, check_vma=False))


ops = {
    "psum": smap(lambda b: jax.lax.psum(b, "x"), P()),
    "all_gather": smap(lambda b: jax.lax.all_gather(b, "x", tiled=True), P()),
    "ppermute": smap(lambda b: jax.lax.ppermute(b, "x", [(i, (i + 1) % n) for i in range(n)]), P("x")),
}
for elements in (1024, 256 * 1024, 4 * 1024 * 1024):  # f32 per device: 4 KiB, 1 MiB, 16 MiB
    g = np.ones((n * elements // 256, 256), np.float32)
    x = jax.make_array_from_callback(g.shape, NamedSharding(mesh, P("x")), lambda index: g[index])
    for name, f in ops.items():
        f(x).block_until_ready()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            f(x).block_until_ready()
            times.append((time.perf_counter() - start) * 1e3)
        if jax.process_index() == 0:
            print(f"{backend} {jax.process_count()}x{n // jax.process_count()} {name} {elements * 4 // 1024} KiB/device: "
                  f"best {min(times):.2f} ms, median {sorted(times)[len(times) // 2]:.2f} ms", flush=True)
