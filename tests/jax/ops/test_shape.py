"""Shape and data-movement ops × every dtype: iota, constant, broadcast_in_dim, reshape,
transpose, reverse, slice, concatenate, pad (negative and interior). Results are bitwise.

dynamic_slice / dynamic_update_slice are in test_gather_scatter.py (indexing family)."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from . import not_yet
from .compare import Call, check_cases

DTYPES = I.ALL
NARROW = I.FLOAT8[:1] + I.INT4[:1]  # the element types narrower than a byte or exotic


def _arr(dtype, shape, seed=0):
    """Distinct values (so that any misplaced element shows), specials first."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    sp = I.specials(dtype)
    vals = np.concatenate([sp, I.random(dtype, (max(n - len(sp), 0),), seed)])[:n] if n else sp[:0]
    if n and n > len(sp) and dtype != np.bool_:
        vals = np.resize(vals, n)
    return np.resize(vals, n).reshape(shape) if n else np.zeros(shape, dtype)


def iota_cases(dt):
    return {
        "iota7": Call(lambda: lax.iota(dt, 7)),
        "iota0": Call(lambda: lax.iota(dt, 0)),
        "broadcasted_iota_d0": Call(lambda: lax.broadcasted_iota(dt, (3, 4, 2), 0)),
        "broadcasted_iota_d2": Call(lambda: lax.broadcasted_iota(dt, (3, 4, 2), 2)),
        "iota_large": Call(lambda: lax.iota(dt, 300)),
    }


def constant_cases(dt):
    sp = I.specials(dt)
    big = _arr(dt, (5, 7), 3)
    return {
        "scalar": Call(lambda: jnp.asarray(sp[1])),
        "special": Call(lambda: jnp.asarray(sp)),
        "splat": Call(lambda: jnp.full((4, 3), sp[-1], dt)),
        "empty": Call(lambda: jnp.zeros((0, 3), dt)),
        "dense2d": Call(lambda: jnp.asarray(big)),
        "mixed_with_arg": Call(lambda x: lax.add(x, x) if dt != np.bool_ else x, _arr(dt, (2, 2))),
    }


def broadcast_cases(dt):
    return {
        "scalar": Call(lambda x: lax.broadcast_in_dim(x, (3, 4), ()), _arr(dt, ())),
        "row": Call(lambda x: lax.broadcast_in_dim(x, (2, 5), (1,)), _arr(dt, (5,))),
        "col": Call(lambda x: lax.broadcast_in_dim(x, (5, 3), (0,)), _arr(dt, (5,))),
        "size1": Call(lambda x: lax.broadcast_in_dim(x, (3, 4, 2), (0, 2)), _arr(dt, (3, 1))),
        "permuted": Call(lambda x: lax.broadcast_in_dim(x, (2, 4, 3), (2, 0)), _arr(dt, (3, 2))),
        "to_empty": Call(lambda x: lax.broadcast_in_dim(x, (2, 0), ()), _arr(dt, ())),
        "empty": Call(lambda x: lax.broadcast_in_dim(x, (0, 4), (0,)), _arr(dt, (0,))),
    }


def reshape_cases(dt):
    x = _arr(dt, (2, 3, 4))
    return {
        "merge": Call(lambda x: lax.reshape(x, (6, 4)), x),
        "flatten": Call(lambda x: lax.reshape(x, (24,)), x),
        "split": Call(lambda x: lax.reshape(x, (4, 3, 2)), x),
        "with_dimensions": Call(lambda x: lax.reshape(x, (4, 6), dimensions=(2, 1, 0)), x),
        "scalar_up": Call(lambda x: lax.reshape(x, (1, 1)), _arr(dt, ())),
        "to_scalar": Call(lambda x: lax.reshape(x, ()), _arr(dt, (1, 1))),
        "empty": Call(lambda x: lax.reshape(x, (3, 0, 2)), _arr(dt, (0, 6))),
        "squeeze": Call(lambda x: lax.squeeze(x, (0, 2)), _arr(dt, (1, 5, 1))),
        "expand_dims": Call(lambda x: lax.expand_dims(x, (0, 3)), _arr(dt, (2, 3))),
    }


def transpose_cases(dt):
    x = _arr(dt, (2, 3, 4))
    return {
        "2d": Call(lambda x: lax.transpose(x, (1, 0)), _arr(dt, (5, 7))),
        "3d_201": Call(lambda x: lax.transpose(x, (2, 0, 1)), x),
        "3d_102": Call(lambda x: lax.transpose(x, (1, 0, 2)), x),
        "3d_identity": Call(lambda x: lax.transpose(x, (0, 1, 2)), x),
        "4d": Call(lambda x: lax.transpose(x, (3, 1, 0, 2)), _arr(dt, (2, 3, 1, 4))),
        "large": Call(lambda x: lax.transpose(x, (1, 0)), _arr(dt, (33, 70))),
        "empty": Call(lambda x: lax.transpose(x, (1, 0)), _arr(dt, (0, 5))),
    }


