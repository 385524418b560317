#include "runtime/client.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "base/env.h"
#include "base/hash.h"
#include "collectives/cross_process_communicator.h"
#include "kernels/simd/dispatch.h"
#include "runtime/array_layout.h"
#include "runtime/dump.h"

#include "runtime/version.h"

namespace stablert::runtime {
namespace {

constexpr int kMaxDevices = static_cast<int>(env::kMaxDeviceCount);

// An integer create option in [min, max]: an int64, or a string holding a decimal integer
// (jax_pjrt_client_create_options passes strings). Errors name the option, the value or
// the type given, and the range.
StatusOr<int64_t> RangedIntOption(const std::string& name, const ClientOptions::Value& value, int64_t min,
                                  int64_t max) {
  const std::string what = "PJRT_Client_Create: create option " + name;
  const std::string range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (const auto* s = std::get_if<std::string>(&value)) return env::ParseInt(what, *s, min, max);
  if (const auto* i = std::get_if<int64_t>(&value)) {
    if (*i >= min && *i <= max) return *i;
    return InvalidArgument(what + "=" + std::to_string(*i) + " is not " + range);
  }
  const char* type = std::holds_alternative<bool>(value)    ? "a bool"
                     : std::holds_alternative<float>(value) ? "a float"
                                                            : "an integer list";
  return InvalidArgument(what + " is " + type + "; it must be " + range);
}

StatusOr<int64_t> IntOption(const std::string& name, const ClientOptions::Value& value) {
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  if (const auto* s = std::get_if<std::string>(&value)) {
    char* end = nullptr;
    long long parsed = std::strtoll(s->c_str(), &end, 10);
    if (!s->empty() && *end == '\0') return static_cast<int64_t>(parsed);
  }
  return InvalidArgument("PJRT_Client_Create: option '" + name + "' must be an integer");
}

// Processes of one job; device ids (node_id * device_count + i) stay well inside int.
constexpr int64_t kMaxNodes = 65536;

}  // namespace

StatusOr<ClientOptions> ClientOptions::FromNamedValues(const std::vector<std::pair<std::string, Value>>& values) {
  ClientOptions options;
  StatusOr<int> env_count = env::DeviceCount();
  if (!env_count.ok()) return env_count.status().WithPrefix("PJRT_Client_Create");
  options.device_count = *env_count;
  for (const auto& [name, value] : values) {
    if (name == "device_count" || name == "cpu_device_count") {
      STABLERT_ASSIGN_OR_RETURN(int64_t count, RangedIntOption(name, value, 1, kMaxDevices));
      options.device_count = static_cast<int>(count);
    } else if (name == "node_id") {
      STABLERT_ASSIGN_OR_RETURN(int64_t id, IntOption(name, value));
      if (id < 0 || id > kMaxNodes - 1)
        return InvalidArgument("PJRT_Client_Create: option 'node_id' must be in [0, " + std::to_string(kMaxNodes - 1) +
                               "], got " + std::to_string(id));
      options.process_index = static_cast<int>(id);
    } else if (name == "num_nodes") {
      STABLERT_ASSIGN_OR_RETURN(int64_t count, IntOption(name, value));
      if (count < 1 || count > kMaxNodes)
        return InvalidArgument("PJRT_Client_Create: option 'num_nodes' must be in [1, " + std::to_string(kMaxNodes) +
                               "], got " + std::to_string(count));
      options.process_count = static_cast<int>(count);
    } else {
      return InvalidArgument("PJRT_Client_Create: unknown create option '" + name +
                             "'; known options: device_count, node_id, num_nodes");
    }
  }
  if (options.process_index >= options.process_count)
    return InvalidArgument("PJRT_Client_Create: node_id " + std::to_string(options.process_index) +
                           " is out of range for num_nodes " + std::to_string(options.process_count));
  return options;
}

Client::Client(const ClientOptions& options) : options_(options), platform_version_(PlatformVersion()) {}

Client::~Client() = default;

StatusOr<std::unique_ptr<Client>> Client::Create(const ClientOptions& options, const KeyValueStore* store) {
  // Every STABLERT_* variable is checked now, so that a mistake fails client creation (JAX
  // shows the message) rather than a later compilation or execution.
  STABLERT_RETURN_IF_ERROR(env::CheckEnvironment().WithPrefix("PJRT_Client_Create"));
  STABLERT_RETURN_IF_ERROR(kernels::simd::ApplyIsaSetting().WithPrefix("PJRT_Client_Create"));
  STABLERT_ASSIGN_OR_RETURN(std::optional<env::DumpDir> dump_dir, env::DumpDirectory());
  if (dump_dir) STABLERT_RETURN_IF_ERROR(PrepareDumpDirectory(*dump_dir).WithPrefix("PJRT_Client_Create"));
  std::unique_ptr<Client> client(new Client(options));
  // Every process's device count, and where this process's devices start in the global ids.
  std::vector<int> node_devices(1, options.device_count);
  int first_id = 0;
  if (options.process_count > 1) {
    STABLERT_ASSIGN_OR_RETURN(std::chrono::milliseconds timeout, env::CollectiveTimeout());
    timeout = std::max(timeout, std::chrono::milliseconds(60000));
    STABLERT_ASSIGN_OR_RETURN(std::optional<std::string> bind_address, env::CollectiveAddress());
    STABLERT_ASSIGN_OR_RETURN(client->transport_,
                              collectives::TcpTransport::Listen(options.process_index, options.process_count,
                                                                bind_address.value_or("")));
    NodeInfo own{options.device_count, client->transport_->address(), client->transport_->token(),
                 client->platform_version_};
    STABLERT_ASSIGN_OR_RETURN(std::vector<NodeInfo> nodes,
                              ExchangeTopology(store ? *store : KeyValueStore{}, options.process_index,
                                               options.process_count, own, timeout));
    std::vector<std::string> addresses, tokens;
    node_devices.clear();
    for (const NodeInfo& node : nodes) {
      addresses.push_back(node.address);
      tokens.push_back(node.token);
      node_devices.push_back(node.device_count);
    }
    int64_t total = 0;
    for (int n = 0; n < options.process_count; ++n) {
      if (n == options.process_index) first_id = static_cast<int>(total);
      total += node_devices[static_cast<size_t>(n)];
    }
    if (total > kMaxDevices * int64_t{16})
      return InvalidArgument("PJRT_Client_Create: the job has " + std::to_string(total) + " devices; at most " +
                             std::to_string(kMaxDevices * 16) + " are supported");
    STABLERT_RETURN_IF_ERROR(client->transport_->Connect(addresses, tokens, timeout).WithPrefix("PJRT_Client_Create"));
    STABLERT_ASSIGN_OR_RETURN(std::chrono::milliseconds transfer_timeout, env::CollectiveTimeout());
    client->cross_host_ = std::make_unique<CrossHostTransfers>(client->transport_.get(), transfer_timeout);
  }
  const char* kinds[] = {kDeviceMemoryKind, kPinnedHostMemoryKind, kUnpinnedHostMemoryKind};
  int memory_id = 0;
  int next_id = 0;
  for (int n = 0; n < static_cast<int>(node_devices.size()); ++n) {
    const bool own = options.process_count == 1 || n == options.process_index;
    if (own) next_id = first_id;
    for (int i = 0; i < node_devices[static_cast<size_t>(n)]; ++i) {
      const int id = next_id++;
      if (!own) {
        auto remote = std::make_unique<Device>(id, n, i, /*addressable=*/false);
        client->devices_.push_back(remote.get());
        client->device_storage_.push_back(std::move(remote));
        continue;
      }
      auto device = std::make_unique<Device>(id, options.process_index, i);
    for (int k = 0; k < 3; ++k) {
      auto memory = std::make_unique<MemorySpace>(memory_id++, kinds[k], k);
      memory->AddDevice(device.get());
      device->AddMemory(memory.get());
      client->memory_pointers_.push_back(memory.get());
      client->memory_storage_.push_back(std::move(memory));
    }
      client->devices_.push_back(device.get());
      client->addressable_devices_.push_back(device.get());
      client->device_storage_.push_back(std::move(device));
    }
  }
  return client;
}

StatusOr<std::unique_ptr<collectives::Communicator>> Client::NewCommunicator(
    const std::string& program_key, const std::vector<int64_t>& partition_devices, std::chrono::milliseconds timeout) {
  std::vector<int> process_of_rank;
  bool local = true;
  for (int64_t id : partition_devices) {
    STABLERT_ASSIGN_OR_RETURN(Device * device, LookupDevice(id));
    process_of_rank.push_back(device->process_index());
    local = local && device->is_addressable();
  }
  if (local || !transport_)
    return std::unique_ptr<collectives::Communicator>(
        new collectives::InProcessCommunicator(static_cast<int>(partition_devices.size()), timeout));
  uint64_t count;
  {
    std::lock_guard<std::mutex> lock(runs_mutex_);
    count = runs_[program_key]++;
  }
  const uint64_t run_id = Fingerprint64("#" + std::to_string(count), Fingerprint64(program_key));
  return std::unique_ptr<collectives::Communicator>(
      new collectives::CrossProcessCommunicator(transport_.get(), std::move(process_of_rank), run_id, timeout));
}

StatusOr<Device*> Client::LookupDevice(int64_t id) const {
  for (Device* device : devices_)
    if (device->id() == id) return device;
  return InvalidArgument("No matching device found for device_id " + std::to_string(id));
}

StatusOr<Device*> Client::LookupAddressableDevice(int64_t local_hardware_id) const {
  for (Device* device : addressable_devices_)
    if (device->local_hardware_id() == local_hardware_id) return device;
  return InvalidArgument("No matching device found for local_hardware_id " + std::to_string(local_hardware_id));
}

StatusOr<std::vector<std::vector<int64_t>>> Client::DefaultDeviceAssignment(int num_replicas, int num_partitions) const {
  if (num_replicas < 1 || num_partitions < 1)
    return InvalidArgument("num_replicas and num_partitions must be at least 1, got " + std::to_string(num_replicas) +
                           " and " + std::to_string(num_partitions));
  int64_t needed = static_cast<int64_t>(num_replicas) * num_partitions;
  if (needed > static_cast<int64_t>(devices_.size()))
    return InvalidArgument("a " + std::to_string(num_replicas) + "x" + std::to_string(num_partitions) +
                           " device assignment needs " + std::to_string(needed) + " devices; the client has " +
                           std::to_string(devices_.size()));
  std::vector<std::vector<int64_t>> assignment(num_replicas, std::vector<int64_t>(num_partitions));
  int next = 0;
  for (int r = 0; r < num_replicas; ++r)
    for (int p = 0; p < num_partitions; ++p) assignment[r][p] = devices_[next++]->id();
  return assignment;
}

StatusOr<HostBufferResult> Client::BufferFromHostBuffer(const void* data, DType dtype, const Dims& dims,
                                                        const std::vector<int64_t>& byte_strides,
                                                        HostBufferSemantics semantics, MemorySpace* memory,
                                                        const std::vector<int64_t>& layout) {
  if (!memory || memory->devices().empty()) return InvalidArgument("BufferFromHostBuffer: no memory space given");
  int element_size = DTypeByteSize(dtype);
  if (element_size == 0)
    return InvalidArgument("BufferFromHostBuffer: element type " + std::string(DTypeName(dtype)) +
                           " cannot be transferred as an array");
  STABLERT_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(dims));
  STABLERT_ASSIGN_OR_RETURN(int64_t checked_bytes, CheckedByteSize(dims, element_size));
  if (!byte_strides.empty() && byte_strides.size() != dims.size())
    return InvalidArgument("BufferFromHostBuffer: " + std::to_string(byte_strides.size()) + " byte strides for " +
                           std::to_string(dims.size()) + " dimensions");
  MajorToMinor order = NormalizeLayout(layout);
  STABLERT_RETURN_IF_ERROR(CheckLayout(order, dims.size(), "BufferFromHostBuffer: device layout"));
  size_t bytes = static_cast<size_t>(checked_bytes);
  if (!byte_strides.empty()) STABLERT_RETURN_IF_ERROR(CheckedStridedSpan(dims, byte_strides, element_size).status());
  if (count > 0 && !data) return InvalidArgument("BufferFromHostBuffer: data is null for a non-empty array");
  Device* device = memory->devices().front();

