// CHLO -> StableHLO expansions (chlo_expand.h). The algorithms, coefficients and special
// cases are those of MLIR's chlo-legalize-to-stablehlo (ChloLegalizeToStablehlo.cpp and
// ChloDecompositionPatterns*.td in openxla/stablehlo), which JAX's CPU backend runs; the
// complex inverse trigonometric and hyperbolic functions use Kahan's formulas instead (same
// branch cuts and signed zeros, within a few ulps of them).
#include "stablehlo/chlo_expand.h"

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <utility>

#include "stablehlo/attr_util.h"
#include "stablehlo/text_normalize.h"

namespace stablert::stablehlo {
namespace {

using ir::OpCode;
using ir::ValueId;

// Comparison directions in VHLO numbering (attribute.h).
enum Direction : int64_t { kEQ = 0, kNE = 1, kGE = 2, kGT = 3, kLE = 4, kLT = 5 };
constexpr int64_t kTotalOrder = 2;

// Elements of `dims`, saturated at 2^40 (a splat beyond any expanded size).
int64_t ElementCount(const Dims& dims) {
  constexpr int64_t kCap = int64_t{1} << 40;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d != 0 && n > kCap / d) return kCap;
    n *= d;
  }
  return n;
}

// Emits StableHLO ops into a scratch list; the caller moves them into the block once the
// whole expansion succeeded.
class Builder {
 public:
  Builder(ir::Module& module, ir::LocationId location) : module_(module), location_(location) {}

  const ir::Type& TypeOf(ValueId v) const { return module_.type_of(v); }

  std::vector<ValueId> EmitN(OpCode code, std::vector<ValueId> operands,
                             const std::vector<ir::Type>& types,
                             ir::Attribute::Dictionary attrs = {},
                             std::vector<ir::Region> regions = {}) {
    ir::Operation op;
    op.code = code;
    op.operands = std::move(operands);
    for (const ir::Type& t : types) op.results.push_back(module_.AddValue(t));
    op.attrs = std::move(attrs);
    op.regions = std::move(regions);
    op.location = location_;
    Status s = NormalizeTextAttributes(op);
    if (!s.ok() && status_.ok()) status_ = s;
    for (size_t i = 1; i < op.attrs.size(); ++i) {
      for (size_t j = i; j > 0 && op.attrs[j].first < op.attrs[j - 1].first; --j)
        std::swap(op.attrs[j], op.attrs[j - 1]);
    }
    std::vector<ValueId> results = op.results;
    ops_.push_back(std::move(op));
    return results;
  }
  ValueId Emit(OpCode code, std::vector<ValueId> operands, ir::Type type,
               ir::Attribute::Dictionary attrs = {}) {
    return EmitN(code, std::move(operands), {std::move(type)}, std::move(attrs))[0];
  }

  // Elementwise ops whose result has the first operand's type.
  ValueId Un(OpCode code, ValueId x) { return Emit(code, {x}, TypeOf(x)); }
  ValueId Bin(OpCode code, ValueId a, ValueId b) { return Emit(code, {a, b}, TypeOf(a)); }
  ValueId Add(ValueId a, ValueId b) { return Bin(OpCode::kAdd, a, b); }
  ValueId Sub(ValueId a, ValueId b) { return Bin(OpCode::kSubtract, a, b); }
  ValueId Mul(ValueId a, ValueId b) { return Bin(OpCode::kMultiply, a, b); }
  ValueId Div(ValueId a, ValueId b) { return Bin(OpCode::kDivide, a, b); }
  ValueId Neg(ValueId a) { return Un(OpCode::kNegate, a); }
  ValueId Abs(ValueId a) { return Un(OpCode::kAbs, a); }
  ValueId Log(ValueId a) { return Un(OpCode::kLog, a); }
  ValueId Log1p(ValueId a) { return Un(OpCode::kLogPlusOne, a); }
  ValueId Exp(ValueId a) { return Un(OpCode::kExponential, a); }
  ValueId Sqrt(ValueId a) { return Un(OpCode::kSqrt, a); }
  ValueId Floor(ValueId a) { return Un(OpCode::kFloor, a); }
  ValueId And(ValueId a, ValueId b) { return Bin(OpCode::kAnd, a, b); }
  ValueId Select(ValueId p, ValueId a, ValueId b) {
    return Emit(OpCode::kSelect, {p, a, b}, TypeOf(a));
  }
  ValueId Clamp(ValueId lo, ValueId x, ValueId hi) {
    return Emit(OpCode::kClamp, {lo, x, hi}, TypeOf(x));
  }
  ValueId Compare(ValueId a, ValueId b, Direction d, int64_t type = 0) {
    ir::Type pred = TypeOf(a);
    pred.dtype = DType::kPred;
    return Emit(
        OpCode::kCompare, {a, b}, pred,
        {{"compare_type", ir::Attribute(ir::EnumValue{ir::EnumKind::kComparisonType, type})},
         {"comparison_direction",
          ir::Attribute(ir::EnumValue{ir::EnumKind::kComparisonDirection, d})}});
  }
  ValueId Convert(ValueId x, DType dtype) {
    ir::Type t = TypeOf(x);
    t.dtype = dtype;
    return Emit(OpCode::kConvert, {x}, t);
  }

  // A constant of `like`'s type (f32 or f64 elements) with every element `value`.
  // f16/bf16: an f32 constant converted (exact for the values the expansions use).
  ValueId Constant(double value, ValueId like) {
    const ir::Type type = TypeOf(like);
    if (type.dtype == DType::kF16 || type.dtype == DType::kBF16) {
      return Convert(ConstantOf(value, ir::Type::Tensor(DType::kF32, type.dims)), type.dtype);
    }
    return ConstantOf(value, type);
  }

  // A constant of `type` (f32, f64, integer or i1 elements) with every element `value`.
  ValueId ConstantOf(double value, const ir::Type& type) {
    auto data = std::make_shared<ir::ElementsData>();
    data->type = type;
    uint8_t element[16] = {};
    const size_t size = static_cast<size_t>(DTypeByteSize(type.dtype));
    if (type.dtype == DType::kF64) {
      std::memcpy(element, &value, 8);
    } else if (type.dtype == DType::kF32) {
      float f = static_cast<float>(value);
      std::memcpy(element, &f, 4);
    } else if (type.dtype == DType::kC128) {
      std::memcpy(element, &value, 8);  // (value, 0)
    } else if (type.dtype == DType::kC64) {
      float f = static_cast<float>(value);
      std::memcpy(element, &f, 4);  // (value, 0)
    } else if (type.dtype == DType::kPred) {
      element[0] = value != 0;
    } else {
      // Integers: two's complement, little-endian, truncated to the element's width.
      const uint64_t bits = DTypeKindOf(type.dtype) == DTypeKind::kUnsigned
                                ? static_cast<uint64_t>(value)
                                : static_cast<uint64_t>(static_cast<int64_t>(value));
      for (size_t i = 0; i < size && i < 8; ++i) element[i] = static_cast<uint8_t>(bits >> (8 * i));
    }
    const int64_t n = ElementCount(type.dims);
    if (n * static_cast<int64_t>(size) > ir::ElementsData::kCompactSplatBytes) {
      data->splat = true;
      data->bytes.assign(element, element + size);
    } else {
      data->bytes.reserve(static_cast<size_t>(n) * size);
      for (int64_t i = 0; i < n; ++i)
        data->bytes.insert(data->bytes.end(), element, element + size);
    }
    ir::Attribute::Elements elements = data;
    return Emit(OpCode::kConstant, {}, type, {{"value", ir::Attribute(elements)}});
  }
  // The smallest positive normal value of `like`'s element type.
  double Smallest(ValueId like) const {
    switch (TypeOf(like).dtype) {
      case DType::kF64:
        return std::numeric_limits<double>::min();
      case DType::kF16:
        return 6.103515625e-05;
      default:  // f32, bf16
        return std::numeric_limits<float>::min();
    }
  }
  double Largest(ValueId like) const {
    switch (TypeOf(like).dtype) {
      case DType::kF64:
        return std::numeric_limits<double>::max();
      case DType::kF16:
        return 65504.0;
      case DType::kBF16:
        return 3.3895313892515355e38;  // 0x7F7F
      default:
        return std::numeric_limits<float>::max();
    }
  }

  // A polynomial in `x` by Horner's rule, highest coefficient first.
  template <typename T, size_t N>
  ValueId Polynomial(ValueId x, const T (&coefficients)[N]) {
    ValueId p = Constant(coefficients[0], x);
    for (size_t i = 1; i < N; ++i) p = Add(Mul(p, x), Constant(coefficients[i], x));
    return p;
  }

  // An integer constant of `type` holding `value` exactly (two's complement, truncated).
  ValueId ConstantOfInt(int64_t value, const ir::Type& type) {
    auto data = std::make_shared<ir::ElementsData>();
    data->type = type;
    const size_t size = static_cast<size_t>(DTypeByteSize(type.dtype));
    const int64_t n = ElementCount(type.dims);
    const uint64_t bits = static_cast<uint64_t>(value);
    uint8_t element[8];
    for (size_t i = 0; i < 8; ++i) element[i] = static_cast<uint8_t>(bits >> (8 * i));
    data->splat = n * static_cast<int64_t>(size) > ir::ElementsData::kCompactSplatBytes;
    for (int64_t i = 0; i < (data->splat ? 1 : n); ++i)
      data->bytes.insert(data->bytes.end(), element, element + size);
    ir::Attribute::Elements elements = data;
    return Emit(OpCode::kConstant, {}, type, {{"value", ir::Attribute(elements)}});
  }

  ir::Module& module() { return module_; }
  ir::LocationId location() const { return location_; }
  Status status() const { return status_; }
  std::vector<ir::Operation> TakeOps() { return std::move(ops_); }

