// TCP transport between the processes of a multi-process job: a full mesh of POSIX stream
// sockets carrying tagged messages.
//
// Every process listens on an ephemeral port (all interfaces) and publishes address(); once
// it knows every peer's address, Connect() opens one outgoing connection per peer (used to
// send) and waits until every peer has connected to it (those connections are read). A
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
#include <utility>
#include <vector>

#include "base/status.h"

namespace stablert::collectives {

// A message's tag: which execution (a run id equal on every process) and which collective
// call of it.
struct Tag {
  uint64_t run = 0;
  uint64_t call = 0;
  bool operator<(const Tag& other) const { return run != other.run ? run < other.run : call < other.call; }
};

class TcpTransport {
 public:
  static constexpr size_t kChunkBytes = size_t{1} << 20;

  // Starts listening as process `rank` of `size`.
  static StatusOr<std::unique_ptr<TcpTransport>> Listen(int rank, int size);
  ~TcpTransport();
  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // "host:port" other processes connect to.
  const std::string& address() const { return address_; }

  // Connects to every peer (`addresses[p]` is process p's address(); the own entry is
  // ignored) and waits until every peer has connected here, within `timeout`.
  Status Connect(const std::vector<std::string>& addresses, std::chrono::milliseconds timeout);

  // Sends a message tagged `tag` to `peer`; DeadlineExceeded if the peer stops taking data
  // before `deadline` (the connection is then marked failed: a message may be cut).
  Status Send(int peer, Tag tag, const void* data, size_t bytes,
              std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());
  // Sends the concatenation of `parts` as one message, without copying them together.
  Status SendParts(int peer, Tag tag, const std::vector<std::pair<const void*, size_t>>& parts,
                   std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());
  // Takes the message tagged `tag` from `peer`, waiting until `deadline`.
  StatusOr<std::vector<char>> Receive(int peer, Tag tag, std::chrono::steady_clock::time_point deadline);
  // Why `peer` failed, empty while it is healthy.
  std::string PeerFailure(int peer);

 private:
  TcpTransport(int rank, int size, int listener, std::string address);
  void AcceptLoop();
  void ReadLoop(int peer, int fd);
  void FailPeer(int peer, const std::string& why);

  const int rank_;
  const int size_;
  int listener_;
  std::string address_;
  std::atomic<bool> closing_{false};
  std::thread acceptor_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int> outgoing_;                    // per peer, -1 until connected
  std::vector<int> incoming_;                    // per peer, -1 until the peer connected
  std::vector<std::thread> readers_;
  std::vector<std::unique_ptr<std::mutex>> send_mutex_;  // per peer
  std::vector<std::string> failure_;             // per peer
  std::vector<std::map<Tag, std::vector<char>>> mailbox_;  // per peer
};

}  // namespace stablert::collectives