  auto dense_strides = [&](const Dims& of) {
    std::vector<int64_t> strides = RowMajorStrides(of);
    for (int64_t& s : strides) s *= element_size;
    return strides;
  };
  // The buffer's bytes are the row-major array of the physical dims; the host array read as
  // that array has its strides permuted the same way.
  Dims physical = PhysicalDims(dims, order);
  std::vector<int64_t> strides = byte_strides;
  if (!order.empty()) {
    std::vector<int64_t> logical = byte_strides.empty() ? dense_strides(dims) : byte_strides;
    strides.resize(dims.size());
    for (size_t q = 0; q < order.size(); ++q) strides[q] = logical[static_cast<size_t>(order[q])];
  }
  auto is_dense = [&](const std::vector<int64_t>& s, const Dims& of) {
    if (s.empty()) return true;
    std::vector<int64_t> dense = dense_strides(of);
    for (size_t d = 0; d < of.size(); ++d)
      if (of[d] > 1 && s[d] != dense[d]) return false;
    return true;
  };
  bool dense = is_dense(strides, physical);
  bool aligned = reinterpret_cast<uintptr_t>(data) % kZeroCopyAlignment == 0;
  bool zero_copy = (semantics == HostBufferSemantics::kImmutableZeroCopy ||
                    semantics == HostBufferSemantics::kMutableZeroCopy) &&
                   dense && aligned && count > 0;
  HostBufferResult result;
  if (zero_copy) {
    EventRef done = Event::Create();
    auto storage = BufferStorage::Borrow(const_cast<void*>(data), bytes, [done] { done->Set(OkStatus()).IgnoreError(); });
    result.done_with_host_buffer = done;
    result.buffer = std::make_unique<Buffer>(dtype, dims, device, memory, std::move(storage), Event::Ready(), order);
    return result;
  }
  STABLERT_ASSIGN_OR_RETURN(auto storage, BufferStorage::Allocate(bytes, device->memory_stats()));
  if (count > 0) {
    if (!order.empty() && !dense && is_dense(byte_strides, dims))
      CopyRowMajorToLayout(data, dims, dtype, order, storage->data());  // the transpose kernel
    else
      CopyStridedToDense(data, physical, dense ? std::vector<int64_t>{} : strides, element_size, storage->data());
  }
  result.done_with_host_buffer = Event::Ready();
  result.buffer = std::make_unique<Buffer>(dtype, dims, device, memory, std::move(storage), Event::Ready(), order);
  return result;
}