 private:
  ir::Module& module_;
  ir::LocationId location_;
  std::vector<ir::Operation> ops_;
  Status status_ = OkStatus();
};

using Expansion = ValueId (*)(Builder&, ValueId);

//===--- erf, erfc, erf_inv (f32) -------------------------------------------------===//

// Eigen's rational approximation on [-4, 4].
ValueId ErfF32(Builder& b, ValueId x) {
  static constexpr float kAlpha[] = {-2.72614225801306e-10f, 2.77068142495902e-08f,
                                     -2.10102402082508e-06f, -5.69250639462346e-05f,
                                     -7.34990630326855e-04f, -2.95459980854025e-03f,
                                     -1.60960333262415e-02f};
  static constexpr float kBeta[] = {-1.45660718464996e-05f, -2.13374055278905e-04f,
                                    -1.68282697438203e-03f, -7.37332916720468e-03f,
                                    -1.42647390514189e-02f};
  x = b.Clamp(b.Constant(-4.0, x), x, b.Constant(4.0, x));
  ValueId x2 = b.Mul(x, x);
  ValueId erf = b.Div(b.Mul(x, b.Polynomial(x2, kAlpha)), b.Polynomial(x2, kBeta));
  return b.Clamp(b.Constant(-1.0, x), erf, b.Constant(1.0, x));
}

// Cephes: erf(x) = x T(x^2) for |x| <= 1.
ValueId ErfSmallF32(Builder& b, ValueId x) {
  static constexpr float kT[] = {+7.853861353153693E-5f, -8.010193625184903E-4f,
                                 +5.188327685732524E-3f, -2.685381193529856E-2f,
                                 +1.128358514861418E-1f, -3.761262582423300E-1f,
                                 +1.128379165726710E+0f};
  return b.Mul(x, b.Polynomial(b.Mul(x, x), kT));
}

// Cephes: erfc(x) = exp(-x^2) / |x| P(1/x^2) on [1, 2), R(1/x^2) beyond; 2 - erfc(-x) below 0.
ValueId ErfcLargeF32(Builder& b, ValueId x) {
  static constexpr double kMaxLog = 88.72283905206835;
  static constexpr float kP[] = {
      +2.326819970068386E-2f, -1.387039388740657E-1f, +3.687424674597105E-1f,
      -5.824733027278666E-1f, +6.210004621745983E-1f, -4.944515323274145E-1f,
      +3.404879937665872E-1f, -2.741127028184656E-1f, +5.638259427386472E-1f};
  static constexpr float kR[] = {-1.047766399936249E+1f, +1.297719955372516E+1f,
                                 -7.495518717768503E+0f, +2.921019019210786E+0f,
                                 -1.015265279202700E+0f, +4.218463358204948E-1f,
                                 -2.820767439740514E-1f, +5.641895067754075E-1f};
  ValueId x2 = b.Mul(x, x);
  ValueId z = b.Neg(x2);
  ValueId ax = b.Abs(x);
  ValueId one = b.Constant(1.0, x);
  ValueId r2 = b.Div(one, x2);
  ValueId scale = b.Mul(b.Exp(z), b.Div(one, ax));
  ValueId two = b.Constant(2.0, x);
  ValueId poly = b.Select(b.Compare(ax, two, kLT), b.Polynomial(r2, kP), b.Polynomial(r2, kR));
  ValueId approx = b.Mul(scale, poly);
  ValueId zero = b.Constant(0.0, x);
  approx = b.Select(b.Compare(z, b.Constant(-kMaxLog, x), kLT), zero, approx);
  return b.Select(b.Compare(x, zero, kLT), b.Sub(two, approx), approx);
}

ValueId ErfcF32(Builder& b, ValueId x) {
  ValueId large = ErfcLargeF32(b, x);
  ValueId one = b.Constant(1.0, x);
  ValueId small = b.Sub(one, ErfSmallF32(b, x));
  return b.Select(b.Compare(b.Abs(x), one, kLT), small, large);
}

// Giles' single-precision erfinv.
ValueId ErfInvF32(Builder& b, ValueId x) {
  static constexpr float kLt5[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                   -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                   -0.00417768164f,  0.246640727f,    1.50140941f};
  static constexpr float kGe5[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                   -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                   0.00943887047f,   1.00167406f,     2.83297682f};
  ValueId w = b.Neg(b.Log1p(b.Mul(x, b.Neg(x))));
  ValueId lt = b.Compare(w, b.Constant(5.0, x), kLT);
  w = b.Select(lt, b.Sub(w, b.Constant(2.5, x)), b.Sub(b.Sqrt(w), b.Constant(3.0, x)));
  auto coefficient = [&](size_t i) {
    return b.Select(lt, b.Constant(kLt5[i], x), b.Constant(kGe5[i], x));
  };
  ValueId p = coefficient(0);
  for (size_t i = 1; i < 9; ++i) p = b.Add(coefficient(i), b.Mul(p, w));
  ValueId result = b.Mul(p, x);
  ValueId at_one = b.Compare(b.Abs(x), b.Constant(1.0, x), kEQ);
  return b.Select(at_one, b.Mul(x, b.Constant(std::numeric_limits<double>::infinity(), x)), result);
}

//===--- erf, erfc, erf_inv (f64) -------------------------------------------------===//

// Cephes: erfc for |x| >= 1 as exp(-x^2) P(|x|)/Q(|x|) below 8, R(|x|)/S(|x|) beyond.
ValueId ErfcLargeF64(Builder& b, ValueId x) {
  static constexpr double kMaxLog = 7.09782712893383996843E2;
  static constexpr double kP[] = {
      2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
      4.86371970985681366614E1,   1.96520832956077098242E2,  5.26445194995477358631E2,
      9.34528527171957607540E2,   1.02755188689515710272E3,  5.57535335369399327526E2};
  static constexpr double kQ[] = {
      1.00000000000000000000E0, 1.32281951154744992508E1, 8.67072140885989742329E1,
      3.54937778887819891062E2, 9.75708501743205489753E2, 1.82390916687909736289E3,
      2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2};
  static constexpr double kR[] = {5.64189583547755073984E-1, 1.27536670759978104416E0,
                                  5.01905042251180477414E0,  6.16021097993053585195E0,
                                  7.40974269950448939160E0,  2.97886665372100240670E0};
  static constexpr double kS[] = {1.00000000000000000000E0, 2.26052863220117276590E0,
                                  9.39603524938001434673E0, 1.20489539808096656605E1,
                                  1.70814450747565897222E1, 9.60896809063285878198E0,
                                  3.36907645100081516050E0};
  ValueId z = b.Neg(b.Mul(x, x));
  ValueId exp_z = b.Exp(z);
  ValueId ax = b.Abs(x);
  ValueId below8 = b.Div(b.Mul(exp_z, b.Polynomial(ax, kP)), b.Polynomial(ax, kQ));
  ValueId above8 = b.Div(b.Mul(exp_z, b.Polynomial(ax, kR)), b.Polynomial(ax, kS));
  ValueId approx = b.Select(b.Compare(ax, b.Constant(8.0, x), kLT), below8, above8);
  ValueId zero = b.Constant(0.0, x);
  approx = b.Select(b.Compare(z, b.Constant(-kMaxLog, x), kLT), zero, approx);
  return b.Select(b.Compare(x, zero, kLT), b.Sub(b.Constant(2.0, x), approx), approx);
}

// Cephes: erf(x) = x T(x^2) / U(x^2) for |x| <= 1.
ValueId ErfSmallF64(Builder& b, ValueId x) {
  static constexpr double kT[] = {9.60497373987051638749E0, 9.00260197203842689217E1,
                                  2.23200534594684319226E3, 7.00332514112805075473E3,
                                  5.55923013010394962768E4};
  static constexpr double kU[] = {1.00000000000000000000E0, 3.35617141647503099647E1,
                                  5.21357949780152679795E2, 4.59432382970980127987E3,
                                  2.26290000613890934246E4, 4.92673942608635921086E4};
  ValueId x2 = b.Mul(x, x);
  return b.Div(b.Mul(x, b.Polynomial(x2, kT)), b.Polynomial(x2, kU));
}

ValueId ErfF64(Builder& b, ValueId x) {
  ValueId one = b.Constant(1.0, x);
  ValueId small = ErfSmallF64(b, x);
  ValueId large = b.Sub(one, ErfcLargeF64(b, x));
  return b.Select(b.Compare(b.Abs(x), one, kLT), small, large);
}

ValueId ErfcF64(Builder& b, ValueId x) {
  ValueId one = b.Constant(1.0, x);
  ValueId large = ErfcLargeF64(b, x);
  ValueId small = b.Sub(one, ErfSmallF64(b, x));
  return b.Select(b.Compare(b.Abs(x), one, kLT), small, large);
}

