#include "stablehlo/ir_section.h"

#include <string>
#include <vector>

#include "stablehlo/encoding.h"

namespace stablert::stablehlo {
namespace {

// Operation encoding mask bits.
constexpr uint8_t kHasAttrs = 0x01;
constexpr uint8_t kHasResults = 0x02;
constexpr uint8_t kHasOperands = 0x04;
constexpr uint8_t kHasSuccessors = 0x08;
constexpr uint8_t kHasInlineRegions = 0x10;
constexpr uint8_t kHasUseListOrders = 0x20;
constexpr uint8_t kHasProperties = 0x40;
constexpr uint8_t kKnownMaskBits = 0x7F;

constexpr uint64_t kVersionDialectVersioning = 1;
constexpr uint64_t kVersionLazyLoading = 2;
constexpr uint64_t kVersionUseListOrdering = 3;
constexpr uint64_t kVersionElideBlockArgLocation = 4;
constexpr uint64_t kVersionNativeProperties = 5;

class IrReader {
 public:
  explicit IrReader(BytecodeFile& file) : file_(file) {}

  Status ReadTopLevel(Cursor& c) {
    uint64_t num_ops;
    bool has_args;
    STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&num_ops, &has_args, "top-level block header"));
    if (num_ops != 1 || has_args) {
      return c.Error("the top-level block must hold exactly one operation and no arguments");
    }
    scopes_.emplace_back();
    file_.root_op = static_cast<uint32_t>(file_.ops.size());
    file_.ops.emplace_back();
    STABLERT_RETURN_IF_ERROR(ReadOperation(c, file_.root_op, 0));
    scopes_.pop_back();
    return c.ExpectEnd("the top-level operation");
  }

 private:
  struct OpenRegion {
    uint32_t base;  // first slot of the region in the scope
    uint32_t end;   // one past its last slot
    uint32_t next;  // next slot to define
    uint32_t num_blocks;
  };
  struct PendingUse {
    uint32_t slot;
    uint32_t operand;  // index into file_.operands
  };
  // Values visible to one isolated region tree.
  struct Scope {
    std::vector<uint32_t> slots;  // file-wide value index, or kNoIndex until defined
    std::vector<OpenRegion> regions;
    std::vector<PendingUse> pending;
  };

  Status DefineValue(Cursor& c, uint32_t type, uint32_t location) {
    Scope& scope = scopes_.back();
    if (scope.regions.empty()) return c.Error("a value is defined outside of any region");
    OpenRegion& region = scope.regions.back();
    if (region.next >= region.end) {
      return c.Error("the region defines more values than the " +
                     std::to_string(region.end - region.base) + " it declares");
    }
    uint32_t value = static_cast<uint32_t>(file_.values.size());
    file_.values.push_back({type, location});
    uint32_t slot = region.next++;
    scope.slots[slot] = value;
    if (!scope.pending.empty()) {
      for (size_t i = 0; i < scope.pending.size();) {
        if (scope.pending[i].slot == slot) {
          file_.operands[scope.pending[i].operand] = value;
          scope.pending[i] = scope.pending.back();
          scope.pending.pop_back();
        } else {
          ++i;
        }
      }
    }
    return OkStatus();
  }

