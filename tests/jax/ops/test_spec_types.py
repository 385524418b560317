"""Every op for every element type the StableHLO specification allows, as MLIR text.

JAX emits only some element types for each op; other producers (and StableHLO's own test
programs) use the rest: real/imag of real operands, maximum/minimum/compare/clamp of complex
values, bodies that call functions, 2-bit integers, every f8 variant, ... The programs
(spec_programs.py) are compiled by both StableRT and XLA's CPU backend through the client's
compile path and compared with JAX's tolerances (compare.py), one program per (op, type).

Where XLA cannot give a reference the test says why and what it checks instead:
- XLA refuses the program too (f6 types have no XLA buffers, complex remainder aborts XLA's
  compiler): StableRT must refuse it with an error naming the op or the element type;
- XLA computes something else than the specification on a few inputs (integer power of
  exponents >= 64, sort of 2-bit types, dot/convolution of 2-bit types it refuses): the
  result is compared with numpy's exact value instead;
- bitcast_convert to or from i1: the specification counts i1 as 1 bit (tensor<3x8xi1> <->
  tensor<3xui8>); XLA computes i1 as 8 bits and returns another shape than the program's
  result type, so the result is compared with numpy's packbits/unpackbits (_i1_bitcast);
- bitcast_convert between complex and non-complex types (specification C2 forbids them):
  jaxlib's parser refuses them for every backend, so StableRT is given the text through the
  `stablert` CLI and must refuse it by name (test_bitcast_between_complex_and_real_is_refused).
The table of what the specification allows and what is covered where: docs/op_types.md.
"""
from __future__ import annotations

import fnmatch

import jax
import ml_dtypes
import numpy as np
import pytest

from . import not_yet
from . import spec_programs as P
from .compare import NotImplementedOnStableRT, STATS, Unimplemented, _compare_leaf

# (op glob, type glob, what): StableRT refuses these programs (UNIMPLEMENTED) while XLA runs them
# (or gives no usable reference); strict: once the op lands the case passes and the entry goes.
NOT_YET: list[tuple[str, str, str]] = []

# Known wrong results, each with its cause (docs/op_types.md); strict.
KNOWN_WRONG: dict[tuple[str, str], str] = {}

# Element types XLA has no reference for (it refuses or aborts): StableRT must refuse by name.
XLA_REFUSES = {("remainder", "complex<f32>"), ("remainder", "complex<f64>"),
               ("cbrt", "complex<f32>"), ("cbrt", "complex<f64>")}

# (op, type glob) compared with numpy's exact value instead of XLA's, and why.
NUMPY_REFERENCE = {
    ("sort", "i2"): "XLA's sort of 2-bit types returns values that are not a permutation of its input",
    ("sort", "ui2"): "XLA's sort of 2-bit types returns values that are not a permutation of its input",
    ("sort_call", "i2"): "as sort",
    ("sort_call", "ui2"): "as sort",
    ("sort", "complex<f*>"): "XLA's CPU sort refuses a complex LT comparator (UNIMPLEMENTED)",
    ("sort_call", "complex<f*>"): "as sort",
    ("dot_general", "*i2"): "XLA refuses 2-bit dot operands (UNIMPLEMENTED)",
    ("convolution", "*i2"): "XLA refuses 2-bit convolution operands (UNIMPLEMENTED)",
    ("bitcast:complex*", "*"): "XLA refuses complex<f64> -> complex<f32> and aborts on complex<f32> -> complex<f64>",
    ("power_large", "*i*"): "XLA's integer power uses the low 6 bits of the exponent and treats an unsigned "
                            "exponent with its top bit set as negative; StableRT computes the exact power",
}

# Compared elsewhere, with their known differences.
ELSEWHERE = {("power", "complex<f32>"): "test_elementwise.py pow-complex64 (docs/jax_suite.md)",
             ("power", "complex<f64>"): "test_elementwise.py pow-complex128 (docs/jax_suite.md)"}


def _match(table, op, t):
    for key, value in (table.items() if isinstance(table, dict) else ((k, None) for k in table)):
        if fnmatch.fnmatchcase(op, key[0]) and fnmatch.fnmatchcase(t, key[1]):
            return value if value is not None else True
    return None


# ------------------------------------------------------------------------------------------------
# numpy references


