#include "collectives/cross_process_communicator.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace stablert::collectives {

struct CrossProcessCommunicator::Call {
  std::vector<const void*> inputs;  // by global rank
  std::vector<int64_t> bytes;       // by global rank, -1 until known
  std::vector<std::vector<int>> read_by;  // by global rank (local ranks only): who reads its input
  std::set<int> remote_reads;             // remote ranks whose inputs local ranks read
  int arrivals = 0;
  int departures = 0;
  bool transferred = false;
  std::string abandoned;  // set when a local rank gave up waiting for the others
  Status transfer_status;
  std::vector<Payload> received;  // keeps remote inputs alive
};

namespace {

std::string Seconds(std::chrono::milliseconds timeout) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", static_cast<double>(timeout.count()) / 1000.0);
  return buffer;
}

// The error of a transfer with `peer` failing with `status`, naming the op and both processes.
Status PeerError(const std::string& op, int own, int peer, const Status& status, std::chrono::milliseconds timeout) {
  const std::string prefix = op + ": process " + std::to_string(own) + " exchanging with process " + std::to_string(peer);
  if (status.code() == StatusCode::kDeadlineExceeded)
    return DeadlineExceeded(prefix + ": process " + std::to_string(peer) + " did not reach this collective within " +
                            Seconds(timeout) + " s (STABLERT_COLLECTIVE_TIMEOUT_SECONDS sets the timeout)");
  return Status(status.code(), prefix + ": " + std::string(status.message()));
}

// Tags of a segmented all-reduce's messages: `call` marks the kind and counts the segmented
// all-reduces of the execution; `part` says which phase, segment, piece (and source partition).
constexpr uint64_t kSegmentedCall = uint64_t{1} << 63;
constexpr int kFieldBits = 20;
uint64_t InputPiecePart(int source, int64_t segment, int64_t piece) {
  return (uint64_t{1} << 62) | (static_cast<uint64_t>(source) << (2 * kFieldBits)) |
         (static_cast<uint64_t>(segment) << kFieldBits) | static_cast<uint64_t>(piece);
}
// Named by the owner's rank, not its segment's position: groups of one collective share positions.
uint64_t ReducedPiecePart(int owner, int64_t piece) {
  return (uint64_t{2} << 60) | (static_cast<uint64_t>(owner) << kFieldBits) | static_cast<uint64_t>(piece);
}

}  // namespace

CrossProcessCommunicator::CrossProcessCommunicator(TcpTransport* transport, std::vector<int> process_of_rank,
                                                   uint64_t run_id, std::chrono::milliseconds timeout)
    : Communicator(static_cast<int>(process_of_rank.size()), timeout),
      transport_(transport),
      process_of_rank_(std::move(process_of_rank)),
      run_id_(run_id) {
  for (int r = 0; r < num_ranks_; ++r)
    if (process_of_rank_[static_cast<size_t>(r)] == transport_->rank()) {
      local_ranks_.push_back(r);
      next_call_[r] = 0;
      next_segmented_[r] = 0;
    }
}

Status CrossProcessCommunicator::Transfer(Call& call, uint64_t index, const std::string& op) {
  const int own = transport_->rank();
  const Tag tag{run_id_, index};
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  const int64_t bytes = call.bytes[static_cast<size_t>(local_ranks_[0])];
  auto failed = [&](int peer, const Status& status) { return PeerError(op, own, peer, status, timeout_); };
  // Each process gets, in one message, the inputs of the local ranks one of its ranks reads:
  // [count: u32][ranks: count x u32][inputs: count x bytes, in rank order].
  std::map<int, std::vector<int>> to_send;
  for (int l : local_ranks_)
    for (int r : call.read_by[static_cast<size_t>(l)]) {
      const int process = process_of_rank_[static_cast<size_t>(r)];
      std::vector<int>& ranks = to_send[process];
      if (process != own && (ranks.empty() || ranks.back() != l)) ranks.push_back(l);
    }
  for (const auto& [peer, ranks] : to_send) {
    if (peer == own || ranks.empty()) continue;
    std::vector<uint32_t> header = {static_cast<uint32_t>(ranks.size())};
    for (int r : ranks) header.push_back(static_cast<uint32_t>(r));
    std::vector<std::pair<const void*, size_t>> parts = {{header.data(), header.size() * sizeof(uint32_t)}};
    for (int r : ranks) parts.emplace_back(call.inputs[static_cast<size_t>(r)], static_cast<size_t>(bytes));
    Status sent = transport_->SendParts(peer, tag, parts, deadline);
    if (!sent.ok()) return failed(peer, sent);
  }
  std::set<int> sources;
  for (int r : call.remote_reads) sources.insert(process_of_rank_[static_cast<size_t>(r)]);
  for (int peer : sources) {
    StatusOr<Payload> payload = transport_->Receive(peer, tag, deadline);
    if (!payload.ok()) return failed(peer, payload.status());
    auto mismatch = [&](const std::string& what) {
      return InvalidArgument(op + ": process " + std::to_string(peer) + " sent process " + std::to_string(own) + " " +
                             what + " for this collective; the processes run different programs");
    };
    uint32_t count = 0;
    if (payload->size() >= sizeof count) std::memcpy(&count, payload->data(), sizeof count);
    const size_t header = sizeof(uint32_t) * (1 + static_cast<size_t>(count));
    if (payload->size() < sizeof count || count > static_cast<uint32_t>(num_ranks_) ||
        payload->size() != header + static_cast<size_t>(bytes) * count)
      return mismatch(std::to_string(payload->size()) + " bytes");
    call.received.push_back(std::move(*payload));
    const char* data = call.received.back().data();
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t r = 0;
      std::memcpy(&r, data + sizeof(uint32_t) * (1 + i), sizeof r);
      if (r >= static_cast<uint32_t>(num_ranks_) || process_of_rank_[r] != peer)
        return mismatch("the input of partition " + std::to_string(r));
      call.inputs[r] = data + header + static_cast<size_t>(bytes) * i;
    }
  }
  for (int r : call.remote_reads)
    if (call.inputs[static_cast<size_t>(r)] == nullptr)
      return InvalidArgument(op + ": process " + std::to_string(process_of_rank_[static_cast<size_t>(r)]) +
                             " did not send the input of partition " + std::to_string(r) +
                             "; the processes run different programs");
  return OkStatus();
}

