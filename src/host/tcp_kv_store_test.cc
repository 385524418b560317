// The TCP key-value store: its contract in one process, and a plugin client spanning two
// processes through it (StableRT with num_nodes = 2, 2 devices each).
#include "host/tcp_kv_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <cstring>
#include <fstream>
#include <sstream>

#include "host/buffer.h"
#include "host/client.h"
#include "host/executable.h"
#include "host/plugin.h"

extern char** environ;

namespace stablert::host {
namespace {

std::string TestPluginPath() {
  const char* path = std::getenv("STABLERT_TEST_PLUGIN");
  return path ? path : STABLERT_PLUGIN_PATH;
}

// The child side of TwoProcessesFormOneTopology: when STABLERT_KV_TEST_NODE is set, this
// binary is one node of the job. It runs before gtest's main and exits with the node's verdict.
int RunNode(int node, const std::string& address) {
  StatusOr<std::shared_ptr<const Plugin>> plugin = Plugin::Load(TestPluginPath());
  if (!plugin.ok()) return std::fprintf(stderr, "node %d: %s\n", node, plugin.status().ToString().c_str()), 10;
  StatusOr<std::shared_ptr<TcpKeyValueStore>> store = TcpKeyValueStore::Connect(address);
  if (!store.ok()) return std::fprintf(stderr, "node %d: %s\n", node, store.status().ToString().c_str()), 11;
  ClientOptions options;
  options.create_options = {{"node_id", int64_t{node}}, {"num_nodes", int64_t{2}}, {"device_count", int64_t{2}}};
  options.key_value_store = *store;
  StatusOr<std::shared_ptr<Client>> client = Client::Create(*plugin, options);
  if (!client.ok()) return std::fprintf(stderr, "node %d: %s\n", node, client.status().ToString().c_str()), 12;
  const Client& c = **client;
  std::printf("node %d: process %d, %zu devices, %zu addressable:", node, c.process_index(), c.devices().size(),
              c.addressable_devices().size());
  for (const Device& d : c.addressable_devices()) std::printf(" %d", d.id);
  std::printf("\n");
  if (c.process_index() != node || c.devices().size() != 4 || c.addressable_devices().size() != 2) return 13;
  for (const Device& d : c.devices())
    if (d.process_index != d.id / 2 || d.addressable != (d.process_index == node)) return 14;

  // A 2-partition shard_map psum over devices 1 (process 0) and 2 (process 1): each process
  // runs its own partition, and the sum crosses the process boundary. Node 0's shard holds 1s,
  // node 1's 10s: both must read 11s.
  std::ifstream in(std::string(STABLERT_TESTDATA_DIR) + "/programs/sdy_shard_map_psum.1_17_0.mlirbc", std::ios::binary);
  std::stringstream code;
  code << in.rdbuf();
  CompileOptions compile;
  compile.num_partitions = 2;
  compile.device_ids = {1, 2};
  StatusOr<std::shared_ptr<LoadedExecutable>> executable = LoadedExecutable::Compile(*client, Program{code.str()}, compile);
  if (!executable.ok()) return std::fprintf(stderr, "node %d: %s\n", node, executable.status().ToString().c_str()), 15;
  if ((*executable)->devices().size() != 1 || (*executable)->devices()[0].id != 1 + node) return 16;
  std::vector<float> shard(4, node == 0 ? 1.0f : 10.0f);
  StatusOr<Buffer> x = Buffer::FromHost(*client, {PJRT_Buffer_Type_F32, {2, 2}, {}, shard.data()}, (*executable)->devices()[0]);
  if (!x.ok()) return std::fprintf(stderr, "node %d: %s\n", node, x.status().ToString().c_str()), 17;
  StatusOr<ExecuteResult> result = (*executable)->Execute({{&*x}});
  if (!result.ok()) return std::fprintf(stderr, "node %d: %s\n", node, result.status().ToString().c_str()), 18;
  if (Status done = result->done.at(0).Await(); !done.ok())
    return std::fprintf(stderr, "node %d: %s\n", node, done.ToString().c_str()), 19;
  StatusOr<Literal> sum = result->outputs.at(0).at(0).ToLiteral();
  if (!sum.ok() || sum->bytes.size() != 16) return 20;
  std::vector<float> values(4);
  std::memcpy(values.data(), sum->bytes.data(), 16);
  std::printf("node %d: psum across processes = %g %g %g %g\n", node, values[0], values[1], values[2], values[3]);
  return values == std::vector<float>(4, 11.0f) ? 0 : 21;
}

[[maybe_unused]] const bool kIsNode = [] {
  const char* node = std::getenv("STABLERT_KV_TEST_NODE");
  const char* address = std::getenv("STABLERT_KV_TEST_ADDRESS");
  if (!node || !address) return false;
  std::fflush(stdout);
  std::_Exit([&] {
    int code = RunNode(std::atoi(node), address);
    std::fflush(stdout);
    std::fflush(stderr);
    return code;
  }());
}();

TEST(TcpKeyValueStore, PutGetTryGetAcrossConnections) {
  StatusOr<std::shared_ptr<TcpKeyValueServer>> server = TcpKeyValueServer::Start();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  StatusOr<std::shared_ptr<TcpKeyValueStore>> a = TcpKeyValueStore::Connect((*server)->address());
  StatusOr<std::shared_ptr<TcpKeyValueStore>> b = TcpKeyValueStore::Connect((*server)->address());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->TryGet("k").status().code(), StatusCode::kNotFound);
  // A Get waits for a Put from another connection.
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE((*b)->Put("k", std::string("v\0w", 3)).ok());
  });
  StatusOr<std::string> got = (*a)->Get("k", std::chrono::seconds(10));
  writer.join();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, std::string("v\0w", 3));
  EXPECT_EQ(*(*b)->TryGet("k"), std::string("v\0w", 3));
  // The server's own view is the same store.
  EXPECT_EQ(*(*server)->TryGet("k"), std::string("v\0w", 3));
  EXPECT_TRUE((*server)->Put("local", "1").ok());
  EXPECT_EQ(*(*a)->Get("local", std::chrono::seconds(1)), "1");
  // Write-once keys.
  EXPECT_TRUE((*a)->Put("k", std::string("v\0w", 3)).ok());
  EXPECT_EQ((*a)->Put("k", "other").code(), StatusCode::kAlreadyExists);
  // A large value.
  std::string big(3 << 20, 'x');
  EXPECT_TRUE((*a)->Put("big", big).ok());
  EXPECT_EQ(*(*b)->TryGet("big"), big);
}

