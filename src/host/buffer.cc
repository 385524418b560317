#include "host/buffer.h"

#include <cstddef>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "base/dtype.h"
#include "host/call.h"
#include "xla/pjrt/c/pjrt_c_api_layouts_extension.h"

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

namespace {

Status CheckStrideCount(const HostArray& array, const char* function) {
  if (!array.byte_strides.empty() && array.byte_strides.size() != array.dims.size())
    return InvalidArgument(std::string(function) + ": " + std::to_string(array.byte_strides.size()) +
                           " byte strides for " + std::to_string(array.dims.size()) + " dimensions");
  return OkStatus();
}

}  // namespace

namespace {

// Copies every element of an array of `dims` from `src` (at `src_strides`) to `dst` (at
// `dst_strides`), in row-major index order.
void CopyElements(const uint8_t* src, const std::vector<int64_t>& src_strides, uint8_t* dst,
                  const std::vector<int64_t>& dst_strides, const std::vector<int64_t>& dims, int64_t element) {
  for (int64_t d : dims)
    if (d == 0) return;
  const size_t rank = dims.size();
  std::vector<int64_t> index(rank, 0);
  int64_t from = 0, to = 0;
  for (;;) {
    std::memcpy(dst + to, src + from, static_cast<size_t>(element));
    size_t d = rank;
    for (; d-- > 0;) {
      from += src_strides[d];
      to += dst_strides[d];
      if (++index[d] < dims[d]) break;
      from -= src_strides[d] * dims[d];
      to -= dst_strides[d] * dims[d];
      index[d] = 0;
    }
    if (d == static_cast<size_t>(-1)) return;
  }
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims, int64_t element) {
  std::vector<int64_t> strides(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    strides[d] = element;
    element *= dims[d] > 0 ? dims[d] : 1;
  }
  return strides;
}

}  // namespace

StatusOr<Literal> ToRowMajor(const HostArray& array) {
  STABLERT_RETURN_IF_ERROR(CheckStrideCount(array, "ToRowMajor"));
  Literal out{array.type, array.dims, {}, {}};
  STABLERT_ASSIGN_OR_RETURN(int64_t bytes, DenseBytes(array.type, array.dims));
  STABLERT_ASSIGN_OR_RETURN(int64_t element, DenseBytes(array.type, {1}));
  out.bytes.resize(static_cast<size_t>(bytes));
  if (bytes == 0) return out;
  const auto* src = static_cast<const uint8_t*>(array.data);
  if (!src) return InvalidArgument("ToRowMajor: no host data");
  if (array.byte_strides.empty()) {
    std::memcpy(out.bytes.data(), src, out.bytes.size());
    return out;
  }
  CopyElements(src, array.byte_strides, out.bytes.data(), RowMajorStrides(array.dims, element), array.dims, element);
  return out;
}