// Giles' double-precision erfinv: three polynomials in w = -log1p(-x^2) (w < 6.25, < 16,
// beyond), evaluated as one Horner chain whose last steps apply only in the lower ranges.
ValueId ErfInvF64(Builder& b, ValueId x) {
  static constexpr double kLt625[] = {
      -3.6444120640178196996e-21, -1.685059138182016589e-19,  1.2858480715256400167e-18,
      1.115787767802518096e-17,   -1.333171662854620906e-16,  2.0972767875968561637e-17,
      6.6376381343583238325e-15,  -4.0545662729752068639e-14, -8.1519341976054721522e-14,
      2.6335093153082322977e-12,  -1.2975133253453532498e-11, -5.4154120542946279317e-11,
      1.051212273321532285e-09,   -4.1126339803469836976e-09, -2.9070369957882005086e-08,
      4.2347877827932403518e-07,  -1.3654692000834678645e-06, -1.3882523362786468719e-05,
      0.0001867342080340571352,   -0.00074070253416626697512, -0.0060336708714301490533,
      0.24015818242558961693,     1.6536545626831027356};
  static constexpr double kLt16[] = {
      2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
      1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
      2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
      6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
      0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
      -0.0037512085075692412107, 0.005370914553590063617,   1.0052589676941592334,
      3.0838856104922207635};
  static constexpr double kGe16[] = {
      -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
      -3.7894654401267369937e-09, 7.6157012080783393804e-09,  -1.4960026627149240478e-08,
      2.9147953450901080826e-08,  -6.7711997758452339498e-08, 2.2900482228026654717e-07,
      -9.9298272942317002539e-07, 4.5260625972231537039e-06,  -1.9681778105531670567e-05,
      7.5995277030017761139e-05,  -0.00021503011930044477347, -0.00013871931833623122026,
      1.0103004648645343977,      4.8499064014085844221};
  ValueId w = b.Neg(b.Log1p(b.Mul(x, b.Neg(x))));
  ValueId lt625 = b.Compare(w, b.Constant(6.25, x), kLT);
  ValueId lt16 = b.Compare(w, b.Constant(16.0, x), kLT);
  auto coefficient = [&](size_t i) {
    ValueId c = b.Constant(kLt625[i], x);
    if (i < std::size(kLt16)) c = b.Select(lt625, c, b.Constant(kLt16[i], x));
    if (i < std::size(kGe16)) c = b.Select(lt16, c, b.Constant(kGe16[i], x));
    return c;
  };
  ValueId shifted = b.Sub(b.Sqrt(w), b.Select(lt16, b.Constant(3.25, x), b.Constant(5.0, x)));
  w = b.Select(lt625, b.Sub(w, b.Constant(3.125, x)), shifted);
  ValueId p = coefficient(0);
  for (size_t i = 1; i < std::size(kGe16); ++i) p = b.Add(coefficient(i), b.Mul(p, w));
  for (size_t i = std::size(kGe16); i < std::size(kLt16); ++i)
    p = b.Select(lt16, b.Add(coefficient(i), b.Mul(p, w)), p);
  for (size_t i = std::size(kLt16); i < std::size(kLt625); ++i) {
    p = b.Select(lt625, b.Add(coefficient(i), b.Mul(p, w)), p);
  }
  ValueId result = b.Mul(p, x);
  ValueId at_one = b.Compare(b.Abs(x), b.Constant(1.0, x), kEQ);
  return b.Select(at_one, b.Mul(x, b.Constant(std::numeric_limits<double>::infinity(), x)), result);
}

//===--- lgamma, digamma (Lanczos, g = 7) -----------------------------------------===//

constexpr double kLanczosGamma = 7;
constexpr double kLanczosBase = 0.99999999999980993227684700473478;
constexpr double kLanczos[] = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

ValueId Lgamma(Builder& b, ValueId x) {
  const double pi = std::numbers::pi;
  ValueId half = b.Constant(0.5, x);
  ValueId reflect = b.Compare(x, half, kLT);
  ValueId one = b.Constant(1.0, x);
  ValueId z = b.Select(reflect, b.Neg(x), b.Sub(x, one));
  ValueId a = b.Constant(kLanczosBase, x);
  for (size_t i = 0; i < std::size(kLanczos); ++i) {
    a = b.Add(
        a, b.Div(b.Constant(kLanczos[i], x), b.Add(z, b.Constant(static_cast<double>(i + 1), x))));
  }
  ValueId g_half = b.Constant(kLanczosGamma + 0.5, x);
  ValueId t = b.Add(g_half, z);
  ValueId log_t = b.Add(b.Constant(std::log(kLanczosGamma + 0.5), x), b.Log1p(b.Div(z, g_half)));
  ValueId r = b.Mul(b.Sub(b.Add(z, half), b.Div(t, log_t)), log_t);
  ValueId lgamma = b.Add(b.Add(b.Constant((std::log(2.0) + std::log(pi)) / 2, x), r), b.Log(a));
  // Reflection: lgamma(x) = log(pi) - log|sin(pi x)| - lgamma(1 - x), with the fractional
  // part folded into [0, 1/2] for accuracy.
  ValueId ax = b.Abs(x);
  ValueId frac = b.Sub(ax, b.Floor(ax));
  frac = b.Select(b.Compare(half, frac, kLT), b.Sub(one, frac), frac);
  ValueId denom = b.Log(b.Un(OpCode::kSine, b.Mul(b.Constant(pi, x), frac)));
  ValueId reflected = b.Sub(b.Sub(b.Constant(std::log(pi), x), denom), lgamma);
  ir::Type pred = b.TypeOf(denom);
  pred.dtype = DType::kPred;
  reflected = b.Select(b.Emit(OpCode::kIsFinite, {denom}, pred), reflected, b.Neg(denom));
  lgamma = b.Select(reflect, reflected, lgamma);
  ValueId inf = b.Constant(std::numeric_limits<double>::infinity(), x);
  ValueId is_inf = b.Compare(b.Abs(x), inf, kEQ);
  return b.Select(is_inf, inf, lgamma);
}

ValueId Digamma(Builder& b, ValueId x) {
  const double pi = std::numbers::pi;
  ValueId half = b.Constant(0.5, x);
  ValueId reflect = b.Compare(x, half, kLT);
  ValueId one = b.Constant(1.0, x);
  ValueId z = b.Select(reflect, b.Neg(x), b.Sub(x, one));
  ValueId zero = b.Constant(0.0, x);
  ValueId a = b.Constant(kLanczosBase, x);
  ValueId a_prime = zero;
  for (size_t i = 0; i < std::size(kLanczos); ++i) {
    ValueId c = b.Constant(kLanczos[i], x);
    ValueId zi = b.Add(z, b.Constant(static_cast<double>(i + 1), x));
    a_prime = b.Sub(a_prime, b.Div(c, b.Mul(zi, zi)));
    a = b.Add(a, b.Div(c, zi));
  }
  ValueId g_half = b.Constant(kLanczosGamma + 0.5, x);
  ValueId t = b.Add(g_half, z);
  ValueId log_t = b.Add(b.Constant(std::log(kLanczosGamma + 0.5), x), b.Log1p(b.Div(z, g_half)));
  ValueId digamma = b.Sub(b.Add(log_t, b.Div(a_prime, a)), b.Div(b.Constant(kLanczosGamma, x), t));
  // Reflection: digamma(x) = digamma(1 - x) - pi cot(pi x), with x reduced for accuracy.
  ValueId reduced = b.Add(x, b.Abs(b.Floor(b.Add(x, half))));
  ValueId pi_c = b.Constant(pi, x);
  ValueId angle = b.Mul(pi_c, reduced);
  ValueId reflected =
      b.Sub(digamma, b.Div(b.Mul(pi_c, b.Un(OpCode::kCosine, angle)), b.Un(OpCode::kSine, angle)));
  digamma = b.Select(reflect, reflected, digamma);
  ValueId pole = b.And(b.Compare(x, zero, kLE), b.Compare(x, b.Floor(x), kEQ));
  return b.Select(pole, b.Constant(std::numeric_limits<double>::quiet_NaN(), x), digamma);
}

//===--- hyperbolic and inverse trigonometric -------------------------------------===//

ValueId SinhLarge(Builder& b, ValueId x) {
  ValueId log_half = b.Log(b.Constant(0.5, x));
  return b.Sub(b.Exp(b.Add(x, log_half)), b.Exp(b.Sub(log_half, x)));
}

ValueId Sinh(Builder& b, ValueId x) {
  ValueId large = SinhLarge(b, x);
  // (expm1(x) + expm1(x) / (expm1(x) + 1)) / 2 avoids cancellation for |x| < 1.
  ValueId em1 = b.Un(OpCode::kExponentialMinusOne, x);
  ValueId one = b.Constant(1.0, x);
  ValueId small = b.Mul(b.Constant(0.5, x), b.Add(em1, b.Div(em1, b.Add(em1, one))));
  return b.Select(b.Compare(b.Abs(x), one, kLT), small, large);
}

ValueId Cosh(Builder& b, ValueId x) {
  ValueId log_half = b.Log(b.Constant(0.5, x));
  return b.Add(b.Exp(b.Add(x, log_half)), b.Exp(b.Sub(log_half, x)));
}

ValueId Tan(Builder& b, ValueId x) { return b.Un(OpCode::kTan, x); }

ValueId Atan(Builder& b, ValueId x) { return b.Bin(OpCode::kAtan2, x, b.Constant(1.0, x)); }

// asin(x) = 2 atan2(x, 1 + sqrt((1 - x)(1 + x))).
ValueId Asin(Builder& b, ValueId x) {
  ValueId one = b.Constant(1.0, x);
  ValueId ta = b.Bin(OpCode::kAtan2, x, b.Add(one, b.Sqrt(b.Mul(b.Sub(one, x), b.Add(one, x)))));
  return b.Add(ta, ta);
}

// acos(x) = atan2(sqrt((1 - x)(1 + x)), x).
ValueId Acos(Builder& b, ValueId x) {
  ValueId one = b.Constant(1.0, x);
  return b.Bin(OpCode::kAtan2, b.Sqrt(b.Mul(b.Sub(one, x), b.Add(one, x))), x);
}

// asinh(x) = sign(x) (log 2 + log|x|) for |x| >= sqrt(max), else
// sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))).
ValueId Asinh(Builder& b, ValueId x) {
  ValueId ax = b.Abs(x);
  ValueId large = b.Compare(ax, b.Sqrt(b.Constant(b.Largest(x), x)), kGE);
  ValueId big = b.Add(b.Log(b.Constant(2.0, x)), b.Log(ax));
  ValueId ax2 = b.Mul(ax, ax);
  ValueId one = b.Constant(1.0, x);
  ValueId small = b.Log1p(b.Add(ax, b.Div(ax2, b.Add(one, b.Sqrt(b.Add(one, ax2))))));
  return b.Mul(b.Un(OpCode::kSign, x), b.Select(large, big, small));
}

