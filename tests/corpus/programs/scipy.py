"""jax.scipy: special functions, statistics, signal processing, scipy.linalg, integrate."""
import jax.numpy as jnp
import jax.scipy as jsp
import jax.scipy.linalg  # noqa: F401
import jax.scipy.signal  # noqa: F401
import jax.scipy.special as sp
import jax.scipy.stats as st

from corpus_lib import P, S

SPECIAL_UNARY = ["erf", "erfc", "erfinv", "gammaln", "digamma", "expit", "logit", "ndtr",
                 "ndtri", "log_ndtr", "i0", "i0e", "i1", "i1e", "entr", "gamma",
                 "spence", "expi", "exp1", "gammasgn", "sinc_like", "factorial", "dawsn_like", "erfcx_like"]
SPECIAL_BINARY = ["xlogy", "xlog1py", "betaln", "gammainc", "gammaincc", "zeta", "polygamma_n",
                  "kl_div", "rel_entr", "beta", "poch"]
STATS = {
    "norm_pdf": lambda x: st.norm.pdf(x, 0.5, 2.0),
    "norm_logcdf": lambda x: st.norm.logcdf(x),
    "norm_ppf": lambda x: st.norm.ppf(jnp.clip(x, 0.01, 0.99)),
    "beta_logpdf": lambda x: st.beta.logpdf(x, 2.0, 3.0),
    "gamma_cdf": lambda x: st.gamma.cdf(x, 2.0),
    "t_logpdf": lambda x: st.t.logpdf(x, 4.0),
    "poisson_logpmf": lambda x: st.poisson.logpmf(jnp.round(x), 3.0),
    "multivariate_normal_logpdf": lambda x: st.multivariate_normal.logpdf(
        x, jnp.zeros(3), jnp.eye(3)),
    "laplace_cdf": lambda x: st.laplace.cdf(x),
    "logistic_sf": lambda x: st.logistic.sf(x),
    "chi2_pdf": lambda x: st.chi2.pdf(x, 3.0),
    "cauchy_logpdf": lambda x: st.cauchy.logpdf(x),
}


def _special_unary(name):
    if name == "sinc_like":
        return lambda x: jnp.sinc(x)
    if name == "dawsn_like":
        return lambda x: sp.erf(x) * jnp.exp(-x * x)
    if name == "erfcx_like":
        return lambda x: sp.erfc(x) * jnp.exp(x * x)
    if name == "factorial":
        return lambda x: sp.factorial(jnp.round(jnp.abs(x)))
    return lambda x: getattr(sp, name)(x)


def _special_binary(name):
    if name == "polygamma_n":
        return lambda x, y: sp.polygamma(2, y)
    return lambda x, y: getattr(sp, name)(x, y)


def programs():
    out = [P(f"special_{n}", _special_unary(n), S((2, 3))) for n in SPECIAL_UNARY]
    out += [P(f"special_{n}", _special_binary(n), S((2, 3)), S((2, 3))) for n in SPECIAL_BINARY]
    out += [P(f"stats_{n}", fn, S((4, 3))) for n, fn in STATS.items()]
    out += [
        P("special_logsumexp_b", lambda x, b: sp.logsumexp(x, axis=0, b=b, return_sign=True),
          S((4, 3)), S((4, 3))),
        P("special_softmax", lambda x: sp.softmax(x, axis=1), S((2, 5))),
        P("signal_convolve2d", lambda a, b: jsp.signal.convolve2d(a, b, mode="same"), S((6, 6)),
          S((3, 3))),
        P("signal_correlate", lambda a, b: jsp.signal.correlate(a, b, mode="full"), S((8,)),
          S((3,))),
        P("signal_fftconvolve", lambda a, b: jsp.signal.fftconvolve(a, b), S((16,)), S((5,))),
        P("linalg_expm", lambda a: jsp.linalg.expm(a), S((4, 4))),
        P("linalg_solve_triangular", lambda a, b: jsp.linalg.solve_triangular(a, b, lower=True),
          S((4, 4)), S((4, 2))),
        P("linalg_cho_solve", lambda a, b: jsp.linalg.cho_solve(jsp.linalg.cho_factor(a), b),
          S((3, 3)), S((3,))),
        P("linalg_lu_factor", lambda a: jsp.linalg.lu_factor(a), S((4, 4))),
        P("linalg_lu", lambda a: jsp.linalg.lu(a), S((4, 3))),
        P("linalg_schur", lambda a: jsp.linalg.schur(a), S((3, 3))),
        P("linalg_eigh_tridiagonal", lambda d, e: jsp.linalg.eigh_tridiagonal(
            d, e, eigvals_only=True), S((5,)), S((4,))),
        P("linalg_block_diag", lambda a, b: jsp.linalg.block_diag(a, b), S((2, 2)), S((3, 1))),
        P("linalg_toeplitz", lambda c: jsp.linalg.toeplitz(c), S((4,))),
        P("linalg_polar", lambda a: jsp.linalg.polar(a), S((3, 3))),
        P("linalg_sqrtm", lambda a: jsp.linalg.sqrtm(a), S((3, 3))),
        P("linalg_hessenberg", lambda a: jsp.linalg.hessenberg(a), S((4, 4))),
        P("integrate_trapezoid", lambda y, x: jsp.integrate.trapezoid(y, x), S((10,)), S((10,))),
        P("ndimage_map_coordinates", lambda a, c: jsp.ndimage.map_coordinates(a, c, order=1),
          S((5, 5)), S((2, 4))),
        P("fft_dct", lambda x: jsp.fft.dct(x, norm="ortho"), S((8,))),
        P("fft_idctn", lambda x: jsp.fft.idctn(x), S((4, 6))),
    ]
    return out
