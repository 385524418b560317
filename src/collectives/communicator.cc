#include "collectives/communicator.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace stablert::collectives {

struct InProcessCommunicator::Instance {
  std::vector<int> group;
  std::vector<const void*> inputs;  // by position in the group
  std::vector<bool> arrived;
  int arrivals = 0;
  int departures = 0;
  // Set when a member gave up waiting: the collective failed, and members arriving later
  // fail at once with this account (the op, who waited, who was missing).
  std::string abandoned;
};

namespace {

std::string DeviceList(const std::vector<int>& group, const std::vector<bool>& arrived, bool which) {
  std::string out;
  for (size_t i = 0; i < group.size(); ++i)
    if (arrived[i] == which) out += (out.empty() ? "" : ", ") + std::to_string(group[i]);
  return out;
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte.
bool Overlaps(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + static_cast<uintptr_t>(b_bytes) && y < x + static_cast<uintptr_t>(a_bytes);
}

std::string Seconds(std::chrono::milliseconds timeout) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", static_cast<double>(timeout.count()) / 1000.0);
  return buffer;
}

}  // namespace

InProcessCommunicator::InProcessCommunicator(int num_ranks, std::chrono::milliseconds timeout)
    : Communicator(num_ranks, timeout), next_call_(num_ranks, 0) {}

StatusOr<std::vector<int>> Communicator::GroupOf(int rank, const ReplicaGroups& groups, const std::string& op) const {
  if (rank < 0 || rank >= num_ranks_)
    return InvalidArgument(op + ": rank " + std::to_string(rank) + " outside 0.." + std::to_string(num_ranks_ - 1));
  if (groups.empty()) {
    std::vector<int> all(num_ranks_);
    for (int r = 0; r < num_ranks_; ++r) all[r] = r;
    return all;
  }
  for (const auto& group : groups)
    if (std::find(group.begin(), group.end(), rank) != group.end()) {
      for (int member : group)
        if (member < 0 || member >= num_ranks_)
          return InvalidArgument(op + ": replica group names device " + std::to_string(member) + " of " +
                                 std::to_string(num_ranks_));
      return group;
    }
  return InvalidArgument(op + ": device " + std::to_string(rank) + " is in no replica group");
}

Status InProcessCommunicator::Exchange(int rank, const std::vector<int>& group, const void* in, int64_t /*bytes*/,
                                       const std::string& op, const ExchangeBody& body, const Traffic* /*traffic*/) {
  int position = static_cast<int>(std::find(group.begin(), group.end(), rank) - group.begin());
  int leader = *std::min_element(group.begin(), group.end());
  std::unique_lock<std::mutex> lock(mutex_);
  int64_t call = next_call_[rank]++;
  auto key = std::make_pair(call, leader);
  std::shared_ptr<Instance>& slot = instances_[key];
  if (!slot) {
    slot = std::make_shared<Instance>();
    slot->group = group;
    slot->inputs.assign(group.size(), nullptr);
    slot->arrived.assign(group.size(), false);
  }
  std::shared_ptr<Instance> instance = slot;
  if (instance->group != group)
    return InvalidArgument(op + ": devices disagree on the replica group of this collective");
  if (!instance->abandoned.empty())
    return DeadlineExceeded(op + ": device " + std::to_string(rank) + " reached this collective too late: " +
                            instance->abandoned);
  instance->inputs[position] = in;
  instance->arrived[position] = true;
  ++instance->arrivals;
  changed_.notify_all();
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  int size = static_cast<int>(group.size());
  if (!changed_.wait_until(lock, deadline,
                           [&] { return instance->arrivals == size || !instance->abandoned.empty(); }) ||
      !instance->abandoned.empty()) {
    const std::string waited = DeviceList(instance->group, instance->arrived, true);
    const std::string missing = DeviceList(instance->group, instance->arrived, false);
    if (instance->abandoned.empty())
      instance->abandoned = "devices " + waited + " stopped waiting for devices " + missing + " after " +
                            Seconds(timeout_) + " s (STABLERT_COLLECTIVE_TIMEOUT_SECONDS)";
    // The instance stays, so that late members fail at once instead of waiting.
    instance->arrivals = -size * 2;
    changed_.notify_all();
    return DeadlineExceeded(op + ": devices " + missing + " did not reach this collective within " + Seconds(timeout_) +
                            " s (device " + std::to_string(rank) + " waited with devices " + waited +
                            "; STABLERT_COLLECTIVE_TIMEOUT_SECONDS sets the timeout); the program's collectives do "
                            "not match");
  }
  lock.unlock();
  Status status = body(instance->inputs);
  lock.lock();
  ++instance->departures;
  changed_.notify_all();
  // Inputs must stay valid until every member has read them.
  if (!changed_.wait_until(lock, deadline + timeout_, [&] { return instance->departures == size; }))
    return DeadlineExceeded(op + ": a device stopped in the middle of this collective");
  if (instances_.count(key) && instances_[key] == instance) instances_.erase(key);
  return status;
}

