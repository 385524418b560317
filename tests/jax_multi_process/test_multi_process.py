"""Multi-process StableRT: jobs of several processes started by `python -m stablert.launch`
(each process's checks are in the worker_*.py scripts; see their docstrings).

Each test starts its own job; the processes print "OK <check>" lines that are checked here.
"""
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

HERE = pathlib.Path(__file__).resolve().parent


def launch(script, processes, devices, timeout=240, grace=10, extra_env=None, args=()):
    env = dict(os.environ)
    env.pop("JAX_PLATFORMS", None)  # the launcher's default: stablert
    env.setdefault("STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "30")
    env.update(extra_env or {})
    command = [sys.executable, "-m", "stablert.launch", "-n", str(processes), "--devices-per-process", str(devices),
               "--timeout", str(timeout), "--grace", str(grace), str(HERE / script), *args]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout + 60)
    return result


def assert_every_rank_passed(result, processes, checks):
    """The job exited 0 and every process printed '[rank] OK check' for every check."""
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    for rank in range(processes):
        for check in checks:
            assert f"[{rank}] OK {check}\n" in result.stdout, (rank, check, output[-6000:])


CHECKS = ["devices", "psum", "all_gather", "ppermute", "psum_scatter", "all_to_all", "psum_4MiB", "pmax_pmin", "pmap_psum", "training_step",
          "process_allgather", "make_array_from_process_local_data", "program_on_other_processes_devices", "all"]


@pytest.mark.parametrize("processes,devices", [(2, 2), (4, 2)])
def test_collectives_training_and_multihost_utils(processes, devices):
    assert_every_rank_passed(launch("worker_collectives.py", processes, devices), processes, CHECKS)


@pytest.mark.parametrize("mode,code", [("die", "UNAVAILABLE"), ("hang", "DEADLINE_EXCEEDED")])
def test_lost_peer_fails_the_others_within_the_timeout(mode, code):
    timeout = 6
    start = time.monotonic()
    result = launch("worker_killed_peer.py", 2, 2, grace=3 * timeout, args=(mode,),
                    extra_env={"STABLERT_COLLECTIVE_TIMEOUT_SECONDS": str(timeout)})
    output = result.stdout + result.stderr
    assert "[1] OK first collective" in result.stdout, output[-6000:]
    match = re.search(r"\[0\] FAILED_AS_EXPECTED ([0-9.]+) (.*)", result.stdout)
    assert match, output[-6000:]
    seconds, message = float(match.group(1)), match.group(2)
    assert seconds <= timeout + 5, (seconds, message)
    assert message.startswith(code), message
    assert "process 1" in message and "stablehlo.all_reduce" in message, message
    if mode == "hang":
        assert "STABLERT_COLLECTIVE_TIMEOUT_SECONDS" in message, message
    # The lost process's status: its own exit, or (hang) JAX's abort once the coordinator left.
    assert result.returncode == 3 if mode == "die" else result.returncode != 0, output[-3000:]
    assert time.monotonic() - start < 120


def test_launcher_reports_a_failing_process_and_kills_the_rest(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import os, sys, time\n"
                      "if os.environ['STABLERT_LAUNCH_PROCESS_ID'] == '1':\n"
                      "    sys.exit(7)\n"
                      "time.sleep(600)\n")
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "stablert.launch", "-n", "2", "--grace", "1", str(script)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 7, result.stderr
    assert "process 1 exited with status 7" in result.stderr
    assert "killing process 0" in result.stderr
    assert time.monotonic() - start < 60


def test_program_in_the_global_view_fails_clearly_across_processes():
    result = launch("worker_global_view.py", 2, 2, extra_env={"STABLERT_PARTITIONER": "0"})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    for rank in range(2):
        match = re.search(rf"\[{rank}\] FAILED_AS_EXPECTED (.*)", result.stdout)
        assert match, output[-6000:]
        assert "global view" in match.group(1) and "every partition in one process" in match.group(1), match.group(1)


