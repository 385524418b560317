#include "base/version.h"

// STABLERT_VERSION and STABLERT_PJRT_API_VERSION are defined for this file only, by
// CMakeLists.txt (from project(VERSION) and from the PJRT header's PJRT_API_MAJOR/MINOR).
#ifndef STABLERT_VERSION
#error "STABLERT_VERSION must be defined by the build"
#endif
#ifndef STABLERT_PJRT_API_VERSION
#error "STABLERT_PJRT_API_VERSION must be defined by the build"
#endif

namespace stablert {

std::string_view Version() { return STABLERT_VERSION; }

std::string_view PjrtApiVersion() { return STABLERT_PJRT_API_VERSION; }

std::string_view BuildIsa() {
#if defined(__x86_64__)
#if defined(__AVX512F__)
  return "x86-64-v4 (AVX-512)";
#elif defined(__AVX2__)
  return "x86-64-v3 (AVX2)";
#else
  return "x86-64";
#endif
#elif defined(__aarch64__)
  return "arm64";
#else
  return "unknown ISA";
#endif
}

}  // namespace stablert