// Each operation computes its result into private memory inside the exchange (others may
// still be reading this rank's input, which `out` may alias) and copies it out afterwards.

Status Communicator::AllReduce(int rank, const ReplicaGroups& groups, const void* in, void* out, int64_t count,
                               int64_t element_size, const Combiner& combine, const std::string& op) {
  STABLERT_ASSIGN_OR_RETURN(std::vector<int> group, GroupOf(rank, groups, op));
  const int64_t bytes = count * element_size;
  if (count > 0 && bytes >= segmented_all_reduce_bytes_)
    return SegmentedAllReduce(rank, group, in, out, count, element_size, combine, op);
  // The result goes straight to `out` unless it overlaps this rank's input (which the others
  // read until the exchange ends).
  std::vector<char> scratch;
  char* result = static_cast<char*>(out);
  if (Overlaps(in, bytes, out, bytes)) {
    scratch.resize(static_cast<size_t>(bytes));
    result = scratch.data();
  }
  STABLERT_RETURN_IF_ERROR(Exchange(rank, group, in, bytes, op, [&](const std::vector<const void*>& inputs) -> Status {
    if (bytes == 0) return OkStatus();
    std::memcpy(result, inputs[0], static_cast<size_t>(bytes));
    for (size_t i = 1; i < inputs.size(); ++i) STABLERT_RETURN_IF_ERROR(combine(result, inputs[i], result, count));
    return OkStatus();
  }));
  if (!scratch.empty()) std::memcpy(out, scratch.data(), scratch.size());
  return OkStatus();
}

Status Communicator::SegmentedAllReduce(int rank, const std::vector<int>& group, const void* in, void* out,
                                        int64_t count, int64_t element_size, const Combiner& combine,
                                        const std::string& op) {
  const int64_t n = static_cast<int64_t>(group.size());
  const int64_t position = std::find(group.begin(), group.end(), rank) - group.begin();
  const int64_t begin = SegmentBegin(count, n, position), end = SegmentBegin(count, n, position + 1);
  std::vector<char> segment(static_cast<size_t>((end - begin) * element_size));
  Status reduced = Exchange(rank, group, in, count * element_size, op, [&](const std::vector<const void*>& inputs) -> Status {
    if (segment.empty()) return OkStatus();
    auto at = [&](size_t i) { return static_cast<const char*>(inputs[i]) + begin * element_size; };
    std::memcpy(segment.data(), at(0), segment.size());
    for (size_t i = 1; i < inputs.size(); ++i)
      STABLERT_RETURN_IF_ERROR(combine(segment.data(), at(i), segment.data(), end - begin));
    return OkStatus();
  });
  // The second exchange happens even after a failure, so that the others learn of it at once
  // (a null input) instead of waiting for this member until the timeout.
  static const char kEmpty = 0;
  const void* published = !reduced.ok() ? nullptr : segment.empty() ? &kEmpty : segment.data();
  Status copied = Exchange(rank, group, published, count * element_size, op, [&](const std::vector<const void*>& inputs) -> Status {
    for (int64_t j = 0; j < n; ++j) {
      if (inputs[static_cast<size_t>(j)] == nullptr)
        return Unavailable(op + ": device " + std::to_string(group[static_cast<size_t>(j)]) +
                           " failed its part of this all-reduce");
      const int64_t b = SegmentBegin(count, n, j), e = SegmentBegin(count, n, j + 1);
      if (e > b)
        std::memcpy(static_cast<char*>(out) + b * element_size, inputs[static_cast<size_t>(j)],
                    static_cast<size_t>((e - b) * element_size));
    }
    return OkStatus();
  });
  STABLERT_RETURN_IF_ERROR(reduced);
  return copied;
}

Status Communicator::AllGather(int rank, const ReplicaGroups& groups, const void* in, void* out, int64_t bytes,
                               const std::string& op) {
  STABLERT_ASSIGN_OR_RETURN(std::vector<int> group, GroupOf(rank, groups, op));
  const int64_t total = bytes * static_cast<int64_t>(group.size());
  std::vector<char> scratch;
  char* result = static_cast<char*>(out);
  if (Overlaps(in, bytes, out, total)) {
    scratch.resize(static_cast<size_t>(total));
    result = scratch.data();
  }
  STABLERT_RETURN_IF_ERROR(Exchange(rank, group, in, bytes, op, [&](const std::vector<const void*>& inputs) -> Status {
    for (size_t i = 0; i < inputs.size() && bytes > 0; ++i) std::memcpy(result + i * bytes, inputs[i], bytes);
    return OkStatus();
  }));
  if (!scratch.empty()) std::memcpy(out, scratch.data(), scratch.size());
  return OkStatus();
}

