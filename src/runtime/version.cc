#include "runtime/version.h"

#include "base/version.h"
#include "stablehlo/version.h"

namespace stablert::runtime {

std::string PlatformVersion() {
  return "StableRT " + std::string(stablert::Version()) + " (PJRT " + std::string(PjrtApiVersion()) +
         ", StableHLO " + stablehlo::kCurrentVersion.ToString() + ")";
}

std::string DeviceKind() { return "StableRT CPU (" + std::string(BuildIsa()) + ")"; }

}  // namespace stablert::runtime
