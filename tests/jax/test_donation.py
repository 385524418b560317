"""Donation: a donated argument's storage becomes a result's (no second copy of a training
step's parameters), results equal XLA:CPU's whether or not the update can be done in place,
and compiled.memory_analysis() reports what the plan needs."""
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def allocations(device):
    return device.memory_stats()["num_allocs"]


def mlp_params(rng, sizes):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append({"w": (rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32),
                       "b": (rng.standard_normal(fan_out) * 0.1).astype(np.float32)})
    return params


def loss_fn(params, x, y):
    h = x
    for layer in params[:-1]:
        h = jnp.tanh(h @ layer["w"] + layer["b"])
    out = h @ params[-1]["w"] + params[-1]["b"]
    return jnp.mean((out - y) ** 2)


def sgd_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return jax.tree.map(lambda p, g: p - 0.05 * g, params, grads), loss


def adam_step(state, x, y):
    params, m, v, t = state
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    t = t + 1
    m = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, m, grads)
    v = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, v, grads)
    tf = t.astype(jnp.float32)  # keeps the update in f32 under jax_enable_x64
    scale = jnp.sqrt(1 - 0.999 ** tf) / (1 - 0.9 ** tf)
    params = jax.tree.map(lambda p, m, v: p - 1e-3 * scale * m / (jnp.sqrt(v) + 1e-8), params, m, v)
    return (params, m, v, t), loss


SIZES = [256, 1024, 512, 16]  # about 3.1 MB of f32 parameters


def batch(rng):
    return (rng.standard_normal((64, SIZES[0])).astype(np.float32),
            rng.standard_normal((64, SIZES[-1])).astype(np.float32))


def pointers(tree):
    return [leaf.unsafe_buffer_pointer() for leaf in jax.tree.leaves(tree)]


def test_donated_sgd_step_keeps_one_copy_of_the_parameters(stablert_device, cpu_device):
    rng = np.random.default_rng(0)
    host_params = mlp_params(rng, SIZES)
    x, y = batch(rng)
    assert sum(leaf.nbytes for leaf in jax.tree.leaves(host_params)) > 2 << 20
    step = jax.jit(sgd_step, donate_argnums=0)

    want = jax.device_put(host_params, cpu_device)
    for _ in range(3):
        want, want_loss = step(want, jax.device_put(x, cpu_device), jax.device_put(y, cpu_device))

    params = jax.device_put(host_params, stablert_device)
    xs, ys = jax.device_put(x, stablert_device), jax.device_put(y, stablert_device)
    params, loss = step(params, xs, ys)  # compiles; the parameters now sit in owned storage
    jax.block_until_ready(params)
    before = pointers(params)
    count = allocations(stablert_device)
    for _ in range(2):
        params, loss = step(params, xs, ys)
    jax.block_until_ready((params, loss))
    # Two steps allocated their loss scalars and nothing else: every parameter leaf was
    # written into the donated leaf's storage.
    assert allocations(stablert_device) - count == 2
    assert pointers(params) == before
    for got, expected in zip(jax.tree.leaves(params), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(np.asarray(loss), np.asarray(want_loss), rtol=1e-5)


def test_donated_adam_step_equals_xla_and_reuses_its_state(stablert_device, cpu_device):
    rng = np.random.default_rng(1)
    host_params = mlp_params(rng, SIZES)
    zeros = jax.tree.map(np.zeros_like, host_params)
    host_state = (host_params, zeros, zeros, np.int32(0))
    x, y = batch(rng)
    step = jax.jit(adam_step, donate_argnums=0)
    kept = jax.device_put(host_state, stablert_device)
    for _ in range(4):  # the same steps without donation
        kept, kept_loss = jax.jit(adam_step)(kept, jax.device_put(x, stablert_device), jax.device_put(y, stablert_device))
    results = []
    for device in (cpu_device, stablert_device):
        state = jax.device_put(host_state, device)
        xs, ys = jax.device_put(x, device), jax.device_put(y, device)
        state, loss = step(state, xs, ys)
        jax.block_until_ready(state)
        before = pointers(state)
        count = allocations(device) if device is stablert_device else 0
        for _ in range(3):
            state, loss = step(state, xs, ys)
        jax.block_until_ready((state, loss))
        if device is stablert_device:
            assert pointers(state) == before, "every leaf of the optimizer state keeps its storage"
            assert allocations(device) - count == 3  # the losses
        results.append((state, loss))
    (want, want_loss), (got, got_loss) = results
    for g, k in zip(jax.tree.leaves(got), jax.tree.leaves(kept)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(k))  # donation changes no bit
    # Adam divides by sqrt(v) + 1e-8: rounding differences of tiny gradients grow to ~1e-5.
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=2e-5)
    np.testing.assert_allclose(np.asarray(got_loss), np.asarray(want_loss), rtol=1e-5)


@pytest.mark.parametrize("name,fn", [
    ("transpose", lambda a: a.T),
    ("reverse", lambda a: a[::-1]),
    ("transpose_and_scale", lambda a: (a.T, a * 2)),
    ("scale_then_transpose_sum", lambda a: a * 2 + a.T),
    ("roll", lambda a: jnp.roll(a, 7, axis=1)),
    ("reverse_columns_plus_one", lambda a: a[:, ::-1] + 1),
], ids=lambda v: v if isinstance(v, str) else "")
def test_results_not_computable_in_place_are_still_correct(stablert_device, cpu_device, name, fn):
    host = np.arange(1024 * 1024, dtype=np.float32).reshape(1024, 1024) / 1000
    want = jax.jit(fn)(jax.device_put(host, cpu_device))
    x = jax.device_put(host, stablert_device)
    x = jax.jit(lambda a: a + 0)(x)  # owned storage
    pointer = x.unsafe_buffer_pointer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Some donated buffers were not usable"
        got = jax.jit(fn, donate_argnums=0)(x)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    if name in ("transpose", "reverse"):
        # The only result reads the parameter out of order as it writes: new storage.
        assert got.unsafe_buffer_pointer() != pointer


