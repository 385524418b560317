// Client: the root runtime object — devices, memory spaces, host transfers and compilation.
//
// Created from ClientOptions (PJRT create options and STABLERT_* environment variables).
// Owns its devices and memory spaces; buffers and executables refer to them and must not
// outlive the client. All methods are thread-safe.
#pragma once

#include <cstdint>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "collectives/communicator.h"
#include "collectives/tcp_transport.h"
#include "runtime/buffer.h"
#include "runtime/cross_host_transfer.h"
#include "runtime/device.h"
#include "runtime/executable.h"
#include "runtime/process_info.h"
#include "runtime/topology_exchange.h"

namespace stablert::runtime {

inline constexpr char kPlatformName[] = "stablert";

class CompileTimer;
class CompileDump;

// The settings a compilation reads from the environment (compile.cc).
struct CompileSettings {
  bool partitioner = true;         // STABLERT_PARTITIONER
  bool debug_partitioner = false;  // STABLERT_DEBUG_PARTITIONER
  std::optional<env::DumpDir> dump_dir;
  // What the dump holds of the program as XLA HLO (compile options xla_dump_hlo_as_text and
  // xla_dump_hlo_as_proto; text unless only the proto is asked for, as XLA decides).
  bool dump_hlo_text = true;
  bool dump_hlo_proto = false;
};

struct ClientOptions {
  int device_count = 1;
  int process_index = 0;
  int process_count = 1;

  using Value = std::variant<std::string, int64_t, std::vector<int64_t>, float, bool>;
  // Applies create options (by name) over the environment defaults. Unknown names and
  // values of the wrong kind are InvalidArgument naming the option.
  static StatusOr<ClientOptions> FromNamedValues(const std::vector<std::pair<std::string, Value>>& values);
};

// How BufferFromHostBuffer may use the caller's memory (PJRT_HostBufferSemantics).
enum class HostBufferSemantics {
  kImmutableOnlyDuringCall = 0,
  kImmutableUntilTransferCompletes = 1,
  kImmutableZeroCopy = 2,
  kMutableZeroCopy = 3,
};

struct HostBufferResult {
  std::unique_ptr<Buffer> buffer;
  // Fires when the caller may free or modify the host memory.
  EventRef done_with_host_buffer;
};

class Client {
 public:
  // With options.process_count > 1, `store` (the framework's key-value store) carries the
  // topology exchange (runtime/topology_exchange.h) and the collective transport's addresses;
  // the client then lists every process's devices (only its own addressable) and connects
  // to every other process. Creation fails, naming the process, if one does not take part
  // within STABLERT_COLLECTIVE_TIMEOUT_SECONDS (at least 60 s).
  static StatusOr<std::unique_ptr<Client>> Create(const ClientOptions& options,
                                                  const KeyValueStore* store = nullptr);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  std::string_view platform_name() const { return kPlatformName; }
  const std::string& platform_version() const { return platform_version_; }
  int process_index() const { return options_.process_index; }
  int process_count() const { return options_.process_count; }
  // What the framework last reported about the job's processes (UpdateGlobalProcessInfo).
  GlobalProcessInfo& global_process_info() { return global_process_info_; }
  const std::vector<Device*>& devices() const { return devices_; }
  const std::vector<Device*>& addressable_devices() const { return addressable_devices_; }
  const std::vector<MemorySpace*>& memories() const { return memory_pointers_; }
  StatusOr<Device*> LookupDevice(int64_t id) const;
  StatusOr<Device*> LookupAddressableDevice(int64_t local_hardware_id) const;
  // assignment[replica][partition], filled with distinct devices in order.
  StatusOr<std::vector<std::vector<int64_t>>> DefaultDeviceAssignment(int num_replicas, int num_partitions) const;

  // Host arrays at least this aligned are borrowed under zero-copy semantics: malloc's (and
  // so NumPy's) alignment, and the largest element size. Kernels load their operands with
  // unaligned vector loads, so nothing needs more; asking for 64 made a NumPy array's
  // borrowing depend on where its allocator happened to put it (docs/decisions.md).
  static constexpr uintptr_t kZeroCopyAlignment = 16;

