// Compiling programs on a plugin and running them.
//
// Ownership: a LoadedExecutable owns its PJRT_LoadedExecutable and holds its Client; output
// Buffers of Execute hold the Client too. Failures are Status values naming the PJRT
// function. Thread-safety: Execute may be called from several threads at once (PJRT
// executables are thread-safe).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "host/buffer.h"
#include "host/client.h"
#include "host/future.h"

namespace stablert::host {

struct Program {
  std::string code;
  // "mlir" (StableHLO bytecode or text), "hlo", "hlo_with_config": as the plugin accepts.
  std::string format = "mlir";
};

struct CompileOptions {
  int num_replicas = 1;
  int num_partitions = 1;
  // Device ids in replica-major order (num_replicas * num_partitions of them); empty: the
  // first addressable devices of the client.
  std::vector<int> device_ids;
  // Programs whose shardings are Shardy's (sdy.mesh, sdy.sharding), as JAX lowers them by
  // default: XLA partitions them only with this set (ExecutableBuildOptions field 19).
  bool use_shardy_partitioner = false;
};
// A serialized xla.CompileOptionsProto for `options` (what PJRT_Client_Compile reads).
std::string SerializeCompileOptions(const CompileOptions& options);

struct ExecuteResult {
  // outputs[d][i]: output i on the d-th device of the call.
  std::vector<std::vector<Buffer>> outputs;
  // Completion of each device's run.
  std::vector<Future> done;
};

class LoadedExecutable {
 public:
  static StatusOr<std::shared_ptr<LoadedExecutable>> Compile(const std::shared_ptr<Client>& client,
                                                             const Program& program,
                                                             const CompileOptions& options = {});
  ~LoadedExecutable();
  LoadedExecutable(const LoadedExecutable&) = delete;
  LoadedExecutable& operator=(const LoadedExecutable&) = delete;

  PJRT_LoadedExecutable* handle() const { return executable_; }
  const std::string& name() const { return name_; }
  size_t num_outputs() const { return num_outputs_; }
  // The devices this executable runs on, in argument-list order.
  const std::vector<Device>& devices() const { return devices_; }

  // Runs on every addressable device of the executable: `arguments[d]` are the d-th device's
  // arguments. Inputs are not donated unless the program asks and the index is not listed in
  // `non_donatable`.
  StatusOr<ExecuteResult> Execute(const std::vector<std::vector<const Buffer*>>& arguments,
                                  const std::vector<int64_t>& non_donatable = {}) const;

  // PJRT_Executable_Serialize's bytes.
  StatusOr<std::string> Serialize() const;

  // How the compiled executable lays each output out over its partitions: one serialized
  // xla.OpSharding per output, as the plugin's compiler decided (a host must not guess: a
  // result the program leaves unannotated is placed by the compiler's own propagation).
  // Read from the plugin's Shardings extension (PJRT 0.91 on) when it answers for every
  // output, else from PJRT_Executable_OptimizedProgram's HloModuleProto
  // (spmd_output_sharding: a TUPLE sharding with one entry per output, or the single
  // output's). nullopt when the plugin offers neither or its program states no output
  // sharding (an unpartitioned program); errors name the PJRT function or the malformed proto.
  StatusOr<std::optional<std::vector<std::string>>> OutputShardings() const;

 private:
  LoadedExecutable(std::shared_ptr<Client> client, PJRT_LoadedExecutable* executable)
      : client_(std::move(client)), executable_(executable) {}
  Status ReadFacts();

  std::shared_ptr<Client> client_;
  PJRT_LoadedExecutable* executable_ = nullptr;
  std::string name_;
  size_t num_outputs_ = 0;
  std::vector<Device> devices_;
};

}  // namespace stablert::host
