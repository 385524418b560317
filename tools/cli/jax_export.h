// Reading a `jax.export` artifact: the bytes `jax.export.export(jax.jit(f))(*args).serialize()`
// returns, a FlatBuffer whose schema is JAX's jax/_src/export/serialization.fbs (root table
// `Exported`). This reader takes what running the program needs — the StableHLO module
// (bytecode), the number of devices, the platforms, the argument and result types and their
// named shardings (mesh axes and partition specs) — and ignores the rest (pytrees, effects,
// the VJP). It reads the schema up to its version 11: shardings and types from the shared
// tables of version 10+ when present, else the per-argument lists of older ones. (JAX stores
// 3 in `serialization_version` whatever schema it writes, so that older readers accept the
// artifact; this reader goes by the fields present and refuses values above 11.)
//
// Every offset is bounds-checked: a truncated or corrupt artifact is InvalidArgument naming the
// field, never a read past the buffer. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::cli {

struct ExportedArray {
  PJRT_Buffer_Type type = PJRT_Buffer_Type_INVALID;
  std::vector<std::string> shape;  // dimension sizes as JAX writes them (symbolic ones as text)
};

struct ExportedSharding {
  std::vector<std::pair<std::string, int64_t>> mesh;  // axis name, size
  std::vector<std::vector<std::string>> spec;         // per dimension, the mesh axes splitting it
  // "P('x', None) on mesh {x: 2}".
  std::string ToString() const;
};

struct ExportedArtifact {
  int serialization_version = 0;
  std::string function_name;
  std::vector<std::string> platforms;
  int64_t num_devices = 1;
  std::string module;  // StableHLO bytecode
  std::vector<ExportedArray> inputs, outputs;
  // One per input / output; nullopt when the export left it unspecified.
  std::vector<std::optional<ExportedSharding>> input_shardings, output_shardings;
  std::vector<int> module_kept_var_idx;
  int calling_convention_version = 0;
};

// Whether `bytes` look like a jax.export artifact (a FlatBuffer whose Exported table holds a
// module), cheaply: used to tell artifacts from MLIR bytecode and text.
bool LooksLikeJaxExport(std::string_view bytes);

StatusOr<ExportedArtifact> ReadJaxExport(std::string_view bytes);

}  // namespace stablert::cli
