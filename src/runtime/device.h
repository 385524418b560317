// Devices and memory spaces of a StableRT client.
//
// A Device is one logical CPU device with its own work queue; executions and transfers
// submitted to it run in order on that queue, different devices run concurrently.
// Every device has three memory spaces ("device", the default, plus "pinned_host" and
// "unpinned_host"), all in host memory. Devices and memory spaces are owned by their
// Client and live as long as it; their accessors are thread-safe (immutable after setup).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/memory_stats.h"
#include "runtime/pending_launches.h"
#include "runtime/work_queue.h"

namespace stablert::runtime {

class Device;

class MemorySpace {
 public:
  MemorySpace(int id, std::string kind, int kind_id) : id_(id), kind_(std::move(kind)), kind_id_(kind_id) {}
  MemorySpace(const MemorySpace&) = delete;
  MemorySpace& operator=(const MemorySpace&) = delete;

  int id() const { return id_; }
  const std::string& kind() const { return kind_; }
  int kind_id() const { return kind_id_; }
  const std::vector<Device*>& devices() const { return devices_; }
  std::string DebugString() const;
  std::string ToString() const;

  void AddDevice(Device* device) { devices_.push_back(device); }

 private:
  int id_;
  std::string kind_;
  int kind_id_;
  std::vector<Device*> devices_;
};

inline constexpr char kDeviceMemoryKind[] = "device";
inline constexpr char kPinnedHostMemoryKind[] = "pinned_host";
inline constexpr char kUnpinnedHostMemoryKind[] = "unpinned_host";

class Device {
 public:
  // A device of another process of the job (`addressable` false) has no queue and no
  // memory spaces: it is listed, never run on.
  Device(int id, int process_index, int local_hardware_id, bool addressable = true);
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  int id() const { return id_; }
  int process_index() const { return process_index_; }
  int local_hardware_id() const { return local_hardware_id_; }
  bool is_addressable() const { return addressable_; }
  const std::string& kind() const { return kind_; }
  const std::string& debug_string() const { return debug_string_; }
  const std::string& to_string() const { return to_string_; }
  const std::vector<MemorySpace*>& memories() const { return memories_; }
  MemorySpace* default_memory() const { return memories_.empty() ? nullptr : memories_.front(); }
  // The memory space of this device with `kind`, or nullptr.
  MemorySpace* memory_of_kind(const std::string& kind) const;
  WorkQueue& queue() { return *queue_; }
  // Executions queued here and not started yet (PJRT_Device_PoisonExecution).
  PendingLaunches& pending_launches() { return pending_launches_; }
  // The allocation counters of this device's buffers; shared with the storage it counts,
  // which may outlive the device.
  const std::shared_ptr<MemoryStats>& memory_stats() const { return memory_stats_; }

  // Setup, called by the Client before it is shared.
  void AddMemory(MemorySpace* memory) { memories_.push_back(memory); }

 private:
  int id_;
  int process_index_;
  int local_hardware_id_;
  bool addressable_ = true;
  std::string kind_;
  std::string debug_string_;
  std::string to_string_;
  std::vector<MemorySpace*> memories_;  // default first
  std::unique_ptr<WorkQueue> queue_;
  PendingLaunches pending_launches_;
  std::shared_ptr<MemoryStats> memory_stats_ = std::make_shared<MemoryStats>();
};

}  // namespace stablert::runtime
