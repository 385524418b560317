"""StableHLO programs as MLIR text for every op and every element type the StableHLO
specification allows (openxla/stablehlo docs/spec.md, "Types" and each op's "Inputs"), run on
StableRT and on XLA's CPU backend through the client's compile path (MLIR text is what
`backend.compile_and_load` takes), for the element types JAX itself does not emit for an op.

`SPEC_TYPES` is the element-type universe, `OPS` the table: op -> (the element-type classes
the specification allows, a builder `(ElementType) -> Program`). `run_program` compiles and
runs a program on one platform; `check_program` compares StableRT with XLA with JAX's
tolerances (compare.py).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax._src import xla_bridge
from jax._src.lib import _jax as xc

from . import inputs as I


@dataclasses.dataclass(frozen=True)
class ElementType:
    mlir: str          # StableHLO spelling: i1, i8, ui8, f8E4M3FN, complex<f32>, ...
    dtype: np.dtype
    kind: str          # "bool", "sint", "uint", "float", "complex"

    @property
    def name(self) -> str:
        return np.dtype(self.dtype).name

    @property
    def bits(self) -> int:
        if self.kind == "bool":
            return 1
        if self.kind in ("sint", "uint"):
            return ml_dtypes.iinfo(self.dtype).bits
        if self.kind == "complex":
            return 8 * np.dtype(self.dtype).itemsize
        return ml_dtypes.finfo(self.dtype).bits


def _t(mlir, dtype, kind):
    return ElementType(mlir, np.dtype(dtype), kind)


SPEC_TYPES: list[ElementType] = [
    _t("i1", np.bool_, "bool"),
    _t("i2", jnp.int2, "sint"), _t("i4", jnp.int4, "sint"), _t("i8", np.int8, "sint"),
    _t("i16", np.int16, "sint"), _t("i32", np.int32, "sint"), _t("i64", np.int64, "sint"),
    _t("ui2", jnp.uint2, "uint"), _t("ui4", jnp.uint4, "uint"), _t("ui8", np.uint8, "uint"),
    _t("ui16", np.uint16, "uint"), _t("ui32", np.uint32, "uint"), _t("ui64", np.uint64, "uint"),
    _t("f4E2M1FN", jnp.float4_e2m1fn, "float"), _t("f6E2M3FN", jnp.float6_e2m3fn, "float"),
    _t("f6E3M2FN", jnp.float6_e3m2fn, "float"), _t("f8E3M4", jnp.float8_e3m4, "float"),
    _t("f8E4M3", jnp.float8_e4m3, "float"), _t("f8E4M3FN", jnp.float8_e4m3fn, "float"),
    _t("f8E4M3FNUZ", jnp.float8_e4m3fnuz, "float"), _t("f8E4M3B11FNUZ", jnp.float8_e4m3b11fnuz, "float"),
    _t("f8E5M2", jnp.float8_e5m2, "float"), _t("f8E5M2FNUZ", jnp.float8_e5m2fnuz, "float"),
    _t("f8E8M0FNU", jnp.float8_e8m0fnu, "float"), _t("bf16", jnp.bfloat16, "float"),
    _t("f16", np.float16, "float"), _t("f32", np.float32, "float"), _t("f64", np.float64, "float"),
    _t("complex<f32>", np.complex64, "complex"), _t("complex<f64>", np.complex128, "complex"),
]
BY_MLIR = {t.mlir: t for t in SPEC_TYPES}
BY_NAME = {t.name: t for t in SPEC_TYPES}

# Element-type classes of the specification's op inputs.
ALL = ("bool", "sint", "uint", "float", "complex")
NUMBER = ("sint", "uint", "float", "complex")           # integer, floating-point or complex
INTEGER = ("sint", "uint")
BOOL_INT = ("bool", "sint", "uint")
FLOAT = ("float",)
FLOAT_COMPLEX = ("float", "complex")
SIGNED = ("sint", "float", "complex")                  # abs, sign
REAL_NUMBER = ("sint", "uint", "float")                 # iota's spec allows complex too


@dataclasses.dataclass
class Program:
    text: str
    args: list           # numpy arrays, in argument order
    note: str = ""


def tensor(t: ElementType | str, shape=()) -> str:
    mlir = t.mlir if isinstance(t, ElementType) else t
    return f"tensor<{''.join(f'{d}x' for d in shape)}{mlir}>"


def module(args: list[str], results: list[str], body: list[str], extra_funcs: str = "") -> str:
    sig = ", ".join(f"%a{i}: {a}" for i, a in enumerate(args))
    res = ", ".join(results)
    lines = "\n    ".join(body)
    return (f"module @spec_types {{\n{extra_funcs}"
            f"  func.func public @main({sig}) -> ({res}) {{\n    {lines}\n  }}\n}}\n")


def zero_literal(t: ElementType) -> str:
    return {"bool": "false", "sint": "0", "uint": "0", "float": "0.000000e+00",
            "complex": "(0.000000e+00,0.000000e+00)"}[t.kind]


def one_literal(t: ElementType) -> str:
    return {"bool": "true", "sint": "1", "uint": "1", "float": "1.000000e+00",
            "complex": "(1.000000e+00,0.000000e+00)"}[t.kind]


# ------------------------------------------------------------------------------------------------
# Inputs


def values(t: ElementType, shape, seed=0, *, positive=False, small=False) -> np.ndarray:
    """Random values of the type; float types other than f8E8M0FNU include negatives; small:
    integers in a range where sums and products of a few do not overflow (or wrap the same
    way on every backend)."""
    r = np.random.default_rng(seed)
    if t.kind == "bool":
        return r.integers(0, 2, shape).astype(np.bool_)
    if t.kind in INTEGER:
        ii = ml_dtypes.iinfo(t.dtype)
        lo, hi = (ii.min, ii.max) if not small else (max(ii.min, -3), min(ii.max, 3))
        if positive:
            lo = max(lo, 0)
        return r.integers(lo, hi, shape, endpoint=True, dtype=np.int64 if t.kind == "sint" or hi < 2**63
                          else np.uint64).astype(t.dtype)
    if t.kind == "complex":
        out = np.empty(shape, t.dtype)
        out.real = r.standard_normal(shape) * 2
        out.imag = r.standard_normal(shape) * 2
        return out
    v = r.standard_normal(shape) * 2
    if positive or t.mlir == "f8E8M0FNU":
        v = np.abs(v) + 0.25
    return v.astype(t.dtype)


def specials(t: ElementType) -> np.ndarray:
    if t.kind in INTEGER:
        ii = ml_dtypes.iinfo(t.dtype)
        vals = sorted({v for v in (0, 1, 2, 3, 7, 31, 63, 64, ii.max, ii.max - 1, ii.min, ii.min + 1, -1, -2, -3, -8)
                       if ii.min <= v <= ii.max})
        return np.array(vals, object).astype(t.dtype) if t.dtype.itemsize < 8 else np.array(vals, t.dtype)
    if t.mlir == "f8E8M0FNU":
        return np.array([0.5, 1.0, 2.0, 4.0, 2.0 ** -127, 2.0 ** 127, np.nan], np.float64).astype(t.dtype)
    return I.specials(t.dtype)


# ------------------------------------------------------------------------------------------------
# Running


def compile_program(text: str, platform: str):
    """Compiles MLIR text on `platform` through the client's compile path (one device)."""
    backend = xla_bridge.get_backend(platform)
    device = jax.devices(platform)[0]
    return backend.compile_and_load(text, xc.DeviceList((device,)), xc.CompileOptions())


