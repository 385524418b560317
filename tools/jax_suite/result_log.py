"""pytest plugin for run_jax_suite.py: one JSON line per test outcome, written as each test ends
(so a module cut short by its time limit still leaves its results), and the device-under-test
setting of JAX's test utilities.

Environment:
  STABLERT_SUITE_LOG   file to append the JSON lines to (required)
  STABLERT_SUITE_DUT   value for JAX's `jax_test_dut` flag (e.g. "cpu"), set before tests run
"""
from __future__ import annotations

import json
import os


import pytest

_dut_set = False


@pytest.hookimpl(tryfirst=True)
def pytest_make_collect_report(collector):
    """Sets jax_test_dut as the first test module is collected, inside pytest's output
    capture: jax._src.test_util binds `sys.stdout` when it is imported (`jtu.capture_stdout`),
    and importing it earlier (pytest_configure, or pytest_collectstart, which runs outside the
    capture) bound the terminal's stream rather than the one tests print to, which failed
    api_test's `test_print_environment_info1` on any backend. Returns None: the module is
    collected as usual."""
    global _dut_set
    dut = os.environ.get("STABLERT_SUITE_DUT")
    if dut and not _dut_set and isinstance(collector, pytest.Module):
        _dut_set = True
        import jax
        from jax._src import test_util  # noqa: F401  (defines the jax_test_dut flag)

        jax.config.update("jax_test_dut", dut)
    return None


def _message(report) -> str:
    if report.passed:
        return ""
    if report.skipped:
        lr = report.longrepr
        if isinstance(lr, tuple) and len(lr) == 3:
            return str(lr[2])[:500]
        return str(lr)[:500]
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return f"{crash.message}"[:2000]
    return str(report.longrepr)[-2000:]


def pytest_runtest_logreport(report):
    path = os.environ.get("STABLERT_SUITE_LOG")
    if not path:
        return
    # one record per test: the call phase, or setup/teardown when they fail or skip
    if report.when == "call" or (report.when == "setup" and not report.passed) or (
            report.when == "teardown" and report.failed):
        outcome = report.outcome
        if hasattr(report, "wasxfail"):
            outcome = "xfailed" if report.skipped else "xpassed"
        rec = {"id": report.nodeid.split("::", 1)[-1], "when": report.when, "outcome": outcome,
               "message": _message(report), "duration": round(report.duration, 3)}
        with open(path, "a") as f:
            f.write(json.dumps(rec) + "\n")