// The serving process may stop as soon as it sees the last key it waits for (a job's "done"
// barrier): the Put that wrote that key still gets its answer, so the other node does not
// report a failure for a write that happened. Repeated, since it is a race between the
// server's answer and its destruction.
TEST(TcpKeyValueStore, APutTheServerWaitedForIsAnsweredWhenTheServerStopsAtOnce) {
  for (int round = 0; round < 200; ++round) {
    StatusOr<std::shared_ptr<TcpKeyValueServer>> server = TcpKeyValueServer::Start();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    StatusOr<std::shared_ptr<TcpKeyValueStore>> node = TcpKeyValueStore::Connect((*server)->address());
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    Status put;
    std::thread writer([&] { put = (*node)->Put("done", "1"); });
    EXPECT_TRUE((*server)->Get("done", std::chrono::seconds(10)).ok());
    server->reset();  // the last owner: the server stops here
    writer.join();
    ASSERT_TRUE(put.ok()) << "round " << round << ": " << put.ToString();
  }
}

TEST(TcpKeyValueStore, GetTimesOutNamingTheKeyAndConcurrentRequestsDoNotBlock) {
  StatusOr<std::shared_ptr<TcpKeyValueServer>> server = TcpKeyValueServer::Start();
  ASSERT_TRUE(server.ok());
  StatusOr<std::shared_ptr<TcpKeyValueStore>> store = TcpKeyValueStore::Connect((*server)->address());
  ASSERT_TRUE(store.ok());
  // A Get that waits 2 s on one thread; a Put/TryGet on another completes meanwhile.
  auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    StatusOr<std::string> missing = (*store)->Get("never", std::chrono::milliseconds(2000));
    EXPECT_EQ(missing.status().code(), StatusCode::kDeadlineExceeded);
    EXPECT_NE(std::string(missing.status().message()).find("'never'"), std::string::npos);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE((*store)->Put("x", "1").ok());
  EXPECT_EQ(*(*store)->TryGet("x"), "1");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1500));
  waiter.join();
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1900));
}

