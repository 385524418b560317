#include "npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace stablert::cli {
namespace {

struct Descr {
  const char* descr;
  PJRT_Buffer_Type type;
};

constexpr Descr kDescrs[] = {
    {"|b1", PJRT_Buffer_Type_PRED}, {"|i1", PJRT_Buffer_Type_S8},   {"<i2", PJRT_Buffer_Type_S16},
    {"<i4", PJRT_Buffer_Type_S32},  {"<i8", PJRT_Buffer_Type_S64},  {"|u1", PJRT_Buffer_Type_U8},
    {"<u2", PJRT_Buffer_Type_U16},  {"<u4", PJRT_Buffer_Type_U32},  {"<u8", PJRT_Buffer_Type_U64},
    {"<f2", PJRT_Buffer_Type_F16},  {"<f4", PJRT_Buffer_Type_F32},  {"<f8", PJRT_Buffer_Type_F64},
    {"<c8", PJRT_Buffer_Type_C64},  {"<c16", PJRT_Buffer_Type_C128},
};

// The value of `key` in the header dict, up to the next top-level ',' or '}'.
std::string DictValue(const std::string& header, const std::string& key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  size_t colon = header.find(':', at);
  if (colon == std::string::npos) return "";
  size_t start = colon + 1;
  while (start < header.size() && header[start] == ' ') ++start;
  int depth = 0;
  size_t end = start;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string value = header.substr(start, end - start);
  while (!value.empty() && value.back() == ' ') value.pop_back();
  return value;
}

}  // namespace

StatusOr<host::Literal> ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string data = buffer.str();
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0)
    return InvalidArgument(path + ": not a .npy file (no \\x93NUMPY magic)");
  int major = static_cast<unsigned char>(data[6]);
  size_t header_length = 0, header_start = 0;
  if (major == 1) {
    header_length = static_cast<unsigned char>(data[8]) | (static_cast<size_t>(static_cast<unsigned char>(data[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (data.size() < 12) return InvalidArgument(path + ": truncated .npy header");
    for (int i = 0; i < 4; ++i) header_length |= static_cast<size_t>(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return InvalidArgument(path + ": .npy version " + std::to_string(major) + " (expected 1, 2 or 3)");
  }
  if (header_start + header_length > data.size()) return InvalidArgument(path + ": truncated .npy header");
  std::string header = data.substr(header_start, header_length);
  std::string descr = DictValue(header, "descr");
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);  // strip quotes
  // NumPy writes one-byte types with '|'; accept '<' for them too.
  if (descr.size() == 3 && descr[0] == '<' && descr[2] == '1') descr[0] = '|';
  host::Literal literal;
  bool known = false;
  for (const Descr& d : kDescrs)
    if (descr == d.descr) {
      literal.type = d.type;
      known = true;
    }
  if (!known)
    return InvalidArgument(path + ": dtype '" + descr +
                           "' is not supported (expected little-endian bool, integers, f16/f32/f64, complex)");
  std::string fortran_order = DictValue(header, "fortran_order");
  if (fortran_order != "False" && fortran_order != "True")
    return InvalidArgument(path + ": fortran_order is '" + fortran_order + "' (expected True or False)");
  std::string shape = DictValue(header, "shape");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    return InvalidArgument(path + ": malformed shape '" + shape + "'");
  std::stringstream dims(shape.substr(1, shape.size() - 2));
  for (std::string item; std::getline(dims, item, ',');) {
    size_t first = item.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    try {
      size_t used = 0;
      long long d = std::stoll(item.substr(first), &used);
      if (d < 0) return InvalidArgument(path + ": negative dimension in shape " + shape);
      literal.dims.push_back(d);
    } catch (...) {
      return InvalidArgument(path + ": malformed shape '" + shape + "'");
    }
  }
  STABLERT_ASSIGN_OR_RETURN(int64_t bytes, host::DenseBytes(literal.type, literal.dims));
  size_t body = header_start + header_length;
  if (data.size() - body != static_cast<size_t>(bytes))
    return InvalidArgument(path + ": " + std::to_string(data.size() - body) + " bytes of data for shape " + shape +
                           " (expected " + std::to_string(bytes) + ")");
  literal.bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(body), data.end());
  // Fortran order: the bytes stay column-major, and the literal says so by its strides.
  if (fortran_order == "True" && literal.dims.size() > 1) {
    STABLERT_ASSIGN_OR_RETURN(int64_t element, host::DenseBytes(literal.type, {1}));
    STABLERT_ASSIGN_OR_RETURN(literal.byte_strides,
                              host::LayoutByteStrides(host::MemoryLayout::ColumnMajor(literal.dims.size()),
                                                      literal.dims, element, path));
  }
  return literal;
}

Status WriteNpy(const std::string& path, const host::Literal& given) {
  host::Literal dense;
  if (!given.byte_strides.empty()) {
    STABLERT_ASSIGN_OR_RETURN(dense, host::ToRowMajor(given.view()));
  }
  const host::Literal& literal = given.byte_strides.empty() ? given : dense;
  const char* descr = nullptr;
  for (const Descr& d : kDescrs)
    if (d.type == literal.type) descr = d.descr;
  if (!descr)
    return InvalidArgument(path + ": arrays of " + host::ElementTypeName(literal.type) +
                           " have no .npy dtype without ml_dtypes");
  std::string shape = "(";
  for (size_t i = 0; i < literal.dims.size(); ++i) shape += std::to_string(literal.dims[i]) + ", ";
  if (literal.dims.size() > 1) shape.resize(shape.size() - 2);
  if (literal.dims.size() == 1) shape.resize(shape.size() - 1);
  if (literal.dims.empty()) shape = "(";
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Total header (magic + version + length + dict + padding + '\n') a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) return InvalidArgument(path + ": cannot write");
  out.write("\x93NUMPY\x01\x00", 8);
  char length[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(length, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(literal.bytes.data()), static_cast<std::streamsize>(literal.bytes.size()));
  if (!out) return DataLoss(path + ": write failed");
  return OkStatus();
}

}  // namespace stablert::cli
