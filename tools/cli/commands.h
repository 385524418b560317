// The `stablert` subcommands on the host library. Each takes the arguments after its name and
// returns the process exit status: 0 success, 1 an error (message on stderr), 2 bad usage,
// 3 (compare) outputs that differ.
#pragma once

#include <string>
#include <vector>

namespace stablert::cli {

int InfoCommand(const std::vector<std::string>& args);
int RunCommand(const std::vector<std::string>& args);
int BenchCommand(const std::vector<std::string>& args);
int CompareCommand(const std::vector<std::string>& args);
int ConformCommand(const std::vector<std::string>& args);
// One conformance test in this process (the suite's child side; not in --help).
int ConformChildCommand(const std::vector<std::string>& args);

// Prints "error: <message>" to stderr and returns 1.
int Fail(const std::string& message);
// Prints "usage: <usage>" to stderr and returns 2.
int BadUsage(const std::string& usage, const std::string& problem);

}  // namespace stablert::cli