def test_process_without_stablert_makes_the_others_fail_at_once():
    # Process 1 selects only cpu; process 0 leaves JAX_PLATFORMS unset (StableRT's backend is
    # created too, and must not wait the topology timeout for process 1).
    result = launch("worker_heterogeneous.py", 2, 2)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    match = re.search(r"\[0\] FAILED_AS_EXPECTED ([0-9.]+) (.*)", result.stdout)
    assert match, output[-6000:]
    seconds, message = float(match.group(1)), match.group(2)
    assert seconds < 10, (seconds, message)
    assert "process 1 of the job does not create a StableRT client (its JAX_PLATFORMS is 'cpu')" in message, message
    assert "[1] OK cpu only" in result.stdout, output[-6000:]


CROSS_HOST_CHECKS = ["single_device_numpy", "single_device_uncommitted", "single_device_float32_4MiB",
                     "device_put_to_device", "named_numpy", "named_uncommitted", "named_replicated",
                     "batched", "compute_and_back", "mixed_local_and_remote", "all"]


@pytest.mark.parametrize("processes,devices", [(2, 2), (4, 2)])
def test_device_put_onto_another_processs_devices(processes, devices):
    assert_every_rank_passed(launch("worker_cross_host.py", processes, devices), processes, CROSS_HOST_CHECKS)


CROSS_HOST_LAYOUT_CASES = ["rank3_f32_201", "rank3_bf16_120", "named_f32_10", "named_int8_10"]


def test_device_put_of_non_row_major_arrays_onto_another_processs_devices():
    """Arrays in other layouts (jax.experimental.layout) sent across processes: the layout JAX
    reports for the received array and what a jitted program computes from it are those of JAX's
    CPU backend (which sends through JAX's own socket transport). The values read back must be
    the source array's on StableRT; on the CPU backend of jaxlib 0.10.2 they are not (the socket
    transport puts the sender's bytes into row-major buffers and labels the array with the
    sender's layout, so np.asarray reads them permuted), so they are checked against NumPy only."""
    result = launch("worker_cross_host_layouts.py", 2, 2)
    assert_every_rank_passed(result, 2, CROSS_HOST_LAYOUT_CASES + ["all"])
    reference = launch("worker_cross_host_layouts.py", 2, 2,
                       extra_env={"JAX_PLATFORMS": "cpu", "CROSS_HOST_REFERENCE": "cpu"})
    assert_every_rank_passed(reference, 2, ["all"])

    def reports(stdout):
        return sorted(line for line in stdout.splitlines() if re.match(r"\[\d\] (FORMAT|JIT) ", line))

    ours, cpu = reports(result.stdout), reports(reference.stdout)
    assert len(ours) == 2 * 2 * len(CROSS_HOST_LAYOUT_CASES), ours
    assert ours == cpu, (ours, cpu)


@pytest.mark.parametrize("mode,code", [("die", "UNAVAILABLE"), ("hang", "DEADLINE_EXCEEDED")])
def test_lost_sender_fails_the_receiving_device_put_within_the_timeout(mode, code):
    timeout = 6
    start = time.monotonic()
    result = launch("worker_cross_host_lost_peer.py", 2, 2, grace=3 * timeout, args=(mode,),
                    extra_env={"STABLERT_COLLECTIVE_TIMEOUT_SECONDS": str(timeout)})
    output = result.stdout + result.stderr
    assert "[1] OK first transfer" in result.stdout and "[0] OK first transfer" in result.stdout, output[-6000:]
    match = re.search(r"\[0\] FAILED_AS_EXPECTED ([0-9.]+) (.*)", result.stdout)
    assert match, output[-6000:]
    seconds, message = float(match.group(1)), match.group(2)
    assert seconds <= timeout + 5, (seconds, message)
    assert code in message, message
    assert "CrossHostReceiveBuffers" in message and "process 1" in message, message
    if mode == "hang":
        assert "STABLERT_COLLECTIVE_TIMEOUT_SECONDS" in message, message
    assert time.monotonic() - start < 120


HOST_CALLBACK_CHECKS = ["debug_print", "pure_callback_psum", "ordered_io_callback", "all"]


@pytest.mark.parametrize("processes,devices", [(2, 2), (2, 1)])
def test_host_callbacks_in_shard_map_run_on_each_devices_process(processes, devices):
    assert_every_rank_passed(launch("worker_host_callbacks.py", processes, devices), processes, HOST_CALLBACK_CHECKS)
