#include "runtime/device.h"

#include "runtime/version.h"

namespace stablert::runtime {

std::string MemorySpace::DebugString() const { return "stablert:memory:" + std::to_string(id_) + ":" + kind_; }

std::string MemorySpace::ToString() const {
  return "MEMORY_SPACE_" + std::to_string(id_) + "(kind=" + kind_ + ")";
}

Device::Device(int id, int process_index, int local_hardware_id, bool addressable)
    : id_(id),
      process_index_(process_index),
      local_hardware_id_(local_hardware_id),
      addressable_(addressable),
      kind_(DeviceKind()),
      debug_string_("stablert:" + std::to_string(id)),
      to_string_("StableRtDevice(id=" + std::to_string(id) + ")"),
      queue_(addressable ? std::make_unique<WorkQueue>("stablert-dev" + std::to_string(id)) : nullptr) {}

MemorySpace* Device::memory_of_kind(const std::string& kind) const {
  for (MemorySpace* memory : memories_)
    if (memory->kind() == kind) return memory;
  return nullptr;
}

}  // namespace stablert::runtime