def _wrap(x, t: P.ElementType):
    ii = ml_dtypes.iinfo(t.dtype)
    span = 1 << ii.bits
    v = np.asarray(x, dtype=object)
    v = np.vectorize(lambda e: ((int(e) - ii.min) % span) + ii.min, otypes=[object])(v)
    if t.mlir == "ui64":
        return v.astype(np.uint64)
    return v.astype(np.int64).astype(t.dtype)


def _reference(op, t: P.ElementType, prog: P.Program):
    args = prog.args
    if op.startswith("sort"):
        return [np.sort(args[0], axis=1)]
    if op == "dot_general":
        a, b = (x.astype(np.int64) for x in args)
        return [_wrap(np.einsum("bik,bkj->bij", a, b), t)]
    if op == "convolution":
        x, w = (v.astype(np.int64) for v in args)
        out = np.zeros((1, 3, 3, 3), np.int64)
        for i in range(3):
            for j in range(3):
                out[0, i, j, :] = np.einsum("hwc,hwco->o", x[0, i:i + 3, j:j + 3, :], w)
        return [_wrap(out, t)]
    if op == "power_large":
        a, b = args
        modulus = 1 << ml_dtypes.iinfo(t.dtype).bits

        def exact(x, y):
            if y >= 0:
                return pow(x, y, modulus)  # the power wrapped to the type's width (_wrap signs it)
            return 1 if x == 1 else (-1 if y % 2 else 1) if x == -1 else 0  # 1 / x^-y, truncated
        return [_wrap([exact(int(x), int(y)) for x, y in zip(a, b)], t)]
    if op.startswith("bitcast:"):
        src, dst = (P.BY_MLIR[s] for s in op.split(":")[1].split("->"))
        if src.kind == "complex":  # little-endian: element 0 of the narrow side in the low bits
            x = np.ascontiguousarray(args[0])
            return [x.view(dst.dtype).reshape(x.shape[:-1] if dst.bits > src.bits else x.shape + (-1,)
                                              ).reshape(x.shape[:-1] if dst.bits > src.bits else x.shape + (2,))]
        assert "bool" in (src.kind, dst.kind), op  # the other bitcasts are compared with XLA
        return [_i1_bitcast(args[0], src, dst)]
    raise AssertionError(f"no numpy reference for {op}")


