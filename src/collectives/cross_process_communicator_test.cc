#include "collectives/cross_process_communicator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <limits>
#include <thread>

namespace stablert::collectives {
namespace {

using Clock = std::chrono::steady_clock;

Combiner AddFloat() {
  return [](const void* lhs, const void* rhs, void* out, int64_t count) {
    auto* a = static_cast<const float*>(lhs);
    auto* b = static_cast<const float*>(rhs);
    auto* o = static_cast<float*>(out);
    for (int64_t i = 0; i < count; ++i) o[i] = a[i] + b[i];
    return OkStatus();
  };
}

std::vector<std::unique_ptr<TcpTransport>> Mesh(int n) {
  std::vector<std::unique_ptr<TcpTransport>> mesh;
  std::vector<std::string> addresses, tokens;
  for (int p = 0; p < n; ++p) {
    auto transport = TcpTransport::Listen(p, n, "127.0.0.1");
    EXPECT_TRUE(transport.ok());
    addresses.push_back((*transport)->address());
    tokens.push_back((*transport)->token());
    mesh.push_back(std::move(*transport));
  }
  std::vector<std::future<Status>> connected;
  for (int p = 0; p < n; ++p)
    connected.push_back(std::async(std::launch::async, [&, p] { return mesh[p]->Connect(addresses, tokens, std::chrono::seconds(20)); }));
  for (auto& c : connected) EXPECT_TRUE(c.get().ok());
  return mesh;
}

// One rank's program: every kind of collective, with groups that cross processes and groups
// that do not; returns everything it received, concatenated.
StatusOr<std::vector<float>> Program(Communicator& comm, int rank, int64_t n) {
  std::vector<float> in(static_cast<size_t>(n * 4));
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.1f * static_cast<float>(rank + 1) + static_cast<float>(i % 97);
  std::vector<float> all;
  auto keep = [&](const std::vector<float>& v) { all.insert(all.end(), v.begin(), v.end()); };
  std::vector<float> out(static_cast<size_t>(n * 4));
  STABLERT_RETURN_IF_ERROR(comm.AllReduce(rank, {}, in.data(), out.data(), n * 4, 4, AddFloat(), "all_reduce"));
  keep(out);
  // {0, 2} and {1, 3}: every group spans both processes.
  STABLERT_RETURN_IF_ERROR(comm.AllReduce(rank, {{0, 2}, {1, 3}}, in.data(), out.data(), n, 4, AddFloat(), "ar_groups"));
  keep(std::vector<float>(out.begin(), out.begin() + n));
  // {0, 1} and {2, 3}: groups inside one process each.
  STABLERT_RETURN_IF_ERROR(comm.AllGather(rank, {{0, 1}, {2, 3}}, in.data(), out.data(), n * 4 * 4 / 2, "gather_local"));
  keep(out);
  std::vector<float> gathered(static_cast<size_t>(n * 4 * 4));
  STABLERT_RETURN_IF_ERROR(comm.AllGather(rank, {}, in.data(), gathered.data(), n * 4 * 4, "all_gather"));
  keep(gathered);
  STABLERT_RETURN_IF_ERROR(comm.ReduceScatter(rank, {}, in.data(), out.data(), n, 4, AddFloat(), "reduce_scatter"));
  keep(std::vector<float>(out.begin(), out.begin() + n));
  STABLERT_RETURN_IF_ERROR(comm.AllToAll(rank, {}, in.data(), out.data(), n * 4, "all_to_all"));
  keep(out);
  STABLERT_RETURN_IF_ERROR(
      comm.CollectivePermute(rank, {{0, 3}, {3, 1}, {1, 2}}, in.data(), out.data(), n * 4 * 4, "permute"));
  keep(out);
  STABLERT_RETURN_IF_ERROR(comm.CollectiveBroadcast(rank, {{3, 0, 1, 2}}, in.data(), out.data(), n * 4 * 4, "bcast"));
  keep(out);
  return all;
}

// All-reduces only: over all ranks, over groups that span both processes, over groups inside
// one; each into a separate output and in place (output = input).
StatusOr<std::vector<float>> AllReduces(Communicator& comm, int rank, int64_t n) {
  std::vector<float> in(static_cast<size_t>(n)), out(static_cast<size_t>(n)), all;
  for (size_t i = 0; i < in.size(); ++i) in[i] = 0.1f * static_cast<float>(rank + 1) + static_cast<float>(i % 97) / 7.f;
  for (const ReplicaGroups& groups : {ReplicaGroups{}, ReplicaGroups{{0, 2}, {1, 3}}, ReplicaGroups{{0, 1}, {2, 3}},
                                      ReplicaGroups{{3, 1, 0, 2}}}) {
    STABLERT_RETURN_IF_ERROR(comm.AllReduce(rank, groups, in.data(), out.data(), n, 4, AddFloat(), "all_reduce"));
    all.insert(all.end(), out.begin(), out.end());
    std::vector<float> in_place = in;
    STABLERT_RETURN_IF_ERROR(
        comm.AllReduce(rank, groups, in_place.data(), in_place.data(), n, 4, AddFloat(), "all_reduce_in_place"));
    all.insert(all.end(), in_place.begin(), in_place.end());
  }
  return all;
}

using ProgramFn = StatusOr<std::vector<float>> (*)(Communicator&, int, int64_t);

std::vector<std::vector<float>> RunInProcess(int64_t n, int64_t segmented_bytes = Communicator::kDefaultSegmentedAllReduceBytes,
                                             ProgramFn program = Program) {
  InProcessCommunicator comm(4, std::chrono::seconds(20));
  comm.set_segmented_all_reduce_bytes(segmented_bytes);
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      auto result = program(comm, r, n);
      EXPECT_TRUE(result.ok()) << result.status().ToString();
      if (result.ok()) results[r] = *result;
    });
  for (auto& t : threads) t.join();
  return results;
}

