#include "host/kv_store.h"

#include <cstring>

namespace stablert::host {

StatusOr<std::string> InMemoryKeyValueStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!changed_.wait_for(lock, timeout, [&] { return closed_ || values_.count(key) > 0; }))
    return DeadlineExceeded("key-value store: no value for key '" + key + "' within " +
                            std::to_string(timeout.count()) + " ms");
  auto it = values_.find(key);
  if (it == values_.end()) return Unavailable("key-value store: closed while waiting for key '" + key + "'");
  return it->second;
}

void InMemoryKeyValueStore::Close() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  changed_.notify_all();
}

StatusOr<std::string> InMemoryKeyValueStore::TryGet(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = values_.find(key);
  if (it == values_.end()) return NotFound("key-value store: no value for key '" + key + "'");
  return it->second;
}

Status InMemoryKeyValueStore::Put(const std::string& key, const std::string& value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = values_.emplace(key, value);
    if (!inserted && it->second != value)
      return Status(StatusCode::kAlreadyExists, "key-value store: key '" + key + "' already has another value");
  }
  changed_.notify_all();
  return OkStatus();
}

namespace {

PJRT_Error* ToCallbackError(PJRT_CallbackError* make_error, const Status& status) {
  if (status.ok()) return nullptr;
  std::string message(status.message());
  // The plugin's error constructor; without one, a null error would read as success, so the
  // status is reported as the best the ABI allows: nothing (plugins always pass it).
  if (!make_error || !*make_error) return nullptr;
  return (*make_error)(static_cast<PJRT_Error_Code>(status.code()), message.data(), message.size());
}

// The plugin frees values with the deleter we return.
char* CopyOut(const std::string& value) {
  char* out = new char[value.size() + 1];
  std::memcpy(out, value.data(), value.size());
  out[value.size()] = '\0';
  return out;
}

void DeleteValue(char* value) { delete[] value; }

PJRT_Error* GetCallback(PJRT_KeyValueGetCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  StatusOr<std::string> value =
      store->Get(std::string(args->key, args->key_size), std::chrono::milliseconds(args->timeout_in_ms));
  if (!value.ok()) return ToCallbackError(args->callback_error, value.status());
  args->value = CopyOut(*value);
  args->value_size = value->size();
  args->value_deleter_callback = &DeleteValue;
  return nullptr;
}

PJRT_Error* TryGetCallback(PJRT_KeyValueTryGetCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  StatusOr<std::string> value = store->TryGet(std::string(args->key, args->key_size));
  if (!value.ok()) return ToCallbackError(args->callback_error, value.status());
  args->value = CopyOut(*value);
  args->value_size = value->size();
  args->value_deleter_callback = &DeleteValue;
  return nullptr;
}

PJRT_Error* PutCallback(PJRT_KeyValuePutCallback_Args* args) {
  auto* store = static_cast<KeyValueStore*>(args->user_arg);
  return ToCallbackError(args->callback_error, store->Put(std::string(args->key, args->key_size),
                                                          std::string(args->value, args->value_size)));
}

}  // namespace

void SetKeyValueCallbacks(KeyValueStore* store, PJRT_Client_Create_Args* args) {
  args->kv_get_callback = &GetCallback;
  args->kv_get_user_arg = store;
  args->kv_try_get_callback = &TryGetCallback;
  args->kv_try_get_user_arg = store;
  args->kv_put_callback = &PutCallback;
  args->kv_put_user_arg = store;
}

}  // namespace stablert::host
