"""dot_general (batch and contracting dimensions anywhere, zero-size dimensions, precision,
preferred_element_type) and conv_general_dilated (dimension numbers, strides, padding, lhs/rhs
dilation, feature and batch groups, 1-D to 3-D).

Large contractions use small-integer operands, so float results are exact in any summation order
and any difference is a real one; small ones use random values with JAX's own dot tolerances
(lax_test testDot: float16 1e-2, float64 1e-14)."""
from __future__ import annotations

import numpy as np
import pytest
from jax import lax

from . import inputs as I
from . import not_yet
from .accuracy import check_accuracy, ld, lsum
from .compare import Call, check_cases

DOT_TOL = {np.float16: 1e-2, np.float64: 1e-14, np.complex128: 1e-14}
HI = lax.Precision.HIGHEST


def _ints(dt, shape, seed):
    dt = np.dtype(dt)
    if dt.kind == "c":
        return (I.rng(seed).integers(-3, 4, shape) + 1j * I.rng(seed + 1).integers(-3, 4, shape)).astype(dt)
    if dt == np.bool_:
        return I.random(dt, shape, seed)
    lo = 0 if (I.is_int(dt) and I.iinfo(dt).min == 0) else -3
    return I.rng(seed).integers(lo, lo + 7, shape).astype(dt)


def _rand(dt, shape, seed):
    dt = np.dtype(dt)
    return I.random(dt, shape, seed, scale=1.0) if (I.is_float(dt) or dt.kind == "c") else _ints(dt, shape, seed)


def dg(lc, rc, lb=(), rb=(), **kw):
    return lambda a, b: lax.dot_general(a, b, ((lc, rc), (lb, rb)), **kw)


def dot_cases(dt):
    return {
        "vec_vec": Call(dg((0,), (0,)), _rand(dt, (7,), 1), _rand(dt, (7,), 2)),
        "mat_vec": Call(dg((1,), (0,)), _rand(dt, (4, 6), 3), _rand(dt, (6,), 4)),
        "matmul": Call(dg((1,), (0,)), _rand(dt, (5, 3), 5), _rand(dt, (3, 4), 6)),
        "matmul_transposed_rhs": Call(dg((1,), (1,)), _rand(dt, (5, 3), 7), _rand(dt, (4, 3), 8)),
        "contract_lhs_dim0": Call(dg((0,), (0,)), _rand(dt, (3, 5), 9), _rand(dt, (3, 4), 10)),
        "batch": Call(dg((2,), (1,), (0,), (0,)), _rand(dt, (2, 3, 4), 11), _rand(dt, (2, 4, 5), 12)),
        "batch_not_leading": Call(dg((0,), (2,), (2,), (0,)), _rand(dt, (4, 3, 2), 13), _rand(dt, (2, 5, 4), 14)),
        "two_contracting": Call(dg((1, 2), (0, 1)), _rand(dt, (3, 4, 2), 15), _rand(dt, (4, 2, 5), 16)),
        "outer": Call(dg((), ()), _rand(dt, (3,), 17), _rand(dt, (4,), 18)),
        "k_zero": Call(dg((1,), (0,)), np.zeros((3, 0), dt), np.zeros((0, 4), dt)),
        "m_zero": Call(dg((1,), (0,)), np.zeros((0, 3), dt), _rand(dt, (3, 4), 19)),
        "large_exact": Call(dg((1,), (0,)), _ints(dt, (48, 80), 20), _ints(dt, (80, 40), 21)),
        "large_batch_exact": Call(dg((2,), (1,), (0,), (0,)), _ints(dt, (3, 17, 70), 22), _ints(dt, (3, 70, 9), 23)),
        "precision_highest": Call(dg((1,), (0,), precision=HI), _rand(dt, (5, 6), 24), _rand(dt, (6, 3), 25)),
    }


@pytest.mark.parametrize("op,dtype", [not_yet.param("dot_general", dt) for dt in I.BOOL + I.INT + I.FLOAT + I.COMPLEX])
def test_dot_general(op, dtype):
    check_cases(None, dot_cases(np.dtype(dtype)), op=op, dtype=dtype, tol=DOT_TOL)