def _i1_bitcast(x, src: P.ElementType, dst: P.ElementType):
    """bitcast_convert to or from i1 by numpy's bit packing: the i1 elements along the last
    dimension are the other element's bits from the lowest up, its bytes little-endian (the
    StableHLO reference interpreter's order: bitcastConvertManyToOne puts element 0 in the low
    bits, bitcastConvertOneToMany takes element k from bits k*width and up), which is
    packbits/unpackbits with bitorder="little" over the little-endian bytes."""
    if src.kind == "bool":  # [..., bits(dst)] of i1 -> [...] of dst
        packed = np.packbits(np.asarray(x, np.bool_), axis=-1, bitorder="little")  # [..., ceil(bits / 8)]
        if dst.bits < 8:
            return P._from_bits(packed[..., 0], dst)
        return np.ascontiguousarray(packed).view(dst.dtype)[..., 0]
    if src.bits < 8:
        raw = (np.asarray(x).view(np.uint8) & ((1 << src.bits) - 1))[..., None]
    else:
        raw = np.ascontiguousarray(x).view(np.uint8).reshape(np.shape(x) + (src.bits // 8,))
    return np.unpackbits(raw, axis=-1, count=src.bits, bitorder="little").astype(np.bool_)


# ------------------------------------------------------------------------------------------------
# Cases


def _power(t: P.ElementType, bases, exps) -> P.Program:
    a, b = np.meshgrid(np.array(bases, object), np.array(exps, object), indexing="ij")
    a, b = a.ravel().astype(np.int64).astype(t.dtype) if t.mlir != "ui64" else a.ravel().astype(np.uint64), \
        b.ravel().astype(np.int64).astype(t.dtype) if t.mlir != "ui64" else b.ravel().astype(np.uint64)
    n = a.size
    T = P.tensor(t, (n,))
    body = [f"%0 = stablehlo.power %a0, %a1 : {T}", f"return %0 : {T}"]
    return P.Program(P.module([T, T], [T], body), [a, b])


def _int_range(t, values):
    ii = ml_dtypes.iinfo(t.dtype)
    return sorted({v for v in values if ii.min <= v <= ii.max})


def power_in_range(t: P.ElementType) -> P.Program:
    """Integer power of every special base over the exponents on which XLA's loop is the exact
    power: 0 <= exponent < 64 (and below the top bit of an unsigned type)."""
    ii = ml_dtypes.iinfo(t.dtype)
    top = min(63, (1 << (ii.bits - 1)) - 1)
    bases = [int(v) for v in P.specials(t)]
    return _power(t, bases, _int_range(t, [e for e in (0, 1, 2, 3, 5, 7, 31, 62, 63) if e <= top]))


def power_large(t: P.ElementType) -> P.Program:
    """Integer power over the exponents XLA's loop does not cover (>= 64, unsigned ones with the
    top bit set, negative ones): compared with the exact power, wrapped."""
    ii = ml_dtypes.iinfo(t.dtype)
    bases = _int_range(t, [0, 1, 2, 3, -1, -2, -3, 5, ii.max, ii.min])
    top = min(63, (1 << (ii.bits - 1)) - 1)
    exps = _int_range(t, [64, 65, 127, 128, 200, 255, 1000, ii.max, ii.max - 1, -1, -2, -3, ii.min, top + 1])
    return _power(t, bases, [e for e in exps if e > top or e < 0])


def _builder(op):
    if op == "power_large":
        return power_large
    if op.startswith("convert:"):
        src = P.BY_MLIR[op.split(":")[1].split("->")[0]]
        return lambda t: P.convert_all(src, [d for d in P.SPEC_TYPES if d.mlir not in P.XLA_NO_BUFFERS])
    if op.startswith("bitcast:"):
        src_name, dst_name = op.split(":")[1].split("->")
        src = P.BY_MLIR[src_name]
        if dst_name == "*":
            targets = [d for d in P.SPEC_TYPES if d.kind not in ("complex", "bool") and d is not src
                       and d.mlir not in P.XLA_NO_BUFFERS]
            return lambda t: P.bitcast_all(src, targets)
        return lambda t: P.bitcast(src, P.BY_MLIR[dst_name])
    return P.OPS[op][1]


def _refused(op, type_name) -> bool:
    """XLA refuses (or aborts on) the program, so there is no reference."""
    if op.startswith("bitcast:"):
        return any(s in P.XLA_NO_BUFFERS for s in op.split(":")[1].split("->")) or type_name in P.XLA_NO_BUFFERS
    return type_name in P.XLA_NO_BUFFERS or (op, type_name) in XLA_REFUSES


# Ops whose results are compared bitwise (data movement, selection, conversion of bits).
EXACT = ("data_movement", "constant", "gather", "sort", "sort_call", "select", "control_flow", "bitcast:*", "convert:*",
         "compare_*", "iota")


def _params():
    out = []
    for op in P.OPS:
        for t in P.SPEC_TYPES:
            if P.allowed(op, t):
                out.append((op, t.mlir))
    for t in P.SPEC_TYPES:
        if t.kind in P.INTEGER:
            out.append(("power_large", t.mlir))
    # bitcast_convert between every two non-complex types (complex ones only among themselves,
    # spec C2), the i1 packing included.
    # One program per source type to every other (non-i1) type XLA has buffers for; the i1
    # pairs one by one (compared with numpy, see _reference).
    real = [t for t in P.SPEC_TYPES if t.kind != "complex"]
    for a in real:
        if a.kind != "bool":
            out.append((f"bitcast:{a.mlir}->*", a.mlir))
    i1 = P.BY_MLIR["i1"]
    for b in real:
        if b is not i1:
            out += [(f"bitcast:i1->{b.mlir}", "i1"), (f"bitcast:{b.mlir}->i1", b.mlir)]
    # convert from every type to every type XLA has buffers for, one program per source.
    for a in P.SPEC_TYPES:
        out.append((f"convert:{a.mlir}->*", a.mlir))
    out.append(("bitcast:complex<f64>->complex<f32>", "complex<f64>"))
    out.append(("bitcast:complex<f32>->complex<f64>", "complex<f32>"))
    params = []
    for op, t in out:
        marks = []
        what = _match({(k[0], k[1]): k[2] for k in NOT_YET}, op, t)
        if what and not _refused(op, t):
            marks.append(pytest.mark.xfail(strict=True, raises=NotImplementedOnStableRT, reason=f"{what} not implemented yet"))
        wrong = KNOWN_WRONG.get((op, t))
        if wrong:
            marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason="known wrong result: " + wrong))
        params.append(pytest.param(op, t, id=f"{op}-{t}", marks=marks))
    return params


