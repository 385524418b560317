"""Control flow: while (fori_loop, data-dependent trip counts, zero trips, nested, tuple carries),
if (cond), case (switch, out-of-range index clamped), call (nested jit), scan, map,
optimization_barrier, remat under grad, custom_jvp, associative_scan."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from . import not_yet
from .compare import Call, check_cases

F32 = np.dtype(np.float32)

DTYPES = [np.dtype(t) for t in (np.int32, np.int64, np.uint8, np.float32, np.float64)] + [I.FLOAT[0], I.FLOAT[1]]


def _x(dt, shape, seed):
    return I.small_ints(dt, shape, seed)


def while_cases(dt):
    one = np.array(1, dt)
    return {
        "fori_loop": Call(lambda x: lax.fori_loop(0, 5, lambda i, c: c * 2 + one if I.is_float(dt) else c + one, x),
                          _x(dt, (3, 4), 1)),
        "zero_trips": Call(lambda x: lax.fori_loop(3, 3, lambda i, c: c + one, x), _x(dt, (2,), 2)),
        "data_dependent": Call(lambda x: lax.while_loop(lambda c: c[0] < 11, lambda c: (c[0] + 1, c[1] + c[1]),
                                                        (np.int32(0), x))[1] if I.is_float(dt) else
                               lax.while_loop(lambda c: c[0] < 7, lambda c: (c[0] + 1, c[1] + one), (np.int32(0), x))[1],
                               _x(dt, (5,), 3)),
        "cond_on_carry": Call(lambda x: lax.while_loop(lambda c: jnp.sum(c.astype(jnp.float32)) < 100,
                                                       lambda c: c + one, x), _x(dt, (4,), 4)),
        "tuple_carry": Call(lambda x, y: lax.fori_loop(0, 4, lambda i, c: (c[1], c[0] + c[1], c[2] + i), (x, y, 0)),
                            _x(dt, (3,), 5), _x(dt, (3,), 6)),
        "nested": Call(lambda x: lax.fori_loop(0, 3, lambda i, c: lax.fori_loop(0, i + 1, lambda j, d: d + one, c), x),
                       _x(dt, (2, 2), 7)),
        "dynamic_bounds": Call(lambda x, n: lax.fori_loop(0, n, lambda i, c: c + one, x), _x(dt, (3,), 8), np.int32(4)),
        "empty_carry": Call(lambda x: lax.fori_loop(0, 3, lambda i, c: c + one, x), np.zeros((0, 2), dt)),
    }


def cond_cases(dt):
    return {
        "cond_true": Call(lambda p, x: lax.cond(p, lambda a: a + a, lambda a: a * a, x), np.bool_(True), _x(dt, (4,), 1)),
        "cond_false": Call(lambda p, x: lax.cond(p, lambda a: a + a, lambda a: a * a, x), np.bool_(False), _x(dt, (4,), 2)),
        "cond_data_pred": Call(lambda x: lax.cond(x[0] > x[1], lambda a: a[::-1], lambda a: a, x), _x(dt, (5,), 3)),
        "cond_tuple_out": Call(lambda p, x: lax.cond(p, lambda a: (a, a + a), lambda a: (a + a, a), x),
                               np.bool_(True), _x(dt, (2, 3), 4)),
        "switch": Call(lambda i, x: lax.switch(i, [lambda a: a, lambda a: a + a, lambda a: a * a], x),
                       np.int32(2), _x(dt, (3,), 5)),
        "switch_index_negative_clamped": Call(lambda i, x: lax.switch(i, [lambda a: a + a, lambda a: a * a], x),
                                              np.int32(-5), _x(dt, (3,), 6)),
        "switch_index_high_clamped": Call(lambda i, x: lax.switch(i, [lambda a: a + a, lambda a: a * a, lambda a: a], x),
                                          np.int32(17), _x(dt, (3,), 7)),
        "cond_in_loop": Call(lambda x: lax.fori_loop(0, 6, lambda i, c: lax.cond(i % 2 == 0, lambda a: a + a,
                                                                               lambda a: a[::-1], c), x), _x(dt, (4,), 8)),
    }


def call_cases(dt):
    inner = jax.jit(lambda a, b: (a + b, a * b))

    @jax.custom_jvp
    def f(x):
        return x * x

    f.defjvp(lambda primals, tangents: (f(primals[0]), 2 * primals[0] * tangents[0]))
    cases = {
        "nested_jit": Call(lambda x, y: inner(inner(x, y)[0], y), _x(dt, (3,), 1), _x(dt, (3,), 2)),
        "optimization_barrier": Call(lambda x, y: lax.optimization_barrier((x + y, x)), _x(dt, (2, 3), 3),
                                     _x(dt, (2, 3), 4)),
        "scan": Call(lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs), _x(dt, (2,), 5), _x(dt, (6, 2), 6)),
        "scan_reverse": Call(lambda c, xs: lax.scan(lambda c, x: (c + x, c), c, xs, reverse=True), _x(dt, (), 7),
                             _x(dt, (5,), 8)),
        "scan_length0": Call(lambda c, xs: lax.scan(lambda c, x: (c + x, c), c, xs), _x(dt, (3,), 9),
                             np.zeros((0, 3), dt)),
        "map": Call(lambda xs: lax.map(lambda r: r[::-1] + r[0], xs), _x(dt, (4, 3), 10)),
        "associative_scan": Call(lambda xs: lax.associative_scan(lax.add, xs), _x(dt, (9,), 11)),
    }
    if I.is_float(dt):
        cases["remat_grad"] = Call(jax.grad(jax.checkpoint(lambda x: jnp.sum(jnp.sin(x) * x))), I.random(dt, (5,), 12))
        cases["custom_jvp_grad"] = Call(jax.grad(lambda x: jnp.sum(f(x))), _x(dt, (4,), 13))
        cases["grad_of_loop"] = Call(jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0 + x * 0).sum()),
                                     _x(dt, (3,), 14))
    return cases


FAMILY = {"while": while_cases, "if_case": cond_cases, "call_scan_barrier": call_cases}


@pytest.mark.parametrize("op,dtype", [not_yet.param(op, dt) for op in FAMILY for dt in DTYPES])
def test_control_flow(op, dtype):
    check_cases(None, FAMILY[op](np.dtype(dtype)), op=op, dtype=dtype)


def test_branches_at_size():
    """Branches over 1M-element arrays whose steps compute the branch's result in its storage
    (plan/in_place.h): fused chains in every branch, a branch returning its operand, tuple
    results, a switch, and a cond inside a loop carrying the array."""
    n = 1 << 20
    x = I.random(F32, (n,), 31)
    branches = [lambda a: jnp.sin(a) * 2.0, lambda a: a + 1.0, lambda a: jnp.exp(-a * a) - a]
    cases = {
        "cond_fused_1m": Call(lambda p, a: lax.cond(p > 0, branches[0], branches[2], a), np.float32(1.0), x),
        "cond_fused_false_1m": Call(lambda p, a: lax.cond(p > 0, branches[0], branches[2], a), np.float32(-1.0), x),
        "cond_operand_unchanged_1m": Call(lambda p, a: lax.cond(p, lambda b: b, branches[1], a), np.bool_(True), x),
        "cond_tuple_1m": Call(lambda p, a: lax.cond(p, lambda b: (b * 3.0, jnp.tanh(b)), lambda b: (b - 1.0, b * b), a),
                              np.bool_(False), x),
        "switch_1m": Call(lambda i, a: lax.switch(i, branches, a), np.int32(1), x),
        "cond_in_loop_1m": Call(lambda a: lax.fori_loop(0, 5, lambda i, c: lax.cond(i % 2 == 0, branches[0],
                                                                                    branches[1], c), a), x),
    }
    check_cases(None, cases, op="if_case_at_size", dtype=F32)
