// FastDivisor (src/cuda/common/fast_divisor.h), host-only, no GPU needed: the sm90 forward places
// its tiles with it, so a quotient one off would send a tile to the wrong head or query block.
// The host path computes the same multiply-high as the device's __umulhi.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cuda/common/fast_divisor.h"

namespace flashvision::testing {
namespace {

using detail::FastDivisor;

constexpr int kMaxNumerator = 0x7fffffff;

/// Numerators around every multiple of d up to `limit`, and around 2^31 - 1.
std::vector<int> numerators_near_multiples(int d, int limit) {
  std::vector<int> n;
  for (int64_t k = 0; k * d <= limit; ++k) {
    for (int64_t delta = -1; delta <= 1; ++delta) {
      const int64_t v = k * d + delta;
      if (v >= 0 && v <= kMaxNumerator) n.push_back(static_cast<int>(v));
    }
  }
  n.push_back(kMaxNumerator);
  n.push_back(kMaxNumerator - 1);
  return n;
}

void expect_exact(const FastDivisor& div, int n) {
  const int d = div.divisor();
  const int q = div.quotient(n);
  ASSERT_EQ(q, n / d) << "n = " << n << ", d = " << d;
  ASSERT_EQ(div.remainder(n, q), n % d) << "n = " << n << ", d = " << d;
}

TEST(FastDivisor, SmallDivisorsOverSmallAndBoundaryNumerators) {
  for (int d = 1; d <= 2048; ++d) {
    const FastDivisor div(d);
    for (int n = 0; n < 4096; ++n) expect_exact(div, n);
    expect_exact(div, kMaxNumerator);
    expect_exact(div, kMaxNumerator - d);
  }
}

TEST(FastDivisor, NumeratorsAroundMultiples) {
  for (int d : {3, 7, 12, 24, 77, 197, 641, 1000, 4097}) {
    const FastDivisor div(d);
    for (int n : numerators_near_multiples(d, 1 << 20)) expect_exact(div, n);
  }
}

TEST(FastDivisor, PowersOfTwoAndTheirNeighbours) {
  for (int bit = 0; bit < 31; ++bit) {
    for (int64_t d : {(int64_t{1} << bit) - 1, int64_t{1} << bit, (int64_t{1} << bit) + 1}) {
      if (d < 1 || d > kMaxNumerator) continue;
      const FastDivisor div(static_cast<int>(d));
      for (int n : {0, 1, static_cast<int>(d) - 1, static_cast<int>(d), kMaxNumerator,
                    kMaxNumerator - 1, kMaxNumerator / 2}) {
        if (n >= 0) expect_exact(div, n);
      }
    }
  }
}

TEST(FastDivisor, RandomDivisorsAndNumerators) {
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<int> any(1, kMaxNumerator);
  std::uniform_int_distribution<int> small(1, 1 << 16);
  for (int trial = 0; trial < 2000; ++trial) {
    const FastDivisor div(trial % 2 == 0 ? small(rng) : any(rng));
    for (int i = 0; i < 200; ++i) expect_exact(div, any(rng) - 1);
  }
}

}  // namespace
}  // namespace flashvision::testing
