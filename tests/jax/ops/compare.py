"""Runs a program through jax.jit on StableRT and on JAX's CPU backend and compares the results.

Comparison rules (DESIGN.md §4):
- integer, boolean and unsigned results, and every result of a data-movement op: bitwise equal;
- floating-point and complex results: within JAX's own test-suite tolerances, i.e. the per-dtype
  table of `jax._src.public_test_util.default_tolerance()` (which `jax._src.test_util` re-exports),
  used as both atol and rtol like `JaxTestCase.assertAllClose`; NaN positions must agree, and
  infinities must agree in position and sign.

A program StableRT cannot compile yet raises `Unimplemented` (the plugin returned UNIMPLEMENTED
at compile time) or `NoLowering` (JAX has no lowering rule for the `stablert` platform). Both derive
from `NotImplementedOnStableRT`, the only exception the xfail marks of not_yet.py accept, so a
wrong result (AssertionError) or any other error is always a failure.

Many sub-cases ("cases": scalar, zero-size, special values, ...) go into one program so that each
test costs one compilation per backend.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import dtypes as jax_dtypes
from jax._src import public_test_util

__all__ = ["Call", "NotImplementedOnStableRT", "StableRTError", "Unimplemented", "NoLowering", "check", "check_cases",
           "run_on", "stablert", "cpu", "STATS", "dtype_name"]


class NotImplementedOnStableRT(Exception):
    """StableRT cannot run this program yet (as opposed to running it wrong)."""


class Unimplemented(NotImplementedOnStableRT):
    """StableRT returned UNIMPLEMENTED when compiling the program."""


class NoLowering(NotImplementedOnStableRT):
    """JAX has no lowering rule for a primitive on the `stablert` platform."""


class StableRTError(AssertionError):
    """StableRT raised an error other than UNIMPLEMENTED for a program XLA runs (no wrong number)."""


def stablert():
    return jax.devices("stablert")[0]


def cpu():
    return jax.devices("cpu")[0]


# Counters for the run summary (tests/jax/ops/conftest.py prints them).
STATS = {"programs": 0, "cases": 0, "elements": 0, "ops": set(), "dtypes": set(), "op_dtypes": set()}


def dtype_name(dtype) -> str:
    return np.dtype(dtype).name


_CUSTOM_FLOATS = {np.dtype(getattr(jnp, n)) for n in (
    "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
    "float8_e5m2fnuz", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float4_e2m1fn") if hasattr(jnp, n)}


def is_float(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype in _CUSTOM_FLOATS or np.issubdtype(dtype, np.floating)


def is_complex(dtype) -> bool:
    return np.issubdtype(np.dtype(dtype), np.complexfloating)


def is_inexact(dtype) -> bool:
    return is_float(dtype) or is_complex(dtype)


_SUB_BYTE = ("int4", "uint4", "int2", "uint2", "float4_e2m1fn")

_HINT = " [StableRT cannot compile this program yet: list the case in tests/jax/ops/not_yet.py]"


def _lower_and_compile(fn, args, device, static_argnums):
    __tracebackhide__ = True
    with jax.default_device(device):
        placed = [a if i in static_argnums else jax.device_put(a, device) for i, a in enumerate(args)]
        try:
            lowered = jax.jit(fn, static_argnums=static_argnums).lower(*placed)
        except NotImplementedError as error:
            if device.platform == "stablert" and "not found for platform" in str(error):
                raise NoLowering(str(error) + _HINT) from None
            raise
        try:
            compiled = lowered.compile()
        except Exception as error:  # JaxRuntimeError
            if device.platform == "stablert" and str(error).startswith("UNIMPLEMENTED"):
                raise Unimplemented(str(error).split("\n")[0] + _HINT) from None
            raise
    dynamic = [a for i, a in enumerate(placed) if i not in static_argnums]
    return compiled, dynamic


def run_on(device, fn, *args, static_argnums=()):
    """jit(fn)(*args) on `device`; returns the outputs as a pytree of numpy arrays."""
    __tracebackhide__ = True
    compiled, dynamic = _lower_and_compile(fn, args, device, tuple(static_argnums))
    if any(getattr(a, "dtype", None) is not None and a.dtype.name in _SUB_BYTE for a in dynamic):
        # jax 0.10.2: a compiled executable's input layouts for sub-byte types carry
        # sub_byte_element_size_in_bits=4 on the CPU backend while device_put arrays carry 0,
        # so calling the AOT executable fails on XLA:CPU itself; jit's own call path works.
        with jax.default_device(device):
            out = jax.jit(fn, static_argnums=tuple(static_argnums))(*[
                a if i in static_argnums else jax.device_put(a, device) for i, a in enumerate(args)])
    else:
        out = compiled(*dynamic)
    out = jax.block_until_ready(out)
    for leaf in jax.tree.leaves(out):
        if hasattr(leaf, "devices"):
            assert leaf.devices() == {device}, f"result on {leaf.devices()}, expected {device}"
    return jax.tree.map(np.asarray, out)


# ----------------------------------------------------------------------------------------------
# Comparison


def _tolerance(dtype, tol):
    """JAX's per-dtype default tolerance (jax._src.public_test_util), optionally overridden."""
    dtype = np.dtype(dtype)
    if tol is None:
        return public_test_util.tolerance(dtype)
    if isinstance(tol, dict):
        return public_test_util.tolerance(dtype, tol)
    return tol