def run_program(text: str, args, platform: str):
    """Compiles MLIR text on `platform` through the client's compile path and runs it once."""
    device = jax.devices(platform)[0]
    executable = compile_program(text, platform)
    placed = [jax.device_put(a, device) for a in args]
    out = executable.execute(placed)
    return [np.asarray(o) for o in out]


# ------------------------------------------------------------------------------------------------
# Builders: (element type) -> Program


def _complex_part(t: ElementType) -> ElementType:
    return BY_MLIR["f32" if t.mlir == "complex<f32>" else "f64"]


def unary(op: str, *, result: Callable[[ElementType], ElementType] | None = None, positive=False):
    def build(t: ElementType) -> Program:
        r = result(t) if result else t
        x = specials(t) if not positive else values(t, (12,), 1, positive=True)
        if t.kind in INTEGER or t.kind == "bool" or positive:
            x = np.concatenate([x.ravel(), values(t, (8,), 2, positive=positive).ravel()]).astype(t.dtype)
        n = x.size
        body = [f'%0 = "stablehlo.{op}"(%a0) : ({tensor(t, (n,))}) -> {tensor(r, (n,))}',
                f"return %0 : {tensor(r, (n,))}"]
        return Program(module([tensor(t, (n,))], [tensor(r, (n,))], body), [x])
    return build


def binary(op: str, *, result: Callable[[ElementType], ElementType] | None = None, grid=True, rhs_positive=False):
    def build(t: ElementType) -> Program:
        r = result(t) if result else t
        if grid:
            s = specials(t)
            if rhs_positive:
                ii = ml_dtypes.iinfo(t.dtype)
                rs = np.array([v for v in range(0, min(int(ii.max), 9) + 1)], np.int64).astype(t.dtype)
            else:
                rs = s
            a, b = np.meshgrid(s, rs, indexing="ij")
            a, b = a.ravel().astype(t.dtype), b.ravel().astype(t.dtype)
        else:
            a, b = values(t, (24,), 3), values(t, (24,), 4, positive=rhs_positive)
        n = a.size
        body = [f'%0 = "stablehlo.{op}"(%a0, %a1) : ({tensor(t, (n,))}, {tensor(t, (n,))}) -> {tensor(r, (n,))}',
                f"return %0 : {tensor(r, (n,))}"]
        return Program(module([tensor(t, (n,))] * 2, [tensor(r, (n,))], body), [a, b])
    return build


