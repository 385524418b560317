// The parameters of the FFT kernels "fft.<C>", "rfft.<R>", "irfft.<C>" (kernels/fft.cc),
// built by plan/lower_fft.cc.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace stablert::kernels {

// StableHLO's fft_type, in the VHLO numbering.
enum class FftType : int64_t {
  kFft = 0,    // complex -> complex
  kIfft = 1,   // complex -> complex, inverse, scaled by 1 / prod(lengths)
  kRfft = 2,   // real -> the non-redundant half spectrum
  kIrfft = 3,  // half spectrum -> real
};

struct FftParams {
  static constexpr std::string_view kFamily = "fft";
  FftType type = FftType::kFft;
  // fft_length: the transformed (innermost) dimensions of the real or complex signal,
  // 1 to 3 entries, none negative (checked by the kernel's prepare function).
  std::vector<int64_t> lengths;

  template <typename Visit>
  void Fields(Visit&& visit) const {
    visit("type", type);
    visit("lengths", lengths);
  }
};

}  // namespace stablert::kernels
