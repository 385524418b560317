// The C handle types of the PJRT API, each wrapping one runtime object.
//
// Ownership: PJRT_Client owns its devices, device descriptions, memories and topology
// (valid until PJRT_Client_Destroy). PJRT_Buffer, PJRT_Event, PJRT_Executable and
// PJRT_LoadedExecutable are owned by the caller and freed with their *_Destroy function.
// Metadata arrays a function returns (attributes, dims, type lists) live inside the handle
// they came from and stay valid as long as it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capi/layouts_extension.h"
#include "runtime/buffer.h"
#include "runtime/client.h"
#include "runtime/event.h"
#include "runtime/executable.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::capi {

// Owns a list of PJRT_NamedValue and the strings/arrays they point into.
class NamedValueList {
 public:
  void AddString(const std::string& name, const std::string& value);
  void AddInt64(const std::string& name, int64_t value);
  void AddInt64List(const std::string& name, std::vector<int64_t> values);
  void AddBool(const std::string& name, bool value);
  void AddFloat(const std::string& name, float value);
  const PJRT_NamedValue* data() const { return values_.data(); }
  size_t size() const { return values_.size(); }

 private:
  PJRT_NamedValue& Add(const std::string& name, PJRT_NamedValue_Type type);
  std::vector<PJRT_NamedValue> values_;
  std::vector<std::unique_ptr<std::string>> strings_;
  std::vector<std::unique_ptr<std::vector<int64_t>>> lists_;
};

}  // namespace stablert::capi

struct PJRT_DeviceDescription {
  int id = 0;
  int process_index = 0;
  std::string kind;
  std::string debug_string;
  std::string to_string;
  stablert::capi::NamedValueList attributes;
};

struct PJRT_Device {
  stablert::runtime::Device* device = nullptr;
  PJRT_Client* client = nullptr;
  PJRT_DeviceDescription description;
  std::vector<PJRT_Memory*> memories;  // default first
};

namespace stablert::capi {

// PJRT_Memory is a struct with a vtable (PJRT 0.105+); ours embeds it as the first member.
struct MemoryHandle {
  PJRT_Memory base;
  runtime::MemorySpace* memory = nullptr;
  PJRT_Client* client = nullptr;
  std::vector<PJRT_Device*> devices;
  std::string debug_string;
  std::string to_string;
  std::mutex user_data_mutex;
  std::map<const void*, std::pair<void*, void (*)(void*)>> user_data;
  ~MemoryHandle();
};

MemoryHandle* AsMemoryHandle(PJRT_Memory* memory);
const MemoryHandle* AsMemoryHandle(const PJRT_Memory* memory);
std::unique_ptr<MemoryHandle> NewMemoryHandle();

}  // namespace stablert::capi

struct PJRT_TopologyDescription {
  PJRT_Client* client = nullptr;  // null for a topology created without a client
  int device_count = 0;
  // For a topology without a client: the client PJRT_Compile compiles with, made by the
  // first PJRT_Compile against it (devices of one process; nothing runs on them).
  mutable std::mutex compiler_mutex;
  mutable std::unique_ptr<stablert::runtime::Client> compiler;
  std::vector<std::unique_ptr<PJRT_DeviceDescription>> owned_descriptions;
  std::vector<PJRT_DeviceDescription*> descriptions;
  stablert::capi::NamedValueList attributes;
  std::string platform_version;
  std::string serialized;
};

struct PJRT_Client {
  std::unique_ptr<stablert::runtime::Client> client;
  std::vector<std::unique_ptr<PJRT_Device>> owned_devices;
  std::vector<PJRT_Device*> devices;
  std::vector<PJRT_Device*> addressable_devices;
  std::vector<std::unique_ptr<stablert::capi::MemoryHandle>> owned_memories;
  std::vector<PJRT_Memory*> memories;
  std::unique_ptr<PJRT_TopologyDescription> topology;
  // Host ranges registered with PJRT_Client_DmaMap: start address -> byte count.
  std::mutex dma_mutex;
  std::map<uintptr_t, size_t> dma_ranges;

  PJRT_Device* Wrap(const stablert::runtime::Device* device) const;
  PJRT_Memory* Wrap(const stablert::runtime::MemorySpace* memory) const;
};

struct PJRT_Buffer {
  std::unique_ptr<stablert::runtime::Buffer> buffer;
  PJRT_Client* client = nullptr;
  std::vector<int64_t> dims;  // for PJRT_Buffer_Dimensions
};