  Status ReadOperand(Cursor& c) {
    Scope& scope = scopes_.back();
    uint64_t slot;
    STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&slot, "operand value index"));
    if (slot >= scope.slots.size()) {
      return c.Error("operand refers to value #" + std::to_string(slot) + " but only " +
                     std::to_string(scope.slots.size()) + " values are in scope");
    }
    uint32_t value = scope.slots[slot];
    if (value == kNoIndex) {  // forward reference, patched when the value is defined
      scope.pending.push_back({static_cast<uint32_t>(slot),
                               static_cast<uint32_t>(file_.operands.size())});
    }
    file_.operands.push_back(value);
    return OkStatus();
  }

  Status ReadUseListOrders(Cursor& c, uint64_t num_values) {
    uint64_t with_order = 1;
    if (num_values > 1) {
      STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &with_order, "use-list order count"));
    }
    for (uint64_t i = 0; i < with_order; ++i) {
      if (num_values > 1) {
        uint64_t index;
        STABLERT_RETURN_IF_ERROR(c.ReadIndex(num_values, &index, "use-list value index"));
      }
      uint64_t num_indices;
      bool pairs;
      STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&num_indices, &pairs, "use-list size"));
      if (num_indices > c.remaining()) return c.Error("use-list order overruns the section");
      for (uint64_t j = 0; j < num_indices; ++j) {
        uint64_t ignored;
        STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&ignored, "use-list index"));
      }
    }
    return OkStatus();
  }

  Status ReadOperation(Cursor& c, uint32_t index, int depth) {
    RawOperation op;
    uint64_t value;
    STABLERT_RETURN_IF_ERROR(c.ReadIndex(file_.op_names.size(), &value, "operation name"));
    op.name = static_cast<uint32_t>(value);
    uint8_t mask;
    STABLERT_RETURN_IF_ERROR(c.ReadByte(&mask, "operation encoding mask"));
    if (mask & ~kKnownMaskBits) return c.Error("unknown bits in operation encoding mask");
    STABLERT_RETURN_IF_ERROR(c.ReadIndex(file_.attributes.size(), &value, "operation location"));
    op.location = static_cast<uint32_t>(value);
    if (mask & kHasAttrs) {
      STABLERT_RETURN_IF_ERROR(
          c.ReadIndex(file_.attributes.size(), &value, "operation attribute dictionary"));
      op.attr_dict = static_cast<uint32_t>(value);
    }
    if (mask & kHasProperties) {
      if (file_.version < kVersionNativeProperties) {
        return c.Error("operation has properties, which bytecode version " +
                       std::to_string(file_.version) + " does not allow");
      }
      if (file_.op_names[op.name].registered) {
        STABLERT_RETURN_IF_ERROR(
            c.ReadIndex(file_.properties.size(), &value, "operation properties"));
        op.properties = static_cast<uint32_t>(value);
      } else {
        STABLERT_RETURN_IF_ERROR(
            c.ReadIndex(file_.attributes.size(), &value, "operation properties attribute"));
        op.properties_attr = static_cast<uint32_t>(value);
      }
    }
    if (mask & kHasResults) {
      uint64_t count;
      STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "result count"));
      op.first_result = static_cast<uint32_t>(file_.values.size());
      op.num_results = static_cast<uint32_t>(count);
      for (uint64_t i = 0; i < count; ++i) {
        STABLERT_RETURN_IF_ERROR(c.ReadIndex(file_.types.size(), &value, "result type"));
        STABLERT_RETURN_IF_ERROR(DefineValue(c, static_cast<uint32_t>(value), kNoIndex));
      }
    }
    if (mask & kHasOperands) {
      uint64_t count;
      STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "operand count"));
      op.first_operand = static_cast<uint32_t>(file_.operands.size());
      op.num_operands = static_cast<uint32_t>(count);
      for (uint64_t i = 0; i < count; ++i) STABLERT_RETURN_IF_ERROR(ReadOperand(c));
    }
    if (mask & kHasSuccessors) {
      uint64_t count;
      STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &count, "successor count"));
      const Scope& scope = scopes_.back();
      uint64_t limit = scope.regions.empty() ? 0 : scope.regions.back().num_blocks;
      op.first_successor = static_cast<uint32_t>(file_.successors.size());
      op.num_successors = static_cast<uint32_t>(count);
      for (uint64_t i = 0; i < count; ++i) {
        STABLERT_RETURN_IF_ERROR(c.ReadIndex(limit, &value, "successor block"));
        file_.successors.push_back(static_cast<uint32_t>(value));
      }
    }
    if (mask & kHasUseListOrders) {
      if (file_.version < kVersionUseListOrdering) {
        return c.Error("use-list orders are not allowed in bytecode version " +
                       std::to_string(file_.version));
      }
      STABLERT_RETURN_IF_ERROR(ReadUseListOrders(c, op.num_results));
    }
    if (mask & kHasInlineRegions) {
      uint64_t count;
      bool isolated;
      STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&count, &isolated, "region count"));
      if (count > c.remaining()) return c.Error("region count exceeds the remaining bytes");
      if (depth >= kMaxNestingDepth) {
        return c.Error("regions nested deeper than " + std::to_string(kMaxNestingDepth));
      }
      op.isolated = isolated;
      op.first_region = static_cast<uint32_t>(file_.regions.size());
      op.num_regions = static_cast<uint32_t>(count);
      file_.regions.resize(file_.regions.size() + count);
      file_.ops[index] = op;
      if (isolated) scopes_.emplace_back();
      if (isolated && file_.version >= kVersionLazyLoading) {
        uint8_t id_and_aligned;
        STABLERT_RETURN_IF_ERROR(c.ReadByte(&id_and_aligned, "isolated region section id"));
        if ((id_and_aligned & 0x7F) != static_cast<int>(SectionId::kIR)) {
          return c.Error("expected a nested IR section for isolated regions");
        }
        uint64_t length;
        STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&length, "isolated region section length"));
        if (id_and_aligned & 0x80) {
          uint64_t alignment;
          STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&alignment, "isolated region alignment"));
          STABLERT_RETURN_IF_ERROR(c.AlignTo(alignment, "isolated regions"));
        }
        size_t start = c.offset();
        std::string_view payload;
        STABLERT_RETURN_IF_ERROR(c.ReadBytes(length, &payload, "isolated region section"));
        Cursor nested(payload, start, "IR section (isolated regions)");
        for (uint64_t i = 0; i < count; ++i) {
          STABLERT_RETURN_IF_ERROR(ReadRegion(nested, op.first_region + i, depth + 1));
        }
        STABLERT_RETURN_IF_ERROR(nested.ExpectEnd("the isolated regions"));
      } else {
        for (uint64_t i = 0; i < count; ++i) {
          STABLERT_RETURN_IF_ERROR(ReadRegion(c, op.first_region + i, depth + 1));
        }
      }
      if (isolated) scopes_.pop_back();
      return OkStatus();
    }
    file_.ops[index] = op;
    return OkStatus();
  }

  Status ReadRegion(Cursor& c, uint32_t index, int depth) {
    uint64_t num_blocks;
    STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &num_blocks, "block count"));
    if (num_blocks == 0) return OkStatus();
    uint64_t num_values;
    STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &num_values, "region value count"));
    Scope& scope = scopes_.back();
    uint32_t base = static_cast<uint32_t>(scope.slots.size());
    scope.slots.resize(base + num_values, kNoIndex);
    scope.regions.push_back({base, static_cast<uint32_t>(base + num_values), base,
                             static_cast<uint32_t>(num_blocks)});
    uint32_t first_block = static_cast<uint32_t>(file_.blocks.size());
    file_.regions[index] = {first_block, static_cast<uint32_t>(num_blocks)};
    file_.blocks.resize(file_.blocks.size() + num_blocks);
    for (uint64_t i = 0; i < num_blocks; ++i) {
      STABLERT_RETURN_IF_ERROR(ReadBlock(c, first_block + i, depth));
    }
    Scope& after = scopes_.back();
    for (const PendingUse& use : after.pending) {
      if (use.slot >= base) {
        return c.Error("value #" + std::to_string(use.slot) +
                       " is used but never defined in its region");
      }
    }
    after.slots.resize(base);
    after.regions.pop_back();
    return OkStatus();
  }

  Status ReadBlock(Cursor& c, uint32_t index, int depth) {
    uint64_t num_ops;
    bool has_args;
    STABLERT_RETURN_IF_ERROR(c.ReadVarIntWithFlag(&num_ops, &has_args, "block header"));
    RawBlock block;
    block.first_argument = static_cast<uint32_t>(file_.values.size());
    if (has_args) {
      uint64_t num_args;
      STABLERT_RETURN_IF_ERROR(c.ReadCount(1, &num_args, "block argument count"));
      block.num_arguments = static_cast<uint32_t>(num_args);
      for (uint64_t i = 0; i < num_args; ++i) {
        uint64_t type, location = kNoIndex;
        if (file_.version >= kVersionElideBlockArgLocation) {
          bool has_location;
          STABLERT_RETURN_IF_ERROR(
              c.ReadVarIntWithFlag(&type, &has_location, "block argument type"));
          if (has_location) {
            STABLERT_RETURN_IF_ERROR(
                c.ReadIndex(file_.attributes.size(), &location, "block argument location"));
          }
        } else {
          STABLERT_RETURN_IF_ERROR(c.ReadVarInt(&type, "block argument type"));
          STABLERT_RETURN_IF_ERROR(
              c.ReadIndex(file_.attributes.size(), &location, "block argument location"));
        }
        if (type >= file_.types.size()) {
          return c.Error("block argument type #" + std::to_string(type) + " is out of range");
        }
        STABLERT_RETURN_IF_ERROR(DefineValue(c, static_cast<uint32_t>(type),
                                             static_cast<uint32_t>(location)));
      }
      if (file_.version >= kVersionUseListOrdering) {
        uint8_t has_orders;
        STABLERT_RETURN_IF_ERROR(c.ReadByte(&has_orders, "block argument use-list flag"));
        if (has_orders) STABLERT_RETURN_IF_ERROR(ReadUseListOrders(c, num_args));
      }
    }
    // Each operation takes at least three bytes (name, mask, location).
    if (num_ops > c.remaining() / 3) return c.Error("block operation count exceeds the data");
    block.first_op = static_cast<uint32_t>(file_.ops.size());
    block.num_ops = static_cast<uint32_t>(num_ops);
    file_.blocks[index] = block;
    file_.ops.resize(file_.ops.size() + num_ops);
    for (uint64_t i = 0; i < num_ops; ++i) {
      STABLERT_RETURN_IF_ERROR(ReadOperation(c, block.first_op + i, depth));
    }
    return OkStatus();
  }

  BytecodeFile& file_;
  std::vector<Scope> scopes_;
};

}  // namespace

Status ReadIrSection(std::string_view data, size_t offset, BytecodeFile& file) {
  (void)kVersionDialectVersioning;
  Cursor c(data, offset, "IR section");
  IrReader reader(file);
  return reader.ReadTopLevel(c);
}

}  // namespace stablert::stablehlo