# f32 products of 2^20 to 2^25 multiply-adds with every dim at most 512: libxsmm's kernels in tiles
# of rows (or columns when N > M) spread over the pool, a shorter last tile, batches fewer than the
# threads cut into tiles, the lhs read transposed; then the same sizes with a bias and relu after the
# product (applied per tile) and with an accumulator added in the product (x^T g + acc). Integer
# values, so every summation order gives the same bits and the comparison is exact.
def mid_size_cases():
    x = lambda shape, s: _ints(np.float32, shape, s)  # noqa: E731
    return {
        "square_256": Call(dg((1,), (0,)), x((256, 256), 40), x((256, 256), 41)),
        "rows_with_tail": Call(dg((1,), (0,)), x((300, 77), 42), x((77, 250), 43)),
        "columns": Call(dg((1,), (0,)), x((100, 128), 44), x((128, 300), 45)),
        "lhs_transposed": Call(dg((0,), (0,)), x((192, 384), 46), x((192, 160), 47)),
        "batch_of_two": Call(dg((2,), (1,), (0,), (0,)), x((2, 130, 64), 48), x((2, 64, 170), 49)),
        "bias_relu": Call(lambda a, b, c: lax.max(lax.dot(a, b) + c, np.float32(0)), x((256, 320), 50),
                          x((320, 192), 51), x((192,), 52)),
        "accumulate": Call(lambda a, g, acc: acc + lax.dot_general(a, g, (((0,), (0,)), ((), ()))),
                           x((128, 256), 53), x((128, 384), 54), x((256, 384), 55)),
    }


def test_mid_size_products_in_tiles():
    check_cases(None, mid_size_cases(), op="dot_general", dtype=np.dtype(np.float32), mode="exact")


# f32 products whose rhs rows are a multiple of 512 elements apart: below AVX-512 (STABLERT_ISA=avx2,
# sse4) oneDNN reads a padded copy of rhs made in the step's workspace; above it the same products
# run unpadded. Row tiles, column tiles (N > M), a batch, the lhs read transposed, a bias and relu
# after the product (oneDNN post-ops on the padded product) and an accumulator added in it. Integer
# values: the comparison is exact.
def padded_rhs_cases():
    x = lambda shape, s: _ints(np.float32, shape, s)  # noqa: E731
    return {
        "square_512": Call(dg((1,), (0,)), x((512, 512), 60), x((512, 512), 61)),
        "rows_1024": Call(dg((1,), (0,)), x((200, 1024), 62), x((1024, 1024), 63)),
        "columns": Call(dg((1,), (0,)), x((64, 300), 64), x((300, 1536), 65)),
        "batch": Call(dg((2,), (1,), (0,), (0,)), x((3, 96, 130), 66), x((3, 130, 512), 67)),
        "lhs_transposed": Call(dg((0,), (0,)), x((256, 160), 68), x((256, 512), 69)),
        "bias_relu": Call(lambda a, b, c: lax.max(lax.dot(a, b) + c, np.float32(0)), x((256, 192), 70),
                          x((192, 512), 71), x((512,), 72)),
        "accumulate": Call(lambda a, g, acc: acc + lax.dot_general(a, g, (((0,), (0,)), ((), ()))),
                           x((128, 256), 73), x((128, 1024), 74), x((256, 1024), 75)),
    }


def test_products_with_rhs_rows_512_apart():
    check_cases(None, padded_rhs_cases(), op="dot_general", dtype=np.dtype(np.float32), mode="exact")


# bf16 products on oneDNN: natively where the CPU has AVX512_BF16, else (STABLERT_ISA=avx2, sse4)
# widened to f32 in the step's workspace and rounded once. Integer values: every f32 sum is exact
# and rounds to the same bf16 on both backends.
def bf16_cases():
    x = lambda shape, s: _ints(I.FLOAT[1], shape, s)  # noqa: E731
    return {
        "square_256": Call(dg((1,), (0,)), x((256, 256), 80), x((256, 256), 81)),
        "rows_512": Call(dg((1,), (0,)), x((130, 200), 82), x((200, 512), 83)),
        "batch": Call(dg((2,), (1,), (0,), (0,)), x((4, 64, 96), 84), x((4, 96, 80), 85)),
        "lhs_transposed": Call(dg((0,), (0,)), x((128, 100), 86), x((128, 64), 87)),
        "rhs_transposed": Call(dg((1,), (1,)), x((100, 128), 88), x((72, 128), 89)),
    }


