// TCP transport between the processes of a multi-process job: a full mesh of POSIX stream
// sockets carrying tagged messages.
//
// Every process listens on an ephemeral port of one IPv4 address and publishes address() and
// token(); once it knows every peer's address and token, Connect() opens one outgoing
// connection per peer (used to send) and waits until every peer has connected to it (those
// connections are read).
//
// Access: the listener binds one address, not every interface: the one given to Listen, else
// the address the host name resolves to, else (no resolution, or a loopback one) 127.0.0.1.
// Each transport draws a random 128-bit token; a connecting peer must open with the token of
// the process it connects to (learned through the job's key-value store), else the connection
// is closed unread. A peer that sends nothing is dropped after kHelloTimeout. A
// reader thread per incoming connection files each message under its tag (run id, call
// index) until Receive() takes it, so a sender never waits for the receiver to be ready.
// Payloads are written and read in pieces of at most kChunkBytes.
//
// Failure: a peer whose connection closes or breaks (its process died or shut down) is
// marked failed; a Receive() waiting on it fails at once with Unavailable naming the
// process, and one whose deadline passes fails with DeadlineExceeded naming it — never a
// hang. A Send() to a failed peer fails likewise.
//
// Thread-safety: Send and Receive may be called from any thread. The destructor shuts the
// sockets down and joins the threads; no call may be in progress then.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/status.h"

namespace stablert::collectives {

// A message's tag: which execution (a run id equal on every process), which collective call
// of it, and which part of that call's traffic (pieces of a segmented all-reduce; 0 else).
struct Tag {
  uint64_t run = 0;
  uint64_t call = 0;
  uint64_t part = 0;
  bool operator<(const Tag& other) const {
    if (run != other.run) return run < other.run;
    return call != other.call ? call < other.call : part < other.part;
  }
};

// Storage for the payloads of received messages. Buffers of at least kMinPooledBytes that
// payloads release are kept (up to kMaxKeptBytes in all) and handed to later messages of the
// same size: their pages stay mapped, so a stream of large messages (a segmented all-reduce's
// pieces) costs no page faults or zero-filling of fresh memory per message.
// Thread-safety: Take and Give may be called from any thread.
class MessageBuffers {
 public:
  static constexpr size_t kMinPooledBytes = size_t{64} << 10;
  static constexpr size_t kMaxKeptBytes = size_t{32} << 20;
  MessageBuffers() = default;
  ~MessageBuffers();
  MessageBuffers(const MessageBuffers&) = delete;
  MessageBuffers& operator=(const MessageBuffers&) = delete;
  void* Take(size_t bytes);
  void Give(void* data, size_t bytes);
  // The bytes of the buffers kept now.
  size_t kept_bytes();

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  size_t kept_ = 0;
};

// The allocator of Payload: from a transport's MessageBuffers (plain operator new without
// one), and elements default-initialized (a payload is read from the socket, not zeroed first).
template <class T>
struct PayloadAllocator {
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using is_always_equal = std::false_type;
  std::shared_ptr<MessageBuffers> buffers;

  PayloadAllocator() = default;
  explicit PayloadAllocator(std::shared_ptr<MessageBuffers> pool) : buffers(std::move(pool)) {}
  template <class U>
  PayloadAllocator(const PayloadAllocator<U>& other) : buffers(other.buffers) {}  // NOLINT: allocator rebinding
  T* allocate(size_t n) {
    return static_cast<T*>(buffers ? buffers->Take(n * sizeof(T)) : ::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (buffers)
      buffers->Give(p, n * sizeof(T));
    else
      ::operator delete(p);
  }
  template <class U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const PayloadAllocator<U>& other) const {
    return buffers == other.buffers;
  }
};

// The bytes of a received message.
using Payload = std::vector<char, PayloadAllocator<char>>;

class TcpTransport {
 public:
  static constexpr size_t kChunkBytes = size_t{1} << 20;
  static constexpr std::chrono::milliseconds kHelloTimeout{5000};

  // Starts listening as process `rank` of `size` on `bind_address` (numeric IPv4; empty: see
  // above).
  static StatusOr<std::unique_ptr<TcpTransport>> Listen(int rank, int size, const std::string& bind_address = "");
  ~TcpTransport();
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // "ip:port" other processes connect to.
  const std::string& address() const { return address_; }
  // The secret a peer must present when connecting here (32 hex digits).
  const std::string& token() const { return token_; }
  // Connections closed because they did not present this transport's token (or no greeting).
  int rejected_connections();

  // Connects to every peer (`addresses[p]` and `tokens[p]` are process p's address() and
  // token(); the own entries are ignored) and waits until every peer has connected here,
  // within `timeout`.
  Status Connect(const std::vector<std::string>& addresses, const std::vector<std::string>& tokens,
                 std::chrono::milliseconds timeout);

  // Sends a message tagged `tag` to `peer`; DeadlineExceeded if the peer stops taking data
  // before `deadline` (the connection is then marked failed: a message may be cut).
  Status Send(int peer, Tag tag, const void* data, size_t bytes,
              std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());
  // Sends the concatenation of `parts` as one message, without copying them together.
  Status SendParts(int peer, Tag tag, const std::vector<std::pair<const void*, size_t>>& parts,
                   std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());
  // Takes the message tagged `tag` from `peer`, waiting until `deadline`.
  StatusOr<Payload> Receive(int peer, Tag tag, std::chrono::steady_clock::time_point deadline);
  // Why `peer` failed, empty while it is healthy.
  std::string PeerFailure(int peer);

 private:
  TcpTransport(int rank, int size, int listener, std::string address, std::string token);
  void AcceptLoop();
  void ReadLoop(int peer, int fd);
  void FailPeer(int peer, const std::string& why);

  const int rank_;
  const int size_;
  int listener_;
  std::string address_;
  std::string token_;
  int rejected_ = 0;
  std::atomic<bool> closing_{false};
  std::thread acceptor_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int> outgoing_;                    // per peer, -1 until connected
  std::vector<int> incoming_;                    // per peer, -1 until the peer connected
  std::vector<std::thread> readers_;
  std::vector<std::unique_ptr<std::mutex>> send_mutex_;  // per peer
  std::vector<std::string> failure_;             // per peer
  std::vector<std::map<Tag, Payload>> mailbox_;  // per peer
  std::shared_ptr<MessageBuffers> buffers_ = std::make_shared<MessageBuffers>();
};

}  // namespace stablert::collectives
