"""Linear algebra (jnp.linalg, lax.linalg): LAPACK custom calls of JAX's CPU lowering and the
decompositions built from them, in f32, f64 and complex."""
import jax.numpy as jnp
from jax import lax

from corpus_lib import P, S

DECOMPOSITIONS = {
    "inv": lambda a: jnp.linalg.inv(a),
    "det": lambda a: jnp.linalg.det(a),
    "slogdet": lambda a: jnp.linalg.slogdet(a),
    "cholesky": lambda a: jnp.linalg.cholesky(a @ a.T + jnp.eye(a.shape[0])),
    "qr": lambda a: jnp.linalg.qr(a),
    "qr_r_only": lambda a: jnp.linalg.qr(a, mode="r"),
    "svd": lambda a: jnp.linalg.svd(a),
    "svd_values": lambda a: jnp.linalg.svd(a, compute_uv=False),
    "eigh": lambda a: jnp.linalg.eigh(a),
    "eigvalsh": lambda a: jnp.linalg.eigvalsh(a),
    "eig": lambda a: jnp.linalg.eig(a),
    "eigvals": lambda a: jnp.linalg.eigvals(a),
    "pinv": lambda a: jnp.linalg.pinv(a),
    "matrix_rank": lambda a: jnp.linalg.matrix_rank(a),
    "norm_fro_nuc": lambda a: (jnp.linalg.norm(a), jnp.linalg.norm(a, "nuc")),
    "norm_2": lambda a: jnp.linalg.norm(a, 2),
    "matrix_power": lambda a: jnp.linalg.matrix_power(a, 5),
    "cond": lambda a: jnp.linalg.cond(a),
}


def programs():
    out = []
    for name, fn in DECOMPOSITIONS.items():
        out.append(P(f"{name}_f32", fn, S((4, 4))))
    for name in ("inv", "svd", "eigh", "qr", "det", "eig", "cholesky"):
        out.append(P(f"{name}_f64", DECOMPOSITIONS[name], S((3, 3), jnp.float64), x64=True))
    for name in ("inv", "svd", "eigh", "qr"):
        out.append(P(f"{name}_c64", DECOMPOSITIONS[name], S((3, 3), jnp.complex64)))
    out.append(P("svd_c128", DECOMPOSITIONS["svd"], S((3, 3), jnp.complex128), x64=True))
    out += [
        P("solve", lambda a, b: jnp.linalg.solve(a, b), S((4, 4)), S((4, 2))),
        P("solve_batched", lambda a, b: jnp.linalg.solve(a, b), S((2, 3, 3)), S((2, 3, 1))),
        P("lstsq", lambda a, b: jnp.linalg.lstsq(a, b)[0], S((5, 3)), S((5,))),
        P("svd_rectangular", lambda a: jnp.linalg.svd(a, full_matrices=False), S((6, 3))),
        P("eigh_batched", lambda a: jnp.linalg.eigh(a), S((2, 4, 4))),
        P("lax_lu", lambda a: lax.linalg.lu(a), S((4, 4))),
        P("lax_triangular_solve", lambda a, b: lax.linalg.triangular_solve(
            a, b, left_side=True, lower=False, transpose_a=True), S((3, 3)), S((3, 2))),
        P("lax_tridiagonal_solve", lambda dl, d, du, b: lax.linalg.tridiagonal_solve(
            dl, d, du, b), S((5,)), S((5,)), S((5,)), S((5, 2))),
        P("lax_tridiagonal", lambda a: lax.linalg.tridiagonal(a), S((4, 4))),
        P("lax_householder_product", lambda a, t: lax.linalg.householder_product(a, t),
          S((4, 3)), S((3,))),
        P("lax_qr_pivoting", lambda a: lax.linalg.qr(a, pivoting=True), S((4, 4))),
        P("tensorsolve", lambda a, b: jnp.linalg.tensorsolve(a, b), S((2, 3, 6)), S((2, 3))),
        P("multi_dot", lambda a, b, c: jnp.linalg.multi_dot([a, b, c]), S((2, 3)), S((3, 4)),
          S((4, 2))),
        P("vecdot_matmul", lambda a, b: (jnp.linalg.vecdot(a, b), jnp.linalg.matmul(a, b.T)),
          S((3, 4)), S((3, 4))),
    ]
    return out
