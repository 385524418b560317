"""All-reduce across processes: StableRT against jaxlib's CPU client (Gloo collectives), same run.

Without arguments the script is the driver: for each process count (--processes, default 2 and
4) it starts the job twice through the launcher (`python -m stablert.launch`), once per backend,
each process with --devices-per-process devices, and prints one table. Each job times a
shard_map psum over every device of the job (f32, --sizes bytes per device) and, with
--all-ops, all_gather and ppermute too: best and median of --repeats calls after one warm-up,
in milliseconds, as process 0 sees them (the call ends when every process has its result).

    .venv/bin/python benchmarks/multi_process_benchmark.py [--processes 2 4] [--devices-per-process 2]

The cpu backend gets JAX_NUM_CPU_DEVICES = devices per process and Gloo collectives.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

SIZES = ["1K", "16K", "256K", "1M", "4M", "16M", "64M"]


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def worker(backend: str, sizes: list[str], repeats: int, all_ops: bool) -> None:
    if backend == "cpu":
        os.environ["JAX_NUM_CPU_DEVICES"] = os.environ.get("STABLERT_DEVICE_COUNT", "1")
    import jax

    if backend == "cpu":
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize()
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    devices = jax.devices(backend)
    n = len(devices)
    mesh = Mesh(np.array(devices), ("x",))

    def smap(f, out_specs):
        return jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x"), out_specs=out_specs, check_vma=False))

    ops = {"psum": smap(lambda b: jax.lax.psum(b, "x"), P("x"))}
    if all_ops:
        ops["all_gather"] = smap(lambda b: jax.lax.all_gather(b, "x", tiled=True), P("x"))
        ops["ppermute"] = smap(lambda b: jax.lax.ppermute(b, "x", [(i, (i + 1) % n) for i in range(n)]), P("x"))
    for size in sizes:
        elements = max(1, parse_size(size) // 4)
        local = np.arange(len(jax.local_devices(backend=backend)) * elements, dtype=np.float32) % 7
        x = jax.make_array_from_process_local_data(NamedSharding(mesh, P("x")), local, (n * elements,))
        for name, f in ops.items():
            f(x).block_until_ready()
            times = []
            for _ in range(repeats):
                start = time.perf_counter()
                f(x).block_until_ready()
                times.append((time.perf_counter() - start) * 1e3)
            if jax.process_index() == 0:
                print(f"RESULT {backend} {name} {size} {min(times):.3f} {sorted(times)[len(times) // 2]:.3f}", flush=True)


def drive(args: argparse.Namespace) -> int:
    rows: dict[tuple[int, str, str], dict[str, tuple[float, float]]] = {}
    for processes in args.processes:
        for backend in ("stablert", "cpu"):
            env = dict(os.environ)
            env["JAX_PLATFORMS"] = backend
            command = [sys.executable, "-m", "stablert.launch", "-n", str(processes), "--devices-per-process",
                       str(args.devices_per_process), "--timeout", "900", __file__, "--worker", backend,
                       "--repeats", str(args.repeats), "--sizes", *args.sizes] + (["--all-ops"] if args.all_ops else [])
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                print(f"{backend} with {processes} processes failed ({done.returncode}):\n{done.stderr[-3000:]}")
                return 1
            for line in done.stdout.splitlines():
                match = re.match(r"\[0\] RESULT (\S+) (\S+) (\S+) (\S+) (\S+)", line)
                if match:
                    b, op, size, best, median = match.groups()
                    rows.setdefault((processes, op, size), {})[b] = (float(best), float(median))
    print(f"all-reduce etc. across processes, {args.devices_per_process} devices per process; "
          f"ms, best (median) of {args.repeats}; load {os.getloadavg()[0]:.1f}")
    print("| processes | op | bytes per device | StableRT | CPU client (Gloo) | StableRT / Gloo |")
    print("|---|---|---|---|---|---|")
    for (processes, op, size), result in rows.items():
        s, c = result.get("stablert"), result.get("cpu")
        fmt = lambda r: f"{r[0]:.3f} ({r[1]:.3f})" if r else "-"  # noqa: E731
        ratio = f"{s[0] / c[0]:.2f}" if s and c else "-"
        print(f"| {processes} | {op} | {size} | {fmt(s)} | {fmt(c)} | {ratio} |", flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--worker", choices=["stablert", "cpu"], help=argparse.SUPPRESS)
    parser.add_argument("--processes", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--devices-per-process", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--sizes", nargs="+", default=SIZES)
    parser.add_argument("--all-ops", action="store_true", help="also all_gather and ppermute")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.sizes, args.repeats, args.all_ops)
        return 0
    return drive(args)


if __name__ == "__main__":
    sys.exit(main())
