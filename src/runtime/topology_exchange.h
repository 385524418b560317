// The job's topology across processes, exchanged through the framework's key-value store.
//
// In a multi-process job (PJRT_Client_Create with num_nodes > 1) every process publishes
// what it brings (its device count, the address and access token of its collective
// transport, its platform version) under "stablert/node/<node_id>" and reads every other process's entry. Device ids
// are then global and stable: the devices of node n are numbered from the sum of the device
// counts of nodes 0..n-1 (node_id * device_count + i when all counts are equal).
//
// A process of the job that will not create a StableRT client (its JAX_PLATFORMS leaves stablert
// out; the Python package publishes that, python/stablert/__init__.py) puts
// "stablert/absent/<node_id>" = the reason instead: the others then fail at once rather than
// at the timeout.
//
// Failure: a process that does not publish within the timeout, one that declared itself
// absent, or an entry that cannot be read, is an error naming the process and the key. Thread-safe (no shared state).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"

namespace stablert::runtime {

// The framework's store (PJRT_Client_Create's kv callbacks), as functions.
struct KeyValueStore {
  // Blocks until `key` exists or `timeout` passes (then an error).
  std::function<StatusOr<std::string>(const std::string& key, std::chrono::milliseconds timeout)> get;
  std::function<Status(const std::string& key, const std::string& value)> put;
};

struct NodeInfo {
  int device_count = 0;
  std::string address;           // ip:port of the node's collective transport
  std::string token;             // what a process connecting to that transport must present
  std::string platform_version;  // every process must run the same build
};

std::string SerializeNodeInfo(const NodeInfo& info);
StatusOr<NodeInfo> ParseNodeInfo(const std::string& text, int node_id);

// Publishes `own` as node `node_id` and returns every node's info, in node order.
StatusOr<std::vector<NodeInfo>> ExchangeTopology(const KeyValueStore& store, int node_id, int num_nodes,
                                                 const NodeInfo& own, std::chrono::milliseconds timeout);

}  // namespace stablert::runtime
