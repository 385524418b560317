// An HLO module (hlo/module.h) as the bytes of a serialized xla.HloModuleProto: what XLA's
// tools read (`*.hlo.pb` dumps), and what XLA compiles as a program of format "hlo".
//
// Field numbers follow xla/service/hlo.proto and xla/xla_data.proto. Every array shape
// carries its layout (minor_to_major); constants are LiteralProtos in the element type's own
// field; the host program shape is the entry computation's. Pure function; thread-safe.
#pragma once

#include <string>

#include "hlo/module.h"

namespace stablert::hlo {

std::string ToProto(const Module& module);

}  // namespace stablert::hlo
