#include "hlo/proto.h"

#include <cstring>
#include <string_view>
#include <vector>

#include "base/proto_wire.h"
#include "base/xla_primitive_type.h"

namespace stablert::hlo {
namespace {

using proto::WireWriter;

void Message(WireWriter& w, uint32_t number, const WireWriter& message) { w.Bytes(number, message.data()); }

void Ints(WireWriter& w, uint32_t number, const std::vector<int64_t>& values) {
  if (!values.empty()) w.PackedVarints(number, values);
}

void Flag(WireWriter& w, uint32_t number, bool value) {
  if (value) w.Varint(number, 1);
}

// xla.ShapeProto: element_type 2, dimensions 3, tuple_shapes 4, layout 5 (minor_to_major 1).
WireWriter ShapeProto(const Shape& shape) {
  WireWriter w;
  switch (shape.kind) {
    case Shape::Kind::kTuple:
      w.Varint(2, 13);  // TUPLE
      for (const Shape& element : shape.elements) Message(w, 4, ShapeProto(element));
      break;
    case Shape::Kind::kToken: w.Varint(2, 17); break;  // TOKEN
    case Shape::Kind::kArray: {
      w.Varint(2, static_cast<uint64_t>(XlaPrimitiveType(shape.dtype).value_or(0)));
      Ints(w, 3, std::vector<int64_t>(shape.dims.begin(), shape.dims.end()));
      WireWriter layout;
      Ints(layout, 1, shape.MinorToMajor());
      Message(w, 5, layout);
      break;
    }
  }
  return w;
}

// The LiteralProto field holding elements of `dtype`, and whether it is a packed varint list
// (else the elements' little-endian bytes, which is also the packed form of fixed-width
// floats). 0 if none.
struct LiteralField {
  uint32_t number;
  bool varints;
};

LiteralField LiteralFieldOf(DType dtype) {
  switch (dtype) {
    case DType::kPred: return {2, true};
    case DType::kS32: return {4, true};
    case DType::kS64: return {5, true};
    case DType::kU32: return {6, true};
    case DType::kU64: return {7, true};
    case DType::kU8: return {3, false};
    case DType::kS8: return {15, false};
    case DType::kS16: return {17, false};
    case DType::kU16: return {16, false};
    case DType::kF16: return {11, false};
    case DType::kBF16: return {13, false};
    case DType::kF32: return {8, false};
    case DType::kF64: return {9, false};
    case DType::kC64: return {12, false};
    case DType::kC128: return {18, false};
    case DType::kS4: return {21, false};
    case DType::kU4: return {22, false};
    case DType::kS2: return {26, false};
    case DType::kU2: return {27, false};
    case DType::kS1: return {30, false};
    case DType::kU1: return {31, false};
    case DType::kF8E5M2: return {19, false};
    case DType::kF8E4M3FN: return {20, false};
    case DType::kF8E4M3B11FNUZ: return {23, false};
    case DType::kF8E5M2FNUZ: return {24, false};
    case DType::kF8E4M3FNUZ: return {25, false};
    case DType::kF8E4M3: return {28, false};
    case DType::kF8E3M4: return {29, false};
    case DType::kF4E2M1FN: return {32, false};
    case DType::kF8E8M0FNU: return {33, false};
    default: return {0, false};
  }
}

WireWriter LiteralProto(const ir::ElementsData& data) {
  WireWriter w;
  Message(w, 1, ShapeProto(Shape::Array(data.type.dtype, data.type.dims)));
  const LiteralField field = LiteralFieldOf(data.type.dtype);
  if (field.number == 0 || data.NumElements() == 0) return w;
  if (field.varints) {
    std::vector<int64_t> values(static_cast<size_t>(data.NumElements()));
    for (size_t i = 0; i < values.size(); ++i) values[i] = data.IntegerAt(static_cast<int64_t>(i));
    w.PackedVarints(field.number, values);
  } else {
    const std::vector<uint8_t> bytes = data.Expanded();
    w.Bytes(field.number, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  return w;
}

WireWriter WindowProto(const std::vector<WindowDimension>& dims) {
  WireWriter w;
  for (const WindowDimension& d : dims) {
    WireWriter dim;
    dim.Varint(1, static_cast<uint64_t>(d.size));
    dim.Varint(2, static_cast<uint64_t>(d.stride));
    dim.Varint(3, static_cast<uint64_t>(d.padding_low));
    dim.Varint(4, static_cast<uint64_t>(d.padding_high));
    dim.Varint(5, static_cast<uint64_t>(d.window_dilation));
    dim.Varint(6, static_cast<uint64_t>(d.base_dilation));
    Flag(dim, 7, d.window_reversal);
    Message(w, 1, dim);
  }
  return w;
}

WireWriter ConvolutionProto(const ConvolutionDimensionNumbers& n) {
  WireWriter w;
  w.Varint(3, static_cast<uint64_t>(n.kernel_input_feature));
  w.Varint(4, static_cast<uint64_t>(n.kernel_output_feature));
  Ints(w, 6, n.kernel_spatial);
  w.Varint(7, static_cast<uint64_t>(n.input_batch));
  w.Varint(8, static_cast<uint64_t>(n.input_feature));
  w.Varint(9, static_cast<uint64_t>(n.output_batch));
  w.Varint(10, static_cast<uint64_t>(n.output_feature));
  Ints(w, 11, n.input_spatial);
  Ints(w, 12, n.output_spatial);
  return w;
}

WireWriter InstructionProto(const Instruction& inst) {
  WireWriter w;
  w.Bytes(1, inst.name);
  w.Bytes(2, inst.opcode);
  Message(w, 3, ShapeProto(inst.shape));
  const Metadata& m = inst.metadata;
  if (!m.op_name.empty() || !m.source_file.empty() || m.source_line != 0) {
    WireWriter metadata;
    if (!m.op_name.empty()) metadata.Bytes(2, m.op_name);
    if (!m.source_file.empty()) metadata.Bytes(3, m.source_file);
    if (m.source_line != 0) metadata.Varint(4, static_cast<uint64_t>(m.source_line));
    Message(w, 7, metadata);
  }
  if (inst.literal) Message(w, 8, LiteralProto(**inst.literal));
  if (inst.parameter_number) w.Varint(9, static_cast<uint64_t>(*inst.parameter_number));
  if (inst.tuple_index) w.Varint(13, static_cast<uint64_t>(*inst.tuple_index));
  if (inst.dimensions) Ints(w, 14, *inst.dimensions);
  if (inst.window) Message(w, 15, WindowProto(*inst.window));
  if (inst.convolution_dimension_numbers) Message(w, 16, ConvolutionProto(*inst.convolution_dimension_numbers));
  if (inst.slice)
    for (const SliceDimension& s : *inst.slice) {
      WireWriter dim;
      dim.Varint(1, static_cast<uint64_t>(s.start));
      dim.Varint(2, static_cast<uint64_t>(s.limit));
      dim.Varint(3, static_cast<uint64_t>(s.stride));
      Message(w, 17, dim);
    }
  if (inst.exponent_bits) w.Varint(18, static_cast<uint64_t>(*inst.exponent_bits));
  if (inst.mantissa_bits) w.Varint(19, static_cast<uint64_t>(*inst.mantissa_bits));
  if (inst.dynamic_slice_sizes) Ints(w, 20, *inst.dynamic_slice_sizes);
  if (inst.padding) {
    WireWriter config;
    for (const PaddingDimension& p : *inst.padding) {
      WireWriter dim;
      dim.Varint(1, static_cast<uint64_t>(p.low));
      dim.Varint(2, static_cast<uint64_t>(p.high));
      dim.Varint(3, static_cast<uint64_t>(p.interior));
      Message(config, 1, dim);
    }
    Message(w, 21, config);
  }
  if (inst.rng_distribution) w.Varint(23, static_cast<uint64_t>(*inst.rng_distribution));
  if (inst.epsilon) {
    uint32_t bits;
    std::memcpy(&bits, &*inst.epsilon, 4);
    w.Fixed32(24, bits);
  }
  if (inst.feature_index) w.Varint(25, static_cast<uint64_t>(*inst.feature_index));
  if (inst.channel_id) w.Varint(26, static_cast<uint64_t>(*inst.channel_id));
  if (inst.custom_call_target) w.Bytes(28, *inst.custom_call_target);
  if (inst.dot_dimension_numbers) {
    const DotDimensionNumbers& n = *inst.dot_dimension_numbers;
    WireWriter dot;
    Ints(dot, 1, n.lhs_contracting);
    Ints(dot, 2, n.rhs_contracting);
    Ints(dot, 3, n.lhs_batch);
    Ints(dot, 4, n.rhs_batch);
    Message(w, 30, dot);
  }
  if (inst.fft_type) w.Varint(31, static_cast<uint64_t>(*inst.fft_type));
  if (inst.fft_length) Ints(w, 32, *inst.fft_length);
  if (inst.gather_dimension_numbers) {
    const GatherDimensionNumbers& n = *inst.gather_dimension_numbers;
    WireWriter gather;
    Ints(gather, 1, n.offset_dims);
    Ints(gather, 2, n.collapsed_slice_dims);
    Ints(gather, 3, n.start_index_map);
    gather.Varint(4, static_cast<uint64_t>(n.index_vector_dim));
    Ints(gather, 5, n.operand_batching_dims);
    Ints(gather, 6, n.start_indices_batching_dims);
    Message(w, 33, gather);
  }
  if (inst.gather_slice_sizes) Ints(w, 34, *inst.gather_slice_sizes);
  w.Varint(35, static_cast<uint64_t>(inst.id));
  Ints(w, 36, inst.operands);
  Ints(w, 38, inst.called);
  if (inst.backend_config) w.Bytes(43, *inst.backend_config);
  if (inst.scatter_dimension_numbers) {
    const ScatterDimensionNumbers& n = *inst.scatter_dimension_numbers;
    WireWriter scatter;
    Ints(scatter, 1, n.update_window_dims);
    Ints(scatter, 2, n.inserted_window_dims);
    Ints(scatter, 3, n.scatter_dims_to_operand_dims);
    scatter.Varint(4, static_cast<uint64_t>(n.index_vector_dim));
    Ints(scatter, 5, n.input_batching_dims);
    Ints(scatter, 6, n.scatter_indices_batching_dims);
    Message(w, 48, scatter);
  }
  if (inst.replica_groups)
    for (const std::vector<int64_t>& group : *inst.replica_groups) {
      WireWriter g;
      Ints(g, 1, group);
      Message(w, 49, g);
    }
  if (inst.feature_group_count != 1) w.Varint(50, static_cast<uint64_t>(inst.feature_group_count));
  if (!inst.operand_precision.empty()) {
    WireWriter precision;
    precision.PackedVarints(1, std::vector<int64_t>(inst.operand_precision.begin(), inst.operand_precision.end()));
    Message(w, 51, precision);
  }
  if (inst.source_target_pairs)
    for (const auto& [source, target] : *inst.source_target_pairs) {
      WireWriter pair;
      pair.Varint(1, static_cast<uint64_t>(source));
      pair.Varint(2, static_cast<uint64_t>(target));
      Message(w, 52, pair);
    }
  if (inst.operand_shapes_with_layout) {
    w.Varint(56, 1);  // constrain_layout
    for (const Shape& shape : *inst.operand_shapes_with_layout) Message(w, 57, ShapeProto(shape));
  }
  if (inst.batch_group_count != 1) w.Varint(58, static_cast<uint64_t>(inst.batch_group_count));
  if (inst.transpose_a) {
    WireWriter options;
    Flag(options, 1, inst.left_side.value_or(false));
    Flag(options, 2, inst.lower.value_or(false));
    Flag(options, 3, inst.unit_diagonal.value_or(false));
    options.Varint(4, static_cast<uint64_t>(*inst.transpose_a));
    Message(w, 59, options);
  } else if (inst.lower) {
    WireWriter options;  // cholesky
    Flag(options, 1, *inst.lower);
    Message(w, 62, options);
  }
  Flag(w, 60, inst.is_stable);
  if (inst.comparison_direction) w.Bytes(63, *inst.comparison_direction);
  Flag(w, 65, inst.custom_call_has_side_effect);
  Flag(w, 67, inst.indices_are_sorted);
  Flag(w, 69, inst.unique_indices);
  if (inst.rng_algorithm) w.Varint(70, static_cast<uint64_t>(*inst.rng_algorithm));
  Flag(w, 71, inst.use_global_device_ids);
  if (inst.comparison_type) w.Bytes(72, *inst.comparison_type);
  if (inst.custom_call_api_version != 0) w.Varint(77, static_cast<uint64_t>(inst.custom_call_api_version));
  return w;
}

WireWriter ProgramShapeProto(const Computation& computation) {
  WireWriter w;
  for (const Shape& shape : computation.parameter_shapes) Message(w, 1, ShapeProto(shape));
  Message(w, 2, ShapeProto(computation.result_shape));
  for (const std::string& name : computation.parameter_names) w.Bytes(3, name);
  return w;
}

WireWriter ComputationProto(const Computation& computation) {
  WireWriter w;
  w.Bytes(1, computation.name);
  for (const Instruction& inst : computation.instructions) Message(w, 2, InstructionProto(inst));
  Message(w, 4, ProgramShapeProto(computation));
  w.Varint(5, static_cast<uint64_t>(computation.id));
  w.Varint(6, static_cast<uint64_t>(computation.root_id));
  return w;
}

}  // namespace

std::string ToProto(const Module& module) {
  WireWriter w;
  w.Bytes(1, module.name);
  w.Bytes(2, module.entry().name);
  for (const Computation& computation : module.computations) Message(w, 3, ComputationProto(computation));
  Message(w, 4, ProgramShapeProto(module.entry()));
  w.Varint(6, static_cast<uint64_t>(module.entry_computation_id));
  return w.Take();
}

}  // namespace stablert::hlo
