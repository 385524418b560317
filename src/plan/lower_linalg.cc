// Lowering of linear algebra: the StableHLO ops cholesky and triangular_solve, and the
// LAPACK custom calls JAX's CPU lowering emits (`lapack_<p><routine>_ffi`, typed FFI with
// attributes in `mhlo.backend_config`), plus the generic `Qr` and
// `ProductOfElementaryHouseholderReflectors` custom calls and jaxlib's
// `tridiagonal_solve_perturbed_ffi`.
//
// Custom calls: the matrices (operands and results of the highest operand rank) are
// column-major for LAPACK. Their declared layouts must say so (or be absent, for the
// generic targets); the lowering transposes each matrix into column-major order before the
// kernel and each matrix result back after it, so kernels (kernels/linalg_custom_calls.cc)
// see plain column-major data. Result types are checked against what the routine computes
// from its operands; attributes are checked against the values LAPACK accepts. A `_ffi` call
// whose operand or result list the routine cannot take compiles, as on XLA, to a step that
// fails when run ("call_error"); other errors are compile-time errors.
#include <climits>
#include <optional>
#include <string>

#include "kernels/call_error_params.h"
#include "kernels/data_movement_params.h"
#include "kernels/linalg_params.h"
#include "plan/lowering.h"

namespace stablert::plan {
namespace {

using ir::OpCode;

std::string Key(std::string_view op, DType dtype) {
  return std::string(op) + "." + std::string(DTypeName(dtype));
}

bool IsLapackFloat(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF64 || dtype == DType::kC64 ||
         dtype == DType::kC128;
}
DType RealOf(DType dtype) {
  return dtype == DType::kC64 ? DType::kF32 : dtype == DType::kC128 ? DType::kF64 : dtype;
}
DType ComplexOf(DType dtype) {
  return dtype == DType::kF32 ? DType::kC64 : dtype == DType::kF64 ? DType::kC128 : dtype;
}
bool IsComplexDType(DType dtype) { return dtype == DType::kC64 || dtype == DType::kC128; }

// Floats narrower than f32 (f16, bf16, the 8-bit and 4/6-bit floats): cholesky and
// triangular_solve compute them in f32, as XLA's CPU backend does, and round the result.
bool IsNarrowFloat(DType dtype) {
  return DTypeKindOf(dtype) == DTypeKind::kFloat && DTypeBitWidth(dtype) < 32;
}

// `value` converted to f32 (a convert step), for an op computed in f32.
ValueId Widened(Lowering& l, const ir::Operation& op, ValueId value) {
  TensorType wide = l.TypeOf(value);
  const DType from = wide.dtype;
  wide.dtype = DType::kF32;
  ValueId out = l.NewValue(wide);
  l.Emit(op, ConvertKeyFor(from, DType::kF32), {value}, {out});
  return out;
}

// Binds the op's result to `wide` (f32) rounded back to `narrow`.
void BindNarrowed(Lowering& l, const ir::Operation& op, ValueId wide, DType narrow) {
  TensorType type = l.TypeOf(wide);
  type.dtype = narrow;
  ValueId out = l.NewValue(type);
  l.Emit(op, ConvertKeyFor(DType::kF32, narrow), {wide}, {out});
  l.Bind(op.results[0], out);
}

// LAPACK's INTEGER is 32-bit: every dimension a routine sees must fit.
bool FitsLapackInt(const TensorType& type) {
  for (int64_t d : type.dims)
    if (d > INT32_MAX) return false;
  return true;
}

std::optional<bool> BoolAttr(const ir::Operation& op, std::string_view name) {
  const ir::Attribute* attr = op.attr(name);
  return attr ? attr->AsBool() : std::nullopt;
}

Status LowerCholesky(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId operand, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType in = l.TypeOf(operand);
  if (in != result)
    return l.Invalid(op, "result type differs from the operand type " + TensorTypeToString(in));
  if (in.dims.size() < 2 || in.dims[in.dims.size() - 1] != in.dims[in.dims.size() - 2])
    return l.Invalid(op,
                     "operand must be a batch of square matrices, got " + TensorTypeToString(in));
  const bool narrow = IsNarrowFloat(in.dtype);
  if (!IsLapackFloat(in.dtype) && !narrow)
    return l.Unsupported(op, "element type " + std::string(DTypeName(in.dtype)) +
                                 " is not supported (floats and complex<f32>, complex<f64>)");
  if (!FitsLapackInt(in))
    return l.Unsupported(op, "matrices with dimensions beyond 2^31-1 are not supported");
  bool lower = BoolAttr(op, "lower").value_or(false);
  if (narrow) operand = Widened(l, op, operand);
  TensorType computed = l.TypeOf(operand);
  ValueId out = l.NewValue(computed);
  l.Emit(op, Key("cholesky", computed.dtype), {operand}, {out}, kernels::CholeskyParams{.lower = lower});
  if (narrow) BindNarrowed(l, op, out, in.dtype);
  else l.Bind(op.results[0], out);
  return OkStatus();
}

Status LowerTriangularSolve(Lowering& l, const ir::Operation& op) {
  STABLERT_ASSIGN_OR_RETURN(ValueId a, l.Operand(op, 0));
  STABLERT_ASSIGN_OR_RETURN(ValueId b, l.Operand(op, 1));
  STABLERT_ASSIGN_OR_RETURN(TensorType result, l.ResultType(op, 0));
  const TensorType at = l.TypeOf(a), bt = l.TypeOf(b);
  const size_t rank = at.dims.size();
  auto left_side = BoolAttr(op, "left_side"), lower = BoolAttr(op, "lower"),
       unit = BoolAttr(op, "unit_diagonal");
  if (!left_side || !lower || !unit)
    return l.Invalid(op, "missing boolean attribute left_side, lower or unit_diagonal");
  const ir::Attribute* transpose_attr = op.attr("transpose_a");
  const ir::EnumValue* transpose = transpose_attr ? transpose_attr->get<ir::EnumValue>() : nullptr;
  if (transpose == nullptr || transpose->kind != ir::EnumKind::kTranspose || transpose->value < 1 ||
      transpose->value > 3)
    return l.Invalid(op, "attribute 'transpose_a' must be NO_TRANSPOSE, TRANSPOSE or ADJOINT");
  if (rank < 2 || bt.dims.size() != rank || at.dtype != bt.dtype || result != bt ||
      at.dims[rank - 1] != at.dims[rank - 2] ||
      !std::equal(at.dims.begin(), at.dims.end() - 2, bt.dims.begin()) ||
      at.dims[rank - 1] != bt.dims[*left_side ? rank - 2 : rank - 1])
    return l.Invalid(
        op, "expected a [..., k, k] and b [..., m, n] with the same batch dimensions and k = " +
                std::string(*left_side ? "m" : "n") + ", result of b's type; got " +
                TensorTypeToString(at) + ", " + TensorTypeToString(bt) + " -> " +
                TensorTypeToString(result));
  const bool narrow = IsNarrowFloat(at.dtype);
  if (!IsLapackFloat(at.dtype) && !narrow)
    return l.Unsupported(op, "element type " + std::string(DTypeName(at.dtype)) +
                                 " is not supported (floats and complex<f32>, complex<f64>)");
  if (!FitsLapackInt(at) || !FitsLapackInt(bt))
    return l.Unsupported(op, "matrices with dimensions beyond 2^31-1 are not supported");
  if (narrow) {
    a = Widened(l, op, a);
    b = Widened(l, op, b);
  }
  const TensorType computed = l.TypeOf(b);
  ValueId out = l.NewValue(computed);
  l.Emit(op, Key("triangular_solve", computed.dtype), {a, b}, {out},
         kernels::TriangularSolveParams{.left_side = *left_side,
                                        .lower = *lower,
                                        .unit_diagonal = *unit,
                                        .transpose = static_cast<kernels::TriangularTranspose>(transpose->value)});
  if (narrow) BindNarrowed(l, op, out, at.dtype);
  else l.Bind(op.results[0], out);
  return OkStatus();
}

//===--- Custom calls ---===//

struct CustomCall {
  std::string routine;  // "potrf", ...
  DType dtype = DType::kInvalid;
  bool typed_ffi = true;  // lapack_*_ffi (layouts declared) vs the generic targets
};

std::optional<CustomCall> ParseTarget(std::string_view target) {
  if (target == "Qr") return CustomCall{"geqrf", DType::kInvalid, false};
  if (target == "ProductOfElementaryHouseholderReflectors")
    return CustomCall{"orgqr", DType::kInvalid, false};
  if (target == "tridiagonal_solve_perturbed_ffi")
    return CustomCall{"gtsv_perturbed", DType::kInvalid, true};
  constexpr std::string_view kPrefix = "lapack_", kSuffix = "_ffi";
  if (target.size() <= kPrefix.size() + kSuffix.size() + 1 ||
      target.substr(0, kPrefix.size()) != kPrefix ||
      target.substr(target.size() - kSuffix.size()) != kSuffix)
    return std::nullopt;
  std::string_view body =
      target.substr(kPrefix.size(), target.size() - kPrefix.size() - kSuffix.size());
  CustomCall call;
  switch (body[0]) {
    case 's':
      call.dtype = DType::kF32;
      break;
    case 'd':
      call.dtype = DType::kF64;
      break;
    case 'c':
      call.dtype = DType::kC64;
      break;
    case 'z':
      call.dtype = DType::kC128;
      break;
    default:
      return std::nullopt;
  }
  call.routine = std::string(body.substr(1));
  // The Hermitian/unitary routines of complex types share the real ones' kernels.
  if (call.routine == "ungqr") call.routine = "orgqr";
  if (call.routine == "heevd") call.routine = "syevd";
  if (call.routine == "hetrd") call.routine = "sytrd";
  return call;
}

class CustomCallLowering {
 public:
  CustomCallLowering(Lowering& l, const ir::Operation& op, std::string_view target)
      : l_(l), op_(op), target_(target) {}

