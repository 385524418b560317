#include "stablehlo/bytecode_reader.h"

#include <array>
#include <string>

#include "stablehlo/encoding.h"
#include "stablehlo/ir_section.h"

namespace stablert::stablehlo {
namespace {

constexpr std::string_view kMagic = "ML\xEFR";

const char* SectionName(int id) {
  static constexpr const char* kNames[kNumSections] = {
      "string section",   "dialect section",         "attribute/type data section",
      "attribute/type offset section", "IR section",  "resource data section",
      "resource offset section", "dialect version section", "properties section"};
  return id >= 0 && id < kNumSections ? kNames[id] : "unknown section";
}

struct Section {
  bool present = false;
  std::string_view data;
  size_t offset = 0;  // absolute offset of data
};

Status ReadStrings(const Section& section, BytecodeFile& file) {
  Cursor c(section.data, section.offset, SectionName(0));
  uint64_t count;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "string count"));
  std::vector<uint64_t> sizes(count);
  for (uint64_t& size : sizes) STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&size, "string size"));
  std::string_view data = c.rest();
  size_t data_offset = c.offset();
  uint64_t total = 0;
  for (uint64_t size : sizes) {
    if (size == 0 || size > data.size() || total > data.size() - size) {
      return c.Error("string sizes exceed the " + std::to_string(data.size()) +
                     " bytes of string data");
    }
    total += size;
  }
  if (total != data.size()) {
    return c.Error("string sizes cover " + std::to_string(total) + " bytes but the data holds " +
                   std::to_string(data.size()));
  }
  // Sizes are stored last string first; data is in forward order.
  file.strings.resize(count);
  size_t end = data.size();
  for (uint64_t i = 0; i < count; ++i) {
    size_t start = end - sizes[i];
    if (data[end - 1] != '\0') {
      return Cursor(data, data_offset, SectionName(0))
          .Error("string #" + std::to_string(count - 1 - i) + " is not NUL-terminated");
    }
    file.strings[count - 1 - i] = data.substr(start, sizes[i] - 1);
    end = start;
  }
  return OkStatus();
}

// A nested section header inside another section (dialect versions, isolated regions).
Status ReadNestedSection(Cursor& c, SectionId expected, std::string_view* payload,
                         size_t* payload_offset) {
  uint8_t id_and_aligned;
  STABLERT_RETURN_IF_ERROR(c.ReadByte(&id_and_aligned, "nested section id"));
  int id = id_and_aligned & 0x7F;
  if (id != static_cast<int>(expected)) {
    return c.Error("expected a nested " + std::string(SectionName(static_cast<int>(expected))) +
                   " (id " + std::to_string(static_cast<int>(expected)) + "), found id " +
                   std::to_string(id));
  }
  uint64_t length;
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&length, "nested section length"));
  if (id_and_aligned & 0x80) {
    uint64_t alignment;
    STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&alignment, "nested section alignment"));
    STABLERT_RETURN_IF_ERROR(c.AlignTo(alignment, "nested section data"));
  }
  *payload_offset = c.offset();
  return c.ReadBytes(length, payload, "nested section data");
}

Status ReadDialects(const Section& section, BytecodeFile& file) {
  Cursor c(section.data, section.offset, SectionName(1));
  uint64_t count;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "dialect count"));
  file.dialects.resize(count);
  for (DialectEntry& dialect : file.dialects) {
    uint64_t name;
    bool has_version = false;
    if (file.version >= 1) {
      STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&name, &has_version, "dialect name"));
    } else {
      STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&name, "dialect name"));
    }
    if (name >= file.strings.size()) {
      return c.Error("dialect name string #" + std::to_string(name) + " is out of range");
    }
    dialect.name = file.strings[name];
    if (has_version) {
      size_t offset;
      STABLERT_RETURN_IF_ERROR(
          ReadNestedSection(c, SectionId::kDialectVersions, &dialect.version, &offset));
    }
  }
  if (file.version >= 4) {
    uint64_t num_op_names;
    STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &num_op_names, "op name count"));
    file.op_names.reserve(num_op_names);
  }
  while (!c.empty()) {
    uint64_t dialect, names;
    STABLERT_RETURN_IF_ERROR(c.ReadIndex(count, &dialect, "op name dialect"));
    STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &names, "op name group size"));
    for (uint64_t i = 0; i < names; ++i) {
      uint64_t name;
      bool registered = true;
      if (file.version >= 5) {
        STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&name, &registered, "op name"));
      } else {
        STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&name, "op name"));
      }
      if (name >= file.strings.size()) {
        return c.Error("op name string #" + std::to_string(name) + " is out of range");
      }
      file.op_names.push_back({static_cast<uint32_t>(dialect), file.strings[name], registered});
    }
  }
  return OkStatus();
}

