#include "stablehlo/sdy_text.h"

#include <cctype>
#include <string>
#include <vector>

#include "stablehlo/attr_util.h"

namespace stablert::stablehlo {
namespace {

constexpr int kMaxDepth = 64;

class SdyParser {
 public:
  explicit SdyParser(std::string_view text) : text_(text) {}

  StatusOr<ir::Attribute> ParseTop() {
    SkipSpace();
    StatusOr<ir::Attribute> result = Peek('{') ? MeshTable() : Attr(0);
    if (!result.ok()) return result;
    SkipSpace();
    if (pos_ != text_.size()) return Error("end of text");
    return result;
  }

 private:
  Status Error(std::string_view expected) const {
    return InvalidArgument("sdy attribute text at offset " + std::to_string(pos_) +
                           ": expected " + std::string(expected) + " in '" +
                           std::string(text_.substr(0, 200)) + "'");
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Peek(char ch) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == ch;
  }
  bool Consume(char ch) {
    if (!Peek(ch)) return false;
    ++pos_;
    return true;
  }
  bool ConsumeWord(std::string_view word) {
    SkipSpace();
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  Status Expect(char ch) {
    if (Consume(ch)) return OkStatus();
    return Error(std::string("'") + ch + "'");
  }

  StatusOr<std::string> Quoted() {
    if (!Consume('"')) return Error("a quoted string");
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char ch = text_[pos_++];
      if (ch == '\\' && pos_ < text_.size()) {
        char next = text_[pos_];
        if (std::isxdigit(static_cast<unsigned char>(next)) && pos_ + 1 < text_.size() &&
            std::isxdigit(static_cast<unsigned char>(text_[pos_ + 1]))) {
          out += static_cast<char>(std::stoi(std::string(text_.substr(pos_, 2)), nullptr, 16));
          pos_ += 2;
          continue;
        }
        ch = next;
        ++pos_;
      }
      out += ch;
    }
    if (!Consume('"')) return Error("a closing quote");
    return out;
  }

  StatusOr<std::string> Identifier() {
    SkipSpace();
    if (Peek('"')) return Quoted();
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '_' || text_[pos_] == '.' ||
                                   text_[pos_] == '$' || text_[pos_] == '-')) {
      ++pos_;
    }
    if (start == pos_) return Error("a name");
    return std::string(text_.substr(start, pos_ - start));
  }

