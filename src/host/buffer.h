// Arrays on a plugin's devices (Buffer) and on the host (HostArray, Literal).
//
// Ownership: a Buffer owns its PJRT_Buffer (destroyed with it) and holds its Client. Move-only.
// A HostArray is a non-owning view of host memory (dense row-major unless byte_strides are
// given); a Literal owns its bytes (dense row-major unless byte_strides are given: a Literal
// read in a chosen host layout). A Buffer's device layout (host/layout.h) may be chosen when
// it is made and read back; ToLiteral gives row-major bytes whatever it is. Failures are
// Status values naming the PJRT function. Thread-safety: distinct Buffers may be used
// concurrently; one Buffer's const methods too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "host/client.h"
#include "host/future.h"
#include "host/layout.h"

namespace stablert::host {

// Bits per element of `type` (0 for INVALID and TOKEN), and its StableHLO name ("f32", "i1",
// "ui8", "complex<f32>").
int ElementBits(PJRT_Buffer_Type type);
std::string ElementTypeName(PJRT_Buffer_Type type);
// The type with StableHLO name `name`; InvalidArgument otherwise.
StatusOr<PJRT_Buffer_Type> ElementTypeByName(const std::string& name);
// Bytes of a dense host array: one byte per element for sub-byte types, as PJRT host buffers
// (and NumPy's ml_dtypes) hold them; InvalidArgument on a negative dimension or a size that
// overflows.
StatusOr<int64_t> DenseBytes(PJRT_Buffer_Type type, const std::vector<int64_t>& dims);

struct HostArray {
  PJRT_Buffer_Type type = PJRT_Buffer_Type_INVALID;
  std::vector<int64_t> dims;
  std::vector<int64_t> byte_strides;  // empty: dense row-major
  const void* data = nullptr;
};

struct Literal {
  PJRT_Buffer_Type type = PJRT_Buffer_Type_INVALID;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
  std::vector<int64_t> byte_strides;  // empty: `bytes` are dense row-major
  HostArray view() const { return {type, dims, byte_strides, bytes.data()}; }
};

// A dense row-major copy of `array` (any non-negative or negative byte strides; sub-byte
// types one byte per element). InvalidArgument for a stride count that does not match the rank.
StatusOr<Literal> ToRowMajor(const HostArray& array);

class Buffer {
 public:
  // Copies `array` to `device`'s default memory (or `memory` if given); returns once the host
  // memory may be reused. `device_layout`, if given, asks the plugin to hold the buffer in that
  // layout (PJRT_Client_BufferFromHostBuffer's device_layout; default: the plugin's, dense
  // row-major on CPU plugins). A layout of the wrong rank or an order that is not a
  // permutation is InvalidArgument naming Buffer::FromHost; a layout the plugin refuses (tiles,
  // strides on XLA) is the plugin's error naming PJRT_Client_BufferFromHostBuffer and the layout.
  static StatusOr<Buffer> FromHost(const std::shared_ptr<Client>& client, const HostArray& array,
                                   const Device& device, const Memory* memory = nullptr,
                                   const MemoryLayout* device_layout = nullptr);
  // Adopts a buffer a plugin call returned.
  Buffer(std::shared_ptr<Client> client, PJRT_Buffer* handle) : client_(std::move(client)), handle_(handle) {}
  Buffer(Buffer&& other) noexcept : client_(std::move(other.client_)), handle_(other.handle_) { other.handle_ = nullptr; }
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  PJRT_Buffer* handle() const { return handle_; }
  StatusOr<PJRT_Buffer_Type> element_type() const;
  StatusOr<std::vector<int64_t>> dims() const;
  // Completion of the computation that produces this buffer.
  Future Ready() const;
  // The buffer's device layout: from the Layouts extension (its XLA text read back) where the
  // plugin has it, else PJRT_Buffer_GetMemoryLayout; Unimplemented if the plugin gives neither.
  StatusOr<MemoryLayout> Layout() const;
  // Copies the buffer to a new dense row-major Literal (waits for it), whatever its device
  // layout: the plugin is asked for a row-major host_layout when the buffer is in another
  // one, and a plugin that refuses host layouts has the bytes reordered on the host.
  StatusOr<Literal> ToLiteral() const;
  // Copies the buffer to a new Literal laid out as `host_layout` (PJRT_Buffer_ToHostBuffer's
  // host_layout): an order of the dimensions or byte strides; the Literal's byte_strides say
  // where each element lies. A plugin that writes host layouts (found once per plugin by
  // reading a 2x2 array column-major) gets the layout; its refusal is its error naming
  // PJRT_Buffer_ToHostBuffer. For one that accepts them but writes row-major (XLA's CPU
  // plugin, PJRT 0.81) the host places the elements. Tiles and negative strides are
  // InvalidArgument (a Literal describes its bytes by non-negative strides).
  StatusOr<Literal> ToLiteral(const MemoryLayout& host_layout) const;
  // Marks the buffer deleted (its memory freed once pending work is done); the handle stays.
  Status Delete();

 private:
  void Destroy();
  // PJRT_Buffer_ToHostBuffer into `literal` (type and dims set) with `host_layout` (null: the
  // plugin's default); sizes literal.bytes by the plugin's size query.
  Status CopyToHost(PJRT_Buffer_MemoryLayout* host_layout, Literal& literal) const;
  // Whether the plugin of `client` writes the host layouts it is given (probed once per plugin).
  static bool WritesHostLayouts(const std::shared_ptr<Client>& client);
  std::shared_ptr<Client> client_;
  PJRT_Buffer* handle_ = nullptr;
};

}  // namespace stablert::host
