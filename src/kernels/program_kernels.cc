// Kernels whose per-element work is a body program (scalar_program.h):
//
//   "reduce_program"  in: N operands (one shape), N init scalars   out: N reduced arrays
//                     params: ReduceProgramParams (program_params.h); the body takes
//                     (acc_0..acc_{N-1}, x_0..x_{N-1}) and returns the N new accumulators.
//                     Each output accumulates its elements in row-major order.
//   "sort_program"    in: N operands (one shape)   out: N sorted arrays
//                     params: SortProgramParams; the comparator takes
//                     (lhs_0, rhs_0, lhs_1, rhs_1, ...) and returns one i1, "lhs < rhs".
//                     Sorting is always stable.
// Both decode their program once per plan step (prepare) and check that its registers
// fit the operands. A reduce body that is JAX's argmax/argmin runs as vector loops instead
// (argminmax.h; same results), split across the calls of the step (reduce_program is
// splittable; other bodies run on the first call alone).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <span>
#include <vector>

#include "kernels/argminmax.h"
#include "kernels/dtype_traits.h"
#include "kernels/families.h"
#include "kernels/program_params.h"
#include "kernels/registry.h"
#include "kernels/scalar_program.h"
#include "kernels/strided.h"

namespace stablert::kernels {
namespace {

// What a reduce_program step prepares: its decoded body, and whether it is an argmax/argmin.
struct ReduceState {
  ScalarProgram program;
  ArgKind arg_kind = ArgKind::kNone;
};

StatusOr<PreparedStep> PrepareProgram(const KernelArgs& args, std::span<const int64_t> code, size_t operands,
                                      bool is_sort) {
  STABLERT_ASSIGN_OR_RETURN(ScalarProgram program, ScalarProgram::Decode(code, CpuKernels()));
  // Argument registers and results must have the operands' element types.
  const size_t n = operands;
  if (static_cast<size_t>(program.num_inputs()) != 2 * n)
    return InvalidArgument("body program takes " + std::to_string(program.num_inputs()) + " arguments, expected " +
                           std::to_string(2 * n));
  for (size_t i = 0; i < n; ++i) {
    DType dtype = args.inputs[i].dtype;
    int first = is_sort ? static_cast<int>(2 * i) : static_cast<int>(i);
    int second = is_sort ? static_cast<int>(2 * i + 1) : static_cast<int>(n + i);
    if (program.register_dtype(first) != dtype || program.register_dtype(second) != dtype)
      return InvalidArgument("body program argument types do not match the operands");
  }
  if (is_sort) {
    if (program.outputs().size() != 1 || program.register_dtype(program.outputs()[0]) != DType::kPred)
      return InvalidArgument("sort comparator must return one i1");
  } else {
    if (program.outputs().size() != n) return InvalidArgument("reduce body must return one value per operand");
    for (size_t i = 0; i < n; ++i)
      if (program.register_dtype(program.outputs()[i]) != args.inputs[i].dtype)
        return InvalidArgument("reduce body result types do not match the operands");
  }
  if (!is_sort) {
    auto state = std::make_shared<ReduceState>();
    state->arg_kind = MatchArgMinMaxBody(code);
    state->program = std::move(program);
    return KernelState(std::move(state));
  }
  return KernelState(std::make_shared<const ScalarProgram>(std::move(program)));
}

StatusOr<PreparedStep> PrepareReduce(const KernelArgs& args) {
  return PrepareProgram(args, args.Params<ReduceProgramParams>().body, args.outputs.size(), false);
}
StatusOr<PreparedStep> PrepareSort(const KernelArgs& args) {
  return PrepareProgram(args, args.Params<SortProgramParams>().comparator, args.outputs.size(), true);
}

Status ReduceProgramKernel(const KernelContext& context, const KernelArgs& args) {
  if (args.state == nullptr) return Internal("ReduceProgram called without its prepared state");
  const auto& state = *static_cast<const ReduceState*>(args.state);
  bool done = false;
  const std::vector<int64_t>& dimensions = args.Params<ReduceProgramParams>().dimensions;
  STABLERT_RETURN_IF_ERROR(RunArgMinMax(state.arg_kind, dimensions, context, args, &done));
  if (done || context.thread_index != 0) return OkStatus();
  const ScalarProgram& program = state.program;
  const size_t n = args.outputs.size();
  std::vector<ScalarSlot> registers(static_cast<size_t>(program.num_registers()));
  program.Initialize(registers.data());
  std::vector<int> sizes(n);
  for (size_t i = 0; i < n; ++i) {
    sizes[i] = DTypeByteSize(args.outputs[i].dtype);
    const auto* init = static_cast<const uint8_t*>(args.inputs[n + i].data);
    auto* out = static_cast<uint8_t*>(args.outputs[i].data);
    for (int64_t e = 0; e < args.outputs[i].num_elements; ++e) std::memcpy(out + e * sizes[i], init, sizes[i]);
  }
  const BufferView& in = args.inputs[0];
  if (in.num_elements == 0) return OkStatus();

  const size_t rank = in.dims.size();
  DimVector reduced(rank, 0), out_stride(rank, 0);
  for (int64_t d : dimensions) reduced[static_cast<size_t>(d)] = 1;
  int64_t stride = 1;
  for (size_t d = rank; d-- > 0;) {
    if (reduced[d]) continue;
    out_stride[d] = stride;
    stride *= in.dims[d];
  }
  const std::vector<int32_t>& outputs = program.outputs();
  DimVector index(rank, 0);
  int64_t out_offset = 0;
  for (int64_t e = 0; e < in.num_elements; ++e) {
    for (size_t i = 0; i < n; ++i) {
      std::memcpy(&registers[i], static_cast<const uint8_t*>(args.outputs[i].data) + out_offset * sizes[i], sizes[i]);
      std::memcpy(&registers[n + i], static_cast<const uint8_t*>(args.inputs[i].data) + e * sizes[i], sizes[i]);
    }
    program.Run(registers.data());
    // Read all results before writing any: a result may be another accumulator register.
    ScalarSlot results[8];
    std::vector<ScalarSlot> many;
    ScalarSlot* staged = results;
    if (n > 8) {
      many.resize(n);
      staged = many.data();
    }
    for (size_t i = 0; i < n; ++i) staged[i] = registers[static_cast<size_t>(outputs[i])];
    for (size_t i = 0; i < n; ++i)
      std::memcpy(static_cast<uint8_t*>(args.outputs[i].data) + out_offset * sizes[i], &staged[i], sizes[i]);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < in.dims[d]) {
        out_offset += out_stride[d];
        break;
      }
      out_offset -= out_stride[d] * (in.dims[d] - 1);
      index[d] = 0;
    }
  }
  return OkStatus();
}