def _run_stablert(op, t, prog):
    try:
        return P.run_program(prog.text, prog.args, "stablert")
    except jax.errors.JaxRuntimeError as error:
        if str(error).startswith("UNIMPLEMENTED"):
            raise Unimplemented(str(error).split("\n")[0]) from None
        raise


@pytest.mark.parametrize("op,type_name", _params())
def test_spec_type(op, type_name):
    t = P.BY_MLIR[type_name]
    if (op, type_name) in ELSEWHERE:
        pytest.skip("compared in " + ELSEWHERE[(op, type_name)])
    if op == "power" and t.kind in P.INTEGER:
        prog = power_in_range(t)
    else:
        prog = _builder(op)(t)
    STATS["programs"] += 1
    STATS["ops"].add(op.split(":")[0])
    STATS["dtypes"].add(t.name)
    STATS["op_dtypes"].add((op, t.name))
    if _refused(op, type_name):
        # XLA refuses (or aborts on) the program; StableRT must refuse it by name.
        with pytest.raises(jax.errors.JaxRuntimeError) as error:
            P.run_program(prog.text, prog.args, "stablert")
        text = str(error.value).split("\n")[0]
        names = {op.split(":")[0], "stablehlo." + op.split(":")[0], type_name}
        if op.startswith("bitcast:"):
            names |= set(op.split(":")[1].split("->")) | {"bitcast_convert"}
        assert any(n in text for n in names), text
        return
    got = _run_stablert(op, type_name, prog)
    reason = _match(NUMPY_REFERENCE, op, type_name)
    if reason is not None or op.startswith("bitcast:") and ("i1" in op.split(":")[1].split("->")):
        expected = _reference(op, t, prog)
    else:
        expected = P.run_program(prog.text, prog.args, "cpu")
    assert len(got) == len(expected)
    problems = []
    for i, (g, e) in enumerate(zip(got, expected)):
        STATS["elements"] += int(np.asarray(e).size)
        exact = any(fnmatch.fnmatchcase(op, pattern) for pattern in EXACT)
        m = _compare_leaf(op, f"[{i}]", np.asarray(g), np.asarray(e), "exact" if exact else "auto", None, None,
                          False, None, None)
        if m is not None:
            problems.append(m.message)
    assert not problems, f"WRONG RESULT on stablert for {op} [{type_name}]:\n" + "\n".join(problems) + \
        "\nprogram:\n" + prog.text



# bitcast_convert between a complex and a non-complex type, at equal widths and across them:
# the specification's C2 ("if is_complex(operand) or is_complex(result), then
# is_complex(operand) and is_complex(result)") forbids them. Through JAX's client, jaxlib
# parses MLIR text itself and refuses these programs for every backend ("cannot convert between
# real and complex types", XLA's StableHLO verifier), so that is XLA's behaviour here; StableRT
# must refuse them as well when a host hands it the text unchanged (the `stablert` CLI, as
# test_mlir_text.py runs it): at compile time, INVALID_ARGUMENT naming the op and the rule.
MIXED_COMPLEX_BITCASTS = [
    ("complex<f32>", "f64"), ("f64", "complex<f32>"), ("complex<f32>", "i64"), ("ui64", "complex<f32>"),
    ("complex<f64>", "f64"), ("f32", "complex<f64>"), ("complex<f32>", "f16"), ("complex<f64>", "i1"),
]


@pytest.mark.parametrize("src,dst", MIXED_COMPLEX_BITCASTS, ids=[f"{a}->{b}" for a, b in MIXED_COMPLEX_BITCASTS])
def test_bitcast_between_complex_and_real_is_refused(src, dst, tmp_path):
    import stablert
    from cli_runner import run_cli

    prog = P.bitcast(P.BY_MLIR[src], P.BY_MLIR[dst])
    with pytest.raises(jax.errors.JaxRuntimeError) as xla:
        P.compile_program(prog.text, "cpu")
    assert "cannot convert between real and complex types" in str(xla.value), str(xla.value)
    (tmp_path / "bitcast.mlir").write_text(prog.text)
    result = run_cli("run", stablert.library_path(), str(tmp_path / "bitcast.mlir"), "--inputs", "zeros")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "INVALID_ARGUMENT" in result.stderr, result.stderr
    assert "stablehlo.bitcast_convert" in result.stderr, result.stderr
    assert "expected both element types complex or neither (specification C2" in result.stderr, result.stderr
