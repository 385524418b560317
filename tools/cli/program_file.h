// A program file for `stablert run/compare/bench`, and the inputs it is run with.
//
// A file holds StableHLO as MLIR bytecode (a portable artifact, e.g. a dumped input.mlirbc
// or `jax.jit(f).lower(x).compiler_ir("stablehlo")` serialized) or as MLIR text. The
// signature (argument types, partitions) is read with StableRT's own reader when the
// program is bytecode; text programs need their inputs given with --in. Inputs are the given
// .npy files, or generated: zeros, or pseudo-random values from a seed (the same on every
// run and machine, so two plugins see the same inputs). Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "host/buffer.h"
#include "host/executable.h"

namespace stablert::cli {

struct ArgumentSpec {
  PJRT_Buffer_Type type = PJRT_Buffer_Type_INVALID;
  std::vector<int64_t> dims;
};

struct ProgramFile {
  host::Program program;
  bool has_signature = false;  // arguments and partitions are known
  std::vector<ArgumentSpec> arguments;
  int num_partitions = 1;
  int num_replicas = 1;
};

StatusOr<ProgramFile> LoadProgramFile(const std::string& path);

enum class InputKind { kRandom, kZeros };
// "random" / "zeros"; InvalidArgument otherwise.
StatusOr<InputKind> ParseInputKind(const std::string& text);

// The program's inputs: read from `npy_paths` if any (one per argument, checked against the
// signature when known), else generated.
StatusOr<std::vector<host::Literal>> MakeInputs(const ProgramFile& file, const std::vector<std::string>& npy_paths,
                                                InputKind kind, uint64_t seed);

// "f32[2,3]".
std::string DescribeLiteral(const host::Literal& literal);

}  // namespace stablert::cli