Status SortProgramKernel(const KernelContext&, const KernelArgs& args) {
  if (args.state == nullptr) return Internal("SortProgram called without its prepared state");
  const auto& program = *static_cast<const ScalarProgram*>(args.state);
  const size_t n = args.outputs.size();
  const BufferView& first = args.inputs[0];
  if (first.num_elements == 0) return OkStatus();
  const size_t dim = static_cast<size_t>(args.Params<SortProgramParams>().dimension);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < dim; ++d) outer *= first.dims[d];
  for (size_t d = dim + 1; d < first.dims.size(); ++d) inner *= first.dims[d];
  const int64_t length = first.dims[dim];

  std::vector<ScalarSlot> registers(static_cast<size_t>(program.num_registers()));
  program.Initialize(registers.data());
  std::vector<int> sizes(n);
  for (size_t i = 0; i < n; ++i) sizes[i] = DTypeByteSize(args.inputs[i].dtype);
  const int32_t result = program.outputs()[0];
  std::vector<int64_t> order(static_cast<size_t>(length));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      const int64_t base = o * length * inner + k;
      auto less = [&](int64_t lhs, int64_t rhs) {
        for (size_t i = 0; i < n; ++i) {
          const auto* data = static_cast<const uint8_t*>(args.inputs[i].data);
          std::memcpy(&registers[2 * i], data + (base + lhs * inner) * sizes[i], sizes[i]);
          std::memcpy(&registers[2 * i + 1], data + (base + rhs * inner) * sizes[i], sizes[i]);
        }
        program.Run(registers.data());
        return GetSlot<uint8_t>(registers[static_cast<size_t>(result)]) != 0;
      };
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), less);
      for (size_t i = 0; i < n; ++i) {
        const auto* src = static_cast<const uint8_t*>(args.inputs[i].data);
        auto* dst = static_cast<uint8_t*>(args.outputs[i].data);
        for (int64_t p = 0; p < length; ++p)
          std::memcpy(dst + (base + p * inner) * sizes[i], src + (base + order[static_cast<size_t>(p)] * inner) * sizes[i],
                      sizes[i]);
      }
    }
  }
  return OkStatus();
}

}  // namespace

Status RegisterProgramKernels(KernelRegistry& r) {
  STABLERT_RETURN_IF_ERROR(
      r.RegisterSplittable<ReduceProgramParams>("reduce_program", &ReduceProgramKernel, &PrepareReduce));
  STABLERT_RETURN_IF_ERROR(r.Register<SortProgramParams>("sort_program", &SortProgramKernel, &PrepareSort));
  return OkStatus();
}

}  // namespace stablert::kernels
