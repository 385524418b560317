#include "plan/cost_analysis.h"

#include <algorithm>
#include <set>
#include <string>
#include <string_view>

#include "kernels/convolution_params.h"
#include "kernels/fused_params.h"
#include "kernels/window_params.h"

namespace stablert::plan {
namespace {

// Kernel families (the key before its first '.') by what they cost per output element.
const std::set<std::string_view>& Transcendental() {
  static const std::set<std::string_view> kSet = {
      "exponential", "exponential_minus_one", "log", "log_plus_one", "logistic", "power", "sqrt", "rsqrt",
      "cbrt", "tanh", "sine", "cosine", "tan", "atan2", "erf", "erf_inv", "lgamma", "digamma"};
  return kSet;
}

const std::set<std::string_view>& OneFlop() {
  static const std::set<std::string_view> kSet = {
      "abs", "add", "and", "ceil", "clamp", "compare", "complex", "convert", "count_leading_zeros", "divide",
      "floor", "imag", "is_finite", "maximum", "minimum", "multiply", "negate", "not", "or", "popcnt", "real",
      "reduce_precision", "remainder", "round_nearest_afz", "round_nearest_even", "select", "shift_left",
      "shift_right_arithmetic", "shift_right_logical", "sign", "subtract", "xor"};
  return kSet;
}

int64_t Elements(const ExecutionPlan& plan, ValueId id) {
  return id < plan.values.size() ? ElementCount(plan.values[id].type.dims) : 0;
}

const Dims& DimsOf(const ExecutionPlan& plan, ValueId id) {
  static const Dims kNone;
  return id < plan.values.size() ? plan.values[id].type.dims : kNone;
}

// Output positions o < out and kernel positions k < window whose input position
// o·stride + k·rhs_dilation − pad_low falls on an element of the (lhs-dilated) input of
// `in` elements: the multiply-adds along one spatial dimension.
int64_t ValidPairs(int64_t in, int64_t window, int64_t out, int64_t stride, int64_t pad_low, int64_t lhs_dilation,
                   int64_t rhs_dilation) {
  int64_t count = 0;
  for (int64_t k = 0; k < window; ++k) {
    for (int64_t o = 0; o < out; ++o) {
      const int64_t position = o * stride + k * rhs_dilation - pad_low;
      if (position < 0 || position % lhs_dilation != 0) continue;
      if (position / lhs_dilation < in) ++count;
    }
  }
  return count;
}

double ConvolutionFlops(const ExecutionPlan& plan, const Step& step, const kernels::ConvolutionParams& p) {
  if (step.inputs.size() < 2 || step.outputs.empty()) return 0;
  const Dims& lhs = DimsOf(plan, step.inputs[0]);
  const Dims& rhs = DimsOf(plan, step.inputs[1]);
  const Dims& out = DimsOf(plan, step.outputs[0]);
  const size_t spatial = p.strides.size();
  if (p.lhs_dims.size() != spatial + 2 || p.rhs_dims.size() != spatial + 2 || p.out_dims.size() != spatial + 2)
    return 0;
  auto at = [](const Dims& dims, int64_t i) { return i >= 0 && static_cast<size_t>(i) < dims.size() ? dims[i] : 0; };
  auto entry = [](const std::vector<int64_t>& list, size_t i, int64_t fallback) {
    return i < list.size() ? list[i] : fallback;
  };
  double positions = 1;
  for (size_t s = 0; s < spatial; ++s) {
    const int64_t in = at(lhs, p.lhs_dims[2 + s]), window = at(rhs, p.rhs_dims[2 + s]), o = at(out, p.out_dims[2 + s]);
    // Quadratic in one dimension's size only; beyond that count the output positions.
    if (window * o > (int64_t{1} << 24)) {
      positions *= static_cast<double>(window) * static_cast<double>(o);
      continue;
    }
    positions *= static_cast<double>(ValidPairs(in, window, o, std::max<int64_t>(1, entry(p.strides, s, 1)),
                                                entry(p.padding_low, s, 0),
                                                std::max<int64_t>(1, entry(p.lhs_dilation, s, 1)),
                                                std::max<int64_t>(1, entry(p.rhs_dilation, s, 1))));
  }
  const double batch = static_cast<double>(at(lhs, p.lhs_dims[0])) / static_cast<double>(std::max<int64_t>(1, p.batch_groups));
  const double input_features =
      static_cast<double>(at(lhs, p.lhs_dims[1])) / static_cast<double>(std::max<int64_t>(1, p.feature_groups));
  const double output_features = static_cast<double>(at(out, p.out_dims[1]));
  return 2 * batch * input_features * output_features * positions;
}

void AddStep(const ExecutionPlan& plan, const Step& step, PlanCost& cost) {
  for (const Sequence& region : step.regions)
    for (const Step& inner : region.steps) AddStep(plan, inner, cost);
  if (step.kind != StepKind::kKernel && step.kind != StepKind::kCollective) return;
  for (ValueId id : step.inputs)
    if (id < plan.values.size()) cost.bytes_accessed += static_cast<double>(plan.values[id].byte_size);
  for (ValueId id : step.outputs)
    if (id < plan.values.size()) cost.bytes_accessed += static_cast<double>(plan.values[id].byte_size);
  if (step.kind != StepKind::kKernel || step.outputs.empty()) return;
  if (const auto* fused = step.params.As<kernels::FusedParams>()) {
    // A fused chain (kernels/fused_params.h): each sub-op over every element, as unfused;
    // a folded reduction: elements - results.
    const double elements = static_cast<double>(fused->num_elements);
    for (const kernels::FusedOp& op : fused->ops) {
      const std::string_view op_family = std::string_view(op.kernel).substr(0, op.kernel.find('.'));
      if (Transcendental().contains(op_family)) cost.transcendentals += elements;
      else if (OneFlop().contains(op_family)) cost.flops += elements;
    }
    for (const kernels::FusedReduce& reduce : fused->reduce)
      cost.flops += elements - static_cast<double>(reduce.rows * reduce.segments);
    return;
  }
  const std::string_view key = step.kernel;
  const std::string_view family = key.substr(0, key.find('.'));
  const double out = static_cast<double>(Elements(plan, step.outputs[0]));
  if (Transcendental().contains(family)) {
    cost.transcendentals += out;
  } else if (OneFlop().contains(family)) {
    cost.flops += out;
  } else if ((family == "dot" || family == "dot_epilogue") && step.inputs.size() >= 2) {
    // lhs [B,M,K] or [B,K,M], output [B,M,N].
    const Dims& o = DimsOf(plan, step.outputs[0]);
    if (o.size() == 3 && o[0] * o[1] > 0)
      cost.flops += 2 * out * static_cast<double>(Elements(plan, step.inputs[0]) / (o[0] * o[1]));
  } else if (family == "convolution" || family == "convolution_dnnl") {
    if (const auto* p = step.params.As<kernels::ConvolutionParams>()) cost.flops += ConvolutionFlops(plan, step, *p);
  } else if (family.starts_with("reduce_window")) {
    if (const auto* p = step.params.As<kernels::WindowParams>()) {
      double window = 1;
      for (int64_t w : p->window_dimensions) window *= static_cast<double>(w);
      cost.flops += out * std::max(0.0, window - 1);
    }
  } else if (family.starts_with("reduce_")) {
    // Reduced operands: the first half of the inputs (then one init each).
    const size_t operands = family == "reduce_program" ? step.inputs.size() / 2 : 1;
    for (size_t i = 0; i < operands && i < step.inputs.size(); ++i)
      cost.flops += static_cast<double>(Elements(plan, step.inputs[i])) - out;
  }
}

}  // namespace

PlanCost AnalyzeCost(const ExecutionPlan& plan) {
  PlanCost cost;
  for (const Step& step : plan.body.steps) AddStep(plan, step, cost);
  return cost;
}

PlanCost StepCost(const ExecutionPlan& plan, const Step& step) {
  PlanCost cost;
  AddStep(plan, step, cost);
  return cost;
}

}  // namespace stablert::plan
