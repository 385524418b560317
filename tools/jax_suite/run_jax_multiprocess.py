#!/usr/bin/env python3
"""Runs JAX's multi-process test modules (tests/multiprocess/ of the installed jax's release) on
JAX's CPU backend and on StableRT, both with 2 processes x 2 devices, and compares.

  .venv/bin/python tools/jax_suite/run_jax_multiprocess.py [--modules all_reduce_test,pjit_test]
                                                           [--out docs/jax_suite_multi_process.md]

Each module is started as JAX's CI starts it: `python tests/multiprocess/<module>.py
--num_processes=2`, whose main (jax._src.test_multiprocess) launches the worker processes,
joins them with jax.distributed.initialize() and runs the module's absltest cases in every
worker. The CPU run uses JAX_PLATFORMS=cpu, JAX_NUM_CPU_DEVICES=2 and Gloo collectives
(--cpu_collectives_implementation=gloo); the StableRT run JAX_PLATFORMS=stablert,
STABLERT_DEVICE_COUNT=2 and JAX_TEST_DUT=cpu (JAX's test utilities then treat StableRT as the
CPU-class platform it is: skip lists, tolerances). The tests come from a git mirror of jax-ml/jax
(`git archive`, into a scratch directory; nothing of JAX is copied into this repository).

Per module and backend it reads every worker's unittest summary (tests run, failures, errors,
skips) and the failing tests with the last line of their error. A module passes on a backend
when every worker's tests passed (skips allowed).
"""
from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
DEFAULT_JAX_GIT = Path("/work/.mirror/jax-ml+jax/repo")
BEGIN, END = "<!-- jax-multiprocess-suite:begin -->", "<!-- jax-multiprocess-suite:end -->"


def jax_version() -> str:
    out = subprocess.run([sys.executable, "-c", "import jax; print(jax.__version__)"], capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def extract(jax_git: Path, tag: str, dest: Path) -> Path:
    root = dest / tag
    stamp = root / ".extracted"
    if stamp.exists():
        return root
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    data = subprocess.run(["git", f"--git-dir={jax_git}", "archive", tag, "tests/multiprocess"],
                          capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(root, filter="data")
    stamp.write_text(tag + "\n")
    return root


def backend_env(backend: str, outputs: Path) -> dict:
    env = dict(os.environ)
    for k in ("JAX_ENABLE_X64", "JAX_TEST_DUT", "XLA_FLAGS", "JAX_NUM_CPU_DEVICES", "STABLERT_DEVICE_COUNT"):
        env.pop(k, None)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE / "multiprocess_shim")] +
                                        [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["TEST_UNDECLARED_OUTPUTS_DIR"] = str(outputs)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if backend == "cpu":
        env["JAX_PLATFORMS"] = "cpu"
        env["JAX_NUM_CPU_DEVICES"] = "2"
    else:
        env["JAX_PLATFORMS"] = "stablert"
        env["STABLERT_DEVICE_COUNT"] = "2"
        env["STABLERT_COLLECTIVE_ADDRESS"] = "127.0.0.1"
        env["JAX_TEST_DUT"] = "cpu"
    return env


def parse_worker(stderr: str) -> dict:
    """A worker's unittest summary: ran, failures [(name, message)], skipped, crashed."""
    ran = re.search(r"^Ran (\d+) tests? in", stderr, re.MULTILINE)
    summary = re.search(r"^(OK|FAILED)( \((.*)\))?\s*$", stderr, re.MULTILINE)
    skipped = 0
    if summary and summary.group(3):
        m = re.search(r"skipped=(\d+)", summary.group(3))
        skipped = int(m.group(1)) if m else 0
    failures = []
    blocks = re.split(r"^={50,}\n", stderr, flags=re.MULTILINE)
    for block in blocks[1:]:
        head = re.match(r"(FAIL|ERROR): (\S+) \(([^)]*)\)", block)
        if not head:
            continue
        # The error: the last "SomeError: ..." line of the traceback (not JAX's note about
        # filtered frames, nor the coordination service's noise from a peer that exited).
        message = ""
        for line in block.split("\n"):
            if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Exit)\b", line) and "grpc" not in line:
                message = line.strip()
        if not message:
            lines = [l for l in block.split("\n")[1:] if l.strip() and not l.startswith("-" * 20)]
            message = lines[-1].strip() if lines else ""
        failures.append((head.group(2), message[:300]))
    return {"ran": int(ran.group(1)) if ran else None, "ok": bool(summary and summary.group(1) == "OK"),
            "skipped": skipped, "failures": failures}


