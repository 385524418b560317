// An XLA HLO module as plain data: what hlo/from_ir.h builds from StableRT's IR and what
// hlo/proto.h (xla.HloModuleProto bytes) and hlo/text.h (HLO text) write out.
//
// The model mirrors HloModuleProto: a module of computations, each a list of instructions
// in dependency order (operands before users) whose operands and called computations are
// referred to by id. Only the fields StableRT's ops need are modelled; an unset optional
// field is absent from both outputs. Plain values: copyable, no invariants enforced here
// (from_ir.h builds well-formed modules). Thread-safe for concurrent reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "ir/attribute.h"

namespace stablert::hlo {

// An array (dtype and dims, with XLA's default row-major layout), a token, or a tuple.
struct Shape {
  enum class Kind : uint8_t { kArray, kToken, kTuple };
  Kind kind = Kind::kArray;
  DType dtype = DType::kInvalid;  // kArray only
  Dims dims;                      // kArray only
  std::vector<Shape> elements;    // kTuple only
  // kArray only: the layout's minor_to_major order; empty means the default (rank-1 .. 0).
  std::vector<int64_t> minor_to_major;

  static Shape Array(DType dtype, Dims dims) { return Shape{Kind::kArray, dtype, std::move(dims), {}, {}}; }
  static Shape Token() { return Shape{Kind::kToken, DType::kToken, {}, {}, {}}; }
  static Shape Tuple(std::vector<Shape> elements) {
    return Shape{Kind::kTuple, DType::kInvalid, {}, std::move(elements), {}};
  }
  // The layout's minor_to_major order (the default when none is set).
  std::vector<int64_t> MinorToMajor() const;
};

// One spatial dimension of a window (reduce-window, select-and-scatter, convolution).
struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;
  int64_t base_dilation = 1;
  bool window_reversal = false;
};

struct ConvolutionDimensionNumbers {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_contracting, rhs_contracting, lhs_batch, rhs_batch;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
};

struct SliceDimension {
  int64_t start = 0, limit = 0, stride = 1;
};

struct PaddingDimension {
  int64_t low = 0, high = 0, interior = 0;
};

// How the text names a computation an instruction calls (the proto only keeps the ids,
// in this order).
enum class CalledRole : uint8_t {
  kToApply,        // to_apply=       (reduce, reduce-window, scatter, sort, map, call, all-reduce, ...)
  kWhile,          // body, condition (XLA's order; the text prints condition=, body=)
  kTrueFalse,      // true_computation=, false_computation=
  kBranches,       // branch_computations={...}
  kSelectScatter,  // select=, scatter=
  kCustomCall,     // called_computations={...}
};

// Source position and op name (xla.OpMetadata).
struct Metadata {
  std::string op_name;
  std::string source_file;
  int32_t source_line = 0;
};

struct Instruction {
  int64_t id = 0;
  std::string name;    // unique in the module, e.g. "add.7"
  std::string opcode;  // XLA's opcode name, e.g. "add", "get-tuple-element"
  Shape shape;
  std::vector<int64_t> operands;  // instruction ids, in the same computation
  std::vector<int64_t> called;    // computation ids, in the order of `called_role`
  CalledRole called_role = CalledRole::kToApply;
  Metadata metadata;

  std::optional<int64_t> parameter_number;
  std::optional<ir::Attribute::Elements> literal;  // constant
  std::optional<int64_t> tuple_index;
  std::optional<std::vector<int64_t>> dimensions;  // broadcast, transpose, reduce, ..., iota's one
  std::optional<std::vector<WindowDimension>> window;
  std::optional<ConvolutionDimensionNumbers> convolution_dimension_numbers;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::optional<std::vector<SliceDimension>> slice;
  std::optional<int32_t> exponent_bits, mantissa_bits;
  std::optional<std::vector<int64_t>> dynamic_slice_sizes;
  std::optional<std::vector<PaddingDimension>> padding;
  std::optional<float> epsilon;
  std::optional<int64_t> feature_index;
  std::optional<int64_t> channel_id;
  std::optional<std::string> custom_call_target;
  std::optional<std::string> backend_config;
  bool custom_call_has_side_effect = false;
  int32_t custom_call_api_version = 0;  // xla.CustomCallApiVersion; 0: unset
  // custom-call with layout constraints: the operands' shapes with their layouts.
  std::optional<std::vector<Shape>> operand_shapes_with_layout;
  std::optional<DotDimensionNumbers> dot_dimension_numbers;
  std::optional<int32_t> fft_type;  // xla.FftType
  std::optional<std::vector<int64_t>> fft_length;
  std::optional<std::string> comparison_direction;  // "EQ", "LT", ...
  std::optional<std::string> comparison_type;       // "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"
  std::optional<GatherDimensionNumbers> gather_dimension_numbers;
  std::optional<std::vector<int64_t>> gather_slice_sizes;
  std::optional<ScatterDimensionNumbers> scatter_dimension_numbers;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::optional<std::vector<std::vector<int64_t>>> replica_groups;
  bool use_global_device_ids = false;
  bool is_stable = false;
  std::vector<int32_t> operand_precision;  // xla.PrecisionConfig.Precision per operand; empty: default
  std::optional<std::vector<std::pair<int64_t, int64_t>>> source_target_pairs;
  // triangular-solve
  std::optional<bool> left_side, lower, unit_diagonal;
  std::optional<int32_t> transpose_a;  // xla.TriangularSolveOptions.Transpose
  std::optional<int32_t> rng_algorithm;     // xla.RandomAlgorithm
  std::optional<int32_t> rng_distribution;  // xla.RandomDistribution
};

struct Computation {
  int64_t id = 0;
  std::string name;
  std::vector<Instruction> instructions;  // operands before users; parameters first
  int64_t root_id = 0;
  // The computation's parameter shapes in parameter order, and its result shape.
  std::vector<Shape> parameter_shapes;
  std::vector<std::string> parameter_names;
  Shape result_shape;
};

struct Module {
  std::string name;
  int64_t entry_computation_id = 0;
  std::vector<Computation> computations;  // callees before callers; the entry last

  const Computation& entry() const { return computations.back(); }
};

// XLA's name of an element type ("f32", "pred", "s8", "bf16", "c64", "f8e4m3fn", ...), as
// HLO text prints it; empty for types XLA has no name for here.
std::string_view ElementTypeName(DType dtype);

}  // namespace stablert::hlo
