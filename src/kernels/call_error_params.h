// Parameters of the "call_error" kernel (kernels/call_error.cc): a custom call the plan
// compiled but cannot run, failing each execution that reaches it with the reason found when
// the program was compiled. XLA's CPU backend compiles a call to a registered target without
// reading its signature and fails when the handler decodes its call frame; StableRT does the
// same for calls to the targets it lowers to its own kernels (plan/lower_linalg.cc).
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace stablert::kernels {

class KernelRegistry;
// Registers "call_error"; called by RegisterCpuKernels. Declared here rather than in
// families.h to keep that widely included header unchanged.
Status RegisterCallErrorKernel(KernelRegistry& registry);

struct CallErrorParams {
  static constexpr std::string_view kFamily = "call_error";
  std::string message;  // the error each execution fails with (InvalidArgument)

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("message", message);
  }
};

}  // namespace stablert::kernels
