"""Broadcasts and transposes read in place: elementwise kernels (unary, binary, compare,
select, clamp, convert) take strided views of their inputs, so `x - m[:, None]`, `a + b.T`
and scalar constants never materialize the broadcast or transposed copy. Realistic sizes
(millions of elements, odd shapes that leave block and vector tails, the split across
threads), every element width, inside loops too; compared with XLA:CPU."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from .compare import Call, check_cases

ROWS, COLS = 2047, 1031  # 2.1M elements, no multiple of any block or vector width


def _softmax(x):
    m = jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(x - m)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def test_softmax_rows_large():
    x = I.random(np.dtype(np.float32), (512, 2048), 1, scale=4.0)
    check_cases(_softmax, {"512x2048": (x,), "3d": (x.reshape(8, 64, 2048),)}, op="softmax (broadcast views)")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, ml_dtypes.bfloat16, np.float16, np.int32, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_broadcast_rows_columns_and_scalars(dtype):
    dt = np.dtype(dtype)
    x = I.random(dt, (ROWS, COLS), 2)
    row = I.random(dt, (COLS,), 3)
    col = I.random(dt, (ROWS,), 4)
    cases = {
        "x*row": Call(lambda a, r: a * r[None, :], x, row),
        "x+col": Call(lambda a, c: a + c[:, None], x, col),
        "col-row": Call(lambda c, r: c[:, None] - r[None, :], col, row),
        "max(x,scalar)": Call(lambda a: jnp.maximum(a, dt.type(1)), x),
        "where(x>col,x,row)": Call(lambda a, c, r: jnp.where(a > c[:, None], a, r[None, :]), x, col, row),
    }
    if dt.kind == "f":
        cases["clip(x,col,row)"] = Call(lambda a, c, r: jnp.clip(a, jnp.minimum(c[:, None], r[None, :]),
                                                                  jnp.maximum(c[:, None], r[None, :])), x, col, row)
    check_cases(lambda *a: None, cases, op="broadcast views", mode="exact")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, ml_dtypes.bfloat16, np.int8, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_transposes_read_in_place(dtype):
    dt = np.dtype(dtype)
    a = I.random(dt, (ROWS, COLS), 5)
    b = I.random(dt, (COLS, ROWS), 6)
    t3 = I.random(dt, (96, 64, 129), 7)
    cases = {
        "a+b.T": Call(lambda x, y: x + y.T, a, b),
        "b.T*b.T": Call(lambda y: y.T * y.T, b),
        "neg(transpose3d)": Call(lambda z: -jnp.transpose(z, (2, 0, 1)), t3),
        "transpose3d==transpose3d": Call(lambda z: jnp.transpose(z, (1, 2, 0)) == jnp.transpose(z, (1, 2, 0)), t3),
    }
    if dt == np.float32:
        cases["convert(b.T)"] = Call(lambda y: y.T.astype(ml_dtypes.bfloat16), b)
        cases["transposed broadcast"] = Call(lambda x, c: x.T + c[:, None], b, I.random(dt, (ROWS,), 8))
    check_cases(lambda *x: None, cases, op="transpose views", mode="exact")
    if dt.kind in "fc":  # vector exp: within JAX's tolerance of XLA's, not bitwise
        check_cases(lambda y: jnp.exp(y.T), {"exp(b.T)": (b,)}, op="transpose views")


def test_views_inside_loops():
    x = I.random(np.dtype(np.float32), (1024, 513), 9)
    row = I.random(np.dtype(np.float32), (513,), 10)

    def body(i, carry):
        # The broadcast of the loop-invariant row and of the carried sum are read in place;
        # the carry is rewritten at the end of every iteration.
        s = jnp.sum(carry, axis=1)
        return carry * 0.5 + row[None, :] - s[:, None] * 1e-3

    check_cases(lambda a, r: lax.fori_loop(0, 5, body, a), {"fori": (x, row)}, op="views in loops")


def test_broadcast_of_a_value_overwritten_later():
    """A view of y is read after y's buffer could be reused: the plan must keep y alive."""
    x = I.random(np.dtype(np.float32), (700, 900), 11)

    def f(a):
        m = jnp.max(a, axis=1)
        b = a - m[:, None]          # view of m
        m2 = jnp.min(b, axis=1)     # m is dead for dense readers here
        return b * m2[:, None] + m[:, None]

    check_cases(f, {"700x900": (x,)}, op="view liveness")


def test_jit_of_broadcast_result_is_dense():
    """A broadcast that is the program's result is still returned as a dense array."""
    r = I.random(np.dtype(np.float32), (257,), 12)
    check_cases(lambda v: jnp.broadcast_to(v, (1000, 257)), {"bcast": (r,)}, op="broadcast result", mode="exact")


def test_view_of_a_returned_value():
    """A value returned by the program (held in a result buffer) is also read through a
    broadcast view; the result stays dense and the reader sees its final contents."""
    x = I.random(np.dtype(np.float32), (600, 700), 13)

    def f(a):
        m = jnp.max(a, axis=1)
        return m, a - m[:, None], jnp.exp(a.T - m[None, :])

    check_cases(f, {"600x700": (x,)}, op="view of a result")
    v = I.random(np.dtype(np.float32), (300,), 14)
    check_cases(jax.grad(lambda a: jnp.sum(jnp.logaddexp2(a, a[::-1]))), {"logaddexp2 grad": (v,)},
                op="view of a result")
