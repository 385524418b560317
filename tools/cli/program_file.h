// A program file for `stablert run/compare/bench`, and the inputs it is run with.
//
// A file holds StableHLO as MLIR bytecode (a portable artifact, e.g. a dumped input.mlirbc
// or `jax.jit(f).lower(x).compiler_ir("stablehlo")` serialized), as MLIR text (passed to the
// plugin unchanged, format "mlir"), or a `jax.export` artifact (jax_export.h: its module,
// devices and shardings). The signature (argument and result types, replicas, partitions,
// the shardings of the entry function's arguments and results) is read with StableRT's own
// reader, from bytecode and text alike; text that reader refuses still goes to the plugin,
// and then needs its inputs given with --in and runs on one device. Inputs are global arrays: the given .npy files, or generated: zeros, or
// pseudo-random values from a seed (the same on every run and machine, so two plugins see the
// same inputs); a multi-device program gets each device's shard of them. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "host/buffer.h"
#include "host/executable.h"
#include "jax_export.h"
#include "passes/sharding/sharding.h"

namespace stablert::cli {

struct ArgumentSpec {
  PJRT_Buffer_Type type = PJRT_Buffer_Type_INVALID;
  std::vector<int64_t> dims;
};

struct ProgramFile {
  host::Program program;
  std::string kind;            // "bytecode", "text" or "jax.export"
  bool has_signature = false;  // arguments, results and partitions are known
  std::vector<ArgumentSpec> arguments;  // global shapes
  std::vector<ArgumentSpec> results;    // global shapes
  int num_partitions = 1;
  int num_replicas = 1;
  bool uses_shardy = false;  // the module declares sdy meshes / shardings
  // With several partitions: where each partition's shard of an argument / result lies.
  std::vector<passes::ShardLayout> argument_layouts, result_layouts;
  // Set for a jax.export artifact.
  std::optional<ExportedArtifact> exported;
  int num_devices() const { return num_partitions * num_replicas; }
};

StatusOr<ProgramFile> LoadProgramFile(const std::string& path);
// The same for a program already in memory; `path` names it in messages.
StatusOr<ProgramFile> LoadProgram(std::string bytes, const std::string& path);

enum class InputKind { kRandom, kZeros };
// "random" / "zeros"; InvalidArgument otherwise.
StatusOr<InputKind> ParseInputKind(const std::string& text);

// The program's inputs: read from `npy_paths` if any (one per argument, checked against the
// signature when known), else generated.
StatusOr<std::vector<host::Literal>> MakeInputs(const ProgramFile& file, const std::vector<std::string>& npy_paths,
                                                InputKind kind, uint64_t seed);

// The block of `global` that `layout` gives `partition` (dense row-major).
StatusOr<host::Literal> ShardOf(const host::Literal& global, const passes::ShardLayout& layout, int partition);
// Writes `shard` (partition `partition`'s block) into `global` (sized already).
Status PlaceShard(const host::Literal& shard, const passes::ShardLayout& layout, int partition, host::Literal& global);

// A few lines on an artifact: function, devices, platforms, each input's type and sharding.
std::string DescribeArtifact(const ExportedArtifact& artifact);

// "f32[2,3]".
std::string DescribeLiteral(const host::Literal& literal);

}  // namespace stablert::cli
