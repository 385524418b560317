#include "runtime/cross_host_transfer.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "runtime/array_layout.h"

namespace stablert::runtime {
namespace {

constexpr uint64_t kMagic = 0x5852544843524f54;  // marks a cross-host transfer's header (with its layout)

collectives::Tag TagOf(int64_t key, int source_id, int destination_id) {
  return collectives::Tag{CrossHostTransfers::kRun, static_cast<uint64_t>(key),
                          (static_cast<uint64_t>(static_cast<uint32_t>(source_id)) << 32) |
                              static_cast<uint32_t>(destination_id)};
}

// "f32[2,3]"
std::string ShapeText(DType dtype, const Dims& dims) {
  std::string text(DTypeName(dtype));
  text += "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + "]";
}

// The header's fixed part: magic, element type, rank, dimensions, byte count. The sender's
// layout follows it (LayoutWords), then the bytes in that layout.
std::vector<uint64_t> Header(DType dtype, const Dims& dims, size_t bytes) {
  std::vector<uint64_t> header{kMagic, static_cast<uint64_t>(dtype), dims.size()};
  for (int64_t d : dims) header.push_back(static_cast<uint64_t>(d));
  header.push_back(bytes);
  return header;
}

// A layout as `rank` words: its major_to_minor permutation, the identity for row-major.
std::vector<uint64_t> LayoutWords(const MajorToMinor& m2m, size_t rank) {
  std::vector<uint64_t> words(rank);
  for (size_t q = 0; q < rank; ++q) words[q] = m2m.empty() ? q : static_cast<uint64_t>(m2m[q]);
  return words;
}

}  // namespace

CrossHostTransfers::CrossHostTransfers(collectives::TcpTransport* transport, std::chrono::milliseconds timeout)
    : transport_(transport), timeout_(timeout), senders_("cross-host send"), receivers_("cross-host receive") {}

CrossHostTransfers::~CrossHostTransfers() = default;

StatusOr<EventRef> CrossHostTransfers::Send(const char* function, const Buffer& buffer, int destination_id,
                                           int destination_process, int64_t key) {
  const std::string what = std::string(function) + ": sending a " + ShapeText(buffer.dtype(), buffer.dims()) +
                           " buffer from device " + std::to_string(buffer.device()->id()) + " to device " +
                           std::to_string(destination_id) + " (process " + std::to_string(destination_process) +
                           "), transfer key " + std::to_string(key);
  if (destination_process < 0 || destination_process >= transport_->size() ||
      destination_process == transport_->rank())
    return InvalidArgument(what + ": the destination is not another process of the job");
  const collectives::Tag tag = TagOf(key, buffer.device()->id(), destination_id);
  collectives::TcpTransport* transport = transport_;
  // A buffer that cannot be sent: the receiver gets an empty message, which it reports as
  // the source's failure, rather than waiting for bytes that will never come.
  auto refuse = [&](Status error) -> StatusOr<EventRef> {
    senders_.Submit([=] { transport->Send(destination_process, tag, nullptr, 0).IgnoreError(); });
    return error;
  };
  StatusOr<std::shared_ptr<BufferStorage>> source = buffer.storage(function);
  if (!source.ok()) return refuse(source.status().WithPrefix(what));
  std::shared_ptr<BufferStorage> storage = *source;
  EventRef sent = Event::Create();
  buffer.AddUsage(sent);  // a donation of the source waits until its bytes are written
  // The bytes go as they are, in the buffer's layout, which the header names: the receiver
  // converts them (once) if it asked for another layout.
  auto header = std::make_shared<std::vector<uint64_t>>(Header(buffer.dtype(), buffer.dims(), storage->size()));
  const std::vector<uint64_t> layout = LayoutWords(buffer.layout(), buffer.dims().size());
  header->insert(header->end(), layout.begin(), layout.end());
  WorkQueue* senders = &senders_;
  buffer.ready_event()->OnReady([=](const Status& ready) {
    if (!ready.ok()) {
      // As for a buffer that cannot be sent (above).
      sent->Set(ready.WithPrefix(what + ": the buffer failed")).IgnoreError();
      senders->Submit([=] { transport->Send(destination_process, tag, nullptr, 0).IgnoreError(); });
      return;
    }
    senders->Submit([=] {
      Status status = transport->SendParts(destination_process, tag,
                                           {{header->data(), header->size() * sizeof(uint64_t)},
                                            {storage->data(), storage->size()}});
      sent->Set(status.ok() ? status : status.WithPrefix(what)).IgnoreError();
    });
  });
  return sent;
}

