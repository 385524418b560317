// Polynomial coefficients of StableRT's own approximations of erf, erf^-1 and tanh, shared by the
// vector code (kernels/simd/special_math-inl.h) and the scalar ops (kernels/scalar_ops.h),
// so both evaluate the same function. Lowest degree first. Fitted by weighted least squares
// on 4000 Chebyshev nodes against a float64 reference (Python's math.erf/erfc; erf^-1 by
// bisection on them); the fit error is given with each table.
// Header-only constants; no state.
#pragma once

namespace stablert::kernels::coefficients {

// erf(x) / x = P(x^2) for |x| <= 1: relative error 1.4e-9.
inline constexpr float kErfSmall[] = {1.128379225730896f,     -0.3761262893676758f,    0.11283612251281738f,
                                      -0.026854809373617172f, 0.00519005348905921f,    -0.0008024353883229196f,
                                      7.898209878476337e-05f};
// erfc(x) = P(x - 2.5) for 1 <= x <= 4: absolute error 6.3e-10 (erf(x) = 1 - erfc(x); f32
// erf rounds to 1 beyond 3.92).
inline constexpr float kErfcMid[] = {
    0.0004069523711223155f,  -0.0021782785188406706f, 0.005445688497275114f,   -0.008350212126970291f,
    0.008622604422271252f,   -0.006116587668657303f,  0.002797554712742567f,   -0.0005445338319987059f,
    -0.0002587301132734865f, 0.0002534241648390889f,  -8.110047201626003e-05f, -7.756445484119467e-06f,
    1.5719271686975844e-05f, -3.462653694441542e-06f, -8.90137130227231e-07f,  3.5129914977005683e-07f};

// erf^-1(x) / x = P(w - 3.125) with w = -log((1 - x)(1 + x)) <= 6.25 (|x| <= 0.99903):
// relative error 1.9e-10.
inline constexpr double kErfInvCentral[] = {
    1.6536545624813572,      0.24015818221206606,     -0.0060336704505225616,  -0.00074070160767865194,
    0.00018673358104629329,  -1.3883580219288159e-05, -1.3650597740512326e-06, 4.2400514968038644e-07,
    -2.9208544632540641e-08, -4.2475774816906967e-09, 1.0773147578017894e-09,  -3.5468600279031648e-11,
    -1.5836939398772287e-11, 1.2908354940499578e-12,  1.0103029524088925e-13};
// |erf^-1(x)| = P(sqrt(w) - 3.3) for 2.5 <= sqrt(w) <= 4.1 (0.99903 <= |x| < 1 in f32):
// relative error 1.0e-10.
inline constexpr double kErfInvTail[] = {
    3.1341323159107692,     1.0059525725353762,      0.0042982933030104586,  -0.0022801555348696823,
    0.00080146124084756742, -0.00021413652446880538, 2.9411127364070699e-05, 1.2586416555146474e-05,
    -1.2130342450955567e-05, 3.9054120593989827e-06, -5.8000024075188783e-08};

// Stirling's series of lgamma, sum B_2k / (2k (2k-1) z^(2k-1)) as polynomial in 1/z^2 (times
// 1/z), and the asymptotic series of digamma, sum B_2k / (2k z^2k) (times 1/z^2): both used
// for z >= 8 after shifting, where the first omitted term is below 2e-15.
inline constexpr double kLgammaStirling[] = {1.0 / 12,    -1.0 / 360,         1.0 / 1260, -1.0 / 1680,
                                             1.0 / 1188, -691.0 / 360360, 1.0 / 156};
inline constexpr double kDigammaAsymptotic[] = {1.0 / 12,  -1.0 / 120,        1.0 / 252, -1.0 / 240,
                                                1.0 / 132, -691.0 / 32760, 1.0 / 12};
inline constexpr double kHalfLog2Pi = 0.91893853320467274178;  // log(2 pi) / 2
inline constexpr double kLogPi = 1.14472988584940017414;
inline constexpr double kPi = 3.14159265358979323846;
// The shifted argument at which the series above are used.
inline constexpr double kSeriesStart = 8.0;

// tanh(x) = x P(x^2) / Q(x^2) for |x| <= 9.1 (f32 tanh rounds to +-1 beyond 9.02): relative
// error 7.8e-9. Fitted by iteratively reweighted least squares (Lawson's weights) on the
// relative error against mpmath's tanh at 22000 points (tools/fit/fit_tanh.py); P(0) = Q(0) = 1.
inline constexpr double kTanhNumerator[] = {1.0,
                                            0.13081542036377417,
                                            0.0031011507782952113,
                                            1.112358558032322e-05,
                                            -2.0092136231736282e-08,
                                            5.2092753018593635e-11,
                                            -8.300908394512015e-14};
inline constexpr double kTanhDenominator[] = {1.0, 0.46414870723826235, 0.024484140003514322,
                                              0.00025419793075577774};
inline constexpr double kTanhLimit = 9.1;

}  // namespace stablert::kernels::coefficients
