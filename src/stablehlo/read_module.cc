#include "stablehlo/read_module.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include "stablehlo/bytecode_reader.h"
#include "stablehlo/import.h"
#include "stablehlo/text_parser.h"
#include "stablehlo/version.h"

namespace stablert::stablehlo {
namespace {

// Dialects of the unstable (non-VHLO) serialization; artifacts with their ops are rejected.
bool IsUnstableDialect(std::string_view name) {
  return name == "stablehlo" || name == "chlo" || name == "func" || name == "mhlo";
}

}  // namespace

bool IsBytecode(std::string_view bytes) {
  // A prefix of the magic (empty or truncated input) is read as bytecode too: its error
  // names the magic bytes.
  constexpr std::string_view kMagic("ML\xEFR", 4);
  return kMagic.substr(0, std::min(bytes.size(), kMagic.size())) == bytes.substr(0, kMagic.size());
}

StatusOr<std::unique_ptr<ir::Module>> ReadModule(std::string_view bytes) {
  if (!IsBytecode(bytes)) return ParseModuleText(bytes);
  STABLERT_ASSIGN_OR_RETURN(BytecodeFile file, ReadBytecode(bytes));
  STABLERT_RETURN_IF_ERROR(ArtifactVersion(file.producer).status());
  for (const OpNameEntry& op : file.op_names) {
    std::string_view dialect = file.dialects[op.dialect].name;
    if (IsUnstableDialect(dialect)) {
      return InvalidArgument("the artifact contains '" + std::string(dialect) + "." +
                             std::string(op.name) +
                             "' (plain MLIR bytecode, not a VHLO portable artifact); only VHLO "
                             "ops are supported");
    }
  }
  return ImportModule(file);
}

StatusOr<std::unique_ptr<ir::Module>> ReadModuleFromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open '" + path + "'");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return NotFound("cannot read '" + path + "'");
  StatusOr<std::unique_ptr<ir::Module>> module = ReadModule(bytes);
  if (!module.ok()) return module.status().WithPrefix(path);
  return module;
}

}  // namespace stablert::stablehlo
