#include "host/tcp_kv_store.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stablert::host {
namespace {

enum Op : uint8_t { kPut = 1, kGet = 2, kTryGet = 3 };

std::string Errno() { return std::strerror(errno); }

void AppendU32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t ReadU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(p[i])) << (8 * i);
  return v;
}

// Writes all of `data`; false on a closed or failed socket.
bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

enum class ReadResult { kOk, kClosed, kTimeout, kError };

// Reads exactly `size` bytes, waiting at most until `deadline` (none: forever).
ReadResult ReadExactly(int fd, char* out, size_t size,
                       std::optional<std::chrono::steady_clock::time_point> deadline) {
  size_t done = 0;
  while (done < size) {
    int wait_ms = -1;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return ReadResult::kTimeout;
      wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    int ready = ::poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return ReadResult::kError;
    if (ready == 0) return ReadResult::kTimeout;
    ssize_t n = ::recv(fd, out + done, size - done, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return ReadResult::kClosed;
    if (n < 0) return ReadResult::kError;
    done += static_cast<size_t>(n);
  }
  return ReadResult::kOk;
}

// Keys and values are bounded so a corrupt or hostile peer cannot make us allocate gigabytes.
constexpr uint32_t kMaxField = 64u << 20;

// Reads a u32-prefixed field; nullopt on a closed socket, timeout or oversized field.
std::optional<std::string> ReadField(int fd, std::optional<std::chrono::steady_clock::time_point> deadline,
                                     ReadResult* result) {
  char size_bytes[4];
  *result = ReadExactly(fd, size_bytes, 4, deadline);
  if (*result != ReadResult::kOk) return std::nullopt;
  uint32_t size = ReadU32(size_bytes);
  if (size > kMaxField) {
    *result = ReadResult::kError;
    return std::nullopt;
  }
  std::string field(size, '\0');
  *result = ReadExactly(fd, field.data(), size, deadline);
  if (*result != ReadResult::kOk) return std::nullopt;
  return field;
}

std::string Answer(const Status& status, const std::string& value) {
  std::string out;
  out.push_back(static_cast<char>(static_cast<uint8_t>(status.code())));
  const std::string payload = status.ok() ? value : std::string(status.message());
  AppendU32(out, static_cast<uint32_t>(payload.size()));
  return out + payload;
}

}  // namespace

// --- server --------------------------------------------------------------------------------

StatusOr<std::shared_ptr<TcpKeyValueServer>> TcpKeyValueServer::Start(int port, bool loopback_only) {
  if (port < 0 || port > 65535) return InvalidArgument("TcpKeyValueServer: port " + std::to_string(port) + " out of range");
  std::shared_ptr<TcpKeyValueServer> server(new TcpKeyValueServer());
  server->loopback_only_ = loopback_only;
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable("key-value server: socket: " + Errno());
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    std::string reason = Errno();
    ::close(fd);
    return Unavailable("key-value server: cannot listen on port " + std::to_string(port) + ": " + reason);
  }
  socklen_t length = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  server->listen_fd_ = fd;
  server->port_ = ntohs(addr.sin_port);
  server->acceptor_ = std::thread([raw = server.get()] { raw->AcceptLoop(); });
  return server;
}

TcpKeyValueServer::~TcpKeyValueServer() {
  stopping_ = true;
  store_.Close();
  // Shutting the listening socket down wakes accept(); shutting the connections' read side
  // down wakes reads waiting for a next request, while a request already read still sends
  // its answer (a Put that this process was waiting for is acknowledged before it exits).
  ::shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int fd : connections_) ::shutdown(fd, SHUT_RD);
    threads.swap(threads_);
  }
  for (std::thread& t : threads) t.join();
}

std::string TcpKeyValueServer::address() const {
  if (loopback_only_) return "127.0.0.1:" + std::to_string(port_);
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "127.0.0.1:" + std::to_string(port_);
  return std::string(name) + ":" + std::to_string(port_);
}

void TcpKeyValueServer::AcceptLoop() {
  while (!stopping_) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down (or a fatal error: clients then see connection failures)
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      ::close(fd);
      return;
    }
    connections_.push_back(fd);
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TcpKeyValueServer::Serve(int fd) {
  while (!stopping_) {
    char op;
    if (ReadExactly(fd, &op, 1, std::nullopt) != ReadResult::kOk) break;
    ReadResult result;
    std::optional<std::string> key = ReadField(fd, std::nullopt, &result);
    if (!key) break;
    std::optional<std::string> value = ReadField(fd, std::nullopt, &result);
    if (!value) break;
    char timeout_bytes[4];
    if (ReadExactly(fd, timeout_bytes, 4, std::nullopt) != ReadResult::kOk) break;
    std::chrono::milliseconds timeout(ReadU32(timeout_bytes));
    std::string answer;
    if (op == kPut) {
      answer = Answer(Put(*key, *value), "");
    } else if (op == kGet || op == kTryGet) {
      StatusOr<std::string> got = op == kGet ? Get(*key, timeout) : TryGet(*key);
      answer = got.ok() ? Answer(OkStatus(), *got) : Answer(got.status(), "");
    } else {
      answer = Answer(InvalidArgument("key-value server: unknown request " + std::to_string(op)), "");
    }
    if (!WriteAll(fd, answer)) break;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = connections_.begin(); it != connections_.end(); ++it)
    if (*it == fd) {
      connections_.erase(it);
      break;
    }
  ::close(fd);
}