struct PJRT_Event {
  stablert::runtime::EventRef event;
};

// PJRT_Client_CreateAliasBuffer's promise: what FulfillAliasBuffer needs to give the alias
// its bytes. Owned by the caller until FulfillAliasBuffer consumes it.
struct PJRT_FulfillAliasBufferCallback {
  PJRT_Client* client = nullptr;
  std::shared_ptr<stablert::runtime::BufferStorage> storage;  // the alias's deferred storage
  stablert::runtime::EventRef ready;                           // the alias's ready event
  stablert::DType dtype;
  stablert::Dims dims;
  std::vector<int64_t> layout;  // major_to_minor order of the alias's bytes (normalized; empty: row-major)
};

// PJRT_Device_CreateAsyncTrackingEvent: a named marker a framework keeps while it waits on
// something of the device's; it holds what it was told and nothing else.
struct PJRT_AsyncTrackingEvent {
  PJRT_Device* device = nullptr;
  std::string description;
};

// PJRT_ExecuteContext_Create: the context an execution receives through
// PJRT_ExecuteOptions::context; the caller keeps it alive for the executions it is passed to.
// Holds the FFI user data PJRT_FFI_Extension's user_data_add gave it (type id, pointer not
// owned), guarded by `mutex`; PJRT_LoadedExecutable_Execute hands a copy of it to the
// execution's FFI handlers (kernels/ffi_execution.h).
struct PJRT_ExecuteContext {
  std::mutex mutex;
  std::vector<std::pair<int64_t, void*>> ffi_user_data;
};

struct PJRT_Executable {
  std::shared_ptr<const stablert::runtime::Executable> executable;
  std::vector<PJRT_Buffer_Type> output_types;
  std::vector<int64_t> output_dims;       // concatenated
  std::vector<size_t> output_dim_sizes;   // rank per output
  std::vector<const char*> output_kinds;
  std::vector<size_t> output_kind_sizes;
  std::vector<const char*> parameter_kinds;
  std::vector<size_t> parameter_kind_sizes;
  std::vector<const char*> parameter_shardings;  // serialized xla.OpSharding
  std::vector<size_t> parameter_sharding_sizes;
  std::vector<const char*> output_shardings;
  std::vector<size_t> output_sharding_sizes;
  std::vector<PJRT_Layouts_MemoryLayout> parameter_layouts;  // one per parameter (runtime::Executable)
  std::vector<PJRT_Layouts_MemoryLayout*> parameter_layout_pointers;
  std::vector<PJRT_Layouts_MemoryLayout> output_layouts;
  std::vector<PJRT_Layouts_MemoryLayout*> output_layout_pointers;
  stablert::capi::NamedValueList cost_analysis;  // filled once, by the first GetCostAnalysis
  std::once_flag cost_analysis_once;
};

struct PJRT_LoadedExecutable {
  std::unique_ptr<stablert::runtime::LoadedExecutable> loaded;
  PJRT_Client* client = nullptr;
  std::vector<PJRT_Device*> addressable_devices;
};

namespace stablert::capi {

PJRT_Event* NewEvent(runtime::EventRef event);
// Fills the identity and attributes of a StableRT CPU device's description.
void FillDeviceDescription(int id, int process_index, int local_hardware_id, PJRT_DeviceDescription* description);
std::unique_ptr<PJRT_Executable> NewExecutableHandle(std::shared_ptr<const runtime::Executable> executable);
PJRT_Buffer* NewBufferHandle(std::unique_ptr<runtime::Buffer> buffer, PJRT_Client* client);

// Handle ownership checks. OK if the handle is null or one of `client`'s own; otherwise
// InvalidArgument "<function>: <field> belongs to another client ...". Devices and
// memories are looked up by address among the client's handles, so a handle of another
// client (or a dangling one) is never dereferenced.
Status CheckOwnDevice(const char* function, const char* field, const PJRT_Client* client, const PJRT_Device* device);
Status CheckOwnMemory(const char* function, const char* field, const PJRT_Client* client, const PJRT_Memory* memory);
// OK if `context` is null or a context PJRT_ExecuteContext_Create made and not yet
// destroyed (looked up by address, never dereferenced); else InvalidArgument naming
// `function`.
Status CheckLiveExecuteContext(const char* function, const PJRT_ExecuteContext* context);

}  // namespace stablert::capi
