"""Linear algebra: cholesky, triangular_solve, lu, lu_pivots_to_permutation, qr,
householder_product, eigh, svd, eig, schur, hessenberg, tridiagonal, tridiagonal_solve and the
jnp.linalg functions built on them (inv, solve, det, slogdet, pinv), on well-conditioned matrices,
with batch dimensions, 1x1 and zero-size matrices.

Factors that are unique only up to signs or order are compared in a normalized form computed in
the same program: eigenvectors and singular vectors with their largest component made real
positive, Q/R with diag(R) >= 0, eigenvalues of eig sorted, Hessenberg/tridiagonal forms by
absolute value. Tolerance: JAX's linalg_test compares with 1e-3; float64 here is held to 1e-10."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax.lax import linalg as lx

from . import inputs as I
from . import not_yet
from .compare import Call, check_cases

DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)]
LINALG_TOL = {np.float32: 1e-3, np.complex64: 1e-3, np.float64: 1e-10, np.complex128: 1e-10}


def _mat(dt, shape, seed):
    """Well-conditioned: random + n*I."""
    n = shape[-1]
    a = I.random(dt, shape, seed, scale=1.0)
    return (a + n * np.eye(n, dtype=dt)).astype(dt)


def _spd(dt, shape, seed):
    a = I.random(dt, shape, seed, scale=1.0)
    n = shape[-1]
    ah = np.conj(np.swapaxes(a, -1, -2))
    return (a @ ah + n * np.eye(n, dtype=dt)).astype(dt)


def _sym(dt, shape, seed):
    a = I.random(dt, shape, seed, scale=1.0)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(dt)


def _phase_normalize(v, axis=-2):
    """Multiply each vector (along `axis`) by the conjugate phase of its largest component."""
    idx = jnp.argmax(jnp.abs(v), axis=axis, keepdims=True)
    big = jnp.take_along_axis(v, idx, axis=axis)
    phase = jnp.where(jnp.abs(big) == 0, 1, big / jnp.abs(big))
    return v * jnp.conj(phase)


def _qr_normalized(a, mode="reduced"):
    q, r = jnp.linalg.qr(a, mode=mode)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    s = jnp.where(jnp.abs(d) == 0, 1, d / jnp.abs(d))
    k = s.shape[-1]
    q = q.at[..., :k].multiply(s[..., None, :])
    r = r.at[..., :k, :].multiply(jnp.conj(s)[..., :, None])
    return q, r


def _eigh_normalized(a):
    w, v = jnp.linalg.eigh(a)
    return w, _phase_normalize(v)


def _svd_normalized(a):
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    idx = jnp.argmax(jnp.abs(u), axis=-2, keepdims=True)
    big = jnp.take_along_axis(u, idx, axis=-2)
    phase = jnp.where(jnp.abs(big) == 0, 1, big / jnp.abs(big))
    return u * jnp.conj(phase), s, vh * phase[..., 0, :, None]


def _eig_sorted(a):
    w = jnp.linalg.eigvals(a)
    order = jnp.lexsort((jnp.imag(w).round(4), jnp.real(w).round(4)), axis=-1)
    return jnp.take_along_axis(w, order, axis=-1)


def linalg_cases(op, dt):
    shapes = {"n4": (4, 4), "n7": (7, 7), "batch": (2, 3, 5, 5), "n1": (1, 1)}
    empty = {"n0": (0, 0), "batch0": (0, 3, 3)}
    fns = {
        "cholesky": (lambda a: lx.cholesky(a), _spd),
        "triangular_solve": (None, None),
        "lu": (lambda a: lx.lu(a), _mat),
        "qr": (_qr_normalized, _mat),
        "qr_complete_wide": (None, None),
        "householder_product": (None, None),
        "eigh": (_eigh_normalized, _sym),
        "svd": (_svd_normalized, _mat),
        "eig": (_eig_sorted, _mat),
        "schur": (lambda a: jnp.sort(jnp.real(jnp.diagonal(lx.schur(a)[0], axis1=-2, axis2=-1)), axis=-1), _sym),
        "hessenberg": (lambda a: jnp.abs(lx.hessenberg(a)[0].at[..., 1:, :].set(
            jnp.tril(jnp.triu(lx.hessenberg(a)[0], -1))[..., 1:, :])), _mat),
        "tridiagonal": (lambda a: tuple(jnp.abs(t) for t in lx.tridiagonal(a)[1:3]), _sym),
        "inv": (jnp.linalg.inv, _mat),
        "solve": (None, None),
        "det_slogdet": (lambda a: (jnp.linalg.det(a),) + tuple(jnp.linalg.slogdet(a)), _mat),
        "pinv": (jnp.linalg.pinv, _mat),
    }
    fn, make = fns[op]
    cases = {}
    if fn is not None:
        for i, (name, shape) in enumerate(shapes.items()):
            cases[name] = Call(fn, make(dt, shape, i))
        if op not in ("eig", "schur", "hessenberg", "tridiagonal", "pinv", "eigh", "svd"):
            for name, shape in empty.items():
                cases[name] = Call(fn, np.zeros(shape, dt))
        if op == "cholesky":
            # Not positive definite in some batch members: those become NaN (upper triangle 0).
            bad = _spd(dt, (3, 4, 4), 7)
            bad[1] -= 20 * np.eye(4, dtype=dt)
            bad[2, 0, 0] = 0
            cases["not_pd"] = Call(fn, bad)
            cases["upper"] = Call(lambda a: lx.cholesky(a, symmetrize_input=False), np.swapaxes(_spd(dt, (5, 5), 8), -1, -2).copy())
        if op == "lu":
            cases["tall"] = Call(fn, I.random(dt, (2, 6, 4), 9, scale=1.0))
            cases["wide"] = Call(fn, I.random(dt, (4, 6), 10, scale=1.0))
            cases["singular"] = Call(fn, np.ones((4, 4), dt))
        if op == "svd":
            cases["values_only_tall"] = Call(lambda a: jnp.linalg.svd(a, compute_uv=False), I.random(dt, (2, 6, 3), 11, scale=1.0))
            cases["values_only_wide"] = Call(lambda a: jnp.linalg.svd(a, compute_uv=False), I.random(dt, (3, 5), 12, scale=1.0))
        if op == "eigh":
            cases["upper"] = Call(lambda a: _phase_normalize(jnp.linalg.eigh(a, UPLO="U")[1]), _sym(dt, (5, 5), 13))
            cases["values_only"] = Call(jnp.linalg.eigvalsh, _sym(dt, (2, 6, 6), 14))
        return cases
    if op == "triangular_solve":
        a = np.tril(_mat(dt, (5, 5), 1))
        b = I.random(dt, (5, 3), 2, scale=1.0)
        bt = I.random(dt, (3, 5), 3, scale=1.0)
        ts = lambda **kw: (lambda a, b: lx.triangular_solve(a, b, **kw))
        return {
            "left_lower": Call(ts(left_side=True, lower=True), a, b),
            "left_upper_transpose": Call(ts(left_side=True, lower=False, transpose_a=True), np.swapaxes(a, 0, 1).copy(), b),
            "right_lower": Call(ts(left_side=False, lower=True), a, bt),
            "unit_diagonal": Call(ts(left_side=True, lower=True, unit_diagonal=True), a, b),
            "conjugate_a": Call(ts(left_side=True, lower=True, transpose_a=True, conjugate_a=True), a, b),
            "batch": Call(ts(left_side=True, lower=True), np.tril(_mat(dt, (2, 4, 4), 4)), I.random(dt, (2, 4, 2), 5)),
            "empty_rhs": Call(ts(left_side=True, lower=True), a, np.zeros((5, 0), dt)),
        }
    if op == "qr_complete_wide":
        return {
            "complete_tall": Call(lambda a: _qr_normalized(a, "complete"), I.random(dt, (6, 4), 1, scale=1.0)),
            "reduced_wide": Call(lambda a: _qr_normalized(a, "reduced"), I.random(dt, (3, 5), 2, scale=1.0)),
            "r_only": Call(lambda a: jnp.abs(jnp.linalg.qr(a, mode="r")), I.random(dt, (5, 3), 3, scale=1.0)),
        }
    if op == "householder_product":
        a = I.random(dt, (6, 4), 1, scale=1.0)
        taus = I.random(dt, (3,), 2, scale=0.5)
        return {
            "basic": Call(lx.householder_product, a, taus),
            "batch": Call(lx.householder_product, I.random(dt, (2, 5, 5), 3, scale=1.0), I.random(dt, (2, 4), 4, scale=0.5)),
            "pivots_to_permutation": Call(lambda p: lx.lu_pivots_to_permutation(p, 6),
                                          np.array([[2, 2, 5, 3, 4, 5], [0, 1, 2, 3, 4, 5]], np.int32)),
            "tridiagonal_solve": Call(lx.tridiagonal_solve, np.array([0, 1, 1, 1], dt), np.array([4, 4, 4, 4], dt),
                                      np.array([1, 1, 1, 0], dt), I.random(dt, (4, 2), 5, scale=1.0)),
        }
    if op == "solve":
        return {
            "vector_rhs": Call(jnp.linalg.solve, _mat(dt, (5, 5), 1), I.random(dt, (5,), 2)),
            "matrix_rhs": Call(jnp.linalg.solve, _mat(dt, (4, 4), 3), I.random(dt, (4, 3), 4)),
            "batch": Call(jnp.linalg.solve, _mat(dt, (2, 3, 3), 5), I.random(dt, (2, 3, 2), 6)),
        }
    raise AssertionError(op)


LINALG_OPS = ["cholesky", "triangular_solve", "lu", "qr", "qr_complete_wide", "householder_product", "eigh",
              "svd", "eig", "schur", "hessenberg", "tridiagonal", "inv", "solve", "det_slogdet", "pinv"]


@pytest.mark.parametrize("op,dtype", [not_yet.param(op, dt) for op in LINALG_OPS for dt in DTYPES])
def test_linalg(op, dtype):
    check_cases(None, linalg_cases(op, np.dtype(dtype)), op=op, dtype=dtype, tol=LINALG_TOL)


NARROW_TOL = {"bfloat16": 2e-2, "float16": 2e-3}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_narrow_float_triangular_solve_and_cholesky(dtype, stablert_device, cpu_device):
    """f16/bf16 cholesky and triangular_solve are computed in f32 and rounded, as XLA:CPU does.

    triangular_solve is compared with XLA:CPU's own narrow-float result; XLA:CPU's JAX lowering
    has no narrow cholesky (LAPACK), so it is compared with XLA:CPU's f32 factor rounded."""
    import jax

    dt = jnp.dtype(dtype)
    spd = _spd(np.dtype(np.float32), (3, 48, 48), 7)
    rhs = I.random(np.dtype(np.float32), (3, 48, 5), 8)
    lower_factor = np.tril(spd)

    def solve(a, b):
        return lx.triangular_solve(a, b, left_side=True, lower=True)

    def run(fn, device, *args):
        return np.asarray(jax.jit(fn)(*[jax.device_put(x, device) for x in args])).astype(np.float64)

    got = run(solve, stablert_device, lower_factor.astype(dt), rhs.astype(dt))
    want = run(solve, cpu_device, lower_factor.astype(dt), rhs.astype(dt))
    np.testing.assert_allclose(got, want, rtol=NARROW_TOL[dtype], atol=NARROW_TOL[dtype] * np.abs(want).max())

    got = run(lambda a: lx.cholesky(a, symmetrize_input=False), stablert_device, spd.astype(dt))
    want = run(lambda a: lx.cholesky(a, symmetrize_input=False).astype(dt), cpu_device, spd.astype(dt).astype(np.float32))
    np.testing.assert_allclose(got, want, rtol=NARROW_TOL[dtype], atol=NARROW_TOL[dtype] * np.abs(want).max())