def test_bf16_products_on_onednn():
    check_cases(None, bf16_cases(), op="dot_general", dtype=np.dtype(I.FLOAT[1]), mode="exact")


PREFERRED = [
    (np.int8, np.int32), (np.uint8, np.int32), (np.int16, np.int64), (np.int32, np.int64),
    (np.float16, np.float32), ("bfloat16", np.float32), (np.float32, np.float64), (np.int8, np.float32),
]


@pytest.mark.parametrize("op,pair,dtype,out", [not_yet.param("dot_preferred_element_type",
                                                        f"{I.name(I.FLOAT[1] if a == 'bfloat16' else a)}->{I.name(b)}",
                                                        I.FLOAT[1] if a == "bfloat16" else np.dtype(a), np.dtype(b))
                                          for a, b in PREFERRED])
def test_dot_preferred_element_type(op, pair, dtype, out):
    dt = np.dtype(dtype)
    big = (_ints(dt, (40, 70), 1) * (30 if I.is_int(dt) and dt.itemsize == 1 else 1)).astype(dt)
    cases = {
        "matmul": Call(dg((1,), (0,), preferred_element_type=out), _ints(dt, (5, 6), 2), _ints(dt, (6, 4), 3)),
        # int8 products that overflow int8 but not the preferred type
        "accumulate_wide": Call(dg((1,), (0,), preferred_element_type=out), big, _ints(dt, (70, 8), 4)),
        "batch": Call(dg((2,), (1,), (0,), (0,), preferred_element_type=out), _ints(dt, (2, 3, 4), 5),
                      _ints(dt, (2, 4, 5), 6)),
    }
    check_cases(None, cases, op=op, dtype=dt, tol=DOT_TOL)


# ------------------------------------------------------------------------------------------------
# convolution

def conv(strides=(1, 1), padding="VALID", lhs_dil=None, rhs_dil=None, dn=None, fgc=1, bgc=1, **kw):
    return lambda x, w: lax.conv_general_dilated(x, w, strides, padding, lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
                                                 dimension_numbers=dn, feature_group_count=fgc,
                                                 batch_group_count=bgc, **kw)


