"""Fits the piecewise f32 tanh of src/kernels/simd/special_math_coefficients.h.

|x| in [0, 9.0109] (f32 tanh rounds to 1 from 9.0109134 on) is cut into 16 intervals
centred on i w, w = 0.5815 (15.5 w = 9.013): interval i holds the |x| that round to i w at that spacing
(|x| / w rounded to the nearest integer), so its argument u = |x| - i w lies in [-w/2, w/2]
(the first interval only [0, w/2]). On interval i,
tanh(i w + u) ~= c0 + c1 u + ... + c7 u^7. The first interval's polynomial is
u + c3 u^3 + ... (c0 = c2 = 0, c1 = 1), so its relative error stays small as u -> 0.

Each fit minimises the maximum error in units of the result's f32 ulp against mpmath:
weighted linear least squares on Chebyshev nodes with Lawson's reweighting. The coefficients are then rounded to f32 one at
a time, lowest power first, each rounding followed by a refit of the higher powers (which
absorb most of the rounding). The interval is widened by 0.1% so that a |x| whose quotient
|x| / w rounds to the neighbouring interval (within an ulp of the boundary) is still covered.
Prints the coefficient tables (one row per power, one column per interval) and the largest
error in ulps of the f32 coefficients on a dense grid (float64 arithmetic).
Run: .venv/bin/python tools/fit/fit_tanh_pieces.py
"""
import mpmath
import numpy as np

INTERVALS, DEGREE = 16, 7
WIDTH = float(np.float32(0.5815))
ROUNDS_TO_ONE = float(np.float32(9.010913848876953))
MARGIN = 1.001


def lawson(a, b):
    w = np.ones(len(b))
    for _ in range(80):
        c = np.linalg.lstsq(a * np.sqrt(w)[:, None], b * np.sqrt(w), rcond=None)[0]
        err = np.abs(a @ c - b)
        w = w * err / err.max() + 1e-14
        w /= w.sum()
    return c


def fit(centre, lo, hi, fixed):
    mpmath.mp.dps = 40
    nodes = 500
    u = lo + (hi - lo) * (1 - np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)) / 2
    f = np.array([float(mpmath.tanh(mpmath.mpf(centre) + mpmath.mpf(v))) for v in u])
    scale = max(abs(lo), abs(hi))
    ulp = np.ldexp(1.0, np.floor(np.log2(f)).astype(int) - 23)  # f32 ulp of the result
    coeffs = dict(fixed)
    while len(coeffs) < DEGREE + 1:
        free = [k for k in range(DEGREE + 1) if k not in coeffs]
        rhs = f - sum(c * u**k for k, c in coeffs.items())
        a = np.column_stack([(u / scale) ** k for k in free]) / ulp[:, None]
        c = lawson(a, rhs / ulp)
        coeffs[free[0]] = float(np.float32(c[0] / scale ** free[0]))
    poly = [coeffs[k] for k in range(DEGREE + 1)]
    grid = np.linspace(lo, hi, 40001)
    grid = grid[centre + grid > 0]
    exact = np.array([float(mpmath.tanh(mpmath.mpf(centre) + mpmath.mpf(v))) for v in grid[::20]])
    err = np.abs(np.polyval(poly[::-1], grid[::20]) - exact) / np.ldexp(1.0, np.floor(np.log2(exact)).astype(int) - 23)
    return poly, err.max()


def c_float(value):
    text = "%.9g" % value
    return text + ("f" if "." in text or "e" in text else ".0f")


def main():
    table, worst = [], 0.0
    half = WIDTH / 2 * MARGIN
    assert round(ROUNDS_TO_ONE / WIDTH) == INTERVALS - 1
    for i in range(INTERVALS):
        centre = i * WIDTH  # exact in float64, as the kernel's FMA forms |x| - i w
        if i == 0:
            poly, err = fit(0.0, 1e-30, half, {0: 0.0, 1: 1.0, 2: 0.0})
        else:
            poly, err = fit(centre, -half, half, {})
        table.append(poly)
        worst = max(worst, err)
    for k in range(DEGREE + 1):
        print("    {" + ", ".join(c_float(table[i][k]) for i in range(INTERVALS)) + "},  // c%d" % k)
    print("max error %.3f ulp (f32 coefficients, float64 evaluation)" % worst)
    # The kernel clamps |x| to ROUNDS_TO_ONE and selects nothing after: the last polynomial,
    # evaluated as the kernel does (f32 FMAs), must give exactly 1 there.
    u = np.float32(ROUNDS_TO_ONE - (INTERVALS - 1) * WIDTH)
    y = np.float32(table[-1][DEGREE])
    for k in range(DEGREE - 1, -1, -1):
        y = np.float32(float(y) * float(u) + table[-1][k])
    print("at the limit: %r (must be 1.0)" % float(y))
    assert y == np.float32(1.0)


if __name__ == "__main__":
    main()
