// stablert_text_check CORPUS_DIR: every program of the corpus read from its MLIR text (the
// pretty form JAX prints, <program>.mlir, and MLIR's generic form, <program>.generic.mlir)
// must import to the IR its newest bytecode artifact imports to: ir::PrintModule of both,
// compared without locations, and with locations for the generic form (the pretty form's
// compact `applies` reductions carry no locations of their own). <program>.jax.mlir, the
// text `jax.jit(f).lower(x).as_text()` prints (CHLO ops undecomposed, so another program
// than the artifact), must read and verify.
// Prints one line per difference and a summary; exit status 1 on any difference.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/read_module.h"

namespace fs = std::filesystem;
using stablert::StatusOr;
using stablert::ir::Module;

namespace {

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<int> VersionOf(const std::string& stem) {
  // "<program>.1_17_0" -> {1, 17, 0}
  std::vector<int> out;
  size_t dot = stem.rfind('.');
  std::string v = dot == std::string::npos ? "" : stem.substr(dot + 1);
  size_t i = 0;
  while (i < v.size()) {
    size_t j = v.find('_', i);
    if (j == std::string::npos) j = v.size();
    out.push_back(std::atoi(v.substr(i, j - i).c_str()));
    i = j + 1;
  }
  return out;
}

std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t line = 1, i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) {
    if (a[i] == '\n') ++line;
    ++i;
  }
  auto line_at = [](const std::string& s, size_t at) {
    size_t start = s.rfind('\n', at == 0 ? 0 : at - 1);
    start = start == std::string::npos ? 0 : start + 1;
    size_t end = s.find('\n', at);
    std::string l = s.substr(start, (end == std::string::npos ? s.size() : end) - start);
    return l.size() > 240 ? l.substr(0, 240) + "..." : l;
  };
  return "line " + std::to_string(line) + ": bytecode `" + line_at(a, i) + "`, text `" + line_at(b, i) + "`";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: stablert_text_check CORPUS_DIR\n");
    return 2;
  }
  const fs::path root = argv[1];
  // program key (dir/program) -> newest bytecode file.
  std::map<std::string, std::pair<std::vector<int>, fs::path>> bytecode;
  std::vector<fs::path> texts;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const fs::path& p = it->path();
    if (p.extension() == ".mlirbc") {
      std::string stem = p.stem().string();
      std::string key = (p.parent_path() / stem.substr(0, stem.find('.'))).string();
      std::vector<int> version = VersionOf(stem);
      auto found = bytecode.find(key);
      if (found == bytecode.end() || found->second.first < version) bytecode[key] = {version, p};
    } else if (p.extension() == ".mlir") {
      texts.push_back(p);
    }
  }
  std::sort(texts.begin(), texts.end());
  int same = 0, read_as_printed = 0, differ = 0, both_unsupported = 0, missing = 0;
  for (const fs::path& text_path : texts) {
    std::string name = text_path.filename().string();
    bool generic = name.size() > 13 && name.substr(name.size() - 13) == ".generic.mlir";
    bool as_jax_prints = name.size() > 9 && name.substr(name.size() - 9) == ".jax.mlir";
    std::string program = name.substr(0, name.find('.'));
    std::string key = (text_path.parent_path() / program).string();
    std::string shown = fs::relative(text_path, root).string();
    auto found = bytecode.find(key);
    if (found == bytecode.end()) {
      ++missing;
      std::printf("MISSING %s: no bytecode artifact of the program\n", shown.c_str());
      continue;
    }
    StatusOr<std::unique_ptr<Module>> from_bytecode = stablert::stablehlo::ReadModuleFromFile(found->second.second.string());
    StatusOr<std::unique_ptr<Module>> from_text = stablert::stablehlo::ReadModule(ReadFile(text_path));
    if (!from_bytecode.ok()) {
      if (!from_text.ok()) {
        ++both_unsupported;
        continue;
      }
      ++differ;
      std::printf("DIFF %s: the bytecode fails (%s) but the text reads\n", shown.c_str(),
                  from_bytecode.status().ToString().c_str());
      continue;
    }
    if (!from_text.ok()) {
      ++differ;
      std::printf("DIFF %s: %s\n", shown.c_str(), from_text.status().ToString().c_str());
      continue;
    }
    stablert::Status verified = stablert::ir::Verify(**from_text);
    if (!verified.ok()) {
      ++differ;
      std::printf("DIFF %s: the text's IR fails verification: %s\n", shown.c_str(), verified.ToString().c_str());
      continue;
    }
    if (as_jax_prints) {  // another program than the artifact: reading and verifying is the check
      ++read_as_printed;
      continue;
    }
    stablert::ir::PrintOptions options;
    options.max_elements = int64_t{1} << 40;
    std::string a = stablert::ir::PrintModule(**from_bytecode, options);
    std::string b = stablert::ir::PrintModule(**from_text, options);
    if (a != b) {
      ++differ;
      std::printf("DIFF %s: %s\n", shown.c_str(), FirstDifference(a, b).c_str());
      continue;
    }
    if (generic) {
      options.locations = true;
      a = stablert::ir::PrintModule(**from_bytecode, options);
      b = stablert::ir::PrintModule(**from_text, options);
      if (a != b) {
        ++differ;
        std::printf("DIFF %s (locations): %s\n", shown.c_str(), FirstDifference(a, b).c_str());
        continue;
      }
    }
    ++same;
  }
  std::printf("text corpus: %zu texts: %d import as their bytecode does, %d as JAX prints them read and verify, "
              "%d differ, %d unsupported by both readers, %d without bytecode\n",
              texts.size(), same, read_as_printed, differ, both_unsupported, missing);
  return differ == 0 && missing == 0 && !texts.empty() ? 0 : 1;
}