def rev_cases(dt):
    x = _arr(dt, (2, 3, 4))
    return {
        "d0": Call(lambda x: lax.rev(x, (0,)), x),
        "d12": Call(lambda x: lax.rev(x, (1, 2)), x),
        "all": Call(lambda x: lax.rev(x, (0, 1, 2)), x),
        "none": Call(lambda x: lax.rev(x, ()), x),
        "1d": Call(lambda x: lax.rev(x, (0,)), _arr(dt, (37,))),
        "empty": Call(lambda x: lax.rev(x, (0, 1)), _arr(dt, (0, 3))),
        "scalar": Call(lambda x: lax.rev(x, ()), _arr(dt, ())),
    }


def slice_cases(dt):
    x = _arr(dt, (5, 6, 4))
    return {
        "basic": Call(lambda x: lax.slice(x, (1, 0, 1), (4, 6, 3)), x),
        "strided": Call(lambda x: lax.slice(x, (0, 1, 0), (5, 6, 4), (2, 3, 2)), x),
        "stride_past_end": Call(lambda x: lax.slice(x, (1, 0, 0), (5, 5, 4), (3, 4, 5)), x),
        "empty_result": Call(lambda x: lax.slice(x, (2, 0, 0), (2, 6, 4)), x),
        "full": Call(lambda x: lax.slice(x, (0, 0, 0), (5, 6, 4)), x),
        "empty_operand": Call(lambda x: lax.slice(x, (0, 1), (0, 2)), _arr(dt, (0, 3))),
        "numpy_negative_step": Call(lambda x: x[::-2, 1:-1], _arr(dt, (7, 5))),
    }


def concat_cases(dt):
    return {
        "dim0": Call(lambda a, b: lax.concatenate([a, b], 0), _arr(dt, (2, 3)), _arr(dt, (4, 3), 1)),
        "dim1_three": Call(lambda a, b, c: lax.concatenate([a, b, c], 1), _arr(dt, (2, 1)), _arr(dt, (2, 3), 1),
                           _arr(dt, (2, 2), 2)),
        "with_empty": Call(lambda a, b: lax.concatenate([a, b], 0), _arr(dt, (0, 3)), _arr(dt, (2, 3), 1)),
        "all_empty": Call(lambda a, b: lax.concatenate([a, b], 1), _arr(dt, (2, 0)), _arr(dt, (2, 0))),
        "1d_many": Call(lambda *xs: lax.concatenate(list(xs), 0), *[_arr(dt, (i + 1,), i) for i in range(6)]),
        "3d_dim2": Call(lambda a, b: lax.concatenate([a, b], 2), _arr(dt, (2, 3, 4)), _arr(dt, (2, 3, 1), 5)),
    }


def pad_cases(dt):
    x = _arr(dt, (3, 4))
    pv = I.specials(dt)[-1].reshape(())
    return {
        "low_high": Call(lambda x, v: lax.pad(x, v, ((1, 2, 0), (0, 3, 0))), x, pv),
        "interior": Call(lambda x, v: lax.pad(x, v, ((0, 0, 2), (1, 1, 1))), x, pv),
        "negative": Call(lambda x, v: lax.pad(x, v, ((-1, 0, 0), (1, -2, 0))), x, pv),
        "negative_interior": Call(lambda x, v: lax.pad(x, v, ((-2, -1, 1), (-3, 2, 2))), x, pv),
        "empty_operand": Call(lambda x, v: lax.pad(x, v, ((1, 1, 3), (0, 2, 0))), _arr(dt, (0, 2)), pv),
        "to_empty": Call(lambda x, v: lax.pad(x, v, ((-3, 0, 0), (0, 0, 0))), x, pv),
        "scalar_operand": Call(lambda x, v: lax.pad(x, v, ()), _arr(dt, ()), pv),
        "3d": Call(lambda x, v: lax.pad(x, v, ((1, 0, 1), (0, 0, 0), (2, -1, 1))), _arr(dt, (2, 3, 4)), pv),
    }


SHAPE_OPS = {
    "iota": (iota_cases, I.INT + I.FLOAT),
    "constant": (constant_cases, DTYPES),
    "broadcast_in_dim": (broadcast_cases, DTYPES + NARROW),
    "reshape": (reshape_cases, DTYPES + NARROW),
    "transpose": (transpose_cases, DTYPES + NARROW),
    "reverse": (rev_cases, DTYPES),
    "slice": (slice_cases, DTYPES),
    "concatenate": (concat_cases, DTYPES + NARROW),
    "pad": (pad_cases, DTYPES),
}


@pytest.mark.parametrize("op,dtype", [not_yet.param(op, dt) for op, (_, dts) in SHAPE_OPS.items() for dt in dts])
def test_shape_op(op, dtype):
    make, _ = SHAPE_OPS[op]
    check_cases(None, make(np.dtype(dtype)), op=op, dtype=dtype, mode="exact")
