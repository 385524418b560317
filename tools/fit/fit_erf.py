"""Fits a fast f32 erf rational: erf(x) ~= x (S + P(x^2) / Q(x^2)) for 0 <= x <= LIMIT.

LIMIT defaults to 3.9192059 (the smallest f32 whose correctly rounded erf is 1.0); larger x are
clamped to LIMIT. S (--shift) is 0 or a power of two, so that S x is exact. With S = 0 this is
erf(x) ~= x P / Q, evaluated as (x * p) / q or as x * (p / q). With S > 0 it is evaluated as
y = fma(x, p / q, S * x): the rounding errors of p, q and p / q then reach y scaled by
|1 - S x / erf(x)| (for S = 1/4: 0.78 at x = 0, 0.02 at x = LIMIT), and the final
multiply-add rounds once. With S = 0 the f32 evaluation error is about 6 ulps whatever the
degrees (those rounding errors dominate); with S = 1/4 it is about 2.6 ulps for 6 + 6
coefficients and 2.4 for 6 + 7.

The fit minimises the maximum error in units of the f32 ulp of erf(x) against mpmath's erf on
Chebyshev nodes in u = x^2 / LIMIT^2 (which keeps the basis well conditioned): nonlinear least
squares with Lawson's reweighting (each round multiplies a point's weight by its error), which
converges towards the minimax fit. P / Q is unchanged by scaling both by s, but their f32
roundings (and where the intermediate values fall in their binades) are not: of the scalings
1 <= s < 2 in steps of 2^-10, the --candidates whose f32 coefficients give the smallest error
(in float64 arithmetic) are checked in full, and the one with the smallest error of the
simulated f32 evaluation is printed.

The f32 evaluation is simulated in numpy: t = x*x rounded to f32, p = Horner(P, t) and
q = Horner(Q, t) with fused multiply-adds, every operation correctly rounded to f32. A fused
multiply-add is the float64 sum of the exact float64 product and the addend, its rounding error
recovered by TwoSum and folded in by rounding to odd, so its rounding to f32 is correct (no
double rounding). The reference for the error check is scipy's float64 erf (far more accurate
than an f32 ulp), spot-checked with mpmath where the error peaks. The check enumerates every
f32 in [--dense-from, 3.95] and every --stride-th f32 in [2^-20, --dense-from).

Prints the coefficients of P and Q (lowest degree first) as Python reprs of their f32 values,
the error of the rational with those coefficients in float64 arithmetic, and of the simulated
f32 evaluation: the maximum in ulps (ulp of the correctly rounded erf; in brackets the ulp of
the exact erf, which differs only where erf rounds up to a power of two) with its argument, the
maximum for x < 2^-8, and how many results exceed 1.
Run: python tools/fit/fit_erf.py --numerator 6 --denominator 7 --shift 0.25   (about 75 s; needs
numpy, scipy and mpmath: `pip install numpy scipy mpmath`)
"""
import argparse
import time

import mpmath
import numpy as np
from scipy.optimize import least_squares
from scipy.special import erf

F32_ERF_ONE = 3.919205904006958  # smallest f32 x with f32(erf(x)) == 1


# --- f32 arithmetic simulated in float64 -------------------------------------------------

def f32(v):
    return np.asarray(v, dtype=np.float64).astype(np.float32).astype(np.float64)


def fma32(a, b, c):
    """f32(a * b + c) rounded once, for f32 a, b, c held in float64."""
    prod = a * b  # exact: 24 + 24 bits
    s = prod + c
    bb = s - prod
    err = (prod - (s - bb)) + (c - bb)  # TwoSum: s + err == prod + c exactly
    # Round to odd: if inexact and s is even, step to the neighbour towards the exact value.
    bits = s.view(np.int64)
    fix = (err != 0) & ((bits & 1) == 0)
    s = np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return f32(s)


def horner32(coeffs, t):
    v = np.full_like(t, coeffs[-1])
    for c in coeffs[-2::-1]:
        v = fma32(v, t, np.full_like(t, c))
    return v