// Runs Program on 4 ranks, two per process, every all-reduce of at least `segmented_bytes`
// taking the segmented path.
std::vector<std::vector<float>> RunAcrossProcesses(int64_t n, int64_t segmented_bytes, ProgramFn program = Program) {
  auto mesh = Mesh(2);
  const std::vector<int> process_of_rank = {0, 0, 1, 1};
  std::vector<std::unique_ptr<CrossProcessCommunicator>> comms;
  for (int p = 0; p < 2; ++p) {
    comms.push_back(std::make_unique<CrossProcessCommunicator>(mesh[p].get(), process_of_rank, 42,
                                                               std::chrono::seconds(20)));
    comms.back()->set_segmented_all_reduce_bytes(segmented_bytes);
  }
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      auto result = program(*comms[process_of_rank[r]], r, n);
      EXPECT_TRUE(result.ok()) << result.status().ToString();
      if (result.ok()) results[r] = *result;
    });
  for (auto& t : threads) t.join();
  return results;
}

void ExpectSame(const std::vector<std::vector<float>>& results, const std::vector<std::vector<float>>& expected,
                const std::string& what) {
  ASSERT_EQ(results.size(), expected.size());
  for (size_t r = 0; r < results.size(); ++r) {
    ASSERT_EQ(results[r].size(), expected[r].size()) << what << " rank " << r;
    for (size_t i = 0; i < results[r].size(); ++i)
      if (std::memcmp(&results[r][i], &expected[r][i], sizeof(float)) != 0) {
        ADD_FAILURE() << what << " rank " << r << " element " << i << ": " << results[r][i] << " vs "
                      << expected[r][i];
        break;
      }
  }
}

TEST(CrossProcessCommunicator, MatchesTheInProcessCommunicatorBitForBit) {
  // The largest all-reduces (4.8 MB) take the segmented path, in pieces.
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{300000}})
    ExpectSame(RunAcrossProcesses(n, Communicator::kDefaultSegmentedAllReduceBytes), RunInProcess(n),
               "n = " + std::to_string(n));
}

TEST(CrossProcessCommunicator, SegmentedAllReduceIsBitIdenticalToTheDirectOne) {
  // Every all-reduce segmented (also those with fewer elements than group members, and
  // segments of several pieces) against every all-reduce direct, in and across processes.
  const int64_t never = std::numeric_limits<int64_t>::max();
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{1000}, int64_t{1200001}}) {
    const auto direct = RunInProcess(n, never, AllReduces);
    ExpectSame(RunInProcess(n, 0, AllReduces), direct, "in process, n = " + std::to_string(n));
    ExpectSame(RunAcrossProcesses(n, 0, AllReduces), direct, "across processes, n = " + std::to_string(n));
  }
}

