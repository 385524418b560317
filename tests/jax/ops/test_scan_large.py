"""Long scans at the sizes the scan kernel is tuned for (kernels/scan.h): a single line of
4M (and 4M + 7) elements and 2048x2048 along both axes, forward and reverse; jnp.cumsum,
jnp.cumprod, lax.cummax/cummin and lax.cumsum(reverse=True) as JAX lowers them
(reduce_window, which XLA's CPU backend rewrites into tiles of 16). StableRT reproduces that
grouping, so float results are compared bit for bit with XLA:CPU in the same process (NaN
payloads excepted), with NaN, signed zeros, infinities and denormals in the max/min scans."""
from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from .compare import Call, check_cases

LONG = 4 << 20


def _with_specials(x: np.ndarray, seed: int) -> np.ndarray:
    x = np.array(x)
    flat = x.reshape(-1)
    sp = np.concatenate([I.specials(x.dtype), I.denormals_of(x.dtype)]).astype(x.dtype)
    where = I.rng(seed).integers(0, flat.size, size=64 * sp.size)
    flat[where] = np.resize(sp, where.size)
    return x


@pytest.mark.parametrize("n", [LONG, LONG + 7], ids=["4M", "4M+7"])
def test_long_line_f32(n):
    x = I.random(np.float32, (n,), 21)
    near_one = (1 + 1e-7 * x).astype(np.float32)
    cases = {
        "cumsum": Call(lambda v: jnp.cumsum(v), x),
        "cumsum_reverse": Call(lambda v: lax.cumsum(v, 0, reverse=True), x),
        "cumprod": Call(lambda v: jnp.cumprod(v), near_one),
        "cumprod_reverse": Call(lambda v: lax.cumprod(v, 0, reverse=True), near_one),
    }
    check_cases(lambda *args: None, cases, op="cumulative_long", dtype=np.float32, mode="exact")


@pytest.mark.parametrize("n", [LONG, LONG + 7], ids=["4M", "4M+7"])
def test_long_line_max_min_specials(n):
    x = _with_specials(I.random(np.float32, (n,), 22), 22)
    no_nan = np.where(np.isnan(x), np.float32(0), x)
    cases = {
        "cummax": Call(lambda v: lax.cummax(v, 0), x),
        "cummin_reverse": Call(lambda v: lax.cummin(v, 0, reverse=True), x),
        "cummax_no_nan": Call(lambda v: lax.cummax(v, 0), no_nan),
        "cummax_reverse_no_nan": Call(lambda v: lax.cummax(v, 0, reverse=True), no_nan),
    }
    check_cases(lambda *args: None, cases, op="cumulative_long", dtype=np.float32, mode="exact")


@pytest.mark.parametrize("dtype", [np.int32, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_long_line_other_types(dtype):
    dt = np.dtype(dtype)
    x = (I.rng(23).integers(-2 ** 31, 2 ** 31, LONG + 7).astype(dt) if dt.kind == "i"
         else I.random(dt, (LONG + 7,), 23))
    cases = {
        "cumsum": Call(lambda v: lax.cumsum(v, 0), x),  # s32 sums wrap
        "cumsum_reverse": Call(lambda v: lax.cumsum(v, 0, reverse=True), x),
        "cummax": Call(lambda v: lax.cummax(v, 0), x),
    }
    check_cases(lambda *args: None, cases, op="cumulative_long", dtype=dt, mode="exact")


@pytest.mark.parametrize("axis", [0, 1], ids=["columns", "rows"])
def test_square_2048(axis):
    m = I.random(np.float32, (2048, 2048), 24)
    s = _with_specials(m, 25)
    cases = {
        "cumsum": Call(lambda v: jnp.cumsum(v, axis=axis), m),
        "cumsum_reverse": Call(lambda v: lax.cumsum(v, axis, reverse=True), m),
        "cumprod": Call(lambda v: jnp.cumprod(v, axis=axis), (1 + 1e-4 * m).astype(np.float32)),
        "cummax": Call(lambda v: lax.cummax(v, axis), s),
        "cummin_reverse": Call(lambda v: lax.cummin(v, axis, reverse=True), s),
    }
    check_cases(lambda *args: None, cases, op="cumulative_2048", dtype=np.float32, mode="exact")
