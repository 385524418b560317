// libFuzzer target: arbitrary bytes through the whole reader path a compile takes —
// stablehlo::ReadModule, then ir::Verify and ir::PrintModule (with and without locations)
// on whatever reads. Any crash, hang, leak or sanitizer report is a bug: malformed input must
// come back as a Status. Built and run by run_fuzzer.sh (clang, ASan + UBSan).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/read_module.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto module = stablert::stablehlo::ReadModule(bytes);
  if (!module.ok()) return 0;
  // Printing must cope with modules the verifier rejects (error messages print them too).
  stablert::ir::PrintOptions options;
  options.max_elements = 64;
  (void)stablert::ir::PrintModule(**module, options);
  if (!stablert::ir::Verify(**module).ok()) return 0;
  options.locations = true;
  (void)stablert::ir::PrintModule(**module, options);
  return 0;
}