def compare(direction: str):
    def build(t: ElementType) -> Program:
        kind = {"bool": "UNSIGNED", "uint": "UNSIGNED", "sint": "SIGNED", "float": "FLOAT", "complex": "FLOAT"}[t.kind]
        s = specials(t)
        a, b = np.meshgrid(s, s, indexing="ij")
        a, b = a.ravel().astype(t.dtype), b.ravel().astype(t.dtype)
        n = a.size
        body = [f"%0 = stablehlo.compare {direction}, %a0, %a1, {kind} : ({tensor(t, (n,))}, {tensor(t, (n,))}) -> "
                f"{tensor('i1', (n,))}", f"return %0 : {tensor('i1', (n,))}"]
        return Program(module([tensor(t, (n,))] * 2, [tensor("i1", (n,))], body), [a, b])
    return build


def select(t: ElementType) -> Program:
    p = values(BY_MLIR["i1"], (2, 3), 5)
    a, b = values(t, (2, 3), 6), values(t, (2, 3), 7)
    T = tensor(t, (2, 3))
    body = [f"%0 = stablehlo.select %a0, %a1, %a2 : {tensor('i1', (2, 3))}, {T}", f"return %0 : {T}"]
    return Program(module([tensor("i1", (2, 3)), T, T], [T], body), [p, a, b])


def clamp(t: ElementType) -> Program:
    lo, x, hi = values(t, (), 8), values(t, (2, 3), 9), values(t, (), 10)
    if t.kind != "complex":
        lo, hi = np.minimum(lo, hi).astype(t.dtype), np.maximum(lo, hi).astype(t.dtype)
    T, S = tensor(t, (2, 3)), tensor(t)
    body = [f"%0 = stablehlo.clamp %a0, %a1, %a2 : ({S}, {T}, {S}) -> {T}", f"return %0 : {T}"]
    return Program(module([S, T, S], [T], body), [lo, x, hi])


def data_movement(t: ElementType) -> Program:
    """broadcast_in_dim, reshape, transpose, reverse, slice, concatenate, pad, dynamic_slice,
    dynamic_update_slice in one program (all "tensor" types in the specification)."""
    x = values(t, (2, 3), 11)
    T, S = tensor(t, (2, 3)), tensor(t)
    z = zero_literal(t)
    body = [
        f"%b = stablehlo.broadcast_in_dim %a0, dims = [1, 2] : ({T}) -> {tensor(t, (2, 2, 3))}",
        f"%r = stablehlo.reshape %a0 : ({T}) -> {tensor(t, (3, 2))}",
        f"%t = stablehlo.transpose %a0, dims = [1, 0] : ({T}) -> {tensor(t, (3, 2))}",
        f"%v = stablehlo.reverse %a0, dims = [1] : {T}",
        f"%s = stablehlo.slice %a0 [0:2, 1:3] : ({T}) -> {tensor(t, (2, 2))}",
        f"%c = stablehlo.concatenate %a0, %v, dim = 1 : ({T}, {T}) -> {tensor(t, (2, 6))}",
        f"%pv = stablehlo.constant dense<{z}> : {S}",
        f"%p = stablehlo.pad %a0, %pv, low = [1, 0], high = [0, 2], interior = [1, 1] : ({T}, {S}) -> {tensor(t, (4, 7))}",
        "%i1 = stablehlo.constant dense<1> : tensor<i32>",
        "%i5 = stablehlo.constant dense<5> : tensor<i32>",
        f"%d = stablehlo.dynamic_slice %a0, %i1, %i5, sizes = [1, 2] : ({T}, tensor<i32>, tensor<i32>) -> {tensor(t, (1, 2))}",
        f"%u = stablehlo.dynamic_update_slice %a0, %d, %i1, %i1 : ({T}, {tensor(t, (1, 2))}, tensor<i32>, tensor<i32>) -> {T}",
        f"return %b, %r, %t, %v, %s, %c, %p, %d, %u : {tensor(t, (2, 2, 3))}, {tensor(t, (3, 2))}, "
        f"{tensor(t, (3, 2))}, {T}, {tensor(t, (2, 2))}, {tensor(t, (2, 6))}, {tensor(t, (4, 7))}, {tensor(t, (1, 2))}, {T}",
    ]
    results = [tensor(t, (2, 2, 3)), tensor(t, (3, 2)), tensor(t, (3, 2)), T, tensor(t, (2, 2)), tensor(t, (2, 6)),
               tensor(t, (4, 7)), tensor(t, (1, 2)), T]
    return Program(module([T], results, body), [x])


def iota(t: ElementType) -> Program:
    R = tensor(t, (3, 4))
    body = ["%0 = stablehlo.iota dim = 1 : " + R, f"return %0 : {R}"]
    return Program(module([], [R], body), [])


