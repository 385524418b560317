"""jax.numpy: elementwise, reductions, shape manipulation, indexing, sorting, contractions."""
import jax.numpy as jnp
import numpy as np
from jax import lax

from corpus_lib import P, S, f32, i32

UNARY_FLOAT = [
    "abs", "negative", "sign", "floor", "ceil", "round", "rint", "trunc", "sqrt", "cbrt",
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "square",
    "reciprocal", "isnan", "isinf", "isfinite", "signbit", "deg2rad", "sinc", "fabs",
    "nan_to_num", "i0", "positive", "spacing",
]
UNARY_INT = ["bitwise_not", "abs", "negative", "sign", "square", "invert", "bitwise_count"]
BINARY_FLOAT = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "mod", "fmod",
    "power", "float_power", "maximum", "minimum", "fmax", "fmin", "arctan2", "hypot",
    "logaddexp", "logaddexp2", "copysign", "nextafter", "heaviside", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "isclose", "remainder", "ldexp_like",
]
BINARY_INT = [
    "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "floor_divide",
    "mod", "gcd", "lcm", "power_int", "maximum", "minimum", "logical_and", "logical_xor",
]
REDUCTIONS = [
    "sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all",
    "cumsum", "cumprod", "nansum", "nanmean", "nanmax", "median", "ptp", "count_nonzero",
    "average", "cummax", "cummin", "logcumsumexp",
]


def _unary(name):
    return lambda x: getattr(jnp, name)(x)


def _binary(name):
    if name == "ldexp_like":
        return lambda x, y: jnp.ldexp(x, (y * 3).astype(i32))
    if name == "power_int":
        return lambda x, y: jnp.power(x, jnp.abs(y) % 5)
    return lambda x, y: getattr(jnp, name)(x, y)


def _reduce(name):
    if name in ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"):
        return lambda x: _cumulative(name, x)
    return lambda x: getattr(jnp, name)(x, axis=-1)


def _cumulative(name, x):
    if name == "cummax":
        return lax.cummax(x, axis=1)
    if name == "cummin":
        return lax.cummin(x, axis=1)
    if name == "logcumsumexp":
        return lax.cumlogsumexp(x, axis=1)
    return getattr(jnp, name)(x, axis=1)


def _shape_programs():
    x = S((2, 3, 4))
    return [
        P("reshape", lambda a: a.reshape(4, 6), x),
        P("transpose", lambda a: jnp.transpose(a, (2, 0, 1)), x),
        P("concatenate", lambda a, b: jnp.concatenate([a, b, a], axis=1), x, x),
        P("stack", lambda a, b: jnp.stack([a, b], axis=-1), x, x),
        P("split", lambda a: jnp.split(a, [1, 3], axis=2), x),
        P("tile", lambda a: jnp.tile(a, (2, 1, 3)), x),
        P("repeat", lambda a: jnp.repeat(a, 3, axis=1), x),
        P("flip", lambda a: jnp.flip(a, axis=(0, 2)), x),
        P("roll", lambda a: jnp.roll(a, 2, axis=2), x),
        P("roll_dynamic", lambda a, s: jnp.roll(a, s, axis=1), x, S((), i32)),
        P("pad_constant", lambda a: jnp.pad(a, ((1, 0), (0, 2), (3, 1)), constant_values=7.0), x),
        P("pad_reflect", lambda a: jnp.pad(a, 2, mode="reflect"), S((5, 6))),
        P("pad_edge", lambda a: jnp.pad(a, 1, mode="edge"), S((5, 6))),
        P("pad_wrap", lambda a: jnp.pad(a, 2, mode="wrap"), S((5, 6))),
        P("squeeze_expand", lambda a: jnp.expand_dims(jnp.squeeze(a, 1), 0), S((3, 1, 4))),
        P("moveaxis", lambda a: jnp.moveaxis(a, 0, -1), x),
        P("broadcast_to", lambda a: jnp.broadcast_to(a, (5, 2, 3, 4)), x),
        P("where", lambda c, a, b: jnp.where(c, a, b), S((2, 3, 4), bool), x, S((4,))),
        P("clip", lambda a: jnp.clip(a, -1.0, 1.0), x),
        P("diag", lambda a: jnp.diag(a), S((5,))),
        P("diagonal_trace", lambda a: (jnp.diagonal(a), jnp.trace(a)), S((4, 4))),
        P("tril_triu", lambda a: (jnp.tril(a, -1), jnp.triu(a, 1)), S((4, 5))),
        P("eye_arange_linspace", lambda: (jnp.eye(3, 4, 1), jnp.arange(2, 20, 3),
                                          jnp.linspace(0.0, 1.0, 7))),
        P("meshgrid", lambda a, b: jnp.meshgrid(a, b, indexing="ij"), S((3,)), S((4,))),
        P("ravel_flatten", lambda a: (jnp.ravel(a), a.flatten(order="F")), x),
        P("atleast_3d", lambda a: jnp.atleast_3d(a), S((4,))),
        P("rot90", lambda a: jnp.rot90(a, 3), S((3, 5))),
        P("array_split", lambda a: jnp.array_split(a, 3), S((8,))),
        P("append_insert", lambda a: (jnp.append(a, 1.0), jnp.insert(a, 2, 9.0)), S((5,))),
        P("delete", lambda a: jnp.delete(a, np.array([0, 2])), S((6,))),
        P("full_zeros_ones", lambda a: (jnp.full_like(a, 3.0), jnp.zeros((2, 2), jnp.int8),
                                        jnp.ones_like(a, dtype=jnp.bool_)), x),
    ]


