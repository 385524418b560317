// How StableRT names itself to a framework: the client's platform version and the devices'
// kind. Both carry "StableRT" so that a bug report tells StableRT from XLA's CPU backend
// (whose kind is "cpu" and whose platform version is "cpu").
#pragma once

#include <string>

namespace stablert::runtime {

// "StableRT 0.1.0 (PJRT 0.114, StableHLO 1.20.0)"
std::string PlatformVersion();
// "StableRT CPU (x86-64)": the device kind, with the instruction set the build targets.
std::string DeviceKind();

}  // namespace stablert::runtime