Status ReadEntryGroups(Cursor& c, const Section& data, uint64_t count, size_t num_dialects,
                       uint64_t* data_pos, std::vector<AttrTypeEntry>* out,
                       std::string_view what) {
  out->reserve(count);
  while (out->size() < count) {
    uint64_t dialect, entries;
    STABLERT_RETURN_IF_ERROR(c.ReadIndex(num_dialects, &dialect, "entry group dialect"));
    STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&entries, "entry group size"));
    if (entries > count - out->size()) {
      return c.Error("entry group of " + std::to_string(entries) + " " + std::string(what) +
                     " exceeds the declared count " + std::to_string(count));
    }
    for (uint64_t i = 0; i < entries; ++i) {
      uint64_t size;
      bool custom;
      STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&size, &custom, "entry size"));
      if (size > data.data.size() - *data_pos) {
        return c.Error(std::string(what) + " entry of " + std::to_string(size) +
                       " bytes overruns the attribute/type data section");
      }
      out->push_back({static_cast<uint32_t>(dialect), custom,
                      static_cast<uint32_t>(data.offset + *data_pos),
                      data.data.substr(*data_pos, size)});
      *data_pos += size;
    }
  }
  return OkStatus();
}

Status ReadAttrTypeTables(const Section& offsets, const Section& data, BytecodeFile& file) {
  Cursor c(offsets.data, offsets.offset, SectionName(3));
  uint64_t num_attrs, num_types;
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&num_attrs, "attribute count"));
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&num_types, "type count"));
  // Every entry takes at least one byte of this section.
  if (num_attrs > c.remaining() || num_types > c.remaining() - num_attrs) {
    return c.Error("attribute/type counts " + std::to_string(num_attrs) + "/" +
                   std::to_string(num_types) + " exceed the section size");
  }
  uint64_t data_pos = 0;
  STABLERT_RETURN_IF_ERROR(ReadEntryGroups(c, data, num_attrs, file.dialects.size(), &data_pos,
                                           &file.attributes, "attribute"));
  STABLERT_RETURN_IF_ERROR(ReadEntryGroups(c, data, num_types, file.dialects.size(), &data_pos,
                                           &file.types, "type"));
  return c.ExpectEnd("the attribute and type entry tables");
}

Status ReadResourceGroup(Cursor& c, const Section& data, uint64_t* data_pos, uint32_t group,
                         BytecodeFile& file) {
  uint64_t count;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "resource count"));
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t key, size;
    uint8_t kind;
    STABLERT_RETURN_IF_ERROR(c.ReadIndex(file.strings.size(), &key, "resource key"));
    STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&size, "resource size"));
    STABLERT_RETURN_IF_ERROR(c.ReadByte(&kind, "resource kind"));
    if (kind > 2) return c.Error("unknown resource kind " + std::to_string(kind));
    if (size > data.data.size() - *data_pos) {
      return c.Error("resource of " + std::to_string(size) + " bytes overruns the resource data");
    }
    file.resources.push_back({group, file.strings[key], kind, data.data.substr(*data_pos, size)});
    *data_pos += size;
  }
  return OkStatus();
}

Status ReadResources(const Section& offsets, const Section& data, BytecodeFile& file) {
  Cursor c(offsets.data, offsets.offset, SectionName(6));
  uint64_t data_pos = 0;
  uint64_t external;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &external, "external resource group count"));
  for (uint64_t i = 0; i < external; ++i) {
    uint64_t key;
    STABLERT_RETURN_IF_ERROR(c.ReadIndex(file.strings.size(), &key, "resource group key"));
    file.resource_groups.push_back(file.strings[key]);
    STABLERT_RETURN_IF_ERROR(
        ReadResourceGroup(c, data, &data_pos, file.resource_groups.size() - 1, file));
  }
  while (!c.empty()) {
    uint64_t dialect;
    STABLERT_RETURN_IF_ERROR(c.ReadIndex(file.dialects.size(), &dialect, "resource dialect"));
    file.resource_groups.push_back(file.dialects[dialect].name);
    STABLERT_RETURN_IF_ERROR(
        ReadResourceGroup(c, data, &data_pos, file.resource_groups.size() - 1, file));
  }
  return OkStatus();
}

