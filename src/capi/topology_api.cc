// PJRT_TopologyDescription_* entry points. A client's topology is owned by the client;
// one created with PJRT_TopologyDescription_Create/Deserialize is owned by the caller.
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/hash.h"
#include "base/proto_wire.h"
#include "base/xla_primitive_type.h"
#include "capi/api.h"
#include "capi/error.h"
#include "capi/handles.h"
#include "capi/layout.h"
#include "runtime/version.h"

namespace stablert::capi {
namespace {

constexpr char kSerializedPrefix[] = "stablert-topology:";

struct OwnedBytes {
  std::string bytes;
};

// The memory kinds every StableRT device has, by kind id (runtime::Client::Create).
constexpr int kMemoryKindIds[] = {0, 1, 2};
// The xla.LayoutProto memory_space each kind has in a canonical shape: the device's memory
// is XLA's default space 0, both host kinds XLA's host space (Layout::kHostMemorySpace, 5).
constexpr int64_t kXlaMemorySpaceOfKind[] = {0, 5, 5};

// The runtime client PJRT_Compile compiles with for `topology`: the client's own, or for a
// standalone topology a client of its device count made on first use.
StatusOr<runtime::Client*> CompilerFor(const PJRT_TopologyDescription& topology) {
  if (topology.client) return topology.client->client.get();
  std::lock_guard<std::mutex> lock(topology.compiler_mutex);
  if (!topology.compiler) {
    runtime::ClientOptions options;
    options.device_count = topology.device_count;
    STABLERT_ASSIGN_OR_RETURN(topology.compiler, runtime::Client::Create(options));
  }
  return topology.compiler.get();
}

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
  topology->device_count = static_cast<int>(count);
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

PJRT_Error* PJRT_TopologyDescription_GetMemorySpaceKindIds(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args* args) {
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds, args);
  STABLERT_CAPI_REQUIRE(PJRT_TopologyDescription_GetMemorySpaceKindIds, args->topology);
  args->memory_space_kind_ids = kMemoryKindIds;
  args->num_memory_space_kind_ids = std::size(kMemoryKindIds);
  return nullptr;
}

PJRT_Error* PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(
    PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args* args) {
  constexpr const char* kFn = "PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace";
  STABLERT_CAPI_ARGS(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, args);
  STABLERT_CAPI_REQUIRE(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, args->topology);
  STABLERT_CAPI_GUARD(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace, {
    const int kind = args->memory_space_kind_id;
    if (kind < 0 || kind >= static_cast<int>(std::size(kMemoryKindIds)))
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": memory_space_kind_id " + std::to_string(kind) +
                                         " is not a StableRT memory kind (0 device, 1 pinned_host, 2 unpinned_host)"));
    STABLERT_CAPI_ASSIGN_OR_RETURN(DType dtype, ToDType(kFn, RawEnumValue(args->element_type)));
    STABLERT_CAPI_ASSIGN_OR_RETURN(Dims dims, ToDims(kFn, args->dims, args->num_dims));
    STABLERT_CAPI_RETURN_IF_ERROR(ArrayByteSize(kFn, dims, dtype).status());
    // The layout a buffer of this shape takes in that memory: any dense dimension order
    // (StableRT buffers in every memory kind carry one, docs/decisions.md "Array layouts");
    // tiles and strides with gaps are refused naming the function, as by the buffer creators.
    STABLERT_CAPI_ASSIGN_OR_RETURN(std::vector<int64_t> major_to_minor,
                                   DeviceLayoutOrder(kFn, args->layout, dims, dtype));
    std::optional<int> primitive_type = XlaPrimitiveType(dtype);
    if (!primitive_type)
      return ToPjrtError(InvalidArgument(std::string(kFn) + ": element type " + std::string(DTypeName(dtype)) +
                                         " has no xla.PrimitiveType number known to StableRT"));
    // xla.ShapeProto: element_type 2, dimensions 3, layout 5 (xla.LayoutProto:
    // minor_to_major 1, memory_space 8), is_dynamic_dimension 6.
    std::vector<int64_t> minor_to_major(major_to_minor.rbegin(), major_to_minor.rend());
    if (minor_to_major.empty())  // row-major
      for (size_t i = 0; i < dims.size(); ++i) minor_to_major.push_back(static_cast<int64_t>(dims.size() - 1 - i));
    proto::WireWriter layout;
    layout.PackedVarints(1, minor_to_major);
    if (kXlaMemorySpaceOfKind[kind] != 0) layout.Varint(8, static_cast<uint64_t>(kXlaMemorySpaceOfKind[kind]));
    proto::WireWriter shape;
    shape.Varint(2, static_cast<uint64_t>(*primitive_type));
    shape.PackedVarints(3, std::vector<int64_t>(dims.begin(), dims.end()));
    shape.Bytes(5, layout.data());
    shape.PackedVarints(6, std::vector<int64_t>(dims.size(), 0));
    // The deleter gets only the bytes: they are one new[] block of their own.
    const std::string& bytes = shape.data();
    char* block = new char[bytes.size()];
    std::memcpy(block, bytes.data(), bytes.size());
    args->serialized_shape = block;
    args->serialized_shape_size = bytes.size();
    args->serialized_shape_deleter = [](const char* serialized) { delete[] serialized; };
    return nullptr;
  })
}

PJRT_Error* PJRT_Compile(PJRT_Compile_Args* args) {
  constexpr const char* kFn = "PJRT_Compile";
  STABLERT_CAPI_ARGS(PJRT_Compile, args);
  STABLERT_CAPI_REQUIRE(PJRT_Compile, args->topology);
  STABLERT_CAPI_REQUIRE(PJRT_Compile, args->program);
  STABLERT_CAPI_GUARD(PJRT_Compile, {
    const PJRT_Program* program = args->program;
    if (program->code_size > 0 && !program->code)
      return ToPjrtError(InvalidArgument("PJRT_Compile: program code is null"));
    if (args->compile_options_size > 0 && !args->compile_options)
      return ToPjrtError(InvalidArgument("PJRT_Compile: compile_options is null"));
    if (args->client && args->client->topology.get() != args->topology &&
        args->client->devices.size() != static_cast<size_t>(args->topology->device_count))
      return ToPjrtError(InvalidArgument("PJRT_Compile: the client has " + std::to_string(args->client->devices.size()) +
                                         " devices but the topology " + std::to_string(args->topology->device_count)));
    std::string_view format(program->format ? program->format : "", program->format ? program->format_size : 0);
    std::string_view code(program->code ? program->code : "", program->code_size);
    std::string_view options(args->compile_options ? args->compile_options : "", args->compile_options_size);
    STABLERT_CAPI_ASSIGN_OR_RETURN(runtime::Client * compiler, NameFunction(kFn, CompilerFor(*args->topology)));
    STABLERT_CAPI_ASSIGN_OR_RETURN(auto loaded, NameFunction(kFn, compiler->Compile(code, format, options)));
    args->executable = NewExecutableHandle(loaded->executable()).release();
    return nullptr;
  })
}

}  // namespace stablert::capi