  bool frame_error() const { return frame_error_; }

  Status Run(const CustomCall& call) {
    for (size_t i = 0; i < op_.operands.size(); ++i) {
      STABLERT_ASSIGN_OR_RETURN(ValueId value, l_.Operand(op_, i));
      operands_.push_back(value);
      in_.push_back(l_.TypeOf(value));
    }
    for (size_t i = 0; i < op_.results.size(); ++i) {
      STABLERT_ASSIGN_OR_RETURN(TensorType type, l_.ResultType(op_, i));
      out_.push_back(std::move(type));
    }
    if (in_.empty()) return FrameError("expected operands");
    for (const auto* types : {&in_, &out_})
      for (const TensorType& type : *types)
        if (!FitsLapackInt(type))
          return l_.Unsupported(
              op_, "custom_call '" + target_ + "': dimensions beyond 2^31-1 are not supported");
    dtype_ = call.dtype == DType::kInvalid ? in_[0].dtype : call.dtype;
    if (in_[0].dtype != dtype_)
      return Invalid("operand 0 has element type " + std::string(DTypeName(in_[0].dtype)) +
                     ", the target expects " + std::string(DTypeName(dtype_)));
    if (!IsLapackFloat(dtype_))
      return l_.Unsupported(op_, "custom_call target '" + target_ +
                                     "' is not supported yet for element type " +
                                     std::string(DTypeName(dtype_)));
    const size_t rank = in_[0].dims.size();
    if (rank >= 2) {
      batch_.assign(in_[0].dims.begin(), in_[0].dims.end() - 2);
      m_ = in_[0].dims[rank - 2];
      n_ = in_[0].dims[rank - 1];
    } else if (call.routine != "gtsv" && call.routine != "gtsv_perturbed") {
      return Invalid("operand 0 must be a batch of matrices");
    }
    for (const TensorType& t : in_) matrix_rank_ = std::max(matrix_rank_, t.dims.size());
    STABLERT_RETURN_IF_ERROR(CheckLayouts(call.typed_ffi));
    kernels::KernelParams params;
    STABLERT_RETURN_IF_ERROR(CheckRoutine(call.routine, &params));
    Emit("lapack_" + call.routine, std::move(params));
    return OkStatus();
  }

