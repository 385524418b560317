#include "collectives/tcp_transport.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <numeric>
#include <thread>

namespace stablert::collectives {
namespace {

using Clock = std::chrono::steady_clock;

// `n` transports of one job in this process, connected over loopback.
std::vector<std::unique_ptr<TcpTransport>> Mesh(int n) {
  std::vector<std::unique_ptr<TcpTransport>> mesh;
  std::vector<std::string> addresses;
  for (int p = 0; p < n; ++p) {
    auto transport = TcpTransport::Listen(p, n);
    EXPECT_TRUE(transport.ok()) << transport.status().ToString();
    addresses.push_back((*transport)->address());
    mesh.push_back(std::move(*transport));
  }
  std::vector<std::future<Status>> connected;
  for (int p = 0; p < n; ++p)
    connected.push_back(std::async(std::launch::async, [&, p] {
      return mesh[p]->Connect(addresses, std::chrono::seconds(20));
    }));
  for (auto& c : connected) EXPECT_TRUE(c.get().ok());
  return mesh;
}

TEST(TcpTransport, DeliversTaggedMessagesInAnyOrderAndLargePayloadsWhole) {
  auto mesh = Mesh(3);
  std::vector<char> big(3 * TcpTransport::kChunkBytes + 17);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 7);
  ASSERT_TRUE(mesh[0]->Send(1, Tag{5, 1}, "second", 6).ok());
  ASSERT_TRUE(mesh[0]->Send(1, Tag{5, 0}, big.data(), big.size()).ok());
  ASSERT_TRUE(mesh[2]->Send(1, Tag{5, 0}, nullptr, 0).ok());
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  auto first = mesh[1]->Receive(0, Tag{5, 0}, deadline);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(*first, big);
  auto second = mesh[1]->Receive(0, Tag{5, 1}, deadline);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(std::string(second->begin(), second->end()), "second");
  auto empty = mesh[1]->Receive(2, Tag{5, 0}, deadline);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(TcpTransport, MissingMessageFailsAtTheDeadlineNamingTheProcess) {
  auto mesh = Mesh(2);
  const auto start = Clock::now();
  auto missing = mesh[0]->Receive(1, Tag{1, 0}, start + std::chrono::milliseconds(200));
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(missing.status().message().find("process 1"), std::string::npos) << missing.status().ToString();
}

TEST(TcpTransport, ClosedPeerFailsWaitersAtOnceAndLaterSends) {
  auto mesh = Mesh(2);
  auto waiter = std::async(std::launch::async, [&] {
    return mesh[0]->Receive(1, Tag{1, 0}, Clock::now() + std::chrono::seconds(30));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto start = Clock::now();
  mesh[1].reset();  // the peer goes away
  auto result = waiter.get();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(result.status().message().find("process 1"), std::string::npos) << result.status().ToString();
  EXPECT_FALSE(mesh[0]->PeerFailure(1).empty());
  EXPECT_FALSE(mesh[0]->Send(1, Tag{1, 1}, "x", 1).ok());
}

TEST(TcpTransport, ConnectFailsWithinTheTimeoutWhenAPeerNeverComes) {
  auto alone = TcpTransport::Listen(0, 2);
  ASSERT_TRUE(alone.ok());
  auto absent = TcpTransport::Listen(1, 2);  // listens, but never connects back
  ASSERT_TRUE(absent.ok());
  const auto start = Clock::now();
  Status status = (*alone)->Connect({(*alone)->address(), (*absent)->address()}, std::chrono::milliseconds(300));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(status.message().find("processes 1"), std::string::npos) << status.ToString();
}

TEST(TcpTransport, PeerThatStopsReadingFailsTheSendAtTheDeadline) {
  // Process 1 is a raw socket: it greets process 0 and accepts its connection, never reads.
  auto transport = TcpTransport::Listen(0, 2);
  ASSERT_TRUE(transport.ok());
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string fake = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  const std::string own = (*transport)->address();
  int greeter = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  target.sin_port = htons(static_cast<uint16_t>(std::stoi(own.substr(own.rfind(':') + 1))));
  ASSERT_EQ(::connect(greeter, reinterpret_cast<sockaddr*>(&target), sizeof target), 0);
  const uint32_t hello[2] = {0x53525443, 1};
  ASSERT_EQ(::send(greeter, hello, sizeof hello, 0), static_cast<ssize_t>(sizeof hello));
  ASSERT_TRUE((*transport)->Connect({own, fake}, std::chrono::seconds(10)).ok());
  std::vector<char> big(64 << 20);  // more than the socket buffers hold
  const auto start = Clock::now();
  Status status = (*transport)->Send(1, Tag{1, 0}, big.data(), big.size(), start + std::chrono::milliseconds(300));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
  EXPECT_NE(status.message().find("process 1"), std::string::npos) << status.ToString();
  EXPECT_FALSE((*transport)->PeerFailure(1).empty());
  transport->reset();
  ::close(greeter);
  ::close(listener);
}

TEST(TcpTransport, RejectsBadPeers) {
  auto mesh = Mesh(2);
  EXPECT_EQ(mesh[0]->Send(0, Tag{}, "x", 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mesh[0]->Send(7, Tag{}, "x", 1).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(TcpTransport::Listen(2, 2).ok());
}

}  // namespace
}  // namespace stablert::collectives