StatusOr<std::unique_ptr<Buffer>> Client::CopyBuffer(const Buffer& buffer, MemorySpace* memory) {
  if (!memory || memory->devices().empty()) return InvalidArgument("CopyToMemory: no destination memory space");
  STABLERT_ASSIGN_OR_RETURN(auto source, buffer.storage("PJRT_Buffer_CopyToMemory"));
  Device* device = memory->devices().front();
  STABLERT_ASSIGN_OR_RETURN(auto storage, BufferStorage::Allocate(buffer.size_in_bytes(), device->memory_stats()));
  EventRef ready = Event::Create();
  // Between memory kinds the copy is row-major (XLA's CPU client gives such copies the
  // default layout); within one kind it keeps the bytes and their layout.
  const bool to_row_major = !buffer.layout().empty() && buffer.memory() && buffer.memory()->kind() != memory->kind();
  MajorToMinor relayout = to_row_major ? buffer.layout() : MajorToMinor{};
  auto copy = std::make_unique<Buffer>(buffer.dtype(), buffer.dims(), device, memory, storage, ready,
                                       to_row_major ? MajorToMinor{} : buffer.layout());
  EventRef source_ready = buffer.ready_event();
  // Read on the destination's queue: a later donation of the source waits for the copy.
  buffer.AddUsage(ready);
  device->queue().Submit([source, storage, ready, source_ready, relayout, dims = buffer.dims(),
                          dtype = buffer.dtype()] {
    Status status = source_ready->Await();
    if (status.ok() && source->size() > 0) {
      if (relayout.empty()) std::memcpy(storage->data(), source->data(), source->size());
      else CopyLayoutToRowMajor(source->data(), dims, dtype, relayout, storage->data());
    }
    ready->Set(status).IgnoreError();
  });
  return copy;
}

