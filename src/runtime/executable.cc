#include "runtime/executable.h"

#include <algorithm>

#include "base/hash.h"

#include "runtime/executor.h"

namespace stablert::runtime {
namespace {

// Distinguishes the program bytes from the options bytes in the fingerprint.
std::string Fingerprint(std::string_view program, std::string_view options) {
  uint64_t hash = Fingerprint64(program);
  hash = Fingerprint64(std::string_view("\xff", 1), hash);
  return FingerprintToHex(Fingerprint64(options, hash));
}

}  // namespace

Executable::Executable(std::string name, std::string program, std::string program_format, CompileOptions options,
                       plan::ExecutionPlan plan, std::vector<std::string> output_memory_kinds,
                       std::vector<std::string> parameter_memory_kinds, std::vector<bool> donatable_parameters)
    : name_(std::move(name)),
      program_(std::move(program)),
      program_format_(std::move(program_format)),
      options_(std::move(options)),
      plan_(std::move(plan)),
      output_memory_kinds_(std::move(output_memory_kinds)),
      parameter_memory_kinds_(std::move(parameter_memory_kinds)),
      donatable_parameters_(std::move(donatable_parameters)),
      fingerprint_(Fingerprint(program_, options_.serialized)) {}

std::string Executable::OptimizedProgramText() const { return plan::PrintPlan(plan_); }

LoadedExecutable::LoadedExecutable(Client* client, std::shared_ptr<const Executable> executable,
                                   std::vector<Device*> devices, std::vector<std::pair<int, int>> logical_ids)
    : client_(client),
      executable_(std::move(executable)),
      devices_(std::move(devices)),
      logical_ids_(std::move(logical_ids)) {
  const CompileOptions& options = executable_->options();
  device_assignment_.assign(options.num_replicas, std::vector<int64_t>(options.num_partitions, -1));
  for (size_t i = 0; i < devices_.size(); ++i)
    device_assignment_[logical_ids_[i].first][logical_ids_[i].second] = devices_[i]->id();
}

StatusOr<ExecuteResult> LoadedExecutable::Execute(const std::vector<std::vector<Buffer*>>& arguments,
                                                  Device* execute_device, const std::vector<int64_t>& non_donatable) {
  if (deleted_) return FailedPrecondition("PJRT_LoadedExecutable_Execute: the executable has been deleted");
  std::vector<Device*> run_on;
  if (execute_device) {
    if (arguments.size() != 1)
      return InvalidArgument("PJRT_LoadedExecutable_Execute: execute_device is set, so exactly 1 argument list is "
                             "expected, got " + std::to_string(arguments.size()));
    run_on = {execute_device};
  } else {
    if (arguments.size() != devices_.size())
      return InvalidArgument("Attempted to execute with " + std::to_string(arguments.size()) +
                             " argument lists when local device count is " + std::to_string(devices_.size()) +
                             " (total replica count: " + std::to_string(executable_->num_replicas()) +
                             ", partition count: " + std::to_string(executable_->num_partitions()) + ")");
    run_on = devices_;
  }
  const auto& parameter_types = executable_->parameter_types();
  const auto& result_types = executable_->result_types();

  struct DeviceRun {
    Device* device;
    std::vector<std::shared_ptr<BufferStorage>> inputs;
    std::vector<EventRef> input_events;
    std::vector<std::shared_ptr<BufferStorage>> outputs;
    EventRef done;
  };
  std::vector<DeviceRun> runs;
  std::vector<Buffer*> donated;
  ExecuteResult result;
  for (size_t d = 0; d < run_on.size(); ++d) {
    const auto& args = arguments[d];
    if (args.size() != parameter_types.size())
      return InvalidArgument("PJRT_LoadedExecutable_Execute: " + executable_->name() + " takes " +
                             std::to_string(parameter_types.size()) + " arguments, got " + std::to_string(args.size()));
    DeviceRun run{run_on[d], {}, {}, {}, Event::Create()};
    for (size_t i = 0; i < args.size(); ++i) {
      const Buffer* buffer = args[i];
      const plan::TensorType& expected = parameter_types[i];
      if (!buffer) return InvalidArgument("PJRT_LoadedExecutable_Execute: argument " + std::to_string(i) + " is null");
      if (buffer->dtype() != expected.dtype || buffer->dims() != expected.dims)
        return InvalidArgument("PJRT_LoadedExecutable_Execute: argument " + std::to_string(i) + " of " +
                               executable_->name() + " is " + std::string(DTypeName(buffer->dtype())) +
                               DimsToString(buffer->dims()) + ", expected " + plan::TensorTypeToString(expected));
      STABLERT_ASSIGN_OR_RETURN(auto storage, buffer->storage("PJRT_LoadedExecutable_Execute"));
      run.inputs.push_back(std::move(storage));
      run.input_events.push_back(buffer->ready_event());
      bool donate = i < executable_->donatable_parameters().size() && executable_->donatable_parameters()[i] &&
                    std::find(non_donatable.begin(), non_donatable.end(), static_cast<int64_t>(i)) == non_donatable.end();
      if (donate) donated.push_back(args[i]);
    }
    for (Buffer* buffer : donated)
      if (std::count(args.begin(), args.end(), buffer) > 1)
        return InvalidArgument("PJRT_LoadedExecutable_Execute: a buffer donated to " + executable_->name() +
                               " is also passed as another argument; donate it only once");
    std::vector<std::unique_ptr<Buffer>> outputs;
    for (size_t o = 0; o < result_types.size(); ++o) {
      const plan::TensorType& type = result_types[o];
      size_t bytes = static_cast<size_t>(ElementCount(type.dims)) * DTypeByteSize(type.dtype);
      STABLERT_ASSIGN_OR_RETURN(auto storage, BufferStorage::Allocate(bytes));
      MemorySpace* memory = run.device->memory_of_kind(executable_->output_memory_kinds()[o]);
      if (!memory) memory = run.device->default_memory();
      outputs.push_back(std::make_unique<Buffer>(type.dtype, type.dims, run.device, memory, storage, run.done));
      run.outputs.push_back(std::move(storage));
    }
    result.outputs.push_back(std::move(outputs));
    result.device_complete.push_back(run.done);
    runs.push_back(std::move(run));
  }

  // Donated inputs are consumed now; the queued runs hold their bytes until they finish.
  for (Buffer* buffer : donated) buffer->Delete();
  for (DeviceRun& run : runs) {
    std::shared_ptr<const Executable> executable = executable_;
    run.device->queue().Submit([executable, run = std::move(run)] {
      Status status;
      for (const EventRef& event : run.input_events) {
        Status input_status = event->Await();
        if (!input_status.ok() && status.ok()) status = input_status;
      }
      if (status.ok()) {
        std::vector<const void*> in;
        std::vector<void*> out;
        for (const auto& storage : run.inputs) in.push_back(storage->data());
        for (const auto& storage : run.outputs) out.push_back(storage->data());
        status = ExecutePlan(executable->plan(), in, out);
      }
      run.done->Set(status).IgnoreError();
    });
  }
  return result;
}

}  // namespace stablert::runtime
