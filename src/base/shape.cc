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

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

StatusOr<int64_t> CheckedByteSize(const Dims& dims, int64_t element_size) {
  if (element_size < 0) return InvalidArgument("negative element size " + std::to_string(element_size));
  STABLERT_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(dims));
  std::optional<int64_t> bytes = CheckedMul(count, element_size);
  if (!bytes)
    return InvalidArgument("byte size of shape " + DimsToString(dims) + " with " + std::to_string(element_size) +
                           "-byte elements overflows int64 (" + std::to_string(count) + " elements)");
  return *bytes;
}

StatusOr<ByteSpan> CheckedStridedSpan(const Dims& dims, const std::vector<int64_t>& byte_strides,
                                      int64_t element_size) {
  if (byte_strides.size() != dims.size())
    return InvalidArgument(std::to_string(byte_strides.size()) + " byte strides for rank " +
                           std::to_string(dims.size()));
  if (element_size < 0) return InvalidArgument("negative element size " + std::to_string(element_size));
  STABLERT_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(dims));
  if (count == 0) return ByteSpan{};
  ByteSpan span;
  for (size_t d = 0; d < dims.size(); ++d) {
    std::optional<int64_t> reach = CheckedMul(byte_strides[d], dims[d] - 1);
    std::optional<int64_t> next = reach ? (*reach < 0 ? CheckedAdd(span.begin, *reach) : CheckedAdd(span.end, *reach))
                                        : std::nullopt;
    if (!next)
      return InvalidArgument("byte_strides[" + std::to_string(d) + "] = " + std::to_string(byte_strides[d]) +
                             " over dimension " + std::to_string(dims[d]) + " of shape " + DimsToString(dims) +
                             " reaches an offset that overflows int64");
    (*reach < 0 ? span.begin : span.end) = *next;
  }
  std::optional<int64_t> end = CheckedAdd(span.end, element_size);
  if (!end)
    return InvalidArgument("the last element of shape " + DimsToString(dims) + " with byte_strides ends past int64");
  span.end = *end;
  // The whole span must be addressable as one size (end - begin).
  int64_t total;
  if (__builtin_sub_overflow(span.end, span.begin, &total))
    return InvalidArgument("the byte_strides of shape " + DimsToString(dims) + " span more than 2^63 bytes");
  return span;
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
