#include "stablehlo/attr_util.h"

#include <cstring>
#include <memory>

namespace stablert::stablehlo {

ir::Attribute I64Elements(const std::vector<int64_t>& values) {
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(DType::kS64, {static_cast<int64_t>(values.size())});
  data->bytes.resize(values.size() * sizeof(int64_t));
  if (!values.empty()) std::memcpy(data->bytes.data(), values.data(), data->bytes.size());
  return ir::Attribute(ir::Attribute::Elements(std::move(data)));
}

ir::Attribute ZeroI64Elements(const Dims& dims) {
  auto data = std::make_shared<ir::ElementsData>();
  data->type = ir::Type::Tensor(DType::kS64, dims);
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  data->bytes.assign(static_cast<size_t>(n) * sizeof(int64_t), 0);
  return ir::Attribute(ir::Attribute::Elements(std::move(data)));
}

ir::Attribute I64(int64_t value) { return ir::Attribute(ir::Attribute::Integer{value, DType::kS64}); }

ir::Attribute Text(std::string value) { return ir::Attribute(std::move(value)); }

Status ReadSignedList(Cursor& c, std::vector<int64_t>* out, std::string_view what) {
  uint64_t count;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, what));
  out->resize(count);
  for (int64_t& v : *out) STABLERT_RETURN_IF_ERROR(c.ReadSignedVarInt(&v, what));
  return OkStatus();
}

}  // namespace stablert::stablehlo
