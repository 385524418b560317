// Generic MLIR bytecode container reader (no dialect knowledge).
//
// ReadBytecode splits a bytecode buffer (magic "ML\xEFR", bytecode versions 0..6) into its
// sections and decodes the dialect-independent parts: string table, dialect and op-name
// tables, attribute/type entry table (left undecoded: dialect decoders read entries
// lazily), resource tables, property blobs, and the IR section as a flat tree of
// operations, regions, blocks and values. Value numbering follows the bytecode rules
// (value scopes per isolated region, forward references patched, use-list orders
// skipped), so every operand is a file-wide value index.
//
// Ownership: a BytecodeFile holds string_views into the input buffer, which must outlive
// it. Failure: malformed or truncated input returns InvalidArgument naming the section,
// the byte offset and what was expected; no read goes past the buffer and no allocation
// exceeds what the remaining bytes can encode. Thread-safe for concurrent reads once
// built.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stablert::stablehlo {

inline constexpr uint32_t kNoIndex = 0xFFFFFFFFu;
inline constexpr uint64_t kMaxBytecodeVersion = 6;

// Section ids of the container.
enum class SectionId : uint8_t {
  kString = 0,
  kDialect = 1,
  kAttrType = 2,
  kAttrTypeOffset = 3,
  kIR = 4,
  kResource = 5,
  kResourceOffset = 6,
  kDialectVersions = 7,
  kProperties = 8,
};
inline constexpr int kNumSections = 9;

struct DialectEntry {
  std::string_view name;
  std::string_view version;  // raw dialect version payload; empty if none
};

struct OpNameEntry {
  uint32_t dialect;       // index into BytecodeFile::dialects
  std::string_view name;  // without the dialect prefix, e.g. "add_v1"
  bool registered;        // always true before bytecode version 5
};

// One attribute or type entry: `data` is its encoding, either custom (dialect-specific,
// starting with a kind code) or a NUL-terminated textual MLIR assembly string.
struct AttrTypeEntry {
  uint32_t dialect;
  bool custom;
  uint32_t offset;  // absolute offset of `data` in the file
  std::string_view data;
};

struct ResourceEntry {
  uint32_t group;  // index into BytecodeFile::resource_groups
  std::string_view key;
  uint8_t kind;    // 0 blob, 1 bool, 2 string
  std::string_view data;
};

struct RawValue {
  uint32_t type;      // index into BytecodeFile::types
  uint32_t location;  // block arguments: location attribute index, or kNoIndex
};

struct RawOperation {
  uint32_t name;                      // index into op_names
  uint32_t location;                  // attribute index (a location attribute)
  uint32_t attr_dict = kNoIndex;      // attribute index of the discardable dictionary
  uint32_t properties = kNoIndex;     // index into BytecodeFile::properties
  uint32_t properties_attr = kNoIndex;  // unregistered ops: properties as an attribute
  uint32_t first_result = 0, num_results = 0;    // into values
  uint32_t first_operand = 0, num_operands = 0;  // into operands (file-wide value indices)
  uint32_t first_successor = 0, num_successors = 0;  // into successors (block indices)
  uint32_t first_region = 0, num_regions = 0;    // into regions
  bool isolated = false;
};

struct RawRegion {
  uint32_t first_block = 0, num_blocks = 0;  // into blocks
};

struct RawBlock {
  uint32_t first_argument = 0, num_arguments = 0;  // into values
  uint32_t first_op = 0, num_ops = 0;              // into ops (contiguous)
};

struct BytecodeFile {
  std::string_view buffer;   // the whole input
  uint64_t version = 0;      // bytecode version
  std::string_view producer;

  std::vector<std::string_view> strings;
  std::vector<DialectEntry> dialects;
  std::vector<OpNameEntry> op_names;
  std::vector<AttrTypeEntry> attributes;
  std::vector<AttrTypeEntry> types;
  std::vector<std::string_view> properties;   // raw property blobs
  std::vector<uint32_t> properties_offsets;   // absolute offset of each blob
  std::vector<std::string_view> resource_groups;  // external group keys, then dialect names
  std::vector<ResourceEntry> resources;

  std::vector<RawOperation> ops;
  std::vector<RawRegion> regions;
  std::vector<RawBlock> blocks;
  std::vector<RawValue> values;
  std::vector<uint32_t> operands;
  std::vector<uint32_t> successors;
  uint32_t root_op = kNoIndex;  // the single top-level operation

  std::string_view dialect_of(const RawOperation& op) const {
    return dialects[op_names[op.name].dialect].name;
  }
  std::string_view op_name(const RawOperation& op) const { return op_names[op.name].name; }
};

// Reads the container. `buffer` must outlive the result.
StatusOr<BytecodeFile> ReadBytecode(std::string_view buffer);

}  // namespace stablert::stablehlo