def _as_float64(x):
    x = np.asarray(x)
    if x.dtype in _CUSTOM_FLOATS or x.dtype == np.float16:
        return x.astype(np.float64)
    return x


def _bits(x):
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return x.view(np.uint8)
    if x.dtype.itemsize in (1, 2, 4, 8) and x.dtype.kind != "c":
        return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])
    if x.dtype.kind == "c":
        return _bits(x.real.copy()), _bits(x.imag.copy())
    return x.astype(np.int16)  # int4/uint4/int2: compare values


def _mismatch_mask(got, expected, mode, tol):
    """Boolean mask of the elements that disagree (same shape as the arrays)."""
    dtype = expected.dtype
    if mode == "exact" or not is_inexact(dtype):
        if is_inexact(dtype):
            g, e = _bits(got), _bits(expected)
            if isinstance(g, tuple):
                mask = (g[0] != e[0]) | (g[1] != e[1])
            else:
                mask = g != e
            both_nan = np.isnan(_as_float64(got)) & np.isnan(_as_float64(expected))
            return mask & ~both_nan  # NaN payloads are not compared
        if dtype.name in ("int4", "uint4", "int2", "uint2"):
            return got.astype(np.int16) != expected.astype(np.int16)
        return _bits(got) != _bits(expected)
    atol = _tolerance(dtype, tol)
    rtol = atol
    g, e = _as_float64(got), _as_float64(expected)
    with np.errstate(invalid="ignore", over="ignore"):
        if is_complex(dtype):
            ok = (np.isclose(g.real, e.real, rtol=rtol, atol=atol, equal_nan=True)
                  & np.isclose(g.imag, e.imag, rtol=rtol, atol=atol, equal_nan=True))
            # Like numpy.testing.assert_allclose on complex: |got - expected| <= atol + rtol |expected|.
            finite = np.isfinite(g) & np.isfinite(e)
            close = np.abs(g - e) <= atol + rtol * np.abs(e)
            ok = np.where(finite, close, ok)
        else:
            ok = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    return ~ok


def _fmt_scalar(x) -> str:
    x = np.asarray(x)
    name = x.dtype.name
    v = x.item() if x.dtype not in _CUSTOM_FLOATS and x.dtype.name not in ("int4", "uint4", "int2") else (
        float(x) if is_float(x.dtype) else int(x))
    if isinstance(v, float):
        if math.isnan(v):
            text = "nan"
        elif math.isinf(v):
            text = "inf" if v > 0 else "-inf"
        else:
            text = repr(v)
    elif isinstance(v, complex):
        text = repr(v)
    else:
        text = repr(v)
    mod = "np" if hasattr(np, name) else "jnp"
    if text in ("nan", "inf", "-inf"):
        text = f"float('{text}')"
    return f"{mod}.{name}({text})"


def _fmt_array(x, limit=24) -> str:
    x = np.asarray(x)
    if x.ndim == 0:
        return _fmt_scalar(x)
    mod = "np" if hasattr(np, x.dtype.name) else "jnp"
    if x.size <= limit:
        with np.printoptions(threshold=limit, floatmode="unique", linewidth=10_000):
            body = np.array2string(_as_float64(x) if x.dtype in _CUSTOM_FLOATS else x, separator=", ")
        return f"np.array({body}, {mod}.{x.dtype.name})"
    return f"<{x.dtype.name}{list(x.shape)}>"


