// The key-value store a host hands to a plugin at client creation (PJRT_Client_Create's
// kv_get / kv_try_get / kv_put callbacks), through which a plugin's processes exchange their
// topology and bootstrap collectives.
//
// `KeyValueStore` is the interface; `InMemoryKeyValueStore` serves the processes of one OS
// process (several clients, or tests). `KeyValueCallbacks` adapts any store to the C
// callbacks; a Client keeps its store alive as long as the plugin's client lives.
// Thread-safety: implementations must be thread-safe (the plugin calls from any thread).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "base/status.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::host {

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  // Blocks until `key` has a value or `timeout` passes (DeadlineExceeded naming the key).
  virtual StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) = 0;
  // The value if present now; NotFound otherwise.
  virtual StatusOr<std::string> TryGet(const std::string& key) = 0;
  // Sets `key`; AlreadyExists if it has a different value (a store is write-once per key, as
  // JAX's coordination service is).
  virtual Status Put(const std::string& key, const std::string& value) = 0;
};

// Thread-safe. Close() wakes every waiting Get: those whose key is still missing, and every
// later one, fail with Unavailable ("closed") instead of waiting out their timeout.
class InMemoryKeyValueStore : public KeyValueStore {
 public:
  StatusOr<std::string> Get(const std::string& key, std::chrono::milliseconds timeout) override;
  StatusOr<std::string> TryGet(const std::string& key) override;
  Status Put(const std::string& key, const std::string& value) override;
  void Close();

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
  bool closed_ = false;
};

// Fills the kv_* fields of `args` so that the plugin reaches `store` (which must outlive the
// plugin's client). Errors are returned to the plugin through its callback_error function.
void SetKeyValueCallbacks(KeyValueStore* store, PJRT_Client_Create_Args* args);

}  // namespace stablert::host
