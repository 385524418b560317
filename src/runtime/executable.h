// Executables: a compiled program (Executable) and its binding to devices of a client
// (LoadedExecutable).
//
// An Executable is immutable after compilation and shared (shared_ptr) between the loaded
// executable and any PJRT_Executable handles. Execute() is thread-safe and asynchronous:
// it validates the arguments, allocates the outputs, queues the work on each device's
// queue and returns at once; output buffers' ready events fire when the work is done (or
// carry its error).
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "kernels/ffi_execution.h"
#include "plan/plan.h"
#include "passes/sharding/sharding.h"
#include "runtime/array_layout.h"
#include "runtime/buffer.h"
#include "runtime/compile_options.h"
#include "runtime/device.h"
#include "runtime/host_transfer.h"

namespace stablert::runtime {

class Client;

// The global (unpartitioned) parameter and result types of a program whose plan is the
// program of one partition (passes/sharding/partition.h): the plan runs once per partition.
struct PerPartitionTypes {
  std::vector<plan::TensorType> parameters;
  std::vector<plan::TensorType> results;
};

class Executable {
 public:
  // `donatable_parameters[i]`: the program lets parameter i be donated (its buffer is
  // consumed by the execution), from the `tf.aliasing_output` / `jax.buffer_donor`
  // argument attributes.
  // `parameter_shards`/`result_shards`: where each partition's shard of every parameter and
  // result sits in the global array (one entry per parameter/result; for a program on one
  // partition, the trivial layout).
  Executable(std::string name, std::string program, std::string program_format, CompileOptions options,
             plan::ExecutionPlan plan, std::vector<std::string> output_memory_kinds,
             std::vector<std::string> parameter_memory_kinds, std::vector<bool> donatable_parameters,
             std::vector<passes::ShardLayout> parameter_shards, std::vector<passes::ShardLayout> result_shards,
             std::string shardy_op = {}, std::optional<PerPartitionTypes> per_partition = std::nullopt,
             std::string partitioned_program = {}, EntryLayouts layouts = {});
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  const std::string& name() const { return name_; }
  const std::string& program() const { return program_; }
  const std::string& program_format() const { return program_format_; }
  const CompileOptions& options() const { return options_; }
  const plan::ExecutionPlan& plan() const { return plan_; }
  int64_t num_replicas() const { return options_.num_replicas; }
  int64_t num_partitions() const { return options_.num_partitions; }
  // Global (unpartitioned) types, as the program states them.
  const std::vector<plan::TensorType>& parameter_types() const { return parameter_types_; }
  const std::vector<plan::TensorType>& result_types() const { return result_types_; }
  // Whether the plan is one partition's program, run once per partition with collectives
  // between them (else a partitioned program runs in the global view).
  bool runs_per_partition() const { return runs_per_partition_; }
  // For a program run per partition: the partitioned entry function as MLIR text (what
  // one partition runs, with its collectives), if it could be printed; else empty.
  const std::string& partitioned_program() const { return partitioned_program_; }
  // Per-device types: the shard each device passes or receives.
  const std::vector<plan::TensorType>& local_parameter_types() const { return local_parameter_types_; }
  const std::vector<plan::TensorType>& local_result_types() const { return local_result_types_; }
  const std::vector<passes::ShardLayout>& parameter_shards() const { return parameter_shards_; }
  const std::vector<passes::ShardLayout>& result_shards() const { return result_shards_; }
  // The shard layouts as serialized xla.OpSharding protos.
  const std::vector<std::string>& parameter_op_shardings() const { return parameter_op_shardings_; }
  const std::vector<std::string>& result_op_shardings() const { return result_op_shardings_; }
  const std::vector<std::string>& output_memory_kinds() const { return output_memory_kinds_; }
  const std::vector<std::string>& parameter_memory_kinds() const { return parameter_memory_kinds_; }
  const std::vector<bool>& donatable_parameters() const { return donatable_parameters_; }
  // The major_to_minor layout of each parameter and result (per-device shards), empty for
  // row-major (runtime/array_layout.h). Executions accept arguments in any layout (those not
  // row-major are read through a row-major copy) and give each result in its layout.
  const std::vector<MajorToMinor>& parameter_layouts() const { return layouts_.parameters; }
  const std::vector<MajorToMinor>& result_layouts() const { return layouts_.results; }
  // Whether parameter i / result o is a `!stablehlo.token`: results are then buffers of
  // type token and rank 0 holding no bytes (as XLA's are), and a token parameter takes such
  // a buffer or the pred[0] array JAX passes for tokens of ordered effects.
  bool parameter_is_token(size_t i) const {
    return i < layouts_.token_parameters.size() && layouts_.token_parameters[i];
  }
  bool result_is_token(size_t o) const { return o < layouts_.token_results.size() && layouts_.token_results[o]; }
  // For every result, the donatable parameter whose storage an execution hands to it when
  // that parameter is donated, or plan::kNoDonor (plan/donation.h; per-device shards).
  const std::vector<int64_t>& result_donors() const { return result_donors_; }
  // What the executable needs besides its arguments, per device (PJRT's compiled memory
  // statistics): argument and output bytes (one device's shards), the output bytes written
  // into donated arguments' storage, temporaries (the plan's arena, plus the global arrays
  // a partitioned program run in the global view assembles) and generated code (none: the
  // plan is interpreted; its constants are counted apart).
  struct MemoryStats {
    int64_t argument_bytes = 0;
    int64_t output_bytes = 0;
    int64_t alias_bytes = 0;
    int64_t temp_bytes = 0;
    int64_t generated_code_bytes = 0;
    int64_t constant_bytes = 0;
  };
  MemoryStats memory_stats() const;
  // Stable across processes for the same program and options.
  const std::string& fingerprint() const { return fingerprint_; }
  // The first Shardy op of the program ("sdy.manual_computation"), empty if none: frameworks
  // cannot turn such a program into HLO (PJRT_Executable_OptimizedProgram says so).
  const std::string& shardy_op() const { return shardy_op_; }
  // Small programs (kernel steps and control flow, at most 64 steps over at most 64 KiB of
  // data, no host transfers or collectives) run on the caller's thread when their device is
  // idle and their inputs are ready: a thread handoff, and a caller waiting on the core's
  // other hardware thread, would cost more than the work. A long loop over little data then
  // returns when it is done.
  bool runs_inline_when_idle() const { return runs_inline_when_idle_; }

