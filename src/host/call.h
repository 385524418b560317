// Shorthands for calling a plugin's slot from the host library's sources (not a public
// header): args declared zeroed with this build's struct_size, and the call checked against
// the plugin's table (Plugin::Call).
#pragma once

#include "host/plugin.h"

// Declares `PJRT_<Name>_Args var`, zeroed, with its struct_size set.
#define STABLERT_HOST_ARGS(Name, var) \
  Name##_Args var{};                  \
  var.struct_size = Name##_Args_STRUCT_SIZE

// Calls slot `Name` of `plugin` (a Plugin&) with `args` (a pointer); a Status naming Name.
#define STABLERT_HOST_CALL(plugin, Name, args) (plugin).Call(&PJRT_Api::Name, #Name, (args))
