"""Constant folding (src/passes/fold_constants.h): programs whose constant subexpressions
StableRT computes at compile time give bit for bit what XLA:CPU computes when it runs them.

Every program here is compiled on both backends in this process; the StableRT compilation is
dumped so the test also checks that the folding happened (passes.txt counts its rewrites), and
results are compared exactly: equal bits for integers and booleans, equal values and signs of
zero for floats, NaN where XLA gives NaN (NaN payloads are not compared: XLA's maximum returns a
negative quiet NaN where the kernels keep the operand's, see docs/decisions.md).
"""
import glob
import json
import os
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from .compare import cpu, run_on, stablert

I32_MIN, I32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max
F32_SPECIAL = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, np.nan, 3.0e38, 1.0e-30, 2.5], np.float32)


def _dump_of(fn, args, tmp_path, name):
    """Compiles fn on StableRT with a dump; returns (passes.txt, timings.json counters, compile seconds)."""
    directory = tmp_path / name
    placed = jax.device_put(args, stablert())
    start = time.perf_counter()
    jax.jit(fn).lower(*placed).compile(compiler_options={"xla_dump_to": str(directory)})
    seconds = time.perf_counter() - start
    [passes] = glob.glob(os.path.join(directory, "stablert.*.passes.txt"))
    [timings] = glob.glob(os.path.join(directory, "stablert.*.timings.json"))
    with open(passes) as f, open(timings) as g:
        return f.read(), json.load(g), seconds


def _folds(passes_text):
    for line in passes_text.splitlines():
        if line.startswith("fold_constants:"):
            return int(line.split()[1])
    raise AssertionError("no fold_constants record in passes.txt:\n" + passes_text)


def _assert_exact(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    if np.issubdtype(want.dtype, np.floating) or want.dtype.name in ("bfloat16", "float16"):
        g, w = got.astype(np.float64), want.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=what)
        ok = ~np.isnan(w)
        np.testing.assert_array_equal(g[ok], w[ok], err_msg=what)
        np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]), err_msg=what + " (sign of zero)")
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _check(body, x, consts, tmp_path, name, min_folds=1):
    """body(x, *consts) with `consts` embedded as constants (folded by StableRT) against the
    same body with `consts` passed as arguments, computed when the program runs on XLA:CPU
    (and on StableRT). XLA:CPU itself cannot compile some constant expressions (its StableHLO
    folder traps on an integer remainder or quotient by a constant zero), so the reference
    always takes the constants as arguments."""
    folded = lambda x: body(x, *[jnp.asarray(c) for c in consts])  # noqa: E731
    passed = lambda x, *cs: body(x, *cs)  # noqa: E731
    got = run_on(stablert(), folded, x)
    want = run_on(cpu(), passed, x, *consts)
    unfolded = run_on(stablert(), passed, x, *consts)
    for i, (g, w, u) in enumerate(zip(jax.tree.leaves(got), jax.tree.leaves(want), jax.tree.leaves(unfolded))):
        _assert_exact(g, w, f"{name}: result {i}")
        _assert_exact(u, w, f"{name}: result {i} computed when the program runs")
    passes, _, _ = _dump_of(folded, (x,), tmp_path, name)
    assert _folds(passes) >= min_folds, passes


def _ints(values, dtype=np.int32):
    return np.array(values, dtype)


