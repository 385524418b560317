// The conformance suite's differential tier: JAX-exported programs (matmul + softmax,
// reductions, a while loop, sort, scatter, f16 / bf16) run on the plugin under test and on a
// second plugin with the same generated inputs (fixed seed); every output must agree within
// the dtype's tolerance (compare.h: f32 1e-5, f16 1e-3, bf16 1e-2, integers exactly). The
// programs are tests/conformance/programs/*.mlirbc (generate_differential_programs.py),
// compiled into the tool.
#include "compare.h"
#include "conformance.h"
#include "run_program.h"

namespace stablert::conform {

extern const std::string_view k_diff_matmul_softmax_program;
extern const std::string_view k_diff_reductions_program;
extern const std::string_view k_diff_while_loop_program;
extern const std::string_view k_diff_sort_program;
extern const std::string_view k_diff_scatter_program;
extern const std::string_view k_diff_half_precision_program;

namespace {

Status RunDifferential(Context& c, std::string_view program, const char* name) {
  if (c.diff_with.empty()) return Unimplemented("no second plugin (conform PLUGIN --diff-with OTHER)");
  STABLERT_ASSIGN_OR_RETURN(cli::ProgramFile file, cli::LoadProgram(std::string(program), name));
  STABLERT_ASSIGN_OR_RETURN(std::vector<host::Literal> inputs, cli::MakeInputs(file, {}, cli::InputKind::kRandom, 1));
  StatusOr<std::vector<cli::NamedOutput>> a = cli::RunOn(c.plugin->path(), file, inputs);
  if (!a.ok()) return a.status().WithPrefix("on the plugin under test");
  StatusOr<std::vector<cli::NamedOutput>> b = cli::RunOn(c.diff_with, file, inputs);
  if (!b.ok()) return Internal("on " + c.diff_with + " (the reference): " + b.status().ToString());
  if (a->size() != b->size())
    return Internal(std::to_string(a->size()) + " outputs; the reference gives " + std::to_string(b->size()));
  std::string differences;
  for (size_t i = 0; i < a->size(); ++i) {
    const host::Literal& x = (*a)[i].value;
    const host::Literal& y = (*b)[i].value;
    if (x.type != y.type || x.dims != y.dims) {
      differences += (*a)[i].label + ": " + cli::DescribeLiteral(x) + " vs " + cli::DescribeLiteral(y) + "; ";
      continue;
    }
    cli::Comparison comparison = cli::CompareLiterals(x, y, {});
    if (!comparison.agree) differences += (*a)[i].label + ": " + comparison.detail + "; ";
  }
  if (!differences.empty()) return Internal("outputs differ from the reference: " + differences);
  return OkStatus();
}

#define STABLERT_DIFF_TEST(program) \
  Status Diff_##program(Context& c) { return RunDifferential(c, k_diff_##program##_program, #program); }
STABLERT_DIFF_TEST(matmul_softmax)
STABLERT_DIFF_TEST(reductions)
STABLERT_DIFF_TEST(while_loop)
STABLERT_DIFF_TEST(sort)
STABLERT_DIFF_TEST(scatter)
STABLERT_DIFF_TEST(half_precision)
#undef STABLERT_DIFF_TEST

}  // namespace

const std::vector<TestCase>& DifferentialTests() {
  static const std::vector<TestCase> tests = {
      {"diff.matmul_softmax", "f32 64x128 @ 128x96, softmax: agrees with the reference plugin", Diff_matmul_softmax},
      {"diff.reductions", "sum, max, mean, product over axes: agree", Diff_reductions},
      {"diff.while_loop", "12 iterations of a while loop: agree", Diff_while_loop},
      {"diff.sort", "sort along rows, stable argsort along columns: agree", Diff_sort},
      {"diff.scatter", "scatter-add and scatter-max with duplicate indices: agree", Diff_scatter},
      {"diff.half_precision", "f16 matmul + softmax, bf16 elementwise and a sum: agree", Diff_half_precision},
  };
  return tests;
}

}  // namespace stablert::conform
