#include "kernels/registry.h"

#include "kernels/call_error_params.h"
#include "kernels/families.h"
#include "kernels/ffi_params.h"

namespace stablert::kernels {

std::string KernelKey(std::string_view op, std::initializer_list<DType> dtypes) {
  std::string key(op);
  for (DType dtype : dtypes) {
    key += '.';
    key += DTypeName(dtype);
  }
  return key;
}

Status KernelRegistry::Add(std::string key, Entry entry) {
  if (entry.fn == nullptr) return InvalidArgument("kernel '" + key + "' registered without a function");
  auto [it, inserted] = kernels_.emplace(std::move(key), entry);
  if (!inserted) return InvalidArgument("kernel '" + it->first + "' registered twice");
  return OkStatus();
}

Status KernelRegistry::Register(std::string key, KernelFn fn, PrepareFn prepare) {
  return Add(std::move(key), Entry{fn, prepare, false, nullptr});
}

Status KernelRegistry::RegisterSplittable(std::string key, KernelFn fn, PrepareFn prepare) {
  return Add(std::move(key), Entry{fn, prepare, true, nullptr});
}

Status KernelRegistry::DeclareWorkspace(std::string_view key, WorkspaceFn fn) {
  auto it = kernels_.find(key);
  if (it == kernels_.end()) return NotFound("no kernel '" + std::string(key) + "' to declare a workspace for");
  it->second.workspace = fn;
  return OkStatus();
}

Status KernelRegistry::DeclareTile(std::string_view key, TileFn fn) {
  auto it = kernels_.find(key);
  if (it == kernels_.end()) return NotFound("no kernel '" + std::string(key) + "' to declare a tile function for");
  it->second.tile = fn;
  return OkStatus();
}

Status KernelRegistry::DeclareBind(std::string_view key, BindFn fn) {
  auto it = kernels_.find(key);
  if (it == kernels_.end()) return NotFound("no kernel '" + std::string(key) + "' to declare a bind function for");
  it->second.bind = fn;
  return OkStatus();
}

Status KernelRegistry::DeclareInPlace(std::string_view key, InPlace in_place) {
  auto it = kernels_.find(key);
  if (it == kernels_.end()) return NotFound("no kernel '" + std::string(key) + "' to declare in place");
  it->second.in_place = in_place;
  return OkStatus();
}

KernelFn KernelRegistry::Find(std::string_view key) const {
  const Entry* entry = Lookup(key);
  return entry ? entry->fn : nullptr;
}

const KernelRegistry::Entry* KernelRegistry::Lookup(std::string_view key) const {
  auto it = kernels_.find(key);
  return it == kernels_.end() ? nullptr : &it->second;
}

Status KernelRegistry::RegisterScalar(std::string key, ScalarFnPtr fn) {
  auto [it, inserted] = scalars_.emplace(std::move(key), fn);
  if (!inserted) return InvalidArgument("scalar function '" + it->first + "' registered twice");
  return OkStatus();
}

KernelRegistry::ScalarFnPtr KernelRegistry::FindScalar(std::string_view key) const {
  auto it = scalars_.find(key);
  return it == scalars_.end() ? nullptr : it->second;
}

std::vector<std::string> KernelRegistry::Keys() const {
  std::vector<std::string> keys;
  keys.reserve(kernels_.size());
  for (const auto& [key, fn] : kernels_) keys.push_back(key);
  return keys;
}

namespace {
// Tokens (!stablehlo.token) order side effects and carry no bytes: copying one (a token a
// loop carries or a branch returns) does nothing.
Status CopyTokenKernel(const KernelContext&, const KernelArgs&) { return OkStatus(); }
}  // namespace

Status RegisterCpuKernels(KernelRegistry& registry) {
  STABLERT_RETURN_IF_ERROR(registry.Register("copy.token", &CopyTokenKernel));
  STABLERT_RETURN_IF_ERROR(RegisterUnaryKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterBinaryKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterCompareSelectKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterConvertKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterBitcastKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterDataMovementKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterSlicingKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterReduceKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterDotKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterProgramKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterArgMinMaxKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterSortKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterWindowKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterGatherScatterKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterConvolutionKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterReducePrecisionKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterComplexKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterLinalgKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterLinalgCustomCallKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterRngKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterFftKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterFusedKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterFfiKernels(registry));
  STABLERT_RETURN_IF_ERROR(RegisterCallErrorKernel(registry));
  return OkStatus();
}

const KernelRegistry& CpuKernels() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    Status status = RegisterCpuKernels(*r);
    STABLERT_CHECK(status.ok());
    return r;
  }();
  return *registry;
}

}  // namespace stablert::kernels
