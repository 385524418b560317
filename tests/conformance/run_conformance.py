#!/usr/bin/env python3
"""Runs `stablert conform` on a plugin and checks its report.

usage: run_conformance.py STABLERT_CLI PLUGIN REPORT [--expect NAME=OUTCOME ...] [--all-pass]
                          [--diff-with OTHER] [--filter TEXT]

--all-pass: every test must pass, except those given with --expect, which must end with the
outcome named there (a known gap or a known deviation of that plugin, each with its reason in
docs/host.md). Without --all-pass the run must only complete, with a result for every test. --diff-with adds
the differential tier against OTHER; --filter selects tests by name.
"""
import argparse
import json
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("cli")
    parser.add_argument("plugin")
    parser.add_argument("report")
    parser.add_argument("--expect", action="append", default=[], metavar="NAME=OUTCOME")
    parser.add_argument("--all-pass", action="store_true")
    parser.add_argument("--diff-with")
    parser.add_argument("--filter")
    args = parser.parse_args()
    extra = (["--diff-with", args.diff_with] if args.diff_with else []) + (["--filter", args.filter] if args.filter else [])
    run = subprocess.run([args.cli, "conform", args.plugin, "--json", args.report, "--timeout", "120", *extra],
                         capture_output=True, text=True, timeout=1800)
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        print(f"stablert conform exited with {run.returncode}")
        return 1
    with open(args.report) as f:
        results = {r["name"]: r for r in json.load(f)["results"]}
    expected = dict(item.split("=", 1) for item in args.expect)
    bad = []
    for name, outcome in expected.items():
        if name not in results:
            bad.append(f"{name}: expected {outcome}, but there is no such test")
        elif results[name]["outcome"] != outcome:
            bad.append(f"{name}: expected {outcome}, got {results[name]['outcome']}: {results[name]['detail']}")
    if args.all_pass:
        for name, result in results.items():
            if name not in expected and result["outcome"] != "pass":
                bad.append(f"{name}: {result['outcome']}: {result['detail']}")
    if not results:
        bad.append("the report has no results")
    for line in bad:
        print("FAIL", line)
    print(f"{len(results)} tests, {len(bad)} unexpected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
