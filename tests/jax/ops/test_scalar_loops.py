"""Loops over scalars, which StableRT runs on a register file (runtime/register_program.h):
Euler integrations with transcendental functions over thousands of steps, integer recurrences,
data-dependent while loops and swapped carries, in f32, f64 and integer types, compared
against XLA:CPU. Bit-exactness: each math function computed on single elements inside a loop
(its scalar function) gives the bits StableRT's vector kernel gives the same elements."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from .compare import Call, check_cases, run_on, stablert

FLOATS = [np.dtype(np.float32), np.dtype(np.float64)]
INTS = [np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.int64)]


def _euler(steps, f):
    return lambda y: lax.fori_loop(0, steps, lambda _, y: y + 0.001 * (-0.5 * y + f(y * 1.1) * 0.3 - y * y * 0.01 + 1.0), y)


def float_cases(dt):
    def scalar(v):
        return np.array(v, dt)

    def logistic_map(x):  # chaotic for 3.9, so only 60 steps stay comparable
        return lax.fori_loop(0, 60, lambda _, x: 3.9 * x * (1 - x), x)

    def newton_sqrt(a):  # a while loop with a data-dependent condition
        def cond(s):
            x, i = s
            return (jnp.abs(x * x - a) > a * 1e-5) & (i < 100)
        return lax.while_loop(cond, lambda s: (0.5 * (s[0] + a / s[0]), s[1] + 1), (a, 0))

    def damped(x, v):  # two carries updated from each other
        def body(_, s):
            x, v = s
            return x + 0.01 * v, v - 0.01 * (x + 0.1 * v)
        return lax.fori_loop(0, 3000, body, (x, v))

    return {
        "euler_sin_2000": Call(_euler(2000, jnp.sin), scalar(1.0)),
        "euler_cos_2000": Call(_euler(2000, jnp.cos), scalar(-0.5)),
        "euler_tanh_3000": Call(_euler(3000, jnp.tanh), scalar(2.0)),
        "euler_logistic_2000": Call(_euler(2000, jax.nn.sigmoid), scalar(0.25)),
        "exp_log_5000": Call(lambda y: lax.fori_loop(0, 5000, lambda _, y: jnp.log(jnp.exp(y) + 1.0) * 0.5, y),
                             scalar(3.0)),
        "logistic_map_60": Call(logistic_map, scalar(0.3)),
        "newton_sqrt": Call(newton_sqrt, scalar(1234.5)),
        "damped_3000": Call(damped, scalar(1.0), scalar(0.0)),
    }


def int_cases(dt):
    def scalar(v):
        return np.array(v, dt)

    def lcg(x):
        a, c = (1103515245, 12345) if dt != np.int64 else (6364136223846793005, 1442695040888963407)
        return lax.fori_loop(0, 5000, lambda _, x: x * np.array(a, dt) + np.array(c, dt), x)

    def xorshift_swap(a, b):
        def body(_, s):
            a, b = s
            return b, (a ^ (a << 3)) + (b >> 2)
        return lax.fori_loop(0, 4000, body, (a, b))

    def collatz(n):  # a data-dependent while loop
        def body(s):
            n, k = s
            return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1
        return lax.while_loop(lambda s: s[0] != 1, body, (n, np.array(0, dt)))

    return {
        "lcg_5000": Call(lcg, scalar(7)),
        "xorshift_swap_4000": Call(xorshift_swap, scalar(12345), scalar(678)),
        "collatz_27": Call(collatz, scalar(27)),
        "collatz_97": Call(collatz, scalar(97)),
    }


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
def test_float_loops(dtype):
    check_cases(None, float_cases(dtype), op="scalar_loop", dtype=dtype)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
def test_int_loops(dtype):
    check_cases(None, int_cases(dtype), op="scalar_loop", dtype=dtype)


UNARY = {
    "sin": jnp.sin, "cos": jnp.cos, "tan": jnp.tan, "exp": jnp.exp, "expm1": jnp.expm1, "log": jnp.log,
    "log1p": jnp.log1p, "tanh": jnp.tanh, "logistic": jax.nn.sigmoid, "sqrt": jnp.sqrt, "rsqrt": lax.rsqrt,
    "cbrt": jnp.cbrt,
}
BINARY = {"pow": jnp.power, "atan2": jnp.arctan2}


def _inputs(dt, n, seed):
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.integers(-4, 4, n)
    x = (rng.uniform(-1, 1, n) * scale).astype(dt)
    x[:8] = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e30], dt)
    return x


@pytest.mark.parametrize("dtype", FLOATS + [np.dtype(jnp.bfloat16)], ids=lambda d: d.name)
@pytest.mark.parametrize("name", list(UNARY) + list(BINARY))
def test_scalar_path_gives_the_vector_kernels_bits(name, dtype):
    """f on one element at a time inside a loop (the register path) equals f on the whole
    array (the vector kernel), bit for bit, on StableRT."""
    n = 2048
    x, y = _inputs(dtype, n, 1), np.abs(_inputs(dtype, n, 2))
    f = UNARY.get(name)
    g = BINARY.get(name)

    def vector(x, y):
        return (f(x), f(y)) if f else (g(x, y), g(y, x))

    def per_element(x, y):
        def body(i, outs):
            a, b = x[i], y[i]
            u, v = vector(a, b)  # two scalar steps in a row: a register program
            return outs[0].at[i].set(u), outs[1].at[i].set(v)
        zeros = jnp.zeros_like(x)
        return lax.fori_loop(0, n, body, (zeros, zeros))

    want = run_on(stablert(), vector, x, y)
    got = run_on(stablert(), per_element, x, y)
    for w, g_ in zip(want, got):
        w, g_ = np.asarray(w), np.asarray(g_)
        bits = np.dtype(f"u{w.dtype.itemsize}")
        np.testing.assert_array_equal(g_.view(bits), w.view(bits), err_msg=f"{name} {dtype.name}")


F32_EDGES = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, 1.1754944e-38, -1.1754944e-38, 2.0**-14, float.fromhex("0x1.fffffep-14"), 2.0**-13,
                      -2.0**-13, 0.5, 1.5707964, 3.1415927, 38999.996, 39000.0, -39000.0, 39000.004, -39000.004, 1e5,
                      123456.79, 1e10, 1e30, 3.4028235e38, -3.4028235e38, np.inf, -np.inf, np.nan], np.float32)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_links_of_chains_give_the_vector_kernels_bits(name):
    """sin/cos inside a chain of dependent f32 arithmetic (the register program calls them on
    a machine register) on every edge of their decisions (zeros, denormals, 2^-13, the end of
    the vector domain at 39000, huge values, inf, NaN) and random values: the bits of the
    vector kernel on the whole array, and XLA:CPU's values within tolerance."""
    f = UNARY[name]
    x = np.concatenate([F32_EDGES, _inputs(np.dtype(np.float32), 4096, 3),
                        np.random.default_rng(4).uniform(-1e5, 1e5, 2048).astype(np.float32)])
    one = np.float32(1.0)

    def per_element(x, one):
        def body(i, out):
            return out.at[i].set(f(x[i] * one) * one + 0.0)  # multiply, sin/cos, multiply, add: one chain
        return lax.fori_loop(0, x.shape[0], body, jnp.zeros_like(x))

    want = np.asarray(run_on(stablert(), lambda x, one: f(x * one) * one + 0.0, x, one))
    got = np.asarray(run_on(stablert(), per_element, x, one))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=name)
    check_cases(None, {"edges": Call(per_element, x, one)}, op=f"scalar_loop_{name}", dtype=np.dtype(np.float32))