// acosh(x) = log 2 + log x for x >= max / 2, else log1p(sqrt(x - 1) (sqrt(x + 1) + sqrt(x - 1))).
ValueId Acosh(Builder& b, ValueId x) {
  ValueId two = b.Constant(2.0, x);
  ValueId large = b.Compare(x, b.Div(b.Constant(b.Largest(x), x), two), kGE);
  ValueId big = b.Add(b.Log(two), b.Log(x));
  ValueId one = b.Constant(1.0, x);
  ValueId sm1 = b.Sqrt(b.Sub(x, one));
  ValueId small = b.Log1p(b.Mul(sm1, b.Add(b.Sqrt(b.Add(x, one)), sm1)));
  return b.Select(large, big, small);
}

// atanh(x) = (log1p(x) - log1p(-x)) / 2, NaN for |x| > 1.
ValueId Atanh(Builder& b, ValueId x) {
  ValueId outside = b.Compare(b.Abs(x), b.Constant(1.0, x), kGT);
  ValueId value = b.Mul(b.Sub(b.Log1p(x), b.Log1p(b.Neg(x))), b.Constant(0.5, x));
  return b.Select(outside, b.Constant(std::numeric_limits<double>::quiet_NaN(), x), value);
}

//===--- complex asin, acos, asinh, acosh, atan, atanh ------------------------------===//

// Kahan's formulas ("Branch cuts for complex elementary functions", 1987), on the real and
// imaginary parts: no cancellation near 0, +-1 or the branch cuts, the branch cuts where
// C99 and numpy put them, and zeros on the cuts read as XLA's CPU backend reads them. Where
// the products would overflow, the asymptotic forms (exact to the last bit there) take over.
// The square roots are StableHLO's complex sqrt. Within a few ulps of XLA's results over
// the whole finite plane (tests/jax/test_mlir_text.py), except that near z = +-1 with a
// tiny y, where XLA's squares underflow to an infinite atanh, these stay finite and exact.
struct Parts {
  ValueId re, im;
};

ir::Type PartType(const ir::Type& complex) {
  return ir::Type::Tensor(complex.dtype == DType::kC64 ? DType::kF32 : DType::kF64, complex.dims);
}

Parts Split(Builder& b, ValueId z) {
  const ir::Type part = PartType(b.TypeOf(z));
  return {b.Emit(OpCode::kReal, {z}, part), b.Emit(OpCode::kImag, {z}, part)};
}

ValueId Join(Builder& b, Parts z, const ir::Type& complex) { return b.Emit(OpCode::kComplex, {z.re, z.im}, complex); }

// The principal square root: its real part is never negative (a polar-form sqrt can round it
// below zero on the negative real axis, which would flip signs downstream).
Parts ComplexSqrt(Builder& b, Parts z, const ir::Type& complex) {
  Parts root = Split(b, b.Sqrt(Join(b, z, complex)));
  return {b.Abs(root.re), root.im};
}

// XLA's CPU backend takes a zero imaginary part on the real axis's cuts (a zero real part on
// the imaginary axis's) as +0 for asin, acos, asinh and acosh: x + 0 and y + 0 drop the sign.
Parts DropZeroSigns(Builder& b, Parts z) {
  ValueId zero = b.Constant(0.0, z.re);
  return {b.Add(z.re, zero), b.Add(z.im, zero)};
}

// log 2 + log|z| (what asinh(|z|) tends to), with |z| scaled by max(|x|, |y|); and whether
// max(|x|, |y|) is beyond sqrt(max), where Kahan's products would overflow and log(2|z|) is
// exact to the last bit.
std::pair<ValueId, ValueId> LogTwiceAbs(Builder& b, Parts z) {
  ValueId ax = b.Abs(z.re), ay = b.Abs(z.im);
  ValueId m = b.Bin(OpCode::kMaximum, ax, ay);
  ValueId r = b.Div(b.Bin(OpCode::kMinimum, ax, ay), m);
  ValueId log = b.Add(b.Add(b.Log(b.Constant(2.0, z.re)), b.Log(m)),
                      b.Mul(b.Constant(0.5, z.re), b.Log1p(b.Mul(r, r))));
  ValueId large = b.Compare(m, b.Sqrt(b.Constant(b.Largest(z.re), z.re)), kGT);
  return {log, large};
}

// +-v with the sign of y (+ for y = 0).
ValueId WithSignOf(Builder& b, ValueId y, ValueId v) {
  return b.Select(b.Compare(y, b.Constant(0.0, y), kLT), b.Neg(v), v);
}

// asin(z) = atan(x / Re(s1 s2)) + i asinh(Im(conj(s1) s2)), s1 = sqrt(1 - z), s2 = sqrt(1 + z).
Parts ComplexAsin(Builder& b, Parts z, const ir::Type& complex) {
  z = DropZeroSigns(b, z);
  ValueId one = b.Constant(1.0, z.re);
  Parts s1 = ComplexSqrt(b, {b.Sub(one, z.re), b.Neg(z.im)}, complex);
  Parts s2 = ComplexSqrt(b, {b.Add(one, z.re), z.im}, complex);
  ValueId re = b.Bin(OpCode::kAtan2, z.re, b.Sub(b.Mul(s1.re, s2.re), b.Mul(s1.im, s2.im)));
  auto [log, large] = LogTwiceAbs(b, z);
  ValueId im = Asinh(b, b.Sub(b.Mul(s1.re, s2.im), b.Mul(s1.im, s2.re)));
  return {re, b.Select(large, WithSignOf(b, z.im, log), im)};
}

// acos(z) = 2 atan(Re(s1) / Re(s2)) + i asinh(Im(conj(s2) s1)), s1, s2 as for asin.
Parts ComplexAcos(Builder& b, Parts z, const ir::Type& complex) {
  z = DropZeroSigns(b, z);
  ValueId one = b.Constant(1.0, z.re);
  Parts s1 = ComplexSqrt(b, {b.Sub(one, z.re), b.Neg(z.im)}, complex);
  Parts s2 = ComplexSqrt(b, {b.Add(one, z.re), z.im}, complex);
  ValueId half = b.Bin(OpCode::kAtan2, s1.re, s2.re);
  auto [log, large] = LogTwiceAbs(b, z);
  ValueId im = Asinh(b, b.Sub(b.Mul(s2.re, s1.im), b.Mul(s2.im, s1.re)));
  return {b.Add(half, half), b.Select(large, b.Neg(WithSignOf(b, z.im, log)), im)};
}

// acosh(z) = asinh(Re(conj(s1) s2)) + 2i atan(Im(s1) / Re(s2)), s1 = sqrt(z - 1), s2 = sqrt(z + 1).
Parts ComplexAcosh(Builder& b, Parts z, const ir::Type& complex) {
  z = DropZeroSigns(b, z);
  ValueId one = b.Constant(1.0, z.re);
  Parts s1 = ComplexSqrt(b, {b.Sub(z.re, one), z.im}, complex);
  Parts s2 = ComplexSqrt(b, {b.Add(z.re, one), z.im}, complex);
  ValueId half = b.Bin(OpCode::kAtan2, s1.im, s2.re);
  auto [log, large] = LogTwiceAbs(b, z);
  ValueId re = Asinh(b, b.Add(b.Mul(s1.re, s2.re), b.Mul(s1.im, s2.im)));
  return {b.Select(large, log, re), b.Add(half, half)};
}

// atanh(z) = sign(x) log1p(4|x| / ((1 - |x|)^2 + y^2)) / 4 + i atan2(2y, (1 - |x|)(1 + |x|) - y^2) / 2,
// computed on |x| (no cancellation near x = -1), with the sign of a zero y kept (as XLA's CPU
// backend does). Beyond 2^48 (f32) / 2^106 (f64), where XLA switches too and the next term
// is below the last bit: Re = |x| / (x^2 + y^2) and Im = +-atan2(2|y|, 1 - x^2 - y^2) / 2
// (+ for y = 0), both arguments scaled by 1 / max(|x|, |y|).
Parts ComplexAtanh(Builder& b, Parts z, const ir::Type& complex) {
  ValueId x = z.re, y = z.im;
  ValueId ax = b.Abs(x), ay = b.Abs(y);
  ValueId one = b.Constant(1.0, x), two = b.Constant(2.0, x), quarter = b.Constant(0.25, x), half = b.Constant(0.5, x);
  ValueId m = b.Bin(OpCode::kMaximum, ax, ay);
  const double threshold = b.TypeOf(x).dtype == DType::kF64 ? 0x1p106 : 0x1p48;
  ValueId large = b.Compare(m, b.Constant(threshold, x), kGT);
  // Small and moderate |z|.
  ValueId omx = b.Sub(one, ax);
  ValueId y2 = b.Mul(y, y);
  ValueId d = b.Add(b.Mul(omx, omx), y2);
  ValueId re_small = b.Mul(quarter, b.Log1p(b.Div(b.Mul(b.Constant(4.0, x), ax), d)));
  // Near +-1 the squares can underflow (d below the smallest normal): there
  // Re = (log(1 + |x|) - log(hypot(1 - |x|, y))) / 2, the hypot scaled.
  ValueId h_max = b.Bin(OpCode::kMaximum, b.Abs(omx), ay), h_min = b.Bin(OpCode::kMinimum, b.Abs(omx), ay);
  ValueId ratio = b.Div(h_min, h_max);
  ValueId hypot = b.Mul(h_max, b.Sqrt(b.Add(one, b.Mul(ratio, ratio))));
  ValueId re_tiny = b.Mul(half, b.Sub(b.Log(b.Add(one, ax)), b.Log(hypot)));
  ValueId underflow = b.And(b.Compare(d, b.Constant(b.Smallest(x), x), kLT), b.Compare(h_max, b.Constant(0.0, x), kGT));
  re_small = b.Select(underflow, re_tiny, re_small);
  ValueId im_small = b.Bin(OpCode::kAtan2, b.Mul(two, y), b.Sub(b.Mul(omx, b.Add(one, ax)), y2));
  // Large |z| (m >= 1 here, so the scaled parts are at most 1).
  ValueId sx = b.Div(ax, m), sy = b.Div(y, m);
  ValueId n = b.Add(b.Mul(sx, sx), b.Mul(sy, sy));
  ValueId re_large = b.Div(b.Div(sx, m), n);
  ValueId im_large = WithSignOf(b, y, b.Bin(OpCode::kAtan2, b.Mul(two, b.Div(ay, m)), b.Neg(b.Mul(m, n))));
  ValueId re = b.Mul(b.Select(large, re_large, re_small), b.Un(OpCode::kSign, x));
  return {re, b.Mul(half, b.Select(large, im_large, im_small))};
}