Status ReadProperties(const Section& section, BytecodeFile& file) {
  Cursor c(section.data, section.offset, SectionName(8));
  if (c.empty()) return OkStatus();
  uint64_t count;
  STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "property entry count"));
  file.properties.reserve(count);
  file.properties_offsets.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view blob;
    uint64_t size;
    STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&size, "property entry size"));
    file.properties_offsets.push_back(static_cast<uint32_t>(c.offset()));
    STABLERT_RETURN_IF_ERROR(c.ReadBytes(size, &blob, "property entry"));
    file.properties.push_back(blob);
  }
  return c.ExpectEnd("the property entries");
}

}  // namespace

StatusOr<BytecodeFile> ReadBytecode(std::string_view buffer) {
  BytecodeFile file;
  file.buffer = buffer;
  if (buffer.size() > 0xFFFFFFF0u) return InvalidArgument("bytecode larger than 4 GiB");
  Cursor c(buffer, 0, "bytecode header");
  std::string_view magic;
  if (!c.ReadBytes(4, &magic, "magic").ok() || magic != kMagic) {
    return InvalidArgument(
        "not MLIR bytecode: the input does not start with the magic bytes 'ML\\xEFR'");
  }
  STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&file.version, "bytecode version"));
  if (file.version > kMaxBytecodeVersion) {
    return InvalidArgument("unsupported MLIR bytecode version " + std::to_string(file.version) +
                           " (this reader supports 0 to " +
                           std::to_string(kMaxBytecodeVersion) + ")");
  }
  STABLERT_RETURN_IF_ERROR(c.ReadNullTerminated(&file.producer, "producer string"));

  std::array<Section, kNumSections> sections;
  Cursor s(buffer.substr(c.offset()), c.offset(), "section table");
  while (!s.empty()) {
    uint8_t id_and_aligned;
    STABLERT_RETURN_IF_ERROR(s.ReadByte(&id_and_aligned, "section id"));
    int id = id_and_aligned & 0x7F;
    if (id >= kNumSections || id == static_cast<int>(SectionId::kDialectVersions)) {
      return s.Error("invalid top-level section id " + std::to_string(id));
    }
    if (sections[id].present) return s.Error("duplicate " + std::string(SectionName(id)));
    uint64_t length;
    STABLERT_RETURN_IF_ERROR(s.ReadVarInt(&length, "section length"));
    if (id_and_aligned & 0x80) {
      uint64_t alignment;
      STABLERT_RETURN_IF_ERROR(s.ReadVarInt(&alignment, "section alignment"));
      STABLERT_RETURN_IF_ERROR(s.AlignTo(alignment, SectionName(id)));
    }
    sections[id].present = true;
    sections[id].offset = s.offset();
    STABLERT_RETURN_IF_ERROR(s.ReadBytes(length, &sections[id].data, SectionName(id)));
  }
  for (SectionId required : {SectionId::kString, SectionId::kDialect, SectionId::kAttrType,
                             SectionId::kAttrTypeOffset, SectionId::kIR}) {
    if (!sections[static_cast<int>(required)].present) {
      return InvalidArgument("malformed bytecode: missing " +
                             std::string(SectionName(static_cast<int>(required))));
    }
  }
  if (file.version >= 5 && !sections[static_cast<int>(SectionId::kProperties)].present) {
    return InvalidArgument("malformed bytecode: missing properties section (required from "
                           "bytecode version 5)");
  }
  const Section& resource = sections[static_cast<int>(SectionId::kResource)];
  const Section& resource_offsets = sections[static_cast<int>(SectionId::kResourceOffset)];
  if (resource.present != resource_offsets.present) {
    return InvalidArgument(
        "malformed bytecode: resource data and resource offset sections must appear together");
  }

  STABLERT_RETURN_IF_ERROR(ReadStrings(sections[0], file));
  if (sections[static_cast<int>(SectionId::kProperties)].present) {
    STABLERT_RETURN_IF_ERROR(ReadProperties(sections[8], file));
  }
  STABLERT_RETURN_IF_ERROR(ReadDialects(sections[1], file));
  if (resource.present) STABLERT_RETURN_IF_ERROR(ReadResources(resource_offsets, resource, file));
  STABLERT_RETURN_IF_ERROR(ReadAttrTypeTables(sections[3], sections[2], file));
  const Section& ir = sections[static_cast<int>(SectionId::kIR)];
  STABLERT_RETURN_IF_ERROR(ReadIrSection(ir.data, ir.offset, file));
  return file;
}

}  // namespace stablert::stablehlo
