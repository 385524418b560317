// stablert_read_check: reads, verifies and prints every StableHLO portable artifact of a
// corpus with the reader alone (no plugin), and compares a golden subset.
//
//   stablert_read_check [--golden DIR] [--update-golden] [--quiet] PATH...
//
// PATH is a *.mlirbc file or a folder searched recursively (a corpus written by
// tests/corpus/generate_corpus.py; its manifest.tsv is cross-checked). Every file is read with
// stablehlo::ReadModule, verified with ir::Verify and printed with ir::PrintModule (with and
// without locations); where <file>.skeleton.txt exists beside it (written by the generator from
// StableHLO's own reader), the import's skeleton (skeleton.h) must equal it, and where
// <file>.attrs.txt exists, every op's attributes must match MLIR's decoding. With --golden,
// every golden text GOLDEN/<category>/<name>.txt must match the printed form of its corpus
// file(s) (see corpus.h); --update-golden rewrites the golden
// files that exist instead of comparing. Prints counts per category and version.
// Exit status: 0 if every file reads, verifies and prints and every golden matches; 1 on any
// failure (each listed on stderr); 2 on bad usage.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "corpus.h"
#include "skeleton.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/read_module.h"

namespace {

namespace fs = std::filesystem;
using stablert::tools::CorpusFile;

struct Options {
  std::vector<fs::path> roots;
  fs::path golden;
  bool update_golden = false;
  bool quiet = false;
};

struct Tally {
  std::map<std::string, std::map<std::string, int>> read;  // category -> version -> files
  std::map<std::string, std::map<std::string, int>> unserializable;
  std::set<std::string> versions;
  std::vector<std::string> errors;
  size_t bytes = 0;
  double read_seconds = 0;
  int goldens_compared = 0;
  int skeletons_compared = 0;
  int attribute_listings_compared = 0;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Reads, verifies and prints one file; returns the printed form ("" on failure).
std::string Check(const CorpusFile& file, Tally* tally) {
  std::string bytes = ReadFile(file.path);
  auto start = std::chrono::steady_clock::now();
  auto module = stablert::stablehlo::ReadModule(bytes);
  tally->read_seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  tally->bytes += bytes.size();
  if (!module.ok()) {
    tally->errors.push_back(file.key + ": read: " + module.status().ToString());
    return "";
  }
  stablert::Status verified = stablert::ir::Verify(**module);
  if (!verified.ok()) {
    tally->errors.push_back(file.key + ": verify: " + verified.ToString());
    return "";
  }
  stablert::ir::PrintOptions with_locations;
  with_locations.locations = true;
  if (stablert::ir::PrintModule(**module, with_locations).empty()) {
    tally->errors.push_back(file.key + ": print: empty output");
    return "";
  }
  fs::path reference = file.path;
  reference.replace_extension(".skeleton.txt");
  if (fs::exists(reference)) {
    ++tally->skeletons_compared;
    std::string expected = ReadFile(reference);
    std::string actual = stablert::tools::Skeleton(**module);
    if (expected != actual) {
      tally->errors.push_back(file.key + ": import differs from StableHLO's reader (" +
                              reference.filename().string() + "): " +
                              stablert::tools::FirstDifference(expected, actual));
      return "";
    }
  }
  fs::path listing = file.path;
  listing.replace_extension(".attrs.txt");
  if (fs::exists(listing)) {
    ++tally->attribute_listings_compared;
    std::string difference = stablert::tools::CompareAttributes(**module, ReadFile(listing));
    if (!difference.empty()) {
      tally->errors.push_back(file.key + ": attributes differ from MLIR's (" +
                              listing.filename().string() + "): " + difference);
      return "";
    }
  }
  ++tally->read[file.category][file.version];
  tally->versions.insert(file.version);
  return stablert::ir::PrintModule(**module);
}

void CompareGolden(const Options& options, const CorpusFile& file, const std::string& text,
                   std::set<std::string>* used, Tally* tally) {
  fs::path golden = stablert::tools::GoldenFor(options.golden, file);
  if (golden.empty()) return;
  fs::path relative = golden.lexically_relative(options.golden);
  used->insert((relative.parent_path() / relative.stem()).generic_string());
  if (text.empty()) return;  // already reported
  ++tally->goldens_compared;
  if (options.update_golden) {
    std::ofstream(golden, std::ios::binary) << text;
    return;
  }
  std::string expected = ReadFile(golden);
  if (expected != text) {
    tally->errors.push_back(file.key + ": differs from " + golden.string() + ": " +
                            stablert::tools::FirstDifference(expected, text));
  }
}

void CheckRoot(const Options& options, const fs::path& root, std::set<std::string>* goldens_used,
               Tally* tally) {
  std::vector<CorpusFile> files = stablert::tools::ListCorpus(root);
  if (files.empty()) tally->errors.push_back(root.string() + ": no *.mlirbc files");
  auto manifest = stablert::tools::ReadManifest(root, &tally->errors);
  stablert::tools::CheckManifest(manifest, files, &tally->errors);
  for (const auto& entry : manifest) {
    if (entry.status == "ok") continue;
    ++tally->unserializable[entry.category][entry.version];
    tally->versions.insert(entry.version);
  }
  for (const CorpusFile& file : files) {
    std::string text = Check(file, tally);
    if (!options.golden.empty()) CompareGolden(options, file, text, goldens_used, tally);
  }
}

void PrintTable(const char* title, const std::map<std::string, std::map<std::string, int>>& rows,
                const std::set<std::string>& versions) {
  if (rows.empty()) return;
  std::printf("%-16s", title);
  for (const auto& v : versions) std::printf(" %9s", v.c_str());
  std::printf(" %9s\n", "total");
  std::map<std::string, int> column_totals;
  int total = 0;
  for (const auto& [category, counts] : rows) {
    std::printf("%-16s", category.c_str());
    int row = 0;
    for (const auto& v : versions) {
      auto it = counts.find(v);
      int n = it == counts.end() ? 0 : it->second;
      std::printf(" %9d", n);
      row += n;
      column_totals[v] += n;
    }
    std::printf(" %9d\n", row);
    total += row;
  }
  std::printf("%-16s", "total");
  for (const auto& v : versions) std::printf(" %9d", column_totals[v]);
  std::printf(" %9d\n\n", total);
}

int Usage() {
  std::fprintf(stderr,
               "usage: stablert_read_check [--golden DIR] [--update-golden] [--quiet] PATH...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--golden") == 0 && i + 1 < argc) {
      options.golden = argv[++i];
    } else if (std::strcmp(argv[i], "--update-golden") == 0) {
      options.update_golden = true;
    } else if (std::strcmp(argv[i], "--quiet") == 0) {
      options.quiet = true;
    } else if (argv[i][0] == '-') {
      return Usage();
    } else {
      options.roots.push_back(argv[i]);
    }
  }
  if (options.roots.empty() || (options.update_golden && options.golden.empty())) return Usage();

  Tally tally;
  std::set<std::string> goldens_used;
  for (const fs::path& root : options.roots) CheckRoot(options, root, &goldens_used, &tally);
  if (!options.golden.empty()) {
    for (const std::string& golden : stablert::tools::ListGoldens(options.golden)) {
      if (!goldens_used.count(golden)) {
        tally.errors.push_back("golden " + golden + ".txt: no corpus file to compare");
      }
    }
  }

  if (!options.quiet) {
    PrintTable("read+verified", tally.read, tally.versions);
    PrintTable("unserializable", tally.unserializable, tally.versions);
  }
  double mb = tally.bytes / 1e6;
  std::printf(
      "%.2f MB read in %.3f s (%.1f MB/s); %d skeleton, %d attribute and %d golden "
      "comparisons%s; %zu failures\n",
      mb, tally.read_seconds, tally.read_seconds > 0 ? mb / tally.read_seconds : 0.0,
      tally.skeletons_compared, tally.attribute_listings_compared, tally.goldens_compared,
      options.update_golden ? " (updated)" : "", tally.errors.size());
  for (const std::string& e : tally.errors) std::fprintf(stderr, "FAIL %s\n", e.c_str());
  return tally.errors.empty() ? 0 : 1;
}