// The odd functions of iz: asinh(z) = -i asin(iz), atan(z) = -i atanh(iz).
Parts TimesI(Builder& b, Parts z) { return {b.Neg(z.im), z.re}; }
Parts TimesMinusI(Parts z, Builder& b) { return {z.im, b.Neg(z.re)}; }

// The complex expansion of `name` (one of the six), or nullopt.
std::optional<ValueId> ComplexInverseTrig(Builder& b, std::string_view name, ValueId operand) {
  const ir::Type complex = b.TypeOf(operand);
  Parts z = Split(b, operand);
  Parts r;
  if (name == "chlo.asin") {
    r = ComplexAsin(b, z, complex);
  } else if (name == "chlo.acos") {
    r = ComplexAcos(b, z, complex);
  } else if (name == "chlo.acosh") {
    r = ComplexAcosh(b, z, complex);
  } else if (name == "chlo.atanh") {
    r = ComplexAtanh(b, z, complex);
  } else if (name == "chlo.asinh") {
    r = TimesMinusI(ComplexAsin(b, TimesI(b, z), complex), b);
  } else if (name == "chlo.atan") {
    r = TimesMinusI(ComplexAtanh(b, TimesI(b, z), complex), b);
  } else {
    return std::nullopt;
  }
  return Join(b, r, complex);
}

//===--- mulhi ---------------------------------------------------------------------===//

// The high half of the double-width product of two N-bit integers. Below 64 bits: widen,
// multiply, shift right by N (arithmetic for signed types), narrow. 64 bits: the unsigned
// product from four 32-bit partial products with their carries, then for signed types
// hi(x y) = hi_unsigned(x, y) - (x < 0 ? y : 0) - (y < 0 ? x : 0).
ValueId Mulhi(Builder& b, ValueId x, ValueId y) {
  const ir::Type type = b.TypeOf(x);
  const bool is_signed = DTypeKindOf(type.dtype) == DTypeKind::kSigned;
  const int bits = DTypeByteSize(type.dtype) * 8;
  auto constant = [&](int64_t value, ValueId like) { return b.ConstantOfInt(value, b.TypeOf(like)); };
  if (bits < 64) {
    static constexpr DType kSignedWide[] = {DType::kS16, DType::kS32, DType::kS64};
    static constexpr DType kUnsignedWide[] = {DType::kU16, DType::kU32, DType::kU64};
    const int index = bits == 8 ? 0 : bits == 16 ? 1 : 2;
    const DType wide = is_signed ? kSignedWide[index] : kUnsignedWide[index];
    ValueId product = b.Mul(b.Convert(x, wide), b.Convert(y, wide));
    ValueId high = b.Bin(is_signed ? OpCode::kShiftRightArithmetic : OpCode::kShiftRightLogical, product,
                         constant(bits, product));
    return b.Convert(high, type.dtype);
  }
  ValueId ux = is_signed ? b.Convert(x, DType::kU64) : x, uy = is_signed ? b.Convert(y, DType::kU64) : y;
  ValueId mask = constant(0xFFFFFFFF, ux), shift = constant(32, ux);
  auto low = [&](ValueId v) { return b.And(v, mask); };
  auto high = [&](ValueId v) { return b.Bin(OpCode::kShiftRightLogical, v, shift); };
  ValueId x_lo = low(ux), x_hi = high(ux), y_lo = low(uy), y_hi = high(uy);
  ValueId lo_lo = b.Mul(x_lo, y_lo), lo_hi = b.Mul(x_lo, y_hi), hi_lo = b.Mul(x_hi, y_lo), hi_hi = b.Mul(x_hi, y_hi);
  ValueId cross = b.Add(b.Add(low(lo_hi), low(hi_lo)), high(lo_lo));
  ValueId result = b.Add(hi_hi, b.Add(high(lo_hi), b.Add(high(hi_lo), high(cross))));
  if (!is_signed) return result;
  result = b.Convert(result, type.dtype);
  ValueId x_sign = b.Bin(OpCode::kShiftRightArithmetic, x, constant(63, x));  // -1 or 0
  ValueId y_sign = b.Bin(OpCode::kShiftRightArithmetic, y, constant(63, y));
  return b.Add(result, b.Add(b.Mul(x_sign, y), b.Mul(y_sign, x)));
}

//===--- bessel_i1e (Cephes, Chebyshev series) ------------------------------------===//

// Clenshaw's recurrence for a Chebyshev series, highest coefficient first.
template <typename T, size_t N>
ValueId Chebyshev(Builder& b, ValueId x, const T (&coefficients)[N]) {
  ValueId b0 = b.Constant(0.0, x), b1 = b0, b2 = b0;
  for (T c : coefficients) {
    b2 = b1;
    b1 = b0;
    b0 = b.Add(b.Sub(b.Mul(x, b1), b2), b.Constant(c, x));
  }
  return b.Mul(b.Sub(b0, b2), b.Constant(0.5, x));
}

// i1e(x) = sign(x) |x| A(|x|/2 - 2) for |x| <= 8, sign(x) B(32/|x| - 2) / sqrt|x| beyond.
template <typename T, size_t NA, size_t NB>
ValueId BesselI1e(Builder& b, ValueId x, const T (&a)[NA], const T (&bc)[NB]) {
  ValueId z = b.Abs(x);
  ValueId two = b.Constant(2.0, x);
  ValueId small = b.Mul(z, Chebyshev(b, b.Sub(b.Mul(b.Constant(0.5, x), z), two), a));
  ValueId large = b.Div(Chebyshev(b, b.Sub(b.Div(b.Constant(32.0, x), z), two), bc), b.Sqrt(z));
  ValueId le8 = b.Compare(z, b.Constant(8.0, x), kLE);
  return b.Mul(b.Un(OpCode::kSign, x), b.Select(le8, small, large));
}

ValueId BesselI1eF32(Builder& b, ValueId x) {
  static constexpr float kA[] = {
      9.38153738649577178388E-9f,  -4.44505912879632808065E-8f, 2.00329475355213526229E-7f,
      -8.56872026469545474066E-7f, 3.47025130813767847674E-6f,  -1.32731636560394358279E-5f,
      4.78156510755005422638E-5f,  -1.61760815825896745588E-4f, 5.12285956168575772895E-4f,
      -1.51357245063125314899E-3f, 4.15642294431288815669E-3f,  -1.05640848946261981558E-2f,
      2.47264490306265168283E-2f,  -5.29459812080949914269E-2f, 1.02643658689847095384E-1f,
      -1.76416518357834055153E-1f, 2.52587186443633654823E-1f};
  static constexpr float kB[] = {-3.83538038596423702205E-9f, -2.63146884688951950684E-8f,
                                 -2.51223623787020892529E-7f, -3.88256480887769039346E-6f,
                                 -1.10588938762623716291E-4f, -9.76109749136146840777E-3f,
                                 7.78576235018280120474E-1f};
  return BesselI1e(b, x, kA, kB);
}

ValueId BesselI1eF64(Builder& b, ValueId x) {
  static constexpr double kA[] = {
      2.77791411276104639959E-18,  -2.11142121435816608115E-17, 1.55363195773620046921E-16,
      -1.10559694773538630805E-15, 7.60068429473540693410E-15,  -5.04218550472791168711E-14,
      3.22379336594557470981E-13,  -1.98397439776494371520E-12, 1.17361862988909016308E-11,
      -6.66348972350202774223E-11, 3.62559028155211703701E-10,  -1.88724975172282928790E-9,
      9.38153738649577178388E-9,   -4.44505912879632808065E-8,  2.00329475355213526229E-7,
      -8.56872026469545474066E-7,  3.47025130813767847674E-6,   -1.32731636560394358279E-5,
      4.78156510755005422638E-5,   -1.61760815825896745588E-4,  5.12285956168575772895E-4,
      -1.51357245063125314899E-3,  4.15642294431288815669E-3,   -1.05640848946261981558E-2,
      2.47264490306265168283E-2,   -5.29459812080949914269E-2,  1.02643658689847095384E-1,
      -1.76416518357834055153E-1,  2.52587186443633654823E-1};
  static constexpr double kB[] = {
      7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
      -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
      -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
      4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
      -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
      3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
      -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
      -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
      7.78576235018280120474E-1};
  return BesselI1e(b, x, kA, kB);
}

//===--- zeta, polygamma, next_after ----------------------------------------------===//

