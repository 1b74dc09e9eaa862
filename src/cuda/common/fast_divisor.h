// Division by a divisor fixed at launch with a multiply-high, an add and a shift instead of the
// ~20-instruction integer division nvcc emits for a divisor it cannot see. The persistent sm90
// forward places every tile of its schedule by three such divisions (query blocks, heads, the GQA
// group); on short image sequences a tile lasts a few microseconds, and the divisions sat on the
// path to its first GEMM. Plain host/device code, kept apart from the kernels so that a host
// test can check it.
#pragma once

#include <cstdint>

#include "cuda/common/host_device.h"

namespace flashvision::detail {

/// n / divisor for 0 <= n < 2^31 and a divisor of 1 to 2^31 - 1, by the round-up method of
/// Granlund and Montgomery ("Division by invariant integers using multiplication", 1994, section
/// 4): with l = ceil(log2 d) and magic = floor(2^32 (2^l - d) / d) + 1, the low 32 bits of a
/// 33-bit multiplier 2^32 + magic, q = (umulhi(n, magic) + n) >> l. n < 2^31 keeps the sum within
/// 32 bits.
class FastDivisor {
 public:
  FastDivisor() = default;

  /// Host-side setup; `divisor` must be positive (the callers pass counts of at least 1).
  explicit FastDivisor(int divisor) : divisor_(divisor) {
    const auto d = static_cast<uint64_t>(divisor);
    while ((uint64_t{1} << shift_) < d) ++shift_;
    magic_ = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift_) - d)) / d + 1);
  }

  FLASHVISION_HOST_DEVICE int divisor() const { return divisor_; }

  FLASHVISION_HOST_DEVICE int quotient(int n) const {
    const auto un = static_cast<uint32_t>(n);
    return static_cast<int>((multiply_high(un, magic_) + un) >> shift_);
  }

  /// n - quotient * divisor, for the quotient the caller already has.
  FLASHVISION_HOST_DEVICE int remainder(int n, int quotient) const {
    return n - quotient * divisor_;
  }

 private:
  FLASHVISION_HOST_DEVICE static uint32_t multiply_high(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __umulhi(a, b);
#else
    return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
#endif
  }

  int divisor_ = 1;
  uint32_t magic_ = 1;
  uint32_t shift_ = 0;
};

}  // namespace flashvision::detail
