#include "base/shape.h"

namespace stablert {

StatusOr<int64_t> CheckedElementCount(const Dims& dims) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("negative dimension " + std::to_string(d) + " in shape " + DimsToString(dims));
    if (d != 0 && count > INT64_MAX / d) return InvalidArgument("element count of shape " + DimsToString(dims) + " overflows int64");
    count *= d;
  }
  return count;
}

int64_t ElementCount(const Dims& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

Dims RowMajorStrides(const Dims& dims) {
  Dims strides(dims.size());
  int64_t stride = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= dims[i];
  }
  return strides;
}

std::string DimsToString(const Dims& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

}  // namespace stablert
