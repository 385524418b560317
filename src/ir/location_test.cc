// ir::Location: what a call site or fused location takes from its other parts.
#include <gtest/gtest.h>

#include "ir/module.h"

namespace stablert::ir {
namespace {

TEST(Location, FillFromTakesTheMissingNameAndTheWholeFilePosition) {
  Location callee{"", 0, 0, "jit(f)/mul"};
  callee.FillFrom(Location{"f.py", 12, 4, "caller"});
  EXPECT_EQ(callee.ToString(), "jit(f)/mul at f.py:12:4");
  Location placed{"g.py", 3, 1, ""};
  placed.FillFrom(Location{"h.py", 9, 9, "outer"});
  EXPECT_EQ(placed.ToString(), "outer at g.py:3:1");  // the file position is kept as a whole
  Location unknown;
  unknown.FillFrom(Location{});
  EXPECT_EQ(unknown.ToString(), "unknown location");
}

}  // namespace
}  // namespace stablert::ir
