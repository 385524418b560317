"""Memory-bound kernels at realistic sizes: the vector loops and the split across threads
(steps of 64K+ elements run as one call per thread) of converts, compare/select/clamp,
copies (broadcast, concatenate, pad, slice, reverse, iota, transpose) and argmax/argmin over
rows, columns, middle axes and everything. Millions of elements, sizes that leave vector
tails and uneven thread shares, NaN, ±0, ±inf, denormals and ties among the values.
Compared bit for bit with XLA:CPU (NaN payloads excepted)."""
from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

from . import inputs as I
from .compare import Call, check_cases

N = 1_000_003  # > 64K (split) and no multiple of any vector width


def _with_specials(x: np.ndarray, seed: int) -> np.ndarray:
    """x (float) with its dtype's specials and denormals scattered through it."""
    x = np.array(x)
    flat = x.reshape(-1)
    sp = np.concatenate([I.specials(x.dtype), I.denormals_of(x.dtype)]).astype(x.dtype)
    where = I.rng(seed).integers(0, flat.size, size=min(flat.size, 64 * sp.size))
    flat[where] = np.resize(sp, where.size)
    flat[-3:] = sp[:3]  # specials in the tail too
    return x


def _floats(dtype, shape, seed, scale=3.0):
    return _with_specials(I.random(np.dtype(dtype), shape, seed, scale=scale), seed)


def _f32_bits(n, seed):
    """Random f32 bit patterns (every exponent, NaNs with payloads, denormals) and the
    rounding boundaries of the half-precision formats."""
    bits = I.rng(seed).integers(0, 2 ** 32, size=n, dtype=np.uint64).astype(np.uint32)
    edges = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001, 0xFFBFFFFF, 0x477FF000,
                      0x477FEFFF, 0x477FE000, 0x38800000, 0x387FFFFF, 0x33000000, 0x33000001, 0x4F000000,
                      0xCF000000, 0x4EFFFFFF, 0xCF000001, 0x7F7FFFFF, 1, 0x807FFFFF, 0x3F808000, 0x3F818000,
                      0x3F80FFFF, 0x3F817FFF], np.uint32)
    bits[:edges.size] = edges
    bits[-edges.size:] = edges
    return bits.view(np.float32)


CONVERT_PAIRS = [("float32", "bfloat16"), ("float32", "float16"), ("float32", "int32"), ("bfloat16", "float32"),
                 ("float16", "float32"), ("int32", "float32"), ("float64", "float32"), ("float32", "float64")]


def _source(dtype, seed):
    dt = np.dtype(dtype)
    if dt == np.float32:
        return _f32_bits(N, seed)
    if dt in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)):
        # Every bit pattern, many times over, then a tail.
        return np.resize(np.arange(2 ** 16, dtype=np.uint16), N).view(dt)
    if dt == np.int32:
        return I.rng(seed).integers(-2 ** 31, 2 ** 31, size=N, dtype=np.int64).astype(np.int32)
    return _floats(dt, (N,), seed, scale=1e30)


@pytest.mark.parametrize("src,dst", CONVERT_PAIRS, ids=[f"{s}->{d}" for s, d in CONVERT_PAIRS])
def test_convert_large(src, dst):
    x = _source(src, 1)
    check_cases(lambda a: lax.convert_element_type(a, np.dtype(getattr(ml_dtypes, dst, dst))),
                {"1M": (x,), "short": (x[:37],)}, op="convert", mode="exact")


COMPARE_DTYPES = [np.float32, np.float64, np.int32]


