// libFuzzer target: arbitrary text through the MLIR text reader (stablehlo::ParseModuleText),
// then ir::Verify and ir::PrintModule on whatever parses. Any crash, hang, leak or
// sanitizer report is a bug: malformed text must come back as a Status. Seeds:
// tests/fuzz/text_corpus/ (small programs in the pretty and generic forms); dictionary:
// text_parser.dict. Built and run by run_fuzzer.sh (STABLERT_FUZZ_TARGET=text_parser_fuzz).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/text_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = stablert::stablehlo::ParseModuleText(text);
  if (!module.ok()) return 0;
  stablert::ir::PrintOptions options;
  options.max_elements = 64;
  (void)stablert::ir::PrintModule(**module, options);
  if (!stablert::ir::Verify(**module).ok()) return 0;
  options.locations = true;
  (void)stablert::ir::PrintModule(**module, options);
  return 0;
}