def test_a_donated_buffer_passed_twice_is_refused_and_left_intact(stablert_device):
    # As on XLA:CPU ("Attempt to use a buffer that was previously donated in the same call").
    host = np.arange(1 << 18, dtype=np.float32)
    x = jax.jit(lambda a: a + 0)(jax.device_put(host, stablert_device))
    f = jax.jit(lambda a, b: a * 2 + b, donate_argnums=0)
    with pytest.raises(Exception, match="(?i)donat"):
        f(x, x)
    assert not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), host)
    y = jax.jit(lambda a: a + 0)(x)
    np.testing.assert_array_equal(np.asarray(f(x, y)), host * 3)  # a real donation still works
    assert x.is_deleted()


def test_a_zero_copy_argument_is_not_written(stablert_device):
    # A donated array whose bytes are the caller's host memory gets a new result buffer.
    host = np.arange(1 << 16, dtype=np.float32)
    x = jax.device_put(host, stablert_device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = jax.jit(lambda a: a * 3, donate_argnums=0)(x)
    np.testing.assert_array_equal(np.asarray(y), np.arange(1 << 16, dtype=np.float32) * 3)
    np.testing.assert_array_equal(host, np.arange(1 << 16, dtype=np.float32))


def test_a_pending_read_finishes_before_the_donated_storage_is_written(stablert_device):
    # y reads x (queued), then x is donated to an in-place update: y sees the old x.
    host = np.linspace(-1, 1, 1 << 20, dtype=np.float32)
    x = jax.jit(lambda a: a + 0)(jax.device_put(host, stablert_device))
    total = jax.jit(lambda a: jnp.sum(jnp.sin(a) ** 2))(x)
    pointer = x.unsafe_buffer_pointer()
    z = jax.jit(lambda a: a * 10, donate_argnums=0)(x)
    assert z.unsafe_buffer_pointer() == pointer
    np.testing.assert_allclose(np.asarray(total), np.sum(np.sin(host.astype(np.float64)) ** 2), rtol=1e-4)
    np.testing.assert_array_equal(np.asarray(z), host * 10)


def compile_and_read_arena(jitted, args, dump_dir, monkeypatch):
    """Compiles with the plan dumped (STABLERT_DUMP_DIR); returns the executable and the
    plan's arena size."""
    monkeypatch.setenv("STABLERT_DUMP_DIR", str(dump_dir))
    for old in dump_dir.glob("*"):
        old.unlink()
    compiled = jitted.lower(*args).compile()
    monkeypatch.delenv("STABLERT_DUMP_DIR")
    (plan,) = dump_dir.glob("*.plan.txt")
    return compiled, int(re.search(r"^arena: (\d+) bytes$", plan.read_text(), re.M).group(1))


def test_memory_analysis_reports_the_plan(stablert_device, cpu_device, tmp_path, monkeypatch):
    shape = jax.ShapeDtypeStruct((512, 256), np.float32)
    other = jax.ShapeDtypeStruct((256,), np.float32)
    # a is last read by a * 2, before the first result is written: it may back that result.
    fn = lambda a, b: (jnp.tanh(a * 2 + b) - 1, jnp.sum(b))
    stats = {}
    for device in (cpu_device, stablert_device):
        sharding = jax.sharding.SingleDeviceSharding(device)
        args = [jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding) for s in (shape, other)]
        for donate in (False, True):
            jitted = jax.jit(fn, donate_argnums=(0,) if donate else ())
            if device is stablert_device:
                compiled, arena = compile_and_read_arena(jitted, args, tmp_path, monkeypatch)
            else:
                compiled, arena = jitted.lower(*args).compile(), None
            stats[device.platform, donate] = (compiled.memory_analysis(), arena)
    for donate in (False, True):
        got, arena = stats["stablert", donate]
        want, _ = stats["cpu", donate]
        assert got.argument_size_in_bytes == want.argument_size_in_bytes == 512 * 256 * 4 + 256 * 4
        assert got.output_size_in_bytes == 512 * 256 * 4 + 4
        assert got.alias_size_in_bytes == (512 * 256 * 4 if donate else 0)
        assert got.temp_size_in_bytes == arena
        assert got.generated_code_size_in_bytes == 0
    # The chain a * 2 + b -> tanh -> - 1 runs as one fused step into the result buffer
    # (plan/fuse_elementwise.h): no 512 KiB intermediate, only tile buffers.
    assert 0 < stats["stablert", False][0].temp_size_in_bytes < 512 * 256 * 4


def test_memory_analysis_of_a_donated_training_step(stablert_device, tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    params = jax.device_put(mlp_params(rng, SIZES), stablert_device)
    x, y = (jax.device_put(a, stablert_device) for a in batch(rng))
    compiled, arena = compile_and_read_arena(jax.jit(lambda *a: sgd_step(*a), donate_argnums=0), (params, x, y), tmp_path, monkeypatch)
    stats = compiled.memory_analysis()
    param_bytes = sum(leaf.nbytes for leaf in jax.tree.leaves(params))
    assert stats.argument_size_in_bytes == param_bytes + x.nbytes + y.nbytes
    assert stats.output_size_in_bytes == param_bytes + 4
    assert stats.alias_size_in_bytes == param_bytes
    assert stats.temp_size_in_bytes == arena > 0