def test_integer_wrap_division_by_zero_and_shifts(tmp_path):
    def body(x, a, b, shifts, u, p):
        return (x + (a + b), a - b, a * p, lax.div(a, b), lax.rem(a, b),
                lax.shift_left(a, shifts), lax.shift_right_arithmetic(a, shifts),
                lax.shift_right_logical(a, shifts), u * u, -u, lax.neg(a), jnp.abs(a),
                lax.population_count(a), lax.clz(a), lax.integer_pow(b, 3), a ** 3,
                jnp.maximum(a, b), jnp.minimum(a, b), a & b, a | b, a ^ b, ~a, jnp.sign(a), a < b, a >= b)
    consts = (_ints([I32_MAX, I32_MIN, 7, -7, 0, 5, I32_MIN, -1]), _ints([1, -1, 0, 0, 0, -2, 0, -1]),
              _ints([31, 32, 40, -1, 0, 3, 1, 2]), _ints([200, 255, 0, 17, 128, 1, 2, 3], np.uint8),
              _ints([2, 2, 3, -1, 9, 7, 1, 1]))
    _check(body, np.arange(8, dtype=np.int32), consts, tmp_path, "integers", min_folds=20)


def test_int64_and_unsigned_extremes(tmp_path):
    def body(x, a, b, u, v):
        return (x + a + b, lax.div(a, b), lax.rem(a, b), lax.shift_left(a, b), lax.shift_right_arithmetic(a, b),
                u + v, lax.div(u, v), lax.rem(u, v), u * v, lax.shift_right_logical(u, v), u > v, a < b)
    consts = (_ints([np.iinfo(np.int64).max, np.iinfo(np.int64).min, -1, 3], np.int64), _ints([1, -1, 0, 64], np.int64),
              _ints([np.iinfo(np.uint64).max, 1, 0, 1 << 63], np.uint64), _ints([2, 0, 0, 3], np.uint64))
    _check(body, np.int64(1), consts, tmp_path, "int64", min_folds=10)


def test_float_nan_inf_and_signed_zeros(tmp_path):
    def body(x, a, b):
        return (x * (a + b), a - b, a * b, a / b, jnp.sqrt(a), -a, jnp.abs(a), jnp.sign(a),
                jnp.maximum(a, b), jnp.minimum(a, b), jnp.floor(a), jnp.ceil(a), jnp.round(a), lax.round(a),
                lax.rem(a, b), jnp.isfinite(a), a == b, a < b, a != b, jnp.where(a > b, a, b),
                jnp.clip(a, -1.0, 2.0), lax.clamp(np.float32(-1), a, np.float32(2)))
    _check(body, np.float32(1), (F32_SPECIAL, F32_SPECIAL[::-1].copy()), tmp_path, "f32 specials", min_folds=15)


def test_float64_division_and_sqrt(tmp_path):
    def body(x, a, b):
        return x + a / b, jnp.sqrt(a), a * b, a - b
    consts = (np.array([1.0, 2.0, -0.0, 1e308, 1e-300, 7.0], np.float64),
              np.array([3.0, 0.0, 5.0, 10.0, 1e10, -0.0], np.float64))
    _check(body, np.float64(0), consts, tmp_path, "f64", min_folds=3)


def test_float_to_int_conversions_out_of_range(tmp_path):
    def body(x, a, d):
        return (x + a.astype(jnp.int32), a.astype(jnp.uint8), a.astype(jnp.int8), a.astype(jnp.int64),
                a.astype(jnp.uint32), a.astype(jnp.uint64), a.astype(jnp.bool_), a.astype(jnp.float64),
                d.astype(jnp.int64), d.astype(jnp.uint64), d.astype(jnp.int32), d.astype(jnp.float32),
                a.astype(jnp.float16), a.astype(jnp.bfloat16))
    consts = (np.array([3.0e9, -3.0e9, np.nan, np.inf, -np.inf, 2.7, -2.7, -0.0, 1e20, 255.9, 65520.0, 1.00048828125],
                       np.float32),
              np.array([9.3e18, -9.3e18, np.nan, 4294967296.5, -1.5, 1e300], np.float64))
    _check(body, np.int32(0), consts, tmp_path, "converts", min_folds=10)


