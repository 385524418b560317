// Read benchmark: stablehlo::ReadModule throughput on a large program and import plus
// verification latency of a typical training step (programs from make_large_program.py).
//
//   .venv/bin/python benchmarks/make_large_program.py build/bench
//   build/benchmarks/read_benchmark --programs=build/bench [--benchmark_* flags]
//
// Reports bytes_per_second (MB/s of bytecode) for every benchmark; targets: >= 50 MB/s for
// ReadModule on transformer_unrolled.mlirbc, < 1 ms for ReadModule+Verify of
// training_step.mlirbc. The `.mlir` rows read the same programs as MLIR text (target:
// within 2x of the bytecode's ReadModule time). Fails (exit 1) if a program is missing or does not read.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/read_module.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

size_t CountOps(const stablert::ir::Region& region) {
  size_t n = 0;
  for (const auto& block : region.blocks) {
    for (const auto& op : block.ops) {
      ++n;
      for (const auto& inner : op.regions) n += CountOps(inner);
    }
  }
  return n;
}

enum class Stage { kRead, kReadVerify, kReadVerifyPrint };

// Frees a module outside the timed region, with the heap consolidation glibc would otherwise
// defer into the next iteration's first large allocation (the cost of freeing ~10^6 blocks,
// not of reading): a large-bin request consolidates the fast bins. ReadModuleAndFree/ keeps
// both inside.
void FreeUntimed(benchmark::State& state,
                 stablert::StatusOr<std::unique_ptr<stablert::ir::Module>>& module) {
  state.PauseTiming();
  module = stablert::Status(stablert::StatusCode::kCancelled, "freed");
  void* large = std::malloc(4096);
  benchmark::DoNotOptimize(large);
  std::free(large);
  state.ResumeTiming();
}

void ReadAndFree(benchmark::State& state, const std::string* bytes) {
  for (auto _ : state) {
    auto module = stablert::stablehlo::ReadModule(*bytes);
    if (!module.ok()) {
      state.SkipWithError(module.status().ToString().c_str());
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes->size()));
}

void Run(benchmark::State& state, const std::string* bytes, Stage stage) {
  for (auto _ : state) {
    auto module = stablert::stablehlo::ReadModule(*bytes);
    if (!module.ok()) {
      state.SkipWithError(module.status().ToString().c_str());
      return;
    }
    if (stage != Stage::kRead) {
      stablert::Status verified = stablert::ir::Verify(**module);
      if (!verified.ok()) {
        state.SkipWithError(verified.ToString().c_str());
        return;
      }
    }
    if (stage == Stage::kReadVerifyPrint) {
      benchmark::DoNotOptimize(stablert::ir::PrintModule(**module));
    }
    benchmark::DoNotOptimize(module);
    FreeUntimed(state, module);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(bytes->size()));
  auto module = stablert::stablehlo::ReadModule(*bytes);
  if (module.ok()) {
    size_t ops = 0;
    for (const auto& f : (*module)->functions) ops += CountOps(f.body);
    state.counters["ops"] = static_cast<double>(ops);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = ".";
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--programs=", 11) == 0) {
      dir = argv[i] + 11;
    } else {
      args.push_back(argv[i]);
    }
  }
  static std::vector<std::pair<std::string, std::string>> programs;
  // Each program as bytecode and as MLIR text (<name>.mlir, the text reader's input).
  for (const char* file : {"transformer_unrolled.mlirbc", "training_step.mlirbc",
                           "transformer_unrolled.mlir", "training_step.mlir"}) {
    std::string name = file;
    if (name.size() > 7 && name.substr(name.size() - 7) == ".mlirbc") name.resize(name.size() - 7);
    std::string path = dir + "/" + file;
    std::string bytes = ReadFile(path);
    if (bytes.empty()) {
      std::fprintf(stderr, "read_benchmark: cannot read %s (run make_large_program.py)\n",
                   path.c_str());
      return 1;
    }
    auto module = stablert::stablehlo::ReadModule(bytes);
    if (!module.ok()) {
      std::fprintf(stderr, "read_benchmark: %s: %s\n", path.c_str(),
                   module.status().ToString().c_str());
      return 1;
    }
    programs.emplace_back(name, std::move(bytes));
  }
  for (const auto& [name, bytes] : programs) {
    benchmark::RegisterBenchmark(("ReadModule/" + name).c_str(), Run, &bytes, Stage::kRead)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("ReadModuleAndFree/" + name).c_str(), ReadAndFree, &bytes)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("ReadVerify/" + name).c_str(), Run, &bytes,
                                 Stage::kReadVerify)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("ReadVerifyPrint/" + name).c_str(), Run, &bytes,
                                 Stage::kReadVerifyPrint)
        ->Unit(benchmark::kMillisecond);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