def constant(t: ElementType) -> Program:
    """A dense constant of the type (values written as the type's literals) and a splat."""
    R = tensor(t, (3,))
    lit = {"bool": "[true, false, true]", "sint": "[1, -1, 0]", "uint": "[1, 2, 0]",
           "float": "[1.000000e+00, 2.000000e+00, 5.000000e-01]",
           "complex": "[(1.000000e+00,2.000000e+00), (0.000000e+00,-1.000000e+00), (5.000000e-01,0.000000e+00)]"}[t.kind]
    if t.mlir == "ui2":
        lit = "[1, 3, 0]"
    body = [f"%0 = stablehlo.constant dense<{lit}> : {R}", f"%1 = stablehlo.constant dense<{one_literal(t)}> : {R}",
            f"return %0, %1 : {R}, {R}"]
    return Program(module([], [R, R], body), [])


def _body_func(name: str, op: str, t: ElementType) -> str:
    S = tensor(t)
    return (f"  func.func private @{name}(%x: {S}, %y: {S}) -> {S} {{\n"
            f"    %0 = stablehlo.{op} %x, %y : {S}\n    return %0 : {S}\n  }}\n")


def _combiner(t: ElementType) -> str:
    """An associative, exact combiner the type supports: add for numbers, or for booleans."""
    return "or" if t.kind == "bool" else ("maximum" if t.kind in ("float",) and t.bits <= 8 else "add")


def reduce(t: ElementType, *, call=False) -> Program:
    x = values(t, (3, 4), 12, small=True)
    T, S, R = tensor(t, (3, 4)), tensor(t), tensor(t, (3,))
    op = _combiner(t)
    z = zero_literal(t)
    if call:
        body = [f"%z = stablehlo.constant dense<{z}> : {S}",
                f"%0 = stablehlo.reduce(%a0 init: %z) across dimensions = [1] : ({T}, {S}) -> {R}",
                f" reducer(%p: {S}, %q: {S}) {{",
                f"  %c = func.call @combine(%p, %q) : ({S}, {S}) -> {S}",
                f"  stablehlo.return %c : {S}", " }",
                f"return %0 : {R}"]
        return Program(module([T], [R], body, _body_func("combine", op, t)), [x])
    body = [f"%z = stablehlo.constant dense<{z}> : {S}",
            f"%0 = stablehlo.reduce(%a0 init: %z) applies stablehlo.{op} across dimensions = [1] : ({T}, {S}) -> {R}",
            f"return %0 : {R}"]
    return Program(module([T], [R], body), [x])


def reduce_window(t: ElementType, *, call=False) -> Program:
    x = values(t, (4, 5), 13, small=True)
    T, S, R = tensor(t, (4, 5)), tensor(t), tensor(t, (3, 2))
    op = _combiner(t)
    inner = (f"  %c = func.call @combine(%p, %q) : ({S}, {S}) -> {S}" if call else f"  %c = stablehlo.{op} %p, %q : {S}")
    body = [f"%z = stablehlo.constant dense<{zero_literal(t)}> : {S}",
            f'%0 = "stablehlo.reduce_window"(%a0, %z) <{{window_dimensions = array<i64: 2, 3>, '
            f'window_strides = array<i64: 1, 2>, padding = dense<[[0, 0], [0, 1]]> : tensor<2x2xi64>}}> ({{',
            f"  ^bb0(%p: {S}, %q: {S}):", inner, f"  stablehlo.return %c : {S}",
            f"}}) : ({T}, {S}) -> {R}", f"return %0 : {R}"]
    return Program(module([T], [R], body, _body_func("combine", op, t) if call else ""), [x])


def _sort_key_compare(t: ElementType) -> tuple[str, str]:
    kind = {"bool": "UNSIGNED", "uint": "UNSIGNED", "sint": "SIGNED", "float": "TOTALORDER", "complex": "FLOAT"}[t.kind]
    return "LT", kind


def sort(t: ElementType, *, call=False) -> Program:
    x = values(t, (3, 6), 14)
    T, S = tensor(t, (3, 6)), tensor(t)
    direction, kind = _sort_key_compare(t)
    cmp = f"%c = stablehlo.compare {direction}, %p, %q, {kind} : ({S}, {S}) -> tensor<i1>"
    extra = ""
    if call:
        extra = (f"  func.func private @less(%x: {S}, %y: {S}) -> tensor<i1> {{\n"
                 f"    %0 = stablehlo.compare {direction}, %x, %y, {kind} : ({S}, {S}) -> tensor<i1>\n"
                 f"    return %0 : tensor<i1>\n  }}\n")
        cmp = f"%c = func.call @less(%p, %q) : ({S}, {S}) -> tensor<i1>"
    body = [f'%0 = "stablehlo.sort"(%a0) <{{dimension = 1 : i64, is_stable = true}}> ({{',
            f"  ^bb0(%p: {S}, %q: {S}):", f"  {cmp}", "  stablehlo.return %c : tensor<i1>",
            f"}}) : ({T}) -> {T}", f"return %0 : {T}"]
    return Program(module([T], [T], body, extra), [x])


