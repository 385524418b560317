"""Fits the f32 exp polynomial of src/kernels/simd/exp_f32-inl.h.

exp(x) = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 in [-ln2/2, ln2/2]; on that
interval e^r ~= 1 + r + c2 r^2 + ... + c6 r^6 (c0 = c1 = 1 fixed, so the result is exact to
first order around 0). The fit minimises the maximum relative error against mpmath: weighted
linear least squares on Chebyshev nodes with Lawson's reweighting. Prints c2..c6 as f32
literals, the fit's relative error (float64), and the maximum error in f32 ulps of the kernel's
evaluation order emulated in NumPy (each f32 FMA as one f64 FMA rounded to f32) over every
f32 in [-87.3, 88.37], the kernel's vector domain.
Run: .venv/bin/python tools/fit/fit_exp.py
"""
import mpmath
import numpy as np

DEGREE = 6
HALF = float(np.log(2.0)) / 2


def fit():
    mpmath.mp.dps = 40
    nodes = 800
    u = -HALF + 2 * HALF * (1 - np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)) / 2
    f = np.array([float(mpmath.exp(mpmath.mpf(v))) for v in u])
    free = list(range(2, DEGREE + 1))
    rhs = f - 1 - u
    a = np.column_stack([(u / HALF) ** k for k in free]) / f[:, None]
    b = rhs / f
    w = np.ones_like(u)
    for _ in range(100):
        c = np.linalg.lstsq(a * np.sqrt(w)[:, None], b * np.sqrt(w), rcond=None)[0]
        err = np.abs(a @ c - b)
        w = w * err / err.max() + 1e-14
        w /= w.sum()
    coeffs = [1.0, 1.0] + [ck / HALF**k for k, ck in zip(free, c)]
    grid = np.linspace(-HALF, HALF, 200001)
    return coeffs, np.max(np.abs(np.polyval(coeffs[::-1], grid) - np.exp(grid)) / np.exp(grid))


def f32(x):
    return np.asarray(x, dtype=np.float64).astype(np.float32)


def fma(a, b, c):  # one f32 FMA: exact product and sum in f64 for these magnitudes, one rounding
    return f32(a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64))


def kernel(x, coeffs):
    """The kernel's operations in its order (exp_f32-inl.h)."""
    magic = np.float32(12582912.0)  # 1.5 * 2^23
    log2e, ln2_hi, ln2_lo = np.float32(1.44269504), np.float32(0.693145752), np.float32(1.42860677e-06)
    t = fma(x, np.full_like(x, log2e), np.full_like(x, magic))
    n = f32(t.astype(np.float64) - np.float64(magic))
    r = fma(-n, np.full_like(x, ln2_hi), x)
    r = fma(-n, np.full_like(x, ln2_lo), r)
    c = [np.float32(v) for v in coeffs]
    p = np.full_like(x, c[6])
    for k in range(5, -1, -1):
        p = fma(p, r, np.full_like(x, c[k]))
    scale = ((n.astype(np.int64) + 127) << 23).astype(np.uint32).view(np.float32)
    return f32(p.astype(np.float64) * scale.astype(np.float64))


def max_ulp(coeffs):
    lo, hi = np.float32(-87.3), np.float32(88.37)
    bits_lo = np.array([lo], np.float32).view(np.int32)[0]  # negative: walk the bit patterns
    worst, worst_x = 0.0, 0.0
    ranges = [(np.int32(np.array([0.0], np.float32).view(np.int32)[0]), np.array([hi], np.float32).view(np.int32)[0]),
              (np.int32(np.array([-0.0], np.float32).view(np.int32)[0]), bits_lo)]
    for start, stop in ranges:
        for chunk in range(int(start), int(stop) + 1, 1 << 22):
            bits = np.arange(chunk, min(chunk + (1 << 22), int(stop) + 1), dtype=np.int64).astype(np.int32)
            x = bits.view(np.float32)
            x = x[np.abs(x) >= np.float32(1.1754944e-38)]
            if x.size == 0:
                continue
            got = kernel(x, coeffs).astype(np.float64)
            ref = np.exp(x.astype(np.float64))  # within 1 f64 ulp: far below an f32 ulp
            ulp = np.ldexp(1.0, (np.frexp(ref)[1] - 24).astype(np.int64))
            err = np.abs(got - ref) / ulp
            i = int(np.argmax(err))
            if err[i] > worst:
                worst, worst_x = float(err[i]), float(x[i])
    return worst, worst_x


def main():
    coeffs, rel = fit()
    for k in range(2, DEGREE + 1):
        print("  %.9ef,  // c%d" % (coeffs[k], k))
    print("fit: max relative error %.2e (float64)" % rel)
    worst, x = max_ulp(coeffs)
    print("f32 evaluation: max %.3f ulp (x = %.9g) over every f32 of the vector domain" % (worst, x))


if __name__ == "__main__":
    main()
