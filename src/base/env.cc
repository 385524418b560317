#include "base/env.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace stablert::env {
namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

// "STABLERT_X='value' is not ..." — the value quoted so that spaces and empty text show.
std::string Bad(std::string_view what, std::string_view text) {
  return std::string(what) + "='" + std::string(text) + "' is not ";
}

std::string FormatNumber(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

}  // namespace

std::optional<std::string> Get(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  return std::string(value);
}

StatusOr<bool> ParseBool(std::string_view what, std::string_view text) {
  std::string value = Lower(Trim(text));
  for (const char* yes : {"1", "true", "on", "yes"})
    if (value == yes) return true;
  for (const char* no : {"0", "false", "off", "no"})
    if (value == no) return false;
  return InvalidArgument(Bad(what, text) + "a boolean; use 1, true, on or yes to enable and 0, false, off or no to "
                                           "disable (any case)");
}

StatusOr<int64_t> ParseInt(std::string_view what, std::string_view text, int64_t min, int64_t max) {
  std::string_view digits = Trim(text);
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  int64_t value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  std::string range = "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || value < min || value > max)
    return InvalidArgument(Bad(what, text) + range);
  return value;
}

StatusOr<double> ParseSeconds(std::string_view what, std::string_view text, double min, double max) {
  std::string value(Trim(text));
  char* end = nullptr;
  double seconds = value.empty() ? NAN : std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(seconds) || seconds < min || seconds > max)
    return InvalidArgument(Bad(what, text) + "a finite number of seconds in [" + FormatNumber(min) + ", " +
                           FormatNumber(max) + "]");
  return seconds;
}

StatusOr<int> DeviceCount() {
  std::optional<std::string> text = Get(kDeviceCount);
  if (!text) return 1;
  STABLERT_ASSIGN_OR_RETURN(int64_t count, ParseInt(kDeviceCount, *text, 1, kMaxDeviceCount));
  return static_cast<int>(count);
}

StatusOr<std::chrono::milliseconds> CollectiveTimeout() {
  std::optional<std::string> text = Get(kCollectiveTimeout);
  if (!text) return kDefaultCollectiveTimeout;
  STABLERT_ASSIGN_OR_RETURN(double seconds,
                            ParseSeconds(kCollectiveTimeout, *text, kMinTimeoutSeconds, kMaxTimeoutSeconds));
  return std::chrono::milliseconds(std::max<int64_t>(1, std::llround(seconds * 1000)));
}

StatusOr<std::optional<std::string>> CollectiveAddress() {
  std::optional<std::string> text = Get(kCollectiveAddress);
  if (!text) return std::optional<std::string>();
  in_addr parsed{};
  if (::inet_pton(AF_INET, text->c_str(), &parsed) != 1)
    return InvalidArgument(std::string(kCollectiveAddress) + "='" + *text +
                           "' is not a numeric IPv4 address (e.g. 127.0.0.1, or this host's address on the network "
                           "the job's processes share)");
  return text;
}

StatusOr<bool> PartitionerEnabled() {
  std::optional<std::string> text = Get(kPartitioner);
  return text ? ParseBool(kPartitioner, *text) : StatusOr<bool>(true);
}

StatusOr<bool> DebugPartitioner() {
  std::optional<std::string> text = Get(kDebugPartitioner);
  return text ? ParseBool(kDebugPartitioner, *text) : StatusOr<bool>(false);
}

StatusOr<Isa> ParseIsa(std::string_view what, std::string_view text) {
  std::string value = Lower(Trim(text));
  if (value == "best") return Isa::kBest;
  if (value == "avx512") return Isa::kAvx512;
  if (value == "avx2") return Isa::kAvx2;
  if (value == "sse4") return Isa::kSse4;
  return InvalidArgument(Bad(what, text) + "an instruction set level; use best, avx512, avx2 or sse4 (any case)");
}

StatusOr<Isa> IsaLevel() {
  std::optional<std::string> text = Get(kIsa);
  return text ? ParseIsa(kIsa, *text) : StatusOr<Isa>(Isa::kBest);
}

StatusOr<std::optional<std::string>> XlaDumpTo(std::string_view flags) {
  std::optional<std::string> found;
  size_t i = 0;
  while (i < flags.size()) {
    while (i < flags.size() && std::isspace(static_cast<unsigned char>(flags[i]))) ++i;
    if (i == flags.size()) break;
    // One flag: up to unquoted whitespace.
    std::string token;
    char quote = 0;
    for (; i < flags.size(); ++i) {
      char c = flags[i];
      if (quote) {
        if (c == quote) quote = 0;
        else token += c;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        break;
      } else {
        token += c;
      }
    }
    std::string_view flag = token;
    for (std::string_view prefix : {"--xla_dump_to=", "-xla_dump_to="})
      if (flag.starts_with(prefix)) found = std::string(flag.substr(prefix.size()));
  }
  if (found && (*found == "-" || *found == "sponge" || *found == "test_undeclared_outputs_dir"))
    return InvalidArgument(std::string(kXlaFlags) + " --xla_dump_to=" + *found +
                           ": StableRT dumps to a directory only; name one with --xla_dump_to=DIR or " + kDumpDir);
  if (found && found->empty()) return std::optional<std::string>();
  return found;
}

StatusOr<std::optional<DumpDir>> DumpDirectory() {
  if (std::optional<std::string> dir = Get(kDumpDir)) return std::optional<DumpDir>(DumpDir{*dir, kDumpDir});
  if (std::optional<std::string> flags = Get(kXlaFlags)) {
    STABLERT_ASSIGN_OR_RETURN(std::optional<std::string> dir, XlaDumpTo(*flags));
    if (dir) return std::optional<DumpDir>(DumpDir{*dir, std::string(kXlaFlags) + " --xla_dump_to"});
  }
  return std::optional<DumpDir>();
}

Status CheckEnvironment() {
  STABLERT_RETURN_IF_ERROR(DeviceCount().status());
  STABLERT_RETURN_IF_ERROR(CollectiveTimeout().status());
  STABLERT_RETURN_IF_ERROR(CollectiveAddress().status());
  STABLERT_RETURN_IF_ERROR(PartitionerEnabled().status());
  STABLERT_RETURN_IF_ERROR(DebugPartitioner().status());
  STABLERT_RETURN_IF_ERROR(IsaLevel().status());
  STABLERT_RETURN_IF_ERROR(DumpDirectory().status());
  return OkStatus();
}

}  // namespace stablert::env