  // Copies (or, where semantics and alignment allow, borrows) a host array into a buffer in
  // `memory`. `byte_strides` empty means dense row-major. `layout`: the major_to_minor order
  // the buffer keeps its bytes in (runtime/array_layout.h; empty: row-major); the copy puts
  // them in that order, and a host array whose strides already are that order is borrowed
  // like a row-major one. InvalidArgument if `layout` is not a permutation of the dims.
  StatusOr<HostBufferResult> BufferFromHostBuffer(const void* data, DType dtype, const Dims& dims,
                                                  const std::vector<int64_t>& byte_strides,
                                                  HostBufferSemantics semantics, MemorySpace* memory,
                                                  const std::vector<int64_t>& layout = {});
  // Copies `buffer` into `memory` (of any device); the new buffer is ready once the source is.
  // A copy into memory of the same kind keeps the buffer's layout (its bytes as they are); a
  // copy into another kind (device to host memory or back) is row-major, as XLA's CPU client
  // gives it, converted with the transpose kernel.
  StatusOr<std::unique_ptr<Buffer>> CopyBuffer(const Buffer& buffer, MemorySpace* memory);
  // A buffer whose ready event carries `error`.
  std::unique_ptr<Buffer> CreateErrorBuffer(Status error, DType dtype, const Dims& dims, MemorySpace* memory);
  // A buffer with uninitialized contents, ready at once, its bytes in major_to_minor order
  // `layout` (empty: row-major). InvalidArgument if `layout` is not a permutation of the dims.
  StatusOr<std::unique_ptr<Buffer>> CreateUninitializedBuffer(DType dtype, const Dims& dims, MemorySpace* memory,
                                                              const std::vector<int64_t>& layout = {});

  // Compiles `program` ("mlir" format: a StableHLO portable artifact in MLIR bytecode).
  // Reads the compile-time settings (STABLERT_PARTITIONER, STABLERT_DEBUG_PARTITIONER, the
  // dump directory) anew; with a dump directory, writes what it did there (runtime/dump.h).
  StatusOr<std::unique_ptr<LoadedExecutable>> Compile(std::string_view program, std::string_view format,
                                                      std::string_view compile_options);
  // Binds an already compiled executable to devices per its compile options.
  StatusOr<std::unique_ptr<LoadedExecutable>> Load(std::shared_ptr<const Executable> executable);

  // The communicator of one execution of a program run per partition, partition p running on
  // device `partition_devices[p]`: in-process when every partition is on this process, else
  // cross-process with a run id that is the same on every process for the n-th execution of
  // `program_key` (the executable's fingerprint and device assignment): frameworks launch
  // the same programs in the same order on every process. Call in launch order.
  // Copies between this process's devices and other processes' (runtime/cross_host_transfer.h);
  // null in a single-process job.
  CrossHostTransfers* cross_host_transfers() const { return cross_host_.get(); }

  StatusOr<std::unique_ptr<collectives::Communicator>> NewCommunicator(const std::string& program_key,
                                                                       const std::vector<int64_t>& partition_devices,
                                                                       std::chrono::milliseconds timeout);

 private:
  explicit Client(const ClientOptions& options);
  StatusOr<std::unique_ptr<LoadedExecutable>> CompileMlir(std::string_view program, std::string_view format,
                                                          CompileOptions options, const CompileSettings& settings,
                                                          CompileTimer& timer, CompileDump& dump, std::string& name);

  ClientOptions options_;
  std::string platform_version_;
  GlobalProcessInfo global_process_info_;
  // Multi-process jobs only: the connections to the other processes (declared before the
  // devices, so their queues drain before it closes), and how many executions of each
  // program key were launched.
  std::unique_ptr<collectives::TcpTransport> transport_;
  // Over transport_ (declared after it: its queued transfers finish before it closes).
  std::unique_ptr<CrossHostTransfers> cross_host_;
  std::mutex runs_mutex_;
  std::map<std::string, uint64_t> runs_;
  std::vector<std::unique_ptr<Device>> device_storage_;
  std::vector<std::unique_ptr<MemorySpace>> memory_storage_;
  std::vector<Device*> devices_;
  std::vector<Device*> addressable_devices_;
  std::vector<MemorySpace*> memory_pointers_;
};

}  // namespace stablert::runtime
