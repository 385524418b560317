#include "compare.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "base/dtype.h"
#include "kernels/half.h"
#include "program_file.h"

namespace stablert::cli {
namespace {

// Decodes element `i` of a float-like literal of `dtype` to double; false if not supported.
bool ReadFloat(DType dtype, const uint8_t* data, int64_t i, double* out) {
  switch (dtype) {
    case DType::kF32: case DType::kC64: {
      float v;
      std::memcpy(&v, data + 4 * i, 4);
      *out = v;
      return true;
    }
    case DType::kF64: case DType::kC128: {
      std::memcpy(out, data + 8 * i, 8);
      return true;
    }
    case DType::kF16: {
      kernels::F16 v;
      std::memcpy(&v.bits, data + 2 * i, 2);
      *out = kernels::F16ToFloat(v);
      return true;
    }
    case DType::kBF16: {
      kernels::BF16 v;
      std::memcpy(&v.bits, data + 2 * i, 2);
      *out = kernels::BF16ToFloat(v);
      return true;
    }
    default:
      return false;
  }
}

double DefaultTolerance(DType dtype) {
  switch (dtype) {
    case DType::kF16: return 1e-3;
    case DType::kBF16: return 1e-2;
    case DType::kF32: case DType::kC64: return 1e-5;
    case DType::kF64: case DType::kC128: return 1e-12;
    default: return 1e-1;  // 8-bit and narrower floats
  }
}

}  // namespace

Comparison CompareLiterals(const host::Literal& a, const host::Literal& b, const Tolerance& tolerance) {
  Comparison result;
  std::ostringstream detail;
  if (a.type != b.type || a.dims != b.dims || a.bytes.size() != b.bytes.size()) {
    result.agree = false;
    result.detail = "one is " + DescribeLiteral(a) + ", the other " + DescribeLiteral(b);
    return result;
  }
  std::optional<DType> dtype = DTypeFromOrdinal(static_cast<int>(a.type));
  bool is_float = dtype && (IsFloat(*dtype) || IsComplex(*dtype));
  double probe;
  if (is_float && ReadFloat(*dtype, a.bytes.data(), 0, &probe)) {
    int parts = IsComplex(*dtype) ? 2 : 1;
    int part_bytes = DTypeByteSize(*dtype) / parts;
    int64_t count = static_cast<int64_t>(a.bytes.size()) / part_bytes;
    double rtol = tolerance.rtol.value_or(DefaultTolerance(*dtype));
    double atol = tolerance.atol.value_or(DefaultTolerance(*dtype));
    for (int64_t i = 0; i < count; ++i) {
      double x = 0, y = 0;
      ReadFloat(*dtype, a.bytes.data(), i, &x);
      ReadFloat(*dtype, b.bytes.data(), i, &y);
      bool same;
      if (std::isnan(x) || std::isnan(y)) same = std::isnan(x) && std::isnan(y);
      else if (std::isinf(x) || std::isinf(y)) same = x == y;
      else {
        double diff = std::fabs(x - y);
        result.max_abs_diff = std::max(result.max_abs_diff, diff);
        same = diff <= atol + rtol * std::fabs(y);
      }
      if (!same) {
        if (result.mismatches++ == 0) {
          result.first_mismatch = i / parts;
          detail << "first at element " << i / parts << ": " << x << " vs " << y << "; ";
        }
      }
    }
    detail << result.mismatches << " of " << count / parts << " elements differ beyond rtol " << rtol << ", atol "
           << atol << "; max |diff| " << result.max_abs_diff;
  } else if (is_float) {
    // Formats without a decoder here (8-bit and narrower floats): bitwise.
    for (size_t i = 0; i < a.bytes.size(); ++i)
      if (a.bytes[i] != b.bytes[i] && result.mismatches++ == 0) result.first_mismatch = static_cast<int64_t>(i);
    detail << result.mismatches << " elements differ bitwise";
  } else {
    int width = dtype ? std::max(1, DTypeByteSize(*dtype)) : 1;
    for (size_t i = 0; i < a.bytes.size(); i += static_cast<size_t>(width))
      if (std::memcmp(&a.bytes[i], &b.bytes[i], static_cast<size_t>(width)) != 0 && result.mismatches++ == 0)
        result.first_mismatch = static_cast<int64_t>(i) / width;
    detail << result.mismatches << " of " << a.bytes.size() / static_cast<size_t>(width) << " elements differ (exact)";
    if (result.first_mismatch >= 0) detail << ", first at element " << result.first_mismatch;
  }
  result.agree = result.mismatches == 0;
  result.detail = detail.str();
  return result;
}

}  // namespace stablert::cli