def test_euler_loops_from_edge_values():
    """The Euler step (a chain through sin) carried from NaN, infinities, denormals and
    values beyond sin's vector domain, against XLA:CPU."""
    cases = {f"y0_{v!r}": Call(_euler(200, jnp.sin), np.float32(v))
             for v in [np.nan, np.inf, -np.inf, 1e-40, -0.0, 39000.004, -1e6, 3e4]}
    cases["cos_denormal"] = Call(_euler(200, jnp.cos), np.float32(1e-42))
    check_cases(None, cases, op="scalar_loop", dtype=np.dtype(np.float32))


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
def test_counter_conditions_of_every_direction(dtype):
    """Loops whose condition is one compare of the counter (tested inline by the register
    program), in every direction, counting up, down and by steps, including loops that do
    not run; the carried f32 grows every iteration, so one iteration more or less shows."""
    def counted(cond, step, start):
        def run(y):
            def body(s):
                i, y = s
                i = i + np.array(step, dtype) if step > 0 else i - np.array(-step, dtype)
                return i, y + 0.01 * (1.5 / (2.0 - jnp.cos(y * 0.7)))
            return lax.while_loop(lambda s: cond(s[0]), body, (np.array(start, dtype), y))[1]
        return run

    y = np.float32(0.25)
    cases = {
        "lt_up": Call(counted(lambda i: i < 300, 1, 0), y),
        "le_by_3": Call(counted(lambda i: i <= 301, 3, 1), y),
        "ne_up": Call(counted(lambda i: i != 77, 1, 0), y),
        "eq_once": Call(counted(lambda i: i == 5, 1, 5), y),
        "lt_never": Call(counted(lambda i: i < 3, 1, 10), y),
        "gt_down": Call(counted(lambda i: i > 2, -1, 200), y),
        "ge_down": Call(counted(lambda i: i >= 7, -1, 150), y),
    }
    check_cases(None, cases, op="scalar_loop", dtype=np.dtype(np.float32))
