#!/usr/bin/env python3
"""Fails unless the plugin library exports exactly one symbol: GetPjrtApi."""
import subprocess
import sys

out = subprocess.run(["nm", "-D", "--defined-only", sys.argv[1]], capture_output=True, text=True, check=True).stdout
symbols = sorted(line.split()[-1] for line in out.splitlines() if line.strip() and line.split()[1] in "TtDdBbRrWwVvi")
if symbols != ["GetPjrtApi"]:
    print("exported symbols:", symbols)
    sys.exit(1)
print("only GetPjrtApi is exported")