def run(root: Path, module: str, backend: str, scratch: Path, limit: int) -> dict:
    outputs = scratch / f"{module}.{backend}"
    if outputs.exists():
        shutil.rmtree(outputs)
    outputs.mkdir(parents=True)
    cmd = [sys.executable, f"tests/multiprocess/{module}.py", "--num_processes=2"]
    if backend == "cpu":
        cmd.append("--cpu_collectives_implementation=gloo")
    start = time.time()
    with open(outputs / "harness.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=root, env=backend_env(backend, outputs), stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout=limit)
            status = f"exit {code}"
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            status = f"time limit ({limit} s)"
    workers = []
    for i in range(2):
        path = outputs / f"jax_{i}_stderr.log"
        workers.append(parse_worker(path.read_text(errors="replace") if path.exists() else ""))
    return {"status": status, "seconds": round(time.time() - start, 1), "workers": workers}


def summarize(result: dict) -> tuple[str, int, int, int, list]:
    """(verdict, ran, passed, skipped, failures) — counts from worker 0, failures from all."""
    w0 = result["workers"][0]
    ran = w0["ran"]
    if ran is None:
        return ("crashed" if result["status"].startswith("exit") else result["status"]), 0, 0, 0, []
    failures = {}
    for w in result["workers"]:
        for name, message in w["failures"]:
            failures.setdefault(name, message)
    passed = ran - w0["skipped"] - len(failures)
    ok = all(w["ok"] for w in result["workers"]) and result["status"] == "exit 0"
    return ("pass" if ok else "fail"), ran, passed, w0["skipped"], sorted(failures.items())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--modules", default=None, help="comma-separated module names (default: every *_test.py)")
    p.add_argument("--backends", default="cpu,stablert")
    p.add_argument("--scratch", default="/tmp/stablert-jax-multiprocess-suite")
    p.add_argument("--jax-git", default=str(DEFAULT_JAX_GIT))
    p.add_argument("--tag", default=None, help="JAX tag (default: jax-v<installed jax version>)")
    p.add_argument("--module-time-limit", type=int, default=300)
    p.add_argument("--out", help="markdown report (only the block between the markers is replaced)")
    args = p.parse_args(argv)
    tag = args.tag or f"jax-v{jax_version()}"
    scratch = Path(args.scratch)
    root = extract(Path(args.jax_git), tag, scratch)
    modules = (args.modules.split(",") if args.modules else
               sorted(f.stem for f in (root / "tests/multiprocess").glob("*_test.py")))
    backends = args.backends.split(",")
    rows = []
    started = time.time()
    for module in modules:
        row = {"module": module}
        for backend in backends:
            row[backend] = summarize(run(root, module, backend, scratch / tag, args.module_time_limit))
            verdict, ran, passed, skipped, failures = row[backend]
            print(f"{module:28s} {backend:9s} {verdict:8s} ran {ran:3d} passed {passed:3d} skipped {skipped:3d} "
                  f"failed {len(failures)}", flush=True)
            for name, message in failures:
                print(f"    {name}: {message}", flush=True)
        rows.append(row)
    elapsed = time.time() - started
    if args.out:
        write_report(Path(args.out), rows, backends, tag, elapsed)
    return 0


def write_report(path: Path, rows, backends, tag, elapsed):
    lines = [BEGIN, "", f"JAX {tag} `tests/multiprocess/`, 2 processes x 2 devices, "
             f"{time.strftime('%Y-%m-%d', time.gmtime())}, {elapsed / 60:.0f} min "
             f"(`tools/jax_suite/run_jax_multiprocess.py`). Cells: passed / run (skipped).", "",
             "| module | " + " | ".join(backends) + " |", "|---|" + "---|" * len(backends)]
    for row in rows:
        cells = []
        for b in backends:
            verdict, ran, passed, skipped, failures = row[b]
            cells.append(f"{verdict}: {passed} / {ran} ({skipped})" if ran else verdict)
        lines.append(f"| {row['module']} | " + " | ".join(cells) + " |")
    lines += ["", "Failing tests (first line of the error):", ""]
    for row in rows:
        for b in backends:
            for name, message in row[b][4]:
                lines.append(f"- {row['module']} on {b}: `{name}`: {message.replace('|', '/')}")
    lines += ["", END]
    text = path.read_text() if path.exists() else ""
    block = "\n".join(lines)
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    else:
        text = text + ("\n" if text else "") + block + "\n"
    path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
