// The one place StableRT reads its environment variables (STABLERT_*, and XLA_FLAGS for
// --xla_dump_to). Every setting is parsed strictly: a value that is not one of the allowed
// spellings or is out of range is InvalidArgument naming the variable, the value and what is
// allowed — never silently defaulted. An unset or empty variable means the default.
//
// Which layer checks what (docs/configuration.md):
//   - PJRT_Client_Create checks every variable (CheckEnvironment), so a mistake fails the
//     client JAX creates, with the message shown to the user;
//   - compile-time settings (partitioner, dump directory) are read again at each compilation
//     and collective-timeout at each execution that has collectives, so a change after client
//     creation takes effect; a bad value then fails that compilation or execution.
//
// The generic parsers (ParseBool, ParseInt, ParseSeconds) also serve PJRT create options.
// Thread-safe as far as getenv is: callers must not setenv concurrently.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace stablert::env {

inline constexpr char kDeviceCount[] = "STABLERT_DEVICE_COUNT";
inline constexpr char kCollectiveTimeout[] = "STABLERT_COLLECTIVE_TIMEOUT_SECONDS";
inline constexpr char kCollectiveAddress[] = "STABLERT_COLLECTIVE_ADDRESS";
inline constexpr char kPartitioner[] = "STABLERT_PARTITIONER";
inline constexpr char kDebugPartitioner[] = "STABLERT_DEBUG_PARTITIONER";
inline constexpr char kDumpDir[] = "STABLERT_DUMP_DIR";
inline constexpr char kIsa[] = "STABLERT_ISA";
inline constexpr char kXlaFlags[] = "XLA_FLAGS";

inline constexpr int64_t kMaxDeviceCount = 4096;
inline constexpr double kMinTimeoutSeconds = 0.001;
inline constexpr double kMaxTimeoutSeconds = 86400;  // one day
inline constexpr std::chrono::milliseconds kDefaultCollectiveTimeout{60000};

// The variable's value; nullopt if it is unset or empty.
std::optional<std::string> Get(const char* name);

// `what` names the setting in errors ("STABLERT_PARTITIONER", "create option 'device_count'").
// Booleans: 1/0, true/false, on/off, yes/no, in any case.
StatusOr<bool> ParseBool(std::string_view what, std::string_view text);
// A decimal integer (optional sign) in [min, max].
StatusOr<int64_t> ParseInt(std::string_view what, std::string_view text, int64_t min, int64_t max);
// A finite decimal number of seconds in [min, max].
StatusOr<double> ParseSeconds(std::string_view what, std::string_view text, double min, double max);

// The settings, each from its variable or its default.
StatusOr<int> DeviceCount();                                  // 1..kMaxDeviceCount, default 1
StatusOr<std::chrono::milliseconds> CollectiveTimeout();     // default 60 s
// The IPv4 address a multi-process job's collective transport binds and publishes (numeric,
// e.g. 127.0.0.1 for a job on one machine); nullopt: the address the host name resolves to.
StatusOr<std::optional<std::string>> CollectiveAddress();
StatusOr<bool> PartitionerEnabled();                          // default true
StatusOr<bool> DebugPartitioner();                            // default false

// The highest vector instruction set kernels may use (STABLERT_ISA): best (default, what the
// CPU offers), avx512, avx2 or sse4. Whether the CPU has the level is checked where the
// level is applied (kernels/simd/dispatch.h), not here.
enum class Isa { kBest, kAvx512, kAvx2, kSse4 };
StatusOr<Isa> ParseIsa(std::string_view what, std::string_view text);
StatusOr<Isa> IsaLevel();                                     // default kBest

// Where compiled programs are dumped: STABLERT_DUMP_DIR, else --xla_dump_to=DIR in XLA_FLAGS
// (XLA's other flags are XLA's business and ignored). `source` names the setting for
// messages ("STABLERT_DUMP_DIR" or "XLA_FLAGS --xla_dump_to"). Unset: nullopt.
struct DumpDir {
  std::string path;
  std::string source;
};
StatusOr<std::optional<DumpDir>> DumpDirectory();
// The value of --xla_dump_to in an XLA_FLAGS string ("--xla_dump_to=DIR", the value
// optionally in single or double quotes; flags are separated by whitespace as XLA reads
// them; the last one wins), or nullopt. XLA's "-" (stdout) and "sponge"
// destinations are InvalidArgument pointing to STABLERT_DUMP_DIR.
StatusOr<std::optional<std::string>> XlaDumpTo(std::string_view xla_flags);

// Reads every setting above; the first error.
Status CheckEnvironment();

}  // namespace stablert::env
