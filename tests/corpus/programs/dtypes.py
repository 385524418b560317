"""Every dtype JAX has: arguments, constants (splat and dense), conversions, arithmetic,
comparisons and reductions in that dtype."""
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from corpus_lib import P, S

INTS = ["int2", "int4", "int8", "int16", "int32", "int64", "uint2", "uint4", "uint8", "uint16",
        "uint32", "uint64"]
FLOATS = ["bfloat16", "float16", "float32", "float64", "float8_e3m4", "float8_e4m3",
          "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
          "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn"]
COMPLEX = ["complex64", "complex128"]
WIDE = {"int64", "uint64", "float64", "complex128"}


def _dense(dtype):
    """A dense constant of `dtype` with distinct values (not a splat)."""
    info = ml_dtypes.iinfo(dtype) if jnp.issubdtype(dtype, jnp.integer) else None
    if info is not None:
        return np.array([info.min, 0, 1, info.max], dtype=dtype)
    if jnp.issubdtype(dtype, jnp.complexfloating):
        return np.array([1 + 2j, -3.5j, 0, 4], dtype=dtype)
    if dtype == jnp.float8_e8m0fnu:
        return np.array([0.25, 1.0, 2.0, 64.0], dtype=dtype)
    return np.array([-1.5, 0.0, 0.5, 3.0], dtype=dtype)


def _convert_program(dtype):
    const = _dense(dtype)
    return lambda x: (x.astype(dtype) + const if dtype != jnp.float8_e8m0fnu
                      else x.astype(dtype), np.real(const).astype(jnp.float32),
                      lax.convert_element_type(x, dtype).astype(jnp.float32))


def _arith_program(dtype):
    if jnp.issubdtype(dtype, jnp.integer):
        return lambda a, b: (a + b, a * b, jnp.maximum(a, b), a < b, jnp.where(a > b, a, b),
                             jnp.sum(a, dtype=dtype), a & b, a >> 1)
    return lambda a, b: (a + b, a * b, jnp.maximum(a, b), a < b, jnp.where(a > b, a, b),
                         jnp.sum(a, dtype=dtype), -a)


def programs():
    out = []
    for name in INTS + FLOATS + COMPLEX:
        dtype = jnp.dtype(getattr(jnp, name))
        x64 = name in WIDE
        out.append(P(f"identity_{name}", lambda a: a, S((3,), dtype), x64=x64))
        out.append(P(f"convert_{name}", _convert_program(dtype), S((4,)), x64=x64))
        if name not in ("float8_e8m0fnu",):
            out.append(P(f"arith_{name}", _arith_program(dtype), S((4,), dtype), S((4,), dtype),
                         x64=x64))
        out.append(P(f"splat_{name}", lambda a, dtype=dtype: jnp.full((2, 3), 1, dtype),
                     S(()), x64=x64))
    out += [
        P("identity_bool", lambda a: a, S((3,), bool)),
        P("bool_ops", lambda a, b: (a & b, a | ~b, a ^ b, jnp.any(a), a.astype(jnp.int8),
                                    a.astype(jnp.float32), jnp.where(a, 1, 2)),
          S((5,), bool), S((5,), bool)),
        P("bool_dense_constant", lambda a: a ^ np.array([True, False, True, True, False, False,
                                                         True, False, True]), S((9,), bool)),
        P("bool_splat_constant", lambda a: a & np.ones((3, 3), bool), S((3, 3), bool)),
        P("complex_from_parts", lambda a, b: lax.complex(a, b) * np.complex64(1 + 1j),
          S((3,)), S((3,))),
        P("complex_math", lambda z: (jnp.exp(z), jnp.log(z), jnp.sqrt(z), jnp.abs(z),
                                     jnp.angle(z), jnp.conj(z) * z), S((3,), jnp.complex64)),
        P("complex128_math", lambda z: (jnp.exp(z), jnp.abs(z), z @ z),
          S((2, 2), jnp.complex128), x64=True),
        P("float64_constants", lambda x: x * np.pi + np.array([1e-300, 1e300]),
          S((2,), jnp.float64), x64=True),
        P("int64_constants", lambda x: x + np.array([-(2 ** 62), 2 ** 62], np.int64),
          S((2,), jnp.int64), x64=True),
        P("uint64_constants", lambda x: x + np.array([2 ** 63 + 5, 1], np.uint64),
          S((2,), jnp.uint64), x64=True),
        P("special_float_constants", lambda x: x + np.array([np.inf, -np.inf, np.nan, -0.0],
                                                            np.float32), S((4,))),
        P("special_f16_constants", lambda x: x + np.array([np.inf, np.nan, 65504, 6e-8],
                                                          np.float16), S((4,), jnp.float16)),
        P("bf16_matmul_f32_accumulate", lambda a, b: jnp.dot(a, b, preferred_element_type=
                                                             jnp.float32),
          S((3, 4), jnp.bfloat16), S((4, 2), jnp.bfloat16)),
        P("int4_packed_constant", lambda x: x + np.arange(-8, 8, dtype=ml_dtypes.int4)
          .reshape(4, 4), S((4, 4), jnp.int4)),
        P("uint4_odd_length", lambda x: x * np.array([1, 2, 15], ml_dtypes.uint4),
          S((3,), jnp.uint4)),
        P("f8_scaled_matmul", lambda a, b: jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32)),
          S((2, 4), jnp.float8_e4m3fn), S((4, 2), jnp.float8_e5m2)),
        P("bitcast_f32_u8", lambda x: lax.bitcast_convert_type(x, jnp.uint8), S((3,))),
        P("bitcast_bf16_i16", lambda x: lax.bitcast_convert_type(x, jnp.int16),
          S((3,), jnp.bfloat16)),
        P("weak_typed_scalars", lambda x: x * 2 + 1.5, S((3,), jnp.float16)),
    ]
    return out