def conv_cases(dt):
    x = lambda shape, s: _ints(dt, shape, s)
    cases = {
        "nchw_valid": Call(conv(), x((2, 3, 7, 6), 1), x((4, 3, 3, 2), 2)),
        "stride2_same": Call(conv((2, 2), "SAME"), x((1, 2, 8, 7), 3), x((3, 2, 3, 3), 4)),
        "explicit_padding": Call(conv((1, 2), ((1, 2), (0, 1))), x((1, 2, 5, 6), 5), x((2, 2, 2, 3), 6)),
        "negative_padding": Call(conv((1, 1), ((-1, 0), (1, -1))), x((1, 1, 6, 6), 7), x((1, 1, 2, 2), 8)),
        "lhs_dilation": Call(conv((1, 1), ((1, 1), (2, 2)), lhs_dil=(2, 3)), x((1, 2, 4, 3), 9), x((2, 2, 3, 3), 10)),
        "rhs_dilation": Call(conv((1, 1), "VALID", rhs_dil=(2, 1)), x((2, 1, 7, 5), 11), x((3, 1, 3, 2), 12)),
        "nhwc_hwio": Call(conv((1, 1), "SAME", dn=("NHWC", "HWIO", "NHWC")), x((2, 5, 6, 3), 13), x((3, 2, 3, 4), 14)),
        "odd_layout": Call(conv((2, 1), "VALID", dn=("HNCW", "IHWO", "CWNH")), x((6, 2, 3, 5), 15), x((3, 2, 2, 4), 16)),
        "feature_groups": Call(conv(fgc=2), x((1, 4, 5, 5), 17), x((6, 2, 2, 2), 18)),
        "depthwise": Call(conv((1, 1), "SAME", fgc=3), x((2, 3, 5, 4), 19), x((3, 1, 3, 3), 20)),
        "batch_groups": Call(conv(bgc=2), x((4, 2, 5, 5), 21), x((4, 2, 2, 2), 22)),
        "conv1d": Call(conv((2,), "SAME", dn=("NWC", "WIO", "NWC")), x((2, 9, 3), 23), x((3, 3, 2), 24)),
        "conv3d": Call(conv((1, 1, 1), "VALID"), x((1, 2, 4, 4, 3), 25), x((2, 2, 2, 2, 2), 26)),
        "empty_batch": Call(conv(), x((0, 2, 4, 4), 27), x((3, 2, 2, 2), 28)),
        "kernel_larger_than_input_padded": Call(conv((1, 1), ((2, 2), (2, 2))), x((1, 1, 2, 2), 29), x((1, 1, 4, 4), 30)),
    }
    if I.is_int(dt):
        # sums past the type's range wrap around, as on XLA
        big = np.array(I.iinfo(dt).max // 3, dt)
        cases["wraparound"] = Call(conv(), x((1, 3, 4, 4), 31) * big, x((2, 3, 3, 3), 32) + np.array(3, dt))
    return cases


@pytest.mark.parametrize("op,dtype", [not_yet.param("conv_general_dilated", dt)
                                      for dt in I.FLOAT + I.COMPLEX + I.INT])
def test_conv(op, dtype):
    check_cases(None, conv_cases(np.dtype(dtype)), op=op, dtype=dtype, tol=DOT_TOL)


def _grads(f, x, w):
    """The input and kernel gradients of sum(f(x, w) * cotangent), as JAX emits them."""
    import jax

    def both(x, w, dy):
        _, vjp = jax.vjp(f, x, w)
        return vjp(dy)
    return both


def conv_grad_cases(dt):
    import jax
    r = lambda shape, s: _ints(dt, shape, s)  # exact sums in any order
    nhwc = ("NHWC", "HWIO", "NHWC")
    forms = {
        "nhwc_same": (conv((1, 1), "SAME", dn=nhwc), (2, 8, 8, 3), (3, 3, 3, 4)),
        "nhwc_stride2_same": (conv((2, 2), "SAME", dn=nhwc), (2, 9, 8, 3), (3, 3, 3, 5)),
        "nchw_strided_dilated": (conv((2, 1), ((1, 2), (0, 1)), rhs_dil=(2, 2)), (2, 3, 11, 9), (4, 3, 3, 2)),
        "grouped": (conv((1, 1), "SAME", fgc=2), (2, 4, 6, 6), (6, 2, 3, 3)),
        "depthwise": (conv((2, 2), "SAME", dn=nhwc, fgc=3), (2, 7, 7, 3), (3, 3, 1, 6)),
        "conv1d": (conv((2,), "SAME", dn=("NWC", "WIO", "NWC")), (3, 17, 4), (5, 4, 6)),
        "conv3d": (conv((1, 2, 1), "SAME", dn=("NDHWC", "DHWIO", "NDHWC")), (2, 4, 6, 5, 3), (3, 3, 2, 3, 4)),
    }
    cases = {}
    for i, (name, (f, xs, ws)) in enumerate(forms.items()):
        x, w = r(xs, 10 * i), r(ws, 10 * i + 1)
        ys = jax.eval_shape(f, jax.ShapeDtypeStruct(xs, dt), jax.ShapeDtypeStruct(ws, dt)).shape
        cases[name] = Call(_grads(f, x, w), x, w, r(ys, 10 * i + 2))
    return cases


@pytest.mark.parametrize("op,dtype", [not_yet.param("conv_gradients", dt) for dt in I.FLOAT])
def test_conv_gradients(op, dtype):
    """jax.vjp of convolutions: the input gradient (lhs-dilated convolution with a reversed
    kernel) and the kernel gradient (batch and feature swapped; batch groups when grouped)."""
    check_cases(None, conv_grad_cases(np.dtype(dtype)), op=op, dtype=dtype, tol=DOT_TOL)


# Realistic sizes (up to 1M-element activations), cut into tiles over the cores: the images for
# the forward and input-gradient forms, the sum over the images for the kernel gradient
# (partial results added after the tiles); NHWC stays in the caller's layout, NCHW goes
# through oneDNN's blocked layouts. An uneven split (5 images), 20 output features (not a
# multiple of oneDNN's block of 16), stride 2.
@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_conv_and_gradients_large(layout):
    import jax
    dt = np.dtype(np.float32)
    nhwc = layout == "NHWC"
    dn = (layout, "HWIO", layout) if nhwc else (layout, "OIHW", layout)
    x_shape = (lambda n, s, c: (n, s, s, c)) if nhwc else (lambda n, s, c: (n, c, s, s))
    w_shape = (lambda k, i, o: (k, k, i, o)) if nhwc else (lambda k, i, o: (o, i, k, k))
    forms = {
        "batch16_32x32_32to64": (conv((1, 1), "SAME", dn=dn), x_shape(16, 32, 32), w_shape(3, 32, 64)),
        "batch5_33x33_24to20_stride2": (conv((2, 2), "SAME", dn=dn), x_shape(5, 33, 24), w_shape(3, 24, 20)),
    }
    cases = {}
    for i, (name, (f, xs, ws)) in enumerate(forms.items()):
        x, w = _ints(dt, xs, 50 + 3 * i), _ints(dt, ws, 51 + 3 * i)  # every sum exact in f32
        ys = jax.eval_shape(f, jax.ShapeDtypeStruct(xs, dt), jax.ShapeDtypeStruct(ws, dt)).shape
        cases[name] = Call(f, x, w)
        cases[name + "_gradients"] = Call(_grads(f, x, w), x, w, _ints(dt, ys, 52 + 3 * i))
    check_cases(None, cases, op="conv_gradients", dtype=dt, tol=DOT_TOL)


@pytest.mark.parametrize("op,dtype", [not_yet.param("conv_preferred_element_type", t) for t in (
    "int8->int32", "int16->int32", "uint8->uint32", "bfloat16->float32", "float16->float32", "float32->float64")])
def test_conv_preferred_element_type(op, dtype):
    src, out = [np.dtype(I.FLOAT[1] if t == "bfloat16" else t) for t in dtype.split("->")]
    x = _ints(src, (1, 3, 6, 6), 1) * np.array(20 if src == np.int8 else 1, src)
    check_cases(conv(preferred_element_type=out), {"basic": (x.astype(src), _ints(src, (2, 3, 3, 3), 2))},
                op=op, dtype=src)


# Accuracy of long contractions (accuracy.py): k = 4M (1M for complex64), as one dot product
# ((1, k) x (k, 1)) and as output rows accumulated over k ((1, k) x (k, 3)), against XLA and a long
# double reference.
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_long_contraction_accuracy(dtype):
    dt = np.dtype(dtype)
    k = 1 << (20 if dt.kind == "c" else 22)
    a = I.rng(31).random((1, k)).astype(dt)
    b = I.rng(32).random((k, 3)).astype(dt)
    if dt.kind == "c":
        a = (a + 0.5j * I.rng(33).random((1, k))).astype(dt)

    def products(x, y):
        return lax.dot(x, y[:, :1], precision=HI), lax.dot(x, y, precision=HI)

    def reference(x, y):
        terms = ld(x).reshape(k, 1) * ld(y)
        return lsum(terms[:, :1], (0,)).reshape(1, 1), lsum(terms, (0,)).reshape(1, 3)

    magnitude = lambda x, y: reference(np.abs(x), np.abs(y))  # noqa: E731
    check_accuracy(products, (a, b), reference, magnitude=magnitude, op="dot_long_contraction", dtype=dt,
                   names=["dot product", "rows"])