def test_integer_conversions_wrap_and_round(tmp_path):
    def body(x, a, u):
        return (x + a.astype(jnp.int8), a.astype(jnp.uint16), a.astype(jnp.float32), a.astype(jnp.float64),
                u.astype(jnp.float32), u.astype(jnp.float64), u.astype(jnp.int32), a.astype(jnp.float16),
                a.astype(jnp.bfloat16), a.astype(jnp.bool_))
    consts = (_ints([np.iinfo(np.int64).max, np.iinfo(np.int64).min, (1 << 24) + 1, -300, 65519, 65520], np.int64),
              _ints([np.iinfo(np.uint64).max, (1 << 53) + 1, 16777217, 0], np.uint64))
    _check(body, np.int8(1), consts, tmp_path, "integer converts", min_folds=6)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_arithmetic(tmp_path, dtype):
    def body(x, a, b):
        return x + a * b, a + b, a - b, a / b, jnp.sqrt(jnp.abs(a)), jnp.maximum(a, b), a < b
    dt = jnp.dtype(dtype)
    consts = (np.array([1.0, 1.0009765625, 65504.0, -3.0, 0.1, 2.0], np.float32).astype(dt),
              np.array([0.00048828125, 0.0014648438, 32.0, 0.5, 0.2, -0.0], np.float32).astype(dt))
    _check(body, np.zeros((), dt), consts, tmp_path, dtype, min_folds=4)


def test_shape_ops_and_reductions(tmp_path):
    def body(x, m, fm):
        t = m.T.reshape(2, 6)[:, 1:5:2]
        joined = jnp.concatenate([t.ravel(), jnp.arange(5, dtype=jnp.int32), m[::-1, 0]])
        return (x + joined.sum(), m.sum(axis=1), m.max(axis=0), m.min(), jnp.prod(m[:, :2], axis=0),
                jnp.all(m > -30, axis=1), jnp.any(m > 40), fm.sum(axis=1), fm.sum(), fm.max(axis=0),
                jnp.prod(fm[0]), joined)
    consts = (_ints(np.arange(12).reshape(3, 4) * 7 - 30),
              np.array([[0.5, 1024.0, -3.25], [0.125, -0.0, 8.0]], np.float32))
    _check(body, np.int32(0), consts, tmp_path, "shape and reduce", min_folds=10)


def test_arange_tables_and_masks(tmp_path):
    # Small index arithmetic on iotas (as jnp code makes for masks and tables) folds.
    def f(x):
        i = jnp.arange(16, dtype=jnp.int32)
        table = (i * 37 + 11) % 16
        mask = (i[:, None] >= i[None, :4]).astype(jnp.float32)
        return x[table] * 2, mask, jnp.tril(jnp.ones((8, 8), jnp.int32)).sum(axis=0)
    x = np.arange(16, dtype=np.float32)
    got, want = run_on(stablert(), f, x), run_on(cpu(), f, x)
    for i, (g, w) in enumerate(zip(got, want)):
        _assert_exact(g, w, f"iota tables: result {i}")
    passes, _, _ = _dump_of(f, (x,), tmp_path, "iota tables")
    assert _folds(passes) >= 3, passes


def test_large_iotas_and_broadcasts_stay_symbolic_and_compile_fast(tmp_path):
    n = 10 ** 7

    def f(x):
        return (jnp.arange(n, dtype=jnp.int32) * 3 + jnp.full((n,), 5, jnp.int32) + x,
                jnp.broadcast_to(jnp.float32(2.5), (1000, n // 1000)) * jnp.float32(4) - x.astype(jnp.float32))
    x = np.int32(1)
    passes, timings, seconds = _dump_of(f, (x,), tmp_path, "large")
    counters = timings["counters"]
    # Nothing grows with the data: constants stay scalars; the compilation takes milliseconds
    # (a bound generous for a loaded machine; it is ~1 ms unloaded).
    assert counters["largest_constant_bytes"] <= 64, counters
    assert timings["phases_us"]["passes"] < 50_000, timings["phases_us"]
    assert seconds < 2.0, seconds
    got = run_on(stablert(), f, x)
    want = run_on(cpu(), f, x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