StatusOr<std::unique_ptr<Buffer>> CrossHostTransfers::Receive(const char* function, DType dtype, const Dims& dims,
                                                              const MajorToMinor& layout, Device* device,
                                                              MemorySpace* memory, int source_id, int source_process,
                                                              int64_t key) {
  const std::string what = std::string(function) + ": receiving a " + ShapeText(dtype, dims) + " buffer on device " +
                           std::to_string(device->id()) + " from device " + std::to_string(source_id) +
                           " (process " + std::to_string(source_process) + "), transfer key " + std::to_string(key);
  if (source_process < 0 || source_process >= transport_->size() || source_process == transport_->rank())
    return InvalidArgument(what + ": the source is not another process of the job");
  STABLERT_RETURN_IF_ERROR(CheckLayout(layout, dims.size(), what));
  const MajorToMinor wanted = NormalizeLayout(layout);
  STABLERT_ASSIGN_OR_RETURN(int64_t bytes, CheckedByteSize(dims, DTypeByteSize(dtype)));
  STABLERT_ASSIGN_OR_RETURN(std::shared_ptr<BufferStorage> storage,
                            BufferStorage::Allocate(static_cast<size_t>(bytes), device->memory_stats()));
  EventRef ready = Event::Create();
  auto buffer = std::make_unique<Buffer>(dtype, dims, device, memory, storage, ready, wanted);
  const std::vector<uint64_t> expected = Header(dtype, dims, static_cast<size_t>(bytes));
  const collectives::Tag tag = TagOf(key, source_id, device->id());
  collectives::TcpTransport* transport = transport_;
  const std::chrono::milliseconds timeout = timeout_;
  receivers_.Submit([=] {
    StatusOr<collectives::Payload> message =
        transport->Receive(source_process, tag, std::chrono::steady_clock::now() + timeout);
    if (!message.ok()) {
      std::string why(message.status().message());
      if (message.status().code() == StatusCode::kDeadlineExceeded)
        why = "process " + std::to_string(source_process) + " sent nothing within " +
              std::to_string(timeout.count() / 1000) + " s (STABLERT_COLLECTIVE_TIMEOUT_SECONDS sets the timeout)";
      ready->Set(Status(message.status().code(), what + ": " + why)).IgnoreError();
      return;
    }
    const size_t header_bytes = (expected.size() + dims.size()) * sizeof(uint64_t);
    if (message->empty()) {
      ready->Set(Internal(what + ": the source buffer failed in process " + std::to_string(source_process)))
          .IgnoreError();
      return;
    }
    if (message->size() != header_bytes + static_cast<size_t>(bytes) ||
        std::memcmp(message->data(), expected.data(), expected.size() * sizeof(uint64_t)) != 0) {
      ready->Set(InvalidArgument(what + ": the sender's buffer has another shape or element type (" +
                                 std::to_string(message->size()) + " bytes arrived)"))
          .IgnoreError();
      return;
    }
    // The sender's layout, then its bytes in that layout, into the one asked for here.
    MajorToMinor sent(dims.size());
    std::memcpy(sent.data(), message->data() + expected.size() * sizeof(uint64_t), dims.size() * sizeof(uint64_t));
    Status valid = CheckLayout(sent, dims.size(), what + ": the sender's header");
    if (!valid.ok()) {
      ready->Set(valid).IgnoreError();
      return;
    }
    if (bytes > 0)
      CopyBetweenLayouts(message->data() + header_bytes, dims, dtype, NormalizeLayout(std::move(sent)), wanted,
                         storage->data());
    ready->Set(OkStatus()).IgnoreError();
  });
  return buffer;
}

}  // namespace stablert::runtime
