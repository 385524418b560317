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

// f32 tanh in f32 lanes, by pieces: |x| in [0, kTanhRoundsToOne] cut into 32 intervals
// centred on i w (w = kTanhPieceWidth): interval i holds the |x| with round(|x| / w) = i, so
// u = |x| - i w is in [-w/2, w/2] (the first interval: [0, w/2]; the last reaches past
// kTanhRoundsToOne, 31.5 w = 9.0112). On interval i, tanh(i w + u) = sum_k kTanhPieces[k][i] u^k
// (degree 6). The first interval's polynomial is u + c3 u^3 + ... (relative error kept as
// u -> 0). Fitted for the maximum error in f32 ulps of the result against mpmath, with f32
// coefficients (tools/fit/fit_tanh_pieces.py: Lawson-weighted least squares, each
// coefficient rounded to f32 and the higher ones refitted): 0.500 ulp in exact arithmetic.
inline constexpr int kTanhPieceCount = 32;
inline constexpr float kTanhPieceWidth = 0.28607f;
inline constexpr float kTanhPieces[7][32] = {
    {0.0f, 0.27851364f, 0.51692915f, 0.695334256f, 0.815850258f, 0.891738296f, 0.937430501f, 0.96420306f, 0.979640424f, 0.988459587f, 0.993471146f, 0.996310413f, 0.997916222f, 0.998823583f, 0.999335945f, 0.999625206f, 0.999788463f, 0.999880612f, 0.999932647f, 0.999961972f, 0.999978542f, 0.9999879f, 0.999993145f, 0.999996126f, 0.999997795f, 0.999998748f, 0.999999285f, 0.999999583f, 0.999999762f, 0.999999881f, 0.99999994f, 0.99999994f},  // c0
    {1.0f, 0.922430158f, 0.732784212f, 0.516510248f, 0.334388345f, 0.204802826f, 0.121224068f, 0.0703124329f, 0.0403046124f, 0.0229476597f, 0.0130151017f, 0.0073655732f, 0.00416320423f, 0.0023514994f, 0.0013276703f, 0.000749443134f, 0.000422992191f, 0.000238723485f, 0.000134722606f, 7.60284311e-05f, 4.29048087e-05f, 2.42121187e-05f, 1.36633707e-05f, 7.71048872e-06f, 4.35116362e-06f, 2.45543583e-06f, 1.38564371e-06f, 7.81941878e-07f, 4.41262785e-07f, 2.49011919e-07f, 1.40521536e-07f, 7.92986228e-08f},  // c1
    {0.0f, -0.256912798f, -0.378794938f, -0.359149396f, -0.272802502f, -0.1826341f, -0.11364419f, -0.0677832663f, -0.0394721329f, -0.0226897746f, -0.0129381819f, -0.00734365825f, -0.00415001763f, -0.00237032189f, -0.00132705283f, -0.000747233571f, -0.000406867504f, -0.00022194437f, -0.000143705562f, -6.48561545e-05f, -3.85170533e-05f, -2.97756142e-05f, 6.21236632e-06f, 8.87769511e-06f, 2.15868986e-05f, 1.84244909e-05f, 1.81487194e-05f, 2.20855673e-05f, 1.50471133e-05f, -4.86114823e-06f, -9.41946655e-06f, 1.7297034e-05f},  // c2
    {-0.333330274f, -0.235928237f, -0.0484438054f, 0.0775623173f, 0.1111091f, 0.0945897996f, 0.0661206096f, 0.0419311896f, 0.0252452977f, 0.0147719691f, 0.00850722846f, 0.00485612126f, 0.00275814114f, 0.00156211678f, 0.000883355271f, 0.000499061483f, 0.000281816378f, 0.000159091287f, 8.97978607e-05f, 5.06789293e-05f, 2.86011709e-05f, 1.61407097e-05f, 9.10863946e-06f, 5.1402294e-06f, 2.90070602e-06f, 1.63692459e-06f, 9.23752111e-07f, 5.21288541e-07f, 2.94174072e-07f, 1.66004313e-07f, 9.36811517e-08f, 5.28666071e-08f},  // c3
    {-0.000155720743f, 0.151694074f, 0.151078865f, 0.0660306513f, -0.000783051772f, -0.0230200719f, -0.0234524049f, -0.0194156189f, -0.0131146675f, -0.00613935152f, -0.00309581682f, -0.00170888787f, -0.001953403f, 0.00202615955f, -0.000406214705f, -0.000499614456f, -0.00222312496f, -0.00225474569f, 0.00112281949f, -0.00147579389f, -0.00058397447f, 0.000714444497f, -0.00258560851f, -0.00215671048f, -0.00336977001f, -0.00271228864f, -0.0025371972f, -0.00296983891f, -0.00201147003f, 0.000598849787f, 0.00120491849f, -0.00225651986f},  // c4
    {0.136077479f, 0.0571360551f, -0.0454407707f, -0.0600879006f, -0.0298491511f, -0.00606557028f, 0.00322040729f, 0.00476196595f, 0.00381307164f, 0.00254239561f, 0.00157472445f, 0.000930142065f, 0.00053867267f, 0.000309387775f, 0.000175432229f, 9.97832176e-05f, 5.63148969e-05f, 3.18654602e-05f, 1.79451181e-05f, 1.01875548e-05f, 5.73806983e-06f, 3.23886047e-06f, 1.82874066e-06f, 1.03155492e-06f, 5.83303631e-07f, 3.29093382e-07f, 1.85459299e-07f, 1.04683508e-07f, 5.8991219e-08f, 3.34089556e-08f, 1.87700948e-08f, 1.05614246e-08f},  // c5
    {-0.0202667098f, -0.0808321536f, -0.029645063f, 0.00451431796f, 0.0526489057f, -0.00519640278f, -0.0185449068f, 0.0513124093f, 0.0494422726f, -0.0299518649f, -0.0344537571f, -0.0224920735f, 0.0188647211f, -0.0912060738f, -0.00117176748f, 0.00810591504f, 0.067649737f, 0.0706768185f, -0.0379522331f, 0.0471312888f, 0.0185104832f, -0.023480203f, 0.0838743821f, 0.070001483f, 0.109458096f, 0.088112928f, 0.0824347213f, 0.0965005904f, 0.0653607473f, -0.0194631759f, -0.0391570516f, 0.0733279288f},  // c6
};

}  // namespace stablert::kernels::coefficients
