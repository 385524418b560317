#include "capi/layout.h"

#include "capi/error.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace stablert::capi {

static_assert(static_cast<int>(DType::kF32) == PJRT_Buffer_Type_F32);
static_assert(static_cast<int>(DType::kBF16) == PJRT_Buffer_Type_BF16);
static_assert(static_cast<int>(DType::kF6E3M2FN) == PJRT_Buffer_Type_F6E3M2FN);
static_assert(static_cast<int>(DType::kToken) == PJRT_Buffer_Type_TOKEN);

StatusOr<DType> ToDType(const char* function, int64_t type) {
  std::optional<DType> dtype =
      type < 0 || type > kNumDTypes ? std::nullopt : DTypeFromOrdinal(static_cast<int>(type));
  if (!dtype || *dtype == DType::kToken)
    return InvalidArgument(std::string(function) + ": unsupported PJRT_Buffer_Type " + std::to_string(type));
  return *dtype;
}

StatusOr<int64_t> ArrayByteSize(const char* function, const Dims& dims, DType dtype) {
  auto bytes = CheckedByteSize(dims, DTypeByteSize(dtype));
  if (!bytes.ok()) return bytes.status().WithPrefix(function);
  return *bytes;
}

StatusOr<size_t> HostDestinationBytes(const char* function, const Dims& dims, DType dtype,
                                      const std::vector<int64_t>& byte_strides) {
  if (byte_strides.empty()) {
    STABLERT_ASSIGN_OR_RETURN(int64_t bytes, ArrayByteSize(function, dims, dtype));
    return static_cast<size_t>(bytes);
  }
  for (size_t d = 0; d < byte_strides.size(); ++d)
    if (byte_strides[d] < 0)
      return InvalidArgument(std::string(function) + ": host byte_strides[" + std::to_string(d) + "] = " +
                             std::to_string(byte_strides[d]) +
                             " is negative; expected non-negative strides that keep every element inside dst");
  auto span = CheckedStridedSpan(dims, byte_strides, DTypeByteSize(dtype));
  if (!span.ok()) return span.status().WithPrefix(std::string(function) + ": host layout");
  return static_cast<size_t>(span->end);
}

Status CheckHostSourceStrides(const char* function, const Dims& dims, DType dtype,
                              const std::vector<int64_t>& byte_strides) {
  if (byte_strides.empty()) return OkStatus();
  auto span = CheckedStridedSpan(dims, byte_strides, DTypeByteSize(dtype));
  if (!span.ok()) return span.status().WithPrefix(function);
  return OkStatus();
}

StatusOr<Dims> ToDims(const char* function, const int64_t* dims, size_t count) {
  if (count > 64) return InvalidArgument(std::string(function) + ": rank " + std::to_string(count) + " exceeds 64");
  if (count > 0 && !dims) return InvalidArgument(std::string(function) + ": dims is null for rank " + std::to_string(count));
  Dims result(dims, dims + count);
  for (int64_t d : result)
    if (d < 0) return InvalidArgument(std::string(function) + ": negative dimension in " + DimsToString(result));
  return result;
}

namespace {

bool IsDescending(const int64_t* minor_to_major, size_t size) {
  for (size_t i = 0; i < size; ++i)
    if (minor_to_major[i] != static_cast<int64_t>(size - 1 - i)) return false;
  return true;
}

}  // namespace

