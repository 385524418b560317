// Corpus bookkeeping for stablert_read_check: which files a corpus holds, what the generator
// recorded about them (manifest.tsv), and the golden text a subset is compared against.
//
// Layout (tests/corpus/generate_corpus.py): ROOT/<category>/<program>.<X_Y_Z>.mlirbc and
// ROOT/manifest.tsv. A file directly under ROOT has category "-"; a stem without a version
// suffix has version "-".
// Failure: functions return error strings instead of throwing; nothing here aborts on input.
// Not thread-safe (plain values, used by one thread).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace stablert::tools {

struct CorpusFile {
  std::filesystem::path path;
  std::string category;  // parent folder relative to the root, "-" at the root
  std::string program;   // stem up to the first '.'
  std::string version;   // "1.17.0" from "<program>.1_17_0", else "-"
  std::string key;       // "<category>/<stem>", stable across runs
};

// Every *.mlirbc file under `root` (or `root` itself if it is a file), sorted by key.
std::vector<CorpusFile> ListCorpus(const std::filesystem::path& root);

struct ManifestEntry {
  std::string category, program, version, status, detail;
};

// ROOT/manifest.tsv, or an empty list if absent. Malformed lines are reported in `errors`.
std::vector<ManifestEntry> ReadManifest(const std::filesystem::path& root,
                                        std::vector<std::string>* errors);

// Cross-checks the manifest against the files found: every "ok" entry has its file and every
// file has an "ok" entry. Appends one message per mismatch to `errors`.
void CheckManifest(const std::vector<ManifestEntry>& manifest,
                   const std::vector<CorpusFile>& files, std::vector<std::string>* errors);

// Golden text for a corpus file: GOLDEN/<category>/<stem>.txt if present, else
// GOLDEN/<category>/<program>.txt (one text for every version). Empty path if neither.
std::filesystem::path GoldenFor(const std::filesystem::path& golden_root, const CorpusFile& file);

// Every golden file under `golden_root` as "<category>/<name>" without ".txt".
std::vector<std::string> ListGoldens(const std::filesystem::path& golden_root);

// The first differing line of two texts, as "line N: expected `a`, got `b`".
std::string FirstDifference(const std::string& expected, const std::string& actual);

}  // namespace stablert::tools