Status CrossProcessCommunicator::Exchange(int rank, const std::vector<int>& group, const void* in, int64_t bytes,
                                          const std::string& op, const ExchangeBody& body, const Traffic* traffic) {
  for (int source : traffic ? traffic->reads : group)
    if (source < 0 || source >= num_ranks_)
      return InvalidArgument(op + ": partition " + std::to_string(source) + " outside 0.." + std::to_string(num_ranks_ - 1));
  std::unique_lock<std::mutex> lock(mutex_);
  auto next = next_call_.find(rank);
  if (next == next_call_.end())
    return InvalidArgument(op + ": partition " + std::to_string(rank) + " does not run in process " +
                           std::to_string(transport_->rank()));
  const uint64_t index = next->second++;
  std::shared_ptr<Call>& slot = calls_[index];
  if (!slot) {
    slot = std::make_shared<Call>();
    slot->inputs.assign(static_cast<size_t>(num_ranks_), nullptr);
    slot->bytes.assign(static_cast<size_t>(num_ranks_), -1);
    slot->read_by.assign(static_cast<size_t>(num_ranks_), {});
  }
  std::shared_ptr<Call> call = slot;
  call->inputs[static_cast<size_t>(rank)] = in;
  call->bytes[static_cast<size_t>(rank)] = bytes;
  call->read_by[static_cast<size_t>(rank)] = traffic ? traffic->read_by : group;
  for (int source : traffic ? traffic->reads : group)
    if (process_of_rank_[static_cast<size_t>(source)] != transport_->rank()) call->remote_reads.insert(source);
  const int local = static_cast<int>(local_ranks_.size());
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  if (++call->arrivals == local) {
    for (int r : local_ranks_)
      if (call->bytes[static_cast<size_t>(r)] != bytes)
        call->transfer_status = InvalidArgument(op + ": partitions of one process pass inputs of different sizes");
    if (!call->abandoned.empty()) call->transfer_status = DeadlineExceeded(op + ": " + call->abandoned);
    bool remote = !call->remote_reads.empty();
    for (int r : local_ranks_)
      for (int reader : call->read_by[static_cast<size_t>(r)])
        remote = remote || process_of_rank_[static_cast<size_t>(reader)] != transport_->rank();
    if (call->transfer_status.ok() && remote) {
      lock.unlock();
      Status status = Transfer(*call, index, op);
      lock.lock();
      call->transfer_status = status;
    }
    call->transferred = true;
    changed_.notify_all();
  } else if (!changed_.wait_until(lock, deadline, [&] { return call->arrivals >= local; })) {
    std::string missing;
    for (int r : local_ranks_)
      if (call->bytes[static_cast<size_t>(r)] < 0) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    // Only this process's own ranks can be missing here (remote ones are waited for after).
    // This rank leaves: its input must not be read any more, and a late partition fails at once.
    call->inputs[static_cast<size_t>(rank)] = nullptr;
    call->abandoned = "partitions " + missing + " of process " + std::to_string(transport_->rank()) +
                      " reached this collective after the others gave up";
    ++call->departures;
    changed_.notify_all();
    return DeadlineExceeded(op + ": partitions " + missing + " of process " + std::to_string(transport_->rank()) +
                            " did not reach this collective within " + Seconds(timeout_) +
                            " s (STABLERT_COLLECTIVE_TIMEOUT_SECONDS sets the timeout); the program's collectives "
                            "do not match");
  }
  // The last local rank exchanges with the other processes, bounded by its own deadline.
  changed_.wait(lock, [&] { return call->transferred; });
  Status status = call->transfer_status;
  if (status.ok()) {
    std::vector<const void*> inputs;
    for (int member : group) inputs.push_back(call->inputs[static_cast<size_t>(member)]);
    lock.unlock();
    status = body(inputs);
    lock.lock();
  }
  ++call->departures;
  changed_.notify_all();
  // Local inputs must stay valid until every local rank has read them.
  if (!changed_.wait_until(lock, deadline + timeout_, [&] { return call->departures == local; }))
    return DeadlineExceeded(op + ": a partition stopped in the middle of this collective");
  auto it = calls_.find(index);
  if (it != calls_.end() && it->second == call) calls_.erase(it);
  return status;
}

