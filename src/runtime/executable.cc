#include "runtime/executable.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>

#include "base/env.h"
#include "base/hash.h"

#include <mutex>

#include "collectives/communicator.h"
#include "kernels/registry.h"
#include "runtime/array_layout.h"
#include "runtime/client.h"
#include "plan/donation.h"
#include "runtime/trace.h"
#include "runtime/box_copy.h"
#include "runtime/executor.h"

namespace stablert::runtime {
namespace {

// Distinguishes the program bytes from the options bytes in the fingerprint.
std::string Fingerprint(std::string_view program, std::string_view options) {
  uint64_t hash = Fingerprint64(program);
  hash = Fingerprint64(std::string_view("\xff", 1), hash);
  return FingerprintToHex(Fingerprint64(options, hash));
}

// One device's part of an execution: its inputs, outputs and completion event.
struct DeviceRun {
  Device* device;
  int64_t partition;
  std::vector<std::shared_ptr<BufferStorage>> inputs;
  std::vector<EventRef> input_events;
  std::vector<std::shared_ptr<BufferStorage>> outputs;
  EventRef done;
  // Earlier usages of donated storage the outputs take over: awaited (their errors
  // ignored) before anything is written.
  std::vector<EventRef> usages;
  // What XLA FFI handlers of the run may ask about it (user data, device ordinal).
  kernels::ffi::ExecutionInfo ffi;
  // The major_to_minor layout of each input not held row-major (empty when all are).
  std::vector<std::vector<int64_t>> input_layouts;
};

// Drops a finished run's references to its arrays. Runs call it before they signal completion:
// a caller that frees the results and runs again then finds their memory released, instead of
// two generations of outputs alive at once for as long as this thread takes to destroy the
// finished task (peak memory would depend on that race).
void ReleaseArrays(DeviceRun& run) {
  run.inputs.clear();
  run.input_events.clear();
  run.outputs.clear();
  run.usages.clear();
}

// Whether the run reads or writes an array in a layout other than row-major.
bool NeedsRelayout(const Executable& executable, const DeviceRun& run) {
  if (!run.input_layouts.empty()) return true;
  for (const MajorToMinor& layout : executable.result_layouts())
    if (!layout.empty()) return true;
  return false;
}

// The run as the plan sees it, every array row-major: inputs in other layouts copied
// row-major (after the inputs are ready), outputs in other layouts given row-major scratch
// storage that CopyOutputsToLayouts then transposes into theirs.
StatusOr<DeviceRun> RowMajorRun(const Executable& executable, const DeviceRun& run) {
  DeviceRun row_major = run;
  const auto& parameters = executable.local_parameter_types();
  for (size_t i = 0; i < run.input_layouts.size() && i < run.inputs.size(); ++i) {
    if (run.input_layouts[i].empty()) continue;
    STABLERT_ASSIGN_OR_RETURN(auto storage, BufferStorage::Allocate(run.inputs[i]->size()));
    CopyLayoutToRowMajor(run.inputs[i]->data(), parameters[i].dims, parameters[i].dtype, run.input_layouts[i],
                         storage->data());
    row_major.inputs[i] = std::move(storage);
  }
  const auto& layouts = executable.result_layouts();
  for (size_t o = 0; o < layouts.size() && o < run.outputs.size(); ++o) {
    if (layouts[o].empty()) continue;
    STABLERT_ASSIGN_OR_RETURN(row_major.outputs[o], BufferStorage::Allocate(run.outputs[o]->size()));
  }
  return row_major;
}

void CopyOutputsToLayouts(const Executable& executable, const DeviceRun& row_major, const DeviceRun& run) {
  const auto& layouts = executable.result_layouts();
  const auto& results = executable.local_result_types();
  for (size_t o = 0; o < layouts.size() && o < run.outputs.size(); ++o)
    if (!layouts[o].empty())
      CopyRowMajorToLayout(row_major.outputs[o]->data(), results[o].dims, results[o].dtype, layouts[o],
                           run.outputs[o]->data());
}


Status AwaitAll(const std::vector<EventRef>& events) {
  Status status;
  for (const EventRef& event : events) {
    Status event_status = event->Await();
    if (!event_status.ok() && status.ok()) status = event_status;
  }
  return status;
}

// Waits for the run's inputs (their first error is the run's) and for the earlier readers
// of donated storage.
Status AwaitInputs(const DeviceRun& run) {
  for (const EventRef& usage : run.usages) usage->Await().IgnoreError();
  return AwaitAll(run.input_events);
}

std::vector<plan::TensorType> LocalTypes(const std::vector<plan::TensorType>& global,
                                         const std::vector<passes::ShardLayout>& shards) {
  std::vector<plan::TensorType> local = global;
  for (size_t i = 0; i < local.size() && i < shards.size(); ++i) local[i].dims = shards[i].local_dims;
  return local;
}

// The global-view execution of a partitioned program (DESIGN.md, "Multi-device"): every
// global parameter is assembled from the shards of the devices holding distinct blocks
// (shared when the parameter is replicated), the plan runs once, and each device's result
// shards are cut from the global results.
std::vector<std::string> OpShardings(const std::vector<plan::TensorType>& types,
                                     const std::vector<passes::ShardLayout>& shards) {
  std::vector<std::string> out;
  for (size_t i = 0; i < types.size() && i < shards.size(); ++i)
    out.push_back(passes::SerializeOpSharding(shards[i], types[i].dims));
  return out;
}

// sum += addend, elementwise over `count` elements of `dtype`, with the CPU add kernel.
Status AddInto(DType dtype, int64_t count, void* sum, const void* addend) {
  kernels::KernelFn add = kernels::CpuKernels().Find("add." + std::string(DTypeName(dtype)));
  if (add == nullptr) return Unimplemented("unreduced arrays of " + std::string(DTypeName(dtype)) + " are not supported");
  const int64_t dims[1] = {count};
  const kernels::BufferView views[3] = {{sum, dtype, dims, count}, {const_cast<void*>(addend), dtype, dims, count},
                                        {sum, dtype, dims, count}};
  kernels::KernelArgs args{std::span(views, 2), std::span(views + 2, 1)};
  return add(kernels::KernelContext{}, args);
}

// The block partition `holder` contributes to its parameter's global array: its shard, or,
// for an unreduced parameter, the sum of the partial shards of its group (written to
// `scratch`).
StatusOr<const void*> ParameterBlock(const passes::ShardLayout& layout, const plan::TensorType& type, size_t index,
                                     int64_t holder, const std::vector<const DeviceRun*>& by_partition,
                                     std::vector<uint8_t>& scratch) {
  const void* shard = by_partition[holder]->inputs[index]->data();
  if (layout.partial_group_size <= 1) return shard;
  for (int64_t member : layout.partial_groups)
    if (by_partition[member] == nullptr)
      return Unimplemented("unreduced parameter " + std::to_string(index) + ": partition " + std::to_string(member) +
                           " is not addressable");
  const int64_t count = ElementCount(layout.local_dims);
  const size_t bytes = static_cast<size_t>(count) * DTypeByteSize(type.dtype);
  scratch.assign(static_cast<const uint8_t*>(shard), static_cast<const uint8_t*>(shard) + bytes);
  const auto& groups = layout.partial_groups;
  const auto at = std::find(groups.begin(), groups.end(), holder) - groups.begin();
  const auto first = at - at % layout.partial_group_size;
  for (auto k = first; k < first + layout.partial_group_size; ++k) {
    if (groups[k] == holder) continue;
    STABLERT_RETURN_IF_ERROR(AddInto(type.dtype, count, scratch.data(), by_partition[groups[k]]->inputs[index]->data()));
  }
  return static_cast<const void*>(scratch.data());
}

Status RunPartitionedRowMajor(const Executable& executable, const std::vector<DeviceRun>& runs,
                              const HostTransfers& host);

Status RunPartitioned(const Executable& executable, const std::vector<DeviceRun>& runs, const HostTransfers& host) {
  for (const DeviceRun& run : runs) STABLERT_RETURN_IF_ERROR(AwaitInputs(run));
  bool relayout = false;
  for (const DeviceRun& run : runs) relayout = relayout || NeedsRelayout(executable, run);
  if (!relayout) return RunPartitionedRowMajor(executable, runs, host);
  std::vector<DeviceRun> row_major;
  for (const DeviceRun& run : runs) {
    STABLERT_ASSIGN_OR_RETURN(DeviceRun converted, RowMajorRun(executable, run));
    row_major.push_back(std::move(converted));
  }
  STABLERT_RETURN_IF_ERROR(RunPartitionedRowMajor(executable, row_major, host));
  for (size_t d = 0; d < runs.size(); ++d) CopyOutputsToLayouts(executable, row_major[d], runs[d]);
  return OkStatus();
}

// RunPartitioned once every array is row-major and every input is ready.
Status RunPartitionedRowMajor(const Executable& executable, const std::vector<DeviceRun>& runs,
                              const HostTransfers& host) {
  const kernels::ffi::ScopedExecution ffi_scope(&runs.front().ffi);
  const auto& parameter_types = executable.parameter_types();
  const auto& result_types = executable.result_types();
  std::vector<std::shared_ptr<BufferStorage>> globals;
  std::vector<const void*> in;
  std::vector<const DeviceRun*> by_partition(executable.num_partitions(), nullptr);
  for (const DeviceRun& run : runs) by_partition[run.partition] = &run;
  std::vector<uint8_t> scratch;
  for (size_t i = 0; i < parameter_types.size(); ++i) {
    const passes::ShardLayout& layout = executable.parameter_shards()[i];
    if (layout.local_dims == parameter_types[i].dims && layout.partial_group_size <= 1) {
      in.push_back(runs.front().inputs[i]->data());  // replicated: any device's copy is the array
      continue;
    }
    STABLERT_ASSIGN_OR_RETURN(auto global, BufferStorage::Allocate(static_cast<size_t>(plan::ByteSize(parameter_types[i]))));
    size_t element_size = DTypeByteSize(parameter_types[i].dtype);
    for (const DeviceRun& run : runs) {
      if (layout.first_holder[run.partition] != run.partition) continue;
      STABLERT_ASSIGN_OR_RETURN(const void* block,
                                ParameterBlock(layout, parameter_types[i], i, run.partition, by_partition, scratch));
      CopyBox(block, layout.local_dims, Dims(layout.local_dims.size(), 0), global->data(), parameter_types[i].dims,
              layout.starts[run.partition], layout.local_dims, element_size);
    }
    in.push_back(global->data());
    globals.push_back(std::move(global));
  }
  std::vector<void*> out;
  for (const plan::TensorType& type : result_types) {
    STABLERT_ASSIGN_OR_RETURN(auto global, BufferStorage::Allocate(static_cast<size_t>(plan::ByteSize(type))));
    out.push_back(global->data());
    globals.push_back(std::move(global));
  }
  STABLERT_RETURN_IF_ERROR(ExecutePlan(executable.plan(), in, out, &host));
  for (size_t o = 0; o < result_types.size(); ++o) {
    const passes::ShardLayout& layout = executable.result_shards()[o];
    size_t element_size = DTypeByteSize(result_types[o].dtype);
    for (const DeviceRun& run : runs) {
      if (layout.partial_group_size > 1 && layout.partial_index[run.partition] != 0) {
        // An unreduced result is held summed: one partial per group carries it, the rest are zeros.
        std::memset(run.outputs[o]->data(), 0, static_cast<size_t>(ElementCount(layout.local_dims)) * element_size);
        continue;
      }
      CopyBox(out[o], result_types[o].dims, layout.starts[run.partition], run.outputs[o]->data(), layout.local_dims,
              Dims(layout.local_dims.size(), 0), layout.local_dims, element_size);
    }
  }
  return OkStatus();
}

// Runs the plan on one device's buffers once its inputs are ready (`partition` set for one
// partition's program).
Status RunOnDevice(const Executable& executable, const DeviceRun& run, const HostTransfers& host,
                   const PartitionContext* partition) {
  STABLERT_RETURN_IF_ERROR(AwaitInputs(run));
  std::optional<DeviceRun> row_major;
  if (NeedsRelayout(executable, run)) {
    STABLERT_ASSIGN_OR_RETURN(row_major, RowMajorRun(executable, run));
  }
  const DeviceRun& plan_run = row_major ? *row_major : run;
  std::vector<const void*> in;
  std::vector<void*> out;
  for (const auto& storage : plan_run.inputs) in.push_back(storage->data());
  for (const auto& storage : plan_run.outputs) out.push_back(storage->data());
  const trace::ScopedDevice traced_device(run.device->id());
  const int64_t start_ns = trace::Active() ? trace::NowNs() : 0;
  const kernels::ffi::ScopedExecution ffi_scope(&run.ffi);
  Status status = ExecutePlan(executable.plan(), in, out, &host, partition);
  if (status.ok() && row_major) CopyOutputsToLayouts(executable, *row_major, run);
  if (start_ns != 0)
    trace::Record({trace::EventKind::kExecution, run.device->id(), executable.name(), {}, start_ns, trace::NowNs()});
  return status;
}

// One execution of a program run per partition: each device runs the partition's plan on
// its own shards on its own queue, the partitions' collectives meeting in one communicator.
// The last partition to finish completes the execution (every output waits for all).
class PerPartitionRun {
 public:
  // `local_runs` of the `partitions` run here (all, unless the execution spans processes).
  PerPartitionRun(std::unique_ptr<collectives::Communicator> communicator, int partitions, int local_runs,
                  EventRef done)
      : communicator_(std::move(communicator)),
        statuses_(static_cast<size_t>(partitions)),
        remaining_(local_runs),
        done_(std::move(done)) {}

