// The parameters of host transfer steps ("host_send", "host_recv", StepKind::kHostTransfer),
// built by plan/lower_host_transfer.cc and read by runtime/executor.cc (checked when a plan
// is loaded, like every step's parameter struct).
#pragma once

#include <cstdint>
#include <string_view>

namespace stablert::plan {

struct HostTransferParams {
  static constexpr std::string_view kFamily = "host_transfer";
  // The op's channel handle: the runtime hands it to the execution's send/recv callbacks.
  int64_t channel_id = 0;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("channel_id", channel_id);
  }
};

}  // namespace stablert::plan
