"""tools/jax_suite/result_log.py, the pytest plugin of the JAX suite runner: it sets JAX's
device under test before the test modules are imported, and leaves `jtu.capture_stdout`
capturing what tests print (it did not when the plugin imported JAX's test utilities before
pytest's capture was in place, failing api_test's test_print_environment_info1 on any backend)."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

TOOL = pathlib.Path(__file__).resolve().parents[2] / "tools" / "jax_suite"

PROBE = textwrap.dedent('''
    from jax._src import test_util as jtu

    DUT_AT_IMPORT = jtu.device_under_test()


    def test_device_under_test_is_set_when_the_module_is_imported():
        assert DUT_AT_IMPORT == "probe-dut"


    def test_capture_stdout_captures_what_the_test_prints():
        with jtu.capture_stdout() as out:
            print("printed by the test")
        assert "printed by the test" in out()
''')


def test_result_log_plugin_sets_the_dut_and_keeps_capture_stdout_working(tmp_path):
    (tmp_path / "probe_test.py").write_text(PROBE)
    log = tmp_path / "log.jsonl"
    env = dict(os.environ, STABLERT_SUITE_DUT="probe-dut", STABLERT_SUITE_LOG=str(log), JAX_PLATFORMS="cpu",
               PYTHONPATH=os.pathsep.join(p for p in (str(TOOL), os.environ.get("PYTHONPATH", "")) if p))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "result_log",
                          "probe_test.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    outcomes = {r["id"]: r["outcome"] for r in map(json.loads, log.read_text().splitlines())}
    assert outcomes == {"test_device_under_test_is_set_when_the_module_is_imported": "passed",
                        "test_capture_stdout_captures_what_the_test_prints": "passed"}
