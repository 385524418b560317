"""Loops whose carried values StableRT updates in place (plan/in_place.h): scans stacking
their outputs (1000 steps, several dtypes), carries permuted among themselves, nested loops,
x.at[i].set / .at[idx].add in a fori_loop over a million elements, a carry returned and read
after the loop, and the gradient of an LSTM-like scan. Compared against XLA:CPU."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from .compare import Call, check_cases

SCAN_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.int32)] + [I.FLOAT[1]]


def _scan_stacked(dt):
    if I.is_float(dt) and np.dtype(dt).itemsize >= 4:
        def body(c, xw):
            x, w = xw
            c = jnp.tanh(c @ w * 0.01 + x)
            return c, c
        w = I.random(dt, (128, 128), 2)
        return lambda c, xs: lax.scan(lambda c, x: body(c, (x, w)), c, xs)
    if I.is_float(dt):
        return lambda c, xs: lax.scan(lambda c, x: (c * 0.5 + x, c), c, xs)
    return lambda c, xs: lax.scan(lambda c, x: (c + x, c * 3), c, xs)


def scan_cases(dt):
    n = 1000
    return {
        "stacked_1000": Call(_scan_stacked(dt), I.random(dt, (16, 128), 1), I.random(dt, (n, 16, 128), 3)),
        "stacked_reverse": Call(lambda c, xs: lax.scan(lambda c, x: (c + x, (c, x * 2)), c, xs, reverse=True),
                                I.small_ints(dt, (8, 4), 4), I.small_ints(dt, (n, 8, 4), 5)),
    }


def carry_cases(dt):
    one = np.array(1, dt)
    big = 1 << 20

    def set_each(x):
        return lax.fori_loop(1, 1000, lambda i, x: x.at[i].set(x[i - 1] + one), x)

    def add_rows(x):
        idx = jnp.arange(16)
        return lax.fori_loop(0, 500, lambda i, x: x.at[(i * 37 + idx * 1009) % big].add(one), x)

    def nested(x):
        def outer(j, x):
            return lax.fori_loop(0, 250, lambda i, x: x.at[j * 250 + i].set(x[j * 250 + i] + one + x[0]), x)
        return lax.fori_loop(0, 4, outer, x)

    def returned_and_read(x):
        c = lax.fori_loop(0, 5, lambda i, c: c.at[i].set(c[i + 1]), x + one)
        return c, c + x, x

    return {
        "swap": Call(lambda a, b: lax.fori_loop(0, 7, lambda i, c: (c[1], c[0]), (a, b)),
                     I.small_ints(dt, (1000,), 1), I.small_ints(dt, (1000,), 2)),
        "rotate_three": Call(lambda a, b, c: lax.fori_loop(0, 5, lambda i, s: (s[2], s[0], s[1] + one), (a, b, c)),
                             I.small_ints(dt, (64, 8), 3), I.small_ints(dt, (64, 8), 4), I.small_ints(dt, (64, 8), 5)),
        "swap_and_update": Call(lambda a, b: lax.fori_loop(0, 6, lambda i, c: (c[1] + one, c[0]), (a, b)),
                                I.small_ints(dt, (300,), 6), I.small_ints(dt, (300,), 7)),
        "read_old_after_new": Call(lambda a, b: lax.fori_loop(0, 4, lambda i, c: (c[0] + one, c[1] + c[0]), (a, b)),
                                   I.small_ints(dt, (200,), 8), I.small_ints(dt, (200,), 9)),
        "at_set_1M": Call(set_each, I.small_ints(dt, (big,), 10)),
        "at_add_1M": Call(add_rows, I.small_ints(dt, (big,), 11)),
        "nested_at_set": Call(nested, I.small_ints(dt, (1000, 3), 12)),
        "carry_returned_and_read": Call(returned_and_read, I.small_ints(dt, (8, 5), 13)),
    }


CARRY_DTYPES = [np.dtype(t) for t in (np.int32, np.float32, np.float64, np.uint8)]


@pytest.mark.parametrize("dtype", SCAN_DTYPES, ids=I.name)
def test_scans(dtype):
    check_cases(None, scan_cases(np.dtype(dtype)), op="scan_in_place", dtype=dtype)


@pytest.mark.parametrize("dtype", CARRY_DTYPES, ids=I.name)
def test_carries(dtype):
    check_cases(None, carry_cases(np.dtype(dtype)), op="carry_in_place", dtype=dtype)


def test_lstm_gradient():
    hidden, batch, steps = 64, 16, 200
    rng = np.random.default_rng(0)

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def loss(params, xs, h0, c0):
        wx, wh, b = params

        def cell(carry, x):
            h, c = carry
            z = x @ wx + h @ wh + b
            i, f, g, o = jnp.split(z, 4, axis=-1)
            c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
            h = jax.nn.sigmoid(o) * jnp.tanh(c)
            return (h, c), h

        _, hs = lax.scan(cell, (h0, c0), xs)
        return jnp.mean(hs ** 2)

    params = (normal(32, 4 * hidden) * 0.1, normal(hidden, 4 * hidden) * 0.1, normal(4 * hidden) * 0.1)
    grad = jax.grad(loss)
    check_cases(None, {"lstm_grad_200": Call(lambda wx, wh, b, xs, h0, c0: grad((wx, wh, b), xs, h0, c0), *params,
                                             normal(steps, batch, 32), normal(batch, hidden), normal(batch, hidden))},
                op="lstm_grad", dtype=np.float32)
