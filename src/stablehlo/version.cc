#include "stablehlo/version.h"

#include <charconv>

namespace stablert::stablehlo {

std::string Version::ToString() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<Version> Version::Parse(std::string_view text) {
  Version v;
  int64_t* parts[3] = {&v.major, &v.minor, &v.patch};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (p == end || *p != '.') return std::nullopt;
      ++p;
    }
    auto [next, ec] = std::from_chars(p, end, *parts[i]);
    if (ec != std::errc() || next == p || *parts[i] < 0) return std::nullopt;
    p = next;
  }
  if (p != end) return std::nullopt;
  return v;
}

StatusOr<Version> ArtifactVersion(std::string_view producer) {
  constexpr std::string_view kPrefix = "StableHLO_v";
  std::string supported = "supported StableHLO versions are " + kMinimumVersion.ToString() +
                          " to " + kCurrentVersion.ToString();
  if (producer.substr(0, kPrefix.size()) != kPrefix) {
    return InvalidArgument("not a StableHLO portable artifact: bytecode producer is '" +
                           std::string(producer) + "', expected 'StableHLO_vX.Y.Z' (" +
                           supported + ")");
  }
  std::optional<Version> version = Version::Parse(producer.substr(kPrefix.size()));
  if (!version) {
    return InvalidArgument("malformed StableHLO version in bytecode producer '" +
                           std::string(producer) + "'");
  }
  if (*version < kMinimumVersion || *version > kCurrentVersion) {
    return InvalidArgument("StableHLO portable artifact version " + version->ToString() +
                           " is not supported: " + supported);
  }
  return *version;
}

}  // namespace stablert::stablehlo
