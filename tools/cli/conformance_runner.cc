// The conformance suite's runner: child processes, results, JSON reports.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "conformance.h"

namespace stablert::conform {
namespace {

constexpr char kResultPrefix[] = "CONFORM-RESULT ";

std::string JsonEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out;
}

// The string value of "key" in one report line (as ReportJson writes it).
std::optional<std::string> JsonField(const std::string& line, const std::string& key) {
  std::string marker = "\"" + key + "\": \"";
  size_t at = line.find(marker);
  if (at == std::string::npos) return std::nullopt;
  std::string out;
  for (size_t i = at + marker.size(); i < line.size(); ++i) {
    char c = line[i];
    if (c == '"') return out;
    if (c == '\\' && i + 1 < line.size()) {
      char next = line[++i];
      if (next == 'n') out += '\n';
      else if (next == 't') out += '\t';
      else if (next == 'u' && i + 4 < line.size()) {
        out += static_cast<char>(std::stoi(line.substr(i + 1, 4), nullptr, 16));
        i += 4;
      } else out += next;
    } else {
      out += c;
    }
  }
  return std::nullopt;
}

std::optional<Outcome> OutcomeByName(const std::string& name) {
  for (Outcome o : {Outcome::kPass, Outcome::kFail, Outcome::kUnsupported, Outcome::kCrash, Outcome::kTimeout})
    if (name == OutcomeName(o)) return o;
  return std::nullopt;
}

// Runs one test in a child; the child's stdout carries the result line.
Result RunOne(const std::string& self, const std::string& plugin, const TestCase& test,
              std::chrono::seconds timeout, const std::string& diff_with) {
  Result result;
  result.name = test.name;
  auto start = std::chrono::steady_clock::now();
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    result.detail = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  pid_t child = fork();
  if (child == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    if (diff_with.empty())
      execl(self.c_str(), self.c_str(), "conform-child", test.name, plugin.c_str(), static_cast<char*>(nullptr));
    else
      execl(self.c_str(), self.c_str(), "conform-child", test.name, plugin.c_str(), "--diff-with", diff_with.c_str(),
            static_cast<char*>(nullptr));
    std::fprintf(stderr, "exec %s: %s\n", self.c_str(), std::strerror(errno));
    _exit(127);
  }
  close(pipe_fds[1]);
  if (child < 0) {
    close(pipe_fds[0]);
    result.detail = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  std::string output;
  bool timed_out = false;
  auto deadline = start + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fd{pipe_fds[0], POLLIN, 0};
    int ready = poll(&fd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    char buffer[4096];
    ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n <= 0) break;  // the child closed its output (exited)
    output.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  if (timed_out) kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (timed_out) {
    result.outcome = Outcome::kTimeout;
    result.detail = "killed after " + std::to_string(timeout.count()) + " s";
    return result;
  }
  size_t at = output.find(kResultPrefix);
  if (WIFSIGNALED(status) || at == std::string::npos) {
    result.outcome = Outcome::kCrash;
    result.detail = WIFSIGNALED(status) ? std::string("signal ") + strsignal(WTERMSIG(status))
                                        : "exited with status " + std::to_string(WEXITSTATUS(status)) +
                                              " without a result";
    return result;
  }
  std::string line = output.substr(at + std::strlen(kResultPrefix));
  line = line.substr(0, line.find('\n'));
  size_t space = line.find(' ');
  std::optional<Outcome> outcome = OutcomeByName(line.substr(0, space));
  result.outcome = outcome.value_or(Outcome::kFail);
  result.detail = space == std::string::npos ? "" : line.substr(space + 1);
  return result;
}

}  // namespace

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass: return "pass";
    case Outcome::kFail: return "fail";
    case Outcome::kUnsupported: return "unsupported";
    case Outcome::kCrash: return "crash";
    case Outcome::kTimeout: return "timeout";
  }
  return "fail";
}

int RunChild(const std::string& name, const std::string& plugin_name, const std::string& diff_with) {
  const TestCase* test = nullptr;
  for (const std::vector<TestCase>* tier : {&AllTests(), &DifferentialTests()})
    for (const TestCase& t : *tier)
      if (name == t.name) test = &t;
  auto report = [](Outcome outcome, const Status& status) {
    std::string detail(status.ok() ? "" : status.ToString());
    for (char& c : detail)
      if (c == '\n') c = ' ';
    std::printf("%s%s %s\n", kResultPrefix, OutcomeName(outcome), detail.c_str());
    std::fflush(stdout);
    return 0;
  };
  if (!test) return report(Outcome::kFail, InvalidArgument("no conformance test named '" + name + "'"));
  Context context;
  context.diff_with = diff_with;
  StatusOr<std::shared_ptr<const host::Plugin>> plugin = host::Plugin::Load(plugin_name);
  if (!plugin.ok()) return report(Outcome::kFail, plugin.status());
  context.plugin = *plugin;
  StatusOr<std::shared_ptr<host::Client>> client = host::Client::Create(context.plugin);
  if (!client.ok()) return report(Outcome::kFail, client.status());
  context.client = *client;
  Status status = test->body(context);
  if (status.ok()) return report(Outcome::kPass, status);
  if (status.code() == StatusCode::kUnimplemented) return report(Outcome::kUnsupported, status);
  return report(Outcome::kFail, status);
}

std::vector<Result> RunSuite(const std::string& self, const std::string& plugin, const std::string& filter,
                             std::chrono::seconds timeout, const std::string& diff_with) {
  std::vector<Result> results;
  std::vector<const TestCase*> tests;
  for (const TestCase& test : AllTests()) tests.push_back(&test);
  if (!diff_with.empty())
    for (const TestCase& test : DifferentialTests()) tests.push_back(&test);
  for (const TestCase* test : tests) {
    if (!filter.empty() && std::string(test->name).find(filter) == std::string::npos) continue;
    Result result = RunOne(self, plugin, *test, timeout, diff_with);
    std::fprintf(stderr, "%-12s %s%s%s\n", OutcomeName(result.outcome), test->name, result.detail.empty() ? "" : ": ",
                 result.detail.c_str());
    results.push_back(std::move(result));
  }
  return results;
}

std::string ReportJson(const std::string& plugin, const std::string& plugin_version,
                       const std::vector<Result>& results) {
  std::ostringstream out;
  out << "{\n  \"plugin\": \"" << JsonEscape(plugin) << "\",\n  \"pjrt_version\": \"" << JsonEscape(plugin_version)
      << "\",\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3f", r.seconds);
    out << "    {\"name\": \"" << JsonEscape(r.name) << "\", \"outcome\": \"" << OutcomeName(r.outcome)
        << "\", \"seconds\": " << seconds << ", \"detail\": \"" << JsonEscape(r.detail) << "\"}"
        << (i + 1 < results.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  return out.str();
}

StatusOr<std::vector<Result>> ReadReport(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open the report");
  std::vector<Result> results;
  bool in_results = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("\"results\": [") != std::string::npos) {
      in_results = true;
      continue;
    }
    if (!in_results || line.find("\"name\": ") == std::string::npos) continue;
    std::optional<std::string> name = JsonField(line, "name");
    std::optional<std::string> outcome = JsonField(line, "outcome");
    std::optional<Outcome> parsed = outcome ? OutcomeByName(*outcome) : std::nullopt;
    if (!name || !parsed) return InvalidArgument(path + ": not a report written by stablert conform: " + line);
    results.push_back({*name, *parsed, JsonField(line, "detail").value_or(""), 0});
  }
  if (!in_results) return InvalidArgument(path + ": not a report written by stablert conform (no \"results\")");
  return results;
}

}  // namespace stablert::conform
