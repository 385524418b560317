"""argmax/argmin whose index operand is an iota along the reduced dimension: StableRT counts
the positions itself (kernels/argminmax_params.h) instead of reading the iota. Both results of
the two-operand reduce (the values too: the bits of the last element equal to the best, so
-0.0 against 0.0), inits other than JAX's, every value/index dtype pair, each layout (rows,
columns, middle axis, whole array) small and past the split threshold; and the iotas the
kernel must not take for positions (along a kept axis, several reduced axes)."""
from __future__ import annotations

import numpy as np
import pytest
from jax import lax

from . import inputs as I
from .compare import Call, check_cases

N = 1_000_003  # > 2^18 (split across calls) and no multiple of any vector width


def _arg_reduce(x, axes, iota_dim, index_dtype, is_max, init=None, init_index=0):
    """The two-operand reduce JAX's argmax builds, returning both results."""
    idx = lax.broadcasted_iota(index_dtype, x.shape, iota_dim)
    better = lax.gt if is_max else lax.lt

    def body(p, q):
        (v, i), (w, j) = p, q
        keep = lax.bitwise_or(better(v, w), lax.ne(v, v))
        keep_i = lax.bitwise_or(keep, lax.bitwise_and(lax.eq(v, w), lax.lt(i, j)))
        return lax.select(keep, v, w), lax.select(keep_i, i, j)

    if init is None:
        init = -np.inf if is_max else np.inf
    return lax.reduce((x, idx), (np.array(init, x.dtype), np.array(init_index, index_dtype)), body, axes)


def _data(dtype, shape, seed):
    """Small integers (many ties), both zeros, infinities, a few NaNs."""
    x = I.rng(seed).integers(-20, 20, size=shape).astype(dtype)
    flat = x.reshape(-1)
    flat[I.rng(seed + 1).integers(0, flat.size, size=max(1, flat.size // 50))] = -0.0
    flat[I.rng(seed + 2).integers(0, flat.size, size=max(1, flat.size // 5000))] = np.inf
    flat[I.rng(seed + 4).integers(0, flat.size, size=max(1, flat.size // 20000))] = np.nan
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("index", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_argminmax_over_iota_both_results(dtype, index):
    m = _data(dtype, (1021, 1031), 20)
    t = _data(dtype, (7, 1001, 143), 21)
    v = _data(dtype, (N,), 22)
    small = _data(dtype, (5, 37), 23)
    zeros = np.zeros((64, 4099), dtype)
    zeros[:, ::3] = -0.0
    zeros[5, 100] = -1.0
    clean = np.abs(I.rng(24).standard_normal(N)).astype(dtype)
    clean[[7, 600_000, N - 2]] = clean.max() + 1  # ties of the maximum across the calls' shares
    cases = {}
    for is_max in (True, False):
        k = "max" if is_max else "min"
        cases[f"{k}_rows"] = Call(lambda x, s=is_max: _arg_reduce(x, (1,), 1, index, s), m)
        cases[f"{k}_cols"] = Call(lambda x, s=is_max: _arg_reduce(x, (0,), 0, index, s), m)
        cases[f"{k}_middle"] = Call(lambda x, s=is_max: _arg_reduce(x, (1,), 1, index, s), t)
        cases[f"{k}_first_3d"] = Call(lambda x, s=is_max: _arg_reduce(x, (0,), 0, index, s), t)
        cases[f"{k}_all"] = Call(lambda x, s=is_max: _arg_reduce(x, (0,), 0, index, s), v)
        cases[f"{k}_clean_all"] = Call(lambda x, s=is_max: _arg_reduce(x, (0,), 0, index, s), clean)
        cases[f"{k}_zeros_rows"] = Call(lambda x, s=is_max: _arg_reduce(x, (1,), 1, index, s), zeros)
        cases[f"{k}_zeros_cols"] = Call(lambda x, s=is_max: _arg_reduce(x, (0,), 0, index, s), zeros)
        cases[f"{k}_zeros_all"] = Call(lambda x, s=is_max: _arg_reduce(x.reshape(-1), (0,), 0, index, s), zeros)
        # inits the elements must be folded after: 0.0 (ties with the zeros) and index 7
        cases[f"{k}_init_zero_rows"] = Call(lambda x, s=is_max: _arg_reduce(x, (1,), 1, index, s, 0.0, 7), zeros)
        cases[f"{k}_init_zero_all"] = Call(lambda x, s=is_max: _arg_reduce(x, (0,), 0, index, s, -0.0, -3), v)
        cases[f"{k}_init_nan"] = Call(lambda x, s=is_max: _arg_reduce(x, (1,), 1, index, s, np.nan, 4), small)
        # iotas that are not positions along the reduced axis: the body interpreter
        cases[f"{k}_iota_kept_axis"] = Call(lambda x, s=is_max: _arg_reduce(x, (1,), 0, index, s), small)
        cases[f"{k}_two_axes"] = Call(lambda x, s=is_max: _arg_reduce(x, (0, 1), 1, index, s), small)
    check_cases(lambda *args: None, cases, op="argmax/argmin over an iota", mode="exact")
