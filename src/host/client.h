// A PJRT client and its devices and memories, as RAII C++ objects over any plugin.
//
// Ownership: `Client::Create` returns a shared Client that destroys the plugin's client when
// the last reference goes; every Buffer and LoadedExecutable made from it holds a reference,
// so a client outlives everything made from it, whatever order the host drops them in.
// Devices and Memories are small values (a raw handle plus facts read once at creation),
// valid while their Client lives. Failures are Status values whose message names the PJRT
// function that failed. Thread-safety: a Client may be used from several threads at once
// (PJRT clients are thread-safe); the vectors it returns are immutable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "host/kv_store.h"
#include "host/plugin.h"

namespace stablert::host {

struct Memory {
  PJRT_Memory* handle = nullptr;
  int id = 0;
  std::string kind;         // e.g. "device", "pinned_host", "unpinned_host"
  std::string debug_string;
};

struct Device {
  PJRT_Device* handle = nullptr;
  int id = 0;               // global id
  int process_index = 0;
  int local_hardware_id = -1;
  bool addressable = false;
  std::string kind;
  std::string debug_string;
  std::vector<NamedValue> attributes;
};

struct ClientOptions {
  // PJRT_Client_Create's create_options (e.g. StableRT's "device_count").
  std::vector<NamedValue> create_options;
  // Passed to the plugin through the kv_* callbacks when set (kept alive by the Client).
  std::shared_ptr<KeyValueStore> key_value_store;
};

class Client {
 public:
  static StatusOr<std::shared_ptr<Client>> Create(std::shared_ptr<const Plugin> plugin,
                                                  const ClientOptions& options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const std::shared_ptr<const Plugin>& plugin() const { return plugin_; }
  PJRT_Client* handle() const { return client_; }
  const std::string& platform_name() const { return platform_name_; }
  const std::string& platform_version() const { return platform_version_; }
  int process_index() const { return process_index_; }
  // All devices of the job, and those this process drives, in the plugin's order.
  const std::vector<Device>& devices() const { return devices_; }
  const std::vector<Device>& addressable_devices() const { return addressable_devices_; }
  // The device with global id `id`; NotFound naming the ids there are.
  StatusOr<Device> DeviceById(int id) const;

  // The memories `device` can address, and its default one.
  StatusOr<std::vector<Memory>> Memories(const Device& device) const;
  StatusOr<Memory> DefaultMemory(const Device& device) const;

 private:
  Client(std::shared_ptr<const Plugin> plugin, std::shared_ptr<KeyValueStore> store)
      : plugin_(std::move(plugin)), store_(std::move(store)) {}
  Status ReadFacts();
  StatusOr<Device> Describe(PJRT_Device* device) const;
  StatusOr<Memory> DescribeMemory(PJRT_Memory* memory) const;

  std::shared_ptr<const Plugin> plugin_;
  std::shared_ptr<KeyValueStore> store_;
  PJRT_Client* client_ = nullptr;
  std::string platform_name_;
  std::string platform_version_;
  int process_index_ = 0;
  std::vector<Device> devices_;
  std::vector<Device> addressable_devices_;
};

}  // namespace stablert::host