@pytest.mark.parametrize("dtype", COMPARE_DTYPES, ids=lambda d: np.dtype(d).name)
def test_compare_select_clamp_large(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        a, b = _floats(dt, (N,), 2), _floats(dt, (N,), 3)
        b[::97] = a[::97]  # equal pairs
    else:
        a = I.rng(2).integers(-50, 50, size=N).astype(dt)
        b = I.rng(3).integers(-50, 50, size=N).astype(dt)
    cases = {f"compare_{name}": Call(fn, a, b) for name, fn in
             [("eq", lax.eq), ("ne", lax.ne), ("lt", lax.lt), ("le", lax.le), ("gt", lax.gt), ("ge", lax.ge)]}
    # XLA rewrites where(x > y, x, y) into a maximum, which flushes denormals: none here.
    def flushed(x):
        return np.where(np.abs(x) < np.finfo(dt).tiny, np.copysign(0, x), x).astype(dt) if dt.kind == "f" else x
    cases["where_gt"] = Call(lambda x, y: jnp.where(x > y, x, y), flushed(a), flushed(b))
    cases["select"] = Call(lambda p, x, y: lax.select(p, x, y), a > 0, a, b)
    cases["select_scalar_pred"] = Call(lambda p, x, y: lax.select(p, x, y), np.bool_(True), a, b)
    if dt.kind == "f":
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        cases["clamp_arrays"] = Call(lambda l, x, h: lax.clamp(l, x, h), lo, _floats(dt, (N,), 4), hi)
        cases["clamp_scalars"] = Call(lambda x: lax.clamp(dt.type(-0.5), x, dt.type(0.5)), a)
        cases["clamp_nan_bound"] = Call(lambda x: lax.clamp(dt.type(np.nan), x, dt.type(0.5)), a[:1000])
    check_cases(lambda *args: None, cases, op="compare/select/clamp", mode="exact")


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, ml_dtypes.bfloat16, np.float64, np.complex64,
                                   np.complex128], ids=lambda d: np.dtype(d).name)
def test_select_widths_large(dtype):
    dt = np.dtype(dtype)
    a = I.random(dt, (N,), 5)
    b = I.random(dt, (N,), 6)
    p = I.rng(7).integers(0, 2, size=N).astype(bool)
    check_cases(lambda q, x, y: lax.select(q, x, y), {"1M": (p, a, b)}, op="select", mode="exact")


COPY_DTYPES = [np.float32, np.float64, ml_dtypes.bfloat16, np.int8, np.complex128]


@pytest.mark.parametrize("dtype", COPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_copies_large(dtype):
    dt = np.dtype(dtype)
    m = I.random(dt, (1021, 1031), 8)
    t = I.random(dt, (33, 129, 257), 9)
    row, col = m[0], m[:, 0]
    cases = {
        "broadcast_row": Call(lambda r: jnp.broadcast_to(r, (1021, 1031)), row),
        "broadcast_col": Call(lambda c: jnp.broadcast_to(c[:, None], (1021, 1031)), col),
        "broadcast_scalar": Call(lambda s: jnp.broadcast_to(s, (N,)), m[3, 3]),
        "broadcast_middle": Call(lambda x: lax.broadcast_in_dim(x, (1021, 3, 1031), (0, 2)), m),
        "concat0": Call(lambda x, y: jnp.concatenate([x, y, x], 0), m, m[:500]),
        "concat1": Call(lambda x, y: jnp.concatenate([x, y], 1), m, m[:, :17]),
        "pad": Call(lambda x: lax.pad(x, dt.type(7) if dt.kind != "V" else x[0, 0], [(3, 2, 0), (1, 4, 0)]), m),
        "pad_interior_negative": Call(lambda x: lax.pad(x, x[0, 0], [(-5, 3, 1), (2, -7, 2)]), m),
        "pad_3d": Call(lambda x: lax.pad(x, x[0, 0, 0], [(1, 1, 0), (0, 2, 1), (3, 0, 0)]), t),
        "slice": Call(lambda x: x[1:-1, 3:-2], m),
        "slice_strided": Call(lambda x: x[::3, 1::2], m),
        "reverse0": Call(lambda x: x[::-1], m),
        "reverse1": Call(lambda x: x[:, ::-1], m),
        "reverse_both_3d": Call(lambda x: x[::-1, :, ::-1], t),
        "reverse_1d": Call(lambda x: x[::-1], m.reshape(-1)),  # one row: the calls split it
        "slice_1d": Call(lambda x: x[5:-3], m.reshape(-1)),
        "transpose": Call(lambda x: x.T, m),
        "transpose_3d": Call(lambda x: jnp.transpose(x, (2, 0, 1)), t),
    }
    check_cases(lambda *args: None, cases, op="data movement", mode="exact")


TRANSPOSE_DTYPES = [np.float32, ml_dtypes.bfloat16, np.float64, np.complex64, np.int8, np.complex128]


@pytest.mark.parametrize("dtype", TRANSPOSE_DTYPES, ids=lambda d: np.dtype(d).name)
def test_transposes_large(dtype):
    """The transpose kernel's vector blocks (2, 4 and 8 bytes), their edges (sides that are
    no multiple of a block), outputs large enough to be written with streaming stores (16 MiB
    and more; the 1023 x 2049 of 4 bytes or less is not), and the inner 2-D transposes of 3-D
    permutations."""
    dt = np.dtype(dtype)
    odd = I.random(dt, (1023, 2049), 15)
    t = I.random(dt, (64, 130, 250), 16)
    cases = {
        "odd_2d": Call(lambda x: x.T, odd),
        "odd_2d_back": Call(lambda x: x.T, odd.T.copy()),
        **{f"3d_{''.join(map(str, p))}": Call(lambda x, p=p: jnp.transpose(x, p), t)
           for p in [(0, 2, 1), (2, 0, 1), (2, 1, 0), (1, 2, 0)]},
    }
    if dt.itemsize in (2, 4, 8):
        # 4096 x 4096 of 4 bytes, 2900 x 2900 of 8 and 2048 x 4096 of 2 (64, 67 and 17 MB).
        side = {2: (2048, 4096), 4: (4096, 4096), 8: (2900, 2900)}[dt.itemsize]
        cases["large"] = Call(lambda x: x.T, I.random(dt, side, 17))
    check_cases(lambda *args: None, cases, op="transpose", mode="exact")


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8, ml_dtypes.bfloat16],
                         ids=lambda d: np.dtype(d).name)
