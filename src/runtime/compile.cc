// Client::Compile and Client::Load: the one place that wires the reader, the verifier and
// the lowering into an executable, and binds executables to devices.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "base/env.h"
#include "hlo/from_ir.h"
#include "hlo/proto.h"
#include "hlo/text.h"
#include "ir/module.h"
#include "ir/printer.h"
#include "ir/stablehlo_text.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "passes/remove_layout_constraints.h"
#include "plan/lower.h"
#include "passes/sharding/partition.h"
#include "passes/sharding/sharding.h"
#include "runtime/array_layout.h"
#include "runtime/client.h"
#include "runtime/dump.h"
#include "runtime/executor.h"
#include "stablehlo/read_module.h"

namespace stablert::runtime {
namespace {

std::string MemoryKindOf(const ir::Attribute::Dictionary& attrs) {
  if (const ir::Attribute* kind = ir::FindAttr(attrs, "mhlo.memory_kind"))
    if (auto text = kind->AsString()) return std::string(*text);
  return kDeviceMemoryKind;
}

// JAX marks a donated argument with `tf.aliasing_output = <result>` (the result may reuse
// its memory) or `jax.buffer_donor = true` (donated without a designated result).
bool IsBufferDonor(const ir::Attribute::Dictionary& attrs) {
  const ir::Attribute* donor = ir::FindAttr(attrs, "jax.buffer_donor");
  return donor && donor->AsBool().value_or(true);
}

// Which parameters an execution consumes. As in XLA, a buffer donor is consumed only if a
// result of the same per-device size in bytes is left for it after the designated aliases
// (shapes may differ: [8, 1] can back [8]); a donor no result can reuse stays valid.
std::vector<bool> DonatedParameters(const ir::Function& entry, const std::vector<plan::TensorType>& parameter_types,
                                    const std::vector<passes::ShardLayout>& parameter_shards,
                                    const std::vector<plan::TensorType>& result_types,
                                    const std::vector<passes::ShardLayout>& result_shards) {
  const size_t n = parameter_types.size();
  auto local = [](const plan::TensorType& type, const std::vector<passes::ShardLayout>& shards, size_t i) {
    plan::TensorType out = type;
    if (i < shards.size()) out.dims = shards[i].local_dims;
    return out;
  };
  std::vector<bool> donated(n, false), result_taken(result_types.size(), false);
  for (size_t i = 0; i < n && i < entry.argument_attrs.size(); ++i) {
    const ir::Attribute* alias = ir::FindAttr(entry.argument_attrs[i], "tf.aliasing_output");
    if (!alias) continue;
    donated[i] = true;
    auto index = alias->AsInt();
    if (index && *index >= 0 && static_cast<size_t>(*index) < result_taken.size()) result_taken[*index] = true;
  }
  for (size_t i = 0; i < n && i < entry.argument_attrs.size(); ++i) {
    if (donated[i] || !IsBufferDonor(entry.argument_attrs[i])) continue;
    const int64_t want = plan::ByteSize(local(parameter_types[i], parameter_shards, i));
    for (size_t r = 0; r < result_types.size(); ++r) {
      if (result_taken[r] || plan::ByteSize(local(result_types[r], result_shards, r)) != want) continue;
      result_taken[r] = donated[i] = true;
      break;
    }
  }
  return donated;
}

// The shard layout of every parameter or result over `num_partitions` devices.
// `chosen[i]`, where set, replaces the sharding the attributes state.
StatusOr<std::vector<passes::ShardLayout>> ShardLayouts(const ir::Module& module,
                                                      const std::vector<ir::Attribute::Dictionary>& attrs,
                                                      const std::vector<plan::TensorType>& types,
                                                      int64_t num_partitions, const char* kind,
                                                      const std::vector<std::optional<passes::TensorSharding>>& chosen = {}) {
  std::vector<passes::ShardLayout> layouts;
  static const ir::Attribute::Dictionary kNone;
  for (size_t i = 0; i < types.size(); ++i) {
    std::string what = "PJRT_Client_Compile: " + std::string(kind) + " " + std::to_string(i) + " of @main";
    passes::TensorSharding sharding;
    if (i < chosen.size() && chosen[i]) {
      sharding = *chosen[i];
    } else {
      STABLERT_ASSIGN_OR_RETURN(
          sharding, passes::ParseSharding(module, i < attrs.size() ? attrs[i] : kNone,
                                        static_cast<int64_t>(types[i].dims.size()), num_partitions, what));
    }
    StatusOr<passes::ShardLayout> layout = passes::LayoutShards(sharding, types[i].dims, num_partitions, what);
    if (!layout.ok() && i < chosen.size() && chosen[i]) {
      // A chosen sharding that does not split a dimension evenly leaves that dimension
      // whole, as XLA does.
      for (size_t d = 0; d < sharding.dims.size() && d < types[i].dims.size(); ++d) {
        int64_t pieces = 1;
        for (const passes::AxisRef& ref : sharding.dims[d])
          pieces *= ref.size ? ref.size : sharding.mesh.axes[static_cast<size_t>(ref.axis)].size;
        if (types[i].dims[d] % pieces != 0) sharding.dims[d].clear();
      }
      layout = passes::LayoutShards(sharding, types[i].dims, num_partitions, what);
    }
    if (!layout.ok()) return layout.status();
    layouts.push_back(std::move(layout).value());
  }
  return layouts;
}


// The name of the first Shardy op (sdy.manual_computation, sdy.sharding_constraint, ...) in
// `module`'s functions, or "" if there is none.
std::string FirstShardyOpIn(const ir::Region& region) {
  for (const ir::Block& block : region.blocks) {
    for (const ir::Operation& op : block.ops) {
      std::string_view name = ir::OpName(op.code);
      if (name.starts_with("sdy.") && name != "sdy.return") return std::string(name);
      for (const ir::Region& inner : op.regions) {
        std::string found = FirstShardyOpIn(inner);
        if (!found.empty()) return found;
      }
    }
  }
  return "";
}

std::string FirstShardyOp(const ir::Module& module) {
  for (const ir::Function& function : module.functions) {
    std::string found = FirstShardyOpIn(function.body);
    if (!found.empty()) return found;
  }
  return "";
}

// The compile-time settings: STABLERT_PARTITIONER, STABLERT_DEBUG_PARTITIONER and the
// dump directory (STABLERT_DUMP_DIR, else the compile option xla_dump_to, else XLA_FLAGS
// --xla_dump_to), read at every compilation.
StatusOr<CompileSettings> ReadCompileSettings(const CompileOptions& options) {
  CompileSettings settings;
  auto prefixed = [](const Status& status) { return status.WithPrefix("PJRT_Client_Compile"); };
  StatusOr<bool> partitioner = env::PartitionerEnabled();
  if (!partitioner.ok()) return prefixed(partitioner.status());
  StatusOr<bool> debug = env::DebugPartitioner();
  if (!debug.ok()) return prefixed(debug.status());
  settings.partitioner = *partitioner;
  settings.debug_partitioner = *debug;
  std::optional<std::string> option_dir = StringOverride(options, "xla_dump_to");
  if (env::Get(env::kDumpDir) || !option_dir || option_dir->empty()) {
    StatusOr<std::optional<env::DumpDir>> dir = env::DumpDirectory();
    if (!dir.ok()) return prefixed(dir.status());
    settings.dump_dir = *dir;
  } else {
    if (*option_dir == "-" || *option_dir == "sponge" || *option_dir == "test_undeclared_outputs_dir")
      return InvalidArgument("PJRT_Client_Compile: compile option xla_dump_to='" + *option_dir +
                             "': StableRT dumps to a directory only; name one, or set STABLERT_DUMP_DIR");
    settings.dump_dir = env::DumpDir{*option_dir, "compile option xla_dump_to"};
  }
  settings.dump_hlo_proto = BoolOverride(options, "xla_dump_hlo_as_proto").value_or(false);
  settings.dump_hlo_text = BoolOverride(options, "xla_dump_hlo_as_text").value_or(!settings.dump_hlo_proto);
  return settings;
}

// The program as lowered (after the passes; a partitioned program's per-partition module, with
// its collectives, as XLA's optimized module is) as XLA HLO, under the names XLA's dumps use
// for the optimized module (tools glob for them). A program with an op HLO has no form for
// gets hlo_error.txt instead.
void DumpHlo(const ir::Module& module, const CompileSettings& settings, CompileDump& dump) {
  if (!settings.dump_hlo_text && !settings.dump_hlo_proto) return;
  StatusOr<hlo::Module> hlo_module = hlo::FromIr(module);
  if (!hlo_module.ok()) {
    dump.Write("hlo_error.txt", hlo_module.status().ToString() + "\n");
    return;
  }
  if (settings.dump_hlo_text) dump.Write("after_optimizations.txt", hlo::ToText(*hlo_module));
  if (settings.dump_hlo_proto) dump.Write("after_optimizations.hlo.pb", hlo::ToProto(*hlo_module));
}

int64_t CountOps(const ir::Region& region) {
  int64_t count = 0;
  for (const ir::Block& block : region.blocks)
    for (const ir::Operation& op : block.ops) {
      ++count;
      for (const ir::Region& inner : op.regions) count += CountOps(inner);
    }
  return count;
}

int64_t CountSteps(const plan::Sequence& sequence) {
  int64_t count = 0;
  for (const plan::Step& step : sequence.steps) {
    ++count;
    for (const plan::Sequence& region : step.regions) count += CountSteps(region);
  }
  return count;
}

// The work counters of a compilation (timings.json): they depend on the program's
// structure only, never on the size of its data (tests/jax/test_compile_time.py), except
// arena_bytes.
void CountWork(std::string_view program, const ir::Module& module, const plan::ExecutionPlan& plan,
               CompileTimer& timer) {
  int64_t ops = 0;
  for (const ir::Function& function : module.functions) ops += CountOps(function.body);
  int64_t constant_bytes = 0, largest = 0;
  for (const std::vector<uint8_t>& constant : plan.constants) {
    constant_bytes += static_cast<int64_t>(constant.size());
    largest = std::max<int64_t>(largest, static_cast<int64_t>(constant.size()));
  }
  timer.SetCounter("program_bytes", static_cast<int64_t>(program.size()));
  timer.SetCounter("ir_ops", ops);
  timer.SetCounter("plan_steps", CountSteps(plan.body));
  timer.SetCounter("plan_values", static_cast<int64_t>(plan.values.size()));
  timer.SetCounter("plan_constants", static_cast<int64_t>(plan.constants.size()));
  timer.SetCounter("constant_bytes", constant_bytes);
  timer.SetCounter("largest_constant_bytes", largest);
  timer.SetCounter("arena_bytes", plan.arena_size);  // grows with the data, unlike the others
}

// The types of the entry's parameters or results as executions see them: tokens are pred[0]
// arrays, as the plan takes and returns them.
std::vector<plan::TensorType> GlobalTypes(const std::vector<ir::Type>& types) {
  std::vector<plan::TensorType> out;
  for (const ir::Type& type : types)
    out.push_back(type.kind == ir::Type::Kind::kToken ? plan::TensorType{DType::kPred, {0}}
                                                      : plan::TensorType{type.dtype, type.dims});
  return out;
}

// The sharding a partitioned program's parameter or result has for its layout: a token (a
// pred[0] array every partition holds) is replicated.
passes::TensorSharding LayoutSharding(const passes::TensorSharding& sharding, const ir::Type& type) {
  if (type.kind != ir::Type::Kind::kToken) return sharding;
  passes::TensorSharding replicated;
  replicated.mesh = sharding.mesh;
  replicated.dims.resize(1);
  return replicated;
}

}  // namespace

StatusOr<std::unique_ptr<LoadedExecutable>> Client::Compile(std::string_view program, std::string_view format,
                                                            std::string_view compile_options) {
  CompileTimer timer;
  STABLERT_ASSIGN_OR_RETURN(CompileOptions options, ParseCompileOptions(compile_options));
  if (format != "mlir") {
    if (format == "hlo" || format == "hlo_with_config")
      return Unimplemented("PJRT_Client_Compile: program format '" + std::string(format) +
                           "' (HloModuleProto) is not supported; StableRT compiles StableHLO (format 'mlir')");
    return InvalidArgument("Unknown program format '" + std::string(format) + "'.");
  }
  STABLERT_RETURN_IF_ERROR(ValidateOptionOverrides(options));
  STABLERT_ASSIGN_OR_RETURN(CompileSettings settings, ReadCompileSettings(options));
  timer.EndPhase("options");
  CompileDump dump(settings.dump_dir, program);
  if (!dump.status().ok()) return dump.status().WithPrefix("PJRT_Client_Compile");
  std::string name = "unread";
  StatusOr<std::unique_ptr<LoadedExecutable>> result =
      CompileMlir(program, format, std::move(options), settings, timer, dump, name);
  if (dump.enabled()) {
    const bool bytecode = program.size() >= 4 && program.substr(0, 4) == std::string_view("ML\xEFR", 4);
    dump.Write(bytecode ? "input.mlirbc" : "input.mlir", program);
    dump.Write("compile_options.pb", compile_options);
    dump.Write("timings.json", timer.ToJson(name));
    if (!result.ok()) dump.Write("error.txt", result.status().ToString() + "\n");
    if (!dump.status().ok()) return dump.status().WithPrefix("PJRT_Client_Compile");
  }
  return result;
}

// Reads, verifies, partitions and lowers the program; writes the intermediate forms to
// `dump` as they are made and the phases' times to `timer`; `name` receives the module name.
StatusOr<std::unique_ptr<LoadedExecutable>> Client::CompileMlir(std::string_view program, std::string_view format,
                                                                CompileOptions options, const CompileSettings& settings,
                                                                CompileTimer& timer, CompileDump& dump,
                                                                std::string& name) {
  StatusOr<std::unique_ptr<ir::Module>> read = stablehlo::ReadModule(program);
  timer.EndPhase("read");
  if (!read.ok()) return read.status();
  std::unique_ptr<ir::Module> module = std::move(read).value();
  name = module->name.empty() ? "main" : module->name;
  dump.SetModuleName(name);
  if (dump.enabled()) {
    dump.Write("input.txt", ir::PrintModule(*module, ir::PrintOptions{.locations = true}));
    dump.Write("compile_options.txt", CompileOptionsToString(options));
    timer.EndPhase("dump_input");
  }
  STABLERT_RETURN_IF_ERROR(ir::Verify(*module));
  timer.EndPhase("verify");
  // Entry layouts come from the program as written (a result's "auto" layout follows the
  // transposes the passes may fold away).
  EntryLayouts layouts;
  if (const ir::Function* read_entry = module->EntryFunction()) {
    STABLERT_ASSIGN_OR_RETURN(layouts, ReadEntryLayouts(*module, *read_entry));
    passes::RemoveLayoutConstraints(*module);
  }
  {
    passes::PipelineOptions pipeline;
    const ir::Module& read_module = *module;
    pipeline.inline_options.keep_composite = [&read_module](const ir::Operation& composite) {
      return plan::LowersCompositeItself(read_module, composite);
    };
    pipeline.fold_constants = options.num_partitions <= 1;
    STABLERT_ASSIGN_OR_RETURN(std::vector<passes::PassRecord> records, passes::RunPipeline(*module, pipeline));
    timer.EndPhase("passes");
    if (dump.enabled()) {
      dump.Write("passes.txt", passes::PassRecordsToString(records));
      dump.Write("after_passes.txt", ir::PrintModule(*module, ir::PrintOptions{.locations = true}));
      timer.EndPhase("dump_passes");
    }
  }
  const ir::Function* entry = module->EntryFunction();
  if (!entry) return InvalidArgument("PJRT_Client_Compile: the module has no entry function 'main'");
  std::vector<std::string> output_kinds, parameter_kinds;
  for (const auto& attrs : entry->result_attrs) output_kinds.push_back(MemoryKindOf(attrs));
  for (const auto& attrs : entry->argument_attrs) parameter_kinds.push_back(MemoryKindOf(attrs));
  output_kinds.resize(entry->result_types.size(), kDeviceMemoryKind);
  parameter_kinds.resize(entry->argument_types.size(), kDeviceMemoryKind);
  // Why the program runs in the global view, for the dump and STABLERT_DEBUG_PARTITIONER.
  std::string global_view_reason = "a single-partition program";
  auto log_global_view = [&](const std::string& what, const Status& status) {
    global_view_reason = status.ToString();
    if (settings.debug_partitioner)
      std::fprintf(stderr, "stablert: %s runs in the global view: %s\n", what.c_str(), status.ToString().c_str());
  };
  if (options.num_partitions > 1 && options.num_replicas > 1)
    global_view_reason = "replicas and partitions together";
  if (options.num_partitions > 1 && options.num_replicas == 1 && !settings.partitioner)
    global_view_reason = "STABLERT_PARTITIONER is off";
  if (options.num_partitions > 1 && options.num_replicas == 1 && settings.partitioner) {
    // Partitioned: each device runs its own blocks; the global view where the partitioner
    // does not cover the program (passes/sharding/partition.h).
    auto partitioned = passes::PartitionProgram(*module, options.num_partitions);
    timer.EndPhase("partition");
    if (partitioned.ok()) {
      plan::LowerPhaseTimes lower_phases;
      auto local_plan = plan::LowerToPlan(partitioned->module, options.num_partitions, &lower_phases);
      timer.EndPhase("lower_and_assign_buffers");
      timer.AddParts("lower_and_assign_buffers", std::move(lower_phases));
      if (local_plan.ok()) {
        if (dump.enabled()) {
          CountWork(program, partitioned->module, *local_plan, timer);
          dump.Write("lowered.txt", "// the program of each of " + std::to_string(options.num_partitions) +
                                        " partitions, after SPMD partitioning\n" +
                                        ir::PrintModule(partitioned->module, ir::PrintOptions{.locations = true}));
          DumpHlo(partitioned->module, settings, dump);
          dump.Write("plan.txt", plan::PrintPlan(*local_plan));
          timer.EndPhase("dump_plan");
        }
        PerPartitionTypes global{GlobalTypes(entry->argument_types), GlobalTypes(entry->result_types)};
        std::vector<passes::ShardLayout> parameter_shards, result_shards;
        for (size_t i = 0; i < global.parameters.size(); ++i) {
          STABLERT_ASSIGN_OR_RETURN(
              auto layout, passes::LayoutShards(LayoutSharding(partitioned->parameter_shardings[i], entry->argument_types[i]),
                                                global.parameters[i].dims,
                                              options.num_partitions, "PJRT_Client_Compile: parameter " + std::to_string(i)));
          parameter_shards.push_back(std::move(layout));
        }
        for (size_t i = 0; i < global.results.size(); ++i) {
          STABLERT_ASSIGN_OR_RETURN(
              auto layout, passes::LayoutShards(LayoutSharding(partitioned->result_shardings[i], entry->result_types[i]),
                                                global.results[i].dims,
                                              options.num_partitions, "PJRT_Client_Compile: result " + std::to_string(i)));
          result_shards.push_back(std::move(layout));
        }
        std::vector<bool> donatable =
            DonatedParameters(*entry, global.parameters, parameter_shards, global.results, result_shards);
        auto text = ir::PrintStablehloText(partitioned->module);
        if (!text.ok()) log_global_view(name + " (no text form)", text.status());
        if (text.ok() && dump.enabled()) dump.Write("partitioned.mlir", *text);
        timer.EndPhase("layouts");
        auto executable = std::make_shared<const Executable>(
            name, std::string(program), std::string(format), std::move(options), std::move(local_plan).value(),
            std::move(output_kinds), std::move(parameter_kinds), std::move(donatable), std::move(parameter_shards),
            std::move(result_shards), std::string(), std::move(global), text.ok() ? std::move(text).value() : std::string(),
            std::move(layouts));
        auto loaded = Load(std::move(executable));
        timer.EndPhase("prepare_kernels");
        return loaded;
      }
      log_global_view(name, local_plan.status());
    } else {
      log_global_view(name, partitioned.status());
    }
  }
  plan::LowerPhaseTimes lower_phases;
  STABLERT_ASSIGN_OR_RETURN(plan::ExecutionPlan plan, plan::LowerToPlan(*module, 0, &lower_phases));
  timer.EndPhase("lower_and_assign_buffers");
  timer.AddParts("lower_and_assign_buffers", std::move(lower_phases));
  if (dump.enabled()) {
    CountWork(program, *module, plan, timer);
    std::string header = "// the program in the global view";
    if (options.num_partitions > 1) header += " (not partitioned: " + global_view_reason + ")";
    dump.Write("lowered.txt", header + "\n" + ir::PrintModule(*module, ir::PrintOptions{.locations = true}));
    DumpHlo(*module, settings, dump);
    dump.Write("plan.txt", plan::PrintPlan(plan));
    timer.EndPhase("dump_plan");
  }
  std::vector<passes::ShardLayout> parameter_shards, result_shards;
  STABLERT_ASSIGN_OR_RETURN(parameter_shards, ShardLayouts(*module, entry->argument_attrs, plan.parameter_types,
                                                           options.num_partitions, "parameter"));
  std::vector<ir::Attribute::Dictionary> result_attrs = entry->result_attrs;
  result_attrs.resize(entry->result_types.size());
  // Results the program leaves to the compiler follow the data they are computed from.
  std::vector<std::optional<passes::TensorSharding>> chosen(result_attrs.size());
  for (size_t i = 0; i < result_attrs.size(); ++i) {
    const ir::Attribute* sdy = ir::FindAttr(result_attrs[i], "sdy.sharding");
    if (ir::FindAttr(result_attrs[i], "mhlo.sharding") || (sdy && !passes::IsUnconstrainedSharding(*sdy))) continue;
    if (options.num_partitions > 1)
      chosen[i] = passes::PropagatedResultSharding(*module, *entry, i, options.num_partitions);
  }
  STABLERT_ASSIGN_OR_RETURN(result_shards, ShardLayouts(*module, result_attrs, plan.result_types,
                                                        options.num_partitions, "result", chosen));
  std::vector<bool> donatable =
      DonatedParameters(*entry, plan.parameter_types, parameter_shards, plan.result_types, result_shards);
  std::string shardy_op = FirstShardyOp(*module);
  timer.EndPhase("layouts");
  auto executable = std::make_shared<const Executable>(name, std::string(program), std::string(format),
                                                       std::move(options), std::move(plan), std::move(output_kinds),
                                                       std::move(parameter_kinds), std::move(donatable),
                                                       std::move(parameter_shards), std::move(result_shards),
                                                       std::move(shardy_op), std::nullopt, std::string(),
                                                       std::move(layouts));
  auto loaded = Load(std::move(executable));
  timer.EndPhase("prepare_kernels");
  return loaded;
}

StatusOr<std::unique_ptr<LoadedExecutable>> Client::Load(std::shared_ptr<const Executable> executable) {
  const CompileOptions& options = executable->options();
  // Binds the plan to the kernels now, so a missing kernel fails compilation, not the first run.
  STABLERT_RETURN_IF_ERROR(PreparePlan(executable->plan()));
  if (options.num_partitions > 1 && options.num_replicas > 1)
    return Unimplemented("PJRT_Client_Compile: programs with both replicas (" + std::to_string(options.num_replicas) +
                         ") and partitions (" + std::to_string(options.num_partitions) + ") are not supported yet");
  std::vector<std::vector<int64_t>> assignment = options.device_assignment;
  if (assignment.empty()) {
    if (options.device_ordinal >= 0 && options.num_replicas == 1 && options.num_partitions == 1) {
      STABLERT_ASSIGN_OR_RETURN(Device * device, LookupDevice(options.device_ordinal));
      assignment = {{device->id()}};
    } else {
      STABLERT_ASSIGN_OR_RETURN(assignment, DefaultDeviceAssignment(static_cast<int>(options.num_replicas),
                                                                    static_cast<int>(options.num_partitions)));
    }
  }
  std::vector<Device*> devices;
  std::vector<std::pair<int, int>> logical_ids;
  for (size_t r = 0; r < assignment.size(); ++r) {
    for (size_t p = 0; p < assignment[r].size(); ++p) {
      STABLERT_ASSIGN_OR_RETURN(Device * device, LookupDevice(assignment[r][p]));
      for (Device* seen : devices)
        if (seen == device)
          return InvalidArgument("device assignment uses device " + std::to_string(device->id()) + " twice");
      if (device->is_addressable()) {
        devices.push_back(device);
        logical_ids.emplace_back(static_cast<int>(r), static_cast<int>(p));
      }
    }
  }
  return std::make_unique<LoadedExecutable>(this, std::move(executable), std::move(devices), std::move(logical_ids));
}

}  // namespace stablert::runtime
