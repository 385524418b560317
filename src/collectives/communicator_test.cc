#include "collectives/communicator.h"

#include <gtest/gtest.h>

#include <numeric>
#include <thread>

namespace stablert::collectives {
namespace {

Combiner AddInt32() {
  return [](const void* lhs, const void* rhs, void* out, int64_t count) {
    auto* a = static_cast<const int32_t*>(lhs);
    auto* b = static_cast<const int32_t*>(rhs);
    auto* o = static_cast<int32_t*>(out);
    for (int64_t i = 0; i < count; ++i) o[i] = a[i] + b[i];
    return OkStatus();
  };
}

// Runs `body(rank)` on `n` threads and returns each rank's status.
std::vector<Status> OnRanks(int n, const std::function<Status(int)>& body) {
  std::vector<Status> statuses(n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back([&, r] { statuses[r] = body(r); });
  for (auto& t : threads) t.join();
  return statuses;
}

TEST(Communicator, AllReduceInPlaceOverGroups) {
  InProcessCommunicator comm(4, std::chrono::seconds(10));
  std::vector<std::vector<int32_t>> data(4);
  auto statuses = OnRanks(4, [&](int r) {
    data[r] = {r, 10 * r};
    return comm.AllReduce(r, {{0, 2}, {1, 3}}, data[r].data(), data[r].data(), 2, 4, AddInt32(), "all_reduce");
  });
  for (const Status& s : statuses) ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(data[0], (std::vector<int32_t>{2, 20}));
  EXPECT_EQ(data[2], (std::vector<int32_t>{2, 20}));
  EXPECT_EQ(data[1], (std::vector<int32_t>{4, 40}));
  EXPECT_EQ(data[3], (std::vector<int32_t>{4, 40}));
}

TEST(Communicator, GatherScatterAllToAllPermuteBroadcast) {
  constexpr int n = 4;
  InProcessCommunicator comm(n, std::chrono::seconds(10));
  std::vector<std::vector<int32_t>> gathered(n, std::vector<int32_t>(n)), scattered(n, std::vector<int32_t>(1)),
      exchanged(n, std::vector<int32_t>(n)), permuted(n, std::vector<int32_t>(1)), broadcast(n, std::vector<int32_t>(1));
  auto statuses = OnRanks(n, [&](int r) -> Status {
    int32_t mine = 100 + r;
    STABLERT_RETURN_IF_ERROR(comm.AllGather(r, {}, &mine, gathered[r].data(), 4, "all_gather"));
    std::vector<int32_t> contribution(n);
    std::iota(contribution.begin(), contribution.end(), r * n);  // rank r: r*n .. r*n+n-1
    STABLERT_RETURN_IF_ERROR(
        comm.ReduceScatter(r, {}, contribution.data(), scattered[r].data(), 1, 4, AddInt32(), "reduce_scatter"));
    STABLERT_RETURN_IF_ERROR(comm.AllToAll(r, {}, contribution.data(), exchanged[r].data(), 4, "all_to_all"));
    STABLERT_RETURN_IF_ERROR(
        comm.CollectivePermute(r, {{0, 1}, {1, 2}, {2, 3}}, &mine, permuted[r].data(), 4, "collective_permute"));
    return comm.CollectiveBroadcast(r, {{2, 0, 1, 3}}, &mine, broadcast[r].data(), 4, "collective_broadcast");
  });
  for (const Status& s : statuses) ASSERT_TRUE(s.ok()) << s.ToString();
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(gathered[r], (std::vector<int32_t>{100, 101, 102, 103}));
    EXPECT_EQ(scattered[r][0], 0 * n + r + 1 * n + r + 2 * n + r + 3 * n + r);
    for (int j = 0; j < n; ++j) EXPECT_EQ(exchanged[r][j], j * n + r);
    EXPECT_EQ(permuted[r][0], r == 0 ? 0 : 100 + r - 1) << "rank 0 is no target and receives zeros";
    EXPECT_EQ(broadcast[r][0], 102) << "the first member of the group is the root";
  }
}

TEST(Communicator, MismatchedProgramsFailWithinTheTimeoutNamingMissingDevices) {
  InProcessCommunicator comm(3, std::chrono::milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  auto statuses = OnRanks(3, [&](int r) -> Status {
    int32_t v = r;
    if (r == 2) return OkStatus();  // device 2 never reaches the collective
    return comm.AllReduce(r, {}, &v, &v, 1, 4, AddInt32(), "stablehlo.all_reduce at f.py:3");
  });
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(statuses[r].code(), StatusCode::kDeadlineExceeded) << statuses[r].ToString();
    EXPECT_NE(statuses[r].message().find("stablehlo.all_reduce at f.py:3"), std::string::npos);
    EXPECT_NE(statuses[r].message().find("devices 2 did not reach"), std::string::npos) << statuses[r].message();
  }
}

TEST(Communicator, ALatePeerFailsAtOnceNamingTheCollectiveAndTheDevices) {
  InProcessCommunicator comm(3, std::chrono::milliseconds(100));
  std::chrono::steady_clock::duration late_wait{};
  auto statuses = OnRanks(3, [&](int r) -> Status {
    int32_t v = r;
    if (r == 2) {
      // Device 2 arrives long after devices 0 and 1 gave up.
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      auto start = std::chrono::steady_clock::now();
      Status status = comm.AllReduce(r, {}, &v, &v, 1, 4, AddInt32(), "stablehlo.all_reduce at f.py:3");
      late_wait = std::chrono::steady_clock::now() - start;
      return status;
    }
    return comm.AllReduce(r, {}, &v, &v, 1, 4, AddInt32(), "stablehlo.all_reduce at f.py:3");
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(statuses[r].code(), StatusCode::kDeadlineExceeded) << statuses[r].ToString();
    EXPECT_NE(statuses[r].message().find("devices 2 did not reach this collective within 0.1 s"), std::string::npos)
        << statuses[r].message();
    EXPECT_NE(statuses[r].message().find("waited with devices 0, 1"), std::string::npos) << statuses[r].message();
  }
  ASSERT_EQ(statuses[2].code(), StatusCode::kDeadlineExceeded) << statuses[2].ToString();
  std::string late(statuses[2].message());
  EXPECT_NE(late.find("stablehlo.all_reduce at f.py:3: device 2 reached this collective too late"), std::string::npos)
      << late;
  EXPECT_NE(late.find("devices 0, 1 stopped waiting for devices 2 after 0.1 s"), std::string::npos) << late;
  EXPECT_LT(late_wait, std::chrono::milliseconds(50)) << "a late peer must not wait out another timeout";
}

TEST(Communicator, ReductionOrderIsTheGroupOrder) {
  // A non-commutative combiner exposes the order: out = ((in0 * 10 + in1) * 10 + in2).
  Combiner append = [](const void* lhs, const void* rhs, void* out, int64_t) {
    *static_cast<int32_t*>(out) = *static_cast<const int32_t*>(lhs) * 10 + *static_cast<const int32_t*>(rhs);
    return OkStatus();
  };
  for (int trial = 0; trial < 20; ++trial) {
    InProcessCommunicator comm(3, std::chrono::seconds(10));
    std::vector<int32_t> value = {1, 2, 3};
    auto statuses = OnRanks(3, [&](int r) { return comm.AllReduce(r, {{2, 0, 1}}, &value[r], &value[r], 1, 4, append, "x"); });
    for (const Status& s : statuses) ASSERT_TRUE(s.ok());
    for (int32_t v : value) EXPECT_EQ(v, 312);
  }
}

}  // namespace
}  // namespace stablert::collectives
