#include "host/buffer.h"

#include <cstddef>
#include <limits>

#include "base/dtype.h"
#include "host/call.h"

namespace stablert::host {
int ElementBits(PJRT_Buffer_Type type) {
  std::optional<DType> dtype = DTypeFromOrdinal(static_cast<int>(type));
  return dtype ? DTypeBitWidth(*dtype) : 0;
}

std::string ElementTypeName(PJRT_Buffer_Type type) {
  std::optional<DType> dtype = DTypeFromOrdinal(static_cast<int>(type));
  if (!dtype || *dtype == DType::kInvalid) return "type(" + std::to_string(static_cast<int>(type)) + ")";
  return std::string(DTypeName(*dtype));
}

StatusOr<PJRT_Buffer_Type> ElementTypeByName(const std::string& name) {
  for (int ordinal = 1; ordinal < kNumDTypes; ++ordinal) {
    std::optional<DType> dtype = DTypeFromOrdinal(ordinal);
    if (dtype && DTypeByteSize(*dtype) > 0 && DTypeName(*dtype) == name) return static_cast<PJRT_Buffer_Type>(ordinal);
  }
  return InvalidArgument("unknown element type '" + name + "' (expected a StableHLO name: f32, bf16, i32, ui8, i1, ...)");
}

StatusOr<int64_t> DenseBytes(PJRT_Buffer_Type type, const std::vector<int64_t>& dims) {
  std::optional<DType> dtype = DTypeFromOrdinal(static_cast<int>(type));
  int element_bytes = dtype ? DTypeByteSize(*dtype) : 0;
  if (element_bytes == 0) return InvalidArgument("arrays of " + ElementTypeName(type) + " have no dense size");
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return InvalidArgument("negative dimension " + std::to_string(d));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / 16 / d)
      return InvalidArgument("array size overflows int64");
    count *= d;
  }
  return count * element_bytes;
}

StatusOr<Buffer> Buffer::FromHost(const std::shared_ptr<Client>& client, const HostArray& array,
                                  const Device& device, const Memory* memory) {
  if (!client) return InvalidArgument("Buffer::FromHost: no client");
  if (!array.byte_strides.empty() && array.byte_strides.size() != array.dims.size())
    return InvalidArgument("Buffer::FromHost: " + std::to_string(array.byte_strides.size()) +
                           " byte strides for " + std::to_string(array.dims.size()) + " dimensions");
  STABLERT_ASSIGN_OR_RETURN(int64_t bytes, DenseBytes(array.type, array.dims));
  // An array of no elements has no bytes to point at; plugins still expect a pointer.
  static const std::max_align_t kNoElements{};
  const void* data = bytes == 0 && !array.data ? &kNoElements : array.data;
  if (!data) return InvalidArgument("Buffer::FromHost: no host data");
  const Plugin& plugin = *client->plugin();
  STABLERT_HOST_ARGS(PJRT_Client_BufferFromHostBuffer, args);
  args.client = client->handle();
  args.data = data;
  args.type = array.type;
  args.dims = array.dims.data();
  args.num_dims = array.dims.size();
  args.byte_strides = array.byte_strides.empty() ? nullptr : array.byte_strides.data();
  args.num_byte_strides = array.byte_strides.size();
  args.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  if (memory) {
    args.memory = memory->handle;
  } else {
    args.device = device.handle;
  }
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(plugin, PJRT_Client_BufferFromHostBuffer, &args));
  Buffer buffer(client, args.buffer);
  Status copied =
      Future::FromEvent(client->plugin(), args.done_with_host_buffer, "PJRT_Client_BufferFromHostBuffer").Await();
  if (!copied.ok()) return copied;
  return buffer;
}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Destroy();
    client_ = std::move(other.client_);
    handle_ = other.handle_;
    other.handle_ = nullptr;
  }
  return *this;
}

Buffer::~Buffer() { Destroy(); }

void Buffer::Destroy() {
  if (!handle_ || !client_) return;
  STABLERT_HOST_ARGS(PJRT_Buffer_Destroy, args);
  args.buffer = handle_;
  STABLERT_HOST_CALL(*client_->plugin(), PJRT_Buffer_Destroy, &args).IgnoreError();
  handle_ = nullptr;
}

StatusOr<PJRT_Buffer_Type> Buffer::element_type() const {
  STABLERT_HOST_ARGS(PJRT_Buffer_ElementType, args);
  args.buffer = handle_;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*client_->plugin(), PJRT_Buffer_ElementType, &args));
  return args.type;
}

StatusOr<std::vector<int64_t>> Buffer::dims() const {
  STABLERT_HOST_ARGS(PJRT_Buffer_Dimensions, args);
  args.buffer = handle_;
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*client_->plugin(), PJRT_Buffer_Dimensions, &args));
  return std::vector<int64_t>(args.dims, args.dims + args.num_dims);
}

Future Buffer::Ready() const {
  STABLERT_HOST_ARGS(PJRT_Buffer_ReadyEvent, args);
  args.buffer = handle_;
  Status status = STABLERT_HOST_CALL(*client_->plugin(), PJRT_Buffer_ReadyEvent, &args);
  if (!status.ok()) return Future::Ready(status);
  return Future::FromEvent(client_->plugin(), args.event, "buffer");
}

StatusOr<Literal> Buffer::ToLiteral() const {
  Literal literal;
  STABLERT_ASSIGN_OR_RETURN(literal.type, element_type());
  STABLERT_ASSIGN_OR_RETURN(literal.dims, dims());
  STABLERT_ASSIGN_OR_RETURN(int64_t bytes, DenseBytes(literal.type, literal.dims));
  literal.bytes.resize(static_cast<size_t>(bytes));
  STABLERT_HOST_ARGS(PJRT_Buffer_ToHostBuffer, args);
  args.src = handle_;
  args.dst = literal.bytes.data();
  args.dst_size = literal.bytes.size();
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(*client_->plugin(), PJRT_Buffer_ToHostBuffer, &args));
  STABLERT_RETURN_IF_ERROR(Future::FromEvent(client_->plugin(), args.event, "PJRT_Buffer_ToHostBuffer").Await());
  return literal;
}

Status Buffer::Delete() {
  STABLERT_HOST_ARGS(PJRT_Buffer_Delete, args);
  args.buffer = handle_;
  return STABLERT_HOST_CALL(*client_->plugin(), PJRT_Buffer_Delete, &args);
}

}  // namespace stablert::host
