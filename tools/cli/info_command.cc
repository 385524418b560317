// stablert info PLUGIN: what a plugin is and offers.
#include <cstdio>

#include "commands.h"
#include "host/client.h"
#include "host/plugin.h"
#include "host/slot_probe.h"

namespace stablert::cli {

int InfoCommand(const std::vector<std::string>& args) {
  constexpr char kUsage[] = "stablert info PLUGIN [--no-probe]   (PLUGIN: a library path or an installed plugin's name)";
  constexpr char kHelp[] =
      "usage: stablert info PLUGIN [--no-probe]\n"
      "\n"
      "What a PJRT plugin is and offers: its path, PJRT C API version, attributes, extensions,\n"
      "the slots of the API table it lacks, the slots that are present but answer UNIMPLEMENTED\n"
      "(each present slot called once with null handles in a child process; --no-probe skips\n"
      "this), then a client's platform, devices and memories.\n"
      "PLUGIN: a library path, or an installed plugin's name (stablert, cpu).\n"
      "\n"
      "exit status: 0 success, 1 an error, 2 bad usage\n";
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) return std::fputs(kHelp, stdout), 0;
  bool probe = true;
  std::string name;
  for (const std::string& a : args) {
    if (a == "--no-probe") probe = false;
    else if (a.empty() || a[0] == '-') return BadUsage(kUsage, "unknown option " + a);
    else if (name.empty()) name = a;
    else return BadUsage(kUsage, "expected one PLUGIN");
  }
  if (name.empty()) return BadUsage(kUsage, "expected one PLUGIN");
  StatusOr<std::shared_ptr<const host::Plugin>> plugin = host::Plugin::Load(name);
  if (!plugin.ok()) return Fail(plugin.status().ToString());
  std::printf("plugin: %s\n", (*plugin)->path().c_str());
  std::printf("PJRT C API: %s\n", (*plugin)->version().c_str());
  StatusOr<std::vector<host::NamedValue>> attributes = (*plugin)->Attributes();
  if (!attributes.ok()) return Fail(attributes.status().ToString());
  std::printf("attributes:\n");
  for (const host::NamedValue& a : *attributes) std::printf("  %s\n", a.ToString().c_str());
  std::printf("extensions:");
  for (const host::ExtensionInfo& e : (*plugin)->Extensions()) std::printf(" %s", e.name.c_str());
  std::printf("\n");
  std::vector<std::pair<std::string, bool>> slots = (*plugin)->Slots();
  size_t present = 0;
  for (const auto& slot : slots) present += slot.second;
  std::printf("slots: %zu of the %zu this host knows\n", present, slots.size());
  for (const auto& [name, has] : slots)
    if (!has) std::printf("  absent: %s\n", name.c_str());
  if (probe) {
    std::vector<host::SlotProbe> probes = host::ProbeSlots(**plugin);
    size_t stubs = 0, probed = 0, crashed = 0;
    for (const host::SlotProbe& p : probes) {
      stubs += p.answer == host::SlotAnswer::kUnimplemented;
      crashed += p.answer == host::SlotAnswer::kCrashed || p.answer == host::SlotAnswer::kTimedOut;
      probed += p.answer != host::SlotAnswer::kAbsent && p.answer != host::SlotAnswer::kNotProbed;
    }
    std::printf("present slots answering UNIMPLEMENTED: %zu of %zu probed with null handles "
                "(%zu crash or hang on them)\n", stubs, probed, crashed);
    for (const host::SlotProbe& p : probes)
      if (p.answer == host::SlotAnswer::kUnimplemented) std::printf("  unimplemented: %s\n", p.name.c_str());
  }

  StatusOr<std::shared_ptr<host::Client>> client = host::Client::Create(*plugin);
  if (!client.ok()) return Fail(client.status().ToString());
  std::printf("platform: %s (%s), process %d\n", (*client)->platform_name().c_str(),
              (*client)->platform_version().c_str(), (*client)->process_index());
  std::printf("devices: %zu (%zu addressable)\n", (*client)->devices().size(),
              (*client)->addressable_devices().size());
  for (const host::Device& device : (*client)->devices()) {
    std::printf("  %d: %s, process %d%s\n", device.id, device.kind.c_str(), device.process_index,
                device.addressable ? "" : ", not addressable");
    if (!device.addressable) continue;
    StatusOr<std::vector<host::Memory>> memories = (*client)->Memories(device);
    if (!memories.ok()) return Fail(memories.status().ToString());
    for (const host::Memory& memory : *memories) std::printf("     memory %d: %s\n", memory.id, memory.kind.c_str());
  }
  return 0;
}

}  // namespace stablert::cli
