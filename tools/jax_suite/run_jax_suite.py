#!/usr/bin/env python3
"""Runs JAX's own test modules on JAX's CPU backend and on StableRT and compares.

  .venv/bin/python tools/jax_suite/run_jax_suite.py [--modules lax_test,fft_test] [--quick]
                                                     [--out docs/jax_suite.md]

For each module it runs pytest twice on the tests/ of the JAX release matching the installed
jax (extracted from a git mirror of jax-ml/jax into a scratch directory; nothing of JAX is copied
into this repository), once with JAX_PLATFORMS=cpu and once with StableRT as the default backend
(JAX_PLATFORMS=stablert,cpu, so tests that ask for CPU devices still find them, as on a GPU
machine). It prints, per module, the tests passing on stablert out of those passing on CPU,
writes the ids of the tests that pass on CPU but not on stablert (with the first line of their
error) to a file, and, with --out, a markdown report with the table and the failures grouped by
cause.

JAX's test utilities key skips and tolerances on `jtu.device_under_test()`, which is the default
backend's platform name unless the `jax_test_dut` flag is set. For stablert it is set to "cpu"
(--dut), so the suite treats StableRT as the CPU-class platform it is (skip lists, dtype lists,
tolerances). (Its device kind is "StableRT CPU (...)"; JAX's test utilities read device kinds only
for TPU and GPU generations.)

Runtime is bounded by JAX's own knobs: JAX_NUM_GENERATED_CASES (cases sampled per parameterized
test; JAX's CI uses 10), JAX_SKIP_SLOW_TESTS, a per-test timeout (pytest-timeout) and a
per-module time limit. The two runs of a module go in parallel (2 processes).
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import io
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
DEFAULT_JAX_GIT = Path("/work/.mirror/jax-ml+jax/repo")

MODULES = [
    "lax_test", "lax_numpy_test", "lax_numpy_reducers_test", "lax_numpy_indexing_test",
    "lax_control_flow_test", "lax_autodiff_test", "random_lax_test", "linalg_test", "fft_test",
    "nn_test", "lax_scipy_test",
]

# The modules of JAX's suite that need several devices (run with --device-count 4 and 8).
MULTI_DEVICE_MODULES = ["pmap_test", "shard_map_test", "pjit_test", "array_test"]

# --quick: a small, fast subset (module, pytest -k expression)
QUICK = [
    ("lax_test", "testOp or testConvertElementType or testReduce or testDot"),
    ("lax_numpy_reducers_test", "testReducer"),
    ("lax_numpy_indexing_test", "testStaticIndexing or testDynamicIndexing"),
    ("lax_control_flow_test", "testWhile or testCond or testScan"),
    ("fft_test", "testFft"),
]

BEGIN, END = "<!-- jax-suite:begin -->", "<!-- jax-suite:end -->"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modules", default=",".join(MODULES), help="comma-separated module names (without .py)")
    p.add_argument("--quick", action="store_true", help="a small, fast subset (see QUICK)")
    p.add_argument("--out", help="write the markdown report here (e.g. docs/jax_suite.md); "
                                 "only the block between the jax-suite markers is replaced")
    p.add_argument("--failures", default=None,
                   help="file for the failing test ids (default: <scratch>/failures.txt, or "
                        "docs/jax_suite_failures.txt beside --out)")
    p.add_argument("--scratch", default="/tmp/stablert-jax-suite", help="where JAX's tests are extracted and logs go")
    p.add_argument("--jax-git", default=str(DEFAULT_JAX_GIT), help="git dir of a jax-ml/jax mirror")
    p.add_argument("--tag", default=None, help="JAX tag (default: jax-v<installed jax version>)")
    p.add_argument("--num-generated-cases", type=int, default=None,
                   help="JAX_NUM_GENERATED_CASES (default 2, --quick 1; JAX's CI uses 10)")
    p.add_argument("--skip-slow", default="1", help="JAX_SKIP_SLOW_TESTS (default 1)")
    p.add_argument("--module-timeout", type=int, default=1500, help="seconds per module and backend")
    p.add_argument("--test-timeout", type=int, default=120, help="seconds per test (pytest-timeout)")
    p.add_argument("--dut", default="cpu", help="jax_test_dut for the stablert run ('' to leave unset)")
    p.add_argument("--device-count", type=int, default=None,
                   help="devices per backend (XLA_FLAGS=--xla_force_host_platform_device_count=N for cpu, "
                        "STABLERT_DEVICE_COUNT=N for stablert); for the multi-device modules "
                        f"({','.join(MULTI_DEVICE_MODULES)}), use with --modules multi_device")
    p.add_argument("--backends", default="cpu,stablert")
    p.add_argument("--serial", action="store_true", help="run the two backends one after the other")
    p.add_argument("--reuse", action="store_true", help="reuse logs of a previous run where complete")
    p.add_argument("--no-install", action="store_true", help="do not pip-install missing requirements")
    return p.parse_args(argv)


def jax_version() -> str:
    out = subprocess.run([sys.executable, "-c", "import jax; print(jax.__version__)"], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def extract(jax_git: Path, tag: str, dest: Path) -> Path:
    """tests/, conftest.py and pyproject.toml (its pytest settings) of JAX at `tag` into dest/tag."""
    root = dest / tag
    stamp = root / ".extracted"
    if stamp.exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    data = subprocess.run(["git", f"--git-dir={jax_git}", "archive", tag, "tests", "conftest.py", "pyproject.toml"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(root, filter="data")
    stamp.write_text(tag + "\n")
    return root


def ensure_requirements(no_install: bool):
    req = HERE / "requirements.txt"
    missing = []
    from importlib import metadata
    for line in req.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name, _, version = line.partition("==")
        try:
            if metadata.version(name) != version:
                missing.append(line)
        except metadata.PackageNotFoundError:
            missing.append(line)
    if missing and not no_install:
        print(f"installing {' '.join(missing)}", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], check=True)
    elif missing:
        print(f"warning: missing requirements {missing}", flush=True)


def backend_env(backend: str, args, log: Path, n_cases: int) -> dict:
    env = dict(os.environ)
    for k in ("JAX_ENABLE_X64", "JAX_TEST_DUT", "XLA_FLAGS"):
        env.pop(k, None)
    env.update({
        "JAX_NUM_GENERATED_CASES": str(n_cases),
        "JAX_SKIP_SLOW_TESTS": str(args.skip_slow),
        "PYTHONPATH": os.pathsep.join([str(HERE)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]),
        "STABLERT_SUITE_LOG": str(log),
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    if args.device_count:
        # Both backends get N devices: the CPU one because stablert runs beside it.
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={args.device_count}"
        env["STABLERT_DEVICE_COUNT"] = str(args.device_count)
    if backend == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
        env.pop("STABLERT_SUITE_DUT", None)
    else:
        env["JAX_PLATFORMS"] = f"{backend},cpu"
        if args.dut:
            env["STABLERT_SUITE_DUT"] = args.dut
    return env


def run_module(root: Path, module: str, kexpr: str | None, backend: str, args, logdir: Path, n_cases: int):
    log = logdir / f"{module}.{backend}.jsonl"
    done = logdir / f"{module}.{backend}.done"
    if args.reuse and done.exists():
        return None
    for f in (log, done):
        if f.exists():
            f.unlink()
    cmd = [sys.executable, "-m", "pytest", f"tests/{module}.py", "-q", "-p", "no:cacheprovider", "-p", "result_log",
           "--timeout", str(args.test_timeout), "-o", "console_output_style=classic"]
    if kexpr:
        cmd += ["-k", kexpr]
    out = open(logdir / f"{module}.{backend}.out", "w")
    proc = subprocess.Popen(cmd, cwd=root, env=backend_env(backend, args, log, n_cases), stdout=out,
                            stderr=subprocess.STDOUT, start_new_session=True)
    return proc, out, log, done, time.time()


def wait(handle, limit: int) -> str:
    proc, out, log, done, t0 = handle
    try:
        proc.wait(timeout=max(1, limit - (time.time() - t0)))
        status = f"exit {proc.returncode}"
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait()
        status = f"time limit ({limit}s) reached"
    out.close()
    done.write_text(json.dumps({"status": status, "seconds": round(time.time() - t0, 1)}))
    return status


def load(log: Path) -> dict[str, dict]:
    res = {}
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            prev = res.get(r["id"])
            # a failing teardown after a passing call makes the test fail
            if prev is None or r["outcome"] in ("failed", "error") or prev["outcome"] == "skipped":
                res[r["id"]] = r
    return res


# ------------------------------------------------------------------------------------------------
# failure causes

CAUSES = [
    (r"UNIMPLEMENTED: parameter \d+ of @\w+ has type tensor<[^>]*?(complex)", "complex element types"),
    (r"element type (complex<f\d+>|c64|c128)", "complex element types"),
    (r"UNIMPLEMENTED:.*element type (f8E\w+|f4E2M1FN)", "float8/float4 element types"),
    (r"UNIMPLEMENTED:.*tensor<[^>]*(f8E\w+|f4E2M1FN)", "float8/float4 element types"),
    (r"UNIMPLEMENTED:.*element type (i4|ui4|i2|ui2)\b", "int4/int2 element types"),
    (r"UNIMPLEMENTED:.*tensor<[^>]*x(i4|ui4|i2|ui2)>", "int4/int2 element types"),
    (r"custom_call target '(\w+)'", "custom_call {0}"),
    (r"UNIMPLEMENTED: (stablehlo\.\w+)", "{0} not implemented"),
    (r"MLIR translation rule for primitive '(\w+)' not found for platform stablert", "no stablert lowering for {0}"),
    (r"dense data of \d+ bytes does not match 0 elements", "zero-size splat constant rejected by the reader"),
    (r"INVALID_ARGUMENT: (.{0,60})", "INVALID_ARGUMENT: {0}"),
    (r"UNIMPLEMENTED: (.{0,60})", "UNIMPLEMENTED: {0}"),
    (r"Failed: Timeout", "per-test time limit"),
    # Tests reading XLA's compiled HLO text: StableRT has none for Shardy programs (None).
    (r"argument of type 'NoneType' is not iterable|'NoneType' object has no attribute 'count'",
     "compiled.as_text() is None (no HLO text for Shardy programs)"),
    (r"unexpectedly found in 'HloModule", "asserts on XLA's partitioned HLO text"),
    (r"Not equal to tolerance|Arrays are not almost equal|Mismatched elements|not close", "numerical mismatch"),
    (r"Arrays are not equal|AssertionError", "assertion (other)"),
]


def cause_of(message: str) -> str:
    for pattern, label in CAUSES:
        m = re.search(pattern, message or "")
        if m:
            return label.format(*m.groups())
    first = (message or "").strip().splitlines()[0] if (message or "").strip() else "(no message)"
    return re.sub(r"\d+", "N", first)[:80]


# ------------------------------------------------------------------------------------------------


def main(argv=None):
    args = parse_args(argv)
    tag = args.tag or f"jax-v{jax_version()}"
    scratch = Path(args.scratch)
    root = extract(Path(args.jax_git), tag, scratch)
    logdir = scratch / "logs" / (("quick" if args.quick else "full")
                                 + (f"-{args.device_count}dev" if args.device_count else ""))
    logdir.mkdir(parents=True, exist_ok=True)
    ensure_requirements(args.no_install)
    n_cases = args.num_generated_cases or (1 if args.quick else 2)
    if args.quick:
        plan = QUICK
    else:
        names = args.modules.replace("multi_device", ",".join(MULTI_DEVICE_MODULES))
        plan = [(m.removesuffix(".py"), None) for m in names.split(",") if m]
    backends = args.backends.split(",")
    print(f"JAX tests at {tag} in {root}; JAX_NUM_GENERATED_CASES={n_cases} JAX_SKIP_SLOW_TESTS={args.skip_slow} "
          f"jax_test_dut={args.dut!r} per-test timeout {args.test_timeout}s, per-module {args.module_timeout}s",
          flush=True)

    rows, failures, statuses = [], [], {}
    started = time.time()
    for module, kexpr in plan:
        handles = {}
        for b in backends:
            h = run_module(root, module, kexpr, b, args, logdir, n_cases)
            if h is not None:
                handles[b] = h
                if args.serial:
                    statuses[(module, b)] = wait(h, args.module_timeout)
        for b, h in handles.items():
            if (module, b) not in statuses:
                statuses[(module, b)] = wait(h, args.module_timeout)
        for b in backends:
            if (module, b) not in statuses:
                done = logdir / f"{module}.{b}.done"
                statuses[(module, b)] = json.loads(done.read_text())["status"] if done.exists() else "?"
        res = {b: load(logdir / f"{module}.{b}.jsonl") for b in backends}
        cpu, srt = res.get("cpu", {}), res.get(backends[-1], {})
        cpu_pass = {t for t, r in cpu.items() if r["outcome"] == "passed"}
        srt_pass = {t for t, r in srt.items() if r["outcome"] == "passed"}
        # Modules that call jtu.request_cpu_devices(8) give the CPU backend 8 devices whatever
        # --device-count says; tests that then need more devices than stablert has are not
        # comparable and are left out (counted in the report).
        too_few = {t for t in cpu_pass - srt_pass if srt.get(t, {}).get("outcome") == "skipped"
                   and re.search(r"[Rr]equires.*devices", srt[t].get("message") or "")}
        cpu_pass -= too_few
        both = cpu_pass & srt_pass
        lost = sorted(cpu_pass - srt_pass)
        for t in lost:
            r = srt.get(t)
            msg = r["message"] if r else "not run (module stopped before this test)"
            outcome = r["outcome"] if r else "not run"
            failures.append((module, t, outcome, msg))
        pct = 100.0 * len(both) / len(cpu_pass) if cpu_pass else 0.0
        extra = len(srt_pass - cpu_pass)
        rows.append({"module": module, "k": kexpr, "cpu_pass": len(cpu_pass), "both": len(both), "pct": pct,
                     "too_few_devices": len(too_few),
                     "cpu_total": len(cpu), "srt_total": len(srt), "srt_only": extra,
                     "status_cpu": statuses.get((module, "cpu")), "status_srt": statuses.get((module, backends[-1]))})
        print(f"{module:28s} {len(both):6d} / {len(cpu_pass):6d} passing on stablert of those passing on cpu "
              f"({pct:5.1f}%)   [cpu: {statuses.get((module, 'cpu'))}; stablert: {statuses.get((module, backends[-1]))}]",
              flush=True)
    elapsed = time.time() - started

    failures_path = Path(args.failures) if args.failures else (
        (Path(args.out).parent / "jax_suite_failures.txt") if args.out else scratch / "failures.txt")
    with open(failures_path, "w") as f:
        f.write(f"# tests passing on cpu but not on stablert; {tag}, JAX_NUM_GENERATED_CASES={n_cases}\n")
        f.write("# module<TAB>test id<TAB>outcome<TAB>cause<TAB>first line of the error\n")
        for module, t, outcome, msg in failures:
            first = (msg or "").strip().splitlines()[0] if (msg or "").strip() else ""
            f.write(f"{module}\t{t}\t{outcome}\t{cause_of(msg)}\t{first[:300]}\n")
    print(f"failing test ids: {failures_path}  ({len(failures)} tests; {elapsed / 60:.1f} min)")

    if args.out:
        write_report(Path(args.out), rows, failures, tag, n_cases, args, elapsed, failures_path)
    return 0


def write_report(path: Path, rows, failures, tag, n_cases, args, elapsed, failures_path):
    begin, end = BEGIN, END
    if args.device_count:  # one block per device count in the same report
        begin = BEGIN.replace("jax-suite", f"jax-suite-{args.device_count}dev")
        end = END.replace("jax-suite", f"jax-suite-{args.device_count}dev")
    lines = [begin, "",
             f"Run of {datetime.date.today().isoformat()}: JAX tests at `{tag}`, "
             f"`JAX_NUM_GENERATED_CASES={n_cases}`, `JAX_SKIP_SLOW_TESTS={args.skip_slow}`, "
             f"`jax_test_dut={args.dut}` for stablert, "
             + (f"{args.device_count} devices per backend, " if args.device_count else "")
             + f"per-test timeout {args.test_timeout} s, per-module limit "
             f"{args.module_timeout} s; {elapsed / 60:.0f} min on 2 cores"
             + (" (`--quick` subset)" if args.quick else "") + ". Produced by "
             "`tools/jax_suite/run_jax_suite.py`; failing ids with their first error line in "
             f"`{failures_path.as_posix().split('/')[-1]}`.", "",
             "| module | passing on stablert / passing on cpu | % | tests run cpu / stablert | run status cpu / stablert |",
             "|---|---:|---:|---:|---|"]
    for r in rows:
        name = r["module"] + (f" (`-k {r['k']}`)" if r["k"] else "")
        lines.append(f"| {name} | {r['both']} / {r['cpu_pass']} | {r['pct']:.1f} | {r['cpu_total']} / {r['srt_total']} "
                     f"| {r['status_cpu']} / {r['status_srt']} |")
    tot_cpu = sum(r["cpu_pass"] for r in rows)
    tot_both = sum(r["both"] for r in rows)
    lines.append(f"| **all** | {tot_both} / {tot_cpu} | {100.0 * tot_both / max(tot_cpu, 1):.1f} | | |")
    left_out = [f"{r['module']} {r['too_few_devices']}" for r in rows if r.get("too_few_devices")]
    if left_out:
        lines += ["", "Left out of the counts: tests that passed on cpu (given 8 devices by the module's "
                  "`jtu.request_cpu_devices(8)`) and were skipped on stablert for needing more devices "
                  "than the run's: " + ", ".join(left_out) + "."]
    lines += ["", "### Failure causes (tests passing on cpu, not on stablert)", "",
              "| cause | tests | modules |", "|---|---:|---|"]
    by_cause = collections.defaultdict(list)
    for module, t, outcome, msg in failures:
        by_cause[cause_of(msg) if msg else outcome].append(module)
    for cause, mods in sorted(by_cause.items(), key=lambda kv: -len(kv[1])):
        counts = collections.Counter(mods)
        lines.append(f"| {cause.replace('|', '/')} | {len(mods)} | "
                     + ", ".join(f"{m} {n}" for m, n in counts.most_common()) + " |")
    lines += ["", end]
    block = "\n".join(lines)
    text = path.read_text() if path.exists() else "# JAX's test suite on StableRT\n"
    if begin in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
    print(f"report: {path}")


if __name__ == "__main__":
    sys.exit(main())
