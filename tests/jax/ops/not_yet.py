"""The single table of op-matrix cases StableRT cannot run yet.

Each entry (op pattern, dtype pattern, what) marks every matching case of the matrix
`pytest.mark.xfail(strict=True, raises=NotImplementedOnStableRT, reason="<what> not implemented yet")`:

- the case is expected to fail *only* by StableRT refusing the program (UNIMPLEMENTED at compile
  time, or no JAX lowering rule for `stablert`); a wrong result or any other error still fails;
- strict: once the op lands the case passes, the XPASS fails the run, and the entry must be
  removed from this table.

Patterns are fnmatch globs over the case's op name (as in the test id, `<op>-<dtype>`) and dtype
name. Keep entries as narrow as the facts allow.
"""
from __future__ import annotations

import fnmatch

import numpy as np
import pytest

from .compare import NotImplementedOnStableRT

NOT_YET: list[tuple[str, str | tuple[str, ...], str]] = [
    # (op glob, dtype glob(s), what is not implemented). Conversions name their dtype "src->group".
    # element types
]


def reason_for(op: str, dtype: str) -> str | None:
    for op_glob, dtype_globs, what in NOT_YET:
        if isinstance(dtype_globs, str):
            dtype_globs = (dtype_globs,)
        if fnmatch.fnmatchcase(op, op_glob) and any(fnmatch.fnmatchcase(dtype, g) for g in dtype_globs):
            return f"{what} not implemented yet"
    return None


def marks(op: str, dtype: str = "") -> list:
    reason = reason_for(op, dtype)
    if reason is None:
        return []
    return [pytest.mark.xfail(strict=True, raises=NotImplementedOnStableRT, reason=reason)]


def _name(dtype) -> str:
    if dtype is None or dtype == "":
        return ""
    if isinstance(dtype, str):
        return dtype
    return np.dtype(dtype).name


def param(op: str, dtype=None, *values, id: str | None = None):
    """pytest.param(op, dtype, *values) with id `<op>-<dtype>[-<id>]` and the marks of this table."""
    d = _name(dtype)
    test_id = "-".join(p for p in (op, d, id) if p)
    return pytest.param(op, dtype, *values, id=test_id, marks=marks(op, d))
