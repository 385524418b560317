"""A small record for table-driven op families."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

from . import not_yet


@dataclasses.dataclass
class Op:
    fn: Callable
    dtypes: Sequence[Any]
    expr: str | None = None      # reproducer template, e.g. "lax.sin({})"
    mode: str = "auto"           # see compare.check_cases
    tol: Any = None              # per-dtype tolerance overrides, as in JAX's lax_test_util op_record
    low: float | None = None     # domain of the random case
    high: float | None = None
    cases: Callable | None = None  # dtype -> {case: args}, replaces the family's default


def params(table: dict[str, Op]):
    return [not_yet.param(op, dt) for op, spec in table.items() for dt in spec.dtypes]
