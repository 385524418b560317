// The op attributes of StableHLO's textual (or in-memory) form -> the flat form the
// bytecode import produces (import.h), so both readers yield one ir::Module:
//  * `#stablehlo.dot`/`gather`/`scatter`/`conv` dimension numbers become one attribute per
//    field (dimension lists as 1-D i64 Elements, single dimensions as i64 integers);
//  * `channel_handle` becomes channel_id (and channel_type for send/recv);
//  * custom_call's integer api_version becomes its enum, `dot_algorithm` its fields;
//  * attributes StableHLO leaves out when they hold their default get the value VHLO
//    serialization writes for them (window strides of 1, `false` flags, ...);
//  * then UpgradeVhloAttributes (upgrade.h) as for the newest VHLO version.
// Failure: InvalidArgument naming the op and the attribute of an unexpected kind.
// Pure function of its input; thread-safe.
#pragma once

#include "base/status.h"
#include "ir/module.h"

namespace stablert::stablehlo {

// `operand_count`: the op's operand count (the size of default precision_config lists).
Status NormalizeTextAttributes(ir::Operation& op);

}  // namespace stablert::stablehlo