 private:
  Status Invalid(std::string_view what) const {
    return l_.Invalid(op_, "custom_call '" + target_ + "': " + std::string(what));
  }
  // An operand or result list the routine cannot take: what an FFI handler finds when it
  // decodes its call frame, at run time on XLA (see LowerLinalgCustomCall).
  Status FrameError(std::string_view what) const {
    frame_error_ = true;
    return Invalid(what);
  }

  bool IsMatrix(const TensorType& type) const {
    return type.dims.size() == matrix_rank_ && matrix_rank_ >= 2;
  }

  // Matrices may be declared in any dimension order: the kernel reads and writes the
  // matrix's bytes in that layout as column-major, as XLA hands a custom call its operands
  // in the layouts it declares (jax's linalg lowerings declare column-major, where that is
  // the matrix itself; row-major declarations hand LAPACK the bytes of the transpose). Every
  // other operand and result must be declared in the default row-major layout.
  Status CheckLayouts(bool required) {
    for (const char* name : {"operand_layouts", "result_layouts"}) {
      const bool operands = std::string_view(name) == "operand_layouts";
      const std::vector<TensorType>& types = operands ? in_ : out_;
      std::vector<std::vector<int64_t>>& orders = operands ? in_order_ : out_order_;
      orders.assign(types.size(), {});
      for (size_t i = 0; i < types.size(); ++i)
        if (IsMatrix(types[i])) orders[i] = SwapLast(types[i].dims.size());
      const ir::Attribute* attr = op_.attr(name);
      const auto* list = attr ? attr->get<ir::Attribute::Array>() : nullptr;
      if (list == nullptr || list->empty()) {
        if (required && attr != nullptr)
          return Invalid(std::string(name) + " is not a list of layouts");
        continue;
      }
      if (list->size() != types.size())
        return Invalid(std::string(name) + " has the wrong number of entries");
      for (size_t i = 0; i < types.size(); ++i) {
        auto layout = (*list)[i].AsIntArray();
        if (!layout)
          return Invalid(std::string(name) + " entry " + std::to_string(i) +
                         " is not an integer list");
        const int64_t r = static_cast<int64_t>(types[i].dims.size());
        if (IsMatrix(types[i])) {
          std::vector<bool> seen(static_cast<size_t>(r), false);
          bool permutation = static_cast<int64_t>(layout->size()) == r;
          for (int64_t d : *layout) {
            if (!permutation || d < 0 || d >= r || seen[static_cast<size_t>(d)]) {
              permutation = false;
              break;
            }
            seen[static_cast<size_t>(d)] = true;
          }
          if (!permutation)
            return Invalid(std::string(name) + " entry " + std::to_string(i) + " " + DimsToString(*layout) +
                           " is not a permutation of the " + std::to_string(r) + " dimensions");
          // minor_to_major -> major_to_minor
          orders[i].assign(layout->rbegin(), layout->rend());
          continue;
        }
        std::vector<int64_t> expected;
        for (int64_t d = r - 1; d >= 0; --d) expected.push_back(d);
        if (*layout != expected)
          return l_.Unsupported(op_, "custom_call '" + target_ + "': " + name + " entry " +
                                         std::to_string(i) + " " + DimsToString(*layout) +
                                         " is not supported (expected " + DimsToString(expected) +
                                         ")");
      }
    }
    return OkStatus();
  }

