"""Fits the f32 tanh rational of src/kernels/simd/special_math_coefficients.h.

tanh(x) ~= x P(x^2) / Q(x^2) on 0 < x <= LIMIT with P(0) = Q(0) = 1, minimising the maximum
relative error against mpmath's tanh: nonlinear least squares on the relative error with
Lawson's reweighting (each round multiplies a point's weight by its error), which converges
towards the minimax fit. Prints the coefficients (lowest degree first) and the fit's maximum
relative error on the grid. Run: .venv/bin/python tools/fit/fit_tanh.py
"""
import argparse

import mpmath
import numpy as np
from scipy.optimize import least_squares


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numerator", type=int, default=7, help="coefficients of P")
    parser.add_argument("--denominator", type=int, default=4, help="coefficients of Q")
    parser.add_argument("--limit", type=float, default=9.1)
    parser.add_argument("--rounds", type=int, default=60)
    args = parser.parse_args()
    mpmath.mp.dps = 30
    n_p, n_q, limit = args.numerator, args.denominator, args.limit
    xs = np.sort(np.concatenate([np.linspace(1e-3, limit, 20000), np.geomspace(1e-4, 1, 2000)]))
    f = np.array([float(mpmath.tanh(mpmath.mpf(x))) for x in xs])
    u = xs * xs / (limit * limit)  # scaled so the basis is well conditioned

    def model(v):
        p = np.concatenate([[1.0], v[: n_p - 1]])
        q = np.concatenate([[1.0], v[n_p - 1 :]])
        return xs * np.polyval(p[::-1], u) / np.polyval(q[::-1], u)

    # Start: the linear least-squares solution of x P - f Q = 0.
    a = np.column_stack([xs * u**k for k in range(1, n_p)] + [-f * u**k for k in range(1, n_q)])
    v = np.linalg.lstsq(a / f[:, None], -(xs - f) / f, rcond=None)[0]
    weights = np.ones_like(xs)
    for _ in range(args.rounds):
        v = least_squares(lambda v: np.sqrt(weights) * (model(v) - f) / f, v, method="lm", xtol=1e-15,
                          ftol=1e-15).x
        error = np.abs((model(v) - f) / f)
        weights = weights * error / error.max() + 1e-12
        weights /= weights.sum()
    p = np.concatenate([[1.0], v[: n_p - 1]])
    q = np.concatenate([[1.0], v[n_p - 1 :]])
    scale = limit * limit
    print("numerator  ", [repr(float(c / scale**k)) for k, c in enumerate(p)])
    print("denominator", [repr(float(c / scale**k)) for k, c in enumerate(q)])
    print("max relative error %.2e" % error.max())


if __name__ == "__main__":
    main()
