#include "run_program.h"

#include <chrono>

namespace stablert::cli {
namespace {

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Where each partition's shard of every output lies: what the executable reports, else the
// program's own shardings.
Status ReadResultLayouts(const ProgramFile& file, ProgramRun& run) {
  run.result_layouts = file.result_layouts;
  if (file.num_partitions == 1) return OkStatus();
  StatusOr<std::optional<std::vector<std::string>>> shardings = run.executable->OutputShardings();
  if (!shardings.ok()) return shardings.status().WithPrefix("reading the executable's output shardings");
  if (!*shardings) return OkStatus();
  if ((*shardings)->size() != file.results.size())
    return Internal("the executable reports " + std::to_string((*shardings)->size()) + " output shardings for " +
                    std::to_string(file.results.size()) + " results");
  run.result_layouts.clear();
  for (size_t i = 0; i < file.results.size(); ++i) {
    STABLERT_ASSIGN_OR_RETURN(passes::ShardLayout layout,
                              passes::LayoutFromOpSharding((**shardings)[i], file.results[i].dims, file.num_partitions,
                                                           "output " + std::to_string(i)));
    run.result_layouts.push_back(std::move(layout));
  }
  run.result_layouts_from_executable = true;
  return OkStatus();
}

}  // namespace

StatusOr<ProgramRun> Prepare(const std::string& plugin_name, const ProgramFile& file,
                             const std::vector<host::Literal>& inputs) {
  int devices = file.num_devices();
  if (devices > 1 && !file.has_signature)
    return Unimplemented("a program for " + std::to_string(devices) +
                         " devices needs its signature and shardings read; give it as bytecode or a jax.export artifact");
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<const host::Plugin> plugin, host::Plugin::Load(plugin_name));
  ProgramRun run;
  run.file = &file;
  STABLERT_ASSIGN_OR_RETURN(run.client, host::Client::Create(plugin));
  if (run.client->addressable_devices().size() < static_cast<size_t>(devices)) {
    // CPU plugins (StableRT's and XLA's) take their device count as a create option.
    host::ClientOptions options;
    options.create_options = {{"cpu_device_count", int64_t{devices}}};
    run.client.reset();
    StatusOr<std::shared_ptr<host::Client>> client = host::Client::Create(plugin, options);
    if (!client.ok())
      return client.status().WithPrefix("the program needs " + std::to_string(devices) +
                                        " devices; creating a client with cpu_device_count=" + std::to_string(devices));
    run.client = *client;
    if (run.client->addressable_devices().size() < static_cast<size_t>(devices))
      return FailedPrecondition(plugin->path() + ": the program needs " + std::to_string(devices) + " devices; the client has " +
                                std::to_string(run.client->addressable_devices().size()));
  }
  if (run.client->addressable_devices().empty())
    return FailedPrecondition(plugin->path() + ": the client has no addressable device");
  host::CompileOptions options;
  options.num_replicas = file.num_replicas;
  options.num_partitions = file.num_partitions;
  options.use_shardy_partitioner = file.uses_shardy;
  auto start = std::chrono::steady_clock::now();
  STABLERT_ASSIGN_OR_RETURN(run.executable, host::LoadedExecutable::Compile(run.client, file.program, options));
  run.compile_ms = MillisecondsSince(start);
  if (run.executable->devices().size() != static_cast<size_t>(devices))
    return Internal("the executable runs on " + std::to_string(run.executable->devices().size()) + " devices; " +
                    std::to_string(devices) + " were asked for");
  STABLERT_RETURN_IF_ERROR(ReadResultLayouts(file, run));
  for (int d = 0; d < devices; ++d) {
    const host::Device& device = run.executable->devices()[static_cast<size_t>(d)];
    int partition = d % file.num_partitions;
    std::vector<host::Buffer> buffers;
    for (size_t i = 0; i < inputs.size(); ++i) {
      host::Literal shard;
      const host::Literal* value = &inputs[i];
      if (!file.argument_layouts.empty()) {
        STABLERT_ASSIGN_OR_RETURN(shard, ShardOf(inputs[i], file.argument_layouts[i], partition));
        value = &shard;
      }
      STABLERT_ASSIGN_OR_RETURN(host::Buffer buffer, host::Buffer::FromHost(run.client, value->view(), device));
      buffers.push_back(std::move(buffer));
    }
    run.arguments.push_back(std::move(buffers));
  }
  return run;
}

