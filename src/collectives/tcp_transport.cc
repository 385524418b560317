#include "collectives/tcp_transport.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sys/time.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

namespace stablert::collectives {
namespace {

constexpr uint32_t kHelloMagic = 0x53525443;  // "SRTC"
constexpr size_t kTokenLength = 32;           // hex digits

// The greeting that opens a connection: magic, the connecting process, the token of the
// process connected to.
struct Hello {
  uint32_t magic;
  uint32_t rank;
  char token[kTokenLength];
};

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Writes all of `bytes`, at most kChunkBytes per call, waiting for room in the socket until
// `deadline` (a peer that stopped reading must not block the sender forever). False on error
// (errno set; ETIMEDOUT at the deadline).
bool WriteAll(int fd, const void* data, size_t bytes,
              std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::send(fd, p, std::min(bytes, TcpTransport::kChunkBytes), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) {
        errno = ETIMEDOUT;
        return false;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      pollfd waiting{fd, POLLOUT, 0};
      ::poll(&waiting, 1, static_cast<int>(std::min<int64_t>(left + 1, 1000)));
      continue;
    }
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// Reads exactly `bytes`; false on error or end of stream (errno 0 then).
bool ReadAll(int fd, void* data, size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = ::recv(fd, p, std::min(bytes, TcpTransport::kChunkBytes), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = 0;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<size_t>(n);
  }
  return true;
}

// No Nagle delay for small messages; socket buffers of 4 MiB, so that a large message
// crosses with few wake-ups of sender and reader.
void SetNoDelay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int buffer = 4 << 20;
  ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof buffer);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof buffer);
}

// The IPv4 address this host's name resolves to, unless that is a loopback address or the name
// does not resolve: then 127.0.0.1 (a job on one machine).
std::string DefaultAddress() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(name, nullptr, &hints, &found) == 0) {
      std::string address;
      for (addrinfo* a = found; a && address.empty(); a = a->ai_next) {
        const auto* ip = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
        char text[INET_ADDRSTRLEN] = {};
        if ((ntohl(ip->sin_addr.s_addr) >> 24) != 127 && ::inet_ntop(AF_INET, &ip->sin_addr, text, sizeof text))
          address = text;
      }
      ::freeaddrinfo(found);
      if (!address.empty()) return address;
    }
  }
  return "127.0.0.1";
}

// 128 random bits as 32 hex digits.
std::string RandomToken() {
  std::random_device device;
  std::string token;
  for (int i = 0; i < 4; ++i) {
    char word[9];
    std::snprintf(word, sizeof word, "%08x", static_cast<unsigned>(device()));
    token += word;
  }
  return token;
}

// Compares without an early exit, so that timing does not tell how much of a guess was right.
bool SameToken(const char* a, const std::string& b) {
  unsigned char difference = 0;
  for (size_t i = 0; i < kTokenLength; ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

void SetReceiveTimeout(int fd, std::chrono::milliseconds timeout) {
  timeval limit{};
  limit.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  limit.tv_usec = static_cast<suseconds_t>(timeout.count() % 1000 * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
}

// One connection attempt to "host:port"; -1 with `error` set on failure.
int ConnectOnce(const std::string& address, std::string& error) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) {
    error = "malformed address '" + address + "'";
    return -1;
  }
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    error = "cannot resolve " + address + ": " + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      error = Errno(("connect to " + address).c_str());
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  return fd;
}

}  // namespace

StatusOr<std::unique_ptr<TcpTransport>> TcpTransport::Listen(int rank, int size, const std::string& bind_address) {
  if (size < 1 || rank < 0 || rank >= size)
    return InvalidArgument("TcpTransport: process " + std::to_string(rank) + " of " + std::to_string(size));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable(Errno("collective transport: socket"));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const std::string host = bind_address.empty() ? DefaultAddress() : bind_address;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return InvalidArgument("collective transport: '" + host + "' is not a numeric IPv4 address to listen on");
  }
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, size + 8) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Status error = Unavailable(Errno(("collective transport: listening on " + host).c_str()));
    ::close(fd);
    return error;
  }
  std::string address = host + ":" + std::to_string(ntohs(addr.sin_port));
  std::unique_ptr<TcpTransport> transport(new TcpTransport(rank, size, fd, std::move(address), RandomToken()));
  transport->acceptor_ = std::thread([t = transport.get()] { t->AcceptLoop(); });
  return transport;
}

TcpTransport::TcpTransport(int rank, int size, int listener, std::string address, std::string token)
    : rank_(rank),
      size_(size),
      listener_(listener),
      address_(std::move(address)),
      token_(std::move(token)),
      outgoing_(static_cast<size_t>(size), -1),
      incoming_(static_cast<size_t>(size), -1),
      failure_(static_cast<size_t>(size)),
      mailbox_(static_cast<size_t>(size)) {
  for (int p = 0; p < size; ++p) send_mutex_.push_back(std::make_unique<std::mutex>());
}

