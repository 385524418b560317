#include "capi/serialization.h"

#include "base/proto_wire.h"

namespace stablert::capi {
namespace {

constexpr char kMagic[] = "StableRT-executable";
constexpr uint64_t kFormatVersion = 1;
enum Field : uint32_t { kMagicField = 1, kVersion = 2, kProgram = 3, kFormat = 4, kCompileOptions = 5 };

}  // namespace

std::string SerializeExecutable(const SerializedExecutable& executable) {
  proto::WireWriter writer;
  writer.Bytes(kMagicField, kMagic);
  writer.Varint(kVersion, kFormatVersion);
  writer.Bytes(kProgram, executable.program);
  writer.Bytes(kFormat, executable.format);
  writer.Bytes(kCompileOptions, executable.compile_options);
  return writer.Take();
}

StatusOr<SerializedExecutable> DeserializeExecutable(std::string_view bytes) {
  proto::WireReader reader(bytes);
  SerializedExecutable result;
  bool has_magic = false;
  uint64_t version = 0;
  while (!reader.done()) {
    auto field = reader.Next();
    if (!field.ok()) break;
    switch (field->number) {
      case kMagicField: has_magic = field->bytes == kMagic; break;
      case kVersion: version = field->varint; break;
      case kProgram: result.program = std::string(field->bytes); break;
      case kFormat: result.format = std::string(field->bytes); break;
      case kCompileOptions: result.compile_options = std::string(field->bytes); break;
      default: break;
    }
    if (!has_magic) break;
  }
  if (!has_magic)
    return InvalidArgument("PJRT_Executable_DeserializeAndLoad: the bytes are not a serialized StableRT executable");
  if (version != kFormatVersion)
    return InvalidArgument("PJRT_Executable_DeserializeAndLoad: serialized executable format version " +
                           std::to_string(version) + "; this build reads version " + std::to_string(kFormatVersion));
  if (!reader.done())
    return InvalidArgument("PJRT_Executable_DeserializeAndLoad: the serialized executable is truncated or corrupt");
  return result;
}

}  // namespace stablert::capi