def gather(t: ElementType) -> Program:
    x = values(t, (4, 3), 15)
    T, R = tensor(t, (4, 3)), tensor(t, (2, 3))
    idx = np.array([[2], [0]], np.int32)
    body = [f'%0 = "stablehlo.gather"(%a0, %a1) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1], '
            f'collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, '
            f'slice_sizes = array<i64: 1, 3>, indices_are_sorted = false}}> : ({T}, tensor<2x1xi32>) -> {R}',
            f"return %0 : {R}"]
    return Program(module([T, "tensor<2x1xi32>"], [R], body), [x, idx])


def scatter(t: ElementType, *, call=False) -> Program:
    x = values(t, (4, 3), 16, small=True)
    u = values(t, (3, 3), 17, small=True)
    idx = np.array([[2], [0], [2]], np.int32)
    T, U, S = tensor(t, (4, 3)), tensor(t, (3, 3)), tensor(t)
    op = _combiner(t)
    inner = (f"  %c = func.call @combine(%p, %q) : ({S}, {S}) -> {S}" if call else f"  %c = stablehlo.{op} %p, %q : {S}")
    body = [f'%0 = "stablehlo.scatter"(%a0, %a1, %a2) <{{scatter_dimension_numbers = #stablehlo.scatter<'
            f'update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], '
            f'index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false}}> ({{',
            f"  ^bb0(%p: {S}, %q: {S}):", inner, f"  stablehlo.return %c : {S}",
            f"}}) : ({T}, tensor<3x1xi32>, {U}) -> {T}", f"return %0 : {T}"]
    return Program(module([T, "tensor<3x1xi32>", U], [T], body, _body_func("combine", op, t) if call else ""),
                   [x, idx, u])


def select_and_scatter(t: ElementType, *, call=False) -> Program:
    x = values(t, (4, 4), 18)
    src = values(t, (2, 2), 19, small=True)
    T, SRC, S = tensor(t, (4, 4)), tensor(t, (2, 2)), tensor(t)
    direction, kind = _sort_key_compare(t)
    direction = "GE"
    op = _combiner(t)
    if call:
        extra = (f"  func.func private @ge(%x: {S}, %y: {S}) -> tensor<i1> {{\n"
                 f"    %0 = stablehlo.compare {direction}, %x, %y, {kind} : ({S}, {S}) -> tensor<i1>\n"
                 f"    return %0 : tensor<i1>\n  }}\n" + _body_func("combine", op, t))
        sel = f"  %c = func.call @ge(%p, %q) : ({S}, {S}) -> tensor<i1>"
        sca = f"  %d = func.call @combine(%p, %q) : ({S}, {S}) -> {S}"
    else:
        extra = ""
        sel = f"  %c = stablehlo.compare {direction}, %p, %q, {kind} : ({S}, {S}) -> tensor<i1>"
        sca = f"  %d = stablehlo.{op} %p, %q : {S}"
    body = [f"%z = stablehlo.constant dense<{zero_literal(t)}> : {S}",
            f'%0 = "stablehlo.select_and_scatter"(%a0, %a1, %z) <{{window_dimensions = array<i64: 2, 2>, '
            f'window_strides = array<i64: 2, 2>}}> ({{',
            f"  ^bb0(%p: {S}, %q: {S}):", sel, "  stablehlo.return %c : tensor<i1>",
            "}, {", f"  ^bb0(%p: {S}, %q: {S}):", sca, f"  stablehlo.return %d : {S}",
            f"}}) : ({T}, {SRC}, {S}) -> {T}", f"return %0 : {T}"]
    return Program(module([T, SRC], [T], body, extra), [x, src])


def map_op(t: ElementType) -> Program:
    a, b = values(t, (2, 3), 20, small=True), values(t, (2, 3), 21, small=True)
    T, S = tensor(t, (2, 3)), tensor(t)
    op = _combiner(t)
    body = [f'%0 = "stablehlo.map"(%a0, %a1) <{{dimensions = array<i64: 0, 1>}}> ({{',
            f"  ^bb0(%p: {S}, %q: {S}):", f"  %c = stablehlo.{op} %p, %q : {S}", f"  stablehlo.return %c : {S}",
            f"}}) : ({T}, {T}) -> {T}", f"return %0 : {T}"]
    return Program(module([T, T], [T], body), [a, b])


