"""Shared helpers for the corpus catalogues: the Program record and argument shorthands."""
import dataclasses
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

f32, f64, i32 = jnp.float32, jnp.float64, jnp.int32


@dataclasses.dataclass
class Program:
    name: str                 # unique within its category; becomes the file stem
    fn: Callable
    args: tuple               # ShapeDtypeStructs (or concrete arrays for static arguments)
    jit: dict = dataclasses.field(default_factory=dict)   # jax.jit keyword arguments
    category: str = ""        # set by the generator from the catalogue module
    x64: bool = False         # lower with jax_enable_x64 (64-bit dtypes)


def S(shape, dtype=f32, sharding=None):
    """An abstract argument: lowering needs shapes and dtypes only."""
    if not jax.dtypes.issubdtype(dtype, jax.dtypes.extended):
        dtype = jnp.dtype(dtype)
    return jax.ShapeDtypeStruct(tuple(shape), dtype, sharding=sharding)


def P(name, fn, *args, x64=False, **jit):
    return Program(name, fn, tuple(args), dict(jit), x64=x64)


def key_arg():
    """A typed PRNG key argument (threefry)."""
    return jax.ShapeDtypeStruct((), jax.random.key(0).dtype)


def raw_key_arg():
    """A raw uint32[2] key, as older code passes it."""
    return S((2,), jnp.uint32)


def const(value, dtype):
    return np.asarray(value, dtype=dtype)
