// Lowering in tests: the plan of a module that must lower, with a test failure (naming the
// error) and an empty plan otherwise; and finding steps in a plan by kernel key prefix.
// Header-only; used only by tests.
#pragma once

#include <gtest/gtest.h>

#include <string_view>
#include <utility>

#include "ir/module.h"
#include "plan/lower.h"

namespace stablert::plan::testing {

inline ExecutionPlan MustLower(const ir::Module& module) {
  auto plan = LowerToPlan(module);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? std::move(plan).value() : ExecutionPlan{};
}

// Steps of `sequence` (regions included) whose kernel key starts with `prefix`.
inline int CountSteps(const Sequence& sequence, std::string_view prefix) {
  int n = 0;
  for (const Step& step : sequence.steps) {
    if (step.kernel.starts_with(prefix)) ++n;
    for (const Sequence& region : step.regions) n += CountSteps(region, prefix);
  }
  return n;
}

// The first step of the plan's body whose kernel key starts with `prefix`, or nullptr.
inline const Step* FindStep(const ExecutionPlan& plan, std::string_view prefix) {
  for (const Step& step : plan.body.steps)
    if (step.kernel.starts_with(prefix)) return &step;
  return nullptr;
}

}  // namespace stablert::plan::testing
