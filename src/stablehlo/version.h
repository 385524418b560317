// StableHLO (VHLO) versions this reader accepts.
//
// A portable artifact names its target version in the bytecode producer string
// ("StableHLO_v1.13.7"). The reader accepts targets from kMinimumVersion to
// kCurrentVersion inclusive; the plugin advertises both to JAX (as
// stablehlo_minimum_version / stablehlo_current_version) so that JAX serializes for a
// version in range. Pure values; thread-safe.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stablert::stablehlo {

struct Version {
  int64_t major = 0;
  int64_t minor = 0;
  int64_t patch = 0;

  auto operator<=>(const Version&) const = default;
  std::string ToString() const;  // "1.13.7"
  // Parses "X.Y.Z"; nullopt if malformed.
  static std::optional<Version> Parse(std::string_view text);
};

// Oldest VHLO version with a stability guarantee; the oldest StableHLO can serialize.
inline constexpr Version kMinimumVersion{0, 9, 0};
// Newest VHLO version whose ops, attributes and types this reader decodes completely.
inline constexpr Version kCurrentVersion{1, 20, 0};

// The target version of a portable artifact from its producer string; InvalidArgument if
// the producer is not "StableHLO_vX.Y.Z" or the version lies outside
// [kMinimumVersion, kCurrentVersion] (the message names the version and both bounds).
StatusOr<Version> ArtifactVersion(std::string_view producer);

}  // namespace stablert::stablehlo
