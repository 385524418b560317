#include "base/hash.h"

namespace stablert {

std::string FingerprintToHex(uint64_t fingerprint) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, fingerprint >>= 4) text[i] = kDigits[fingerprint & 0xf];
  return text;
}

}  // namespace stablert
