// stablert info PLUGIN: what a plugin is and offers.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "commands.h"
#include "host/client.h"
#include "host/plugin.h"
#include "host/slot_probe.h"
#include "host/tcp_kv_store.h"

namespace stablert::cli {

namespace {

// "name=value": an integer value if it parses as one, "true"/"false" a bool, else a string.
std::optional<host::NamedValue> ParseCreateOption(const std::string& text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  host::NamedValue option{text.substr(0, eq), std::string()};
  std::string value = text.substr(eq + 1);
  char* end = nullptr;
  long long n = std::strtoll(value.c_str(), &end, 10);
  if (!value.empty() && *end == '\0') option.value = static_cast<int64_t>(n);
  else if (value == "true" || value == "false") option.value = value == "true";
  else option.value = value;
  return option;
}

}  // namespace

int InfoCommand(const std::vector<std::string>& args) {
  constexpr char kUsage[] =
      "stablert info PLUGIN [--no-probe] [--option NAME=VALUE ...]\n"
      "       [--nodes N --node I (--kv-serve PORT | --kv-connect HOST:PORT)]";
  constexpr char kHelp[] =
      "usage: stablert info PLUGIN [--no-probe] [--option NAME=VALUE ...]\n"
      "                    [--nodes N --node I (--kv-serve PORT | --kv-connect HOST:PORT)]\n"
      "\n"
      "What a PJRT plugin is and offers: its path, PJRT C API version, attributes, extensions,\n"
      "the slots of the API table it lacks, the slots that are present but answer UNIMPLEMENTED\n"
      "(each present slot called once with null handles in a child process; --no-probe skips\n"
      "this), then a client's platform, devices and memories.\n"
      "PLUGIN: a library path, or an installed plugin's name (stablert, cpu).\n"
      "\n"
      "options:\n"
      "  --option NAME=VALUE  a PJRT_Client_Create option (integer, true/false or string), e.g.\n"
      "                       device_count=2 (StableRT) or cpu_device_count=2 (XLA's CPU plugin)\n"
      "  --nodes N --node I   create the client as node I of an N-process job (create options\n"
      "                       num_nodes and node_id), its key-value store over TCP:\n"
      "  --kv-serve PORT      this process serves the store on PORT (all interfaces) and waits\n"
      "                       for every node to finish before it exits\n"
      "  --kv-connect HOST:PORT  connect to the node serving the store\n"
      "\n"
      "exit status: 0 success, 1 an error, 2 bad usage\n";
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) return std::fputs(kHelp, stdout), 0;
  bool probe = true;
  std::string name, kv_connect;
  long nodes = 0, node = -1, kv_port = -1;
  host::ClientOptions client_options;
  auto parse_int = [](const std::string& text, long low, long high, long* out) {
    char* end = nullptr;
    *out = std::strtol(text.c_str(), &end, 10);
    return !text.empty() && *end == '\0' && *out >= low && *out <= high;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool takes_value = a == "--option" || a == "--nodes" || a == "--node" || a == "--kv-serve" || a == "--kv-connect";
    if (takes_value && i + 1 >= args.size()) return BadUsage(kUsage, a + " needs a value");
    if (a == "--no-probe") {
      probe = false;
    } else if (a == "--option") {
      std::optional<host::NamedValue> option = ParseCreateOption(args[++i]);
      if (!option) return BadUsage(kUsage, "--option '" + args[i] + "': expected NAME=VALUE");
      client_options.create_options.push_back(std::move(*option));
    } else if (a == "--nodes") {
      if (!parse_int(args[++i], 1, 65536, &nodes)) return BadUsage(kUsage, "--nodes '" + args[i] + "': expected 1..65536");
    } else if (a == "--node") {
      if (!parse_int(args[++i], 0, 65535, &node)) return BadUsage(kUsage, "--node '" + args[i] + "': expected 0..65535");
    } else if (a == "--kv-serve") {
      if (!parse_int(args[++i], 0, 65535, &kv_port)) return BadUsage(kUsage, "--kv-serve '" + args[i] + "': expected a port");
    } else if (a == "--kv-connect") {
      kv_connect = args[++i];
    } else if (a.empty() || a[0] == '-') {
      return BadUsage(kUsage, "unknown option " + a);
    } else if (name.empty()) {
      name = a;
    } else {
      return BadUsage(kUsage, "expected one PLUGIN");
    }
  }
  if (name.empty()) return BadUsage(kUsage, "expected one PLUGIN");
  bool multi_node = nodes > 0 || node >= 0 || kv_port >= 0 || !kv_connect.empty();
  std::shared_ptr<host::TcpKeyValueServer> server;
  if (multi_node) {
    if (nodes < 1 || node < 0 || node >= nodes)
      return BadUsage(kUsage, "--nodes N and --node I (0 <= I < N) go together");
    if ((kv_port >= 0) == !kv_connect.empty())
      return BadUsage(kUsage, "a node either serves the key-value store (--kv-serve) or connects to it (--kv-connect)");
    client_options.create_options.push_back({"num_nodes", int64_t{nodes}});
    client_options.create_options.push_back({"node_id", int64_t{node}});
    if (kv_port >= 0) {
      StatusOr<std::shared_ptr<host::TcpKeyValueServer>> started =
          host::TcpKeyValueServer::Start(static_cast<int>(kv_port), /*loopback_only=*/false);
      if (!started.ok()) return Fail(started.status().ToString());
      server = *started;
      client_options.key_value_store = server;
    } else {
      StatusOr<std::shared_ptr<host::TcpKeyValueStore>> store = host::TcpKeyValueStore::Connect(kv_connect);
      if (!store.ok()) return Fail(store.status().ToString());
      client_options.key_value_store = *store;
    }
  }
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

  StatusOr<std::shared_ptr<host::Client>> client = host::Client::Create(*plugin, client_options);
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
  if (multi_node) {
    // Every node reports that it is done; the serving node stays until all have, so that no
    // node loses the store while it still needs it.
    std::fflush(stdout);
    host::KeyValueStore& store = *client_options.key_value_store;
    Status put = store.Put("stablert_cli/info_done/" + std::to_string(node), "1");
    if (!put.ok()) return Fail(put.ToString());
    if (server)
      for (long other = 0; other < nodes; ++other) {
        StatusOr<std::string> done = store.Get("stablert_cli/info_done/" + std::to_string(other), std::chrono::seconds(120));
        if (!done.ok()) return Fail(done.status().ToString());
      }
  }
  return 0;
}

}  // namespace stablert::cli