  TensorType T(Dims dims) const { return TensorType{dtype_, std::move(dims)}; }
  TensorType I32(Dims dims) const { return TensorType{DType::kS32, std::move(dims)}; }
  TensorType R(Dims dims) const { return TensorType{RealOf(dtype_), std::move(dims)}; }
  TensorType C(Dims dims) const { return TensorType{ComplexOf(dtype_), std::move(dims)}; }
  Dims B(std::initializer_list<int64_t> tail) const {
    Dims dims = batch_;
    dims.insert(dims.end(), tail);
    return dims;
  }

  Status ExpectOperands(const std::vector<TensorType>& expected) const {
    if (in_.size() != expected.size())
      return FrameError("expected " + std::to_string(expected.size()) + " operands, got " +
                     std::to_string(in_.size()));
    for (size_t i = 0; i < expected.size(); ++i)
      if (in_[i] != expected[i])
        return FrameError("operand " + std::to_string(i) + " is " + TensorTypeToString(in_[i]) +
                       ", expected " + TensorTypeToString(expected[i]));
    return OkStatus();
  }
  Status ExpectResults(const std::vector<TensorType>& expected) const {
    if (out_.size() != expected.size())
      return FrameError("expected " + std::to_string(expected.size()) + " results, got " +
                     std::to_string(out_.size()));
    for (size_t i = 0; i < expected.size(); ++i)
      if (out_[i] != expected[i])
        return FrameError("result " + std::to_string(i) + " is " + TensorTypeToString(out_[i]) +
                       ", expected " + TensorTypeToString(expected[i]));
    return OkStatus();
  }
  Status Square() const { return m_ == n_ ? OkStatus() : Invalid("operand 0 must be square"); }