 private:
  std::string name_;
  std::string program_;
  std::string program_format_;
  CompileOptions options_;
  plan::ExecutionPlan plan_;
  std::vector<std::string> output_memory_kinds_;
  std::vector<std::string> parameter_memory_kinds_;
  std::vector<bool> donatable_parameters_;
  std::vector<int64_t> result_donors_;
  std::vector<passes::ShardLayout> parameter_shards_;
  std::vector<passes::ShardLayout> result_shards_;
  std::string shardy_op_;
  bool runs_per_partition_;
  std::string partitioned_program_;
  std::vector<plan::TensorType> parameter_types_;
  std::vector<plan::TensorType> result_types_;
  std::vector<plan::TensorType> local_parameter_types_;
  std::vector<plan::TensorType> local_result_types_;
  std::vector<std::string> parameter_op_shardings_;
  std::vector<std::string> result_op_shardings_;
  std::string fingerprint_;
  bool runs_inline_when_idle_;
  EntryLayouts layouts_;
};

struct ExecuteResult {
  // outputs[device_index][output_index]
  std::vector<std::vector<std::unique_ptr<Buffer>>> outputs;
  // One per device: fires when that device's execution has finished.
  std::vector<EventRef> device_complete;
};

class LoadedExecutable {
 public:
  // `devices[i]` runs the computation with logical id `logical_ids[i]` = (replica, partition).
  LoadedExecutable(Client* client, std::shared_ptr<const Executable> executable, std::vector<Device*> devices,
                   std::vector<std::pair<int, int>> logical_ids);
  LoadedExecutable(const LoadedExecutable&) = delete;
  LoadedExecutable& operator=(const LoadedExecutable&) = delete;

  Client* client() const { return client_; }
  const std::shared_ptr<const Executable>& executable() const { return executable_; }
  const std::vector<Device*>& addressable_devices() const { return devices_; }
  const std::vector<std::pair<int, int>>& logical_ids() const { return logical_ids_; }
  // assignment[replica][partition] = device id.
  const std::vector<std::vector<int64_t>>& device_assignment() const { return device_assignment_; }

  // arguments[device_index][arg_index]. With `execute_device` null there must be one list per
  // addressable device, in addressable_devices() order; otherwise exactly one list, run on
  // that device. Errors (wrong counts, types, deleted buffers, a donated buffer passed
  // twice) are returned before any work is queued. Donatable parameters not listed in
  // `non_donatable` are consumed: their buffers are deleted once the work is queued (the
  // execution keeps the bytes alive until it is done). A consumed buffer's storage becomes
  // the storage of the result Executable::result_donors() pairs it with, instead of a new
  // allocation, when it is owned (not borrowed host memory), free of external references,
  // of the result's byte size and in the result's memory space; the execution then waits
  // for the buffer's earlier usages (Buffer::AddUsage) before it runs. The program's host transfers go to
  // `host_transfers` (shared by the queued work until every device is done), the device
  // index it is given being the argument list's index; without one they fail the execution.
  // Each device's part of an unpartitioned execution waits in the device's
  // pending_launches() under `launch_id` until it starts; poisoned there, it fails its
  // outputs with the poison instead of running. (A partitioned execution's parts must all
  // run for its collectives, so they are never registered.)
  // `ffi_user_data` (may be null): the user data XLA FFI handlers of this execution find
  // (kernels/ffi_execution.h), kept alive by the queued work until every device is done.
  StatusOr<ExecuteResult> Execute(const std::vector<std::vector<Buffer*>>& arguments, Device* execute_device,
                                  const std::vector<int64_t>& non_donatable = {},
                                  std::shared_ptr<const HostTransferHandler> host_transfers = nullptr,
                                  int launch_id = 0,
                                  std::shared_ptr<const kernels::ffi::UserData> ffi_user_data = nullptr);

  void Delete() { deleted_ = true; }
  bool IsDeleted() const { return deleted_; }

 private:
  Client* client_;
  std::shared_ptr<const Executable> executable_;
  std::vector<Device*> devices_;
  std::vector<std::pair<int, int>> logical_ids_;
  std::vector<std::vector<int64_t>> device_assignment_;
  // The device of each partition, this process's or another's; and the key of this
  // executable's executions in Client::NewCommunicator.
  std::vector<int64_t> partition_devices_;
  std::string communicator_key_;
  std::atomic<bool> deleted_{false};
};

}  // namespace stablert::runtime
