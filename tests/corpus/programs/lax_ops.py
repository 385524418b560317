"""jax.lax: the primitives with their attribute variants (convolutions, windows, gathers,
scatters, sorting, bit operations, special functions, precision, RNG, barriers)."""
import jax.numpy as jnp
import numpy as np
from jax import lax

from corpus_lib import P, S, f32, i32

UNARY = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "bessel_i0e", "bessel_i1e", "logistic",
         "rsqrt", "cbrt", "tan", "is_finite", "exp2", "population_count_f", "clz_f",
         "round_even", "expm1", "log1p", "sign", "atan"]
BINARY = ["atan2", "rem", "pow", "nextafter", "igamma", "igammac", "polygamma", "zeta",
          "shift_left", "shift_right_logical", "shift_right_arithmetic", "complex", "max",
          "min", "div_int", "rem_int", "and_bool", "or_int", "xor_int"]


def _unary(name):
    if name == "population_count_f":
        return lambda x: lax.population_count(x.astype(i32))
    if name == "clz_f":
        return lambda x: lax.clz(x.astype(jnp.uint32))
    if name == "round_even":
        return lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    return lambda x: getattr(lax, name)(x)


def _binary(name):
    ints = {"shift_left", "shift_right_logical", "shift_right_arithmetic", "div_int", "rem_int",
            "or_int", "xor_int"}
    if name in ints:
        op = getattr(lax, {"div_int": "div", "rem_int": "rem", "or_int": "bitwise_or",
                           "xor_int": "bitwise_xor"}.get(name, name))
        return lambda x, y: op(x.astype(i32), y.astype(i32) % 31 + 1)
    if name == "and_bool":
        return lambda x, y: lax.bitwise_and(x > 0, y > 0)
    if name in ("polygamma",):
        return lambda x, y: lax.polygamma(jnp.round(jnp.abs(x)), y)
    return lambda x, y: getattr(lax, name)(x, y)