  // A character attribute of mhlo.backend_config, one of `allowed`.
  StatusOr<int64_t> CharAttr(std::string_view name, std::string_view allowed) const {
    const ir::Attribute* config = op_.attr("mhlo.backend_config");
    const auto* dict = config ? config->get<ir::Attribute::Dictionary>() : nullptr;
    const ir::Attribute* attr = dict ? ir::FindAttr(*dict, name) : nullptr;
    auto value = attr ? attr->AsInt() : std::nullopt;
    if (!value || *value <= 0 || *value > 127 ||
        allowed.find(static_cast<char>(*value)) == std::string_view::npos)
      return Invalid("backend_config '" + std::string(name) + "' must be one of the characters '" +
                     std::string(allowed) + "'");
    return *value;
  }
  StatusOr<int64_t> IntConfig(std::string_view name) const {
    const ir::Attribute* config = op_.attr("mhlo.backend_config");
    const auto* dict = config ? config->get<ir::Attribute::Dictionary>() : nullptr;
    const ir::Attribute* attr = dict ? ir::FindAttr(*dict, name) : nullptr;
    auto value = attr ? attr->AsInt() : std::nullopt;
    if (!value) return Invalid("backend_config '" + std::string(name) + "' must be an integer");
    return *value;
  }

  Status CheckRoutine(const std::string& routine, kernels::KernelParams* params) {
    const TensorType a = in_[0];
    const int64_t k = std::min(m_, n_);
    if (routine == "potrf") {
      STABLERT_RETURN_IF_ERROR(Square());
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a}));
      STABLERT_RETURN_IF_ERROR(ExpectResults({a, I32(batch_)}));
      STABLERT_ASSIGN_OR_RETURN(int64_t uplo, CharAttr("uplo", "LU"));
      *params = kernels::LapackPotrfParams{.lower = uplo == 'L'};
    } else if (routine == "trsm") {
      if (in_.size() != 2) return FrameError("expected 2 operands");
      const TensorType& b = in_[1];
      STABLERT_ASSIGN_OR_RETURN(int64_t side, CharAttr("side", "LR"));
      STABLERT_ASSIGN_OR_RETURN(int64_t uplo, CharAttr("uplo", "LU"));
      STABLERT_ASSIGN_OR_RETURN(int64_t trans, CharAttr("trans_x", "NTC"));
      STABLERT_ASSIGN_OR_RETURN(int64_t diag, CharAttr("diag", "NU"));
      if (b.dims.size() != a.dims.size()) return Invalid("operands must have the same rank");
      const int64_t rows = b.dims[b.dims.size() - 2], cols = b.dims.back();
      Dims b_batch(b.dims.begin(), b.dims.end() - 2);
      if (b.dtype != dtype_ || b_batch != batch_ || m_ != n_ || m_ != (side == 'L' ? rows : cols))
        return Invalid("operand shapes " + TensorTypeToString(a) + ", " + TensorTypeToString(b) +
                       " do not match");
      STABLERT_RETURN_IF_ERROR(ExpectResults({b}));
      *params = kernels::LapackTrsmParams{
          .left_side = side == 'L',
          .lower = uplo == 'L',
          .trans = trans == 'N'   ? kernels::LapackTrans::kNo
                   : trans == 'T' ? kernels::LapackTrans::kTranspose
                                  : kernels::LapackTrans::kConjugateTranspose,
          .unit_diagonal = diag == 'U'};
    } else if (routine == "getrf") {
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a}));
      STABLERT_RETURN_IF_ERROR(ExpectResults({a, I32(B({k})), I32(batch_)}));
    } else if (routine == "geqrf") {
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a}));
      STABLERT_RETURN_IF_ERROR(ExpectResults({a, T(B({k}))}));
    } else if (routine == "geqp3") {
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a, I32(B({n_}))}));
      STABLERT_RETURN_IF_ERROR(ExpectResults({a, I32(B({n_})), T(B({k}))}));
    } else if (routine == "orgqr") {
      if (in_.size() != 2 || in_[1].dims.size() != batch_.size() + 1)
        return FrameError("expected operands a [..., m, n] and tau [..., k]");
      const int64_t taus = in_[1].dims.back();
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a, T(B({taus}))}));
      if (!(m_ >= n_ && n_ >= taus))
        return Invalid("expected m >= n >= k for a [..., m, n] and tau [..., k]");
      STABLERT_RETURN_IF_ERROR(ExpectResults({a}));
    } else if (routine == "syevd") {
      STABLERT_RETURN_IF_ERROR(Square());
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a}));
      STABLERT_RETURN_IF_ERROR(ExpectResults({a, R(B({n_})), I32(batch_)}));
      STABLERT_ASSIGN_OR_RETURN(int64_t mode, CharAttr("mode", "NV"));
      STABLERT_ASSIGN_OR_RETURN(int64_t uplo, CharAttr("uplo", "LU"));
      *params = kernels::LapackSyevdParams{.compute_vectors = mode == 'V', .lower = uplo == 'L'};
    } else if (routine == "gesdd" || routine == "gesvd") {
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a}));
      STABLERT_ASSIGN_OR_RETURN(int64_t mode, CharAttr("mode", "ASNO"));
      if (mode == 'O')
        return l_.Unsupported(op_, "custom_call '" + target_ + "': mode 'O' is not supported");
      // u is [..., m, m] or [..., m, k], vt [..., n, n] or [..., k, n] as the mode asks; without
      // vectors (mode 'N') either shape is accepted and left zero.
      int64_t u_cols = mode == 'A' ? m_ : k, vt_rows = mode == 'A' ? n_ : k;
      if (mode == 'N' && out_.size() == 5 && out_[2].dims.size() == a.dims.size() &&
          out_[3].dims.size() == a.dims.size()) {
        if (out_[2].dims.back() == m_) u_cols = m_;
        if (out_[3].dims[out_[3].dims.size() - 2] == n_) vt_rows = n_;
      }
      STABLERT_RETURN_IF_ERROR(
          ExpectResults({a, R(B({k})), T(B({m_, u_cols})), T(B({vt_rows, n_})), I32(batch_)}));
      *params = kernels::LapackSvdParams{.job = mode == 'A'   ? kernels::LapackSvdJob::kAll
                                                : mode == 'S' ? kernels::LapackSvdJob::kSome
                                                              : kernels::LapackSvdJob::kNone};
    } else if (routine == "gehrd") {
      STABLERT_RETURN_IF_ERROR(Square());
      if (n_ < 1) return Invalid("expected a non-empty matrix");
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a}));
      STABLERT_RETURN_IF_ERROR(ExpectResults({a, T(B({n_ - 1})), I32(batch_)}));
      STABLERT_ASSIGN_OR_RETURN(int64_t low, IntConfig("low"));
      STABLERT_ASSIGN_OR_RETURN(int64_t high, IntConfig("high"));
      if (!(1 <= low && low <= high && high <= n_))
        return Invalid("expected 1 <= low <= high <= n");
      *params = kernels::LapackGehrdParams{.low = low, .high = high};
    } else if (routine == "sytrd") {
      STABLERT_RETURN_IF_ERROR(Square());
      if (n_ < 1) return Invalid("expected a non-empty matrix");
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a}));
      STABLERT_RETURN_IF_ERROR(
          ExpectResults({a, R(B({n_})), R(B({n_ - 1})), T(B({n_ - 1})), I32(batch_)}));
      STABLERT_ASSIGN_OR_RETURN(int64_t uplo, CharAttr("uplo", "LU"));
      *params = kernels::LapackSytrdParams{.lower = uplo == 'L'};
    } else if (routine == "gtsv") {
      // Operand 0 is dl [..., n]; the right-hand sides b [..., n, nrhs] come last.
      if (in_.size() != 4 || in_[3].dims.size() < 2)
        return FrameError("expected operands dl, d, du, b");
      const TensorType& b = in_[3];
      batch_.assign(b.dims.begin(), b.dims.end() - 2);
      const int64_t n = b.dims[b.dims.size() - 2];
      const TensorType diag = T(B({n}));
      STABLERT_RETURN_IF_ERROR(ExpectOperands({diag, diag, diag, T(b.dims)}));
      STABLERT_RETURN_IF_ERROR(ExpectResults({diag, diag, diag, b, I32(batch_)}));
    } else if (routine == "gtsv_perturbed") {
      if (in_.size() != 4 || in_[3].dims.size() < 2)
        return FrameError("expected operands dl, d, du, b");
      const TensorType& b = in_[3];
      batch_.assign(b.dims.begin(), b.dims.end() - 2);
      const TensorType diag = T(B({b.dims[b.dims.size() - 2]}));
      STABLERT_RETURN_IF_ERROR(ExpectOperands({diag, diag, diag, T(b.dims)}));
      STABLERT_RETURN_IF_ERROR(ExpectResults({b}));
    } else if (routine == "gees") {
      STABLERT_RETURN_IF_ERROR(Square());
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a}));
      if (IsComplexDType(dtype_)) {
        STABLERT_RETURN_IF_ERROR(ExpectResults({a, a, T(B({n_})), I32(batch_), I32(batch_)}));
      } else {
        STABLERT_RETURN_IF_ERROR(
            ExpectResults({a, a, T(B({n_})), T(B({n_})), I32(batch_), I32(batch_)}));
      }
      STABLERT_ASSIGN_OR_RETURN(int64_t mode, CharAttr("mode", "NV"));
      STABLERT_ASSIGN_OR_RETURN(int64_t sort, CharAttr("sort", "NS"));
      if (sort != 'N')
        return l_.Unsupported(
            op_, "custom_call '" + target_ + "': sorted Schur forms are not supported");
      *params = kernels::LapackGeesParams{.compute_schur_vectors = mode == 'V'};
    } else if (routine == "geev") {
      STABLERT_RETURN_IF_ERROR(Square());
      STABLERT_RETURN_IF_ERROR(ExpectOperands({a}));
      const TensorType vectors = C(B({n_, n_}));
      if (IsComplexDType(dtype_)) {
        STABLERT_RETURN_IF_ERROR(ExpectResults({T(B({n_})), vectors, vectors, I32(batch_)}));
      } else {
        STABLERT_RETURN_IF_ERROR(
            ExpectResults({T(B({n_})), T(B({n_})), vectors, vectors, I32(batch_)}));
      }
      STABLERT_ASSIGN_OR_RETURN(int64_t left, CharAttr("compute_left", "NV"));
      STABLERT_ASSIGN_OR_RETURN(int64_t right, CharAttr("compute_right", "NV"));
      *params = kernels::LapackGeevParams{.compute_left = left == 'V', .compute_right = right == 'V'};
    } else {
      return l_.Unsupported(op_, "custom_call target '" + target_ + "' is not supported yet");
    }
    return OkStatus();
  }

  // Column-major form of a logical value: the last two dimensions swapped.
  static std::vector<int64_t> SwapLast(size_t rank) {
    std::vector<int64_t> perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(i);
    std::swap(perm[rank - 1], perm[rank - 2]);
    return perm;
  }
  static TensorType Swapped(TensorType type) {
    std::swap(type.dims[type.dims.size() - 1], type.dims[type.dims.size() - 2]);
    return type;
  }

  // The kernels take each matrix as the row-major array of its column-major bytes (the
  // last two dims swapped). A matrix declared in major_to_minor order `order` is handed
  // over as its bytes in that order: a transpose into that order (none when it is the
  // identity), viewed with the kernel's dims; results the reverse way.
  void Emit(const std::string& kernel, kernels::KernelParams params) {
    std::vector<ValueId> inputs;
    for (size_t i = 0; i < operands_.size(); ++i) {
      if (!IsMatrix(in_[i])) {
        inputs.push_back(operands_[i]);
        continue;
      }
      const std::vector<int64_t>& order = in_order_[i];
      ValueId in_order = operands_[i];
      if (!IsIdentity(order)) {
        in_order = l_.NewValue(Permuted(in_[i], order));
        l_.Emit(op_, Key("transpose", in_[i].dtype), {operands_[i]}, {in_order},
                kernels::TransposeParams{.permutation = order});
      }
      const TensorType kernel_type = Swapped(in_[i]);
      inputs.push_back(l_.TypeOf(in_order) == kernel_type ? in_order : l_.NewAlias(in_order, kernel_type));
    }
    std::vector<ValueId> outputs;
    for (const TensorType& type : out_)
      outputs.push_back(l_.NewValue(IsMatrix(type) ? Swapped(type) : type));
    l_.Emit(op_, Key(kernel, dtype_), std::move(inputs), outputs, std::move(params));
    for (size_t i = 0; i < out_.size(); ++i) {
      ValueId result = outputs[i];
      if (IsMatrix(out_[i])) {
        const std::vector<int64_t>& order = out_order_[i];
        const TensorType in_order_type = Permuted(out_[i], order);
        ValueId in_order = l_.TypeOf(result) == in_order_type ? result : l_.NewAlias(result, in_order_type);
        if (IsIdentity(order)) {
          result = in_order;
        } else {
          std::vector<int64_t> inverse(order.size());
          for (size_t q = 0; q < order.size(); ++q) inverse[static_cast<size_t>(order[q])] = static_cast<int64_t>(q);
          result = l_.NewValue(out_[i]);
          l_.Emit(op_, Key("transpose", out_[i].dtype), {in_order}, {result},
                  kernels::TransposeParams{.permutation = inverse});
        }
      }
      l_.Bind(op_.results[i], result);
    }
  }

  static bool IsIdentity(const std::vector<int64_t>& order) {
    for (size_t i = 0; i < order.size(); ++i)
      if (order[i] != static_cast<int64_t>(i)) return false;
    return true;
  }
  static TensorType Permuted(const TensorType& type, const std::vector<int64_t>& order) {
    TensorType out{type.dtype, {}};
    for (int64_t d : order) out.dims.push_back(type.dims[static_cast<size_t>(d)]);
    return out;
  }

  Lowering& l_;
  const ir::Operation& op_;
  std::string target_;
  mutable bool frame_error_ = false;  // the last error was a FrameError
  std::vector<ValueId> operands_;
  // Per matrix operand and result: its declared major_to_minor order (column-major default).
  std::vector<std::vector<int64_t>> in_order_, out_order_;
  std::vector<TensorType> in_, out_;
  DType dtype_ = DType::kInvalid;
  Dims batch_;
  int64_t m_ = 0, n_ = 0;
  size_t matrix_rank_ = 0;
};

}  // namespace