TEST(CrossProcessCommunicator, SegmentedAllReduceFailsAtOnceWhenAProcessDies) {
  auto mesh = Mesh(2);
  CrossProcessCommunicator comm(mesh[0].get(), {0, 0, 1}, 1, std::chrono::seconds(30));
  std::vector<float> in(1 << 20, 1.f), out0(in.size()), out1(in.size());
  auto rank0 = std::async(std::launch::async, [&] {
    return comm.AllReduce(0, {}, in.data(), out0.data(), static_cast<int64_t>(in.size()), 4, AddFloat(), "big_sum");
  });
  auto rank1 = std::async(std::launch::async, [&] {
    return comm.AllReduce(1, {}, in.data(), out1.data(), static_cast<int64_t>(in.size()), 4, AddFloat(), "big_sum");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto start = Clock::now();
  mesh[1].reset();
  for (auto* rank : {&rank0, &rank1}) {
    Status status = rank->get();
    EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
    EXPECT_NE(status.message().find("big_sum"), std::string::npos) << status.ToString();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
}

TEST(CrossProcessCommunicator, ExecutionsWithDifferentRunIdsDoNotMix) {
  auto mesh = Mesh(2);
  // Process 0 runs execution 7 then 8; process 1 starts 8 first. Tags keep them apart.
  auto run = [&](int process, uint64_t run_id, float value) {
    CrossProcessCommunicator comm(mesh[process].get(), {0, 1}, run_id, std::chrono::seconds(20));
    float out = 0;
    Status status = comm.AllReduce(process, {}, &value, &out, 1, 4, AddFloat(), "all_reduce");
    EXPECT_TRUE(status.ok()) << status.ToString();
    return out;
  };
  auto p1 = std::async(std::launch::async, [&] { return std::make_pair(run(1, 8, 20.f), run(1, 7, 2.f)); });
  auto p0_7 = std::async(std::launch::async, [&] { return run(0, 7, 1.f); });
  auto p0_8 = std::async(std::launch::async, [&] { return run(0, 8, 10.f); });
  auto [p1_8, p1_7] = p1.get();
  EXPECT_EQ(p0_7.get(), 3.f);
  EXPECT_EQ(p1_7, 3.f);
  EXPECT_EQ(p0_8.get(), 30.f);
  EXPECT_EQ(p1_8, 30.f);
}

TEST(CrossProcessCommunicator, AbsentProcessFailsWithinTheTimeoutNamingProcessAndOp) {
  auto mesh = Mesh(2);
  CrossProcessCommunicator comm(mesh[0].get(), {0, 1}, 1, std::chrono::milliseconds(300));
  float in = 1, out = 0;
  const auto start = Clock::now();
  Status status = comm.AllReduce(0, {}, &in, &out, 1, 4, AddFloat(), "stablehlo.all_reduce at f.py:3");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(status.message().find("stablehlo.all_reduce at f.py:3"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("process 1"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("STABLERT_COLLECTIVE_TIMEOUT_SECONDS"), std::string::npos);
}

TEST(CrossProcessCommunicator, LateLocalPartitionFailsAtOnceAfterTheOthersGaveUp) {
  auto mesh = Mesh(2);
  CrossProcessCommunicator comm(mesh[0].get(), {0, 1, 1}, 1, std::chrono::milliseconds(200));
  float in0 = 1, out0 = 0;
  // A group inside this process needs no message: it completes without process 1.
  Status alone = comm.AllReduce(0, {{0}, {1, 2}}, &in0, &out0, 1, 4, AddFloat(), "op_a");
  EXPECT_TRUE(alone.ok()) << alone.ToString();
  EXPECT_EQ(out0, 1.f);
  CrossProcessCommunicator comm2(mesh[0].get(), {0, 0, 1}, 2, std::chrono::milliseconds(200));
  float in = 1, out = 0;
  const auto start = Clock::now();
  Status first = comm2.AllReduce(0, {}, &in, &out, 1, 4, AddFloat(), "stablehlo.all_reduce");
  EXPECT_EQ(first.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(first.message().find("partitions 1 of process 0"), std::string::npos) << first.ToString();
  float late_in = 2, late_out = 0;
  Status late = comm2.AllReduce(1, {}, &late_in, &late_out, 1, 4, AddFloat(), "stablehlo.all_reduce");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(late.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(late.message().find("after the others gave up"), std::string::npos) << late.ToString();
}

TEST(CrossProcessCommunicator, DeadProcessFailsTheOthersAtOnce) {
  auto mesh = Mesh(2);
  CrossProcessCommunicator comm(mesh[0].get(), {0, 1}, 1, std::chrono::seconds(30));
  auto waiter = std::async(std::launch::async, [&] {
    float in = 1, out[2] = {};
    return comm.AllGather(0, {}, &in, out, 4, "stablehlo.all_gather");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto start = Clock::now();
  mesh[1].reset();
  Status status = waiter.get();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable);
  EXPECT_NE(status.message().find("stablehlo.all_gather"), std::string::npos) << status.ToString();
  EXPECT_NE(status.message().find("process 1"), std::string::npos) << status.ToString();
}

}  // namespace
}  // namespace stablert::collectives