def evaluate32(x, p, q, limit, order, shift):
    """The f32 evaluation of the rational at f32 x (float64 array), clamped to limit."""
    x = np.minimum(x, limit)
    t = f32(x * x)
    pv, qv = horner32(p, t), horner32(q, t)
    if order == "x*p/q":
        return f32(f32(x * pv) / qv)
    if order == "x*(p/q)":
        return f32(x * f32(pv / qv))
    return fma32(x, f32(pv / qv), shift * x)  # "fma(x,p/q,S*x)"; S * x is exact


def orders(shift):
    return ("x*p/q", "x*(p/q)") if shift == 0 else ("fma(x,p/q,S*x)",)


def ulp_of(v):
    """The f32 ulp at the (positive) value v: 2^(exponent - 23)."""
    _, e = np.frexp(v)
    return np.ldexp(1.0, e - 24)


def ulp_errors(x, p, q, limit, order, shift):
    y = evaluate32(x, p, q, limit, order, shift)
    exact = erf(x)
    err = np.abs(y - exact)
    return err / ulp_of(f32(exact)), err / ulp_of(exact), y


def check(p, q, limit, order, shift, dense_from, stride, chunk=1 << 22):
    """Errors over every stride-th f32 in [2^-20, dense_from) and every f32 in [dense_from, 3.95]."""
    worst = {"ulp": (0.0, 0.0), "strict": (0.0, 0.0), "tiny": (0.0, 0.0)}  # (error, at x)
    above_one = (0, np.inf)  # count, smallest x
    for lo, hi, step in [(2.0**-20, dense_from, stride), (dense_from, 3.95, 1)]:
        a = int(np.float32(lo).view(np.int32))
        b = int(np.float32(hi).view(np.int32))
        for start in range(a, b + 1, chunk * step):
            bits = np.arange(start, min(start + chunk * step, b + 1), step, dtype=np.int32)
            x = bits.view(np.float32).astype(np.float64)
            e, e_strict, y = ulp_errors(x, p, q, limit, order, shift)
            tiny = np.where(x < 2.0**-8, e, 0.0)
            for key, err in (("ulp", e), ("strict", e_strict), ("tiny", tiny)):
                i = int(err.argmax())
                if err[i] > worst[key][0]:
                    worst[key] = (float(err[i]), float(x[i]))
            over = y > 1
            if over.any():
                above_one = (above_one[0] + int(over.sum()), min(above_one[1], float(x[over].min())))
    return worst, above_one


# --- the fit --------------------------------------------------------------------------------

def minimax(n_p, n_q, limit, shift, rounds):
    """Minimax fit of x (S + P / Q) with Q(0) = 1 (float64 coefficients) and its max ulp error."""
    mpmath.mp.dps = 30
    nodes = 3000
    u = (1 - np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)) / 2  # Chebyshev nodes on [0, 1]
    xs = np.concatenate([limit * np.sqrt(u), [limit]])
    u = xs * xs / (limit * limit)
    f = np.array([float(mpmath.erf(mpmath.mpf(x))) for x in xs])
    ulp = ulp_of(f32(f))

    def residual(v):
        p, q = v[:n_p], np.concatenate([[1.0], v[n_p:]])
        return (xs * (shift + np.polyval(p[::-1], u) / np.polyval(q[::-1], u)) - f) / ulp

    # Start: the linear least-squares solution of x P + (S x - f) Q = 0, in relative terms.
    g = shift * xs - f
    a = np.column_stack([xs * u**k for k in range(n_p)] + [g * u**k for k in range(1, n_q)])
    v = np.linalg.lstsq(a / f[:, None], -g / f, rcond=None)[0]
    weights = np.ones_like(xs)
    for _ in range(rounds):
        v = least_squares(lambda w: np.sqrt(weights) * residual(w), v, method="lm", xtol=1e-15,
                          ftol=1e-15).x
        error = np.abs(residual(v))
        weights = weights * error / error.max() + 1e-12
        weights /= weights.sum()
    scale = limit * limit  # back from u to t = x^2
    p = [v[k] / scale**k for k in range(n_p)]
    q = [1.0] + [v[n_p + k - 1] / scale**k for k in range(1, n_q)]
    return np.array(p), np.array(q), np.abs(residual(v)).max()


