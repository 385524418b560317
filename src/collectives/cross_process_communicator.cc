#include "collectives/cross_process_communicator.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

namespace stablert::collectives {

struct CrossProcessCommunicator::Call {
  std::vector<const void*> inputs;  // by global rank
  std::vector<int64_t> bytes;       // by global rank, -1 until known
  std::set<int> peers;              // processes holding members of the local ranks' groups
  int arrivals = 0;
  int departures = 0;
  bool transferred = false;
  Status transfer_status;
  std::vector<std::vector<char>> received;  // keeps remote inputs alive
};

namespace {

std::string Seconds(std::chrono::milliseconds timeout) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", static_cast<double>(timeout.count()) / 1000.0);
  return buffer;
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
    }
}

Status CrossProcessCommunicator::Transfer(Call& call, uint64_t index, const std::string& op) {
  const int own = transport_->rank();
  const Tag tag{run_id_, index};
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  std::vector<char> message;
  for (int r : local_ranks_) {
    const auto* p = static_cast<const char*>(call.inputs[static_cast<size_t>(r)]);
    const int64_t n = call.bytes[static_cast<size_t>(r)];
    if (n > 0) message.insert(message.end(), p, p + n);
  }
  auto failed = [&](int peer, const Status& status) {
    const std::string prefix = op + ": process " + std::to_string(own) + " exchanging with process " +
                               std::to_string(peer);
    if (status.code() == StatusCode::kDeadlineExceeded)
      return DeadlineExceeded(prefix + ": process " + std::to_string(peer) + " did not reach this collective within " +
                              Seconds(timeout_) + " s (STABLERT_COLLECTIVE_TIMEOUT_SECONDS sets the timeout)");
    return Status(status.code(), prefix + ": " + std::string(status.message()));
  };
  for (int peer : call.peers) {
    Status sent = transport_->Send(peer, tag, message.data(), message.size(), deadline);
    if (!sent.ok()) return failed(peer, sent);
  }
  for (int peer : call.peers) {
    StatusOr<std::vector<char>> payload = transport_->Receive(peer, tag, deadline);
    if (!payload.ok()) return failed(peer, payload.status());
    int64_t expected = 0;
    for (int r = 0; r < num_ranks_; ++r)
      if (process_of_rank_[static_cast<size_t>(r)] == peer) expected += call.bytes[static_cast<size_t>(local_ranks_[0])];
    if (static_cast<int64_t>(payload->size()) != expected)
      return InvalidArgument(op + ": process " + std::to_string(peer) + " sent " + std::to_string(payload->size()) +
                             " bytes for this collective, process " + std::to_string(own) + " expected " +
                             std::to_string(expected) + "; the processes run different programs");
    call.received.push_back(std::move(*payload));
    const char* p = call.received.back().data();
    for (int r = 0; r < num_ranks_; ++r)
      if (process_of_rank_[static_cast<size_t>(r)] == peer) {
        call.inputs[static_cast<size_t>(r)] = p;
        p += call.bytes[static_cast<size_t>(local_ranks_[0])];
      }
  }
  return OkStatus();
}

Status CrossProcessCommunicator::Exchange(int rank, const std::vector<int>& group, const void* in, int64_t bytes,
                                          const std::string& op, const ExchangeBody& body) {
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
  }
  std::shared_ptr<Call> call = slot;
  call->inputs[static_cast<size_t>(rank)] = in;
  call->bytes[static_cast<size_t>(rank)] = bytes;
  for (int member : group)
    if (process_of_rank_[static_cast<size_t>(member)] != transport_->rank())
      call->peers.insert(process_of_rank_[static_cast<size_t>(member)]);
  const int local = static_cast<int>(local_ranks_.size());
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  if (++call->arrivals == local) {
    for (int r : local_ranks_)
      if (call->bytes[static_cast<size_t>(r)] != bytes)
        call->transfer_status = InvalidArgument(op + ": partitions of one process pass inputs of different sizes");
    if (call->transfer_status.ok() && !call->peers.empty()) {
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

}  // namespace stablert::collectives