  void Run(const Executable& executable, DeviceRun& run, const HostTransfers& host) {
    const PartitionContext partition{static_cast<int>(run.partition), communicator_.get()};
    Status status = RunOnDevice(executable, run, host, &partition);
    ReleaseArrays(run);
    std::lock_guard<std::mutex> lock(mutex_);
    statuses_[static_cast<size_t>(run.partition)] = status;
    if (--remaining_ > 0) return;
    // A partition's own failure explains its peers' timeouts: report it first.
    Status first;
    for (const Status& s : statuses_)
      if (!s.ok() && s.code() != StatusCode::kDeadlineExceeded) {
        first = s;
        break;
      }
    if (first.ok())
      for (const Status& s : statuses_)
        if (!s.ok()) {
          first = s;
          break;
        }
    done_->Set(first).IgnoreError();
  }

 private:
  std::unique_ptr<collectives::Communicator> communicator_;
  std::mutex mutex_;
  std::vector<Status> statuses_;
  int remaining_;
  EventRef done_;
};

// Executions run per partition are queued on all their devices under this lock, so that
// every device's queue holds them in the same order (else two executions could each wait
// on a device busy with the other's collectives).
std::mutex& PerPartitionQueueingMutex() {
  static std::mutex mutex;
  return mutex;
}

// Runs `task` on `queue`: at once if the caller is the queue's own worker (a host callback
// of a program on this device runs another program on it: queued behind the calling
// program, it would wait for it forever), inline if allowed and the queue is idle, else
// queued.
void Dispatch(WorkQueue& queue, std::function<void()> task, bool may_run_inline) {
  if (queue.OnWorkerThread()) {
    task();
    return;
  }
  if (may_run_inline && queue.RunInlineIfIdle(task)) return;
  queue.Submit(std::move(task));
}

// Whether the steps of `sequence` (and their regions) may run on the caller's thread: kernel
// steps and control flow only (no host transfers, whose callbacks may need the caller; no
// collectives or manual regions, which wait for other devices). Counts the steps in `steps`.
bool RunsOnCallerThread(const plan::Sequence& sequence, size_t& steps) {
  for (const plan::Step& step : sequence.steps) {
    ++steps;
    switch (step.kind) {
      case plan::StepKind::kKernel:
        break;
      case plan::StepKind::kWhile: case plan::StepKind::kIf: case plan::StepKind::kCase:
        for (const plan::Sequence& region : step.regions)
          if (!RunsOnCallerThread(region, steps)) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

// Whether `plan` is small enough to run inline: few steps (loops included: a loop over a
// small state, such as a fori_loop on a scalar or a short vector, is what its thread handoff
// and the waiting caller slow down most) over little data.
bool IsSmallProgram(const plan::ExecutionPlan& plan) {
  constexpr size_t kMaxSteps = 64;
  constexpr int64_t kMaxBytes = 64 * 1024;
  size_t steps = 0;
  if (!RunsOnCallerThread(plan.body, steps) || steps > kMaxSteps) return false;
  int64_t bytes = plan.arena_size;
  for (const plan::TensorType& type : plan.parameter_types) bytes += plan::ByteSize(type);
  for (const plan::TensorType& type : plan.result_types) bytes += plan::ByteSize(type);
  for (const auto& constant : plan.constants) bytes += static_cast<int64_t>(constant.size());
  return bytes <= kMaxBytes;
}

// Which result takes which donated parameter's storage: from the plan's analysis when the
// plan writes the results (one device's program); any same-size pair when a partitioned
// program runs in the global view, whose per-device results are cut out after the plan ran.
std::vector<int64_t> ResultDonors(const plan::ExecutionPlan& plan, const std::vector<bool>& donatable,
                                  bool global_view, const std::vector<plan::TensorType>& local_parameters,
                                  const std::vector<plan::TensorType>& local_results) {
  if (!global_view) return plan::PlanDonation(plan, donatable);
  std::vector<int64_t> parameter_bytes, result_bytes;
  for (const auto& type : local_parameters) parameter_bytes.push_back(plan::ByteSize(type));
  for (const auto& type : local_results) result_bytes.push_back(plan::ByteSize(type));
  return plan::PlanDonation(plan, donatable, /*check_safety=*/false, parameter_bytes, result_bytes);
}

}  // namespace

Executable::Executable(std::string name, std::string program, std::string program_format, CompileOptions options,
                       plan::ExecutionPlan plan, std::vector<std::string> output_memory_kinds,
                       std::vector<std::string> parameter_memory_kinds, std::vector<bool> donatable_parameters,
                       std::vector<passes::ShardLayout> parameter_shards, std::vector<passes::ShardLayout> result_shards,
                       std::string shardy_op, std::optional<PerPartitionTypes> per_partition,
                       std::string partitioned_program, EntryLayouts layouts)
    : name_(std::move(name)),
      program_(std::move(program)),
      program_format_(std::move(program_format)),
      options_(std::move(options)),
      plan_(std::move(plan)),
      output_memory_kinds_(std::move(output_memory_kinds)),
      parameter_memory_kinds_(std::move(parameter_memory_kinds)),
      donatable_parameters_(std::move(donatable_parameters)),
      parameter_shards_(std::move(parameter_shards)),
      result_shards_(std::move(result_shards)),
      shardy_op_(std::move(shardy_op)),
      runs_per_partition_(per_partition.has_value()),
      partitioned_program_(std::move(partitioned_program)),
      parameter_types_(per_partition ? per_partition->parameters : plan_.parameter_types),
      result_types_(per_partition ? per_partition->results : plan_.result_types),
      local_parameter_types_(LocalTypes(parameter_types_, parameter_shards_)),
      local_result_types_(LocalTypes(result_types_, result_shards_)),
      parameter_op_shardings_(OpShardings(parameter_types_, parameter_shards_)),
      result_op_shardings_(OpShardings(result_types_, result_shards_)),
      fingerprint_(Fingerprint(program_, options_.serialized)),
      runs_inline_when_idle_(IsSmallProgram(plan_) && options_.num_partitions == 1),
      layouts_(std::move(layouts)) {
  layouts_.parameters.resize(local_parameter_types_.size());
  layouts_.results.resize(local_result_types_.size());
  result_donors_ = ResultDonors(plan_, donatable_parameters_, options_.num_partitions > 1 && !runs_per_partition_,
                                local_parameter_types_, local_result_types_);
}

Executable::MemoryStats Executable::memory_stats() const {
  MemoryStats stats;
  for (const auto& type : local_parameter_types_) stats.argument_bytes += plan::ByteSize(type);
  for (const auto& type : local_result_types_) stats.output_bytes += plan::ByteSize(type);
  for (size_t r = 0; r < result_donors_.size() && r < local_result_types_.size(); ++r)
    if (result_donors_[r] != plan::kNoDonor) stats.alias_bytes += plan::ByteSize(local_result_types_[r]);
  stats.temp_bytes = plan_.arena_size;
  if (options_.num_partitions > 1 && !runs_per_partition_) {
    // RunPartitioned: every sharded parameter and every result is assembled globally.
    for (size_t i = 0; i < parameter_types_.size(); ++i)
      if (i >= local_parameter_types_.size() || local_parameter_types_[i] != parameter_types_[i])
        stats.temp_bytes += plan::ByteSize(parameter_types_[i]);
    for (const auto& type : result_types_) stats.temp_bytes += plan::ByteSize(type);
  }
  for (const auto& constant : plan_.constants) stats.constant_bytes += static_cast<int64_t>(constant.size());
  return stats;
}


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
  // Which device runs each partition (of replica 0), across processes: from the compile
  // options' assignment, else the addressable devices (then all of them).
  const auto& assigned = options.device_assignment;
  if (!assigned.empty() && !assigned.front().empty())
    partition_devices_ = assigned.front();
  else
    for (const auto& id : device_assignment_.empty() ? std::vector<int64_t>{} : device_assignment_.front())
      partition_devices_.push_back(id);
  // Multi-process jobs: the key of this program's executions across processes. Not the
  // executable's fingerprint: the compile options it covers name the process.
  if (client_ && client_->process_count() > 1) {
    communicator_key_ = FingerprintToHex(Fingerprint64(executable_->program())) + ":" +
                        std::to_string(options.num_partitions);
    for (int64_t id : partition_devices_) communicator_key_ += "," + std::to_string(id);
  }
}

StatusOr<ExecuteResult> LoadedExecutable::Execute(const std::vector<std::vector<Buffer*>>& arguments,
                                                  Device* execute_device, const std::vector<int64_t>& non_donatable,
                                                  std::shared_ptr<const HostTransferHandler> host_transfers,
                                                  int launch_id,
                                                  std::shared_ptr<const kernels::ffi::UserData> ffi_user_data) {
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
  const auto& parameter_types = executable_->local_parameter_types();
  const auto& result_types = executable_->local_result_types();
  // A partitioned program runs once over all devices; otherwise each device runs alone.
  bool partitioned = executable_->num_partitions() > 1;
  if (partitioned && execute_device)
    return InvalidArgument("PJRT_LoadedExecutable_Execute: " + executable_->name() + " is partitioned over " +
                           std::to_string(executable_->num_partitions()) +
                           " devices and cannot run on a single execute_device");

  std::vector<DeviceRun> runs;
  std::vector<Buffer*> donated;
  const std::vector<int64_t>& donors = executable_->result_donors();
  std::vector<std::vector<bool>> donated_by_run;
  std::vector<std::vector<size_t>> reused_by_run;
  // Partitions on other processes: only a program run per partition can span processes.
  int64_t addressable_partitions = 0;
  for (const auto& row : device_assignment_)
    for (int64_t id : row)
      if (id >= 0) ++addressable_partitions;
  if (partitioned && addressable_partitions != executable_->num_partitions() * executable_->num_replicas() &&
      !executable_->runs_per_partition())
    return Unimplemented(executable_->name() + ": " + std::to_string(addressable_partitions) + " of its " +
                         std::to_string(executable_->num_partitions()) +
                         " partitions run in this process, but the program runs in the global view (the "
                         "partitioner is off, STABLERT_PARTITIONER=0, or could not give each partition its own "
                         "program; STABLERT_DEBUG_PARTITIONER=1 says why), which needs every partition in one "
                         "process");
  if (partitioned && executable_->runs_per_partition() &&
      static_cast<int64_t>(run_on.size()) != addressable_partitions)
    return Unimplemented(executable_->name() + ": " + std::to_string(run_on.size()) + " argument lists for its " +
                         std::to_string(addressable_partitions) + " partitions in this process; all must run");
  // XLA FFI's run id: the launch id the caller gave, else one of the process's own.
  static std::atomic<int64_t> next_run_id{1};
  const int64_t run_id = launch_id != 0 ? launch_id : next_run_id.fetch_add(1, std::memory_order_relaxed);
  ExecuteResult result;
  EventRef shared_done = partitioned ? Event::Create() : nullptr;
  for (size_t d = 0; d < run_on.size(); ++d) {
    const auto& args = arguments[d];
    if (args.size() != parameter_types.size())
      return InvalidArgument("PJRT_LoadedExecutable_Execute: " + executable_->name() + " takes " +
                             std::to_string(parameter_types.size()) + " arguments, got " + std::to_string(args.size()));
    DeviceRun run{run_on[d], partitioned ? logical_ids_[d].second : 0, {}, {}, {},
                  partitioned ? shared_done : Event::Create(), {},
                  kernels::ffi::ExecutionInfo{ffi_user_data, run_on[d]->local_hardware_id(), run_id}};
    std::vector<bool> donated_here(args.size(), false);
    for (size_t i = 0; i < args.size(); ++i) {
      const Buffer* buffer = args[i];
      const plan::TensorType& expected = parameter_types[i];
      if (!buffer) return InvalidArgument("PJRT_LoadedExecutable_Execute: argument " + std::to_string(i) + " is null");
      const bool token_argument = executable_->parameter_is_token(i) && buffer->dtype() == DType::kToken &&
                                  buffer->dims().empty();
      if (!token_argument && (buffer->dtype() != expected.dtype || buffer->dims() != expected.dims))
        return InvalidArgument("PJRT_LoadedExecutable_Execute: argument " + std::to_string(i) + " of " +
                               executable_->name() + " is " + std::string(DTypeName(buffer->dtype())) +
                               DimsToString(buffer->dims()) + ", expected " + plan::TensorTypeToString(expected));
      if (buffer->device() != run.device)
        return InvalidArgument("PJRT_LoadedExecutable_Execute: argument " + std::to_string(i) + " of argument list " +
                               std::to_string(d) + " of " + executable_->name() + " is on device " +
                               std::to_string(buffer->device()->id()) + ", but the list runs on device " +
                               std::to_string(run.device->id()) + "; copy it there first");
      STABLERT_ASSIGN_OR_RETURN(auto storage, buffer->storage("PJRT_LoadedExecutable_Execute"));
      if (!buffer->layout().empty()) {
        // Any layout is accepted: the run reads it through a row-major copy.
        run.input_layouts.resize(args.size());
        run.input_layouts[i] = buffer->layout();
      }
      run.inputs.push_back(std::move(storage));
      run.input_events.push_back(buffer->ready_event());
      bool donate = i < executable_->donatable_parameters().size() && executable_->donatable_parameters()[i] &&
                    std::find(non_donatable.begin(), non_donatable.end(), static_cast<int64_t>(i)) == non_donatable.end();
      if (donate) {
        donated.push_back(args[i]);
        donated_here[i] = true;
      }
    }
    for (Buffer* buffer : donated)
      if (std::count(args.begin(), args.end(), buffer) > 1)
        return InvalidArgument("PJRT_LoadedExecutable_Execute: a buffer donated to " + executable_->name() +
                               " is also passed as another argument; donate it only once");
    std::vector<std::unique_ptr<Buffer>> outputs;
    std::vector<size_t> reused;  // donated parameters whose storage an output took
    for (size_t o = 0; o < result_types.size(); ++o) {
      const plan::TensorType& type = result_types[o];
      const auto bytes = static_cast<size_t>(plan::ByteSize(type));
      MemorySpace* memory = run.device->memory_of_kind(executable_->output_memory_kinds()[o]);
      if (!memory) memory = run.device->default_memory();
      std::shared_ptr<BufferStorage> storage;
      const int64_t donor = o < donors.size() ? donors[o] : plan::kNoDonor;
      if (donor != plan::kNoDonor && donated_here[static_cast<size_t>(donor)]) {
        const Buffer& source = *args[static_cast<size_t>(donor)];
        const std::shared_ptr<BufferStorage>& candidate = run.inputs[static_cast<size_t>(donor)];
        // Called from this device's worker (a host callback of a running program), the run
        // starts at once: it must not wait for a reader that may be that very program.
        const bool runs_now = run.device->queue().OnWorkerThread();
        if (candidate->owned() && !candidate->shared() && candidate->size() == bytes && bytes > 0 && source.memory() == memory &&
            !source.HasExternalReferences() && !(runs_now && source.HasPendingUsages()))
          storage = candidate;
      }
      if (storage) {
        reused.push_back(static_cast<size_t>(donor));
      } else {
        STABLERT_ASSIGN_OR_RETURN(storage, BufferStorage::Allocate(bytes, run.device->memory_stats()));
      }
      if (executable_->result_is_token(o))
        outputs.push_back(std::make_unique<Buffer>(DType::kToken, Dims{}, run.device, memory, storage, run.done));
      else
        outputs.push_back(std::make_unique<Buffer>(type.dtype, type.dims, run.device, memory, storage, run.done,
                                                   executable_->result_layouts()[o]));
      run.outputs.push_back(std::move(storage));
    }
    donated_by_run.push_back(std::move(donated_here));
    reused_by_run.push_back(std::move(reused));
    result.outputs.push_back(std::move(outputs));
    result.device_complete.push_back(run.done);
    runs.push_back(std::move(run));
  }

  std::chrono::milliseconds timeout{0};
  if (partitioned && executable_->runs_per_partition()) {
    STABLERT_ASSIGN_OR_RETURN(timeout, env::CollectiveTimeout());
  }
  // Every check passed: the runs will be queued. A run writing into donated storage waits
  // for that storage's earlier readers; later donations of the other arguments wait for
  // this run.
  for (size_t d = 0; d < runs.size(); ++d) {
    for (size_t p : reused_by_run[d])
      for (EventRef& usage : arguments[d][p]->TakeUsages()) runs[d].usages.push_back(std::move(usage));
    for (size_t i = 0; i < arguments[d].size(); ++i)
      if (!donated_by_run[d][i]) arguments[d][i]->AddUsage(runs[d].done);
  }
  // Donated inputs are consumed now; the queued runs hold their bytes until they finish.
  for (Buffer* buffer : donated) buffer->Delete();
  std::shared_ptr<const Executable> executable = executable_;
  if (partitioned) {
    // Partition p's host transfers are those of the device that runs partition p.
    HostTransfers host{host_transfers.get(), std::vector<int>(static_cast<size_t>(executable->num_partitions()), 0), 0};
    for (size_t d = 0; d < runs.size(); ++d) host.device_of_partition[static_cast<size_t>(runs[d].partition)] = static_cast<int>(d);
    if (executable->runs_per_partition()) {
      auto shared_host = std::make_shared<const HostTransfers>(std::move(host));
      std::lock_guard<std::mutex> order(PerPartitionQueueingMutex());
      STABLERT_ASSIGN_OR_RETURN(std::unique_ptr<collectives::Communicator> communicator,
                                client_->NewCommunicator(communicator_key_, partition_devices_, timeout));
      auto state = std::make_shared<PerPartitionRun>(std::move(communicator),
                                                     static_cast<int>(executable->num_partitions()),
                                                     static_cast<int>(runs.size()), shared_done);
      for (DeviceRun& run : runs) {
        WorkQueue& queue = run.device->queue();
        Dispatch(queue, [executable, state, run = std::move(run), host_transfers, shared_host]() mutable {
          state->Run(*executable, run, *shared_host);
        }, /*may_run_inline=*/false);
      }
      return result;
    }
    Device* first = runs.front().device;
    Dispatch(first->queue(), [executable, runs = std::move(runs), shared_done, host_transfers, host = std::move(host)]() mutable {
      Status status = RunPartitioned(*executable, runs, host);
      for (DeviceRun& run : runs) ReleaseArrays(run);
      shared_done->Set(status).IgnoreError();
    }, /*may_run_inline=*/false);
    return result;
  }
  for (size_t d = 0; d < runs.size(); ++d) {
    DeviceRun& run = runs[d];
    const bool inputs_ready = std::all_of(run.input_events.begin(), run.input_events.end(),
                                          [](const EventRef& event) { return event->IsReady(); });
    WorkQueue& queue = run.device->queue();
    HostTransfers host{host_transfers.get(), {}, static_cast<int>(d)};
    std::shared_ptr<PendingLaunches::Launch> launch = run.device->pending_launches().Add(launch_id);
    std::function<void()> task = [executable, run = std::move(run), host_transfers, host = std::move(host),
                                  launch = std::move(launch)]() mutable {
      Status poison = run.device->pending_launches().Start(launch);
      Status status = poison.ok() ? RunOnDevice(*executable, run, host, nullptr) : poison;
      ReleaseArrays(run);
      run.done->Set(status).IgnoreError();
    };
    Dispatch(queue, std::move(task), executable->runs_inline_when_idle() && inputs_ready);
  }
  return result;
}

}  // namespace stablert::runtime