Status Communicator::ReduceScatter(int rank, const ReplicaGroups& groups, const void* in, void* out,
                                   int64_t chunk_count, int64_t element_size, const Combiner& combine,
                                   const std::string& op) {
  STABLERT_ASSIGN_OR_RETURN(std::vector<int> group, GroupOf(rank, groups, op));
  int64_t position = std::find(group.begin(), group.end(), rank) - group.begin();
  int64_t chunk_bytes = chunk_count * element_size;
  std::vector<char> result(static_cast<size_t>(chunk_bytes));
  STABLERT_RETURN_IF_ERROR(Exchange(rank, group, in, chunk_bytes * static_cast<int64_t>(group.size()), op, [&](const std::vector<const void*>& inputs) -> Status {
    if (result.empty()) return OkStatus();
    auto chunk = [&](size_t i) { return static_cast<const char*>(inputs[i]) + position * chunk_bytes; };
    std::memcpy(result.data(), chunk(0), result.size());
    for (size_t i = 1; i < inputs.size(); ++i)
      STABLERT_RETURN_IF_ERROR(combine(result.data(), chunk(i), result.data(), chunk_count));
    return OkStatus();
  }));
  if (!result.empty()) std::memcpy(out, result.data(), result.size());
  return OkStatus();
}

Status Communicator::AllToAll(int rank, const ReplicaGroups& groups, const void* in, void* out, int64_t chunk_bytes,
                              const std::string& op) {
  STABLERT_ASSIGN_OR_RETURN(std::vector<int> group, GroupOf(rank, groups, op));
  int64_t position = std::find(group.begin(), group.end(), rank) - group.begin();
  std::vector<char> result(static_cast<size_t>(chunk_bytes) * group.size());
  STABLERT_RETURN_IF_ERROR(Exchange(rank, group, in, static_cast<int64_t>(result.size()), op, [&](const std::vector<const void*>& inputs) -> Status {
    for (size_t j = 0; j < inputs.size() && chunk_bytes > 0; ++j)
      std::memcpy(result.data() + j * chunk_bytes, static_cast<const char*>(inputs[j]) + position * chunk_bytes,
                  chunk_bytes);
    return OkStatus();
  }));
  if (!result.empty()) std::memcpy(out, result.data(), result.size());
  return OkStatus();
}

Status Communicator::CollectivePermute(int rank, const std::vector<std::pair<int, int>>& pairs, const void* in,
                                       void* out, int64_t bytes, const std::string& op) {
  // All ranks take part, so that sources and targets meet in one exchange.
  STABLERT_ASSIGN_OR_RETURN(std::vector<int> group, GroupOf(rank, {}, op));
  int source = -1;
  Traffic traffic;
  for (const auto& [from, to] : pairs) {
    if (from < 0 || from >= num_ranks_ || to < 0 || to >= num_ranks_)
      return InvalidArgument(op + ": source-target pair (" + std::to_string(from) + ", " + std::to_string(to) +
                             ") names a device outside 0.." + std::to_string(num_ranks_ - 1));
    if (to == rank) {
      if (source >= 0) return InvalidArgument(op + ": device " + std::to_string(rank) + " is the target of two pairs");
      source = from;
      traffic.reads.push_back(from);
    }
    if (from == rank) traffic.read_by.push_back(to);
  }
  std::vector<char> result(static_cast<size_t>(bytes), 0);
  STABLERT_RETURN_IF_ERROR(Exchange(rank, group, in, static_cast<int64_t>(result.size()), op, [&](const std::vector<const void*>& inputs) -> Status {
    if (source >= 0 && bytes > 0) std::memcpy(result.data(), inputs[source], bytes);
    return OkStatus();
  }, &traffic));
  if (!result.empty()) std::memcpy(out, result.data(), result.size());
  return OkStatus();
}

Status Communicator::CollectiveBroadcast(int rank, const ReplicaGroups& groups, const void* in, void* out,
                                         int64_t bytes, const std::string& op) {
  STABLERT_ASSIGN_OR_RETURN(std::vector<int> group, GroupOf(rank, groups, op));
  std::vector<char> result(static_cast<size_t>(bytes));
  STABLERT_RETURN_IF_ERROR(Exchange(rank, group, in, static_cast<int64_t>(result.size()), op, [&](const std::vector<const void*>& inputs) -> Status {
    if (bytes > 0) std::memcpy(result.data(), inputs[0], bytes);
    return OkStatus();
  }));
  if (!result.empty()) std::memcpy(out, result.data(), result.size());
  return OkStatus();
}

}  // namespace stablert::collectives
