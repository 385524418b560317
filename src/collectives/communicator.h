// Collectives between the devices of one execution: the interface (Communicator) and the
// in-process implementation (InProcessCommunicator). The cross-process implementation is
// collectives/cross_process_communicator.h.
//
// A Communicator connects `num_ranks` participants (one per device, each on its own
// thread) of one execution. Every participant calls the same collectives in the same
// order, as a StableHLO program's manual region does; calls are matched by their order on
// each rank (the n-th collective of rank 0 meets the n-th of rank 1) and by replica group.
// Each call blocks until all members of the caller's group have arrived and have read
// what they need, so inputs may be reused as soon as it returns.
//
// Results are deterministic: reductions combine contributions in group order, the same way
// every run. All-reduces of at least segmented_all_reduce_bytes() split the work: the array is
// cut into one segment per group member, member j reduces segment j (all members' inputs, in
// group order) and every member then copies every segment. The order of combination per
// element is the same as on the direct path, so results are bit-identical either way. A member that does not arrive within the timeout makes the others fail with
// DeadlineExceeded naming the op, the missing ranks and those that waited — never a hang;
// a member that arrives after the others gave up fails at once with the same account. The
// runtime takes the timeout from STABLERT_COLLECTIVE_TIMEOUT_SECONDS (env::CollectiveTimeout).
//
// Thread-safety: all methods may be called concurrently from the participants' threads.
// The Communicator must outlive all calls.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace stablert::collectives {

// Combines `count` elements: out[i] = lhs[i] (op) rhs[i]. `out` may alias `lhs`.
using Combiner = std::function<Status(const void* lhs, const void* rhs, void* out, int64_t count)>;

// Ranks that communicate in one call, in their order; each rank is in exactly one group.
using ReplicaGroups = std::vector<std::vector<int>>;

// The body of one collective: reads every group member's input (in group order) and
// computes this rank's result into private memory.
using ExchangeBody = std::function<Status(const std::vector<const void*>& inputs)>;

// Which inputs of one collective cross which ranks: `reads`, the ranks whose inputs this rank
// reads; `read_by`, the ranks that read this rank's input. A group collective has both equal to
// the group; a collective permute reads its source and is read by its targets.
struct Traffic {
  std::vector<int> reads;
  std::vector<int> read_by;
};

class Communicator {
 public:
  Communicator(int num_ranks, std::chrono::milliseconds timeout) : num_ranks_(num_ranks), timeout_(timeout) {}
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int num_ranks() const { return num_ranks_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // All-reduces of at least this many bytes per rank take the segmented path (above).
  static constexpr int64_t kDefaultSegmentedAllReduceBytes = int64_t{1} << 20;
  int64_t segmented_all_reduce_bytes() const { return segmented_all_reduce_bytes_; }
  // Every rank must see the same value (set it before any call).
  void set_segmented_all_reduce_bytes(int64_t bytes) { segmented_all_reduce_bytes_ = bytes; }

  // `op` names the calling op in errors (e.g. "stablehlo.all_reduce at f.py:3").
  // Empty `groups` means one group of all ranks in rank order.

  // out = in[g0] (op) in[g1] (op) ... over the group, `bytes` per rank.
  Status AllReduce(int rank, const ReplicaGroups& groups, const void* in, void* out, int64_t count,
                   int64_t element_size, const Combiner& combine, const std::string& op);
  // out = concatenation of every member's `bytes`, in group order (`out` holds
  // group_size * bytes). Gathering along an inner dimension is the caller's reshuffle.
  Status AllGather(int rank, const ReplicaGroups& groups, const void* in, void* out, int64_t bytes,
                   const std::string& op);
  // The reduction of every member's `in` (group_size * chunk elements), of which this
  // member keeps chunk number (its position in the group).
  Status ReduceScatter(int rank, const ReplicaGroups& groups, const void* in, void* out, int64_t chunk_count,
                       int64_t element_size, const Combiner& combine, const std::string& op);
  // Member j's chunk i (of `chunk_bytes`) goes to member i's chunk j.
  Status AllToAll(int rank, const ReplicaGroups& groups, const void* in, void* out, int64_t chunk_bytes,
                  const std::string& op);
  // Sends `in` to the targets of `pairs` (source, target); a rank that is no pair's target
  // receives zeros, as StableHLO specifies.
  Status CollectivePermute(int rank, const std::vector<std::pair<int, int>>& pairs, const void* in, void* out,
                           int64_t bytes, const std::string& op);
  // Every member receives the first group member's `in`.
  Status CollectiveBroadcast(int rank, const ReplicaGroups& groups, const void* in, void* out, int64_t bytes,
                             const std::string& op);

 protected:
  // Meets the other members of `group` at this rank's next collective: publishes `in`
  // (`bytes` long), waits for everyone, runs `body(inputs)` and returns once no member
  // needs `in` any more.
  // `traffic` null means the group both ways. Inputs a rank does not read may be null.
  virtual Status Exchange(int rank, const std::vector<int>& group, const void* in, int64_t bytes,
                          const std::string& op, const ExchangeBody& body, const Traffic* traffic = nullptr) = 0;
  StatusOr<std::vector<int>> GroupOf(int rank, const ReplicaGroups& groups, const std::string& op) const;

  // The segmented all-reduce: two exchanges, the first reduces this member's segment, the
  // second copies every member's segment into `out`. Every rank of every group calls it for
  // the same collectives (the choice depends on the size only), so call counts stay aligned.
  virtual Status SegmentedAllReduce(int rank, const std::vector<int>& group, const void* in, void* out, int64_t count,
                                    int64_t element_size, const Combiner& combine, const std::string& op);

  const int num_ranks_;
  const std::chrono::milliseconds timeout_;
  int64_t segmented_all_reduce_bytes_ = kDefaultSegmentedAllReduceBytes;
};

// Segment j of `count` elements cut into `parts`: [SegmentBegin(j), SegmentBegin(j + 1)).
inline int64_t SegmentBegin(int64_t count, int64_t parts, int64_t j) { return count / parts * j + std::min(j, count % parts); }

// All ranks in this process, each on its own thread.
class InProcessCommunicator : public Communicator {
 public:
  InProcessCommunicator(int num_ranks, std::chrono::milliseconds timeout);

 protected:
  Status Exchange(int rank, const std::vector<int>& group, const void* in, int64_t bytes, const std::string& op,
                  const ExchangeBody& body, const Traffic* traffic = nullptr) override;

 private:
  struct Instance;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int64_t> next_call_;  // per rank
  std::map<std::pair<int64_t, int>, std::shared_ptr<Instance>> instances_;  // (call index, group leader)
};


}  // namespace stablert::collectives