// Hurwitz zeta(x, q): a power sum of 10 terms plus the Euler-Maclaurin tail (12 terms).
ValueId Zeta(Builder& b, ValueId x, ValueId q) {
  static constexpr int kTerms = 12;
  static constexpr int kIters = 9;
  static constexpr double kCoefficients[kTerms] = {-7.1661652561756670113e18,
                                                   1.8152105401943546773e17,
                                                   -4.5979787224074726105e15,
                                                   1.1646782814350067249e14,
                                                   -2.950130727918164224e12,
                                                   7.47242496e10,
                                                   -1.8924375803183791606e9,
                                                   47900160.0,
                                                   -1209600.0,
                                                   30240.0,
                                                   -720.0,
                                                   12.0};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double smallest = b.TypeOf(x).dtype == DType::kF64
                              ? std::numeric_limits<double>::denorm_min()
                              : std::numeric_limits<float>::denorm_min();
  ValueId zero = b.Constant(0.0, q);
  ValueId one = b.Constant(1.0, q);
  ValueId acc = q;
  ValueId neg_x = b.Neg(x);
  ValueId power_sum = b.Bin(OpCode::kPower, q, neg_x);
  for (int i = 0; i < kIters; ++i) {
    acc = b.Add(acc, one);
    power_sum = b.Add(power_sum, b.Bin(OpCode::kPower, acc, neg_x));
  }
  acc = b.Add(acc, one);
  ValueId q_neg_power = b.Bin(OpCode::kPower, acc, neg_x);
  ValueId correction = b.Div(b.Mul(q_neg_power, acc), b.Sub(x, one));
  ValueId inv_acc2 = b.Div(one, b.Mul(acc, acc));
  ValueId horner_sum = zero;
  constexpr int kTwoTermsMinusOne = 2 * kTerms - 1;
  for (int i = 0; i < kTerms - 1; ++i) {
    ValueId lhs = b.Add(x, b.Constant(kTwoTermsMinusOne - 1 - 2 * i, x));
    ValueId rhs = b.Add(x, b.Constant(kTwoTermsMinusOne - 2 - 2 * i, x));
    ValueId product = b.Mul(lhs, rhs);
    horner_sum =
        b.Mul(product, b.Mul(inv_acc2, b.Add(horner_sum, b.Constant(1.0 / kCoefficients[i], acc))));
  }
  ValueId tail =
      b.Mul(q_neg_power,
            b.Add(b.Constant(0.5, q),
                  b.Mul(b.Div(x, acc),
                        b.Add(b.Constant(1.0 / kCoefficients[kTerms - 1], acc), horner_sum))));
  ValueId accurate = b.Add(b.Add(power_sum, correction), tail);
  ValueId output = b.Select(
      b.Compare(b.Abs(q_neg_power), b.Mul(b.Abs(power_sum), b.Constant(smallest, acc)), kLT),
      power_sum, accurate);
  ValueId nan_c = b.Constant(nan, x);
  output = b.Select(b.Compare(x, one, kLT), nan_c, output);
  ValueId q_le_zero = b.Compare(q, zero, kLE);
  ValueId x_not_int = b.Compare(x, b.Floor(x), kNE);
  output = b.Select(b.And(q_le_zero, x_not_int), nan_c, output);
  ValueId inf = b.Constant(std::numeric_limits<double>::infinity(), x);
  ValueId at_pole = b.And(q_le_zero, b.Compare(q, b.Floor(q), kEQ));
  ValueId two = b.Constant(2.0, x);
  ValueId x_even_int =
      b.And(b.Compare(x, b.Floor(x), kEQ), b.Compare(b.Bin(OpCode::kRemainder, x, two), zero, kEQ));
  output = b.Select(at_pole, b.Select(x_even_int, inf, nan_c), output);
  return b.Select(b.Compare(x, one, kEQ), inf, output);
}

// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x); digamma for n = 0; NaN unless n is a
// natural number.
ValueId Polygamma(Builder& b, ValueId n, ValueId x) {
  ValueId one = b.Constant(1.0, x);
  ValueId two = b.Constant(2.0, x);
  ValueId sign = b.Sub(b.Mul(two, b.Bin(OpCode::kRemainder, n, two)), one);
  ValueId n1 = b.Add(n, one);
  ValueId result = b.Mul(b.Mul(sign, b.Exp(Lgamma(b, n1))), Zeta(b, n1, x));
  ValueId zero = b.Constant(0.0, x);
  result = b.Select(b.Compare(n, zero, kEQ), Digamma(b, x), result);
  ValueId non_natural = b.Bin(OpCode::kOr, b.Compare(n, b.Floor(n), kNE), b.Compare(n, zero, kLT));
  return b.Select(non_natural, b.Constant(std::numeric_limits<double>::quiet_NaN(), x), result);
}

// The next representable value after x towards y, on the bit patterns.
ValueId NextAfter(Builder& b, ValueId x, ValueId y) {
  const ir::Type type = b.TypeOf(x);
  const int bits = DTypeBitWidth(type.dtype);
  const DType int_type = bits == 64 ? DType::kS64 : bits == 32 ? DType::kS32 : DType::kS16;
  const ir::Type it = ir::Type::Tensor(int_type, type.dims);
  ValueId xi = b.Emit(OpCode::kBitcastConvert, {x}, it);
  ValueId yi = b.Emit(OpCode::kBitcastConvert, {y}, it);
  ValueId nan_input = b.Bin(OpCode::kOr, b.Compare(x, x, kNE), b.Compare(y, y, kNE));
  // Quiet NaN patterns: f64, f32, f16, bf16.
  const int64_t nan_bits = type.dtype == DType::kF64   ? 0x7FF8000000000000LL
                           : type.dtype == DType::kF32 ? 0x7FC00000LL
                           : type.dtype == DType::kF16 ? 0x7E00LL
                                                       : 0x7FC0LL;
  ValueId nan_int = b.ConstantOfInt(nan_bits, it);
  const int64_t sign_bit = static_cast<int64_t>(uint64_t{1} << (bits - 1));
  const int64_t sign_value =
      bits == 64 ? sign_bit : (sign_bit | ~((int64_t{1} << bits) - 1));  // sign-extended
  ValueId sign_mask = b.ConstantOfInt(sign_value, it);
  ValueId magnitude_mask = b.ConstantOfInt(~sign_value, it);
  ValueId x_abs = b.And(xi, magnitude_mask);
  ValueId y_abs = b.And(yi, magnitude_mask);
  ValueId equal = b.Compare(x, y, kEQ);
  ValueId zero = b.ConstantOfInt(0, it);
  ValueId x_zero = b.Compare(x_abs, zero, kEQ);
  ValueId y_zero = b.Compare(y_abs, zero, kEQ);
  ValueId x_sign = b.And(xi, sign_mask);
  ValueId y_sign = b.And(yi, sign_mask);
  ValueId one = b.ConstantOfInt(1, it);
  ValueId from_zero = b.Bin(OpCode::kOr, y_sign, one);
  ValueId smaller =
      b.Bin(OpCode::kOr, b.Compare(x_abs, y_abs, kGT), b.Compare(x_sign, y_sign, kNE));
  ValueId result = b.Add(xi, b.Select(smaller, b.ConstantOfInt(-1, it), one));
  result = b.Select(x_zero, b.Select(y_zero, yi, from_zero), result);
  result = b.Select(equal, yi, result);
  result = b.Select(nan_input, nan_int, result);
  return b.Emit(OpCode::kBitcastConvert, {result}, type);
}

//===--- dispatch -----------------------------------------------------------------===//

// Unary float ops computed in f32 at least (f16/bf16 converted up and back), as the
// legalization's materializeWithUpcast does, except the ops its patterns rewrite in the
// operand's own type (tan, atan, asin, acos, asinh, acosh, atanh); f64 has its own
// expansion where the legalization has one.
struct FloatUnary {
  std::string_view name;
  Expansion f32;
  Expansion f64;
  bool upcast = true;  // f16/bf16 computed in f32; else in their own type
};
constexpr FloatUnary kFloatUnary[] = {
    {"chlo.erf", ErfF32, ErfF64},
    {"chlo.erfc", ErfcF32, ErfcF64},
    {"chlo.erf_inv", ErfInvF32, ErfInvF64},
    {"chlo.lgamma", Lgamma, Lgamma},
    {"chlo.digamma", Digamma, Digamma},
    {"chlo.sinh", Sinh, Sinh},
    {"chlo.cosh", Cosh, Cosh},
    {"chlo.tan", Tan, Tan, false},
    {"chlo.atan", Atan, Atan, false},
    {"chlo.asin", Asin, Asin, false},
    {"chlo.acos", Acos, Acos, false},
    {"chlo.asinh", Asinh, Asinh, false},
    {"chlo.acosh", Acosh, Acosh, false},
    {"chlo.atanh", Atanh, Atanh, false},
};

// chlo.broadcast_<op> -> the elementwise op on operands broadcast to the result's shape.
struct BroadcastBinary {
  std::string_view name;
  OpCode code;
};
constexpr BroadcastBinary kBroadcastBinary[] = {
    {"chlo.broadcast_add", OpCode::kAdd},
    {"chlo.broadcast_and", OpCode::kAnd},
    {"chlo.broadcast_atan2", OpCode::kAtan2},
    {"chlo.broadcast_complex", OpCode::kComplex},
    {"chlo.broadcast_divide", OpCode::kDivide},
    {"chlo.broadcast_maximum", OpCode::kMaximum},
    {"chlo.broadcast_minimum", OpCode::kMinimum},
    {"chlo.broadcast_multiply", OpCode::kMultiply},
    {"chlo.broadcast_or", OpCode::kOr},
    {"chlo.broadcast_power", OpCode::kPower},
    {"chlo.broadcast_remainder", OpCode::kRemainder},
    {"chlo.broadcast_shift_left", OpCode::kShiftLeft},
    {"chlo.broadcast_shift_right_arithmetic", OpCode::kShiftRightArithmetic},
    {"chlo.broadcast_shift_right_logical", OpCode::kShiftRightLogical},
    {"chlo.broadcast_subtract", OpCode::kSubtract},
    {"chlo.broadcast_xor", OpCode::kXor},
};

