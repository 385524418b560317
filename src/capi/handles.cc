#include "capi/handles.h"

#include <algorithm>

#include "capi/live_handles.h"
#include "runtime/version.h"

namespace stablert::capi {

PJRT_NamedValue& NamedValueList::Add(const std::string& name, PJRT_NamedValue_Type type) {
  strings_.push_back(std::make_unique<std::string>(name));
  PJRT_NamedValue value{};
  value.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  value.name = strings_.back()->c_str();
  value.name_size = strings_.back()->size();
  value.type = type;
  value.value_size = 1;
  values_.push_back(value);
  return values_.back();
}

void NamedValueList::AddString(const std::string& name, const std::string& text) {
  PJRT_NamedValue& value = Add(name, PJRT_NamedValue_kString);
  strings_.push_back(std::make_unique<std::string>(text));
  value.string_value = strings_.back()->c_str();
  value.value_size = strings_.back()->size();
}

void NamedValueList::AddInt64(const std::string& name, int64_t number) {
  Add(name, PJRT_NamedValue_kInt64).int64_value = number;
}

void NamedValueList::AddInt64List(const std::string& name, std::vector<int64_t> numbers) {
  PJRT_NamedValue& value = Add(name, PJRT_NamedValue_kInt64List);
  lists_.push_back(std::make_unique<std::vector<int64_t>>(std::move(numbers)));
  value.int64_array_value = lists_.back()->data();
  value.value_size = lists_.back()->size();
}

void NamedValueList::AddBool(const std::string& name, bool flag) { Add(name, PJRT_NamedValue_kBool).bool_value = flag; }

void NamedValueList::AddFloat(const std::string& name, float number) {
  Add(name, PJRT_NamedValue_kFloat).float_value = number;
}

namespace {

void* MemoryGetUserData(PJRT_Memory* memory, const void* key) noexcept {
  MemoryHandle* handle = AsMemoryHandle(memory);
  std::lock_guard<std::mutex> lock(handle->user_data_mutex);
  auto it = handle->user_data.find(key);
  return it == handle->user_data.end() ? nullptr : it->second.first;
}

// A vtable function returns nothing, so no exception may leave it: if the entry cannot be
// stored (no memory), the data is released at once, as it would be with the memory.
void MemorySetUserData(PJRT_Memory* memory, const void* key, void* data, void (*dtor)(void*)) noexcept {
  MemoryHandle* handle = AsMemoryHandle(memory);
  std::pair<void*, void (*)(void*)> old{nullptr, nullptr};
  try {
    std::lock_guard<std::mutex> lock(handle->user_data_mutex);
    auto it = handle->user_data.find(key);
    if (it != handle->user_data.end()) old = it->second;
    handle->user_data[key] = {data, dtor};
  } catch (...) {
    if (data && dtor) dtor(data);
    return;
  }
  if (old.first && old.second && old.first != data) old.second(old.first);
}

const PJRT_Memory_FunctionTable kMemoryVtable = {
    PJRT_Memory_FunctionTable_STRUCT_SIZE, nullptr, PJRT_Memory_STRUCT_SIZE, &MemoryGetUserData, &MemorySetUserData,
};

}  // namespace

MemoryHandle::~MemoryHandle() {
  for (auto& [key, entry] : user_data)
    if (entry.first && entry.second) entry.second(entry.first);
}

MemoryHandle* AsMemoryHandle(PJRT_Memory* memory) { return reinterpret_cast<MemoryHandle*>(memory); }
const MemoryHandle* AsMemoryHandle(const PJRT_Memory* memory) { return reinterpret_cast<const MemoryHandle*>(memory); }

std::unique_ptr<MemoryHandle> NewMemoryHandle() {
  auto handle = std::make_unique<MemoryHandle>();
  handle->base.vtable = &kMemoryVtable;
  return handle;
}

void FillDeviceDescription(int id, int process_index, int local_hardware_id, PJRT_DeviceDescription* description) {
  description->id = id;
  description->process_index = process_index;
  description->kind = runtime::DeviceKind();
  description->debug_string = "stablert:" + std::to_string(id);
  description->to_string = "StableRtDevice(id=" + std::to_string(id) + ")";
  description->attributes.AddInt64List("coords", {local_hardware_id});
  description->attributes.AddString("device_vendor", "StableRT");
}

namespace {

// OK if `handle` is null or one of `owned` (compared by address, never dereferenced).
template <typename Handle>
Status CheckOwnHandle(const char* function, const char* field, const char* kind, const char* kinds,
                      const std::vector<Handle*>& owned, const Handle* handle) {
  if (!handle || std::find(owned.begin(), owned.end(), handle) != owned.end()) return OkStatus();
  return InvalidArgument(std::string(function) + ": " + field + " belongs to another client (or is not a " + kind +
                         " handle); expected one of the " + std::to_string(owned.size()) + " " + kinds +
                         " of the client it is used with");
}

}  // namespace

Status CheckOwnDevice(const char* function, const char* field, const PJRT_Client* client, const PJRT_Device* device) {
  return CheckOwnHandle(function, field, "device", "devices", client->devices, device);
}

Status CheckOwnMemory(const char* function, const char* field, const PJRT_Client* client, const PJRT_Memory* memory) {
  return CheckOwnHandle(function, field, "memory", "memories", client->memories, memory);
}

PJRT_Event* NewEvent(runtime::EventRef event) { return new PJRT_Event{std::move(event)}; }

PJRT_Buffer* NewBufferHandle(std::unique_ptr<runtime::Buffer> buffer, PJRT_Client* client) {
  auto* handle = new PJRT_Buffer;
  handle->dims = buffer->dims();
  handle->buffer = std::move(buffer);
  handle->client = client;
  LiveHandles<PJRT_Buffer>::Of().Add(handle);
  return handle;
}

bool IsLiveBuffer(const PJRT_Buffer* buffer) { return LiveHandles<PJRT_Buffer>::Of().Check(buffer); }

std::unique_ptr<PJRT_Executable> NewExecutableHandle(std::shared_ptr<const runtime::Executable> executable) {
  auto handle = std::make_unique<PJRT_Executable>();
  const auto& result_types = executable->local_result_types();
  for (size_t o = 0; o < result_types.size(); ++o) {
    if (executable->result_is_token(o)) {  // a token: type TOKEN, rank 0, as XLA reports it
      handle->output_types.push_back(PJRT_Buffer_Type_TOKEN);
      handle->output_dim_sizes.push_back(0);
      continue;
    }
    handle->output_types.push_back(static_cast<PJRT_Buffer_Type>(result_types[o].dtype));
    handle->output_dim_sizes.push_back(result_types[o].dims.size());
    handle->output_dims.insert(handle->output_dims.end(), result_types[o].dims.begin(), result_types[o].dims.end());
  }
  for (const std::string& kind : executable->output_memory_kinds()) {
    handle->output_kinds.push_back(kind.c_str());
    handle->output_kind_sizes.push_back(kind.size());
  }
  for (const std::string& kind : executable->parameter_memory_kinds()) {
    handle->parameter_kinds.push_back(kind.c_str());
    handle->parameter_kind_sizes.push_back(kind.size());
  }
  for (const std::string& sharding : executable->parameter_op_shardings()) {
    handle->parameter_shardings.push_back(sharding.data());
    handle->parameter_sharding_sizes.push_back(sharding.size());
  }
  for (const std::string& sharding : executable->result_op_shardings()) {
    handle->output_shardings.push_back(sharding.data());
    handle->output_sharding_sizes.push_back(sharding.size());
  }
  const auto& parameter_types = executable->local_parameter_types();
  for (size_t i = 0; i < parameter_types.size(); ++i)
    handle->parameter_layouts.push_back(MemoryLayoutOf(executable->parameter_layouts()[i], parameter_types[i].dims.size()));
  for (size_t o = 0; o < handle->output_dim_sizes.size(); ++o)
    handle->output_layouts.push_back(MemoryLayoutOf(executable->result_layouts()[o], handle->output_dim_sizes[o]));
  for (auto& layout : handle->parameter_layouts) handle->parameter_layout_pointers.push_back(&layout);
  for (auto& layout : handle->output_layouts) handle->output_layout_pointers.push_back(&layout);
  handle->executable = std::move(executable);
  return handle;
}

}  // namespace stablert::capi

// Devices are numbered by local hardware id and memories by id, both dense from 0.
PJRT_Device* PJRT_Client::Wrap(const stablert::runtime::Device* device) const {
  if (device->is_addressable()) return addressable_devices[device->local_hardware_id()];
  // A device of another process (multi-process jobs).
  for (PJRT_Device* handle : devices)
    if (handle->device == device) return handle;
  return nullptr;
}

PJRT_Memory* PJRT_Client::Wrap(const stablert::runtime::MemorySpace* memory) const { return memories[memory->id()]; }