def map_call(t: ElementType) -> Program:
    """A map of three operands whose body calls a function and multiplies by a constant:
    combine(combine(p, q), r * 1)."""
    a, b, c = (values(t, (3, 2), seed, small=True) for seed in (27, 28, 29))
    T, S = tensor(t, (3, 2)), tensor(t)
    op = _combiner(t)
    body = [f'%0 = "stablehlo.map"(%a0, %a1, %a2) <{{dimensions = array<i64: 0, 1>}}> ({{',
            f"  ^bb0(%p: {S}, %q: {S}, %r: {S}):",
            f"  %c = func.call @combine(%p, %q) : ({S}, {S}) -> {S}",
            f"  %k = stablehlo.constant dense<{one_literal(t)}> : {S}",
            f"  %m = stablehlo.multiply %r, %k : {S}",
            f"  %d = stablehlo.{op} %c, %m : {S}",
            f"  stablehlo.return %d : {S}",
            f"}}) : ({T}, {T}, {T}) -> {T}", f"return %0 : {T}"]
    return Program(module([T, T, T], [T], body, _body_func("combine", op, t)), [a, b, c])


def map_loop(t: ElementType) -> Program:
    """A map whose body holds control flow (a case on p == p), which runs once per element:
    combine(p, q) where p equals itself, p where it is NaN."""
    a, b = values(t, (2, 3), 30, small=True), values(t, (2, 3), 31, small=True)
    T, S = tensor(t, (2, 3)), tensor(t)
    op = _combiner(t)
    kind = {"bool": "UNSIGNED", "uint": "UNSIGNED", "sint": "SIGNED", "float": "FLOAT", "complex": "FLOAT"}[t.kind]
    body = [f'%0 = "stablehlo.map"(%a0, %a1) <{{dimensions = array<i64: 0, 1>}}> ({{',
            f"  ^bb0(%p: {S}, %q: {S}):",
            f"  %e = stablehlo.compare EQ, %p, %p, {kind} : ({S}, {S}) -> tensor<i1>",
            "  %i = stablehlo.convert %e : (tensor<i1>) -> tensor<i32>",
            f'  %r = "stablehlo.case"(%i) ({{', f"    stablehlo.return %p : {S}", "  }, {",
            f"    %c = stablehlo.{op} %p, %q : {S}", f"    stablehlo.return %c : {S}",
            f"  }}) : (tensor<i32>) -> {S}",
            f"  stablehlo.return %r : {S}",
            f"}}) : ({T}, {T}) -> {T}", f"return %0 : {T}"]
    return Program(module([T, T], [T], body), [a, b])


def control_flow(t: ElementType) -> Program:
    """while (a counter and a value of the type carried), if and case selecting values."""
    x = values(t, (2, 3), 22)
    T = tensor(t, (2, 3))
    body = [
        "%c0 = stablehlo.constant dense<0> : tensor<i32>",
        "%c1 = stablehlo.constant dense<1> : tensor<i32>",
        "%c3 = stablehlo.constant dense<3> : tensor<i32>",
        f"%w:2 = stablehlo.while(%i = %c0, %v = %a0) : tensor<i32>, {T}",
        " cond {",
        "  %lt = stablehlo.compare LT, %i, %c3, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>",
        "  stablehlo.return %lt : tensor<i1>",
        " } do {",
        "  %n = stablehlo.add %i, %c1 : tensor<i32>",
        f"  %r = stablehlo.reverse %v, dims = [1] : {T}",
        f"  stablehlo.return %n, %r : tensor<i32>, {T}",
        " }",
        f'%k = "stablehlo.case"(%c1) ({{', f"  stablehlo.return %a0 : {T}", "}, {",
        f"  %r = stablehlo.reverse %a0, dims = [0] : {T}", f"  stablehlo.return %r : {T}",
        f"}}) : (tensor<i32>) -> {T}",
        f"return %w#1, %k : {T}, {T}",
    ]
    return Program(module([T], [T, T], body), [x])


def dot_general(t: ElementType, *, acc: ElementType | None = None) -> Program:
    a, b = values(t, (2, 3, 4), 23, small=True), values(t, (2, 4, 5), 24, small=True)
    r = acc or t
    A, B, R = tensor(t, (2, 3, 4)), tensor(t, (2, 4, 5)), tensor(r, (2, 3, 5))
    body = [f"%0 = stablehlo.dot_general %a0, %a1, batching_dims = [0] x [0], contracting_dims = [2] x [1] : "
            f"({A}, {B}) -> {R}", f"return %0 : {R}"]
    return Program(module([A, B], [R], body), [a, b])


def convolution(t: ElementType, *, acc: ElementType | None = None) -> Program:
    x, w = values(t, (1, 5, 5, 2), 25, small=True), values(t, (3, 3, 2, 3), 26, small=True)
    if t.kind == "bool":  # sparse, so that some outputs are false (the or of the ands is checked)
        x, w = x & values(t, (1, 5, 5, 2), 32), w & values(t, (3, 3, 2, 3), 33) & values(t, (3, 3, 2, 3), 34)
    r = acc or t
    X, W, R = tensor(t, (1, 5, 5, 2)), tensor(t, (3, 3, 2, 3)), tensor(r, (1, 3, 3, 3))
    body = [f"%0 = stablehlo.convolution(%a0, %a1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
            f"window = {{stride = [1, 1], pad = [[0, 0], [0, 0]], lhs_dilate = [1, 1], rhs_dilate = [1, 1]}} "
            f"{{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({X}, {W}) -> {R}",
            f"return %0 : {R}"]
    return Program(module([X, W], [R], body), [x, w])


