#include "run_program.h"

#include <chrono>

namespace stablert::cli {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

StatusOr<ProgramRun> Prepare(const std::string& plugin_name, const ProgramFile& file,
                             const std::vector<host::Literal>& inputs) {
  if (file.num_partitions * file.num_replicas != 1)
    return Unimplemented("the program is for " + std::to_string(file.num_replicas) + " replica(s) x " +
                         std::to_string(file.num_partitions) +
                         " partition(s); the CLI runs single-device programs");
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<const host::Plugin> plugin, host::Plugin::Load(plugin_name));
  ProgramRun run;
  STABLERT_ASSIGN_OR_RETURN(run.client, host::Client::Create(plugin));
  if (run.client->addressable_devices().empty())
    return FailedPrecondition(plugin->path() + ": the client has no addressable device");
  auto start = std::chrono::steady_clock::now();
  STABLERT_ASSIGN_OR_RETURN(run.executable, host::LoadedExecutable::Compile(run.client, file.program));
  run.compile_ms = MillisecondsSince(start);
  const host::Device& device = run.executable->devices().at(0);
  for (const host::Literal& input : inputs) {
    STABLERT_ASSIGN_OR_RETURN(host::Buffer buffer, host::Buffer::FromHost(run.client, input.view(), device));
    run.arguments.push_back(std::move(buffer));
  }
  return run;
}

StatusOr<host::ExecuteResult> Launch(const ProgramRun& run) {
  std::vector<const host::Buffer*> arguments;
  for (const host::Buffer& buffer : run.arguments) arguments.push_back(&buffer);
  // Arguments are reused across runs: none may be donated.
  std::vector<int64_t> keep;
  for (size_t i = 0; i < arguments.size(); ++i) keep.push_back(static_cast<int64_t>(i));
  return run.executable->Execute({arguments}, keep);
}

StatusOr<std::vector<host::Buffer>> ExecuteOnce(const ProgramRun& run) {
  STABLERT_ASSIGN_OR_RETURN(host::ExecuteResult result, Launch(run));
  STABLERT_RETURN_IF_ERROR(result.done.at(0).Await());
  return std::move(result.outputs.at(0));
}

StatusOr<std::vector<host::Literal>> ReadBack(const std::vector<host::Buffer>& outputs) {
  std::vector<host::Literal> literals;
  for (const host::Buffer& buffer : outputs) {
    STABLERT_ASSIGN_OR_RETURN(host::Literal literal, buffer.ToLiteral());
    literals.push_back(std::move(literal));
  }
  return literals;
}

}  // namespace stablert::cli
