// Polynomial coefficients of StableRT's own approximations of erf, erf^-1 and tanh, shared by the
// vector code (kernels/simd/special_math-inl.h) and the scalar ops (kernels/scalar_ops.h),
// so both evaluate the same function. Lowest degree first. erf^-1: fitted by weighted least
// squares on 4000 Chebyshev nodes against a float64 reference (erf^-1 by bisection on
// Python's math.erf/erfc); erf and tanh by the scripts in tools/fit/. The fit error is given
// with each table.
// Header-only constants; no state.
#pragma once

namespace stablert::kernels::coefficients {

// erf(x) = x (1/4 + P(x^2) / Q(x^2)) for 0 <= x <= kErfLimit, evaluated as
// fma(x, p / q, x / 4) in f32 (the 1/4 keeps the rounding of p, q and p / q from reaching
// the result at full weight near erf = 1): 2.37 ulp at most over every f32 in [2^-20, 3.95],
// against XLA's 5.1. kErfLimit is the smallest f32 whose erf rounds to 1; larger |x| give
// +-1. Fitted by tools/fit/fit_erf.py (its defaults), which also checks the f32 evaluation.
inline constexpr float kErfLimit = 3.919205904006958f;
inline constexpr float kErfShift = 0.25f;
inline constexpr float kTwoOverSqrtPi = 1.1283791670955126f;  // erf(x) / x as x -> 0
inline constexpr float kErfNumerator[] = {1.219780445098877f,      0.08223019540309906f,   0.03563937544822693f,
                                          -8.602964953752235e-05f, 7.156700303312391e-05f, -1.5255910511768889e-05f};
inline constexpr float kErfDenominator[] = {1.388671875f,          0.6882522702217102f,
                                            0.15689530968666077f,  0.02114783599972725f,
                                            0.0017710529500618577f, 8.393503230763599e-05f,
                                            -9.071053597153877e-08f};

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

// f32 tanh in f32 lanes, by pieces: |x| in [0, kTanhRoundsToOne] cut into 16 intervals
// centred on i w (w = kTanhPieceWidth): interval i holds the |x| with round(|x| / w) = i, so
// u = |x| - i w is in [-w/2, w/2] (the first interval: [0, w/2]; the last reaches past
// kTanhRoundsToOne, 15.5 w = 9.013). On interval i, tanh(i w + u) = sum_k kTanhPieces[k][i] u^k
// (degree 7). The first interval's polynomial is u + c3 u^3 + ... (relative error kept as
// u -> 0). Fitted for the maximum error in f32 ulps of the result against mpmath, with f32
// coefficients (tools/fit/fit_tanh_pieces.py: Lawson-weighted least squares, each
// coefficient rounded to f32 and the higher ones refitted): 0.52 ulp in exact arithmetic.
inline constexpr int kTanhPieceCount = 16;
inline constexpr float kTanhPieceWidth = 0.5815f;
inline constexpr float kTanhPieces[8][16] = {
    {0.0f, 0.523754776f, 0.822015166f, 0.940746307f, 0.981095374f, 0.994052768f, 0.998137414f, 0.999417484f, 0.999817908f, 0.999943078f, 0.999982238f, 0.999994457f, 0.999998271f, 0.999999464f, 0.999999821f, 0.99999994f},  // c0
    {1.0f, 0.725680709f, 0.32429108f, 0.114996366f, 0.0374518149f, 0.011859078f, 0.00372172124f, 0.00116470421f, 0.000364170759f, 0.00011383478f, 3.55801276e-05f, 1.11206027e-05f, 3.47572586e-06f, 1.08632946e-06f, 3.39529294e-07f, 1.06118918e-07f},  // c1
    {0.0f, -0.380074143f, -0.266575336f, -0.108179994f, -0.0367381312f, -0.011786717f, -0.00371683226f, -0.00116519688f, -0.000366164808f, -0.000113106522f, -4.14881215e-05f, -1.4720993e-05f, -5.44185605e-06f, -2.50314065e-06f, 1.567504e-06f, 1.27320504e-06f},  // c2
    {-0.333331078f, -0.0428056344f, 0.111030266f, 0.063439928f, 0.0235652514f, 0.00776538858f, 0.00246729422f, 0.000775109569f, 0.000242648806f, 7.58770257e-05f, 2.37187814e-05f, 7.41361737e-06f, 2.3171367e-06f, 7.24217728e-07f, 2.26352114e-07f, 7.07459193e-08f},  // c3
    {-7.86312157e-05f, 0.148980141f, -0.00229863287f, -0.0237003416f, -0.0110506378f, -0.00384723931f, -0.00116018043f, -0.000349827489f, -5.64764377e-05f, -6.06123613e-05f, 0.000173840206f, 0.000109449596f, 6.06338435e-05f, 4.41659176e-05f, -6.00480125e-05f, -4.33852001e-05f},  // c4
    {0.134294793f, -0.0481248759f, -0.027855251f, 0.0036336137f, 0.00364360842f, 0.0014427664f, 0.000482461008f, 0.000154000983f, 4.84037882e-05f, 1.51619206e-05f, 4.74332819e-06f, 1.48246011e-06f, 4.63436891e-07f, 1.44852052e-07f, 4.52813573e-08f, 1.41489194e-08f},  // c5
    {-0.00515817152f, -0.0321083404f, 0.0166068096f, 0.00277471542f, 0.000650593487f, 1.89025068e-05f, -0.00066223077f, -0.000340803555f, -0.000525519543f, 0.000173303517f, -0.00146205164f, -0.000890434952f, -0.000486132485f, -0.000350246875f, 0.000471352541f, 0.000340927363f},  // c6
    {-0.0429311134f, 0.0324892215f, -0.00304948422f, -0.00202420377f, -2.57173251e-05f, 9.30620517e-05f, 4.17741721e-05f, 1.39665735e-05f, 4.71741714e-06f, 1.4681151e-06f, 4.50911585e-07f, 1.43056795e-07f, 4.43163017e-08f, 1.38320768e-08f, 4.27630731e-09f, 1.35876177e-09f},  // c7
};

}  // namespace stablert::kernels::coefficients
