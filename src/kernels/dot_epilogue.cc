#include "kernels/dot_epilogue.h"

#include <string>

namespace stablert::kernels::epilogue {

StatusOr<std::vector<Op>> Describe(const DotEpilogueParams& params, const KernelArgs& args) {
  const auto fail = [](const std::string& what) { return InvalidArgument("dot_epilogue.f32: " + what); };
  if (args.outputs.size() != 1 || args.outputs[0].dims.size() != 3) return fail("expected one [B,M,N] output");
  const BufferView& out = args.outputs[0];
  const int64_t n = out.dims[2];
  std::vector<Op> ops;
  size_t next = 2;
  for (int64_t code : params.ops) {
    Op op;
    switch (static_cast<EpilogueOp>(code)) {
      case EpilogueOp::kAdd:
      case EpilogueOp::kMultiply:
      case EpilogueOp::kDivide:
      case EpilogueOp::kSubtract:
      case EpilogueOp::kSubtractFrom: {
        op.op = static_cast<EpilogueOp>(code);
        if (next >= args.inputs.size()) return fail("op " + std::to_string(ops.size()) + " has no input");
        const BufferView& y = args.inputs[next];
        if (y.dtype != DType::kF32) return fail("input " + std::to_string(next) + " is not f32");
        if (y.num_elements == 1) op.operand = Operand::kScalar;
        else if (y.num_elements == n) op.operand = Operand::kRow;
        else if (y.num_elements == out.num_elements) op.operand = Operand::kFull;
        else
          return fail("input " + std::to_string(next) + " has " + std::to_string(y.num_elements) +
                      " elements; expected 1, " + std::to_string(n) + " or " + std::to_string(out.num_elements));
        op.input = static_cast<int>(next++);
        break;
      }
      case EpilogueOp::kRelu: op.op = EpilogueOp::kRelu; break;
      default: return fail("unknown op " + std::to_string(code));
    }
    ops.push_back(op);
  }
  if (next != args.inputs.size())
    return fail(std::to_string(args.inputs.size()) + " inputs for " + std::to_string(next - 2) + " operands");
  return ops;
}

size_t LibraryPrefix(std::span<const Op> ops) {
  size_t i = 0;
  while (i < ops.size() && ops[i].op != EpilogueOp::kRelu && ops[i].op != EpilogueOp::kSubtractFrom) ++i;
  return i;
}

void Apply(std::span<const Op> ops, const KernelArgs& args, int64_t row_begin, int64_t row_end, int64_t col_begin,
           int64_t col_end) {
  const BufferView& out_view = args.outputs[0];
  const int64_t width = out_view.dims[2];
  if (col_end < 0) col_end = width;
  const int64_t n = col_end - col_begin;
  float* out = out_view.as<float>();
  for (int64_t row = row_begin; row < row_end; ++row) {
    float* o = out + row * width + col_begin;
    for (const Op& op : ops) {
      if (op.op == EpilogueOp::kRelu) {
        // max(x, 0) with NaN propagated, as XLA's maximum.
        for (int64_t i = 0; i < n; ++i) o[i] = o[i] < 0.0f ? 0.0f : o[i];
        continue;
      }
      const float* y = args.inputs[static_cast<size_t>(op.input)].as<const float>();
      int64_t step = 1;
      if (op.operand == Operand::kScalar) step = 0;
      else if (op.operand == Operand::kFull) y += row * width + col_begin;
      else y += col_begin;
      switch (op.op) {
        case EpilogueOp::kAdd:
          for (int64_t i = 0; i < n; ++i) o[i] = o[i] + y[i * step];
          break;
        case EpilogueOp::kMultiply:
          for (int64_t i = 0; i < n; ++i) o[i] = o[i] * y[i * step];
          break;
        case EpilogueOp::kDivide:
          for (int64_t i = 0; i < n; ++i) o[i] = o[i] / y[i * step];
          break;
        case EpilogueOp::kSubtract:
          for (int64_t i = 0; i < n; ++i) o[i] = o[i] - y[i * step];
          break;
        case EpilogueOp::kSubtractFrom:
          for (int64_t i = 0; i < n; ++i) o[i] = y[i * step] - o[i];
          break;
        case EpilogueOp::kRelu: break;
      }
    }
  }
}

}  // namespace stablert::kernels::epilogue
