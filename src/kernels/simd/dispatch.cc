// Run-time ISA selection: see dispatch.h.
#include "kernels/simd/dispatch.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/simd/dispatch.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace stablert::kernels::simd::HWY_NAMESPACE {
// The target this translation unit was compiled for, as chosen by the dispatcher.
int64_t TargetOfThisCall() { return HWY_TARGET; }
}  // namespace stablert::kernels::simd::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <string>

#include "kernels/onednn_common.h"
#include "kernels/xsmm_matmul.h"

namespace stablert::kernels::simd {
HWY_EXPORT(TargetOfThisCall);

namespace {

// The Highway target of a level, and every target better than it (lower bits are better).
int64_t TargetOf(env::Isa level) {
  switch (level) {
#if HWY_ARCH_X86
    case env::Isa::kAvx512: return HWY_AVX3;
    case env::Isa::kAvx2: return HWY_AVX2;
    case env::Isa::kSse4: return HWY_SSE4;
#endif
    default: return 0;
  }
}

const char* NameOf(env::Isa level) {
  switch (level) {
    case env::Isa::kAvx512: return "avx512";
    case env::Isa::kAvx2: return "avx2";
    case env::Isa::kSse4: return "sse4";
    default: return "best";
  }
}

}  // namespace

// The targets the CPU supports, read once before any cap is set (every cap goes through
// SetIsa, which reads this first).
int64_t CpuTargets() {
  static const int64_t targets = [] {
    hwy::SetSupportedTargetsForTest(0);
    return hwy::SupportedTargets();
  }();
  return targets;
}

bool CpuHas(env::Isa level) {
  if (level == env::Isa::kBest) return true;
  const int64_t target = TargetOf(level);
  return target != 0 && (CpuTargets() & target) != 0;
}

Status SetIsa(env::Isa level) {
  const int64_t supported = CpuTargets();
  if (level == env::Isa::kBest) {
    hwy::SetSupportedTargetsForTest(0);
    return OkStatus();
  }
  const int64_t target = TargetOf(level);
  if (target == 0 || (supported & target) == 0)
    return InvalidArgument(std::string(env::kIsa) + "='" + NameOf(level) + "': this CPU does not support " +
                           NameOf(level) + " (it supports up to " + hwy::TargetName(supported & -supported) +
                           "); allowed: best, avx512, avx2, sse4");
  // Keep the level and every lower one; the dispatcher picks the best that remains.
  hwy::SetSupportedTargetsForTest(supported & ~(target - 1));
  return OkStatus();
}

Status ApplyIsaSetting() {
  STABLERT_ASSIGN_OR_RETURN(env::Isa level, env::IsaLevel());
  STABLERT_RETURN_IF_ERROR(SetIsa(level));
  // The libraries that generate code of their own follow the same cap.
  onednn::CapIsa(level);
  xsmm::CapIsa(level);
  return OkStatus();
}

std::string CurrentTarget() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(TargetOfThisCall)()); }

}  // namespace stablert::kernels::simd
#endif  // HWY_ONCE
