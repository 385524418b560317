"""Host callbacks on stablert: jax.pure_callback, jax.experimental.io_callback (ordered and
unordered), jax.debug.callback and jax.debug.print, compared with JAX's CPU backend in the
same process. On stablert they run as stablehlo.send/recv host transfers served by the
PJRT send/recv callbacks (python/stablert/_jax_shims.py, src/plan/lower_host_transfer.cc)."""
import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax
from jax.experimental import io_callback


def run(device, f, *args):
    """jit(f)(*args) on `device`, the arguments placed there; results as NumPy."""
    with jax.default_device(device):
        out = jax.jit(f)(*[jax.device_put(a, device) for a in args])
        return jax.tree.map(np.asarray, out)


def both(stablert_device, cpu_device, f, *args):
    got = run(stablert_device, f, *args)
    want = run(cpu_device, f, *args)
    jax.tree.map(np.testing.assert_array_equal, got, want)
    return got


def spec(x):
    return jax.ShapeDtypeStruct(np.shape(x), np.asarray(x).dtype)


DTYPE_CASES = [
    np.float32, np.float64, ml_dtypes.bfloat16, np.float16, np.bool_, np.int8, np.int32, np.int64, np.uint8,
    np.uint64, np.complex64,
]


@pytest.mark.parametrize("dtype", DTYPE_CASES, ids=lambda d: np.dtype(d).name)
def test_pure_callback_round_trips_each_dtype(stablert_device, cpu_device, dtype):
    x = (np.arange(12).reshape(3, 4) % 5).astype(dtype)

    def host(a):
        assert a.dtype == np.dtype(dtype) and a.shape == (3, 4)
        return np.asarray(a[::-1], dtype=dtype)  # row-major order must survive the transfer

    def f(a):
        return jax.pure_callback(host, spec(x), a)

    got = both(stablert_device, cpu_device, f, x)
    np.testing.assert_array_equal(got, x[::-1])


def test_pure_callback_several_operands_and_results(stablert_device, cpu_device):
    a = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    b = np.arange(4, dtype=np.int32)
    s = np.float64(2.5)

    def host(x, y, z):
        return x * 2, (y + 1).astype(np.int32), np.float64(z * 3), np.asarray(x.sum() > 0)

    def f(x, y, z):
        outs = jax.pure_callback(host, (spec(a), spec(b), spec(s), jax.ShapeDtypeStruct((), np.bool_)), x, y, z)
        return outs[0] + 1, outs[1] * 2, outs[2], outs[3]

    both(stablert_device, cpu_device, f, a, b, s)


def test_pure_callback_scalars_and_zero_size_arrays(stablert_device, cpu_device):
    empty = np.zeros((0, 3), np.float32)

    def host(x, e):
        assert e.shape == (0, 3)
        return np.float32(x + 1), np.zeros((2, 0), np.int32), np.zeros((0,), np.float32)

    def f(x, e):
        return jax.pure_callback(
            host, (spec(np.float32(0)), jax.ShapeDtypeStruct((2, 0), np.int32), spec(np.zeros(0, np.float32))), x, e)

    got = both(stablert_device, cpu_device, f, np.float32(4), empty)
    assert got[0] == 5 and got[1].shape == (2, 0) and got[2].shape == (0,)


def test_pure_callback_without_operands(stablert_device, cpu_device):
    def f():
        return jax.pure_callback(lambda: np.arange(3, dtype=np.float32), jax.ShapeDtypeStruct((3,), np.float32))

    got = both(stablert_device, cpu_device, f)
    np.testing.assert_array_equal(got, [0, 1, 2])


def test_io_callback_without_results_runs_for_its_effect(stablert_device, cpu_device):
    for device in (stablert_device, cpu_device):
        seen = []

        def f(x):
            io_callback(lambda v: seen.append(np.asarray(v).copy()), None, x)
            return x * 2

        np.testing.assert_array_equal(run(device, f, np.arange(3.0)), [0, 2, 4])
        jax.effects_barrier()
        assert len(seen) == 1
        np.testing.assert_array_equal(seen[0], [0, 1, 2])


