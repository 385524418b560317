#include "runtime/cross_host_transfer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace stablert::runtime {
namespace {

using collectives::TcpTransport;

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
    connected.push_back(std::async(std::launch::async, [&, p] {
      return mesh[p]->Connect(addresses, tokens, std::chrono::seconds(20));
    }));
  for (auto& c : connected) EXPECT_TRUE(c.get().ok());
  return mesh;
}

// A device of "process" `process` (global id `id`) with a default memory space.
struct TestDevice {
  TestDevice(int id, int process) : device(id, process, 0), memory(id, "device", 0) {
    memory.AddDevice(&device);
  }
  Device device;
  MemorySpace memory;
};

std::unique_ptr<Buffer> FloatBuffer(TestDevice& on, const std::vector<float>& values, EventRef ready,
                                    Dims dims = {}, MajorToMinor layout = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
  auto storage = BufferStorage::Allocate(values.size() * sizeof(float));
  EXPECT_TRUE(storage.ok());
  std::memcpy((*storage)->data(), values.data(), values.size() * sizeof(float));
  return std::make_unique<Buffer>(DType::kF32, dims, &on.device, &on.memory, *storage, std::move(ready),
                                  std::move(layout));
}

// Process 0 with device 0 sends to process 1 with device 1.
struct SenderAndReceiver {
  std::vector<std::unique_ptr<TcpTransport>> mesh = Mesh(2);
  TestDevice source{0, 0}, destination{1, 1};
  CrossHostTransfers sender{mesh[0].get(), std::chrono::seconds(20)};
  CrossHostTransfers receiver{mesh[1].get(), std::chrono::seconds(20)};
};

std::vector<float> Values(const Buffer& buffer) {
  auto storage = buffer.storage("test");
  EXPECT_TRUE(storage.ok());
  std::vector<float> values(buffer.size_in_bytes() / sizeof(float));
  std::memcpy(values.data(), (*storage)->data(), buffer.size_in_bytes());
  return values;
}

TEST(CrossHostTransfers, SendsBytesThatArriveWhenTheSourceIsReady) {
  SenderAndReceiver pair;
  auto& [mesh, source, destination, sender, receiver] = pair;
  std::vector<float> values(3 << 20);  // 12 MiB: several transport pieces
  std::iota(values.begin(), values.end(), 0.5f);
  EventRef source_ready = Event::Create();
  auto buffer = FloatBuffer(source, values, source_ready);
  // The receive is asked for first; the send waits for its source.
  auto received = receiver.Receive("Receive", DType::kF32, {static_cast<int64_t>(values.size())}, {},
                                   &destination.device, &destination.memory, 0, 0, 7);
  ASSERT_TRUE(received.ok()) << received.status().ToString();
  auto sent = sender.Send("Send", *buffer, 1, 1, 7);
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE((*received)->ready_event()->IsReady());
  EXPECT_FALSE((*sent)->IsReady());
  ASSERT_TRUE(source_ready->Set(OkStatus()).ok());
  ASSERT_TRUE((*sent)->Await().ok());
  ASSERT_TRUE((*received)->ready_event()->Await().ok());
  EXPECT_EQ(Values(**received), values);
}

// The bytes of a row-major f32 array of `dims` (values 0, 1, 2, ...) in layout `m2m`,
// element by element (independent of the transpose kernel).
std::vector<float> InLayout(const Dims& dims, const MajorToMinor& m2m) {
  const Dims physical = PhysicalDims(dims, m2m);
  const Dims logical_strides = RowMajorStrides(dims);
  const int64_t count = ElementCount(dims);
  std::vector<float> bytes(static_cast<size_t>(count));
  std::vector<int64_t> index(physical.size(), 0);  // a physical index
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t logical = 0;
    for (size_t q = 0; q < index.size(); ++q)
      logical += index[q] * logical_strides[static_cast<size_t>(m2m.empty() ? q : m2m[q])];
    bytes[static_cast<size_t>(linear)] = static_cast<float>(logical);
    for (size_t q = index.size(); q-- > 0;) {
      if (++index[q] < physical[q]) break;
      index[q] = 0;
    }
  }
  return bytes;
}

TEST(CrossHostTransfers, ArraysArriveInTheLayoutAskedForWhateverTheSendersLayout) {
  SenderAndReceiver pair;
  auto& [mesh, source, destination, sender, receiver] = pair;
  // Rank 3 (with a dimension of extent 1) and a matrix big enough for the transpose kernel
  // to split over the pool.
  const std::vector<Dims> shapes = {{3, 1, 5}, {300, 257}};
  const std::vector<std::vector<MajorToMinor>> layouts = {
      {{}, {0, 1, 2}, {2, 0, 1}, {1, 2, 0}, {2, 1, 0}}, {{}, {1, 0}}};
  int64_t key = 0;
  for (size_t s = 0; s < shapes.size(); ++s) {
    for (const MajorToMinor& from : layouts[s]) {
      for (const MajorToMinor& to : layouts[s]) {
        ++key;
        const std::string which = "dims " + std::to_string(s) + " from " + LayoutToString(from, shapes[s].size()) +
                                  " to " + LayoutToString(to, shapes[s].size());
        auto buffer = FloatBuffer(source, InLayout(shapes[s], from), Event::Ready(), shapes[s], from);
        auto sent = sender.Send("Send", *buffer, 1, 1, key);
        ASSERT_TRUE(sent.ok()) << which << ": " << sent.status().ToString();
        auto received = receiver.Receive("Receive", DType::kF32, shapes[s], to, &destination.device,
                                         &destination.memory, 0, 0, key);
        ASSERT_TRUE(received.ok()) << which << ": " << received.status().ToString();
        ASSERT_TRUE((*received)->ready_event()->Await().ok()) << which;
        EXPECT_TRUE((*sent)->Await().ok()) << which;
        EXPECT_EQ((*received)->layout(), NormalizeLayout(to)) << which;
        EXPECT_EQ(Values(**received), InLayout(shapes[s], to)) << which;
      }
    }
  }
}

