// The serialized form of a StableRT executable (PJRT_Executable_Serialize /
// PJRT_Executable_DeserializeAndLoad): a versioned envelope around the original program
// and compile options, recompiled on load (compilation takes well under a millisecond per
// op, so a plan format of its own is not needed for fast loading yet).
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace stablert::capi {

struct SerializedExecutable {
  std::string program;
  std::string format;
  std::string compile_options;
};

std::string SerializeExecutable(const SerializedExecutable& executable);
// InvalidArgument if `bytes` is not a StableRT executable of a version this build reads.
StatusOr<SerializedExecutable> DeserializeExecutable(std::string_view bytes);

}  // namespace stablert::capi
