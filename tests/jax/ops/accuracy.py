"""Accuracy of long float sums: StableRT against XLA's CPU backend AND against an extended-precision
reference.

`check_accuracy(fn, args, reference)` runs jit(fn)(*args) once on each backend (one compile each),
computes `reference(*args)` in numpy's long double (64-bit mantissa on x86-64), and asserts for
every output element:
- StableRT is within JAX's tolerance of XLA's result (the op matrix's comparison rule), unless
  its error is at most XLA's or 2 u sum |x| (XLA's own long sums over several dimensions can be
  further than JAX's f32 tolerance from the exact value, and cancelling sums are relatively far
  from both);
- StableRT's error against the reference is at most max(2 x XLA's error, `ulps` ulps of the exact
  result in the output dtype, 2 u sum |x| with u the dtype's unit roundoff) where `magnitude`
  gives sum |x| per output: StableRT is about as accurate as XLA. (Where values cancel, both
  errors are about u sum |x| and which one is smaller is chance; a running sum's error grows as
  n u sum |x| (typically sqrt(n) u sum |x|), pairwise summation's bound is log2(n) u sum |x|.)

References: `lsum` sums in long double over contiguous axes, where numpy sums pairwise (its
sequential loop over outer axes would lose f64 accuracy at 16M elements).
"""
from __future__ import annotations

import numpy as np
from jax._src import public_test_util

from .compare import STATS, cpu, run_on, stablert

LD = np.longdouble


def ld(x):
    """x in long double (complex: clongdouble), for references."""
    x = np.asarray(x)
    return x.astype(np.clongdouble if x.dtype.kind == "c" else LD)


def lsum(x, axes=None):
    """sum of x over `axes` (all if None) in long double, pairwise (numpy's contiguous reduction)."""
    x = ld(x)
    if axes is None:
        return x.reshape(-1).sum()
    axes = tuple(a % x.ndim for a in axes)
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = np.ascontiguousarray(np.transpose(x, kept + list(axes)))
    return moved.reshape([x.shape[a] for a in kept] + [-1]).sum(axis=-1)


def _ulp(exact, dtype):
    real = np.dtype(dtype).type(0).real.dtype
    with np.errstate(over="ignore"):
        return np.spacing(np.abs(exact).astype(real)).astype(LD)


def check_accuracy(fn, args, reference, *, op, dtype, magnitude=None, ulps=4, names=None):
    __tracebackhide__ = True
    dtype = np.dtype(dtype)
    got = run_on(stablert(), fn, *args)
    want = run_on(cpu(), fn, *args)
    exact = reference(*args)
    mags = magnitude(*args) if magnitude is not None else None
    got, want, exact = (tuple(v) if isinstance(v, (tuple, list)) else (v,) for v in (got, want, exact))
    if mags is None:
        mags = tuple(np.zeros_like(np.abs(e)) for e in exact)
    elif not isinstance(mags, (tuple, list)):
        mags = (mags,)
    names = names or [f"output {i}" for i in range(len(exact))]
    STATS["programs"] += 1
    STATS["cases"] += len(names)
    STATS["ops"].add(op)
    STATS["dtypes"].add(dtype.name)
    STATS["op_dtypes"].add((op, dtype.name))
    problems = []
    for name, g, w, e, m in zip(names, got, want, exact, mags):
        g, w, e, m = np.asarray(g), np.asarray(w), np.asarray(e), np.asarray(m)
        STATS["elements"] += int(g.size)
        assert g.shape == w.shape == e.shape, f"{name}: shapes {g.shape} {w.shape} {e.shape}"
        tol = public_test_util.tolerance(g.dtype)
        close = np.abs(g.astype(np.complex128) - w.astype(np.complex128)) <= tol + tol * np.abs(w.astype(np.complex128))
        err_s = np.abs(ld(g) - e)
        err_x = np.abs(ld(w) - e)
        unit_roundoff = LD(np.finfo(g.dtype).eps) / 2
        close = close | (err_s <= np.maximum(err_x, 2 * unit_roundoff * ld(m)))
        bound = np.maximum(np.maximum(2 * err_x, ulps * _ulp(e, g.dtype)), 2 * unit_roundoff * ld(m))
        for label, ok in (("not within JAX's tolerance of XLA", close), ("less accurate than XLA", err_s <= bound)):
            if not np.all(ok):
                i = np.unravel_index(int(np.argmin(ok)), ok.shape) if ok.ndim else ()
                problems.append(f"{name} {label} at {list(i)}: stablert {g[i]!r}, xla {w[i]!r}, exact {e[i]!r} "
                                f"(errors {float(np.abs(err_s[i])):.3g} vs {float(np.abs(err_x[i])):.3g})")
    assert not problems, f"WRONG RESULT on stablert for {op} [{dtype.name}]:\n" + "\n".join(problems)
    return got, want
