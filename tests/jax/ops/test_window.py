"""Window ops: reduce_window (sum, max, min, a general body; strides, padding, base and window
dilation), select_and_scatter_add (gradient of max pooling) and select_and_gather_add (its JVP)."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from . import not_yet
from .accuracy import check_accuracy, lsum
from .compare import Call, check_cases

# (window, strides, padding, base_dilation, window_dilation) for a (N, H, W) operand
CONFIGS = {
    "2x2_valid": ((1, 2, 2), (1, 1, 1), "VALID", None, None),
    "3x3_stride2_same": ((1, 3, 3), (1, 2, 2), "SAME", None, None),
    "explicit_pad": ((1, 2, 3), (1, 1, 2), ((0, 0), (1, 2), (2, 0)), None, None),
    "base_dilation": ((1, 2, 2), (1, 1, 1), "VALID", (1, 2, 1), None),
    "window_dilation": ((1, 2, 2), (1, 1, 1), "VALID", None, (1, 2, 3)),
    "all_dims": ((2, 2, 2), (1, 2, 1), ((1, 0), (0, 1), (1, 1)), (1, 1, 2), (1, 2, 1)),
    "window_bigger_than_input": ((1, 9, 1), (1, 1, 1), "VALID", None, None),
}


def _operand(dtype, shape, seed):
    # small integers: window sums are exact in any order
    return I.small_ints(dtype, shape, seed)


def _reduce_window_cases(dtype, computation, init):
    dt = np.dtype(dtype)
    cases = {}
    for i, (name, (win, strides, pad, bd, wd)) in enumerate(CONFIGS.items()):
        def f(x, win=win, strides=strides, pad=pad, bd=bd, wd=wd):
            return lax.reduce_window(x, np.array(init(dt), dt), computation, win, strides, pad,
                                     base_dilation=bd, window_dilation=wd)
        cases[name] = Call(f, _operand(dt, (2, 7, 6), i))
    cases["1d"] = Call(lambda x: lax.reduce_window(x, np.array(init(dt), dt), computation, (3,), (2,), "SAME"),
                       _operand(dt, (11,), 20))
    # windows x outputs beyond the walker's offset tables (offsets computed on the fly)
    cases["wide_window"] = Call(lambda x: lax.reduce_window(x, np.array(init(dt), dt), computation, (1001,), (1,),
                                                            "SAME"), _operand(dt, (2000,), 21))
    cases["empty"] = Call(lambda x: lax.reduce_window(x, np.array(init(dt), dt), computation, (1, 2), (1, 1), "VALID"),
                          np.zeros((0, 5), dt))
    sp = I.specials(dt)
    cases["special"] = Call(lambda x: lax.reduce_window(x, np.array(init(dt), dt), computation, (2,), (1,), "VALID"),
                            sp)
    return cases


def _lowest(dt):
    return -np.inf if I.is_float(dt) else (I.iinfo(dt).min if dt != np.bool_ else False)


def _highest(dt):
    return np.inf if I.is_float(dt) else (I.iinfo(dt).max if dt != np.bool_ else True)


WINDOW_REDUCTIONS = {
    "reduce_window_sum": (lax.add, lambda dt: 0, I.INT + I.FLOAT),
    "reduce_window_max": (lax.max, _lowest, I.INT + I.FLOAT),
    "reduce_window_min": (lax.min, _highest, I.INT + I.FLOAT),
    # an init value other than the identity, and a body no kernel recognizes
    "reduce_window_sum_init3": (lax.add, lambda dt: 3, [np.dtype(np.int32), np.dtype(np.float32)]),
    "reduce_window_general_body": (lambda a, b: lax.max(lax.abs(a), lax.abs(b)), lambda dt: 0,
                                   [np.dtype(np.int32), np.dtype(np.float32), np.dtype(np.float64)]),
}


@pytest.mark.parametrize("op,dtype", [not_yet.param(op, dt) for op, (_, _, dts) in WINDOW_REDUCTIONS.items()
                                      for dt in dts])
def test_reduce_window(op, dtype):
    comp, init, _ = WINDOW_REDUCTIONS[op]
    check_cases(None, _reduce_window_cases(dtype, comp, init), op=op, dtype=dtype)


def _max_pool(x, win, strides, pad):
    return lax.reduce_window(x, np.array(-np.inf, x.dtype), lax.max, win, strides, pad)


POOL_CONFIGS = {
    "2x2_stride2": ((1, 2, 2), (1, 2, 2), "VALID"),
    "3x3_stride1_same": ((1, 3, 3), (1, 1, 1), "SAME"),
    "overlapping_pad": ((1, 3, 2), (1, 2, 1), ((0, 0), (1, 1), (0, 1))),
}


def _pool_operand(dt, shape, seed):
    # distinct values (no ties: which element of a tie gets the gradient is implementation-defined)
    n = int(np.prod(shape))
    return (I.rng(seed).permutation(n).reshape(shape) - n // 2).astype(dt) / np.array(4, dt)


@pytest.mark.parametrize("op,dtype", [not_yet.param("select_and_scatter_add", dt) for dt in I.FLOAT])
def test_select_and_scatter_add(op, dtype):
    dt = np.dtype(dtype)
    cases = {}
    for i, (name, (win, strides, pad)) in enumerate(POOL_CONFIGS.items()):
        def f(x, g, win=win, strides=strides, pad=pad):
            _, vjp = jax.vjp(lambda y: _max_pool(y, win, strides, pad), x)
            return vjp(g)[0]
        x = _pool_operand(dt, (2, 6, 5), i)
        out_shape = jax.eval_shape(lambda y: _max_pool(y, win, strides, pad), x).shape
        cases[name] = Call(f, x, I.small_ints(dt, out_shape, i + 10))
    check_cases(None, cases, op=op, dtype=dt)


@pytest.mark.parametrize("op,dtype", [not_yet.param("select_and_gather_add", dt) for dt in I.FLOAT])
def test_select_and_gather_add(op, dtype):
    dt = np.dtype(dtype)
    cases = {}
    for i, (name, (win, strides, pad)) in enumerate(POOL_CONFIGS.items()):
        def f(x, t, win=win, strides=strides, pad=pad):
            return jax.jvp(lambda y: _max_pool(y, win, strides, pad), (x,), (t,))
        x = _pool_operand(dt, (2, 6, 5), i)
        cases[name] = Call(f, x, I.small_ints(dt, x.shape, i + 20))
    check_cases(None, cases, op=op, dtype=dt)


# Accuracy of long window sums (accuracy.py): windows of 65,536 elements (pairwise over leaves
# of 32 where XLA folds a window in one running sum) and a window covering 16M elements (the
# reduce kernel), for tenths and random values, against XLA and a long double reference.
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_window_sum_accuracy(dtype):
    dt = np.dtype(dtype)
    n = 1 << 24
    x = np.concatenate([np.full(n // 2, 0.1, dt), I.rng(21).random(n // 2).astype(dt)])
    window, stride, short = 1 << 16, 1 << 15, 1 << 21

    def sums(v):
        zero = np.array(0, dt)
        return (lax.reduce_window(v[:short], zero, lax.add, (window,), (stride,), "VALID"),
                lax.reduce_window(v[-short:], zero, lax.add, (window,), (stride,), "VALID"),
                lax.reduce_window(v, zero, lax.add, (n,), (1,), "VALID"))

    def reference(v):
        def windows(u):
            starts = range(0, short - window + 1, stride)
            return np.array([lsum(u[s:s + window]) for s in starts])
        return windows(v[:short]), windows(v[-short:]), np.array([lsum(v)])

    check_accuracy(sums, (x,), reference, op="reduce_window_sum_long", dtype=dt,
                   names=["tenths windows", "random windows", "whole array"])