def convert(src: ElementType, dst: ElementType) -> Program:
    x = specials(src) if src.kind != "bool" else np.array([False, True])
    x = np.concatenate([x.ravel(), values(src, (8,), 27).ravel()]).astype(src.dtype)
    n = x.size
    body = [f"%0 = stablehlo.convert %a0 : ({tensor(src, (n,))}) -> {tensor(dst, (n,))}",
            f"return %0 : {tensor(dst, (n,))}"]
    return Program(module([tensor(src, (n,))], [tensor(dst, (n,))], body), [x])


def bitcast_shapes(src: ElementType, dst: ElementType):
    """Operand and result shapes of a bitcast_convert between the two types (spec C1-C2: equal
    widths keep the shape; a narrower result adds a minor dimension of the width ratio, a wider
    one drops it)."""
    if src.bits == dst.bits:
        return (6,), (6,)
    if src.bits > dst.bits:
        return (3,), (3, src.bits // dst.bits)
    return (3, dst.bits // src.bits), (3,)


def bitcast(src: ElementType, dst: ElementType) -> Program:
    s_shape, d_shape = bitcast_shapes(src, dst)
    r = np.random.default_rng(28)
    # Every bit pattern of the source width is a valid value of the source type.
    raw = r.integers(0, 2 ** min(src.bits, 62), int(np.prod(s_shape)), dtype=np.int64)
    if src.kind == "bool":
        x = (raw & 1).astype(np.bool_)
    elif src.bits < 8:
        x = raw.astype(np.uint8).view(np.uint8)
        x = (x & ((1 << src.bits) - 1)).astype(np.uint8)
        x = _from_bits(x, src)
    else:
        width = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64, 128: np.uint64}[src.bits]
        if src.bits == 128:
            raw = r.integers(0, 2 ** 62, 2 * int(np.prod(s_shape)), dtype=np.int64)
        x = raw.astype(width).view(src.dtype)
    x = x.reshape(s_shape)
    body = [f"%0 = stablehlo.bitcast_convert %a0 : ({tensor(src, s_shape)}) -> {tensor(dst, d_shape)}",
            f"return %0 : {tensor(dst, d_shape)}"]
    return Program(module([tensor(src, s_shape)], [tensor(dst, d_shape)], body), [x])


def _from_bits(bits: np.ndarray, t: ElementType) -> np.ndarray:
    """Sub-byte values from their bit patterns (ml_dtypes stores them one per byte)."""
    if t.kind == "float":
        table = np.arange(256, dtype=np.uint8).view(np.uint8)
        # ml_dtypes' 4-/6-bit floats hold the pattern in the low bits of a byte
        return table[bits].view(t.dtype) if np.dtype(t.dtype).itemsize == 1 else bits.astype(t.dtype)
    if t.kind == "sint":
        v = bits.astype(np.int64)
        v = np.where(v >= (1 << (t.bits - 1)), v - (1 << t.bits), v)
        return v.astype(t.dtype)
    return bits.astype(t.dtype)


def _bool_result(t):
    return BY_MLIR["i1"]


def _real_part(t):
    return _complex_part(t) if t.kind == "complex" else t


def _to_complex(t):
    return BY_MLIR["complex<f32>" if t.mlir == "f32" else "complex<f64>"]


def _partial(fn, **kw):
    def build(t):
        return fn(t, **kw)
    return build


# op -> (element-type classes the specification allows for the op's operands, builder).
OPS: dict[str, tuple[tuple[str, ...], Callable[[ElementType], Program]]] = {
    "abs": (SIGNED, unary("abs", result=_real_part)),
    "cbrt": (FLOAT_COMPLEX, unary("cbrt")),
    "ceil": (FLOAT, unary("ceil")),
    "cosine": (FLOAT_COMPLEX, unary("cosine")),
    "count_leading_zeros": (INTEGER, unary("count_leading_zeros")),
    "exponential": (FLOAT_COMPLEX, unary("exponential")),
    "exponential_minus_one": (FLOAT_COMPLEX, unary("exponential_minus_one")),
    "floor": (FLOAT, unary("floor")),
    "imag": (FLOAT_COMPLEX, unary("imag", result=_real_part)),
    "is_finite": (FLOAT, unary("is_finite", result=_bool_result)),
    "log": (FLOAT_COMPLEX, unary("log")),
    "log_plus_one": (FLOAT_COMPLEX, unary("log_plus_one")),
    "logistic": (FLOAT_COMPLEX, unary("logistic")),
    "negate": (NUMBER, unary("negate")),
    "not": (BOOL_INT, unary("not")),
    "popcnt": (INTEGER, unary("popcnt")),
    "real": (FLOAT_COMPLEX, unary("real", result=_real_part)),
    "round_nearest_afz": (FLOAT, unary("round_nearest_afz")),
    "round_nearest_even": (FLOAT, unary("round_nearest_even")),
    "rsqrt": (FLOAT_COMPLEX, unary("rsqrt")),
    "sign": (SIGNED, unary("sign")),
    "sine": (FLOAT_COMPLEX, unary("sine")),
    "sqrt": (FLOAT_COMPLEX, unary("sqrt")),
    "tan": (FLOAT_COMPLEX, unary("tan")),
    "tanh": (FLOAT_COMPLEX, unary("tanh")),
    "add": (ALL, binary("add")),
    "subtract": (NUMBER, binary("subtract")),
    "multiply": (ALL, binary("multiply")),
    "divide": (NUMBER, binary("divide")),
    "remainder": (NUMBER, binary("remainder")),
    "power": (NUMBER, binary("power")),
    "maximum": (ALL, binary("maximum")),
    "minimum": (ALL, binary("minimum")),
    "atan2": (FLOAT_COMPLEX, binary("atan2")),
    "and": (BOOL_INT, binary("and")),
    "or": (BOOL_INT, binary("or")),
    "xor": (BOOL_INT, binary("xor")),
    "shift_left": (INTEGER, binary("shift_left")),
    "shift_right_arithmetic": (INTEGER, binary("shift_right_arithmetic")),
    "shift_right_logical": (INTEGER, binary("shift_right_logical")),
    "complex": (("float",), binary("complex", result=_to_complex)),
    "compare_eq": (ALL, compare("EQ")),
    "compare_lt": (ALL, compare("LT")),
    "select": (ALL, select),
    "clamp": (ALL, clamp),
    "data_movement": (ALL, data_movement),
    "constant": (ALL, constant),
    "iota": (NUMBER, iota),
    "reduce": (ALL, reduce),
    "reduce_call": (ALL, _partial(reduce, call=True)),
    "reduce_window": (ALL, reduce_window),
    "reduce_window_call": (ALL, _partial(reduce_window, call=True)),
    "sort": (ALL, sort),
    "sort_call": (ALL, _partial(sort, call=True)),
    "gather": (ALL, gather),
    "scatter": (ALL, scatter),
    "scatter_call": (ALL, _partial(scatter, call=True)),
    "select_and_scatter": (ALL, select_and_scatter),
    "select_and_scatter_call": (ALL, _partial(select_and_scatter, call=True)),
    "map": (ALL, map_op),
    "map_call": (ALL, map_call),
    "map_loop": (ALL, map_loop),
    "control_flow": (ALL, control_flow),
    "dot_general": (ALL, dot_general),
    "convolution": (ALL, convolution),
}


def allowed(op: str, t: ElementType) -> bool:
    kinds, _ = OPS[op]
    if op == "complex":
        return t.mlir in ("f32", "f64")
    return t.kind in kinds


# (op, element type) pairs that crash XLA's CPU backend (the process dies), so XLA cannot be asked.
XLA_CRASHES = {("remainder", "complex<f32>"), ("remainder", "complex<f64>")}
# Element types XLA's CPU backend has no buffers for (PJRT refuses them as arguments, and a
# constant of the type aborts the process).
XLA_NO_BUFFERS = {"f6E2M3FN", "f6E3M2FN"}


def convert_all(src: ElementType, targets: list[ElementType]) -> Program:
    """One program converting a vector of the source type to each target type."""
    x = specials(src) if src.kind != "bool" else np.array([False, True])
    x = np.concatenate([x.ravel(), values(src, (8,), 27).ravel()]).astype(src.dtype)
    n = x.size
    body = [f"%r{i} = stablehlo.convert %a0 : ({tensor(src, (n,))}) -> {tensor(d, (n,))}"
            for i, d in enumerate(targets)]
    body.append("return " + ", ".join(f"%r{i}" for i in range(len(targets))) + " : "
                + ", ".join(tensor(d, (n,)) for d in targets))
    return Program(module([tensor(src, (n,))], [tensor(d, (n,)) for d in targets], body), [x])


def bitcast_all(src: ElementType, targets: list[ElementType]) -> Program:
    """One program bitcasting one operand of the source type to each target type (the operand
    shaped for the narrowest or widest target as each needs: one program per target width)."""
    progs = [bitcast(src, d) for d in targets]
    args, body, results = [], [], []
    for i, (d, prog) in enumerate(zip(targets, progs)):
        s_shape, d_shape = bitcast_shapes(src, d)
        args.append(prog.args[0])
        body.append(f"%r{i} = stablehlo.bitcast_convert %a{i} : ({tensor(src, s_shape)}) -> {tensor(d, d_shape)}")
        results.append(tensor(d, d_shape))
    body.append("return " + ", ".join(f"%r{i}" for i in range(len(targets))) + " : " + ", ".join(results))
    return Program(module([tensor(src, bitcast_shapes(src, d)[0]) for d in targets], results, body), args)
