"""Configuration: STABLERT_* variables, PJRT create options, compile options and dumps.

Every setting's bad values are errors naming the setting and the value (never silently
defaulted, never a crash); compile options are accepted and rejected as XLA's CPU backend
does, compared in the same process. See docs/configuration.md.
"""
import glob
import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax._src import xla_bridge


def make_client(options=None):
    """Creates a fresh StableRT client through PJRT_Client_Create (not JAX's cached one)."""
    return xla_bridge.make_pjrt_c_api_client("stablert", options or {})


def run_python(script, timeout=240, **env_vars):
    env = dict(os.environ, JAX_PLATFORMS="stablert")
    for key in ("STABLERT_DUMP_DIR", "XLA_FLAGS", "STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "STABLERT_DEVICE_COUNT",
                "STABLERT_PARTITIONER", "STABLERT_DEBUG_PARTITIONER", "STABLERT_ISA"):
        env.pop(key, None)
    env.update(env_vars)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=env, capture_output=True, text=True,
                          timeout=timeout)


# --- environment variables, checked at PJRT_Client_Create ---------------------------------

BAD_ENV = [
    ("STABLERT_DEVICE_COUNT", "0", "an integer in [1, 4096]"),
    ("STABLERT_DEVICE_COUNT", "-1", "an integer in [1, 4096]"),
    ("STABLERT_DEVICE_COUNT", "4097", "an integer in [1, 4096]"),
    ("STABLERT_DEVICE_COUNT", "lots", "an integer in [1, 4096]"),
    ("STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "inf", "a finite number of seconds in [0.001, 86400]"),
    ("STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "nan", "a finite number of seconds"),
    ("STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "1e300", "a finite number of seconds"),
    ("STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "abc", "a finite number of seconds"),
    ("STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "-5", "a finite number of seconds"),
    ("STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "0", "a finite number of seconds"),
    ("STABLERT_PARTITIONER", "disabled", "a boolean"),
    ("STABLERT_DEBUG_PARTITIONER", "verbose", "a boolean"),
    ("XLA_FLAGS", "--xla_dump_to=-", "STABLERT_DUMP_DIR"),
    ("STABLERT_ISA", "avx", "best, avx512, avx2 or sse4"),
    ("STABLERT_ISA", "sse2", "best, avx512, avx2 or sse4"),
]


@pytest.mark.parametrize("name,value,allowed", BAD_ENV)
def test_bad_environment_fails_client_creation(stablert_device, monkeypatch, name, value, allowed):
    monkeypatch.setenv(name, value)
    with pytest.raises(jax.errors.JaxRuntimeError) as error:
        make_client()
    message = str(error.value)
    assert "INVALID_ARGUMENT" in message and "PJRT_Client_Create" in message, message
    assert f"{name}" in message and value in message and allowed in message, message


@pytest.mark.parametrize("name,value", [("STABLERT_PARTITIONER", "off"), ("STABLERT_PARTITIONER", "YES"),
                                        ("STABLERT_DEBUG_PARTITIONER", "true"), ("STABLERT_DEBUG_PARTITIONER", "0"),
                                        ("STABLERT_COLLECTIVE_TIMEOUT_SECONDS", "0.5"),
                                        ("STABLERT_DEVICE_COUNT", "3"), ("STABLERT_PARTITIONER", ""),
                                        ("STABLERT_ISA", "BEST")])
def test_good_environment_creates_a_client(stablert_device, monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    client = make_client()
    assert len(client.devices()) == (3 if name == "STABLERT_DEVICE_COUNT" else 1)


def test_bad_environment_through_jax_is_an_error_not_a_crash():
    out = run_python("""
        import jax
        try:
            jax.devices("stablert")
            print("NO ERROR")
        except Exception as e:
            print("ERROR", e)
    """, STABLERT_COLLECTIVE_TIMEOUT_SECONDS="inf")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "ERROR" in out.stdout and "NO ERROR" not in out.stdout, out.stdout + out.stderr[-3000:]
    assert "STABLERT_COLLECTIVE_TIMEOUT_SECONDS='inf'" in out.stdout + out.stderr, out.stdout + out.stderr[-3000:]


def test_compile_time_variables_are_read_at_each_compilation(stablert_device, monkeypatch):
    x = jax.device_put(np.float32(2), stablert_device)
    monkeypatch.setenv("STABLERT_PARTITIONER", "sometimes")
    with pytest.raises(jax.errors.JaxRuntimeError, match="STABLERT_PARTITIONER='sometimes' is not a boolean"):
        jax.jit(lambda v: v + 1).lower(x).compile()
    monkeypatch.setenv("STABLERT_PARTITIONER", "off")
    assert float(jax.jit(lambda v: v + 2).lower(x).compile()(x)) == 4.0


# --- create options -------------------------------------------------------------------------

BAD_CREATE_OPTIONS = [
    ({"device_count": "-1"}, "device_count='-1' is not an integer in [1, 4096]"),
    ({"device_count": "0"}, "device_count='0' is not an integer in [1, 4096]"),
    ({"device_count": "four"}, "device_count='four' is not an integer in [1, 4096]"),
    ({"device_count": -1}, "device_count=-1 is not an integer in [1, 4096]"),
    ({"device_count": 5000}, "device_count=5000 is not an integer in [1, 4096]"),
    ({"device_count": True}, "device_count is a bool; it must be an integer in [1, 4096]"),
    ({"device_count": 2.5}, "device_count is a float; it must be an integer in [1, 4096]"),
    ({"device_count": [1, 2]}, "device_count is an integer list; it must be an integer in [1, 4096]"),
    ({"cpu_device_count": "x"}, "cpu_device_count='x' is not an integer in [1, 4096]"),
    ({"num_nodes": "zero"}, "num_nodes"),
    ({"node_id": "-3"}, "node_id"),
    ({"device_cuont": 2}, "unknown create option 'device_cuont'"),
]


@pytest.mark.parametrize("options,expected", BAD_CREATE_OPTIONS)
def test_bad_create_options(stablert_device, options, expected):
    with pytest.raises(jax.errors.JaxRuntimeError) as error:
        make_client(options)
    assert expected in str(error.value), str(error.value)
    assert "INVALID_ARGUMENT" in str(error.value) or "UNIMPLEMENTED" in str(error.value), str(error.value)


def test_create_option_device_count(stablert_device):
    assert len(make_client({"device_count": "2"}).devices()) == 2
    assert len(make_client({"device_count": 3}).devices()) == 3


def test_bad_create_option_through_jax_config():
    out = run_python("""
        import jax
        jax.config.update("jax_pjrt_client_create_options", "device_count:-1")
        try:
            jax.devices("stablert")
            print("NO ERROR")
        except Exception as e:
            print("ERROR", e)
    """)
    assert out.returncode == 0, out.stderr[-3000:]
    text = out.stdout + out.stderr
    assert "NO ERROR" not in out.stdout and "device_count='-1' is not an integer in [1, 4096]" in text, text[-3000:]


# --- compile options: as XLA's CPU backend ---------------------------------------------------

COMPILE_OPTIONS = [
    {"xla_cpu_enable_fast_math": True},
    {"xla_cpu_enable_fastmath": True},  # misspelt
    {"not_an_option": 1},
    {"": True},
    {"xla_cpu_enable_fast_math": 3},
    {"xla_cpu_enable_fast_math": "true"},
    {"xla_cpu_enable_fast_math": 1.5},
    {"xla_cpu_fast_math_honor_nans": False},
    {"xla_gpu_enable_fast_min_max": True},  # another backend's option: XLA's CPU accepts it too
    {"xla_dump_max_hlo_modules": 2},
    {"xla_dump_max_hlo_modules": "5"},
    {"xla_dump_max_hlo_modules": "abc"},
    {"xla_dump_max_hlo_modules": True},
    {"xla_dump_max_hlo_modules": 2.5},
    {"xla_dump_max_hlo_modules": 2 ** 40},
    {"xla_debug_buffer_assignment_show_max": 2 ** 40},
    {"xla_disable_hlo_passes": "foo,bar"},
    {"xla_disable_hlo_passes": 3},
    {"xla_gpu_autotune_gemm_rtol": 0.5},
    {"xla_gpu_autotune_gemm_rtol": "0.5"},
    {"xla_gpu_autotune_gemm_rtol": 1},
    {"xla_gpu_autotune_gemm_rtol": 1e300},
    {"xla_gpu_autotune_gemm_rtol": "abc"},
    {"xla_step_marker_location": "STEP_MARK_AT_ENTRY"},
    {"xla_step_marker_location": "bogus"},
    {"xla_step_marker_location": 1},
    {"xla_step_marker_location": True},
    {"xla_cpu_experimental_xnn_fusion_type": "LIBRARY_FUSION_TYPE_DOT,LIBRARY_FUSION_TYPE_ELTWISE"},
    {"xla_cpu_experimental_xnn_fusion_type": "LIBRARY_FUSION_TYPE_DOT,bogus"},
    {"xla_backend_extra_options": "a"},
    {"xla_embed_ir_in_executable": True, "xla_cpu_enable_fastmath": False},
]


def compile_outcome(device, options):
    x = jax.device_put(np.float32(2), device)
    try:
        jax.jit(lambda v: v * 3).lower(x).compile(compiler_options=options)
        return "ok"
    except jax.errors.JaxRuntimeError as e:
        return str(e)


@pytest.mark.parametrize("options", COMPILE_OPTIONS, ids=lambda o: ",".join(f"{k}={v!r}" for k, v in o.items()))
def test_compile_options_as_xla(stablert_device, cpu_device, options):
    expected = compile_outcome(cpu_device, options)
    got = compile_outcome(stablert_device, options)
    assert got == expected, f"XLA: {expected}\nStableRT: {got}"


def test_misspelt_compile_option_is_named(stablert_device):
    outcome = compile_outcome(stablert_device, {"xla_cpu_enable_fastmath": True})
    assert "No such compile option: 'xla_cpu_enable_fastmath'" in outcome, outcome


# --- collective timeout -----------------------------------------------------------------------

MISSING_PEER = """
    import time
    import jax, jax.numpy as jnp
    from jax.sharding import Mesh, PartitionSpec as P
    import numpy as np
    mesh = Mesh(np.array(jax.devices("stablert")[:2]), ("i",))
    def body(x):
        return jax.lax.cond(jax.lax.axis_index("i") == 0, lambda v: jax.lax.psum(v, "i"), lambda v: v, x)
    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=False))
    start = time.time()
    try:
        f(jnp.arange(4.0)).block_until_ready()
        print("NO ERROR")
    except Exception as e:
        print("ERROR", e)
    print("ELAPSED", time.time() - start)
"""


def test_small_collective_timeout_names_the_missing_device():
    out = run_python(MISSING_PEER, STABLERT_COLLECTIVE_TIMEOUT_SECONDS="0.3", STABLERT_DEVICE_COUNT="2")
    text = out.stdout
    assert out.returncode == 0 and "ERROR" in text and "NO ERROR" not in text, text + out.stderr[-3000:]
    assert "DEADLINE_EXCEEDED" in text and "stablehlo.all_reduce" in text, text
    assert "devices 1 did not reach this collective within 0.3 s" in text, text
    assert float(text.split("ELAPSED")[1]) < 30, text


# --- dumps ------------------------------------------------------------------------------------

PARTS = ["input.mlirbc", "input.txt", "lowered.txt", "plan.txt", "compile_options.pb", "compile_options.txt",
         "timings.json"]


def dumped(directory):
    """{prefix: [parts]} of the dump files in `directory`."""
    out = {}
    for path in sorted(glob.glob(os.path.join(directory, "stablert.*"))):
        name = os.path.basename(path)
        for part in PARTS + ["error.txt"]:
            if name.endswith("." + part):
                out.setdefault(name[: -len(part) - 1], []).append(part)
    return out


def test_dump_directory_is_created_and_filled(stablert_device, monkeypatch, tmp_path):
    directory = tmp_path / "missing" / "nested"
    monkeypatch.setenv("STABLERT_DUMP_DIR", str(directory))
    x = jax.device_put(np.arange(4, dtype=np.float32), stablert_device)

    def f(v):
        return jnp.sin(v) * 2

    def g(v):
        return v.sum()

    jax.jit(f)(x).block_until_ready()
    jax.jit(g)(x).block_until_ready()
    programs = dumped(directory)
    assert len(programs) == 2, os.listdir(directory)
    names = sorted(programs)
    assert ".jit_f." in names[0] and ".jit_g." in names[1], names
    for prefix, parts in programs.items():
        assert sorted(parts) == sorted(PARTS), (prefix, parts)
        for part in parts:
            assert os.path.getsize(directory / f"{prefix}.{part}") > 0, (prefix, part)
        assert prefix.split(".")[1] == str(os.getpid())
    first = names[0]
    assert "stablehlo.sine" in (directory / f"{first}.input.txt").read_text()
    plan = (directory / f"{first}.plan.txt").read_text()
    assert plan.startswith("plan v") and "steps:" in plan and "arena" in plan, plan
    timings = json.loads((directory / f"{first}.timings.json").read_text())
    assert timings["module"] == "jit_f"
    assert {"options", "read", "verify", "lower_and_assign_buffers", "prepare_kernels"} <= set(timings["phases_us"])
    options = (directory / f"{first}.compile_options.txt").read_text()
    assert "num_partitions: 1" in options, options


def test_dump_by_compile_option_xla_dump_to(stablert_device, tmp_path):
    x = jax.device_put(np.float32(2), stablert_device)
    directory = tmp_path / "by_option"
    jax.jit(lambda v: v - 1).lower(x).compile(compiler_options={"xla_dump_to": str(directory)})
    programs = dumped(directory)
    assert len(programs) == 1 and sorted(next(iter(programs.values()))) == sorted(PARTS), os.listdir(directory)


def test_dump_that_cannot_be_created_names_the_variable(stablert_device, monkeypatch, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("STABLERT_DUMP_DIR", str(blocker / "sub"))
    with pytest.raises(jax.errors.JaxRuntimeError) as error:
        make_client()
    assert f"STABLERT_DUMP_DIR={blocker / 'sub'}" in str(error.value), str(error.value)
    x = jax.device_put(np.float32(2), stablert_device)
    with pytest.raises(jax.errors.JaxRuntimeError, match="STABLERT_DUMP_DIR=.*cannot create the dump directory"):
        jax.jit(lambda v: v * 7).lower(x).compile()


DUMP_ONE = """
    import jax, jax.numpy as jnp
    def f(v):
        return v * 2 + 1
    jax.jit(f)(jnp.arange(3.0)).block_until_ready()
    print("ok")
"""


def test_two_processes_dump_under_distinct_names(tmp_path):
    directory = tmp_path / "shared"
    env = dict(os.environ, JAX_PLATFORMS="stablert", STABLERT_DUMP_DIR=str(directory))
    env.pop("XLA_FLAGS", None)
    runs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(DUMP_ONE)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for run in runs:
        out, err = run.communicate(timeout=240)
        assert run.returncode == 0 and "ok" in out, err[-3000:]
    programs = dumped(directory)
    jit_f = [p for p in programs if ".jit_f." in p]
    assert len(jit_f) == 2, os.listdir(directory)
    assert jit_f[0].split(".")[1] != jit_f[1].split(".")[1], jit_f  # different pids
    # Same program, same fingerprint.
    assert jit_f[0].split(".")[-1] == jit_f[1].split(".")[-1], jit_f
    for prefix in jit_f:
        assert sorted(programs[prefix]) == sorted(PARTS), programs[prefix]


def test_xla_flags_dump_to_is_honoured_and_other_flags_ignored(tmp_path):
    directory = tmp_path / "xla_flags"
    out = run_python(DUMP_ONE, XLA_FLAGS=f"--xla_dump_hlo_as_text --xla_dump_to={directory}")
    assert out.returncode == 0 and "ok" in out.stdout, out.stderr[-3000:]
    programs = dumped(directory)
    assert any(".jit_f." in p for p in programs), os.listdir(directory)


def test_option_list_matches_the_installed_jaxlib(tmp_path):
    """src/runtime/xla_debug_options.inc is what the generator makes from this jaxlib."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = tmp_path / "options.inc"
    subprocess.run([sys.executable, os.path.join(root, "tools", "compile_options", "generate_xla_option_names.py"),
                    "--out", str(out)], check=True, capture_output=True, timeout=120)
    committed = open(os.path.join(root, "src", "runtime", "xla_debug_options.inc")).read()
    assert out.read_text() == committed, "rerun tools/compile_options/generate_xla_option_names.py"
