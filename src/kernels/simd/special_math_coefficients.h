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
// The smallest f32 whose tanh rounds to 1.0f: tanh(x) > 1 - 2^-25 from x = ln(2^26 - 1) / 2 =
// 9.0109133 on. The fits above are accurate in relative terms, which still leaves 1 - 2^-24
// (one ulp below 1) near and past it, so both tanh forms return +-1 from here.
inline constexpr float kTanhRoundsToOne = 9.010913848876953f;

// f32 tanh in f32 lanes, by pieces: |x| in [0, 9.2] cut into 16 intervals of width 9/16 (the
// last reaching 9.2, past 9.02 where f32 tanh rounds to 1); on interval i,
// tanh(i 9/16 + u) = sum_k kTanhPieces[k][i] u^k, u in [0, 9/16). The first interval's
// polynomial is u + c3 u^3 + ... (relative error kept as u -> 0). Relative error of the fits
// 1.1e-9 (tools/fit/fit_tanh_pieces.py: Lawson-weighted least squares on Chebyshev nodes
// against mpmath).
inline constexpr int kTanhPieceCount = 16;
inline constexpr float kTanhPieceWidth = 0.5625f;
inline constexpr float kTanhPiecesEnd = 9.2f;
inline constexpr float kTanhPieces[9][16] = {
    {0.0f, 0.509829974f, 0.80930107f, 0.933828043f, 0.978026115f, 0.992812795f, 0.997660979f, 0.999240031f, 0.999753211f, 0.999919873f, 0.999973986f, 0.999991554f, 0.999997258f, 0.99999911f, 0.999999711f, 0.999999906f},  // c0
    {1.0f, 0.740073391f, 0.34503177f, 0.127965188f, 0.0434649192f, 0.0143227544f, 0.00467257003f, 0.0015193605f, 0.000493517397f, 0.000160248348f, 5.2027837e-05f, 1.68912624e-05f, 5.48382128e-06f, 1.78033944e-06f, 5.77993184e-07f, 1.87646278e-07f},  // c1
    {0.0f, -0.377311364f, -0.279234177f, -0.119497582f, -0.0425098431f, -0.0142198139f, -0.00466164006f, -0.00151820551f, -0.00049339549f, -0.000160235476f, -5.20264745e-05f, -1.68911156e-05f, -5.48380425e-06f, -1.78033906e-06f, -5.78017037e-07f, -1.87639276e-07f},  // c2
    {-0.333336043f, -0.0543284807f, 0.110966256f, 0.0689369347f, 0.0270877404f, 0.00934336426f, 0.00309320014f, 0.00101059247f, 0.000328765916f, 0.000106805941f, 3.46823352e-05f, 1.12604782e-05f, 3.65580925e-06f, 1.1869118e-06f, 3.85551313e-07f, 1.25020831e-07f},  // c3
    {8.00980862e-05f, 0.153460791f, 0.00334551859f, -0.0245586079f, -0.0123253669f, -0.0045363053f, -0.00153197266f, -0.000503705492f, -0.00016420186f, -5.33802954e-05f, -1.73376408e-05f, -5.62935392e-06f, -1.82752059e-06f, -5.93620069e-07f, -1.93691793e-07f, -6.21476253e-08f},  // c4
    {0.132433547f, -0.0434607727f, -0.032411639f, 0.00287444863f, 0.0040050527f, 0.00170774899f, 0.000600626333f, 0.000199980941f, 6.5454397e-05f, 2.13090523e-05f, 6.924278e-06f, 2.24801465e-06f, 7.29230302e-07f, 2.38087864e-07f, 7.96652895e-08f, 2.38761978e-08f},  // c5
    {0.00511077815f, -0.0388505728f, 0.0200864262f, 0.00264349732f, -0.000792348572f, -0.00050025252f, -0.000190772632f, -6.50245971e-05f, -2.14404942e-05f, -7.00276063e-06f, -2.27767496e-06f, -7.38506579e-07f, -2.38217258e-07f, -8.05083519e-08f, -2.92280623e-08f, -6.50373178e-09f},  // c6
    {-0.0700118027f, 0.0363639048f, -0.0057943471f, -0.00189122608f, 9.43235732e-06f, 0.000106842698f, 4.71729832e-05f, 1.6688372e-05f, 5.56562325e-06f, 1.83098098e-06f, 5.96454467e-07f, 1.92269762e-07f, 6.05028234e-08f, 2.34682327e-08f, 9.52783194e-09f, 7.65574373e-10f},  // c7
    {0.0275762685f, -0.0100247321f, 0.000568152508f, 0.000485570338f, 3.26952442e-05f, -1.28676343e-05f, -7.07733439e-06f, -2.61944314e-06f, -8.85256445e-07f, -2.9512721e-07f, -9.62723092e-08f, -3.05783456e-08f, -8.98143542e-09f, -4.75984319e-09f, -1.91344246e-09f, 1.09741749e-10f},  // c8
};

}  // namespace stablert::kernels::coefficients