Status CrossProcessCommunicator::SegmentedAllReduce(int rank, const std::vector<int>& group, const void* in,
                                                    void* out, int64_t count, int64_t element_size,
                                                    const Combiner& combine, const std::string& op) {
  const int own = transport_->rank();
  uint64_t serial;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto next = next_segmented_.find(rank);
    if (next == next_segmented_.end())
      return InvalidArgument(op + ": partition " + std::to_string(rank) + " does not run in process " +
                             std::to_string(own));
    serial = next->second++;
  }
  auto process = [&](int r) { return process_of_rank_[static_cast<size_t>(r)]; };
  const int64_t n = static_cast<int64_t>(group.size());
  Traffic local;  // the exchanges below only meet this process's members; pieces travel here
  std::set<int> remote_processes;
  for (int member : group) {
    if (process(member) == own) {
      local.reads.push_back(member);
      local.read_by.push_back(member);
    } else {
      remote_processes.insert(process(member));
    }
  }
  if (remote_processes.empty())
    return Communicator::SegmentedAllReduce(rank, group, in, out, count, element_size, combine, op);
  const int64_t piece = std::max<int64_t>(1, kPieceBytes / element_size);  // elements
  auto begin = [&](int64_t j) { return SegmentBegin(count, n, j); };
  auto pieces = [&](int64_t j) { return (begin(j + 1) - begin(j) + piece - 1) / piece; };
  if (n >= (int64_t{1} << kFieldBits) || pieces(0) >= (int64_t{1} << kFieldBits) || num_ranks_ >= (1 << kFieldBits))
    return InvalidArgument(op + ": " + std::to_string(count * element_size) + " bytes in a group of " +
                           std::to_string(n) + " exceed the segmented all-reduce's message numbering");
  const int64_t position = std::find(group.begin(), group.end(), rank) - group.begin();
  // Which local member receives remote segment j for the process's members: spread over them.
  std::vector<int> local_members = local.reads;
  auto receiver = [&](int64_t j) { return local_members[static_cast<size_t>(j) % local_members.size()]; };
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  auto tag = [&](uint64_t part) { return Tag{run_id_, kSegmentedCall | serial, part}; };
  // This member's own segment and the remote segments it receives, at their places in the
  // array: straight in `out` unless `out` overlaps the input (which local members read until the
  // first exchange ends); else in a private array whose other pages are never touched.
  const int64_t total = count * element_size;
  const auto in_address = reinterpret_cast<uintptr_t>(in), out_address = reinterpret_cast<uintptr_t>(out);
  const bool in_place = in_address < out_address + static_cast<uintptr_t>(total) &&
                        out_address < in_address + static_cast<uintptr_t>(total);
  std::unique_ptr<char[]> scratch(in_place ? new char[static_cast<size_t>(total)] : nullptr);
  char* const held = in_place ? scratch.get() : static_cast<char*>(out);
  auto at = [&](const void* base, int64_t element) { return static_cast<const char*>(base) + element * element_size; };

  Status reduced = Exchange(rank, group, in, count * element_size, op, [&](const std::vector<const void*>& inputs) -> Status {
    int64_t most = 0;
    for (int64_t j = 0; j < n; ++j) most = std::max(most, pieces(j));
    const int64_t own_begin = begin(position), own_end = begin(position + 1);
    Payload message, first_message;
    for (int64_t k = 0; k < most; ++k) {
      // Piece k of this member's input to every remote segment owner ...
      for (int64_t j = 0; j < n; ++j) {
        const int owner = group[static_cast<size_t>(j)];
        if (process(owner) == own || k >= pieces(j)) continue;
        const int64_t first = begin(j) + k * piece, length = std::min(piece, begin(j + 1) - first);
        Status sent = transport_->Send(process(owner), tag(InputPiecePart(rank, j, k)), at(in, first),
                                       static_cast<size_t>(length * element_size), deadline);
        if (!sent.ok()) return PeerError(op, own, process(owner), sent, timeout_);
      }
      // ... then piece k of the own segment, reduced over all members in group order.
      if (k >= pieces(position)) continue;
      const int64_t first = own_begin + k * piece, length = std::min(piece, own_end - first);
      char* target = held + first * element_size;
      // The first two members' pieces combine straight into the target (no copy of the first).
      const void* first_source = nullptr;
      for (int64_t i = 0; i < n; ++i) {
        const int member = group[static_cast<size_t>(i)];
        const void* source;
        if (process(member) == own) {
          source = at(inputs[static_cast<size_t>(i)], first);
        } else {
          StatusOr<Payload> received =
              transport_->Receive(process(member), tag(InputPiecePart(member, position, k)), deadline);
          if (!received.ok()) return PeerError(op, own, process(member), received.status(), timeout_);
          if (static_cast<int64_t>(received->size()) != length * element_size)
            return InvalidArgument(op + ": process " + std::to_string(process(member)) + " sent " +
                                   std::to_string(received->size()) + " bytes of partition " +
                                   std::to_string(member) + "'s input where " +
                                   std::to_string(length * element_size) +
                                   " were expected; the processes run different programs");
          (i == 0 ? first_message : message) = std::move(*received);
          source = (i == 0 ? first_message : message).data();
        }
        if (i == 0) {
          first_source = source;
          if (n == 1) std::memcpy(target, source, static_cast<size_t>(length * element_size));
        } else {
          STABLERT_RETURN_IF_ERROR(combine(i == 1 ? first_source : target, source, target, length));
        }
      }
      for (int peer : remote_processes) {
        Status sent = transport_->Send(peer, tag(ReducedPiecePart(rank, k)), target,
                                       static_cast<size_t>(length * element_size), deadline);
        if (!sent.ok()) return PeerError(op, own, peer, sent, timeout_);
      }
    }
    return OkStatus();
  }, &local);
  // The reduced remote segments this member receives for the process.
  for (int64_t j = 0; reduced.ok() && j < n; ++j) {
    const int owner = group[static_cast<size_t>(j)];
    if (process(owner) == own || receiver(j) != rank) continue;
    for (int64_t k = 0; reduced.ok() && k < pieces(j); ++k) {
      const int64_t first = begin(j) + k * piece, length = std::min(piece, begin(j + 1) - first);
      StatusOr<Payload> received = transport_->Receive(process(owner), tag(ReducedPiecePart(owner, k)), deadline);
      if (!received.ok()) {
        reduced = PeerError(op, own, process(owner), received.status(), timeout_);
      } else if (static_cast<int64_t>(received->size()) != length * element_size) {
        reduced = InvalidArgument(op + ": process " + std::to_string(process(owner)) + " sent a reduced piece of " +
                                  std::to_string(received->size()) + " bytes where " +
                                  std::to_string(length * element_size) +
                                  " were expected; the processes run different programs");
      } else {
        std::memcpy(held + first * element_size, received->data(), received->size());
      }
    }
  }
  // Every local member copies every segment from the member holding it (its own ones are in
  // place already unless it worked in scratch). This exchange happens even after a failure, so
  // that the others fail at once (a null input) instead of waiting.
  const void* published = reduced.ok() ? held : nullptr;
  Status copied = Exchange(rank, group, published, total, op, [&](const std::vector<const void*>& inputs) -> Status {
    for (int64_t j = 0; j < n; ++j) {
      const int owner = group[static_cast<size_t>(j)];
      const int holder = process(owner) == own ? owner : receiver(j);
      const int64_t slot = std::find(group.begin(), group.end(), holder) - group.begin();
      const void* source = inputs[static_cast<size_t>(slot)];
      if (source == nullptr)
        return Status(StatusCode::kUnavailable, op + ": partition " + std::to_string(holder) + " of process " +
                                                    std::to_string(own) + " failed its part of this all-reduce");
      if (holder == rank && !in_place) continue;
      if (begin(j + 1) > begin(j))
        std::memcpy(static_cast<char*>(out) + begin(j) * element_size, at(source, begin(j)),
                    static_cast<size_t>((begin(j + 1) - begin(j)) * element_size));
    }
    return OkStatus();
  }, &local);
  STABLERT_RETURN_IF_ERROR(reduced);
  return copied;
}

}  // namespace stablert::collectives
