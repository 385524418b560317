"""Fits the piecewise f32 tanh of src/kernels/simd/special_math_coefficients.h.

|x| in [0, 9.2] is cut into 16 intervals of width 9/16 (the last one reaches 9.2, past
9.02 where f32 tanh rounds to 1); on interval i, tanh(i w + u) ~= c0 + c1 u + ... + c8 u^8
for u in [0, w). The first interval's polynomial is u + c3 u^3 + ... (c0 = c2 = 0, c1 = 1),
so its relative error stays small as u -> 0. Each fit minimises the maximum relative error
against mpmath: weighted linear least squares on Chebyshev nodes with Lawson's reweighting.
Prints the coefficient tables (one row per power, one column per interval) and the largest
relative error of the fits on a dense grid.
Run: .venv/bin/python tools/fit/fit_tanh_pieces.py
"""
import mpmath
import numpy as np

INTERVALS, WIDTH, LAST_END, DEGREE = 16, 9.0 / 16, 9.2, 8


def fit(left, right, fixed):
    mpmath.mp.dps = 40
    nodes = 600
    u = (right - left) * (1 - np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)) / 2
    f = np.array([float(mpmath.tanh(mpmath.mpf(left) + mpmath.mpf(v))) for v in u])
    free = [k for k in range(DEGREE + 1) if k not in fixed]
    rhs = f - sum(c * u**k for k, c in fixed.items())
    a = np.column_stack([(u / (right - left)) ** k for k in free]) / f[:, None]
    b = rhs / f
    w = np.ones_like(u)
    for _ in range(80):
        c = np.linalg.lstsq(a * np.sqrt(w)[:, None], b * np.sqrt(w), rcond=None)[0]
        err = np.abs(a @ c - b)
        w = w * err / err.max() + 1e-14
        w /= w.sum()
    coeffs = dict(fixed)
    for k, ck in zip(free, c):
        coeffs[k] = ck / (right - left) ** k
    poly = [coeffs[k] for k in range(DEGREE + 1)]
    grid = np.linspace(0, right - left, 20001)[1:]
    ref = np.tanh(left + grid)
    return poly, np.max(np.abs(np.polyval(poly[::-1], grid) - ref) / ref)


def main():
    table, worst = [], 0.0
    for i in range(INTERVALS):
        left = i * WIDTH
        right = LAST_END if i == INTERVALS - 1 else left + WIDTH
        poly, err = fit(left, right, {0: 0.0, 1: 1.0, 2: 0.0} if i == 0 else {})
        table.append(poly)
        worst = max(worst, err)
    for k in range(DEGREE + 1):
        print("  {" + ", ".join("%.9g" % table[i][k] for i in range(INTERVALS)) + "},  // c%d" % k)
    print("max relative error %.2e (grid, float64)" % worst)


if __name__ == "__main__":
    main()