def test_iota_large(dtype):
    dt = np.dtype(dtype)
    cases = {
        "last_dim": Call(lambda: lax.broadcasted_iota(dt, (1021, 1031), 1)),
        "first_dim": Call(lambda: lax.broadcasted_iota(dt, (1021, 1031), 0)),
        "middle_dim": Call(lambda: lax.broadcasted_iota(dt, (17, 251, 263), 1)),
        "1d": Call(lambda: lax.iota(dt, N) if dt.itemsize >= 4 else lax.broadcasted_iota(dt, (N,), 0)),
    }
    check_cases(lambda: None, cases, op="iota", mode="exact")


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float64, np.int32, np.int8],
                         ids=lambda d: np.dtype(d).name)
def test_movement_benchmark_sizes(dtype):
    """The kernel benchmark's 2048 x 2048 broadcasts, slices, iotas and row-moving transpose:
    vector fills of whole rows (a column broadcast, an iota along the first dimension),
    every-second-element gathers (2-, 4- and 8-byte elements; 1-byte ones stay scalar), iota
    rows computed in vectors, and rows of different lengths so the vector tails are hit."""
    dt = np.dtype(dtype)
    m = I.random(dt, (2048, 2048), 18)
    odd = I.random(dt, (1025, 2047), 19)
    cases = {
        "broadcast_col": Call(lambda c: jnp.broadcast_to(c[:, None], (2048, 2048)), m[:, 0]),
        "broadcast_col_odd": Call(lambda c: jnp.broadcast_to(c[:, None], (1025, 2047)), odd[:, 0]),
        "broadcast_row": Call(lambda r: jnp.broadcast_to(r, (2048, 2048)), m[0]),
        "slice_every_second": Call(lambda x: x[:, ::2], m),
        "slice_every_second_odd": Call(lambda x: x[:, 1::2], odd),
        "slice_inner": Call(lambda x: x[1:-1, 1:-1], m),
        "transpose_rows": Call(lambda x: jnp.transpose(x, (1, 0, 2)), m.reshape(64, 256, 256)),
    }
    if dt.kind in "iu" and dt.itemsize >= 4:
        for d in (0, 1):
            cases[f"iota_{d}"] = Call(lambda d=d: lax.broadcasted_iota(dt, (2048, 2048), d))
            cases[f"iota_odd_{d}"] = Call(lambda d=d: lax.broadcasted_iota(dt, (1025, 2047), d))
    check_cases(lambda *args: None, cases, op="data movement", mode="exact")


