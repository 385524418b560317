// A key-value store shared by several processes over TCP, for plugins whose clients span
// processes (PJRT_Client_Create's node_id / num_nodes and kv_* callbacks).
//
// One process runs a `TcpKeyValueServer` (listening on a port, all interfaces or loopback);
// the server is itself a KeyValueStore, so that process's client uses it directly. Every
// other process connects a `TcpKeyValueStore` to "host:port". Both are passed to
// `Client::Create` through ClientOptions::key_value_store and live as long as the client.
//
// Protocol (private to this file pair; both ends are this library): a request is
// [op:u8][key size:u32][key][value size:u32][value][timeout ms:u32], little-endian; the answer
// is [status code:u8][size:u32][value or error message]. Ops: put, get (waits up to the
// timeout on the server), try_get. Keys are write-once (AlreadyExists for another value), as
// in JAX's coordination service.
//
// Failures: a server that cannot be reached within the connect timeout is Unavailable naming
// the address and the system's reason; a Get whose key does not appear in time is
// DeadlineExceeded naming the key; a server that dies or stops answering mid-request is
// Unavailable ("connection closed" / "no answer within N ms"). Destroying the server wakes
// waiting Gets (they answer Unavailable), lets every request it has read send its answer,
// then closes every connection and joins its threads.
// Thread-safety: both classes are thread-safe; a client opens one connection per concurrent
// request (idle connections are reused).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "host/kv_store.h"

namespace stablert::host {

class TcpKeyValueServer : public KeyValueStore {
 public:
  // Listens on `port` (0: an ephemeral port, see port()); `loopback_only` binds 127.0.0.1,
  // else every interface. Unavailable naming the port if it cannot listen.
  static StatusOr<std::shared_ptr<TcpKeyValueServer>> Start(int port = 0, bool loopback_only = true);
  ~TcpKeyValueServer() override;
  TcpKeyValueServer(const TcpKeyValueServer&) = delete;
  TcpKeyValueServer& operator=(const TcpKeyValueServer&) = delete;

  int port() const { return port_; }
  // "127.0.0.1:<port>" (loopback) or "<host name>:<port>".
  std::string address() const;

  // The store itself, for this process's client.
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;
  StatusOr<std::string> TryGet(const std::string& key) override;
  Status Put(const std::string& key, const std::string& value) override;

 private:
  TcpKeyValueServer() = default;
  void AcceptLoop();
  void Serve(int fd);

  int listen_fd_ = -1;
  int port_ = 0;
  bool loopback_only_ = true;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  InMemoryKeyValueStore store_;  // closed by the destructor, which wakes waiting requests
  std::mutex mutex_;             // guards connections_, threads_
  std::vector<int> connections_;
  std::vector<std::thread> threads_;
};

class TcpKeyValueStore : public KeyValueStore {
 public:
  // Connects to `address` ("host:port"), retrying until `connect_timeout` passes (the server's
  // process may start later than this one). Unavailable naming the address otherwise;
  // InvalidArgument for an address that is not host:port.
  static StatusOr<std::shared_ptr<TcpKeyValueStore>> Connect(
      const std::string& address, std::chrono::milliseconds connect_timeout = std::chrono::seconds(30));
  ~TcpKeyValueStore() override;

  // An answer is awaited up to the request's own timeout plus `io_slack` (default 10 s); a
  // server silent for longer is Unavailable.
  void set_io_slack(std::chrono::milliseconds slack) { io_slack_ = slack; }

  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;
  StatusOr<std::string> TryGet(const std::string& key) override;
  Status Put(const std::string& key, const std::string& value) override;

 private:
  TcpKeyValueStore(std::string host, int port, std::string address)
      : host_(std::move(host)), port_(port), address_(std::move(address)) {}
  StatusOr<int> OpenConnection(std::chrono::milliseconds timeout) const;
  StatusOr<std::string> Request(uint8_t op, const std::string& key, const std::string& value,
                                std::chrono::milliseconds timeout);

  std::string host_;
  int port_;
  std::string address_;
  std::chrono::milliseconds io_slack_ = std::chrono::seconds(10);
  std::mutex mutex_;
  std::vector<int> idle_;  // connections no request is using
};

}  // namespace stablert::host
