// A PJRT plugin loaded into the process: the framework side of PJRT's version handshake.
//
// Any plugin, StableRT's or another vendor's: `Plugin::Load` opens the shared library
// (a path, or a name resolved by `FindPlugin`), calls its `GetPjrtApi`, reads the table's
// `struct_size` and version before anything else, and refuses a table it cannot use
// (major version other than 0; a minor older than 0.57, before which the table's layout
// differs). It then calls `PJRT_Plugin_Initialize` once.
//
// Slots are called through `Call`, which checks that the slot lies inside the plugin's table
// (`struct_size`) and is set: a slot the plugin's version does not have is `Unimplemented`
// naming the slot and the plugin's version, never a call through garbage. Argument structs
// are sized with this build's header (PJRT 0.114): plugins of older minors read the prefix
// they know (new fields are only ever appended), and the fields a newer struct adds are
// optional by PJRT's rule.
//
// Ownership: the library stays loaded for the life of the process (plugins keep threads and
// static state that do not survive dlclose). A Plugin is shared by everything created from it
// (std::shared_ptr). Thread-safety: all methods are const and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"
#include "xla/pjrt/c/pjrt_c_api.h"

namespace stablert::host {

// One PJRT_NamedValue, owned.
struct NamedValue {
  std::string name;
  std::variant<std::string, int64_t, std::vector<int64_t>, float, bool> value;
  // "name=value" (lists as [a, b]).
  std::string ToString() const;
};

// PJRT_NamedValue views of `values` (which must outlive them), and owned copies of raw ones
// (InvalidArgument naming `function` for a type this build does not know).
std::vector<PJRT_NamedValue> NamedValuesToPjrt(const std::vector<NamedValue>& values);
StatusOr<std::vector<NamedValue>> NamedValuesFromPjrt(const PJRT_NamedValue* values, size_t count,
                                                      std::string_view function);

struct ExtensionInfo {
  PJRT_Extension_Type type;
  std::string name;  // e.g. "layouts", "ffi"; "unknown(N)" for types this build does not name
};

class Plugin {
 public:
  // Loads `path_or_name`: a file path (anything containing '/' or ending in ".so"), else a
  // plugin name resolved with FindPlugin. NotFound / InvalidArgument / FailedPrecondition
  // name the library and what is wrong with it.
  static StatusOr<std::shared_ptr<const Plugin>> Load(const std::string& path_or_name);
  // Wraps a table already in the process (a plugin linked in, or tests). `origin` names it
  // in messages. Performs the same checks and initialization as Load.
  static StatusOr<std::shared_ptr<const Plugin>> FromApi(const PJRT_Api* api, std::string origin);

  const PJRT_Api* api() const { return api_; }
  const std::string& path() const { return path_; }
  int major_version() const { return major_; }
  int minor_version() const { return minor_; }
  // "0.81".
  std::string version() const;

  // Whether the plugin's table has `slot` (inside its struct_size, and set).
  template <typename Fn>
  bool Has(Fn* PJRT_Api::*slot) const {
    auto offset = static_cast<size_t>(reinterpret_cast<const char*>(&(api_->*slot)) -
                                      reinterpret_cast<const char*>(api_));
    return offset + sizeof(void*) <= api_->struct_size && api_->*slot != nullptr;
  }

  // Calls `slot` with `args`, whose struct_size the caller has set. The plugin's error, if any,
  // becomes a Status prefixed with `name` (and destroyed); a missing slot is Unimplemented.
  template <typename Args>
  Status Call(PJRT_Error* (*PJRT_Api::*slot)(Args*), std::string_view name, Args* args) const {
    if (!Has(slot)) return MissingSlot(name);
    return TakeError((api_->*slot)(args), name);
  }

  // Converts and destroys a PJRT_Error (OK for nullptr). The message is prefixed with `context`.
  Status TakeError(PJRT_Error* error, std::string_view context) const;
  Status MissingSlot(std::string_view name) const;

  // PJRT_Plugin_Attributes (empty if the plugin lacks the slot).
  StatusOr<std::vector<NamedValue>> Attributes() const;
  // The extension chain of the API table.
  std::vector<ExtensionInfo> Extensions() const;
  // The extension of `type`, or nullptr.
  const PJRT_Extension_Base* FindExtension(PJRT_Extension_Type type) const;

  // Names of the PJRT_Api slots this build knows, and for each whether the plugin has it.
  std::vector<std::pair<std::string, bool>> Slots() const;

 private:
  Plugin(const PJRT_Api* api, std::string path) : api_(api), path_(std::move(path)) {}
  Status CheckAndInitialize();

  const PJRT_Api* api_;
  std::string path_;
  int major_ = 0;
  int minor_ = 0;
};

// Resolves a plugin name to its library, as JAX discovers plugins:
//   1. PJRT_NAMES_AND_LIBRARY_PATHS ("name:path,name:path"), JAX's own variable;
//   2. the installed plugin packages, in the site-packages directories of $VIRTUAL_ENV, on
//      PYTHONPATH, of the running program's own environment (the one an installed `stablert`
//      CLI lives in, or a checkout's .venv beside its build/) and of
//      /usr/lib/python3/dist-packages: the
//      package directories `<name>/`, `jax_plugins/<name>/`, `xla_plugins/<name>/` and
//      `xla_plugins/xla_<name>_pjrt/` (xla-cpu-pjrt's layout, so "cpu" finds it), holding a
//      `*.so` (one whose name contains "pjrt" if there are several).
// NotFound lists the places searched.
StatusOr<std::string> FindPlugin(const std::string& name);

}  // namespace stablert::host
