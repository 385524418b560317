"""jax.profiler traces of stablert executions: per-execution and per-step device events.

The PJRT profiler extension hands JAX's profiler a plane "/device:CUSTOM:<id>" per device:
"XLA Modules" holds one event per execution (named by the jitted function), "XLA Ops" one
per plan step (named by its op, with its source location and kernel as the "source" stat).
"""
import glob
import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.profiler import ProfileData


def _trace(tmp_path, fn, *args, calls=3):
    with jax.profiler.trace(str(tmp_path)):
        for _ in range(calls):
            jax.block_until_ready(fn(*args))
    files = glob.glob(str(tmp_path / "**" / "*.xplane.pb"), recursive=True)
    assert len(files) == 1
    return ProfileData.from_file(files[0])


def _device_plane(profile, device_id):
    planes = {plane.name: plane for plane in profile.planes}
    return planes.get(f"/device:CUSTOM:{device_id}")


def _events(plane, line_name):
    for line in plane.lines:
        if line.name == line_name:
            return list(line.events)
    return []


def test_a_trace_holds_every_execution_and_its_steps(tmp_path, stablert_device):
    def model(a, b):
        return jnp.tanh(a @ b).sum(axis=1)

    line = inspect.getsourcelines(model)[1] + 1
    f = jax.jit(model)
    a = jax.device_put(np.ones((512, 512), np.float32), stablert_device)
    jax.block_until_ready(f(a, a))  # compiled outside the trace
    profile = _trace(tmp_path, f, a, a, calls=3)
    plane = _device_plane(profile, stablert_device.id)
    assert plane is not None, [p.name for p in profile.planes]
    modules = _events(plane, "XLA Modules")
    assert [e.name for e in modules] == ["jit_model"] * 3
    ops = _events(plane, "XLA Ops")
    products = [e for e in ops if e.name == "stablehlo.dot_general"]
    assert len(products) == 3
    source = dict(products[0].stats)["source"]
    assert f"test_profiler.py:{line}" in source and "kernel=" in source, source
    for module in modules:
        assert module.duration_ns > 0
    # Every step lies inside an execution.
    for op in ops:
        assert any(m.start_ns <= op.start_ns and op.start_ns + op.duration_ns <= m.start_ns + m.duration_ns + 1000
                   for m in modules), op.name


def test_each_trace_has_only_its_own_events(tmp_path, stablert_device):
    f = jax.jit(lambda x: x * 2 + 1)
    x = jax.device_put(np.arange(1 << 20, dtype=np.float32), stablert_device)
    jax.block_until_ready(f(x))
    first = _trace(tmp_path / "first", f, x, calls=2)
    jax.block_until_ready(f(x))  # not traced
    second = _trace(tmp_path / "second", f, x, calls=5)
    assert len(_events(_device_plane(first, stablert_device.id), "XLA Modules")) == 2
    assert len(_events(_device_plane(second, stablert_device.id), "XLA Modules")) == 5


def test_loops_and_many_devices(tmp_path):
    devices = jax.devices("stablert")
    f = jax.jit(lambda x: jax.lax.fori_loop(0, 10, lambda i, v: jnp.sin(v) + i, x))
    xs = [jax.device_put(np.full(1000, k, np.float32), d) for k, d in enumerate(devices)]
    for x in xs:
        jax.block_until_ready(f(x))

    def run_all():
        return [f(x) for x in xs]

    profile = _trace(tmp_path, run_all)
    for device in devices:
        plane = _device_plane(profile, device.id)
        assert plane is not None
        assert len(_events(plane, "XLA Modules")) == 3
        assert any(e.name == "stablehlo.while" for e in _events(plane, "XLA Ops"))