TEST(TcpKeyValueStore, ConnectionFailuresAreUnavailableNamingTheAddress) {
  int port;
  {
    StatusOr<std::shared_ptr<TcpKeyValueServer>> server = TcpKeyValueServer::Start();
    ASSERT_TRUE(server.ok());
    port = (*server)->port();
  }
  std::string address = "127.0.0.1:" + std::to_string(port);
  StatusOr<std::shared_ptr<TcpKeyValueStore>> refused =
      TcpKeyValueStore::Connect(address, std::chrono::milliseconds(200));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(std::string(refused.status().message()).find(address), std::string::npos) << refused.status().ToString();
  EXPECT_EQ(TcpKeyValueStore::Connect("no-port").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(TcpKeyValueStore::Connect("host:99999").status().code(), StatusCode::kInvalidArgument);

  // A server that goes away while a client waits: the Get fails at once, not at its timeout.
  StatusOr<std::shared_ptr<TcpKeyValueServer>> server = TcpKeyValueServer::Start();
  ASSERT_TRUE(server.ok());
  StatusOr<std::shared_ptr<TcpKeyValueStore>> store = TcpKeyValueStore::Connect((*server)->address());
  ASSERT_TRUE(store.ok());
  auto start = std::chrono::steady_clock::now();
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    server->reset();
  });
  StatusOr<std::string> got = (*store)->Get("never", std::chrono::seconds(30));
  stopper.join();
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable) << got.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// Two processes, each a StableRT client of a 2-node job with 2 devices, meeting through a
// server in this (third) process: each sees 4 devices, 2 of them its own, and a psum over one
// device of each process gives both the sum of their shards.
TEST(TcpKeyValueStore, TwoProcessesFormOneTopologyAndSumAcrossIt) {
  StatusOr<std::shared_ptr<TcpKeyValueServer>> server = TcpKeyValueServer::Start();
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  std::vector<pid_t> children;
  for (int node = 0; node < 2; ++node) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
    env_strings.push_back("STABLERT_KV_TEST_NODE=" + std::to_string(node));
    env_strings.push_back("STABLERT_KV_TEST_ADDRESS=" + (*server)->address());
    std::vector<char*> env;
    for (std::string& s : env_strings) env.push_back(s.data());
    env.push_back(nullptr);
    char* argv[] = {self, nullptr};
    pid_t pid;
    ASSERT_EQ(posix_spawn(&pid, self, nullptr, nullptr, argv, env.data()), 0);
    children.push_back(pid);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (size_t i = 0; i < children.size(); ++i) {
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(children[i], &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (done == 0) {
      for (pid_t pid : children) kill(pid, SIGKILL);
      for (pid_t pid : children) waitpid(pid, nullptr, 0);
      FAIL() << "node " << i << " did not finish within 120 s";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "node " << i << " exited with status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1) << ", signal "
        << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  }
  // Both nodes published their entries through the server.
  EXPECT_TRUE((*server)->TryGet("stablert/node/0").ok());
  EXPECT_TRUE((*server)->TryGet("stablert/node/1").ok());
}

}  // namespace
}  // namespace stablert::host