StatusOr<std::string> TcpKeyValueServer::Get(const std::string& key, std::chrono::milliseconds timeout) {
  return store_.Get(key, timeout);
}

StatusOr<std::string> TcpKeyValueServer::TryGet(const std::string& key) { return store_.TryGet(key); }

Status TcpKeyValueServer::Put(const std::string& key, const std::string& value) { return store_.Put(key, value); }

// --- client --------------------------------------------------------------------------------

StatusOr<std::shared_ptr<TcpKeyValueStore>> TcpKeyValueStore::Connect(const std::string& address,
                                                                      std::chrono::milliseconds connect_timeout) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size())
    return InvalidArgument("key-value store address '" + address + "': expected host:port");
  std::string host = address.substr(0, colon);
  char* end = nullptr;
  long port = std::strtol(address.c_str() + colon + 1, &end, 10);
  if (*end || port < 1 || port > 65535)
    return InvalidArgument("key-value store address '" + address + "': the port must be 1..65535");
  std::shared_ptr<TcpKeyValueStore> store(new TcpKeyValueStore(host, static_cast<int>(port), address));
  STABLERT_ASSIGN_OR_RETURN(int fd, store->OpenConnection(connect_timeout));
  store->idle_.push_back(fd);
  return store;
}

TcpKeyValueStore::~TcpKeyValueStore() {
  for (int fd : idle_) ::close(fd);
}

StatusOr<int> TcpKeyValueStore::OpenConnection(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error;
  for (;;) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int resolved = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &found);
    if (resolved != 0) {
      last_error = std::string("cannot resolve '") + host_ + "': " + ::gai_strerror(resolved);
    } else {
      for (addrinfo* a = found; a; a = a->ai_next) {
        int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
          last_error = "socket: " + Errno();
          continue;
        }
        if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          ::freeaddrinfo(found);
          return fd;
        }
        last_error = Errno();
        ::close(fd);
      }
      ::freeaddrinfo(found);
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Unavailable("key-value store at " + address_ + ": cannot connect within " +
                     std::to_string(timeout.count()) + " ms: " + last_error);
}

StatusOr<std::string> TcpKeyValueStore::Request(uint8_t op, const std::string& key, const std::string& value,
                                                std::chrono::milliseconds timeout) {
  if (key.size() > kMaxField || value.size() > kMaxField)
    return InvalidArgument("key-value store: key or value larger than 64 MiB");
  if (timeout.count() < 0) timeout = std::chrono::milliseconds(0);
  if (timeout.count() > 0xffffffffll) timeout = std::chrono::milliseconds(0xffffffffll);
  int fd = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      fd = idle_.back();
      idle_.pop_back();
    }
  }
  if (fd < 0) {
    STABLERT_ASSIGN_OR_RETURN(fd, OpenConnection(std::chrono::seconds(5)));
  }
  std::string request;
  request.push_back(static_cast<char>(op));
  AppendU32(request, static_cast<uint32_t>(key.size()));
  request += key;
  AppendU32(request, static_cast<uint32_t>(value.size()));
  request += value;
  AppendU32(request, static_cast<uint32_t>(timeout.count()));
  auto fail = [&](const std::string& what) {
    ::close(fd);
    return Unavailable("key-value store at " + address_ + ": " + what + " (key '" + key + "')");
  };
  if (!WriteAll(fd, request)) return fail("the server closed the connection (it exited or failed)");
  auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(timeout + io_slack_);
  auto deadline = std::chrono::steady_clock::now() + wait;
  char code;
  ReadResult result = ReadExactly(fd, &code, 1, deadline);
  std::optional<std::string> payload;
  if (result == ReadResult::kOk) payload = ReadField(fd, deadline, &result);
  if (result == ReadResult::kTimeout)
    return fail("no answer within " + std::to_string(wait.count()) + " ms");
  if (result != ReadResult::kOk) return fail("the server closed the connection (it exited or failed)");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(fd);
  }
  if (code == 0) return *payload;
  return Status(static_cast<StatusCode>(static_cast<uint8_t>(code)), *payload);
}

StatusOr<std::string> TcpKeyValueStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  return Request(kGet, key, "", timeout);
}

StatusOr<std::string> TcpKeyValueStore::TryGet(const std::string& key) {
  return Request(kTryGet, key, "", std::chrono::milliseconds(0));
}

Status TcpKeyValueStore::Put(const std::string& key, const std::string& value) {
  return Request(kPut, key, value, std::chrono::milliseconds(0)).status();
}

}  // namespace stablert::host