StatusOr<Buffer> Buffer::FromHost(const std::shared_ptr<Client>& client, const HostArray& array,
                                  const Device& device, const Memory* memory, const MemoryLayout* device_layout) {
  if (!client) return InvalidArgument("Buffer::FromHost: no client");
  STABLERT_RETURN_IF_ERROR(CheckStrideCount(array, "Buffer::FromHost"));
  if (device_layout)
    STABLERT_RETURN_IF_ERROR(CheckLayout(*device_layout, array.dims.size(), "Buffer::FromHost", "device_layout"));
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
  std::optional<PjrtLayoutView> layout_view;
  if (device_layout) args.device_layout = layout_view.emplace(*device_layout).get();
  Status made = STABLERT_HOST_CALL(plugin, PJRT_Client_BufferFromHostBuffer, &args);
  if (!made.ok() && device_layout) return made.WithPrefix("device_layout " + device_layout->ToString());
  STABLERT_RETURN_IF_ERROR(made);
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

StatusOr<MemoryLayout> Buffer::Layout() const {
  const Plugin& plugin = *client_->plugin();
  Status extension_status = Unimplemented("the plugin '" + plugin.path() + "' has no Layouts extension");
  const auto* extension =
      reinterpret_cast<const PJRT_Layouts_Extension*>(plugin.FindExtension(PJRT_Extension_Type_Layouts));
  // The extension grows by appending: its struct_size says which functions it has.
  auto has = [extension](auto field) {
    auto offset = static_cast<size_t>(reinterpret_cast<const char*>(&(extension->*field)) -
                                      reinterpret_cast<const char*>(extension));
    return offset + sizeof(void*) <= extension->base.struct_size && extension->*field != nullptr;
  };
  if (extension && has(&PJRT_Layouts_Extension::PJRT_Layouts_PJRT_Buffer_MemoryLayout) &&
      has(&PJRT_Layouts_Extension::PJRT_Layouts_MemoryLayout_Serialize) &&
      has(&PJRT_Layouts_Extension::PJRT_Layouts_MemoryLayout_Destroy)) {
    PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args get{};
    get.struct_size = PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args_STRUCT_SIZE;
    get.buffer = handle_;
    extension_status = plugin.TakeError(extension->PJRT_Layouts_PJRT_Buffer_MemoryLayout(&get),
                                        "PJRT_Layouts_PJRT_Buffer_MemoryLayout");
    if (extension_status.ok()) {
      PJRT_Layouts_MemoryLayout_Serialize_Args serialize{};
      serialize.struct_size = PJRT_Layouts_MemoryLayout_Serialize_Args_STRUCT_SIZE;
      serialize.layout = get.layout;
      Status serialized = plugin.TakeError(extension->PJRT_Layouts_MemoryLayout_Serialize(&serialize),
                                           "PJRT_Layouts_MemoryLayout_Serialize");
      std::string text;
      if (serialized.ok()) {
        text.assign(serialize.serialized_bytes, serialize.serialized_bytes_size);
        if (serialize.serialized_layout_deleter) serialize.serialized_layout_deleter(serialize.serialized_layout);
      }
      PJRT_Layouts_MemoryLayout_Destroy_Args destroy{};
      destroy.struct_size = PJRT_Layouts_MemoryLayout_Destroy_Args_STRUCT_SIZE;
      destroy.layout = get.layout;
      plugin.TakeError(extension->PJRT_Layouts_MemoryLayout_Destroy(&destroy), "PJRT_Layouts_MemoryLayout_Destroy")
          .IgnoreError();
      if (!serialized.ok()) return serialized;
      return ParseLayoutText(text, "PJRT_Layouts_MemoryLayout_Serialize");
    }
  }
  if (!plugin.Has(&PJRT_Api::PJRT_Buffer_GetMemoryLayout)) return extension_status;
  STABLERT_HOST_ARGS(PJRT_Buffer_GetMemoryLayout, args);
  args.buffer = handle_;
  Status status = STABLERT_HOST_CALL(plugin, PJRT_Buffer_GetMemoryLayout, &args);
  if (!status.ok())
    return Status(status.code(), std::string(extension_status.message()) + "; " + std::string(status.message()));
  return LayoutFromPjrt(args.layout, "PJRT_Buffer_GetMemoryLayout");
}

Status Buffer::CopyToHost(PJRT_Buffer_MemoryLayout* host_layout, Literal& literal) const {
  const Plugin& plugin = *client_->plugin();
  STABLERT_HOST_ARGS(PJRT_Buffer_ToHostBuffer, args);
  args.src = handle_;
  args.host_layout = host_layout;
  if (literal.byte_strides.empty()) {
    STABLERT_ASSIGN_OR_RETURN(int64_t bytes, DenseBytes(literal.type, literal.dims));
    literal.bytes.resize(static_cast<size_t>(bytes));
  } else {
    // The plugin's size query: the bytes up to the end of the last element.
    STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(plugin, PJRT_Buffer_ToHostBuffer, &args));
    if (args.event) Future::FromEvent(client_->plugin(), args.event, "PJRT_Buffer_ToHostBuffer").Await().IgnoreError();
    literal.bytes.resize(args.dst_size);
    args.event = nullptr;
  }
  args.dst = literal.bytes.data();
  args.dst_size = literal.bytes.size();
  STABLERT_RETURN_IF_ERROR(STABLERT_HOST_CALL(plugin, PJRT_Buffer_ToHostBuffer, &args));
  return Future::FromEvent(client_->plugin(), args.event, "PJRT_Buffer_ToHostBuffer").Await();
}