@pytest.mark.parametrize("vmap_method", ["sequential", "expand_dims", "broadcast_all"])
def test_vmap_of_pure_callback(stablert_device, cpu_device, vmap_method):
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)

    def f(x):
        return jax.pure_callback(lambda v: np.sin(v) * 2, spec(xs[0]), x, vmap_method=vmap_method)

    both(stablert_device, cpu_device, jax.vmap(f), xs)


def collect(device, make):
    """Runs make(log) under jit on `device`; returns (result, what the callbacks logged)."""
    log = []
    out = make(log)
    jax.effects_barrier()
    return out, log


def test_ordered_io_callback_in_a_while_loop_runs_each_iteration_in_order(stablert_device, cpu_device):
    def make(device):
        def body(i, carry):
            def host(v, k):
                log.append((int(k), float(v)))
                return np.float32(v * 2 + k)

            return io_callback(host, jax.ShapeDtypeStruct((), np.float32), carry, i, ordered=True)

        log = []
        out = run(device, lambda x: lax.fori_loop(0, 5, body, x), np.float32(1))
        jax.effects_barrier()
        return out, log

    got, got_log = make(stablert_device)
    want, want_log = make(cpu_device)
    np.testing.assert_array_equal(got, want)
    assert got_log == want_log and [k for k, _ in got_log] == [0, 1, 2, 3, 4]


def test_pure_callback_in_scan_and_cond(stablert_device, cpu_device):
    def f(xs, flag):
        def step(c, x):
            y = jax.pure_callback(lambda a, b: np.float32(a * b + 1), spec(np.float32(0)), c, x)
            return y, y * 2

        carry, ys = lax.scan(step, np.float32(1), xs)
        z = lax.cond(flag > 0,
                     lambda v: jax.pure_callback(lambda a: a + 100, spec(np.float32(0)), v),
                     lambda v: v - 1, carry)
        return carry, ys, z

    xs = np.linspace(0, 1, 5, dtype=np.float32)
    both(stablert_device, cpu_device, f, xs, np.int32(1))
    both(stablert_device, cpu_device, f, xs, np.int32(0))


def test_ordered_io_callbacks_keep_their_order_across_calls(stablert_device, cpu_device):
    def logs(device):
        log = []

        def f(x):
            io_callback(lambda v: log.append(("a", float(v))), None, x, ordered=True)
            y = io_callback(lambda v: (log.append(("b", float(v))), np.float32(v + 1))[1],
                            jax.ShapeDtypeStruct((), np.float32), x, ordered=True)
            io_callback(lambda v: log.append(("c", float(v))), None, y, ordered=True)
            return y

        g = jax.jit(f)
        with jax.default_device(device):
            for i in range(4):
                g(jax.device_put(np.float32(i), device))
        jax.effects_barrier()
        return log

    got = logs(stablert_device)
    assert got == logs(cpu_device)
    assert [name for name, _ in got] == ["a", "b", "c"] * 4


def test_debug_print_prints_what_cpu_prints(stablert_device, cpu_device, capfd):
    def f(x, y):
        jax.debug.print("x={x} y={y}", x=x, y=y)
        jax.debug.print("sum {}", x.sum(), ordered=True)
        return x * y

    outputs = []
    for device in (stablert_device, cpu_device):
        run(device, f, np.arange(4, dtype=np.float32), np.int32(3))
        jax.effects_barrier()
        outputs.append(capfd.readouterr().out)
    assert outputs[0] == outputs[1]
    assert "x=[0. 1. 2. 3.] y=3" in outputs[0] and "sum 6.0" in outputs[0]