TEST(CrossHostTransfers, ReceiveRefusesALayoutThatIsNotAPermutation) {
  auto mesh = Mesh(2);
  TestDevice destination(1, 1);
  CrossHostTransfers receiver(mesh[1].get(), std::chrono::seconds(5));
  auto received =
      receiver.Receive("Receive", DType::kF32, {2, 3}, {1, 1}, &destination.device, &destination.memory, 0, 0, 1);
  EXPECT_EQ(received.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(received.status().message().find("Receive: receiving a f32[2,3] buffer"), std::string::npos)
      << received.status().ToString();
  EXPECT_NE(received.status().message().find("is not a permutation of the 2 dimensions"), std::string::npos)
      << received.status().ToString();
}

TEST(CrossHostTransfers, KeysAndDevicesKeepTransfersApart) {
  auto mesh = Mesh(2);
  TestDevice a(0, 0), b(1, 0), c(2, 1), d(3, 1);
  CrossHostTransfers p0(mesh[0].get(), std::chrono::seconds(20));
  CrossHostTransfers p1(mesh[1].get(), std::chrono::seconds(20));
  // Sent in one order, received in another.
  auto first = FloatBuffer(a, {1, 2}, Event::Ready());
  auto second = FloatBuffer(b, {3, 4}, Event::Ready());
  auto third = FloatBuffer(a, {5, 6}, Event::Ready());
  ASSERT_TRUE(p0.Send("Send", *first, 2, 1, 1).ok());
  ASSERT_TRUE(p0.Send("Send", *second, 3, 1, 1).ok());
  ASSERT_TRUE(p0.Send("Send", *third, 2, 1, 2).ok());
  auto r3 = p1.Receive("Receive", DType::kF32, {2}, {}, &c.device, &c.memory, 0, 0, 2);
  auto r2 = p1.Receive("Receive", DType::kF32, {2}, {}, &d.device, &d.memory, 1, 0, 1);
  auto r1 = p1.Receive("Receive", DType::kF32, {2}, {}, &c.device, &c.memory, 0, 0, 1);
  for (auto* r : {&r1, &r2, &r3}) ASSERT_TRUE(r->ok() && (**r)->ready_event()->Await().ok());
  EXPECT_EQ(Values(**r1), (std::vector<float>{1, 2}));
  EXPECT_EQ(Values(**r2), (std::vector<float>{3, 4}));
  EXPECT_EQ(Values(**r3), (std::vector<float>{5, 6}));
}

TEST(CrossHostTransfers, ShapeMismatchAndFailedSourceFailTheReceiver) {
  SenderAndReceiver pair;
  auto& [mesh, source, destination, sender, receiver] = pair;
  auto buffer = FloatBuffer(source, {1, 2, 3, 4}, Event::Ready(), {2, 2});
  ASSERT_TRUE(sender.Send("Send", *buffer, 1, 1, 1).ok());
  auto wrong = receiver.Receive("Receive", DType::kF32, {4}, {}, &destination.device, &destination.memory, 0, 0, 1);
  ASSERT_TRUE(wrong.ok());
  Status status = (*wrong)->ready_event()->Await();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("another shape"), std::string::npos) << status.ToString();

  auto failed = FloatBuffer(source, {1}, Event::Ready(Internal("the program failed")));
  auto sent = sender.Send("Send", *failed, 1, 1, 2);
  ASSERT_TRUE(sent.ok());
  EXPECT_FALSE((*sent)->Await().ok());
  auto never = receiver.Receive("Receive", DType::kF32, {1}, {}, &destination.device, &destination.memory, 0, 0, 2);
  ASSERT_TRUE(never.ok());
  status = (*never)->ready_event()->Await();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("source buffer failed in process 0"), std::string::npos) << status.ToString();
}

TEST(CrossHostTransfers, LostOrSilentPeerFailsTheReceiveNamingIt) {
  auto mesh = Mesh(2);
  TestDevice destination(1, 1);
  {
    CrossHostTransfers receiver(mesh[1].get(), std::chrono::milliseconds(300));
    auto silent = receiver.Receive("Receive", DType::kF32, {1}, {}, &destination.device, &destination.memory, 0, 0, 1);
    ASSERT_TRUE(silent.ok());
    Status status = (*silent)->ready_event()->Await();
    EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
    EXPECT_NE(status.message().find("process 0 sent nothing"), std::string::npos) << status.ToString();
  }
  CrossHostTransfers receiver(mesh[1].get(), std::chrono::seconds(30));
  auto lost = receiver.Receive("Receive", DType::kF32, {1}, {}, &destination.device, &destination.memory, 0, 0, 2);
  ASSERT_TRUE(lost.ok());
  const auto start = std::chrono::steady_clock::now();
  mesh[0].reset();  // process 0 goes away
  Status status = (*lost)->ready_event()->Await();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.ToString();
  EXPECT_NE(status.message().find("Receive: receiving a f32[1] buffer on device 1 from device 0 (process 0)"),
            std::string::npos)
      << status.ToString();
}

TEST(CrossHostTransfers, RefusesATransferWithinTheProcess) {
  auto mesh = Mesh(2);
  TestDevice source(0, 0);
  CrossHostTransfers transfers(mesh[0].get(), std::chrono::seconds(5));
  auto buffer = FloatBuffer(source, {1}, Event::Ready());
  auto sent = transfers.Send("Send", *buffer, 0, 0, 1);
  EXPECT_EQ(sent.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace stablert::runtime
