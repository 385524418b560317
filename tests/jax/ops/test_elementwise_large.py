"""Elementwise binary kernels at realistic sizes, bit for bit against XLA:CPU (NaN payloads
excepted): the integer vector loops (shifts with every amount from 0 to the width + 3 and
negative ones, add/sub/bitwise/max/min) over every integer type; bf16/f16 arithmetic over
every bit pattern at 4M elements (widened and rounded in vector registers; f16 x*y+x against
the op-by-op rounding where XLA:CPU fuses it into one rounding, on CPUs with AVX512-FP16); clip, relu and
max/min of f32/f64/bf16 with NaN, both zeros, infinities and denormals, with the bound
shapes the clamp loop specializes on. Sizes are no multiple of any vector width, so tails
and uneven thread shares are covered too."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from .compare import Call, check_cases
from .xla_f16 import f16_mul_add_references, xla_rounds_f16_mul_add_once

N = 1_000_003
N4 = 4 * 1024 * 1024 + 5

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
SHIFTS = {"shift_left": lax.shift_left, "shift_right_logical": lax.shift_right_logical,
          "shift_right_arithmetic": lax.shift_right_arithmetic}


def _shift_amounts(dt: np.dtype, n: int, seed: int) -> np.ndarray:
    """Amounts 0 .. width + 3 and -1 .. -5 (as the type's bits: huge unsigned amounts), shuffled."""
    bits = dt.itemsize * 8
    values = np.array(list(range(bits + 4)) + [-1, -2, -3, -bits, -5], np.int64)
    amounts = values[I.rng(seed).integers(0, values.size, size=n)]
    return amounts.astype(dt)  # negative values wrap for unsigned types, as the bits of a negative amount


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_shifts_large(dtype):
    dt = np.dtype(dtype)
    x = I.random(dt, (N,), 1)
    x[:4] = [I.iinfo(dt).min, I.iinfo(dt).max, 0, 1]
    amounts = _shift_amounts(dt, N, 2)
    cases = {}
    for name, fn in SHIFTS.items():
        cases[name] = Call(fn, x, amounts)
        cases[f"{name}_scalar_amount"] = Call(lambda a, fn=fn: fn(a, dt.type(dt.itemsize * 8 - 3)), x)
    check_cases(lambda *args: None, cases, op="shifts", dtype=dt, mode="exact")


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_int_binary_large(dtype):
    dt = np.dtype(dtype)
    a, b = I.random(dt, (N,), 3), I.random(dt, (N,), 4)
    b[::101] = a[::101]
    ops = {"add": lax.add, "sub": lax.sub, "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
           "max": lax.max, "min": lax.min}
    cases = {name: Call(fn, a, b) for name, fn in ops.items()}
    # A threefry-like chain: rotate, add, xor (JAX's random bits in u32).
    if dt == np.uint32:
        def mix(x, y):
            rot = lax.shift_left(x, np.uint32(13)) | lax.shift_right_logical(x, np.uint32(19))
            return (x + y) ^ rot
        cases["mix"] = Call(mix, a, b)
    check_cases(lambda *args: None, cases, op="integer binary", dtype=dt, mode="exact")


def test_threefry_bits_large():
    check_cases(lambda: None, {"bits": Call(lambda: jax.random.bits(jax.random.key(11), (N,), np.uint32))},
                op="threefry", mode="exact")


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16], ids=lambda d: np.dtype(d).name)
def test_half_binary_large(dtype):
    dt = np.dtype(dtype)
    every = np.arange(2 ** 16, dtype=np.uint16)
    a = np.resize(every, N4).view(dt)  # every bit pattern 64 times, then a tail
    b = np.resize(I.rng(5).permutation(every), N4).view(dt)
    ops = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "max": lax.max, "min": lax.min}
    cases = {name: Call(fn, a, b) for name, fn in ops.items()}
    mul_add = lambda x, y: x * y + x  # noqa: E731
    if dt == np.float16 and xla_rounds_f16_mul_add_once():
        _check_f16_mul_add_rounds_each_op(mul_add, a, b)
    else:
        cases["fused_mul_add"] = Call(mul_add, a, b)
    check_cases(lambda *args: None, cases, op="half binary", dtype=dt, mode="exact")


def _check_f16_mul_add_rounds_each_op(fn, a, b):
    """StableRT's f16 x * y + x, bit for bit against the op-by-op rounding (NaN payloads excepted)."""
    got = np.asarray(jax.jit(fn)(jax.device_put(a, jax.devices("stablert")[0]),
                                 jax.device_put(b, jax.devices("stablert")[0])))
    each, _ = f16_mul_add_references(a, b)
    got_nan, each_nan = np.isnan(got.astype(np.float32)), np.isnan(each.astype(np.float32))
    wrong = (got_nan != each_nan) | (~each_nan & (got.view(np.uint16) != each.view(np.uint16)))
    assert not wrong.any(), (f"f16 x*y+x: {int(wrong.sum())} of {got.size} elements differ from the op-by-op "
                             f"rounding, first at {int(np.argmax(wrong))}")


def _with_specials(x: np.ndarray, seed: int) -> np.ndarray:
    x = np.array(x)
    sp = np.concatenate([I.specials(x.dtype), I.denormals_of(x.dtype),
                         np.array([0.5, -0.5, 0.0, -0.0, np.nan, -np.nan], np.float64)]).astype(x.dtype)
    where = I.rng(seed).integers(0, x.size, size=min(x.size, 64 * sp.size))
    x[where] = np.resize(sp, where.size)
    x[-sp.size:] = sp  # specials in the vector tail too
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_clip_max_min_large(dtype):
    dt = np.dtype(dtype)
    x = _with_specials(I.random(dt, (N,), 6), 7)
    y = _with_specials(I.random(dt, (N,), 8), 9)
    y[::97] = x[::97]  # ties
    t = dt.type
    cases = {
        "clip": Call(lambda a: jnp.clip(a, -0.5, 0.5), x),
        "clip_zero_bounds": Call(lambda a: jnp.clip(a, 0.0, 1.0), x),
        "clip_signed_zeros": Call(lambda a: jnp.clip(a, -0.0, 0.0), x),
        "clamp_scalars": Call(lambda a: lax.clamp(t(-0.5), a, t(0.5)), x),
        "clamp_zero_bounds": Call(lambda a: lax.clamp(t(-0.0), a, t(2.0)), x),
        "clamp_nan_low": Call(lambda a: lax.clamp(t(np.nan), a, t(0.5)), x),
        "clamp_nan_high": Call(lambda a: lax.clamp(t(-0.5), a, t(np.nan)), x),
        "clamp_arrays": Call(lambda l, a, h: lax.clamp(l, a, h), np.where(x < y, x, y), x[::-1].copy(), y),
        "relu": Call(lambda a: jnp.maximum(a, 0), x),
        "max": Call(lax.max, x, y),
        "min": Call(lax.min, x, y),
    }
    check_cases(lambda *args: None, cases, op="clip/max/min", dtype=dt, mode="exact")
