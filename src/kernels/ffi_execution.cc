#include "kernels/ffi_execution.h"

#include <mutex>
#include <string>

namespace stablert::kernels::ffi {
namespace {

thread_local const ExecutionInfo* current_execution = nullptr;

struct ProcessUserData {
  std::mutex mutex;
  UserData entries;
};

ProcessUserData& Process() {
  static ProcessUserData* process = new ProcessUserData();  // never destroyed: handlers may run at exit
  return *process;
}

}  // namespace

void* ExecutionInfo::Find(int64_t type_id) const {
  if (user_data)
    for (const auto& [id, data] : *user_data)
      if (id == type_id) return data;
  return FindProcessUserData(type_id);
}

Status AddProcessUserData(std::string_view function, int64_t type_id, void* data) {
  if (data == nullptr) return InvalidArgument(std::string(function) + ": the user data pointer is null");
  ProcessUserData& process = Process();
  std::lock_guard<std::mutex> lock(process.mutex);
  for (const auto& [id, existing] : process.entries)
    if (id == type_id) {
      if (existing == data) return OkStatus();
      return Status(StatusCode::kAlreadyExists, std::string(function) + ": the process already holds user data of "
                                                                        "type id " + std::to_string(type_id));
    }
  process.entries.emplace_back(type_id, data);
  return OkStatus();
}

void* FindProcessUserData(int64_t type_id) {
  ProcessUserData& process = Process();
  std::lock_guard<std::mutex> lock(process.mutex);
  for (const auto& [id, data] : process.entries)
    if (id == type_id) return data;
  return nullptr;
}

const ExecutionInfo* CurrentExecution() { return current_execution; }

ScopedExecution::ScopedExecution(const ExecutionInfo* info) : previous_(current_execution) {
  current_execution = info;
}

ScopedExecution::~ScopedExecution() { current_execution = previous_; }

}  // namespace stablert::kernels::ffi