def rounded_candidates(p, q, limit, shift, count):
    """The f32 roundings of (s P, s Q), 1 <= s < 2 in steps of 2^-10, with the smallest error.

    P / Q does not depend on s, but the rounding of the coefficients and the position of the
    intermediate values in their binades do. Ranked by the error of the rational in float64
    arithmetic with the f32 coefficients, on a grid.
    """
    grid = np.linspace(2.0**-20, limit, 100001)
    exact = erf(grid)
    ulp = ulp_of(f32(exact))
    found = []
    for s in 1 + np.arange(1024) / 1024:
        ps, qs = [float(c) for c in f32(p * s)], [float(c) for c in f32(q * s)]
        rational = grid * (shift + np.polyval(ps[::-1], grid * grid) / np.polyval(qs[::-1], grid * grid))
        found.append(((np.abs(rational - exact) / ulp).max(), ps, qs))
    found.sort(key=lambda c: c[0])
    return found[:count]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numerator", type=int, default=6, help="coefficients of P")
    parser.add_argument("--denominator", type=int, default=7, help="coefficients of Q")
    parser.add_argument("--limit", type=float, default=F32_ERF_ONE)
    parser.add_argument("--shift", type=float, default=0.25, help="S: 0 or a power of two")
    parser.add_argument("--rounds", type=int, default=40, help="Lawson rounds")
    parser.add_argument("--candidates", type=int, default=6, help="f32 roundings checked in full")
    parser.add_argument("--dense-from", type=float, default=0.5, help="enumerate every f32 from here")
    parser.add_argument("--stride", type=int, default=7, help="f32 stride below --dense-from")
    args = parser.parse_args()
    shift = args.shift
    assert shift == 0 or np.frexp(shift)[0] == 0.5, "the shift must be 0 or a power of two"
    started = time.time()
    limit = float(f32(args.limit))
    p, q, fit_error = minimax(args.numerator, args.denominator, limit, shift, args.rounds)
    print("limit %r, shift %r; fit max error %.3f ulp (float64 coefficients and arithmetic)"
          % (limit, shift, fit_error))
    best = None
    for rounding_error, pp, qq in rounded_candidates(p, q, limit, shift, args.candidates):
        for order in orders(shift):
            worst, above_one = check(pp, qq, limit, order, shift, args.dense_from, args.stride)
            print("  Q(0) = %-9r f32 coefficients: %.3f ulp in float64 arithmetic, %.3f ulp in %s"
                  % (qq[0], rounding_error, worst["ulp"][0], order))
            if best is None or worst["ulp"][0] < best[0]["ulp"][0]:
                best = (worst, above_one, order, pp, qq, rounding_error)
    worst, (over, first_over), order, pp, qq, rounding_error = best
    print("best: y = %s" % order)
    print("numerator  ", [repr(c) for c in pp])
    print("denominator", [repr(c) for c in qq])
    print("f32 coefficients, float64 arithmetic: max error %.3f ulp" % rounding_error)
    print("f32 evaluation: max error %.3f ulp at x = %r (%.3f ulp of the exact erf, at x = %r); "
          "x < 2^-8: %.3f ulp at x = %r" % (worst["ulp"] + worst["strict"] + worst["tiny"]))
    print("results above 1: %d%s" % (over, " (from x = %r)" % first_over if over else ""))
    # Spot-check the float64 reference against mpmath where the error peaks.
    mpmath.mp.dps = 30
    for v in (worst["ulp"][1], worst["strict"][1], worst["tiny"][1]):
        assert abs(float(mpmath.erf(mpmath.mpf(v))) - erf(v)) <= 1e-15 * erf(v)
    print("%.1f s" % (time.time() - started))


if __name__ == "__main__":
    main()
