// GetPjrtApi: the one exported symbol. Fills every slot of PJRT_Api from base/pjrt_api_slots.def.
#include <string>
#include <type_traits>

#include "capi/api.h"
#include "capi/error.h"
#include "capi/extensions.h"

namespace stablert::capi {
namespace {

// The error slots have their own implementations in error.cc under these names.
constexpr auto PJRT_Error_Destroy = &ErrorDestroy;
constexpr auto PJRT_Error_Message = &ErrorMessage;
constexpr auto PJRT_Error_GetCode = &ErrorGetCode;
constexpr auto PJRT_Error_ForEachPayload = &ErrorForEachPayload;

// Runs one entry point so that no exception leaves it: a PJRT_Error for the slots that
// return one, swallowed for the two void slots (which have nothing to report it with).
template <typename F>
auto GuardedCall(const char* name, F&& call) noexcept -> decltype(call()) {
  if constexpr (std::is_void_v<decltype(call())>) {
    try {
      call();
    } catch (...) {
    }
  } else {
    try {
      return call();
    } catch (...) {
      return ExceptionToPjrtError(name, std::current_exception());
    }
  }
}

PJRT_Api BuildApi() {
  PJRT_Api api{};
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  api.extension_start = ExtensionChain();
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.extension_start = nullptr;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
// Every slot runs under the exception guard, whatever its body does.
#define PJRT_API_SLOT(name)                                               \
  api.name = [](name##_Args* args) noexcept -> decltype(name(args)) {     \
    return GuardedCall(#name, [args] { return name(args); });             \
  };
#include "base/pjrt_api_slots.def"
#undef PJRT_API_SLOT
  return api;
}

// The slot list must cover the struct exactly: 138 function pointers after the version.
constexpr size_t kNumSlots = 0
#define PJRT_API_SLOT(name) +1
#include "base/pjrt_api_slots.def"
#undef PJRT_API_SLOT
    ;
static_assert(kNumSlots == 138, "pjrt_api_slots.def must list every PJRT_Api slot of the 0.114 header");
static_assert(offsetof(PJRT_Api, PJRT_Error_Destroy) + kNumSlots * sizeof(void*) == PJRT_Api_STRUCT_SIZE,
              "pjrt_api_slots.def and PJRT_Api disagree");

}  // namespace
}  // namespace stablert::capi

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static const PJRT_Api api = stablert::capi::BuildApi();
  return &api;
}