@dataclasses.dataclass
class Mismatch:
    case: str
    output: str
    message: str


def _compare_leaf(case, path, got, expected, mode, tol, args, elementwise, expr, arg_names) -> Mismatch | None:
    where = f"output {path}" if path else "output"
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return Mismatch(case, where, f"{where}: got {got.dtype}{list(got.shape)}, "
                                     f"expected {expected.dtype}{list(expected.shape)}")
    if got.size == 0:
        return None
    mask = np.asarray(_mismatch_mask(got, expected, mode, tol))
    if not mask.any():
        return None
    bad = np.argwhere(mask) if mask.ndim else np.zeros((1, 0), int)
    n_bad = int(mask.sum())
    lines = [f"{where} ({got.dtype}{list(got.shape)}): {n_bad} of {got.size} elements differ"
             + ("" if mode == "exact" or not is_inexact(got.dtype)
                else f" beyond tolerance {_tolerance(got.dtype, tol):g}")]
    for idx in bad[:4]:
        idx = tuple(int(i) for i in idx)
        g, e = got[idx], expected[idx]
        if elementwise and args is not None:
            scalars = []
            for a in args:
                a = np.asarray(a)
                scalars.append(a[tuple(i if n > 1 else 0 for i, n in zip(idx[len(idx) - a.ndim:], a.shape))]
                               if a.ndim else a)
            call = expr.format(*[_fmt_scalar(s) for s in scalars]) if expr else ", ".join(map(_fmt_scalar, scalars))
            lines.append(f"  REPRO {call}  # expected {_fmt_scalar(e)} (cpu), got {_fmt_scalar(g)} (stablert)")
        else:
            lines.append(f"  at {list(idx)}: expected {_fmt_scalar(e)} (cpu), got {_fmt_scalar(g)} (stablert)")
    if not elementwise and args is not None:
        rendered = ", ".join(_fmt_array(a) for a in args)
        call = expr.format(*[_fmt_array(a) for a in args]) if expr else f"args: {rendered}"
        lines.append(f"  REPRO {call}")
        if got.size <= 24:
            lines.append(f"    expected {_fmt_array(expected)}\n    got      {_fmt_array(got)}")
    return Mismatch(case, where, "\n".join(lines))


def _flatten_with_paths(tree):
    leaves, _ = jax.tree_util.tree_flatten_with_path(tree)
    return [(jax.tree_util.keystr(p), np.asarray(v)) for p, v in leaves]


class Call:
    """A case with its own function: Call(fn, *args) in a cases dict runs fn(*args)."""

    def __init__(self, fn, *args, expr: str | None = None):
        self.fn, self.args, self.expr = fn, tuple(args), expr

    def __len__(self):
        return len(self.args)

    def __iter__(self):
        return iter(self.args)


def _program(fns, static, arity):
    def program(*flat_args):
        outs, k = [], 0
        for fn, n in zip(fns, arity):
            outs.append(fn(*static, *flat_args[k:k + n]))
            k += n
        return tuple(outs)
    return program


def _stablert_error(error) -> bool:
    """An error StableRT raised for a program (as opposed to a bug in the test itself)."""
    return isinstance(error, (NotImplementedOnStableRT, jax.errors.JaxRuntimeError))


def _compare_case(name, args, g_tree, e_tree, mode, tol, elementwise, expr):
    g_leaves, e_leaves = _flatten_with_paths(g_tree), _flatten_with_paths(e_tree)
    if len(g_leaves) != len(e_leaves):
        return [Mismatch(name, "", f"{len(g_leaves)} outputs, expected {len(e_leaves)}")]
    out = []
    for (path, g), (_, e) in zip(g_leaves, e_leaves):
        STATS["elements"] += int(e.size)
        leaf_mode = mode
        if mode == "auto":
            leaf_mode = "close" if is_inexact(e.dtype) else "exact"
        m = _compare_leaf(name, path, g, e, leaf_mode, tol, [np.asarray(a) for a in args],
                          elementwise, expr, None)
        if m is not None:
            out.append(m)
    return out