def _conv_programs():
    def conv(x, w, **kw):
        return lax.conv_general_dilated(x, w, **kw)
    return [
        P("conv2d_nchw_valid", lambda x, w: conv(x, w, window_strides=(1, 1), padding="VALID"),
          S((2, 3, 8, 8)), S((4, 3, 3, 3))),
        P("conv2d_nhwc_same_strided", lambda x, w: conv(
            x, w, window_strides=(2, 2), padding="SAME",
            dimension_numbers=("NHWC", "HWIO", "NHWC")), S((1, 9, 9, 3)), S((3, 3, 3, 8))),
        P("conv2d_dilated", lambda x, w: conv(x, w, window_strides=(1, 1), padding=((2, 2), (1, 1)),
                                               lhs_dilation=(1, 1), rhs_dilation=(2, 1)),
          S((1, 2, 10, 10)), S((2, 2, 3, 3))),
        P("conv2d_grouped", lambda x, w: conv(x, w, window_strides=(1, 1), padding="SAME",
                                               feature_group_count=2),
          S((1, 4, 6, 6)), S((6, 2, 3, 3))),
        P("conv2d_batch_grouped", lambda x, w: conv(x, w, window_strides=(1, 1), padding="VALID",
                                                     batch_group_count=2),
          S((4, 2, 5, 5)), S((4, 2, 2, 2))),
        P("conv1d", lambda x, w: conv(x, w, window_strides=(1,), padding="SAME",
                                       dimension_numbers=("NWC", "WIO", "NWC")),
          S((2, 16, 4)), S((5, 4, 6))),
        P("conv3d", lambda x, w: conv(x, w, window_strides=(1, 1, 1), padding="VALID"),
          S((1, 2, 4, 4, 4)), S((3, 2, 2, 2, 2))),
        P("conv_transpose", lambda x, w: lax.conv_transpose(
            x, w, strides=(2, 2), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
          S((1, 4, 4, 3)), S((3, 3, 3, 2))),
        P("conv_lhs_dilated", lambda x, w: conv(x, w, window_strides=(1, 1),
                                                 padding=((0, 0), (1, 1)), lhs_dilation=(2, 2)),
          S((1, 1, 4, 4)), S((1, 1, 2, 2))),
        P("conv_precision_pref", lambda x, w: conv(
            x, w, window_strides=(1, 1), padding="VALID", precision=lax.Precision.HIGHEST,
            preferred_element_type=f32), S((1, 1, 4, 4), jnp.bfloat16), S((1, 1, 2, 2), jnp.bfloat16)),
    ]


def _window_programs():
    def pool(op, init):
        return lambda x: lax.reduce_window(x, init, op, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return [
        P("reduce_window_max", pool(lax.max, -jnp.inf), S((1, 6, 6, 2))),
        P("reduce_window_sum_padded", lambda x: lax.reduce_window(
            x, 0.0, lax.add, (3, 3), (1, 1), ((1, 1), (1, 1))), S((5, 5))),
        P("reduce_window_dilated", lambda x: lax.reduce_window(
            x, 0.0, lax.add, (2,), (1,), "VALID", window_dilation=(2,), base_dilation=(2,)),
          S((8,))),
        P("reduce_window_variadic", lambda x, y: lax.reduce_window(
            (x, y), (-jnp.inf, 0), lambda a, b: (lax.max(a[0], b[0]), a[1] + b[1]),
            (2,), (2,), "VALID"), S((8,)), S((8,), i32)),
        P("select_and_scatter_add", lambda x: jax_grad_maxpool(x), S((1, 4, 4, 1))),
        P("cumsum_reverse", lambda x: lax.cumsum(x, axis=0, reverse=True), S((6, 2))),
        P("cumprod_int", lambda x: lax.cumprod(x, axis=1), S((2, 5), i32)),
    ]


def jax_grad_maxpool(x):
    import jax
    return jax.grad(lambda v: lax.reduce_window(v, -jnp.inf, lax.max, (1, 2, 2, 1),
                                                (1, 2, 2, 1), "VALID").sum())(x)


def _gather_scatter_programs():
    dnums = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                       start_index_map=(0,))
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    batched = lax.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
        operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    out = [
        P("gather_rows", lambda x, i: lax.gather(x, i[:, None], dnums, (1, 4)),
          S((6, 4)), S((3,), i32)),
        P("gather_clip", lambda x, i: lax.gather(x, i[:, None], dnums, (1, 4),
                                                  mode=lax.GatherScatterMode.CLIP),
          S((6, 4)), S((3,), i32)),
        P("gather_fill", lambda x, i: lax.gather(x, i[:, None], dnums, (1, 4),
                                                  mode=lax.GatherScatterMode.FILL_OR_DROP),
          S((6, 4)), S((3,), i32)),
        P("gather_batching_dims", lambda x, i: lax.gather(x, i[..., None], batched, (1, 1)),
          S((3, 5)), S((3,), i32)),
    ]
    for name in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"):
        op = getattr(lax, name)
        out.append(P(name, lambda x, i, u, op=op: op(x, i[:, None], u, sdn),
                     S((6, 4)), S((3,), i32), S((3, 4))))
    out += [
        P("scatter_apply", lambda x, i: x.at[i].apply(jnp.sin), S((6,)), S((2,), i32)),
        P("scatter_unique_sorted", lambda x, i, u: lax.scatter_add(
            x, i[:, None], u, sdn, indices_are_sorted=True, unique_indices=True),
          S((6, 4)), S((3,), i32), S((3, 4))),
        P("dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
          S((6, 5)), S((), i32), S((), i32)),
        P("dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)),
          S((6, 5)), S((2, 5)), S((), i32)),
        P("dynamic_slice_in_dim", lambda x, i: lax.dynamic_slice_in_dim(x, i, 3, axis=1),
          S((4, 8)), S((), i32)),
        P("slice_strided", lambda x: lax.slice(x, (1, 0), (6, 5), (2, 2)), S((7, 6))),
        P("pad_interior_negative", lambda x: lax.pad(x, 0.0, ((1, -1, 1), (-2, 2, 0))),
          S((4, 5))),
        P("rev_iota_broadcast", lambda x: lax.rev(x, (0,)) + lax.broadcasted_iota(f32, (3, 4), 1),
          S((3, 4))),
        P("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), S((3, 1))),
        P("collapse_expand", lambda x: lax.expand_dims(lax.collapse(x, 0, 2), (1,)),
          S((2, 3, 4))),
    ]
    return out


def _misc_programs():
    return [
        P("sort_multi_operand", lambda k, v: lax.sort((k, v), num_keys=1), S((8,)), S((8,), i32)),
        P("sort_two_keys_unstable", lambda a, b: lax.sort((a, b), num_keys=2, is_stable=False),
          S((4, 6), i32), S((4, 6))),
        P("top_k", lambda x: lax.top_k(x, 3), S((2, 10))),
        P("approx_max_k", lambda x: lax.approx_max_k(x, 4), S((3, 64))),
        P("argmax_lax", lambda x: lax.argmax(x, 1, i32), S((3, 7))),
        P("argmin_index_dtype", lambda x: lax.argmin(x, 0, jnp.int16), S((5, 2))),
        P("reduce_variadic", lambda x, y: lax.reduce(
            (x, y), (0.0, 0), lambda a, b: (a[0] + b[0], a[1] * b[1]), (0,)),
          S((4, 3)), S((4, 3), i32)),
        P("reduce_and_or_xor", lambda x: (lax.reduce_and(x, (0,)), lax.reduce_or(x, (1,)),
                                          lax.reduce_xor(x, (0, 1))), S((3, 4), bool)),
        P("reduce_precision", lambda x: lax.reduce_precision(x, exponent_bits=5,
                                                             mantissa_bits=10), S((8,))),
        P("bitcast_convert_same_width", lambda x: lax.bitcast_convert_type(x, i32), S((4,))),
        P("bitcast_convert_narrow", lambda x: lax.bitcast_convert_type(x, jnp.uint8), S((4,))),
        P("bitcast_convert_widen", lambda x: lax.bitcast_convert_type(x, f32),
          S((4, 2), jnp.uint16)),
        P("clamp", lambda lo, x, hi: lax.clamp(lo, x, hi), S(()), S((5,)), S(())),
        P("select_n", lambda p, a, b, c: lax.select_n(p, a, b, c), S((4,), i32), S((4,)),
          S((4,)), S((4,))),
        P("complex_parts", lambda z: (lax.real(z), lax.imag(z), lax.conj(z), lax.abs(z)),
          S((3,), jnp.complex64)),
        P("dot_general_batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
          S((2, 3, 4)), S((2, 4, 5))),
        P("dot_general_precision", lambda a, b: lax.dot_general(
            a, b, (((1,), (0,)), ((), ())), precision=(lax.Precision.HIGH, lax.Precision.DEFAULT)),
          S((3, 4)), S((4, 2))),
        P("dot_general_preferred_f32", lambda a, b: lax.dot(
            a, b, preferred_element_type=f32), S((3, 4), jnp.float16), S((4, 2), jnp.float16)),
        P("optimization_barrier", lambda x, y: lax.optimization_barrier((x * 2, y)), S((3,)),
          S((), i32)),
        P("rng_bit_generator", lambda k: lax.rng_bit_generator(k, (4, 4), dtype=jnp.uint32),
          S((4,), jnp.uint32)),
        P("rng_bit_generator_philox", lambda k: lax.rng_bit_generator(
            k, (8,), dtype=jnp.uint64, algorithm=lax.RandomAlgorithm.RNG_PHILOX),
          S((2,), jnp.uint64), x64=True),
        P("rng_uniform", lambda lo, hi: lax.rng_uniform(lo, hi, (3,)), S(()), S(())),
        P("iota_int_dims", lambda: lax.iota(jnp.int8, 5)),
        P("convert_element_types", lambda x: (x.astype(jnp.int8), x.astype(jnp.uint32),
                                              x.astype(jnp.float16), x.astype(jnp.complex64),
                                              x.astype(bool)), S((4,))),
        P("integer_pow", lambda x: (lax.integer_pow(x, 3), lax.integer_pow(x, -2)), S((4,))),
        P("square_tanh_logistic", lambda x: lax.square(lax.tanh(x)) + lax.logistic(x), S((4,))),
        P("random_gamma_grad", lambda a, x: lax.random_gamma_grad(a, x), S((4,)), S((4,))),
        P("regularized_incomplete_beta", lambda a, b, x: lax.betainc(a, b, x), S((3,)), S((3,)),
          S((3,))),
        P("cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=0), S((6,))),
        P("ragged_dot", lambda a, b, g: lax.ragged_dot(a, b, g), S((8, 4)), S((2, 4, 3)),
          S((2,), i32)),
        P("conv_int8_preferred_i32", lambda x, w: lax.conv_general_dilated(
            x, w, (1, 1), "VALID", preferred_element_type=i32), S((1, 2, 5, 5), jnp.int8),
          S((3, 2, 2, 2), jnp.int8)),
        P("optimization_barrier_single", lambda x: lax.optimization_barrier(x) + 1.0, S((2,))),
        P("split_lax", lambda x: lax.split(x, (2, 3), axis=0), S((5, 2))),
        P("constant_big_splat", lambda x: x + jnp.full((64, 64), 3.0), S((64, 64))),
        P("constant_dense_array", lambda x: x + np.arange(24, dtype=np.float32).reshape(4, 6),
          S((4, 6))),
    ]


def programs():
    out = [P(f"unary_{name}", _unary(name), S((2, 3))) for name in UNARY]
    out += [P(f"binary_{name}", _binary(name), S((2, 3)), S((2, 3))) for name in BINARY]
    return out + _conv_programs() + _window_programs() + _gather_scatter_programs() + \
        _misc_programs()