def test_debug_print_in_a_loop_prints_every_iteration(stablert_device, cpu_device, capfd):
    def f(x):
        def body(i, c):
            jax.debug.print("i={i} c={c}", i=i, c=c, ordered=True)
            return c * 2

        return lax.fori_loop(0, 3, body, x)

    outputs = []
    for device in (stablert_device, cpu_device):
        run(device, f, np.float32(1))
        jax.effects_barrier()
        outputs.append(capfd.readouterr().out)
    assert outputs[0] == outputs[1] == "i=0 c=1.0\ni=1 c=2.0\ni=2 c=4.0\n"


def test_debug_callback(stablert_device, cpu_device):
    for device in (stablert_device, cpu_device):
        seen = []

        def f(x):
            jax.debug.callback(lambda v: seen.append(np.asarray(v).tolist()), x * 3)
            return x

        run(device, f, np.arange(3, dtype=np.int32))
        jax.effects_barrier()
        assert seen == [[0, 3, 6]]


def test_an_exception_in_the_callback_fails_the_execution_with_its_message(stablert_device):
    def host(x):
        raise ValueError("the host refuses this value")

    def f(x):
        return jax.pure_callback(host, spec(np.float32(0)), x)

    with pytest.raises(Exception, match="the host refuses this value"):
        run(stablert_device, f, np.float32(1))


def test_a_wrong_result_shape_fails_like_on_cpu(stablert_device):
    def f(x):
        return jax.pure_callback(lambda v: np.zeros(5, np.float32), spec(np.zeros(3, np.float32)), x)

    with pytest.raises(Exception, match=re.escape("Incorrect output shape for return value #0")):
        run(stablert_device, f, np.zeros(3, np.float32))


def test_grad_through_custom_jvp_with_pure_callback(stablert_device, cpu_device):
    @jax.custom_jvp
    def host_sin(x):
        return jax.pure_callback(np.sin, spec(np.zeros(4, np.float32)), x, vmap_method="sequential")

    @host_sin.defjvp
    def host_sin_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return host_sin(x), jax.pure_callback(np.cos, spec(np.zeros(4, np.float32)), x) * t

    f = jax.grad(lambda x: host_sin(x).sum() * 2)
    x = np.linspace(0, 1, 4, dtype=np.float32)
    got = both(stablert_device, cpu_device, f, x)
    np.testing.assert_allclose(got, 2 * np.cos(x), rtol=1e-6)


def test_callbacks_are_called_once_per_execution(stablert_device):
    calls = []

    def host(x):
        calls.append(1)
        return x

    g = jax.jit(lambda x: jax.pure_callback(host, spec(np.float32(0)), x) + 1)
    with jax.default_device(stablert_device):
        for i in range(5):
            assert float(g(jax.device_put(np.float32(i), stablert_device))) == i + 1
    assert len(calls) == 5


def test_callbacks_in_switch_branches_and_nested_jits(stablert_device, cpu_device):
    @jax.jit
    def inner(v):
        return jax.pure_callback(lambda a: a * 10, spec(np.float32(0)), v)

    def f(i, x):
        y = lax.switch(i, [lambda v: v + 1, inner, lambda v: inner(inner(v))], x)
        return inner(y) + inner(x)

    for i in range(3):
        both(stablert_device, cpu_device, f, np.int32(i), np.float32(2))


def test_a_callback_may_run_a_program_on_the_device_that_called_it(stablert_device):
    # The device is busy running the calling program; the inner program runs at once on its
    # thread instead of queueing behind the caller (which would wait for it forever).
    def callback(x):
        inner = jax.device_put(np.asarray(x), stablert_device)
        return np.asarray(jax.jit(jnp.sin)(inner) + jax.jit(lambda v: v * 2)(inner))

    f = jax.jit(lambda x: jax.pure_callback(callback, jax.ShapeDtypeStruct(x.shape, x.dtype), x) + 1)
    x = np.linspace(0, 1, 5, dtype=np.float32)
    got = f(jax.device_put(x, stablert_device))
    np.testing.assert_allclose(np.asarray(got), np.sin(x) + x * 2 + 1, rtol=1e-6)
