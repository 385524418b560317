#include "runtime/dump.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/hash.h"

namespace stablert::runtime {
namespace {

int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string SafeFileName(std::string_view name) {
  std::string out;
  for (char c : name.substr(0, 96))
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return out.empty() ? "main" : out;
}

}  // namespace

Status PrepareDumpDirectory(const env::DumpDir& dir) {
  const std::string where = dir.source + "=" + dir.path;
  std::error_code error;
  std::filesystem::create_directories(dir.path, error);
  if (error && !std::filesystem::is_directory(dir.path))
    return InvalidArgument(where + ": cannot create the dump directory: " + error.message());
  if (!std::filesystem::is_directory(dir.path, error))
    return InvalidArgument(where + ": the dump path is not a directory");
  if (::access(dir.path.c_str(), W_OK | X_OK) != 0)
    return InvalidArgument(where + ": the dump directory is not writable: " + std::strerror(errno));
  return OkStatus();
}

CompileTimer::CompileTimer() : start_us_(NowMicros()), last_us_(start_us_) {}

void CompileTimer::EndPhase(std::string_view name) {
  int64_t now = NowMicros();
  phases_.emplace_back(std::string(name), now - last_us_);
  last_us_ = now;
}

void CompileTimer::AddParts(std::string_view phase, Times parts_us) {
  parts_.emplace_back(std::string(phase), std::move(parts_us));
}

void CompileTimer::SetCounter(std::string_view name, int64_t value) {
  for (auto& [key, count] : counters_)
    if (key == name) {
      count = value;
      return;
    }
  counters_.emplace_back(std::string(name), value);
}

namespace {

std::string JsonObject(const CompileTimer::Times& entries) {
  std::string out = "{";
  for (size_t i = 0; i < entries.size(); ++i)
    out += (i ? ", " : "") + JsonString(entries[i].first) + ": " + std::to_string(entries[i].second);
  return out + "}";
}

}  // namespace

std::string CompileTimer::ToJson(std::string_view module) const {
  std::string out = "{\n  \"module\": " + JsonString(module) + ",\n  \"phases_us\": " + JsonObject(phases_);
  out += ",\n  \"parts_us\": {";
  for (size_t i = 0; i < parts_.size(); ++i)
    out += (i ? ", " : "") + JsonString(parts_[i].first) + ": " + JsonObject(parts_[i].second);
  out += "},\n  \"counters\": " + JsonObject(counters_);
  out += ",\n  \"total_us\": " + std::to_string(last_us_ - start_us_) + "\n}\n";
  return out;
}

CompileDump::CompileDump(std::optional<env::DumpDir> dir, std::string_view program)
    : dir_(std::move(dir)), fingerprint_(Fingerprint64(program)), number_(0) {
  if (!dir_) return;
  static std::atomic<int64_t> counter{0};
  number_ = counter++;
  status_ = PrepareDumpDirectory(*dir_);
  SetModuleName("unread");
}

void CompileDump::SetModuleName(std::string_view name) {
  if (!dir_) return;
  char number[24];
  std::snprintf(number, sizeof number, "%04lld", static_cast<long long>(number_));
  prefix_ = (std::filesystem::path(dir_->path) / ("stablert." + std::to_string(::getpid()) + "." + number + "." +
                                                   SafeFileName(name) + "." + FingerprintToHex(fingerprint_)))
                .string();
}

void CompileDump::Write(std::string_view part, std::string_view contents) {
  if (!dir_ || !status_.ok()) return;
  std::string path = prefix_ + "." + std::string(part);
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  file.close();
  if (!file)
    status_ = InvalidArgument(dir_->source + "=" + dir_->path + ": cannot write the dump file " + path + ": " +
                              std::strerror(errno));
}

}  // namespace stablert::runtime
