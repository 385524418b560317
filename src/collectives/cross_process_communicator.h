// Collectives between the partitions of one execution spread over several processes.
//
// Ranks are global (partition ids); `process_of_rank[r]` is the process running rank r. The
// ranks of this process meet in memory; at every collective, once all of them have arrived,
// the last to arrive sends each other process, in one message, the inputs of those local ranks
// that one of its ranks reads (a group member, a permute target), and receives from each
// process the inputs local ranks read. Every rank then computes its result from all its group's inputs in group
// order — the same order on every process, so reductions are deterministic and equal
// everywhere. Messages are tagged with (`run_id`, call index): the run id is equal on every
// process for the same execution (runtime/distributed_runs.h), the call index is the
// collective's position in the program's sequence of collectives.
//
// Large all-reduces (Communicator's segmented path) over a group spanning processes send
// pieces, not whole inputs: segment j's owner (group member j) receives segment j of every
// remote member's input, in pieces of kPieceBytes, reduces each piece as soon as it has it (all
// members in group order, as the direct path does) and sends the reduced piece to every other
// process of the group, where one of the group's partitions receives it; the partitions of a
// process then copy every segment from whichever of them holds it. Each process sends about
// (its members) x (remote members' share) of the input and receives the reduced remote
// segments once: a reduce-scatter followed by an all-gather, pipelined piece by piece.
//
// Failure: a local rank or a remote process that does not reach a collective within the
// timeout fails the collective with DeadlineExceeded, a remote process whose connection
// closed fails it at once with Unavailable; both name the op and the process.
//
// Thread-safety: as Communicator. Borrows `transport`, which must outlive it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/communicator.h"
#include "collectives/tcp_transport.h"

namespace stablert::collectives {

class CrossProcessCommunicator : public Communicator {
 public:
  CrossProcessCommunicator(TcpTransport* transport, std::vector<int> process_of_rank, uint64_t run_id,
                           std::chrono::milliseconds timeout);

 protected:
  Status Exchange(int rank, const std::vector<int>& group, const void* in, int64_t bytes, const std::string& op,
                  const ExchangeBody& body, const Traffic* traffic = nullptr) override;
  Status SegmentedAllReduce(int rank, const std::vector<int>& group, const void* in, void* out, int64_t count,
                            int64_t element_size, const Combiner& combine, const std::string& op) override;

 public:
  static constexpr int64_t kPieceBytes = int64_t{1} << 20;

 private:
  struct Call;
  // Sends the local inputs of `call` and receives the remote ones (run by the last local
  // rank to arrive, without the lock).
  Status Transfer(Call& call, uint64_t index, const std::string& op);

  TcpTransport* transport_;
  std::vector<int> process_of_rank_;
  std::vector<int> local_ranks_;  // ascending
  uint64_t run_id_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, uint64_t> next_call_;  // per local rank
  std::map<int, uint64_t> next_segmented_;  // per local rank: segmented all-reduces so far
  std::map<uint64_t, std::shared_ptr<Call>> calls_;
};

}  // namespace stablert::collectives