def _index_programs():
    x = S((6, 5))
    return [
        P("take", lambda a, i: jnp.take(a, i, axis=0), x, S((3,), i32)),
        P("take_along_axis", lambda a, i: jnp.take_along_axis(a, i, axis=1), x, S((6, 2), i32)),
        P("fancy_index", lambda a, i, j: a[i, j], x, S((4,), i32), S((4,), i32)),
        P("boolean_mask_where", lambda a: jnp.where(a > 0, a, 0.0).sum(), x),
        P("slice_step", lambda a: a[::2, 1::2], x),
        P("negative_slice", lambda a: a[::-1, -3:], x),
        P("dynamic_index", lambda a, i: a[i], x, S((), i32)),
        P("at_set", lambda a, i: a.at[i].set(0.0), x, S((2,), i32)),
        P("at_add_mul", lambda a, i: a.at[i, 1].add(2.0).at[0].multiply(3.0), x, S((3,), i32)),
        P("at_min_max", lambda a, i: (a.at[i].min(0.5), a.at[i].max(0.5)), x, S((3,), i32)),
        P("at_get_fill", lambda a, i: a.at[i].get(mode="fill", fill_value=-1.0), x, S((3,), i32)),
        P("nonzero_sized", lambda a: jnp.nonzero(a > 0, size=4, fill_value=0), x),
        P("argwhere_sized", lambda a: jnp.argwhere(a > 0, size=3), x),
        P("searchsorted", lambda a, v: jnp.searchsorted(a, v), S((10,)), S((4,))),
        P("digitize", lambda a, b: jnp.digitize(a, b), S((7,)), S((4,))),
        P("bincount", lambda i: jnp.bincount(i, length=8), S((10,), i32)),
        P("histogram", lambda a: jnp.histogram(a, bins=5, range=(0.0, 1.0)), S((20,))),
        P("select_piecewise", lambda a: jnp.select([a < 0, a > 1], [a * 2, a - 1], a), x),
        P("unique_sized", lambda a: jnp.unique(a, size=4, fill_value=0), S((9,), i32)),
        P("ix_", lambda a, i, j: a[jnp.ix_(i, j)], x, S((2,), i32), S((3,), i32)),
    ]


def _sort_programs():
    return [
        P("sort", lambda a: jnp.sort(a, axis=0), S((5, 4))),
        P("sort_descending", lambda a: jnp.sort(a, descending=True), S((7,), i32)),
        P("argsort", lambda a: jnp.argsort(a, stable=True), S((3, 6))),
        P("lexsort", lambda a, b: jnp.lexsort((a, b)), S((6,), i32), S((6,))),
        P("partition", lambda a: jnp.partition(a, 3), S((8,))),
        P("sort_complex", lambda a: jnp.sort_complex(a), S((5,), jnp.complex64)),
        P("percentile", lambda a: jnp.percentile(a, jnp.array([10.0, 50.0])), S((9,))),
        P("quantile_interp", lambda a: jnp.quantile(a, 0.3, method="nearest"), S((9,))),
    ]