TcpTransport::~TcpTransport() {
  closing_ = true;
  ::shutdown(listener_, SHUT_RDWR);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int fd : outgoing_)
      if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    for (int fd : incoming_)
      if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
  }
  if (acceptor_.joinable()) acceptor_.join();
  for (std::thread& reader : readers_)
    if (reader.joinable()) reader.join();
  ::close(listener_);
  for (int fd : outgoing_)
    if (fd >= 0) ::close(fd);
  for (int fd : incoming_)
    if (fd >= 0) ::close(fd);
}

void TcpTransport::AcceptLoop() {
  while (!closing_) {
    pollfd p{listener_, POLLIN, 0};
    int ready = ::poll(&p, 1, 100);
    if (closing_) return;
    if (ready <= 0) continue;
    int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    SetNoDelay(fd);
    // A connection that does not greet with this transport's token is closed unread; one
    // that sends nothing cannot hold the acceptor longer than kHelloTimeout.
    SetReceiveTimeout(fd, kHelloTimeout);
    Hello hello{};
    if (!ReadAll(fd, &hello, sizeof hello) || hello.magic != kHelloMagic || hello.rank >= static_cast<uint32_t>(size_) ||
        static_cast<int>(hello.rank) == rank_ || !SameToken(hello.token, token_)) {
      ::close(fd);
      std::lock_guard<std::mutex> lock(mutex_);
      ++rejected_;
      continue;
    }
    SetReceiveTimeout(fd, std::chrono::milliseconds(0));
    int peer = static_cast<int>(hello.rank);
    std::lock_guard<std::mutex> lock(mutex_);
    if (incoming_[static_cast<size_t>(peer)] >= 0 || closing_) {
      ::close(fd);
      ++rejected_;
      continue;
    }
    incoming_[static_cast<size_t>(peer)] = fd;
    readers_.emplace_back([this, peer, fd] { ReadLoop(peer, fd); });
    changed_.notify_all();
  }
}

void TcpTransport::ReadLoop(int peer, int fd) {
  while (true) {
    uint64_t header[4];  // run, call, part, bytes
    if (!ReadAll(fd, header, sizeof header)) break;
    Payload payload(static_cast<size_t>(header[3]), PayloadAllocator<char>(buffers_));
    if (!payload.empty() && !ReadAll(fd, payload.data(), payload.size())) break;
    std::lock_guard<std::mutex> lock(mutex_);
    mailbox_[static_cast<size_t>(peer)][Tag{header[0], header[1], header[2]}] = std::move(payload);
    changed_.notify_all();
  }
  if (closing_) return;
  FailPeer(peer, errno == 0 ? "closed its connection (it exited or failed)"
                            : Errno("broke its connection"));
}

void TcpTransport::FailPeer(int peer, const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failure_[static_cast<size_t>(peer)].empty()) failure_[static_cast<size_t>(peer)] = why;
  changed_.notify_all();
}

MessageBuffers::~MessageBuffers() {
  for (auto& [bytes, data] : free_) ::operator delete(data);
}

void* MessageBuffers::Take(size_t bytes) {
  if (bytes >= kMinPooledBytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(bytes);
    if (it != free_.end()) {
      void* data = it->second;
      free_.erase(it);
      kept_ -= bytes;
      return data;
    }
  }
  return ::operator new(bytes);
}

void MessageBuffers::Give(void* data, size_t bytes) {
  if (bytes >= kMinPooledBytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (kept_ + bytes <= kMaxKeptBytes) {
      free_.emplace(bytes, data);
      kept_ += bytes;
      return;
    }
  }
  ::operator delete(data);
}

size_t MessageBuffers::kept_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return kept_;
}

int TcpTransport::rejected_connections() {
  std::lock_guard<std::mutex> lock(mutex_);
  return rejected_;
}

std::string TcpTransport::PeerFailure(int peer) {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_[static_cast<size_t>(peer)];
}