std::unique_ptr<Buffer> Client::CreateErrorBuffer(Status error, DType dtype, const Dims& dims, MemorySpace* memory) {
  auto storage = BufferStorage::Borrow(nullptr, 0, {});
  Device* device = memory->devices().front();
  return std::make_unique<Buffer>(dtype, dims, device, memory, std::move(storage), Event::Ready(std::move(error)));
}

StatusOr<std::unique_ptr<Buffer>> Client::CreateUninitializedBuffer(DType dtype, const Dims& dims, MemorySpace* memory,
                                                                    const std::vector<int64_t>& layout) {
  if (!memory || memory->devices().empty()) return InvalidArgument("CreateUninitializedBuffer: no memory space");
  STABLERT_RETURN_IF_ERROR(CheckLayout(layout, dims.size(), "CreateUninitializedBuffer: layout"));
  STABLERT_ASSIGN_OR_RETURN(int64_t bytes, CheckedByteSize(dims, DTypeByteSize(dtype)));
  STABLERT_ASSIGN_OR_RETURN(auto storage,
                            BufferStorage::Allocate(static_cast<size_t>(bytes), memory->devices().front()->memory_stats()));
  return std::make_unique<Buffer>(dtype, dims, memory->devices().front(), memory, std::move(storage), Event::Ready(),
                                  layout);
}

}  // namespace stablert::runtime