Status Unsupported(const ChloOp& op, const ir::Type& type) {
  return Unimplemented("CHLO op '" + std::string(op.name) + "' on " + ir::TypeToString(type) +
                       " is not supported");
}

Status CheckCounts(const ChloOp& op, size_t operands, size_t results) {
  if (op.operands.size() != operands || op.result_types.size() != results) {
    return InvalidArgument(std::string(op.name) + " expects " + std::to_string(operands) +
                           " operand(s) and " + std::to_string(results) + " result(s), got " +
                           std::to_string(op.operands.size()) + " and " +
                           std::to_string(op.result_types.size()));
  }
  for (const ir::Type& t : op.result_types) {
    if (!t.is_tensor()) return InvalidArgument(std::string(op.name) + " expects tensor results");
  }
  return OkStatus();
}

// `#chlo<comparison_direction LT>` (kept as text by the reader) or an enum value -> its
// number in `words` order; nullopt if neither.
std::optional<int64_t> EnumWord(const ir::Attribute& attr, ir::EnumKind kind,
                                std::initializer_list<std::string_view> words) {
  if (const auto* e = attr.get<ir::EnumValue>(); e && e->kind == kind) return e->value;
  const auto* opaque = attr.get<ir::OpaqueValue>();
  if (!opaque) return std::nullopt;
  std::string_view text = opaque->text;
  const size_t close = text.rfind('>');
  const size_t space = text.rfind(' ', close);
  if (close == std::string_view::npos || space == std::string_view::npos) return std::nullopt;
  std::string_view word = text.substr(space + 1, close - space - 1);
  int64_t i = 0;
  for (std::string_view w : words) {
    if (w == word) return i;
    ++i;
  }
  return std::nullopt;
}

bool IsF16Like(DType d) { return d == DType::kF16 || d == DType::kBF16; }

// Broadcasts `v` to `dims` (its own dtype): same rank maps dimension i to i, a lower rank
// uses `broadcast_dimensions` when given, else aligns trailing dimensions (numpy).
StatusOr<ValueId> BroadcastTo(Builder& b, const ChloOp& op, ValueId v, const Dims& dims,
                              const std::optional<std::vector<int64_t>>& broadcast_dimensions) {
  const ir::Type& t = b.TypeOf(v);
  if (!t.is_tensor()) return InvalidArgument(std::string(op.name) + " expects tensor operands");
  if (t.dims == dims) return v;
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> map;
  if (t.rank() == rank) {
    for (int64_t i = 0; i < rank; ++i) map.push_back(i);
  } else if (broadcast_dimensions &&
             static_cast<int64_t>(broadcast_dimensions->size()) == t.rank()) {
    map = *broadcast_dimensions;
  } else if (t.rank() < rank) {
    for (int64_t i = 0; i < t.rank(); ++i) map.push_back(rank - t.rank() + i);
  } else {
    return InvalidArgument(std::string(op.name) + ": operand " + ir::TypeToString(t) +
                           " has a higher rank than the result");
  }
  for (size_t i = 0; i < map.size(); ++i) {
    if (map[i] < 0 || map[i] >= rank ||
        (t.dims[i] != 1 && t.dims[i] != dims[static_cast<size_t>(map[i])])) {
      return InvalidArgument(std::string(op.name) + ": operand " + ir::TypeToString(t) +
                             " does not broadcast to the result shape");
    }
  }
  return b.Emit(OpCode::kBroadcastInDim, {v}, ir::Type::Tensor(t.dtype, dims),
                {{"broadcast_dimensions", I64Elements(map)}});
}