def check_cases(fn: Callable, cases: dict[str, Sequence[Any]] | Sequence[Sequence[Any]], *,
                op: str = "", dtype=None, mode: str = "auto", tol=None, elementwise: bool = False,
                expr: str | None = None, static: Sequence[Any] = ()) -> None:
    """Runs fn(*args) for every case in one program on both backends and compares.

    cases: {case name: tuple of array arguments}. `static` are extra leading Python arguments
    passed to fn before the arrays. mode: "auto" (exact for non-float results, tolerance for
    floats), "exact" (bitwise for everything, NaN payloads excepted) or "close".
    elementwise: the op is elementwise, so a mismatch is reported with the scalar inputs at its
    index as a one-line reproducer `expr.format(*inputs)`.

    If StableRT cannot compile or run the batched program, every case is run on its own, so
    that the cases it can run are still compared: wrong results fail first, then errors, and
    only if every runnable case is right and the rest are not implemented yet does this raise
    NotImplementedOnStableRT (the one outcome not_yet.py may expect).
    """
    __tracebackhide__ = True
    if not isinstance(cases, dict):
        cases = {f"case{i}": c for i, c in enumerate(cases)}
    names = list(cases)
    fns = {n: (c.fn if isinstance(c, Call) else fn) for n, c in cases.items()}
    exprs = {n: (c.expr if isinstance(c, Call) and c.expr else expr) for n, c in cases.items()}
    STATS["programs"] += 1
    STATS["cases"] += len(names)
    if op:
        STATS["ops"].add(op)
        if dtype is not None:
            STATS["dtypes"].add(dtype_name(dtype))
            STATS["op_dtypes"].add((op, dtype_name(dtype)))

    def flat_of(ns):
        return [a if isinstance(a, jax.Array) else np.asarray(a) for n in ns for a in cases[n]]

    problems: list[Mismatch] = []
    errors: dict[str, Exception] = {}
    # StableRT first: a program it cannot compile yet costs no XLA compilation.
    try:
        got = run_on(stablert(), _program([fns[n] for n in names], static, [len(cases[n]) for n in names]),
                     *flat_of(names))
    except Exception as error:
        if not _stablert_error(error):
            raise
        got = None
    if got is not None:
        expected = run_on(cpu(), _program([fns[n] for n in names], static, [len(cases[n]) for n in names]),
                          *flat_of(names))
        for name, g, e in zip(names, got, expected):
            problems += _compare_case(name, cases[name], g, e, mode, tol, elementwise, exprs[name])
    else:
        for name in names:
            prog = _program([fns[name]], static, [len(cases[name])])
            try:
                (g,) = run_on(stablert(), prog, *flat_of([name]))
            except Exception as error:
                if not _stablert_error(error):
                    raise
                errors[name] = error
                continue
            (e,) = run_on(cpu(), prog, *flat_of([name]))
            problems += _compare_case(name, cases[name], g, e, mode, tol, elementwise, exprs[name])

    head = f"{op or getattr(fn, '__name__', 'program')}" + (f" [{dtype_name(dtype)}]" if dtype is not None else "")
    failed_cases = [n for n, e in errors.items() if not isinstance(e, NotImplementedOnStableRT)]
    if problems:
        text = "\n".join(f"case {p.case!r}: {p.message}" for p in problems)
        if errors:
            text += "\n" + "\n".join(f"case {n!r}: {type(e).__name__}: {str(e).splitlines()[0]}"
                                      for n, e in errors.items())
        raise AssertionError(f"WRONG RESULT on stablert for {head}:\n{text}")
    if failed_cases:
        text = "\n".join(f"case {n!r}: {type(errors[n]).__name__}: {str(errors[n]).splitlines()[0]}"
                         for n in failed_cases)
        ok = [n for n in names if n not in errors]
        raise StableRTError(f"ERROR on stablert for {head} (cases that ran are right: {ok}):\n{text}")
    if errors:
        first = next(iter(errors.values()))
        ok = [n for n in names if n not in errors]
        raise type(first)(f"{first} (cases {list(errors)}; cases that ran are right: {ok})")


def check(fn: Callable, *args, **kwargs) -> None:
    """check_cases with a single case."""
    check_cases(fn, {"case": args}, **kwargs)
