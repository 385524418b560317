"""How XLA:CPU computes float16 on this CPU.

Where the CPU has AVX512-FP16 (Intel Sapphire Rapids and later), XLA:CPU keeps f16 arithmetic
in f16 registers and LLVM contracts a multiply and an add into one fused multiply-add, so
`x * y + z` is rounded once. Elsewhere XLA widens each op to f32 and rounds each result to
f16 (where it keeps a value in f32 between ops, it may skip that rounding: excess
precision is allowed by default), which is StableHLO's definition (every op's result is an f16 value) and what StableRT
computes on every CPU. Tests that compare f16 chains bit for bit, or across a discontinuity,
with XLA use an op-by-op rounded reference where XLA rounds once.
"""
from __future__ import annotations

import functools

import jax
import numpy as np


def f16_mul_add_references(a, b):
    """x * y + x for f16 arrays: each op rounded to f16, and one rounding at the end (the f32
    product of two f16 values is exact)."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    with np.errstate(all="ignore"):
        each = ((a32 * b32).astype(np.float16).astype(np.float32) + a32).astype(np.float16)
        once = (a32 * b32 + a32).astype(np.float16)
    return each, once


@functools.cache
def xla_rounds_f16_mul_add_once() -> bool:
    """Whether XLA:CPU rounds f16 x * y + x once on this CPU (probed over every f16 pair of a
    permutation of all bit patterns, where the two roundings differ)."""
    every = np.arange(2 ** 16, dtype=np.uint16)
    a = every.view(np.float16)
    b = np.random.default_rng(5).permutation(every).view(np.float16)
    each, once = f16_mul_add_references(a, b)
    differ = (each != once) & ~np.isnan(each.astype(np.float32))
    cpu = jax.devices("cpu")[0]
    xla = np.asarray(jax.jit(lambda x, y: x * y + x)(jax.device_put(a, cpu), jax.device_put(b, cpu)))
    return bool(np.any(differ)) and bool(np.mean(xla[differ] == once[differ]) > 0.5)


def rounded_each_op(fn):
    """fn computed in f32 with every intermediate rounded to f16: `fn` is written against a
    `round` argument it applies after each op (StableHLO's f16 semantics, on any backend)."""
    def widened(*args):
        import jax.numpy as jnp
        from jax import lax
        # reduce_precision, not a convert pair: XLA may drop f32 -> f16 -> f32 converts
        # (excess precision is allowed by default), never a reduce_precision.
        r = lambda v: lax.reduce_precision(v, exponent_bits=5, mantissa_bits=10)  # noqa: E731
        return fn(r, *[a.astype(jnp.float32) for a in args]).astype(jnp.float16)
    return widened