StatusOr<std::vector<ValueId>> Expand(Builder& b, const ChloOp& op) {
  const std::string_view name = op.name;
  for (const BroadcastBinary& bb : kBroadcastBinary) {
    if (bb.name != name) continue;
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 2, 1));
    std::optional<std::vector<int64_t>> dims;
    if (const ir::Attribute* a = ir::FindAttr(op.attrs, "broadcast_dimensions")) {
      dims = a->AsIntArray();
      if (!dims)
        return InvalidArgument(std::string(name) + ": broadcast_dimensions is not an integer list");
    }
    const Dims& shape = op.result_types[0].dims;
    STABLERT_ASSIGN_OR_RETURN(ValueId lhs, BroadcastTo(b, op, op.operands[0], shape, dims));
    STABLERT_ASSIGN_OR_RETURN(ValueId rhs, BroadcastTo(b, op, op.operands[1], shape, dims));
    return std::vector<ValueId>{b.Emit(bb.code, {lhs, rhs}, op.result_types[0])};
  }
  if (name == "chlo.broadcast_compare") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 2, 1));
    const ir::Attribute* direction = ir::FindAttr(op.attrs, "comparison_direction");
    std::optional<int64_t> d = direction ? EnumWord(*direction, ir::EnumKind::kComparisonDirection,
                                                    {"EQ", "NE", "GE", "GT", "LE", "LT"})
                                         : std::nullopt;
    if (!d)
      return InvalidArgument(
          "chlo.broadcast_compare expects a comparison_direction (EQ, NE, GE, GT, LE, LT)");
    int64_t type = 0;
    if (const ir::Attribute* t = ir::FindAttr(op.attrs, "compare_type")) {
      std::optional<int64_t> v = EnumWord(*t, ir::EnumKind::kComparisonType,
                                          {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"});
      if (!v)
        return InvalidArgument("chlo.broadcast_compare: compare_type is not a comparison type");
      type = *v;
    }
    std::optional<std::vector<int64_t>> dims;
    if (const ir::Attribute* a = ir::FindAttr(op.attrs, "broadcast_dimensions"))
      dims = a->AsIntArray();
    const Dims& shape = op.result_types[0].dims;
    STABLERT_ASSIGN_OR_RETURN(ValueId lhs, BroadcastTo(b, op, op.operands[0], shape, dims));
    STABLERT_ASSIGN_OR_RETURN(ValueId rhs, BroadcastTo(b, op, op.operands[1], shape, dims));
    return std::vector<ValueId>{b.Compare(lhs, rhs, static_cast<Direction>(*d), type)};
  }
  if (name == "chlo.broadcast_select") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 3, 1));
    const Dims& shape = op.result_types[0].dims;
    std::vector<ValueId> v;
    for (ValueId operand : op.operands) {
      STABLERT_ASSIGN_OR_RETURN(ValueId w, BroadcastTo(b, op, operand, shape, std::nullopt));
      v.push_back(w);
    }
    return std::vector<ValueId>{b.Emit(OpCode::kSelect, v, op.result_types[0])};
  }
  if (name == "chlo.constant" || name == "chlo.constant_like") {
    const bool like = name == "chlo.constant_like";
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, like ? 1 : 0, 1));
    const ir::Attribute* value = ir::FindAttr(op.attrs, "value");
    if (!value) return InvalidArgument(std::string(name) + " expects a 'value' attribute");
    const ir::Type& type = op.result_types[0];
    if (const auto* e = value->get<ir::Attribute::Elements>()) {
      if (*e && (*e)->type == type)
        return std::vector<ValueId>{b.Emit(OpCode::kConstant, {}, type, {{"value", *value}})};
    }
    double scalar = 0;
    if (const auto* f = value->get<ir::Attribute::Float>()) {
      scalar = f->value;
    } else if (const auto* i = value->get<ir::Attribute::Integer>()) {
      scalar = static_cast<double>(i->value);
    } else if (const auto* e = value->get<ir::Attribute::Elements>();
               e && *e && (*e)->NumElements() == 1 && (*e)->type.dtype == type.dtype) {
      // A one-element literal of the result's element type: splat its bytes.
      auto data = std::make_shared<ir::ElementsData>();
      data->type = type;
      const int size = DTypeByteSize(type.dtype);
      const uint8_t* element = (*e)->Element(0);
      const int64_t n = ElementCount(type.dims);
      data->splat = n * size > ir::ElementsData::kCompactSplatBytes;
      for (int64_t i = 0; i < (data->splat ? 1 : n); ++i)
        data->bytes.insert(data->bytes.end(), element, element + size);
      ir::Attribute::Elements elements = data;
      return std::vector<ValueId>{
          b.Emit(OpCode::kConstant, {}, type, {{"value", ir::Attribute(elements)}})};
    } else {
      return InvalidArgument(std::string(name) +
                             ": 'value' is not a number or a literal of the result type");
    }
    // A number: a constant of the result's element type (f16/bf16 via f32).
    if (IsFloat(type.dtype) && type.dtype != DType::kF32 && type.dtype != DType::kF64) {
      ValueId f = b.ConstantOf(scalar, ir::Type::Tensor(DType::kF32, type.dims));
      return std::vector<ValueId>{b.Convert(f, type.dtype)};
    }
    if (IsComplex(type.dtype)) return Unsupported(op, type);
    return std::vector<ValueId>{b.ConstantOf(scalar, type)};
  }

  if (op.operands.empty())
    return Unimplemented("CHLO op '" + std::string(name) + "' is not supported");
  const ir::Type in = b.TypeOf(op.operands[0]);  // a copy: new values grow the type table
  if (!in.is_tensor()) return InvalidArgument(std::string(name) + " expects tensor operands");
  const DType dtype = in.dtype;

  if (name == "chlo.square") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 1, 1));
    ValueId x = op.operands[0];
    if (IsComplex(dtype)) {
      // real: re^2 - im^2 as (re - im)(re + im); imag: 2 re im.
      DType part = dtype == DType::kC64 ? DType::kF32 : DType::kF64;
      ir::Type pt = ir::Type::Tensor(part, in.dims);
      ValueId re = b.Emit(OpCode::kReal, {x}, pt);
      ValueId im = b.Emit(OpCode::kImag, {x}, pt);
      // 0 when |re| == |im| and re is finite (exact, no inf - inf), else (re - im)(re + im).
      ir::Type pred = pt;
      pred.dtype = DType::kPred;
      ValueId same =
          b.And(b.Emit(OpCode::kIsFinite, {re}, pred), b.Compare(b.Abs(re), b.Abs(im), kEQ));
      ValueId real = b.Select(same, b.Constant(0.0, re), b.Mul(b.Sub(re, im), b.Add(re, im)));
      ValueId imag = b.Mul(b.Constant(2.0, re), b.Mul(re, im));
      return std::vector<ValueId>{b.Emit(OpCode::kComplex, {real, imag}, in)};
    }
    return std::vector<ValueId>{b.Mul(x, x)};
  }
  if (name == "chlo.conj") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 1, 1));
    ValueId x = op.operands[0];
    if (!IsComplex(dtype)) return std::vector<ValueId>{x};
    DType part = dtype == DType::kC64 ? DType::kF32 : DType::kF64;
    ir::Type pt = ir::Type::Tensor(part, in.dims);
    ValueId re = b.Emit(OpCode::kReal, {x}, pt);
    ValueId im = b.Neg(b.Emit(OpCode::kImag, {x}, pt));
    return std::vector<ValueId>{b.Emit(OpCode::kComplex, {re, im}, in)};
  }
  if (name == "chlo.is_inf" || name == "chlo.is_pos_inf" || name == "chlo.is_neg_inf") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 1, 1));
    if (!IsFloat(dtype)) return Unsupported(op, in);
    ValueId x = op.operands[0];
    if (dtype != DType::kF32 && dtype != DType::kF64)
      x = b.Convert(x, DType::kF32);  // exact for infinities
    const double inf = std::numeric_limits<double>::infinity();
    if (name == "chlo.is_inf")
      return std::vector<ValueId>{b.Compare(b.Abs(x), b.Constant(inf, x), kEQ)};
    return std::vector<ValueId>{
        b.Compare(x, b.Constant(name == "chlo.is_pos_inf" ? inf : -inf, x), kEQ)};
  }
  if (name == "chlo.top_k") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 1, 2));
    const ir::Attribute* k_attr = ir::FindAttr(op.attrs, "k");
    std::optional<int64_t> k = k_attr ? k_attr->AsInt() : std::nullopt;
    if (!k) return InvalidArgument("chlo.top_k expects an integer 'k'");
    if (in.rank() < 1 || *k < 0 || *k > in.dims.back()) {
      return InvalidArgument("chlo.top_k: k = " + std::to_string(*k) + " is out of range for " +
                             ir::TypeToString(in));
    }
    const DType index = op.result_types[1].dtype;
    const int64_t last = in.rank() - 1;
    ValueId iota = b.Emit(OpCode::kIota, {}, ir::Type::Tensor(index, in.dims),
                          {{"iota_dimension", I64(last)}});
    // Comparator: a > b in total order on the values; the sort is stable, so ties keep
    // the lower index first (what portable serialization's chlo.top_k decomposition does).
    ir::Region region;
    region.blocks.emplace_back();
    ir::Block& body = region.blocks.back();
    for (DType d : {dtype, dtype, index, index})
      body.arguments.push_back(b.module().AddValue(ir::Type::Tensor(d, {})));
    Builder cb(b.module(), b.location());
    ValueId gt = cb.Compare(body.arguments[0], body.arguments[1], kGT, kTotalOrder);
    cb.EmitN(OpCode::kReturn, {gt}, {});
    STABLERT_RETURN_IF_ERROR(cb.status());
    body.ops = cb.TakeOps();
    std::vector<ir::Region> regions;
    regions.push_back(std::move(region));
    std::vector<ValueId> sorted =
        b.EmitN(OpCode::kSort, {op.operands[0], iota}, {in, b.TypeOf(iota)},
                {{"dimension", I64(last)}, {"is_stable", ir::Attribute(true)}}, std::move(regions));
    std::vector<int64_t> starts(in.dims.size(), 0), limits(in.dims.begin(), in.dims.end()),
        strides(in.dims.size(), 1);
    limits.back() = *k;
    ir::Attribute::Dictionary slice = {{"limit_indices", I64Elements(limits)},
                                       {"start_indices", I64Elements(starts)},
                                       {"strides", I64Elements(strides)}};
    Dims out_dims = in.dims;
    out_dims.back() = *k;
    ValueId values = b.Emit(OpCode::kSlice, {sorted[0]}, ir::Type::Tensor(dtype, out_dims), slice);
    ValueId indices = b.Emit(OpCode::kSlice, {sorted[1]}, ir::Type::Tensor(index, out_dims), slice);
    return std::vector<ValueId>{values, indices};
  }
  if (name == "chlo.mulhi") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 2, 1));
    if (!IsInteger(dtype)) return Unsupported(op, in);
    if (!(b.TypeOf(op.operands[1]) == in)) return InvalidArgument("chlo.mulhi expects operands of one type");
    return std::vector<ValueId>{Mulhi(b, op.operands[0], op.operands[1])};
  }
  if (name == "chlo.next_after") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 2, 1));
    if (dtype != DType::kF32 && dtype != DType::kF64 && !IsF16Like(dtype))
      return Unsupported(op, in);
    if (!(b.TypeOf(op.operands[1]) == in))
      return InvalidArgument("chlo.next_after expects operands of one type");
    return std::vector<ValueId>{NextAfter(b, op.operands[0], op.operands[1])};
  }
  if (name == "chlo.zeta" || name == "chlo.polygamma") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 2, 1));
    if (!(b.TypeOf(op.operands[1]) == in))
      return InvalidArgument(std::string(name) + " expects operands of one type");
    auto f = name == "chlo.zeta" ? Zeta : Polygamma;
    ValueId a = op.operands[0], c = op.operands[1];
    if (dtype == DType::kF32 || dtype == DType::kF64) return std::vector<ValueId>{f(b, a, c)};
    if (IsF16Like(dtype)) {
      return std::vector<ValueId>{
          b.Convert(f(b, b.Convert(a, DType::kF32), b.Convert(c, DType::kF32)), dtype)};
    }
    return Unsupported(op, in);
  }
  if (name == "chlo.bessel_i1e") {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 1, 1));
    ValueId x = op.operands[0];
    if (dtype == DType::kF64) return std::vector<ValueId>{BesselI1eF64(b, x)};
    if (dtype == DType::kF32) return std::vector<ValueId>{BesselI1eF32(b, x)};
    if (IsF16Like(dtype))
      return std::vector<ValueId>{b.Convert(BesselI1eF32(b, b.Convert(x, DType::kF32)), dtype)};
    return Unsupported(op, in);
  }
  if (IsComplex(dtype) && (name == "chlo.asin" || name == "chlo.acos" || name == "chlo.atan" ||
                            name == "chlo.asinh" || name == "chlo.acosh" || name == "chlo.atanh")) {
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 1, 1));
    return std::vector<ValueId>{*ComplexInverseTrig(b, name, op.operands[0])};
  }
  if (IsComplex(dtype) && name == "chlo.tan") {
    // StableHLO's tan takes complex operands (tan z = -i tanh(i z), the kernel's formula
    // for large imaginary parts, infinities and NaNs): what chlo-legalize-to-stablehlo emits.
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 1, 1));
    return std::vector<ValueId>{Tan(b, op.operands[0])};
  }
  if (IsComplex(dtype) && (name == "chlo.sinh" || name == "chlo.cosh")) {
    // Complex operands: the exp form throughout, in the operand's type.
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 1, 1));
    ValueId x = op.operands[0];
    return std::vector<ValueId>{name == "chlo.sinh" ? SinhLarge(b, x) : Cosh(b, x)};
  }
  for (const FloatUnary& u : kFloatUnary) {
    if (u.name != name) continue;
    STABLERT_RETURN_IF_ERROR(CheckCounts(op, 1, 1));
    ValueId x = op.operands[0];
    if (dtype == DType::kF32) return std::vector<ValueId>{u.f32(b, x)};
    if (dtype == DType::kF64) return std::vector<ValueId>{u.f64(b, x)};
    if (IsF16Like(dtype))
      return std::vector<ValueId>{b.Convert(u.f32(b, b.Convert(x, DType::kF32)), dtype)};
    return Unsupported(op, in);
  }
  return Unimplemented("CHLO op '" + std::string(name) + "' is not supported");
}

}  // namespace

bool IsChloName(std::string_view name) { return name.rfind("chlo.", 0) == 0; }

StatusOr<std::vector<ir::ValueId>> ExpandChlo(const ChloOp& op, ir::Module& module,
                                              ir::Block& block) {
  Builder b(module, op.location);
  STABLERT_ASSIGN_OR_RETURN(std::vector<ValueId> results, Expand(b, op));
  STABLERT_RETURN_IF_ERROR(b.status());
  if (results.size() != op.result_types.size()) {
    return Internal(std::string(op.name) + ": the expansion has " + std::to_string(results.size()) +
                    " results, the op " + std::to_string(op.result_types.size()));
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (!(module.type_of(results[i]) == op.result_types[i])) {
      return InvalidArgument(std::string(op.name) + ": result " + std::to_string(i) + " is " +
                             ir::TypeToString(module.type_of(results[i])) + " but the op states " +
                             ir::TypeToString(op.result_types[i]));
    }
  }
  for (ir::Operation& o : b.TakeOps()) block.ops.push_back(std::move(o));
  return results;
}

}  // namespace stablert::stablehlo
