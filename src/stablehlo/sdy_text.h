// Parser for Shardy attributes in their textual MLIR form, as they appear in textual
// bytecode entries and in the string frontend attributes of artifacts exported for
// targets before 1.11.0 (`xla.sdy.meshes`, `xla.sdy.sharding`, ...).
//
// Produces the same ir::Attribute forms as the sdy bytecode decoder (sdy_attributes.cc):
//   #sdy.mesh<["x"=2], device_ids=[...]>           -> {axes, device_ids}
//   #sdy.sharding<@mesh, [{"x"}, {?}], replicated={"y"}, unreduced={...}>
//                                                   -> {mesh, dim_shardings, replicated_axes,
//                                                       unreduced_axes}
//   #sdy.sharding_per_value<[<@mesh, [...]>, ...]>  -> [sharding...]
//   #sdy<manual_axes{"x"}>                          -> ["x"]
//   {name = #sdy.mesh<...>, ...}                    -> {name = mesh, ...} (a mesh table)
// Failure: InvalidArgument naming the offset in the text and what was expected; the
// callers keep the text as it is then. Pure function; thread-safe.
#pragma once

#include <string_view>

#include "base/status.h"
#include "ir/attribute.h"

namespace stablert::stablehlo {

StatusOr<ir::Attribute> ParseSdyText(std::string_view text);

}  // namespace stablert::stablehlo
