// The project's version facts, for bug reports: the StableRT version (one source of truth,
// `project(stablert VERSION ...)` in CMakeLists.txt, also the Python package's version) and
// the PJRT C API version of the header StableRT is built against.
#pragma once

#include <string_view>

namespace stablert {

// "0.1.0"
std::string_view Version();
// "0.114": PJRT_API_MAJOR.PJRT_API_MINOR of the PJRT C API header the build used.
std::string_view PjrtApiVersion();
// The instruction set the build targets ("x86-64", "x86-64-v3 (AVX2)", "arm64", ...).
std::string_view BuildIsa();

}  // namespace stablert
