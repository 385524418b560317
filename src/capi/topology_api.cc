// PJRT_TopologyDescription_* entry points. A client's topology is owned by the client;
// one created with PJRT_TopologyDescription_Create/Deserialize is owned by the caller.
#include <cstdlib>
#include <cstring>

#include "base/hash.h"
#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "runtime/version.h"

namespace stablert::capi {
namespace {

constexpr char kSerializedPrefix[] = "stablert-topology:";

struct OwnedBytes {
  std::string bytes;
};

// A standalone topology of `count` devices of one process.
StatusOr<PJRT_TopologyDescription*> NewTopology(int64_t count) {
  if (count < 1 || count > 4096)
    return InvalidArgument("topology device count must be in [1, 4096], got " + std::to_string(count));
  auto* topology = new PJRT_TopologyDescription;
  for (int64_t i = 0; i < count; ++i) {
    auto description = std::make_unique<PJRT_DeviceDescription>();
    FillDeviceDescription(static_cast<int>(i), 0, static_cast<int>(i), description.get());
    topology->descriptions.push_back(description.get());
    topology->owned_descriptions.push_back(std::move(description));
  }
  topology->platform_version = runtime::PlatformVersion();
  topology->attributes.AddInt64("num_devices", count);
  topology->serialized = kSerializedPrefix + std::to_string(count);
  return topology;
}

}  // namespace

PJRT_Error* PJRT_TopologyDescription_Create(PJRT_TopologyDescription_Create_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_Create, args);
  STABLERT_CAPI_GUARD(PJRT_TopologyDescription_Create, {
    int64_t count = 1;
    if (args->num_options > 0 && !args->create_options)
      return ToPjrtError(InvalidArgument("PJRT_TopologyDescription_Create: create_options is null"));
    for (size_t i = 0; i < args->num_options; ++i) {
      const PJRT_NamedValue& option = args->create_options[i];
      std::string name(option.name ? option.name : "", option.name ? option.name_size : 0);
      if (name == "device_count" && RawEnumValue(option.type) == PJRT_NamedValue_kInt64) {
        count = option.int64_value;
      } else {
        return ToPjrtError(InvalidArgument("PJRT_TopologyDescription_Create: unknown option '" + name +
                                           "'; known options: device_count (int64)"));
      }
    }
    STABLERT_CAPI_ASSIGN_OR_RETURN(args->topology, NewTopology(count));
    return nullptr;
  })
}

PJRT_Error* PJRT_TopologyDescription_Destroy(PJRT_TopologyDescription_Destroy_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_Destroy, args);
  // A client's own topology is destroyed with the client.
  if (args->topology && !args->topology->client) delete args->topology;
  return nullptr;
}

PJRT_Error* PJRT_TopologyDescription_PlatformName(PJRT_TopologyDescription_PlatformName_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_PlatformName, args);
  STABLERT_CAPI_REQUIRE(PJRT_TopologyDescription_PlatformName, args->topology);
  args->platform_name = runtime::kPlatformName;
  args->platform_name_size = std::strlen(runtime::kPlatformName);
  return nullptr;
}

PJRT_Error* PJRT_TopologyDescription_PlatformVersion(PJRT_TopologyDescription_PlatformVersion_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_PlatformVersion, args);
  STABLERT_CAPI_REQUIRE(PJRT_TopologyDescription_PlatformVersion, args->topology);
  args->platform_version = args->topology->platform_version.c_str();
  args->platform_version_size = args->topology->platform_version.size();
  return nullptr;
}

PJRT_Error* PJRT_TopologyDescription_GetDeviceDescriptions(PJRT_TopologyDescription_GetDeviceDescriptions_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions, args);
  STABLERT_CAPI_REQUIRE(PJRT_TopologyDescription_GetDeviceDescriptions, args->topology);
  args->descriptions = args->topology->descriptions.data();
  args->num_descriptions = args->topology->descriptions.size();
  return nullptr;
}

PJRT_Error* PJRT_TopologyDescription_Serialize(PJRT_TopologyDescription_Serialize_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_Serialize, args);
  STABLERT_CAPI_REQUIRE(PJRT_TopologyDescription_Serialize, args->topology);
  auto* owned = new OwnedBytes{args->topology->serialized};
  args->serialized_bytes = owned->bytes.data();
  args->serialized_bytes_size = owned->bytes.size();
  args->serialized_topology = reinterpret_cast<PJRT_SerializedTopology*>(owned);
  args->serialized_topology_deleter = [](PJRT_SerializedTopology* topology) {
    delete reinterpret_cast<OwnedBytes*>(topology);
  };
  return nullptr;
}

PJRT_Error* PJRT_TopologyDescription_Deserialize(PJRT_TopologyDescription_Deserialize_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_Deserialize, args);
  STABLERT_CAPI_GUARD(PJRT_TopologyDescription_Deserialize, {
    if (args->serialized_topology_size > 0 && !args->serialized_topology)
      return ToPjrtError(InvalidArgument("PJRT_TopologyDescription_Deserialize: serialized_topology is null"));
    // A StableRT topology is a short prefix and a device count; anything longer is not one
    // (and is not copied).
    constexpr size_t kMaxSerializedSize = 64;
    if (args->serialized_topology_size > kMaxSerializedSize)
      return ToPjrtError(InvalidArgument("PJRT_TopologyDescription_Deserialize: " +
                                         std::to_string(args->serialized_topology_size) +
                                         " bytes is not a serialized StableRT topology (at most " +
                                         std::to_string(kMaxSerializedSize) + " bytes)"));
    std::string text(args->serialized_topology ? args->serialized_topology : "",
                     args->serialized_topology ? args->serialized_topology_size : 0);
    const size_t prefix = sizeof(kSerializedPrefix) - 1;
    char* end = nullptr;
    long long count = text.compare(0, prefix, kSerializedPrefix) == 0 ? std::strtoll(text.c_str() + prefix, &end, 10) : 0;
    if (count <= 0 || !end || *end != '\0')
      return ToPjrtError(InvalidArgument("PJRT_TopologyDescription_Deserialize: not a serialized StableRT topology"));
    STABLERT_CAPI_ASSIGN_OR_RETURN(args->topology, NewTopology(count));
    return nullptr;
  })
}

PJRT_Error* PJRT_TopologyDescription_Attributes(PJRT_TopologyDescription_Attributes_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_Attributes, args);
  STABLERT_CAPI_REQUIRE(PJRT_TopologyDescription_Attributes, args->topology);
  args->attributes = args->topology->attributes.data();
  args->num_attributes = args->topology->attributes.size();
  return nullptr;
}

PJRT_Error* PJRT_TopologyDescription_Fingerprint(PJRT_TopologyDescription_Fingerprint_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_Fingerprint, args);
  STABLERT_CAPI_REQUIRE(PJRT_TopologyDescription_Fingerprint, args->topology);
  args->fingerprint = Fingerprint64(args->topology->serialized);
  return nullptr;
}

}  // namespace stablert::capi
