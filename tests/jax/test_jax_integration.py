"""Installing StableRT never makes a JAX program worse (docs/jax_integration.md).

Each case runs a small program in a fresh Python process with its own JAX_PLATFORMS (the
backends and jax.distributed are fixed per process): the default backend stays `cpu` unless
the user opts in, jax.distributed works with StableRT installed (one and two processes),
jax_pjrt_client_create_options reach the plugin also after jax.distributed.initialize, host
callbacks work with JAX_PLATFORMS=stablert alone, and the versions tell StableRT from XLA.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import pathlib
import re
import socket
import subprocess
import sys
import textwrap

import pytest

import stablert

ROOT = pathlib.Path(__file__).resolve().parents[2]
TIMEOUT = 240


def environment(**overrides: str | None) -> dict[str, str]:
    """This process's environment without the JAX / StableRT settings of the test session."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("JAX_") and k not in ("STABLERT_DEVICE_COUNT", "XLA_FLAGS")}
    env["PYTHONUNBUFFERED"] = "1"
    for key, value in overrides.items():
        if value is not None:
            env[key] = value
    return env


def start(code: str, **env: str | None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=environment(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen) -> subprocess.CompletedProcess:
    try:
        out, err = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def run(code: str, **env: str | None) -> subprocess.CompletedProcess:
    return finish(start(code, **env))


def ok(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, f"exit status {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


# --- honest defaults ------------------------------------------------------------------------

def test_installed_stablert_is_not_the_default_backend():
    result = run("""
        import jax, jax.numpy as jnp
        print(jax.default_backend(), jax.devices()[0].platform)
        print(float(jnp.arange(4.0).sum()))
        print(jax.devices("stablert")[0].platform)  # still there for who asks
        print(float(jax.jit(lambda x: x * 2, device=jax.devices("stablert")[0])(3.0)))
    """)
    assert ok(result).split() == ["cpu", "cpu", "6.0", "stablert", "6.0"]
    # The plugin is initialized (JAX creates every installed plugin's backend) but not used.
    assert "is experimental" not in result.stderr, result.stderr


@pytest.mark.parametrize("platforms", ["stablert", "stablert,cpu"])
def test_jax_platforms_opts_in(platforms):
    out = ok(run("""
        import jax, jax.numpy as jnp
        print(jax.default_backend(), jax.devices()[0].platform, float(jnp.arange(4.0).sum()))
    """, JAX_PLATFORMS=platforms))
    assert out.split() == ["stablert", "stablert", "6.0"]


def test_cpu_first_keeps_cpu_default():
    out = ok(run("import jax; print(jax.default_backend())", JAX_PLATFORMS="cpu,stablert"))
    assert out.split() == ["cpu"]


# --- jax.distributed ------------------------------------------------------------------------

DISTRIBUTED = """
    import sys, jax, jax.numpy as jnp
    jax.distributed.initialize("localhost:{port}", num_processes={n}, process_id=int(sys.argv[1]))
    print("backend", jax.default_backend(), "processes", jax.process_count(), "devices", jax.device_count())
    print("sum", float(jax.jit(lambda x: x.sum())(jnp.arange(4.0))))
"""


def run_processes(code: str, n: int, **env: str | None) -> list[subprocess.CompletedProcess]:
    code = textwrap.dedent(code).replace("{port}", str(free_port())).replace("{n}", str(n))
    processes = [subprocess.Popen([sys.executable, "-c", code, str(i)], env=environment(**env),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(n)]
    return [finish(p) for p in processes]


def test_distributed_one_process_with_stablert_installed():
    [result] = run_processes(DISTRIBUTED + """
    print("stablert", jax.devices("stablert")[0].platform, float(jax.jit(lambda x: x + 1,
          device=jax.devices("stablert")[0])(1.0)))
    """, 1)
    assert ok(result).split() == ["backend", "cpu", "processes", "1", "devices", "1", "sum", "6.0",
                                  "stablert", "stablert", "2.0"]


def test_distributed_one_process_on_stablert_keeps_create_options():
    # jax_pjrt_client_create_options must reach the plugin also on the distributed path.
    [result] = run_processes("""
    import sys, jax, jax.numpy as jnp
    jax.config.update("jax_pjrt_client_create_options", "device_count:2")
    jax.distributed.initialize("localhost:{port}", num_processes=1, process_id=int(sys.argv[1]))
    print("backend", jax.default_backend(), "processes", jax.process_count(), "devices", jax.device_count())
    print("sum", float(jax.jit(lambda x: x.sum())(jnp.arange(4.0))))
    jax.distributed.shutdown()  # JAX reports the process disconnected (UpdateGlobalProcessInfo)
    print("shutdown")
    """, 1, JAX_PLATFORMS="stablert")
    assert ok(result).split() == ["backend", "stablert", "processes", "1", "devices", "2", "sum", "6.0", "shutdown"]


def test_distributed_two_processes_on_cpu_with_stablert_installed():
    results = run_processes(DISTRIBUTED, 2, JAX_PLATFORMS="cpu")
    for result in results:
        assert ok(result).split() == ["backend", "cpu", "processes", "2", "devices", "2", "sum", "6.0"]


def test_distributed_two_processes_without_jax_platforms():
    # JAX creates StableRT's backend in every process too: it joins the job (docs/multi_process.md).
    results = run_processes(DISTRIBUTED + """
    print("stablert", [(d.id, d.process_index) for d in jax.devices("stablert")],
          [d.id for d in jax.local_devices(backend="stablert")])
    """, 2)
    for i, result in enumerate(results):
        assert ok(result).split() == ["backend", "cpu", "processes", "2", "devices", "2", "sum", "6.0",
                                      "stablert", "[(0,", "0),", "(1,", "1)]", f"[{i}]"]


def test_distributed_two_processes_on_stablert():
    results = run_processes(DISTRIBUTED, 2, JAX_PLATFORMS="stablert")
    for result in results:
        assert ok(result).split() == ["backend", "stablert", "processes", "2", "devices", "2", "sum", "6.0"]


# --- host callbacks with JAX_PLATFORMS=stablert ---------------------------------------------

CALLBACKS = """
    import jax, jax.numpy as jnp, numpy as np
    from jax.experimental import io_callback
    seen = []

    @jax.jit
    def f(x):
        jax.debug.print("debug.print x={x}", x=x)
        jax.debug.callback(lambda v: seen.append(("debug.callback", float(v.sum()))), x)
        y = jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        z = io_callback(lambda v: np.asarray(v) + 1, jax.ShapeDtypeStruct(x.shape, x.dtype), y, ordered=True)
        return z

    out = f(jnp.arange(3.0))
    jax.effects_barrier()
    print("device", out.devices().pop().platform, "default", jax.default_backend())
    print("out", np.asarray(out).tolist())
    print("seen", seen)
"""


@pytest.mark.parametrize("platforms", ["stablert", "stablert,cpu"])
def test_host_callbacks_with_stablert_selected(platforms):
    result = run(CALLBACKS, JAX_PLATFORMS=platforms)
    out = ok(result)
    assert "debug.print x=[0. 1. 2.]" in out
    assert "device stablert default stablert" in out
    assert "out [1.0, 3.0, 5.0]" in out
    assert "seen [('debug.callback', 3.0)]" in out
    assert "failed to find a local CPU device" not in result.stderr, result.stderr


RAISING = """
    import jax, jax.numpy as jnp, numpy as np

    def host(v):
        raise ValueError("boom from the callback")

    try:
        jax.jit(lambda x: jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x))(jnp.arange(3.0))
        jax.effects_barrier()
        print("no error")
    except Exception as e:
        print("raised", type(e).__name__, "boom from the callback" in str(e))
"""


def test_an_error_in_a_callback_surfaces_once_as_on_cpu():
    cpu = run(RAISING, JAX_PLATFORMS="cpu")
    stablert_only = run(RAISING, JAX_PLATFORMS="stablert")
    assert ok(cpu).split()[0] == "raised"
    assert ok(stablert_only).split() == ok(cpu).split()
    # The same number of reports of the error on stderr as on XLA's CPU backend (one log
    # record of the exception), and no error about a missing CPU device.
    count = lambda text: text.count("ValueError: boom from the callback")
    assert count(stablert_only.stderr) == count(cpu.stderr), (cpu.stderr, stablert_only.stderr)
    assert "failed to find a local CPU device" not in stablert_only.stderr, stablert_only.stderr


# --- versions -------------------------------------------------------------------------------

def project_version() -> str:
    return re.search(r"project\(stablert VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text()).group(1)


def test_python_version_is_the_project_version():
    assert stablert.__version__ == project_version()
    try:
        assert importlib.metadata.version("stablert") == project_version()
    except importlib.metadata.PackageNotFoundError:
        pass  # a source checkout on PYTHONPATH


def test_device_kind_and_platform_version_name_stablert():
    out = ok(run("""
        import json, jax
        from jax.extend.backend import get_backend
        print(json.dumps([jax.devices("stablert")[0].device_kind, get_backend("stablert").platform_version,
                          jax.devices("cpu")[0].device_kind, get_backend("cpu").platform_version]))
    """))
    kind, version, cpu_kind, cpu_version = json.loads(out)
    assert kind.startswith("StableRT CPU ("), kind
    # JAX's C API client shows "PJRT C API" and then the plugin's own platform version.
    assert re.fullmatch(r"(PJRT C API\n)?StableRT " + re.escape(project_version()) +
                        r" \(PJRT 0\.[0-9]+, StableHLO [0-9]+\.[0-9]+\.[0-9]+\)", version), version
    assert "StableRT" not in cpu_kind + cpu_version


def installed_script() -> pathlib.Path | None:
    try:
        importlib.metadata.distribution("stablert")
    except importlib.metadata.PackageNotFoundError:
        return None
    return pathlib.Path(sys.executable).parent / "stablert"


def test_cli_console_script_help_and_version():
    script = installed_script()
    if script is None:
        pytest.skip("stablert is not installed as a package (source checkout on PYTHONPATH)")
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0, version.stderr
    assert version.stdout.splitlines()[0] == f"stablert {project_version()}", version.stdout
    assert "StableRT CPU" in version.stdout
    help_ = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert help_.returncode == 0 and "usage: stablert" in help_.stdout, help_
    bad = subprocess.run([str(script), "--no-such-option"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "usage: stablert" in bad.stderr, bad
