#!/usr/bin/env python3
"""Two `stablert info` processes as the nodes of one job: node 0 serves the key-value store
over TCP, node 1 connects to it; each must see 4 devices, 2 of them its own.

usage: two_process_info_test.py STABLERT_CLI PLUGIN
"""
import re
import socket
import subprocess
import sys


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    cli, plugin = sys.argv[1], sys.argv[2]
    port = free_port()
    common = [cli, "info", plugin, "--no-probe", "--nodes", "2", "--option", "device_count=2"]
    server = subprocess.Popen(common + ["--node", "0", "--kv-serve", str(port)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    client = subprocess.Popen(common + ["--node", "1", "--kv-connect", f"127.0.0.1:{port}"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    failures = []
    for node, process in enumerate((server, client)):
        try:
            out, err = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
            client.kill()
            print(f"node {node} did not finish within 120 s")
            return 1
        print(f"--- node {node} (exit {process.returncode})\n{out}{err}")
        if process.returncode != 0:
            failures.append(f"node {node} exited with {process.returncode}")
        if f", process {node}\n" not in out or "devices: 4 (2 addressable)" not in out:
            failures.append(f"node {node}: expected process {node} with 4 devices, 2 addressable")
        own = re.findall(r"^  (\d+): .*, process (\d+)$", out, re.M)
        if sorted(int(d) for d, p in own if int(p) == node) != [2 * node, 2 * node + 1]:
            failures.append(f"node {node}: its own devices are not {2 * node} and {2 * node + 1}: {own}")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
