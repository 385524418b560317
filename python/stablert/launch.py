"""Runs a JAX script as a multi-process job on this machine, each process on StableRT.

    python -m stablert.launch -n 2 [--devices-per-process 2] script.py args...

starts N copies of `script.py args...` with a free coordinator port, such that a plain
`jax.distributed.initialize()` in the script joins the job (no arguments needed: the processes
carry their coordinator address, process count and process id in the environment, and the
launcher registers a JAX cluster environment, "stablert_launch", that reads them). Each process
has `--devices-per-process` StableRT devices (STABLERT_DEVICE_COUNT) and JAX_PLATFORMS=stablert
unless the caller set JAX_PLATFORMS.

Every line a process prints is prefixed with "[<process id>] ". When a process fails, the others
get `--grace` seconds to finish on their own (a collective waiting for the failed process fails
within STABLERT_COLLECTIVE_TIMEOUT_SECONDS), then are killed. After `--timeout` seconds all are
killed. The exit status is 0 if every process exited with 0, else the first failing process's
status (124 on timeout). See docs/multi_process.md.

Environment of each process:
    STABLERT_LAUNCH_COORDINATOR   host:port of the JAX coordinator (process 0 serves it)
    STABLERT_LAUNCH_NUM_PROCESSES N
    STABLERT_LAUNCH_PROCESS_ID    0..N-1
    JAX_COORDINATOR_ADDRESS       the coordinator too (JAX reads it itself)
A script may also pass these to jax.distributed.initialize(...) explicitly.
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time

COORDINATOR = "STABLERT_LAUNCH_COORDINATOR"
NUM_PROCESSES = "STABLERT_LAUNCH_NUM_PROCESSES"
PROCESS_ID = "STABLERT_LAUNCH_PROCESS_ID"


def free_port() -> int:
    """A TCP port free on all interfaces now (the coordinator binds it soon after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _forward(stream, prefix: str, out) -> None:
    for line in iter(stream.readline, b""):
        out.buffer.write(prefix.encode() + line)
        out.flush()
    stream.close()


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m stablert.launch", description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--num-processes", type=int, required=True, help="number of processes (>= 1)")
    parser.add_argument("--devices-per-process", type=int, default=None,
                        help="StableRT devices per process (STABLERT_DEVICE_COUNT; default: inherited, else 1)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before every process is killed")
    parser.add_argument("--grace", type=float, default=10.0,
                        help="seconds the others may run on after one process failed")
    parser.add_argument("--port", type=int, default=None, help="coordinator port (default: a free one)")
    parser.add_argument("script", help="the Python script every process runs")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="its arguments")
    options = parser.parse_args(argv)
    if options.num_processes < 1:
        parser.error("-n must be at least 1")
    if options.devices_per_process is not None and options.devices_per_process < 1:
        parser.error("--devices-per-process must be at least 1")
    return options


def launch(argv: list[str]) -> int:
    options = _parse(argv)
    address = f"127.0.0.1:{options.port or free_port()}"
    processes: list[subprocess.Popen] = []
    forwarders: list[threading.Thread] = []
    for rank in range(options.num_processes):
        env = dict(os.environ)
        env[COORDINATOR] = address
        env[NUM_PROCESSES] = str(options.num_processes)
        env[PROCESS_ID] = str(rank)
        env["JAX_COORDINATOR_ADDRESS"] = address
        env.setdefault("JAX_PLATFORMS", "stablert")
        # Every process runs on this machine: collective traffic stays on the loopback interface.
        env.setdefault("STABLERT_COLLECTIVE_ADDRESS", "127.0.0.1")
        if options.devices_per_process is not None:
            env["STABLERT_DEVICE_COUNT"] = str(options.devices_per_process)
        command = [sys.executable, "-m", "stablert._launch_child", options.script, *options.args]
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True)
        processes.append(process)
        for stream, out in ((process.stdout, sys.stdout), (process.stderr, sys.stderr)):
            thread = threading.Thread(target=_forward, args=(stream, f"[{rank}] ", out), daemon=True)
            thread.start()
            forwarders.append(thread)

    def kill(process: subprocess.Popen) -> None:
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    deadline = time.monotonic() + options.timeout
    first_failure: tuple[int, int] | None = None  # (process id, status)
    kill_at: float | None = None
    status = 0
    try:
        while True:
            codes = [p.poll() for p in processes]
            for rank, code in enumerate(codes):
                if code not in (None, 0) and first_failure is None:
                    first_failure = (rank, code)
                    kill_at = time.monotonic() + options.grace
                    sys.stderr.write(f"stablert.launch: process {rank} exited with status {code}; the others "
                                     f"have {options.grace:g} s to finish\n")
            if all(code is not None for code in codes):
                break
            now = time.monotonic()
            if now >= deadline:
                sys.stderr.write(f"stablert.launch: timeout after {options.timeout:g} s; killing processes "
                                 f"{[r for r, c in enumerate(codes) if c is None]}\n")
                for p in processes:
                    kill(p)
                status = 124
                break
            if kill_at is not None and now >= kill_at:
                for rank, p in enumerate(processes):
                    if p.poll() is None:
                        sys.stderr.write(f"stablert.launch: killing process {rank}\n")
                        kill(p)
                kill_at = None
            time.sleep(0.05)
    except KeyboardInterrupt:
        for p in processes:
            kill(p)
        status = 130
    for p in processes:
        p.wait()
    for thread in forwarders:
        thread.join(timeout=5)
    codes = [p.returncode for p in processes]
    if status == 0 and first_failure is not None:
        status = first_failure[1] if first_failure[1] > 0 else 128 - first_failure[1]
    if status != 0:
        sys.stderr.write("stablert.launch: exit statuses " +
                         ", ".join(f"process {r}: {c}" for r, c in enumerate(codes)) + "\n")
    return status


def main() -> None:
    sys.exit(launch(sys.argv[1:]))


if __name__ == "__main__":
    main()
