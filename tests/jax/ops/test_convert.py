"""convert_element_type between every pair of element types JAX has (bool, int4/uint4, all
integers, every float8, f16, bf16, f32, f64, complex) and bitcast_convert_type (same size and
size-changing), with the values that stress conversions: NaN, ±inf, ±0, out-of-range values for
integer targets, negative values for unsigned targets, rounding ties, denormals."""
from __future__ import annotations

import numpy as np
import pytest
import jax.numpy as jnp
from jax import lax

from . import inputs as I
from . import not_yet
from .compare import check_cases

pytestmark = pytest.mark.filterwarnings("ignore:Casting complex values to real")

GROUPS = {
    "bool": I.BOOL,
    "int4": I.INT4,
    "int": I.INT,
    "float8": I.FLOAT8_ALL,
    "float": I.FLOAT,
    "complex": I.COMPLEX,
}


def _source_values(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array([False, True, True, False])
    if I.is_int(dtype):
        return I.int_specials(dtype)
    if np.issubdtype(dtype, np.complexfloating):
        return I.complex_specials(dtype)
    sp = I.float_specials(dtype)
    extra = np.array([127.0, 128.0, 255.0, 256.0, -129.0, 32767.5, 65535.0, 65536.0, 2.0 ** 31,
                      -2.0 ** 31 - 1e6, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1e20, -1e20,
                      0.25, 0.75, 1.25, 1.75, -0.25, 3.5, -3.5, 7.0, -8.0, 9.0],
                     np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        extra = extra.astype(dtype)
    return np.concatenate([sp, extra])


def _convert_cases(src):
    vals = _source_values(src)
    cases = {
        "scalar": (vals[min(3, len(vals) - 1)].reshape(()),),
        "empty": (np.zeros((0, 2), src),),
        "special": (vals,),
        "random": (I.random(src, (4, 5), seed=11),),
    }
    dn = I.denormals_of(src)
    if dn.size:
        cases["denormal"] = (dn,)
    return cases


def _convert_params():
    out = []
    for src in I.EVERY:
        for group, targets in GROUPS.items():
            pair = f"{I.name(src)}->{group}"
            out.append(not_yet.param("convert", pair, src, targets))
    return out


@pytest.mark.parametrize("op,pair,src,targets", _convert_params())
def test_convert(op, pair, src, targets):
    # One program per (source type, target group): every target of the group is one output.
    def fn(x):
        return tuple(lax.convert_element_type(x, t) for t in targets)

    check_cases(fn, _convert_cases(src), op="convert", dtype=src, mode="exact", elementwise=True,
                expr="(" + ", ".join(f"lax.convert_element_type({{0}}, jnp.{I.name(t)})" for t in targets) + ")")


def _bitcast_pairs():
    pairs = []
    same = {1: [np.bool_, np.int8, np.uint8], 2: [np.int16, np.uint16, np.float16, "bfloat16"],
            4: [np.int32, np.uint32, np.float32], 8: [np.int64, np.uint64, np.float64]}
    for size, ts in same.items():
        for a in ts:
            for b in ts:
                if a is not b and not (a is np.bool_ or b is np.bool_):
                    pairs.append((np.dtype(a) if a != "bfloat16" else np.dtype(I.FLOAT[1]),
                                  np.dtype(b) if b != "bfloat16" else np.dtype(I.FLOAT[1])))
    # size-changing: wider -> narrower adds a trailing dimension, narrower -> wider removes it
    for a, b in [(np.float32, np.uint8), (np.float64, np.uint32), (np.uint32, np.uint16), (np.int64, np.int8),
                 (np.uint8, np.float32), (np.uint16, np.float64), (np.int8, np.int32), (np.uint32, np.float64),
                 (np.int16, np.float64)]:
        pairs.append((np.dtype(a), np.dtype(b)))
    return [not_yet.param("bitcast_convert", f"{I.name(a)}->{I.name(b)}", a, b) for a, b in pairs]


@pytest.mark.parametrize("op,pair,src,dst", _bitcast_pairs())
def test_bitcast_convert(op, pair, src, dst):
    ratio = dst.itemsize / src.itemsize

    def make(shape, seed):
        if ratio < 1:
            return _bits_of(src, shape, seed)
        return _bits_of(src, shape + (int(ratio),), seed)

    cases = {
        "scalar": (make((), 1),),
        "empty": (make((0,), 2),),
        "special": (_bitcast_specials(src, ratio),),
        "random": (make((3, 4), 3),),
    }
    check_cases(lambda x: lax.bitcast_convert_type(x, dst), cases, op="bitcast_convert", dtype=src,
                mode="exact")


def _bits_of(dtype, shape, seed):
    """Random bit patterns of `dtype` (so NaN payloads and denormals occur too)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape)) * dtype.itemsize
    raw = I.rng(seed).integers(0, 256, n, dtype=np.uint8)
    out = raw.view(dtype).reshape(shape)
    if dtype.kind in "fc":
        # NaN payloads are not compared; keep the random patterns but make NaNs canonical
        out = np.where(np.isnan(out), np.array(np.nan, dtype), out).astype(dtype)
    return out


def _bitcast_specials(dtype, ratio):
    dtype = np.dtype(dtype)
    if I.is_int(dtype) or dtype == np.bool_:
        vals = I.int_specials(dtype)
    elif dtype.kind == "c":
        vals = I.complex_specials(dtype)[:16]
    else:
        vals = np.concatenate([I.float_specials(dtype), I.denormals(dtype)])
    if ratio > 1:
        k = int(ratio)
        vals = np.resize(vals, (len(vals) // k + 1) * k).reshape(-1, k)
    return vals


# Sub-byte types (one element per byte in both runtimes' buffers) bitcast to and from every
# other width: the narrow side has the trailing dimension, element 0 in the wide element's
# lowest bits (XLA's order). Every sub-byte type JAX has, both directions, up to 2^20 narrow
# elements.
SUB_BYTE = [np.dtype(getattr(jnp, n)) for n in ("int4", "uint4", "float4_e2m1fn", "int2", "uint2")]
SUB_BYTE_WIDE = [np.dtype(t) for t in (np.uint8, np.int8, np.int16, np.float16, np.int32, np.float32,
                                       np.uint64, np.float64)] + [I.FLOAT[1], I.FLOAT8[0]]


def _bits(dtype) -> int:
    return np.dtype(dtype).itemsize * 8 if np.dtype(dtype) not in SUB_BYTE else (
        2 if np.dtype(dtype).name.endswith("int2") else 4)


def _sub_byte_pairs():
    pairs = []
    for n in SUB_BYTE:
        for w in SUB_BYTE_WIDE + [t for t in SUB_BYTE if _bits(t) > _bits(n)]:
            pairs += [(n, w), (w, n)]
    return [not_yet.param("bitcast_convert", f"{I.name(a)}->{I.name(b)}", a, b) for a, b in pairs]


def _sub_byte_values(dtype, shape, seed):
    """Every bit pattern of a sub-byte type, at random (the high bits of each byte zero)."""
    raw = I.rng(seed).integers(0, 1 << _bits(dtype), int(np.prod(shape)), dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


@pytest.mark.parametrize("op,pair,src,dst", _sub_byte_pairs())
def test_bitcast_convert_sub_byte(op, pair, src, dst):
    ratio = _bits(src) / _bits(dst)

    def make(shape, seed):
        if src in SUB_BYTE:
            return _sub_byte_values(src, shape + (int(1 / ratio),), seed)
        return _bits_of(src, shape, seed)

    large = (1 << 20) // int(ratio if ratio > 1 else 1 / ratio)  # 2^20 narrow elements
    cases = {
        "scalar": (make((), 1),),
        "empty": (make((0,), 2),),
        "random": (make((3, 4), 3),),
        "large": (make((large,), 4),),
    }
    check_cases(lambda x: lax.bitcast_convert_type(x, dst), cases, op="bitcast_convert", dtype=src,
                mode="exact")


def test_view_of_bool_bytes():
    # numpy bool arrays made by viewing other bytes hold bytes other than 0 and 1; jnp's view
    # lowers to convert(i1 -> ui8) + bitcast_convert and shows the stored bytes, as numpy does.
    raw = I.rng(5).integers(0, 256, 1 << 20, dtype=np.uint8)
    raw[:4] = [0, 1, 96, 255]
    cases = {"scalar": (raw[2:3].view(np.bool_).reshape(()),), "large": (raw.view(np.bool_),)}
    check_cases(lambda x: (x.view(np.int8), x.view(np.uint8)), cases, op="bitcast_convert",
                dtype=np.bool_, mode="exact")
