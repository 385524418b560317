// Lowering in tests: the plan of a module that must lower, with a test failure (naming the
// error) and an empty plan otherwise. Header-only; used only by tests.
#pragma once

#include <gtest/gtest.h>

#include <utility>

#include "ir/module.h"
#include "plan/lower.h"

namespace stablert::plan::testing {

inline ExecutionPlan MustLower(const ir::Module& module) {
  auto plan = LowerToPlan(module);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? std::move(plan).value() : ExecutionPlan{};
}

}  // namespace stablert::plan::testing