def _arg_data(dtype, shape, seed):
    """Values with many ties (small integers), both zeros, infinities and NaNs in some rows."""
    x = I.rng(seed).integers(-20, 20, size=shape).astype(dtype)
    flat = x.reshape(-1)
    flat[I.rng(seed + 1).integers(0, flat.size, size=flat.size // 50)] = -0.0
    flat[I.rng(seed + 2).integers(0, flat.size, size=flat.size // 5000)] = np.inf
    flat[I.rng(seed + 3).integers(0, flat.size, size=flat.size // 5000)] = -np.inf
    flat[I.rng(seed + 4).integers(0, flat.size, size=max(1, flat.size // 20000))] = np.nan
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("index", [np.int32, np.int64], ids=lambda d: np.dtype(d).name)
def test_argmax_argmin_large(dtype, index):
    m = _arg_data(dtype, (1021, 1031), 10)
    t = _arg_data(dtype, (7, 1001, 143), 11)
    v = _arg_data(dtype, (N,), 12)
    clean = np.abs(I.rng(13).standard_normal(N)).astype(dtype)  # no NaN: the vector path's merge
    clean[[5, 700_000, N - 1]] = clean.max() + 1  # ties of the maximum, one in the tail
    zeros = np.zeros((64, 4099), dtype)
    zeros[:, ::3] = -0.0
    all_nan = np.full((3, 5000), np.nan, dtype)
    cases = {}
    for name, f in [("argmax", lax.argmax), ("argmin", lax.argmin)]:
        cases[f"{name}_rows"] = Call(lambda x, f=f: f(x, 1, index), m)
        cases[f"{name}_cols"] = Call(lambda x, f=f: f(x, 0, index), m)
        cases[f"{name}_middle"] = Call(lambda x, f=f: f(x, 1, index), t)
        cases[f"{name}_last_3d"] = Call(lambda x, f=f: f(x, 2, index), t)
        cases[f"{name}_first_3d"] = Call(lambda x, f=f: f(x, 0, index), t)
        cases[f"{name}_all"] = Call(lambda x, f=f: f(x, 0, index), v)
        cases[f"{name}_clean"] = Call(lambda x, f=f: f(x, 0, index), clean)
        cases[f"{name}_neg_clean"] = Call(lambda x, f=f: f(-x, 0, index), clean)
        cases[f"{name}_zeros"] = Call(lambda x, f=f: f(x, 1, index), zeros)
        cases[f"{name}_all_nan"] = Call(lambda x, f=f: f(x, 1, index), all_nan)
    check_cases(lambda *args: None, cases, op="argmax/argmin", mode="exact")


def test_argmax_through_jnp_large():
    """jnp.argmax/argmin as users call them (keepdims, negative axes)."""
    m = _arg_data(np.float32, (1021, 1031), 14)
    cases = {
        "argmax_last": Call(lambda x: jnp.argmax(x, axis=-1), m),
        "argmin_first_keepdims": Call(lambda x: jnp.argmin(x, axis=0, keepdims=True), m),
        "argmax_flat": Call(lambda x: jnp.argmax(x), m),
    }
    check_cases(lambda *args: None, cases, op="argmax", mode="exact")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, ml_dtypes.bfloat16, np.int32],
                         ids=lambda d: np.dtype(d).name)
def test_cumulative_large(dtype):
    """Scans grouped as XLA's CPU backend groups them (tiles of 16), over rows, columns and a
    middle axis, forward and reverse, split across calls."""
    dt = np.dtype(dtype)
    m = (I.random(dt, (1021, 1031), 15) if dt.kind != "i" else I.rng(15).integers(-9, 9, (1021, 1031)).astype(dt))
    t = (I.random(dt, (9, 517, 131), 16) if dt.kind != "i" else I.rng(16).integers(-9, 9, (9, 517, 131)).astype(dt))
    if dt.kind != "i":
        m[3, 100] = np.nan
        m[7, :] = -0.0
        t[1, 20, 5] = np.inf
    cases = {
        "cumsum_rows": Call(lambda x: lax.cumsum(x, 1), m),
        "cumsum_cols": Call(lambda x: lax.cumsum(x, 0), m),
        "cumsum_middle": Call(lambda x: lax.cumsum(x, 1), t),
        "cumsum_rows_reverse": Call(lambda x: lax.cumsum(x, 1, reverse=True), m),
        "cumsum_cols_reverse": Call(lambda x: lax.cumsum(x, 0, reverse=True), m),
        "cummax_rows": Call(lambda x: lax.cummax(x, 1), m),
        "cummin_cols": Call(lambda x: lax.cummin(x, 0), m),
        "cumprod_middle_reverse": Call(lambda x: lax.cumprod(x, 1, reverse=True), t[:, :40]),
        "cumsum_1d": Call(lambda x: lax.cumsum(x, 0), m.reshape(-1)),
    }
    check_cases(lambda *args: None, cases, op="cumulative", mode="exact")