Status TcpTransport::Connect(const std::vector<std::string>& addresses, const std::vector<std::string>& tokens,
                             std::chrono::milliseconds timeout) {
  if (static_cast<int>(addresses.size()) != size_ || static_cast<int>(tokens.size()) != size_)
    return InvalidArgument("collective transport: " + std::to_string(addresses.size()) + " addresses and " +
                           std::to_string(tokens.size()) + " tokens for " + std::to_string(size_) + " processes");
  for (int p = 0; p < size_; ++p)
    if (p != rank_ && tokens[static_cast<size_t>(p)].size() != kTokenLength)
      return InvalidArgument("collective transport: process " + std::to_string(p) + "'s token has " +
                             std::to_string(tokens[static_cast<size_t>(p)].size()) + " characters, not " +
                             std::to_string(kTokenLength));
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int p = 0; p < size_; ++p) {
    if (p == rank_) continue;
    std::string error;
    int fd = -1;
    while (fd < 0) {
      fd = ConnectOnce(addresses[static_cast<size_t>(p)], error);
      if (fd >= 0) break;
      if (std::chrono::steady_clock::now() >= deadline)
        return DeadlineExceeded("collective transport: process " + std::to_string(rank_) +
                                " could not connect to process " + std::to_string(p) + " at " +
                                addresses[static_cast<size_t>(p)] + ": " + error);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    SetNoDelay(fd);
    Hello hello{kHelloMagic, static_cast<uint32_t>(rank_), {}};
    std::memcpy(hello.token, tokens[static_cast<size_t>(p)].data(), kTokenLength);
    if (!WriteAll(fd, &hello, sizeof hello)) {
      Status status = Unavailable(Errno(("collective transport: greeting process " + std::to_string(p)).c_str()));
      ::close(fd);
      return status;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    outgoing_[static_cast<size_t>(p)] = fd;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  auto all_in = [&] {
    for (int p = 0; p < size_; ++p)
      if (p != rank_ && incoming_[static_cast<size_t>(p)] < 0) return false;
    return true;
  };
  if (!changed_.wait_until(lock, deadline, all_in)) {
    std::string missing;
    for (int p = 0; p < size_; ++p)
      if (p != rank_ && incoming_[static_cast<size_t>(p)] < 0) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
    return DeadlineExceeded("collective transport: processes " + missing + " did not connect to process " +
                            std::to_string(rank_) + " within " + std::to_string(timeout.count() / 1000) + " s");
  }
  return OkStatus();
}

Status TcpTransport::Send(int peer, Tag tag, const void* data, size_t bytes,
                          std::chrono::steady_clock::time_point deadline) {
  return SendParts(peer, tag, {{data, bytes}}, deadline);
}

Status TcpTransport::SendParts(int peer, Tag tag, const std::vector<std::pair<const void*, size_t>>& parts,
                               std::chrono::steady_clock::time_point deadline) {
  size_t bytes = 0;
  for (const auto& part : parts) bytes += part.second;
  if (peer < 0 || peer >= size_ || peer == rank_)
    return InvalidArgument("collective transport: cannot send to process " + std::to_string(peer));
  int fd;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fd = outgoing_[static_cast<size_t>(peer)];
    if (!failure_[static_cast<size_t>(peer)].empty())
      return Unavailable("process " + std::to_string(peer) + " " + failure_[static_cast<size_t>(peer)]);
  }
  if (fd < 0) return FailedPrecondition("collective transport: not connected to process " + std::to_string(peer));
  std::lock_guard<std::mutex> send_lock(*send_mutex_[static_cast<size_t>(peer)]);
  uint64_t header[4] = {tag.run, tag.call, tag.part, static_cast<uint64_t>(bytes)};
  bool written = WriteAll(fd, header, sizeof header, deadline);
  for (size_t i = 0; written && i < parts.size(); ++i)
    if (parts[i].second > 0) written = WriteAll(fd, parts[i].first, parts[i].second, deadline);
  if (!written) {
    if (errno == ETIMEDOUT) {  // the stream is cut mid-message: the connection is unusable now
      FailPeer(peer, "stopped taking data (a message to it was cut at a collective's deadline)");
      return DeadlineExceeded("process " + std::to_string(peer) + " took no data before the deadline");
    }
    std::string why = Errno("broke its connection");
    FailPeer(peer, why);
    return Unavailable("process " + std::to_string(peer) + " " + why);
  }
  return OkStatus();
}

StatusOr<Payload> TcpTransport::Receive(int peer, Tag tag, std::chrono::steady_clock::time_point deadline) {
  if (peer < 0 || peer >= size_ || peer == rank_)
    return InvalidArgument("collective transport: cannot receive from process " + std::to_string(peer));
  std::unique_lock<std::mutex> lock(mutex_);
  auto& box = mailbox_[static_cast<size_t>(peer)];
  while (true) {
    auto it = box.find(tag);
    if (it != box.end()) {
      Payload payload = std::move(it->second);
      box.erase(it);
      return payload;
    }
    if (!failure_[static_cast<size_t>(peer)].empty())
      return Unavailable("process " + std::to_string(peer) + " " + failure_[static_cast<size_t>(peer)]);
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout && std::chrono::steady_clock::now() >= deadline) {
      if (box.count(tag)) continue;
      return DeadlineExceeded("process " + std::to_string(peer) + " sent nothing in time");
    }
  }
}

}  // namespace stablert::collectives
