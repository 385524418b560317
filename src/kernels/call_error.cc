// The "call_error" kernel: fails with its step's message (kernels/call_error_params.h).
//
//   "call_error"   in: the call's operands (unread)  out: its results (unwritten)
//                  params: CallErrorParams
//
// The plan keeps its steps whatever reads their results (plan/dead_steps.cc), so an
// execution that reaches the call fails, as the call would on XLA.
#include "kernels/call_error_params.h"
#include "kernels/kernel.h"
#include "kernels/registry.h"

namespace stablert::kernels {
namespace {

Status CallError(const KernelContext&, const KernelArgs& args) {
  return InvalidArgument(args.Params<CallErrorParams>().message);
}

}  // namespace

Status RegisterCallErrorKernel(KernelRegistry& registry) {
  return registry.Register<CallErrorParams>("call_error", &CallError);
}

}  // namespace stablert::kernels
