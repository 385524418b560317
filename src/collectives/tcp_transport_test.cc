#include "collectives/tcp_transport.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <numeric>
#include <thread>

namespace stablert::collectives {
namespace {

using Clock = std::chrono::steady_clock;

// `n` transports of one job in this process, connected over loopback.
std::vector<std::unique_ptr<TcpTransport>> Mesh(int n) {
  std::vector<std::unique_ptr<TcpTransport>> mesh;
  std::vector<std::string> addresses, tokens;
  for (int p = 0; p < n; ++p) {
    auto transport = TcpTransport::Listen(p, n, "127.0.0.1");
    EXPECT_TRUE(transport.ok()) << transport.status().ToString();
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
  EXPECT_EQ(std::vector<char>(first->begin(), first->end()), big);
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
  Status status = (*alone)->Connect({(*alone)->address(), (*absent)->address()},
                                    {(*alone)->token(), (*absent)->token()}, std::chrono::milliseconds(300));
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(status.message().find("processes 1"), std::string::npos) << status.ToString();
}

TEST(TcpTransport, PeerThatStopsReadingFailsTheSendAtTheDeadline) {
  // Process 1 is a raw socket: it greets process 0 and accepts its connection, never reads.
  auto transport = TcpTransport::Listen(0, 2, "127.0.0.1");
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
  std::string hello(8, '\0');
  const uint32_t head[2] = {0x53525443, 1};
  std::memcpy(hello.data(), head, sizeof head);
  hello += (*transport)->token();
  ASSERT_EQ(::send(greeter, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
  ASSERT_TRUE((*transport)->Connect({own, fake}, {"", std::string(32, 'f')}, std::chrono::seconds(10)).ok());
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

// Connects a raw socket to `transport` and sends `hello`; returns the socket.
int Greet(TcpTransport& transport, const std::string& hello) {
  const std::string own = transport.address();
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  target.sin_port = htons(static_cast<uint16_t>(std::stoi(own.substr(own.rfind(':') + 1))));
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof target), 0);
  if (!hello.empty()) {
    EXPECT_EQ(::send(fd, hello.data(), hello.size(), 0), static_cast<ssize_t>(hello.size()));
  }
  return fd;
}

TEST(TcpTransport, ConnectionsWithoutTheTokenAreClosedUnread) {
  auto transport = TcpTransport::Listen(0, 2, "127.0.0.1");
  ASSERT_TRUE(transport.ok());
  EXPECT_EQ((*transport)->address().rfind("127.0.0.1:", 0), 0u) << (*transport)->address();
  auto other = TcpTransport::Listen(1, 2, "127.0.0.1");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*transport)->token().size(), 32u);
  EXPECT_NE((*transport)->token(), (*other)->token());  // random per transport
  std::string hello(8, '\0');
  const uint32_t head[2] = {0x53525443, 1};
  std::memcpy(hello.data(), head, sizeof head);
  // Process 1's claim with a wrong token (process 1's own) is refused: the socket is closed.
  int wrong = Greet(**transport, hello + (*other)->token());
  char byte;
  EXPECT_EQ(::recv(wrong, &byte, 1, 0), 0);  // end of stream: closed by the transport
  ::close(wrong);
  EXPECT_EQ((*transport)->rejected_connections(), 1);
  // Process 1's connection, with the right token, is the one that counts.
  auto connected = std::async(std::launch::async, [&] {
    return (*other)->Connect({(*transport)->address(), (*other)->address()}, {(*transport)->token(), ""},
                             std::chrono::seconds(10));
  });
  Status status = (*transport)->Connect({(*transport)->address(), (*other)->address()}, {"", (*other)->token()},
                                        std::chrono::seconds(10));
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_TRUE(connected.get().ok());
  ASSERT_TRUE((*other)->Send(0, Tag{1, 2, 3}, "ok", 2).ok());
  auto got = (*transport)->Receive(1, Tag{1, 2, 3}, Clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(std::string(got->begin(), got->end()), "ok");
  EXPECT_FALSE(TcpTransport::Listen(0, 2, "not-an-address").ok());
}

}  // namespace
}  // namespace stablert::collectives

namespace stablert::collectives {
namespace {

TEST(MessageBuffers, LargeBuffersAreReusedUpToTheCap) {
  MessageBuffers buffers;
  const size_t piece = size_t{1} << 20;
  void* a = buffers.Take(piece);
  buffers.Give(a, piece);
  EXPECT_EQ(buffers.Take(piece), a);  // the same storage again: its pages stay mapped
  void* other = buffers.Take(piece);  // none kept now: a new one
  EXPECT_NE(other, a);
  buffers.Give(other, piece);
  void* bigger = buffers.Take(2 * piece);  // only buffers of the same size are reused
  EXPECT_NE(bigger, other);
  buffers.Give(bigger, 2 * piece);
  buffers.Give(a, piece);
  EXPECT_EQ(buffers.kept_bytes(), 4 * piece);
  // Beyond kMaxKeptBytes buffers are freed, not kept.
  std::vector<void*> many;
  for (size_t i = 0; i < MessageBuffers::kMaxKeptBytes / piece + 4; ++i) many.push_back(buffers.Take(piece));
  EXPECT_EQ(buffers.kept_bytes(), 2 * piece);  // the two 1 MiB ones were taken again
  for (void* data : many) buffers.Give(data, piece);
  EXPECT_EQ(buffers.kept_bytes(), MessageBuffers::kMaxKeptBytes);
  for (void*& data : many) data = buffers.Take(piece);
  EXPECT_EQ(buffers.kept_bytes(), 2 * piece);  // the 2 MiB one stays
  for (void* data : many) buffers.Give(data, piece);
  // Small buffers are plain allocations.
  void* small = buffers.Take(100);
  buffers.Give(small, 100);
}

TEST(MessageBuffers, PayloadsReuseReleasedStorageAndOutliveTheirPool) {
  auto buffers = std::make_shared<MessageBuffers>();
  const size_t piece = size_t{1} << 20;
  Payload first(piece, PayloadAllocator<char>(buffers));
  std::memset(first.data(), 0x5a, piece);
  const char* storage = first.data();
  first = Payload();  // releases the storage to the pool
  Payload second(piece, PayloadAllocator<char>(buffers));
  EXPECT_EQ(second.data(), storage);
  second[0] = 1;
  buffers.reset();  // the payload keeps the pool alive
  second.resize(2 * piece, 2);
  EXPECT_EQ(second[0], 1);
  EXPECT_EQ(second[2 * piece - 1], 2);
}

}  // namespace
}  // namespace stablert::collectives
