#include "corpus.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace stablert::tools {
namespace {

namespace fs = std::filesystem;

CorpusFile Describe(const fs::path& root, const fs::path& path) {
  CorpusFile file;
  file.path = path;
  fs::path relative = path.lexically_relative(root).parent_path();
  file.category = relative.empty() || relative == "." ? "-" : relative.generic_string();
  std::string stem = path.stem().string();
  size_t dot = stem.find('.');
  file.program = stem.substr(0, dot);
  file.version = "-";
  if (dot != std::string::npos) {
    file.version = stem.substr(dot + 1);
    std::replace(file.version.begin(), file.version.end(), '_', '.');
  }
  file.key = file.category + "/" + stem;
  return file;
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, '\t')) out.push_back(field);
  return out;
}

}  // namespace

std::vector<CorpusFile> ListCorpus(const fs::path& root) {
  std::vector<CorpusFile> out;
  std::error_code ec;
  if (fs::is_regular_file(root, ec)) {
    out.push_back(Describe(root.parent_path(), root));
    return out;
  }
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".mlirbc") {
      out.push_back(Describe(root, it->path()));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const CorpusFile& a, const CorpusFile& b) { return a.key < b.key; });
  return out;
}

std::vector<ManifestEntry> ReadManifest(const fs::path& root, std::vector<std::string>* errors) {
  std::vector<ManifestEntry> out;
  std::ifstream in(root / "manifest.tsv");
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::vector<std::string> fields = SplitTabs(line);
    if (fields.size() != 5) {
      errors->push_back("manifest.tsv line " + std::to_string(number) + ": expected 5 fields");
      continue;
    }
    out.push_back({fields[0], fields[1], fields[2], fields[3], fields[4]});
  }
  return out;
}

void CheckManifest(const std::vector<ManifestEntry>& manifest,
                   const std::vector<CorpusFile>& files, std::vector<std::string>* errors) {
  if (manifest.empty()) return;
  std::set<std::string> listed, found;
  for (const ManifestEntry& e : manifest) {
    if (e.status != "ok") continue;
    std::string version = e.version;
    std::replace(version.begin(), version.end(), '.', '_');
    listed.insert(e.category + "/" + e.program + "." + version);
  }
  for (const CorpusFile& f : files) found.insert(f.key);
  for (const std::string& key : listed) {
    if (!found.count(key)) errors->push_back(key + ": in manifest.tsv but no file");
  }
  for (const std::string& key : found) {
    if (!listed.count(key)) errors->push_back(key + ": file not in manifest.tsv");
  }
}

fs::path GoldenFor(const fs::path& golden_root, const CorpusFile& file) {
  fs::path dir = golden_root / file.category;
  fs::path specific = dir / (file.path.stem().string() + ".txt");
  if (fs::exists(specific)) return specific;
  fs::path shared = dir / (file.program + ".txt");
  if (fs::exists(shared)) return shared;
  return {};
}

std::vector<std::string> ListGoldens(const fs::path& golden_root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(golden_root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".txt") continue;
    fs::path relative = it->path().lexically_relative(golden_root);
    out.push_back((relative.parent_path() / relative.stem()).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string FirstDifference(const std::string& expected, const std::string& actual) {
  std::istringstream a(expected), b(actual);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool more_a = static_cast<bool>(std::getline(a, la));
    bool more_b = static_cast<bool>(std::getline(b, lb));
    if (!more_a && !more_b) return "identical";
    if (!more_a) la = "<end>";
    if (!more_b) lb = "<end>";
    if (la != lb || !more_a || !more_b) {
      return "line " + std::to_string(line) + ": expected `" + la + "`, got `" + lb + "`";
    }
  }
}

}  // namespace stablert::tools
