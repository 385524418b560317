#include "host/layout.h"

#include <cctype>
#include <limits>

namespace stablert::host {
namespace {

std::string JoinInts(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out;
}

Status Malformed(std::string_view function, std::string_view what, const std::string& detail) {
  return InvalidArgument(std::string(function) + ": " + std::string(what) + " " + detail);
}

// Reads a comma-separated list of integers at `text[at]` up to one of `ends`; '*' (XLA's
// combined tile dimension) reads as -1.
bool ReadInts(std::string_view text, size_t& at, std::string_view ends, std::vector<int64_t>& out) {
  while (at < text.size() && ends.find(text[at]) == std::string_view::npos) {
    if (text[at] == '*') {
      out.push_back(-1);
      ++at;
    } else {
      size_t start = at;
      if (at < text.size() && text[at] == '-') ++at;
      while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
      if (at == start || (at == start + 1 && text[start] == '-')) return false;
      out.push_back(std::stoll(std::string(text.substr(start, at - start))));
    }
    if (at < text.size() && text[at] == ',') {
      ++at;
      if (at < text.size() && ends.find(text[at]) != std::string_view::npos) return false;
    } else if (at < text.size() && ends.find(text[at]) == std::string_view::npos) {
      return false;
    }
  }
  return at < text.size();
}

}  // namespace

MemoryLayout MemoryLayout::RowMajor(size_t rank) {
  MemoryLayout layout;
  for (size_t i = rank; i-- > 0;) layout.minor_to_major.push_back(static_cast<int64_t>(i));
  return layout;
}

MemoryLayout MemoryLayout::ColumnMajor(size_t rank) {
  MemoryLayout layout;
  for (size_t i = 0; i < rank; ++i) layout.minor_to_major.push_back(static_cast<int64_t>(i));
  return layout;
}

MemoryLayout MemoryLayout::MinorToMajor(std::vector<int64_t> minor_to_major) {
  MemoryLayout layout;
  layout.minor_to_major = std::move(minor_to_major);
  return layout;
}

MemoryLayout MemoryLayout::Strides(std::vector<int64_t> byte_strides) {
  MemoryLayout layout;
  layout.kind = Kind::kStrides;
  layout.byte_strides = std::move(byte_strides);
  return layout;
}

bool MemoryLayout::IsRowMajorOrder() const {
  return kind == Kind::kMinorToMajor && tiles.empty() && *this == RowMajor(minor_to_major.size());
}

std::string MemoryLayout::ToString() const {
  if (kind == Kind::kStrides) return "strides{" + JoinInts(byte_strides) + "}";
  std::string out = "{" + JoinInts(minor_to_major);
  if (!tiles.empty()) {
    out += ":T";
    for (const std::vector<int64_t>& tile : tiles) {
      std::string sizes = JoinInts(tile);
      for (size_t at = sizes.find("-1"); at != std::string::npos; at = sizes.find("-1")) sizes.replace(at, 2, "*");
      out += "(" + sizes + ")";
    }
  }
  return out + "}";
}

Status CheckLayout(const MemoryLayout& layout, size_t rank, std::string_view function, std::string_view what) {
  if (layout.kind == MemoryLayout::Kind::kStrides) {
    if (layout.byte_strides.size() != rank)
      return Malformed(function, what,
                       layout.ToString() + " has " + std::to_string(layout.byte_strides.size()) +
                           " byte strides; the array has rank " + std::to_string(rank) + " (expected one per dimension)");
    return OkStatus();
  }
  if (layout.minor_to_major.size() != rank)
    return Malformed(function, what,
                     layout.ToString() + " orders " + std::to_string(layout.minor_to_major.size()) +
                         " dimensions; the array has rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t d : layout.minor_to_major) {
    if (d < 0 || static_cast<size_t>(d) >= rank || seen[static_cast<size_t>(d)])
      return Malformed(function, what,
                       layout.ToString() + ": minor_to_major is not a permutation of the dimensions 0.." +
                           std::to_string(static_cast<int64_t>(rank) - 1));
    seen[static_cast<size_t>(d)] = true;
  }
  for (const std::vector<int64_t>& tile : layout.tiles) {
    if (tile.empty()) return Malformed(function, what, layout.ToString() + " has an empty tile");
    for (int64_t size : tile)
      if (size == 0 || size < -1)
        return Malformed(function, what, layout.ToString() + " has a tile size " + std::to_string(size) +
                                             " (expected positive sizes, or * to combine)");
  }
  return OkStatus();
}

StatusOr<MemoryLayout> LayoutFromPjrt(const PJRT_Buffer_MemoryLayout& layout, std::string_view function) {
  if (layout.type == PJRT_Buffer_MemoryLayout_Type_Strides) {
    const PJRT_Buffer_MemoryLayout_Strides& s = layout.strides;
    if (s.num_byte_strides && !s.byte_strides) return InvalidArgument(std::string(function) + ": null byte_strides");
    return MemoryLayout::Strides(std::vector<int64_t>(s.byte_strides, s.byte_strides + s.num_byte_strides));
  }
  if (layout.type != PJRT_Buffer_MemoryLayout_Type_Tiled)
    return InvalidArgument(std::string(function) + ": unknown memory layout type " +
                           std::to_string(static_cast<int>(layout.type)));
  const PJRT_Buffer_MemoryLayout_Tiled& t = layout.tiled;
  if ((t.minor_to_major_size && !t.minor_to_major) || (t.num_tiles && (!t.tile_dim_sizes || !t.tile_dims)))
    return InvalidArgument(std::string(function) + ": a tiled layout with null arrays");
  MemoryLayout out = MemoryLayout::MinorToMajor(
      std::vector<int64_t>(t.minor_to_major, t.minor_to_major + t.minor_to_major_size));
  const int64_t* dims = t.tile_dims;
  for (size_t i = 0; i < t.num_tiles; ++i) {
    out.tiles.emplace_back(dims, dims + t.tile_dim_sizes[i]);
    dims += t.tile_dim_sizes[i];
  }
  return out;
}

StatusOr<MemoryLayout> ParseLayoutText(std::string_view text, std::string_view function) {
  auto malformed = [&] {
    return InvalidArgument(std::string(function) + ": cannot read the layout '" + std::string(text) +
                           "' (expected XLA's form, e.g. {1,0} or {1,0:T(8,128)})");
  };
  size_t at = 0;
  while (at < text.size() && text[at] == ' ') ++at;
  if (at >= text.size() || text[at] != '{') return malformed();
  ++at;
  MemoryLayout layout;
  if (!ReadInts(text, at, ":}", layout.minor_to_major)) return malformed();
  if (text[at] == ':') {
    ++at;
    // Annotations: a letter (or letters) then parenthesized groups; T's groups are tiles.
    while (at < text.size() && text[at] != '}') {
      size_t name_start = at;
      while (at < text.size() && std::isalpha(static_cast<unsigned char>(text[at]))) ++at;
      std::string_view name = text.substr(name_start, at - name_start);
      if (name.empty() || at >= text.size() || text[at] != '(') return malformed();
      while (at < text.size() && text[at] == '(') {
        ++at;
        std::vector<int64_t> group;
        if (name == "T") {
          if (!ReadInts(text, at, ")", group)) return malformed();
          layout.tiles.push_back(std::move(group));
        } else {
          while (at < text.size() && text[at] != ')') ++at;
          if (at >= text.size()) return malformed();
        }
        ++at;  // ')'
      }
      while (at < text.size() && text[at] == ' ') ++at;
    }
    if (at >= text.size()) return malformed();
  }
  ++at;  // '}'
  while (at < text.size() && text[at] == ' ') ++at;
  if (at != text.size()) return malformed();
  return layout;
}

PjrtLayoutView::PjrtLayoutView(const MemoryLayout& layout) {
  c_.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  if (layout.kind == MemoryLayout::Kind::kStrides) {
    c_.type = PJRT_Buffer_MemoryLayout_Type_Strides;
    c_.strides.struct_size = PJRT_Buffer_MemoryLayout_Strides_STRUCT_SIZE;
    c_.strides.byte_strides = layout.byte_strides.data();
    c_.strides.num_byte_strides = layout.byte_strides.size();
    return;
  }
  for (const std::vector<int64_t>& tile : layout.tiles) {
    tile_dims_.insert(tile_dims_.end(), tile.begin(), tile.end());
    tile_sizes_.push_back(tile.size());
  }
  c_.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  c_.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  c_.tiled.minor_to_major = layout.minor_to_major.data();
  c_.tiled.minor_to_major_size = layout.minor_to_major.size();
  c_.tiled.tile_dims = tile_dims_.empty() ? nullptr : tile_dims_.data();
  c_.tiled.tile_dim_sizes = tile_sizes_.empty() ? nullptr : tile_sizes_.data();
  c_.tiled.num_tiles = tile_sizes_.size();
}

StatusOr<std::vector<int64_t>> LayoutByteStrides(const MemoryLayout& layout, const std::vector<int64_t>& dims,
                                                 int64_t element_bytes, std::string_view function) {
  STABLERT_RETURN_IF_ERROR(CheckLayout(layout, dims.size(), function, "layout"));
  if (layout.kind == MemoryLayout::Kind::kStrides) return layout.byte_strides;
  if (!layout.tiles.empty())
    return InvalidArgument(std::string(function) + ": the tiled layout " + layout.ToString() +
                           " has no byte strides (expected a tile-free order of the dimensions)");
  std::vector<int64_t> strides(dims.size(), 0);
  int64_t stride = element_bytes;
  for (int64_t d : layout.minor_to_major) {
    strides[static_cast<size_t>(d)] = stride;
    int64_t extent = dims[static_cast<size_t>(d)];
    if (extent > 1 && stride > std::numeric_limits<int64_t>::max() / extent)
      return InvalidArgument(std::string(function) + ": the byte size of the array overflows int64");
    stride *= extent > 0 ? extent : 1;
  }
  return strides;
}

}  // namespace stablert::host