def _contraction_programs():
    return [
        P("matmul", lambda a, b: a @ b, S((3, 4)), S((4, 5))),
        P("matmul_batched_broadcast", lambda a, b: jnp.matmul(a, b), S((2, 1, 3, 4)),
          S((5, 4, 6))),
        P("matvec", lambda a, b: a @ b, S((3, 4)), S((4,))),
        P("dot_vectors", lambda a, b: jnp.dot(a, b), S((7,)), S((7,))),
        P("vdot_complex", lambda a, b: jnp.vdot(a, b), S((4,), jnp.complex64),
          S((4,), jnp.complex64)),
        P("tensordot", lambda a, b: jnp.tensordot(a, b, axes=([1, 2], [0, 1])), S((2, 3, 4)),
          S((3, 4, 5))),
        P("einsum_attention", lambda q, k: jnp.einsum("bhqd,bhkd->bhqk", q, k),
          S((2, 3, 4, 8)), S((2, 3, 5, 8))),
        P("einsum_trace_outer", lambda a, b: (jnp.einsum("ii->", a), jnp.einsum("i,j->ij", b, b)),
          S((4, 4)), S((3,))),
        P("inner_outer_kron", lambda a, b: (jnp.inner(a, b), jnp.outer(a, b), jnp.kron(a, b)),
          S((3,)), S((3,))),
        P("cross", lambda a, b: jnp.cross(a, b), S((4, 3)), S((4, 3))),
        P("convolve_full", lambda a, b: jnp.convolve(a, b), S((10,)), S((3,))),
        P("correlate_valid", lambda a, b: jnp.correlate(a, b, mode="valid"), S((10,)), S((3,))),
        P("polyval", lambda p, x: jnp.polyval(p, x), S((4,)), S((6,))),
        P("interp", lambda x, xp, fp: jnp.interp(x, xp, fp), S((5,)), S((8,)), S((8,))),
        P("matmul_int8_to_int32", lambda a, b: jnp.matmul(a, b, preferred_element_type=i32),
          S((4, 8), jnp.int8), S((8, 2), jnp.int8)),
        P("matmul_bf16", lambda a, b: a @ b, S((4, 8), jnp.bfloat16), S((8, 2), jnp.bfloat16)),
    ]


def programs():
    out = []
    for name in UNARY_FLOAT:
        arg = S((3, 4)) if name not in ("arccosh",) else S((4,))
        out.append(P(f"unary_{name}", _unary(name), arg))
    for name in UNARY_INT:
        out.append(P(f"unary_int_{name}", _unary(name), S((5,), i32)))
    for name in BINARY_FLOAT:
        out.append(P(f"binary_{name}", _binary(name), S((3, 4)), S((4,))))
    for name in BINARY_INT:
        out.append(P(f"binary_int_{name}", _binary(name), S((2, 5), i32), S((5,), i32)))
    for name in REDUCTIONS:
        out.append(P(f"reduce_{name}", _reduce(name), S((3, 5))))
    out += [
        P("reduce_sum_keepdims_where", lambda a: jnp.sum(a, axis=0, keepdims=True, where=a > 0),
          S((3, 5))),
        P("reduce_multi_axis", lambda a: jnp.max(a, axis=(0, 2)), S((2, 3, 4))),
        P("reduce_all_axes_int", lambda a: (jnp.sum(a), jnp.prod(a)), S((3, 3), i32)),
        P("reduce_bool", lambda a: (jnp.any(a, axis=0), jnp.all(a)), S((4, 2), bool)),
        P("logsumexp", lambda a: jnp.log(jnp.sum(jnp.exp(a - a.max()))) + a.max(), S((6,))),
        P("mean_f16", lambda a: jnp.mean(a), S((8,), jnp.float16)),
        P("var_ddof", lambda a: jnp.var(a, ddof=1, axis=0), S((5, 3))),
    ]
    return out + _shape_programs() + _index_programs() + _sort_programs() + \
        _contraction_programs()