StatusOr<std::vector<int64_t>> DeviceLayoutOrder(const char* function, const PJRT_Buffer_MemoryLayout* layout,
                                                 const Dims& dims, DType dtype) {
  STABLERT_ASSIGN_OR_RETURN(std::vector<int64_t> strides, HostByteStrides(function, layout, dims, dtype));
  if (strides.empty()) return std::vector<int64_t>{};
  std::vector<int64_t> order(dims.size());
  if (RawEnumValue(layout->type) == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    // HostByteStrides checked that minor_to_major is a permutation of the dimensions.
    order.assign(layout->tiled.minor_to_major, layout->tiled.minor_to_major + dims.size());
    std::reverse(order.begin(), order.end());
    return order;
  }
  // Dimensions of extent > 1 by decreasing stride (ties keep the dimension order), then the
  // others, whose place does not move a byte.
  std::vector<int64_t> spread, flat;
  for (size_t d = 0; d < dims.size(); ++d) (dims[d] > 1 ? spread : flat).push_back(static_cast<int64_t>(d));
  std::stable_sort(spread.begin(), spread.end(), [&](int64_t a, int64_t b) { return strides[a] > strides[b]; });
  order = spread;
  order.insert(order.end(), flat.begin(), flat.end());
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) return order;  // no bytes to place
  int64_t expected = DTypeByteSize(dtype);
  for (size_t q = spread.size(); q-- > 0;) {
    if (strides[spread[q]] != expected)
      return Unimplemented(std::string(function) +
                           ": a device layout's byte strides must be those of a dense array in some dimension "
                           "order (StableRT stores arrays without gaps or overlaps); got strides for shape " +
                           DimsToString(dims));
    expected *= dims[spread[q]];
  }
  return order;
}

StatusOr<std::vector<int64_t>> HostByteStrides(const char* function, const PJRT_Buffer_MemoryLayout* layout,
                                               const Dims& dims, DType dtype) {
  if (!layout) return std::vector<int64_t>{};
  int64_t element = DTypeByteSize(dtype);
  const int64_t type = RawEnumValue(layout->type);
  if (type == PJRT_Buffer_MemoryLayout_Type_Strides) {
    const auto& s = layout->strides;
    if (s.num_byte_strides != dims.size() || (dims.size() && !s.byte_strides))
      return InvalidArgument(std::string(function) + ": " + std::to_string(s.num_byte_strides) +
                             " byte strides for rank " + std::to_string(dims.size()));
    std::vector<int64_t> strides(s.byte_strides, s.byte_strides + s.num_byte_strides);
    STABLERT_RETURN_IF_ERROR(ArrayByteSize(function, dims, dtype).status());
    Dims dense = RowMajorStrides(dims);
    bool is_dense = true;
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] > 1 && strides[i] != dense[i] * element) is_dense = false;
    if (is_dense) strides.clear();
    return strides;
  }
  if (type != PJRT_Buffer_MemoryLayout_Type_Tiled)
    return InvalidArgument(std::string(function) + ": unknown memory layout type " + std::to_string(type));
  const auto& t = layout->tiled;
  if (t.num_tiles != 0)
    return Unimplemented(std::string(function) + ": tiled memory layouts are not supported (" +
                         std::to_string(t.num_tiles) +
                         " tiles given; StableRT stores dense arrays: expected a Tiled layout without tiles, "
                         "that is a minor_to_major permutation of the dimensions, or the byte strides of a "
                         "dense array)");
  if (t.minor_to_major_size != dims.size() || (dims.size() && !t.minor_to_major))
    return InvalidArgument(std::string(function) + ": minor_to_major has " + std::to_string(t.minor_to_major_size) +
                           " entries for rank " + std::to_string(dims.size()));
  if (IsDescending(t.minor_to_major, t.minor_to_major_size)) return std::vector<int64_t>{};
  std::vector<int64_t> strides(dims.size(), -1);
  int64_t stride = element;
  for (size_t i = 0; i < t.minor_to_major_size; ++i) {
    int64_t dim = t.minor_to_major[i];
    if (dim < 0 || dim >= static_cast<int64_t>(dims.size()) || strides[dim] != -1)
      return InvalidArgument(std::string(function) + ": minor_to_major is not a permutation of the dimensions");
    strides[dim] = stride;
    std::optional<int64_t> next = CheckedMul(stride, dims[dim]);
    if (!next)
      return InvalidArgument(std::string(function) + ": the byte size of shape " + DimsToString(dims) +
                             " in minor_to_major order overflows int64");
    stride = *next;
  }
  return strides;
}

}  // namespace stablert::capi
