// Arrays on a plugin's devices (Buffer) and on the host (HostArray, Literal).
//
// Ownership: a Buffer owns its PJRT_Buffer (destroyed with it) and holds its Client. Move-only.
// A HostArray is a non-owning view of host memory (dense row-major unless byte_strides are
// given); a Literal owns dense row-major bytes. Failures are Status values naming the PJRT
// function. Thread-safety: distinct Buffers may be used concurrently; one Buffer's const
// methods too.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "host/client.h"
#include "host/future.h"

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
  std::vector<uint8_t> bytes;  // dense row-major
  HostArray view() const { return {type, dims, {}, bytes.data()}; }
};

class Buffer {
 public:
  // Copies `array` to `device`'s default memory (or `memory` if given); returns once the host
  // memory may be reused.
  static StatusOr<Buffer> FromHost(const std::shared_ptr<Client>& client, const HostArray& array,
                                   const Device& device, const Memory* memory = nullptr);
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
  // Copies the buffer to a new dense row-major Literal (waits for it).
  StatusOr<Literal> ToLiteral() const;
  // Marks the buffer deleted (its memory freed once pending work is done); the handle stays.
  Status Delete();

 private:
  void Destroy();
  std::shared_ptr<Client> client_;
  PJRT_Buffer* handle_ = nullptr;
};

}  // namespace stablert::host