  StatusOr<int64_t> Integer() {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    int64_t value = 0;
    bool any = false;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (value > (INT64_MAX - 9) / 10) return Error("a smaller integer");
      value = value * 10 + (text_[pos_++] - '0');
      any = true;
    }
    if (!any) {
      pos_ = start;
      return Error("an integer");
    }
    return text_[start] == '-' ? -value : value;
  }

  // {name = #sdy.mesh<...>, ...}
  StatusOr<ir::Attribute> MeshTable() {
    STABLERT_RETURN_IF_ERROR(Expect('{'));
    ir::Attribute::Dictionary table;
    while (!Consume('}')) {
      if (!table.empty()) STABLERT_RETURN_IF_ERROR(Expect(','));
      STABLERT_ASSIGN_OR_RETURN(std::string name, Identifier());
      STABLERT_RETURN_IF_ERROR(Expect('='));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute mesh, Attr(1));
      table.emplace_back(std::move(name), std::move(mesh));
    }
    return ir::Attribute(std::move(table));
  }

  StatusOr<ir::Attribute> Attr(int depth) {
    if (depth > kMaxDepth) return Error("less nesting");
    if (ConsumeWord("#sdy.mesh")) return Mesh();
    if (ConsumeWord("#sdy.sharding_per_value")) {
      STABLERT_RETURN_IF_ERROR(Expect('<'));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute list, ShardingList());
      STABLERT_RETURN_IF_ERROR(Expect('>'));
      return list;
    }
    if (ConsumeWord("#sdy.sharding")) return Sharding();
    if (ConsumeWord("#sdy<manual_axes")) {
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute axes, NameSet());
      STABLERT_RETURN_IF_ERROR(Expect('>'));
      return axes;
    }
    return Error("#sdy.mesh, #sdy.sharding, #sdy.sharding_per_value or #sdy<manual_axes");
  }

  // <["x"=2, ...], device_ids=[...]> (after "mesh" / "#sdy.mesh")
  StatusOr<ir::Attribute> Mesh() {
    STABLERT_RETURN_IF_ERROR(Expect('<'));
    ir::Attribute::Array axes;
    std::vector<int64_t> device_ids;
    if (Consume('[')) {
      while (!Consume(']')) {
        if (!axes.empty()) STABLERT_RETURN_IF_ERROR(Expect(','));
        STABLERT_ASSIGN_OR_RETURN(std::string name, Quoted());
        STABLERT_RETURN_IF_ERROR(Expect('='));
        STABLERT_ASSIGN_OR_RETURN(int64_t size, Integer());
        axes.emplace_back(ir::Attribute::Dictionary{{"name", Text(std::move(name))},
                                                    {"size", I64(size)}});
      }
      if (Consume(',')) {
        if (!ConsumeWord("device_ids")) return Error("device_ids");
        STABLERT_RETURN_IF_ERROR(DeviceIds(&device_ids));
      }
    } else if (ConsumeWord("device_ids")) {
      STABLERT_RETURN_IF_ERROR(DeviceIds(&device_ids));
    }
    STABLERT_RETURN_IF_ERROR(Expect('>'));
    return ir::Attribute(ir::Attribute::Dictionary{{"axes", ir::Attribute(std::move(axes))},
                                                   {"device_ids", I64Elements(device_ids)}});
  }

  Status DeviceIds(std::vector<int64_t>* ids) {
    STABLERT_RETURN_IF_ERROR(Expect('='));
    STABLERT_RETURN_IF_ERROR(Expect('['));
    while (!Consume(']')) {
      if (!ids->empty()) STABLERT_RETURN_IF_ERROR(Expect(','));
      STABLERT_ASSIGN_OR_RETURN(int64_t id, Integer());
      if (ids->size() > text_.size()) return Error("fewer device ids");
      ids->push_back(id);
    }
    return OkStatus();
  }

  // [<@mesh, [...]>, ...]
  StatusOr<ir::Attribute> ShardingList() {
    STABLERT_RETURN_IF_ERROR(Expect('['));
    ir::Attribute::Array list;
    while (!Consume(']')) {
      if (!list.empty()) STABLERT_RETURN_IF_ERROR(Expect(','));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute sharding, Sharding());
      list.push_back(std::move(sharding));
    }
    return ir::Attribute(std::move(list));
  }

  // <@mesh | mesh<...>, [dims], replicated={...}, unreduced={...}>
  StatusOr<ir::Attribute> Sharding() {
    STABLERT_RETURN_IF_ERROR(Expect('<'));
    ir::Attribute mesh;
    if (Consume('@')) {
      STABLERT_ASSIGN_OR_RETURN(std::string name, Identifier());
      mesh = ir::Attribute(ir::Attribute::Symbol{std::move(name)});
    } else if (ConsumeWord("mesh")) {
      STABLERT_ASSIGN_OR_RETURN(mesh, Mesh());
    } else {
      return Error("@mesh or an inline mesh");
    }
    STABLERT_RETURN_IF_ERROR(Expect(','));
    STABLERT_RETURN_IF_ERROR(Expect('['));
    ir::Attribute::Array dims;
    while (!Consume(']')) {
      if (!dims.empty()) STABLERT_RETURN_IF_ERROR(Expect(','));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute dim, DimSharding());
      dims.push_back(std::move(dim));
    }
    ir::Attribute replicated(ir::Attribute::Array{}), unreduced(ir::Attribute::Array{});
    while (Consume(',')) {
      if (ConsumeWord("replicated")) {
        STABLERT_RETURN_IF_ERROR(Expect('='));
        STABLERT_ASSIGN_OR_RETURN(replicated, AxisRefSet());
      } else if (ConsumeWord("unreduced")) {
        STABLERT_RETURN_IF_ERROR(Expect('='));
        STABLERT_ASSIGN_OR_RETURN(unreduced, AxisRefSet());
      } else {
        return Error("replicated= or unreduced=");
      }
    }
    STABLERT_RETURN_IF_ERROR(Expect('>'));
    return ir::Attribute(ir::Attribute::Dictionary{{"mesh", std::move(mesh)},
                                                   {"dim_shardings", ir::Attribute(std::move(dims))},
                                                   {"replicated_axes", std::move(replicated)},
                                                   {"unreduced_axes", std::move(unreduced)}});
  }

  // {"x", "y":(1)2, ?}p3
  StatusOr<ir::Attribute> DimSharding() {
    STABLERT_RETURN_IF_ERROR(Expect('{'));
    ir::Attribute::Array axes;
    bool closed = true;
    while (!Consume('}')) {
      if (!axes.empty() || !closed) STABLERT_RETURN_IF_ERROR(Expect(','));
      if (Consume('?')) {
        closed = false;
        continue;
      }
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute axis, AxisRef());
      axes.push_back(std::move(axis));
    }
    ir::Attribute::Dictionary dim{{"axes", ir::Attribute(std::move(axes))},
                                  {"is_closed", ir::Attribute(closed)}};
    if (pos_ < text_.size() && text_[pos_] == 'p') {
      ++pos_;
      STABLERT_ASSIGN_OR_RETURN(int64_t priority, Integer());
      dim.emplace_back("priority", I64(priority));
    }
    return ir::Attribute(std::move(dim));
  }

  StatusOr<ir::Attribute> AxisRef() {
    STABLERT_ASSIGN_OR_RETURN(std::string name, Quoted());
    ir::Attribute::Dictionary axis{{"name", Text(std::move(name))}};
    if (Consume(':')) {
      STABLERT_RETURN_IF_ERROR(Expect('('));
      STABLERT_ASSIGN_OR_RETURN(int64_t pre_size, Integer());
      STABLERT_RETURN_IF_ERROR(Expect(')'));
      STABLERT_ASSIGN_OR_RETURN(int64_t size, Integer());
      axis.emplace_back("sub_axis_info", ir::Attribute(ir::Attribute::Dictionary{
                                             {"pre_size", I64(pre_size)}, {"size", I64(size)}}));
    }
    return ir::Attribute(std::move(axis));
  }

  StatusOr<ir::Attribute> AxisRefSet() {
    STABLERT_RETURN_IF_ERROR(Expect('{'));
    ir::Attribute::Array axes;
    while (!Consume('}')) {
      if (!axes.empty()) STABLERT_RETURN_IF_ERROR(Expect(','));
      STABLERT_ASSIGN_OR_RETURN(ir::Attribute axis, AxisRef());
      axes.push_back(std::move(axis));
    }
    return ir::Attribute(std::move(axes));
  }

  StatusOr<ir::Attribute> NameSet() {
    STABLERT_RETURN_IF_ERROR(Expect('{'));
    ir::Attribute::Array names;
    while (!Consume('}')) {
      if (!names.empty()) STABLERT_RETURN_IF_ERROR(Expect(','));
      STABLERT_ASSIGN_OR_RETURN(std::string name, Quoted());
      names.emplace_back(std::move(name));
    }
    return ir::Attribute(std::move(names));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<ir::Attribute> ParseSdyText(std::string_view text) {
  return SdyParser(text).ParseTop();
}

}  // namespace stablert::stablehlo
