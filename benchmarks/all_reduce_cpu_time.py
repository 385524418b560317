"""One large all-reduce across processes: wall clock and CPU time per call, per process.

Run through the launcher, on StableRT or (JAX_PLATFORMS=cpu) on jaxlib's CPU client with Gloo:

    python -m stablert.launch -n 2 --devices-per-process 2 benchmarks/all_reduce_cpu_time.py [BYTES] [REPEATS]
    JAX_PLATFORMS=cpu python -m stablert.launch -n 2 --devices-per-process 2 benchmarks/all_reduce_cpu_time.py

A shard_map psum over every device of the job, f32, BYTES per device (default 64 MiB); after a
warm-up, REPEATS calls (default 7), each timed by wall clock and by time.process_time (every
thread of the process: device queues, the transport's readers). Each process prints
"RESULT p<i> wall best .. med .. cpu best .. med .." in ms. CPU time is the steadier measure on a
loaded machine. With PERF_OUT=<file>, process 0 records `perf record -g` of itself over the
timed calls (needs perf and the permission to profile).
"""
import os
import sys
import time

if os.environ.get("JAX_PLATFORMS") == "cpu":
    os.environ["JAX_NUM_CPU_DEVICES"] = os.environ.get("STABLERT_DEVICE_COUNT", "1")
import jax

if os.environ.get("JAX_PLATFORMS") == "cpu":
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize()
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

size = int(sys.argv[1]) if len(sys.argv) > 1 else 64 << 20
repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 7
devices = jax.devices()
n = len(devices)
mesh = Mesh(np.array(devices), ("x",))
f = jax.jit(jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                          check_vma=False))
elements = size // 4
local_count = len(jax.local_devices())
local = np.arange(local_count * elements, dtype=np.float32) % 7
x = jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), local, (n * elements,))
f(x).block_until_ready()
walls, cpus = [], []
perf = None
if os.environ.get("PERF_OUT") and jax.process_index() == 0:
    import subprocess

    perf = subprocess.Popen(["perf", "record", "-F", "499", "-g", "-p", str(os.getpid()), "-o", os.environ["PERF_OUT"]],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)
for _ in range(repeats):
    c0, w0 = time.process_time(), time.perf_counter()
    f(x).block_until_ready()
    walls.append((time.perf_counter() - w0) * 1e3)
    cpus.append((time.process_time() - c0) * 1e3)
if perf is not None:
    import signal

    perf.send_signal(signal.SIGINT)
    perf.wait()
# Every process holds the same local data: block i sums to processes x (sum of the local blocks).
out = np.asarray(f(x).addressable_data(0))[:1000]
want = sum(local[d * elements: d * elements + 1000] for d in range(local_count)) * jax.process_count()
np.testing.assert_allclose(out, want, rtol=1e-6)
print(f"RESULT p{jax.process_index()} wall best {min(walls):.1f} med {sorted(walls)[len(walls) // 2]:.1f} "
      f"cpu best {min(cpus):.1f} med {sorted(cpus)[len(cpus) // 2]:.1f}", flush=True)
jax.distributed.shutdown()