Status LowerLinalg(Lowering& lowering, const ir::Operation& op) {
  if (op.code == OpCode::kCholesky) return LowerCholesky(lowering, op);
  if (op.code == OpCode::kTriangularSolve) return LowerTriangularSolve(lowering, op);
  return lowering.Unsupported(op, "not a linear algebra op");
}

bool IsLinalgCustomCall(std::string_view target) { return ParseTarget(target).has_value(); }

Status LowerLinalgCustomCall(Lowering& lowering, const ir::Operation& op, std::string_view target) {
  std::optional<CustomCall> call = ParseTarget(target);
  if (!call)
    return lowering.Unsupported(
        op, "custom_call target '" + std::string(target) + "' is not supported yet");
  CustomCallLowering lowered(lowering, op, target);
  Status status = lowered.Run(*call);
  if (status.ok() || !call->typed_ffi || !lowered.frame_error()) return status;
  // XLA compiles a call to a registered FFI target without reading its signature, and the
  // handler fails when it decodes the call frame. A `lapack_*_ffi` call whose operands or
  // results the routine cannot take does the same here: it becomes a step that fails each
  // execution reaching it with the error found now (nothing was emitted for it yet). Layouts,
  // attributes and element types StableRT cannot run stay compile-time errors.
  std::vector<ValueId> inputs, outputs;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(ValueId value, lowering.Operand(op, i));
    inputs.push_back(value);
  }
  for (size_t i = 0; i < op.results.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(TensorType type, lowering.ResultType(op, i));
    outputs.push_back(lowering.NewValue(std::move(type)));
    lowering.Bind(op.results[i], outputs.back());
  }
  // The execution prefixes a failing step's error with its op's origin: the message is
  // stored without it.
  std::string message(status.message());
  const std::string origin = lowering.Origin(op) + ": ";
  if (message.starts_with(origin)) message.erase(0, origin.size());
  lowering.Emit(op, "call_error", std::move(inputs), std::move(outputs), kernels::CallErrorParams{.message = message});
  return OkStatus();
}

}  // namespace stablert::plan
