"""Compile time: independent of the size of the data, and reported per phase in the dumps.

Counts, not times: the dump's timings.json (docs/configuration.md, "Dumps") carries the work
counters of each compilation (ops read, plan steps, constants and their bytes); compiling the
same program over 1K and over 1M elements must do the same work, and no constant the compiler
makes may grow with the data (an iota, a broadcast, a splat or an RNG stream is computed when
the program runs, never at compile time).
"""
import glob
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

LOWER_PARTS = ["lower", "fold_gather_scatter", "fold_dots", "dead_steps", "fold_views", "fuse_elementwise", "workspaces", "in_place",
               "buffer_assignment"]
SIZE_INDEPENDENT = ["ir_ops", "plan_steps", "plan_values", "plan_constants", "constant_bytes",
                    "largest_constant_bytes"]


def compile_and_read_timings(fn, args, tmp_path, name):
    directory = tmp_path / name
    jax.jit(fn).lower(*args).compile(compiler_options={"xla_dump_to": str(directory)})
    files = glob.glob(os.path.join(directory, "stablert.*.timings.json"))
    assert len(files) == 1, os.listdir(directory)
    with open(files[0]) as f:
        return json.load(f)


def test_timings_break_compilation_into_phases(stablert_device, tmp_path):
    x = jax.device_put(np.ones((64, 64), np.float32), stablert_device)
    timings = compile_and_read_timings(lambda a: jnp.tanh(a @ a).sum(axis=0), (x,), tmp_path, "phases")
    phases = timings["phases_us"]
    assert list(phases)[:2] == ["options", "read"], phases
    for phase in ["read", "verify", "lower_and_assign_buffers", "layouts", "prepare_kernels"]:
        assert phase in phases and phases[phase] >= 0, phases
    parts = timings["parts_us"]["lower_and_assign_buffers"]
    assert list(parts) == LOWER_PARTS, parts
    # The parts are measured inside the phase they break down.
    assert sum(parts.values()) <= phases["lower_and_assign_buffers"] + len(parts), (parts, phases)
    assert timings["total_us"] >= sum(phases.values()) - len(phases)
    counters = timings["counters"]
    assert counters["ir_ops"] >= 4 and counters["plan_steps"] >= 3, counters
    assert counters["arena_bytes"] >= 64 * 64 * 4, counters


PROGRAMS = {
    "random.normal": lambda n: (lambda k: jax.random.normal(k, (n,)), (jax.random.key(0),)),
    "random.uniform 2-D": lambda n: (lambda k: jax.random.uniform(k, (n // 1024, 1024)), (jax.random.key(1),)),
    "iota and broadcast": lambda n: (lambda x: jnp.arange(n, dtype=jnp.float32) * x + jnp.full((n,), 3.0),
                                     (np.float32(2),)),
    "ones and zeros": lambda n: (lambda x: (jnp.ones((n,)) * x, jnp.zeros((n,), jnp.int32) + 1), (np.float32(2),)),
    "erf_inv chain": lambda n: (lambda x: jax.scipy.special.ndtri(jnp.full((n,), 0.25) + x), (np.float32(0.1),)),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_compile_work_does_not_grow_with_the_data(stablert_device, tmp_path, name):
    counters = {}
    for n in (1 << 10, 1 << 20):
        fn, args = PROGRAMS[name](n)
        args = jax.device_put(args, stablert_device)
        counters[n] = compile_and_read_timings(fn, args, tmp_path, f"n{n}")["counters"]
    small, large = counters[1 << 10], counters[1 << 20]
    for key in SIZE_INDEPENDENT:
        assert small[key] == large[key], (key, small, large)
    # The program differs only in the shapes it names (a few bytes of varints).
    assert abs(small["program_bytes"] - large["program_bytes"]) <= 64, (small, large)
    # Nothing the compiler builds holds a per-element table: constants stay scalars.
    assert large["largest_constant_bytes"] <= 64, large


def test_random_normal_1m_runs_after_a_compile_without_materialized_constants(stablert_device, cpu_device):
    normal = jax.jit(lambda k: jax.random.normal(k, (1 << 20,)))
    got = normal(jax.device_put(jax.random.key(3), stablert_device))
    want = normal(jax.device_put(jax.random.key(3), cpu_device))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