StatusOr<Literal> Buffer::ToLiteral() const {
  Literal literal;
  STABLERT_ASSIGN_OR_RETURN(literal.type, element_type());
  STABLERT_ASSIGN_OR_RETURN(literal.dims, dims());
  // A plugin that cannot tell its layout keeps the default one (PJRT's null host_layout).
  // Row-major orders with tiles count as row-major: the host copy of a tiled buffer has no
  // tiles (XLA's host shape of a device shape).
  StatusOr<MemoryLayout> layout = Layout();
  bool is_order = layout.ok() && layout->kind == MemoryLayout::Kind::kMinorToMajor;
  if (!layout.ok() || literal.dims.size() <= 1 ||
      (is_order && MemoryLayout::MinorToMajor(layout->minor_to_major).IsRowMajorOrder())) {
    STABLERT_RETURN_IF_ERROR(CopyToHost(nullptr, literal));
    return literal;
  }
  // Another layout: ask for row-major bytes; a plugin that refuses host layouts gives the
  // buffer's own (PJRT's null host_layout), reordered here when that is a tile-free order.
  MemoryLayout row_major = MemoryLayout::RowMajor(literal.dims.size());
  PjrtLayoutView view(row_major);
  Status asked = CopyToHost(view.get(), literal);
  if (asked.ok()) return literal;
  STABLERT_ASSIGN_OR_RETURN(int64_t element, DenseBytes(literal.type, {1}));
  StatusOr<std::vector<int64_t>> strides =
      is_order && layout->tiles.empty() ? LayoutByteStrides(*layout, literal.dims, element, "Buffer::ToLiteral")
                                        : StatusOr<std::vector<int64_t>>(asked);
  if (!strides.ok()) return asked.WithPrefix("Buffer::ToLiteral: the buffer's layout is " + layout->ToString());
  STABLERT_RETURN_IF_ERROR(CopyToHost(nullptr, literal));
  return ToRowMajor(HostArray{literal.type, literal.dims, *strides, literal.bytes.data()});
}

bool Buffer::WritesHostLayouts(const std::shared_ptr<Client>& client) {
  static std::mutex mutex;
  static std::map<const PJRT_Api*, bool> known;
  const PJRT_Api* api = client->plugin()->api();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known.find(api); it != known.end()) return it->second;
  }
  // A 2x2 array read column-major must come back transposed.
  const uint8_t values[4] = {0, 1, 2, 3};
  bool writes = false;
  if (!client->addressable_devices().empty()) {
    StatusOr<Buffer> probe =
        FromHost(client, {PJRT_Buffer_Type_U8, {2, 2}, {}, values}, client->addressable_devices()[0]);
    if (probe.ok()) {
      Literal literal{PJRT_Buffer_Type_U8, {2, 2}, {}, {1, 2}};
      MemoryLayout column_major = MemoryLayout::ColumnMajor(2);
      PjrtLayoutView view(column_major);
      writes = probe->CopyToHost(view.get(), literal).ok() && literal.bytes == std::vector<uint8_t>{0, 2, 1, 3};
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  known[api] = writes;
  return writes;
}

StatusOr<Literal> Buffer::ToLiteral(const MemoryLayout& host_layout) const {
  Literal literal;
  STABLERT_ASSIGN_OR_RETURN(literal.type, element_type());
  STABLERT_ASSIGN_OR_RETURN(literal.dims, dims());
  STABLERT_RETURN_IF_ERROR(CheckLayout(host_layout, literal.dims.size(), "Buffer::ToLiteral", "host_layout"));
  if (!host_layout.tiles.empty())
    return InvalidArgument("Buffer::ToLiteral: host_layout " + host_layout.ToString() +
                           " has tiles; a host array is described by byte strides (expected a tile-free order or strides)");
  STABLERT_ASSIGN_OR_RETURN(int64_t element, DenseBytes(literal.type, {1}));
  STABLERT_ASSIGN_OR_RETURN(literal.byte_strides, LayoutByteStrides(host_layout, literal.dims, element, "Buffer::ToLiteral"));
  if (host_layout.IsRowMajorOrder()) return ToLiteral();
  if (WritesHostLayouts(client_)) {
    PjrtLayoutView view(host_layout);
    Status copied = CopyToHost(view.get(), literal);
    if (!copied.ok()) return copied.WithPrefix("host_layout " + host_layout.ToString());
    return literal;
  }
  // A plugin that takes host layouts without writing them: the host places the elements.
  int64_t end = element;
  for (size_t d = 0; d < literal.dims.size(); ++d) {
    if (literal.byte_strides[d] < 0)
      return InvalidArgument("Buffer::ToLiteral: host_layout " + host_layout.ToString() +
                             " has a negative stride (expected strides that keep every element after the start)");
    if (literal.dims[d] == 0) end = 0;
  }
  for (size_t d = 0; d < literal.dims.size() && end > 0; ++d) end += (literal.dims[d] - 1) * literal.byte_strides[d];
  STABLERT_ASSIGN_OR_RETURN(Literal dense, ToLiteral());
  literal.bytes.assign(static_cast<size_t>(end), 0);
  CopyElements(dense.bytes.data(), RowMajorStrides(dense.dims, element), literal.bytes.data(), literal.byte_strides,
               literal.dims, element);
  return literal;
}

Status Buffer::Delete() {
  STABLERT_HOST_ARGS(PJRT_Buffer_Delete, args);
  args.buffer = handle_;
  return STABLERT_HOST_CALL(*client_->plugin(), PJRT_Buffer_Delete, &args);
}

}  // namespace stablert::host
