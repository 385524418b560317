// Clients of a multi-process job, several in one process (one per thread), joined through an
// in-memory key-value store.
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <map>
#include <mutex>

#include "collectives/cross_process_communicator.h"
#include "runtime/client.h"

namespace stablert::runtime {
namespace {

// A blocking in-memory store, like the one jax.distributed hands the plugin.
class MemoryStore {
 public:
  KeyValueStore Functions() {
    KeyValueStore store;
    store.put = [this](const std::string& key, const std::string& value) {
      std::lock_guard<std::mutex> lock(mutex_);
      values_[key] = value;
      changed_.notify_all();
      return OkStatus();
    };
    store.get = [this](const std::string& key, std::chrono::milliseconds timeout) -> StatusOr<std::string> {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!changed_.wait_for(lock, std::min(timeout, wait_), [&] { return values_.count(key) > 0; }))
        return DeadlineExceeded("no key " + key);
      return values_[key];
    };
    return store;
  }
  std::chrono::milliseconds wait_{20000};
  std::map<std::string, std::string> values_;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
};

ClientOptions Options(int node, int nodes, int devices) {
  ClientOptions options;
  options.device_count = devices;
  options.process_index = node;
  options.process_count = nodes;
  return options;
}

TEST(MultiProcessClientTest, EveryProcessListsTheJobsDevicesAndOwnsItsOwn) {
  MemoryStore memory;
  const KeyValueStore store = memory.Functions();
  // Unequal device counts: ids follow the processes' order.
  const std::vector<int> counts = {2, 1, 3};
  std::vector<std::future<StatusOr<std::unique_ptr<Client>>>> creating;
  for (int node = 0; node < 3; ++node)
    creating.push_back(std::async(std::launch::async, [&, node] {
      return Client::Create(Options(node, 3, counts[node]), &store);
    }));
  std::vector<std::unique_ptr<Client>> clients;
  for (auto& c : creating) {
    auto client = c.get();
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    clients.push_back(std::move(*client));
  }
  const std::vector<int> process_of_device = {0, 0, 1, 2, 2, 2};
  for (int node = 0; node < 3; ++node) {
    const Client& client = *clients[node];
    EXPECT_EQ(client.process_index(), node);
    ASSERT_EQ(client.devices().size(), 6u);
    for (int id = 0; id < 6; ++id) {
      const Device* device = client.devices()[id];
      EXPECT_EQ(device->id(), id);
      EXPECT_EQ(device->process_index(), process_of_device[id]);
      EXPECT_EQ(device->is_addressable(), process_of_device[id] == node);
      EXPECT_EQ(device->memories().empty(), process_of_device[id] != node);
    }
    ASSERT_EQ(client.addressable_devices().size(), static_cast<size_t>(counts[node]));
    EXPECT_EQ(client.addressable_devices()[0]->local_hardware_id(), 0);
    // A default assignment spans the job; global process information names its tasks.
    auto assignment = client.DefaultDeviceAssignment(1, 6);
    ASSERT_TRUE(assignment.ok());
    EXPECT_TRUE(clients[node]->global_process_info().Update({ProcessInfo{2, 1, ProcessInfo::State::kConnected}}, 3).ok());
    EXPECT_FALSE(clients[node]->global_process_info().Update({ProcessInfo{3, 1, ProcessInfo::State::kConnected}}, 3).ok());
  }
  EXPECT_EQ(memory.values_.count("stablert/node/2"), 1u);
  // Destruction closes the connections and joins the threads, in any order.
  const auto start = std::chrono::steady_clock::now();
  clients[1].reset();
  clients[0].reset();
  clients[2].reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(MultiProcessClientTest, CrossProcessCommunicatorOnlyWhenPartitionsSpanProcesses) {
  MemoryStore memory;
  const KeyValueStore store = memory.Functions();
  auto other = std::async(std::launch::async, [&] { return Client::Create(Options(1, 2, 2), &store); });
  auto client = Client::Create(Options(0, 2, 2), &store);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto peer = other.get();
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  auto local = (*client)->NewCommunicator("p", {0, 1}, std::chrono::seconds(1));
  ASSERT_TRUE(local.ok());
  EXPECT_NE(dynamic_cast<collectives::InProcessCommunicator*>(local->get()), nullptr);
  auto spanning = (*client)->NewCommunicator("p", {0, 1, 2, 3}, std::chrono::seconds(1));
  ASSERT_TRUE(spanning.ok());
  EXPECT_NE(dynamic_cast<collectives::CrossProcessCommunicator*>(spanning->get()), nullptr);
  EXPECT_EQ((*spanning)->num_ranks(), 4);
  EXPECT_FALSE((*client)->NewCommunicator("p", {0, 9}, std::chrono::seconds(1)).ok());
}

TEST(MultiProcessClientTest, MissingStoreOrProcessIsAClearError) {
  auto no_store = Client::Create(Options(0, 2, 1), nullptr);
  ASSERT_FALSE(no_store.ok());
  EXPECT_EQ(no_store.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_store.status().message().find("key-value store"), std::string::npos) << no_store.status().ToString();

  MemoryStore memory;
  memory.wait_ = std::chrono::milliseconds(100);
  const KeyValueStore store = memory.Functions();
  auto alone = Client::Create(Options(0, 2, 1), &store);  // process 1 never comes
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("process 1 did not publish its topology"), std::string::npos)
      << alone.status().ToString();

  auto out_of_range = ClientOptions::FromNamedValues({{"node_id", int64_t{2}}, {"num_nodes", int64_t{2}}});
  EXPECT_FALSE(out_of_range.ok());
}

TEST(MultiProcessClientTest, ProcessThatDeclaresItselfAbsentFailsCreationAtOnce) {
  MemoryStore memory;
  const KeyValueStore store = memory.Functions();
  memory.values_["stablert/absent/1"] = "its JAX_PLATFORMS is 'cpu'";
  const auto start = std::chrono::steady_clock::now();
  auto client = Client::Create(Options(0, 2, 1), &store);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(client.status().message().find("process 1 of the job does not create a StableRT client (its "
                                           "JAX_PLATFORMS is 'cpu')"),
            std::string::npos)
      << client.status().ToString();
}

TEST(MultiProcessClientTest, DifferentBuildsRefuseToJoin) {
  MemoryStore memory;
  const KeyValueStore store = memory.Functions();
  memory.values_["stablert/node/1"] = SerializeNodeInfo(NodeInfo{1, "127.0.0.1:1", std::string(32, '0'), "another-version"});
  auto client = Client::Create(Options(0, 2, 1), &store);
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("same build"), std::string::npos) << client.status().ToString();
  EXPECT_FALSE(ParseNodeInfo("devices=x\naddress=a\ntoken=t\nversion=v", 3).ok());
  EXPECT_FALSE(ParseNodeInfo("devices=1\naddress=a\nversion=v", 3).ok());  // no token
  auto parsed = ParseNodeInfo(SerializeNodeInfo(NodeInfo{4, "h:5", "t0k3n", "v"}), 0);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->device_count, 4);
  EXPECT_EQ(parsed->address, "h:5");
  EXPECT_EQ(parsed->token, "t0k3n");
}

}  // namespace
}  // namespace stablert::runtime