StatusOr<host::ExecuteResult> Launch(const ProgramRun& run) {
  std::vector<std::vector<const host::Buffer*>> arguments;
  for (const std::vector<host::Buffer>& device : run.arguments) {
    arguments.emplace_back();
    for (const host::Buffer& buffer : device) arguments.back().push_back(&buffer);
  }
  // Arguments are reused across runs: none may be donated.
  std::vector<int64_t> keep;
  for (size_t i = 0; i < (run.arguments.empty() ? 0 : run.arguments[0].size()); ++i) keep.push_back(static_cast<int64_t>(i));
  return run.executable->Execute(arguments, keep);
}

Status AwaitAll(const host::ExecuteResult& result) {
  Status first = OkStatus();
  for (const host::Future& done : result.done) {
    Status status = done.Await();
    if (first.ok() && !status.ok()) first = status;
  }
  return first;
}

StatusOr<host::ExecuteResult> ExecuteOnce(const ProgramRun& run) {
  STABLERT_ASSIGN_OR_RETURN(host::ExecuteResult result, Launch(run));
  STABLERT_RETURN_IF_ERROR(AwaitAll(result));
  return result;
}

StatusOr<std::vector<NamedOutput>> ReadBack(const ProgramRun& run, const host::ExecuteResult& result) {
  const ProgramFile& file = *run.file;
  std::vector<NamedOutput> outputs;
  for (int r = 0; r < file.num_replicas; ++r) {
    size_t first_device = static_cast<size_t>(r * file.num_partitions);
    const std::vector<host::Buffer>& own = result.outputs.at(first_device);
    for (size_t i = 0; i < own.size(); ++i) {
      NamedOutput out;
      out.label = "output " + std::to_string(i) + (file.num_replicas > 1 ? " (replica " + std::to_string(r) + ")" : "");
      STABLERT_ASSIGN_OR_RETURN(host::Literal first, own[i].ToLiteral());
      bool sharded = file.num_partitions > 1 && i < run.result_layouts.size();
      if (!sharded) {
        out.value = std::move(first);
      } else {
        const passes::ShardLayout& layout = run.result_layouts[i];
        out.value = host::Literal{first.type, file.results[i].dims, {}};
        STABLERT_ASSIGN_OR_RETURN(int64_t bytes, host::DenseBytes(first.type, file.results[i].dims));
        out.value.bytes.assign(static_cast<size_t>(bytes), 0);
        for (int p = 0; p < file.num_partitions; ++p) {
          if (layout.first_holder.at(static_cast<size_t>(p)) != p) continue;
          if (layout.partial_group_size != 1)
            return Unimplemented(out.label + ": an unreduced (partial-sum) result");
          host::Literal shard;
          if (p == 0) {
            shard = std::move(first);
          } else {
            STABLERT_ASSIGN_OR_RETURN(shard, result.outputs.at(first_device + static_cast<size_t>(p)).at(i).ToLiteral());
          }
          STABLERT_RETURN_IF_ERROR(PlaceShard(shard, layout, p, out.value).WithPrefix(out.label));
        }
      }
      outputs.push_back(std::move(out));
    }
  }
  return outputs;
}

StatusOr<std::vector<NamedOutput>> RunOn(const std::string& plugin, const ProgramFile& file,
                                         const std::vector<host::Literal>& inputs) {
  STABLERT_ASSIGN_OR_RETURN(ProgramRun run, Prepare(plugin, file, inputs));
  STABLERT_ASSIGN_OR_RETURN(host::ExecuteResult result, ExecuteOnce(run));
  return ReadBack(run, result);
}

}  // namespace stablert::cli
