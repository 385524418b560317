#include "runtime/topology_exchange.h"

#include <cstdlib>
#include <map>

namespace stablert::runtime {
namespace {

std::string NodeKey(int node_id) { return "stablert/node/" + std::to_string(node_id); }
std::string AbsentKey(int node_id) { return "stablert/absent/" + std::to_string(node_id); }

// How long one wait for a node's entry lasts before its absence is checked again.
constexpr std::chrono::milliseconds kPollInterval{250};

}  // namespace

std::string SerializeNodeInfo(const NodeInfo& info) {
  return "devices=" + std::to_string(info.device_count) + "\naddress=" + info.address + "\ntoken=" + info.token +
         "\nversion=" + info.platform_version;
}

StatusOr<NodeInfo> ParseNodeInfo(const std::string& text, int node_id) {
  std::map<std::string, std::string> fields;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    size_t eq = line.find('=');
    if (eq != std::string::npos) fields[line.substr(0, eq)] = line.substr(eq + 1);
    start = end + 1;
  }
  auto bad = [&](const std::string& why) {
    return InvalidArgument("PJRT_Client_Create: the topology entry of process " + std::to_string(node_id) + " (key " +
                           NodeKey(node_id) + ") " + why + "; is every process running StableRT?");
  };
  if (!fields.count("devices") || !fields.count("address") || !fields.count("token") || !fields.count("version"))
    return bad("lacks a field (devices, address, token, version)");
  NodeInfo info;
  char* end = nullptr;
  long count = std::strtol(fields["devices"].c_str(), &end, 10);
  if (fields["devices"].empty() || *end != '\0' || count < 1 || count > 4096)
    return bad("has device count '" + fields["devices"] + "'");
  info.device_count = static_cast<int>(count);
  info.address = fields["address"];
  info.token = fields["token"];
  info.platform_version = fields["version"];
  return info;
}

StatusOr<std::vector<NodeInfo>> ExchangeTopology(const KeyValueStore& store, int node_id, int num_nodes,
                                                 const NodeInfo& own, std::chrono::milliseconds timeout) {
  if (!store.get || !store.put)
    return InvalidArgument("PJRT_Client_Create: num_nodes = " + std::to_string(num_nodes) +
                           " needs the key-value store callbacks (kv_get_callback, kv_put_callback), which "
                           "jax.distributed.initialize() provides");
  STABLERT_RETURN_IF_ERROR(store.put(NodeKey(node_id), SerializeNodeInfo(own))
                               .WithPrefix("PJRT_Client_Create: publishing process " + std::to_string(node_id) +
                                           "'s topology"));
  std::vector<NodeInfo> nodes(static_cast<size_t>(num_nodes));
  for (int n = 0; n < num_nodes; ++n) {
    if (n == node_id) {
      nodes[static_cast<size_t>(n)] = own;
      continue;
    }
    // Waits in slices, between them looking whether the process declared itself absent.
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    StatusOr<std::string> text = InvalidArgument("not read");
    while (true) {
      const auto start = std::chrono::steady_clock::now();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - start);
      const auto slice = std::max(std::chrono::milliseconds(1), std::min(left, kPollInterval));
      text = store.get(NodeKey(n), slice);
      // An error before the slice ended is the store's answer (not a wait that ran out).
      const auto now = std::chrono::steady_clock::now();
      if (text.ok() || now >= deadline || now - start < slice / 2) break;
      StatusOr<std::string> absent = store.get(AbsentKey(n), std::chrono::milliseconds(1));
      if (absent.ok())
        return FailedPrecondition("PJRT_Client_Create: process " + std::to_string(n) +
                                  " of the job does not create a StableRT client (" + *absent + "), process " +
                                  std::to_string(node_id) + " does: StableRT needs every process of a "
                                  "jax.distributed job (select it in all, e.g. JAX_PLATFORMS=stablert, or in none)");
    }
    if (!text.ok())
      return text.status().WithPrefix("PJRT_Client_Create: process " + std::to_string(n) +
                                      " did not publish its topology (key " + NodeKey(n) + ")");
    STABLERT_ASSIGN_OR_RETURN(nodes[static_cast<size_t>(n)], ParseNodeInfo(*text, n));
    if (nodes[static_cast<size_t>(n)].platform_version != own.platform_version)
      return FailedPrecondition("PJRT_Client_Create: process " + std::to_string(n) + " runs StableRT " +
                                nodes[static_cast<size_t>(n)].platform_version + ", process " +
                                std::to_string(node_id) + " runs " + own.platform_version +
                                "; every process of a job must run the same build");
  }
  return nodes;
}

}  // namespace stablert::runtime
