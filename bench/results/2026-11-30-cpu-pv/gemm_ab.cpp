// Single-thread A/B of the forward's two GEMMs: the library's gemm_body.h against an older copy of
// it (OLD_GEMM_BODY, a path given at compile time), at the shapes one forward task runs: one query
// block of `lanes` lanes against every key block of one fp32 head, K and V read in place ([B, H,
// N, D] rows D floats apart) where the forward reads them so, else from packed copies. The two
// run in turn, round after round; prints the fastest round of each in us and GFLOP/s.
//
//   git show a4417fd:src/cpu/gemm_body.h > /tmp/old.h
//   g++ -std=c++20 -O3 -mavx2 -mfma -mf16c -I include -I src -DOLD_GEMM_BODY='"/tmp/old.h"'
//       gemm_ab.cpp -o gemm_ab   (devbin's gemm_ab512: plus -mavx512f -mavx512bw -mavx512vl
//       -mavx512dq -Wno-maybe-uninitialized -DUSE_AVX512 -static)
//   gemm_ab [--rounds R] [--peak] N,D,lanes,block_k[,offset] ...
// offset: floats by which the Q^T, S^T and O^T tiles start past a 64-byte boundary (the library's
// are aligned; 4 is where a std::vector's data starts, as in 2026-11-29-xeon16-cpu-v4's
// gemm_variants). --peak: the FMA rate from registers alone (no memory), the core's ceiling.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#ifdef USE_AVX512
#include "cpu/simd_avx512.h"
#else
#include "cpu/simd_avx2.h"
#endif
#include "cpu/gemm_body.h"
#ifdef USE_AVX512
namespace NEW_NS = flashvision::detail::cpu::isa_avx512;
#else
namespace NEW_NS = flashvision::detail::cpu::isa_avx2;
#endif
#include "cpu/scratch.h"
#include "cpu/tiling.h"

namespace flashvision::detail::cpu {
namespace isa_old {
using namespace FLASHVISION_CPU_ISA_NS;  // Vec, load, kGemmRows, ... of the ISA
}
}  // namespace flashvision::detail::cpu
#undef FLASHVISION_CPU_ISA_NS
#define FLASHVISION_CPU_ISA_NS isa_old
#include OLD_GEMM_BODY

using namespace flashvision::detail::cpu;
using GemmFn = void (*)(const GemmArgs&);
using namespace NEW_NS;  // Vec, kGemmRows, ... of the ISA

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Case {
  int64_t n, d, lanes, block_k, offset;
  bool in_place;
  int64_t pitch, ld;
  AlignedFloats k, v, q_t_buf, s_t_buf, o_t_buf, col_max;
  float *q_t, *s_t, *o_t;

  Case(int64_t n_, int64_t d_, int64_t lanes_, int64_t bk, int64_t offset_)
      : n(n_),
        d(d_),
        lanes(lanes_),
        block_k(bk),
        offset(offset_),
        in_place((d * 4) % 64 == 0 && (d * 4) % 256 != 0),
        pitch(in_place ? d : tile_pitch(d)),
        ld(tile_pitch(lanes + lanes / 2)),
        k(n * pitch),
        v(n * pitch),
        q_t_buf(d * ld + 16),
        s_t_buf((bk + bk / 2) * ld + 16),
        o_t_buf(d * ld + 16),
        col_max(ld),
        q_t(q_t_buf.data() + offset),
        s_t(s_t_buf.data() + offset),
        o_t(o_t_buf.data() + offset) {
    std::mt19937 gen(1);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    for (float* x : {k.data(), v.data()}) {
      for (int64_t i = 0; i < n * pitch; ++i) x[i] = u(gen);
    }
    for (int64_t i = 0; i < d * ld; ++i) q_t[i] = u(gen), o_t[i] = 0.0f;
    for (int64_t i = 0; i < (bk + bk / 2) * ld; ++i) s_t[i] = u(gen) * 0.01f;
  }

  /// One query block against every key block: S^T = K Q^T (with the block max), O^T += V^T P^T.
  void round(GemmFn gemm, double& s_us, double& pv_us) {
    for (int64_t k0 = 0, keys = 0; k0 < n; k0 += keys) {
      keys = block_span(k0, n, block_k);
      for (int64_t i = 0; i < lanes; ++i) col_max.data()[i] = -1e30f;
      const double t0 = now_us();
      gemm({keys, lanes, d, k.data() + k0 * pitch, pitch, 1, q_t, ld, s_t, ld, false,
            col_max.data()});
      const double t1 = now_us();
      // P^T: the scores just written (the softmax would turn them into probabilities in place).
      gemm({d, lanes, keys, v.data() + k0 * pitch, 1, pitch, s_t, ld, o_t, ld, true,
            nullptr});
      pv_us += now_us() - t1;
      s_us += t1 - t0;
    }
  }
};

/// GFLOP/s of FMAs on registers only: as many independent chains as the GEMM tile has.
double fma_peak() {
  constexpr int kChains = kGemmRows * kGemmVecs;
  const Vec b = broadcast(0.999f), c = broadcast(1e-6f);
  double best = std::numeric_limits<double>::infinity();
  constexpr int64_t kSteps = 4000;
  for (int r = 0; r < 2000; ++r) {
    // Every loop over acc unrolled, or GCC keeps the array on the stack and stores it each step.
    Vec acc[kChains];
#pragma GCC unroll 64
    for (Vec& x : acc) x = zero();
    const double t0 = now_us();
    for (int64_t i = 0; i < kSteps; ++i) {
#pragma GCC unroll 64
      for (Vec& x : acc) x = fma(x, b, c);
    }
    best = std::min(best, now_us() - t0);
    float sink[Vec::kWidth];
    Vec sum = acc[0];
#pragma GCC unroll 64
    for (int j = 1; j < kChains; ++j) sum = sum + acc[j];
    store(sink, sum);
    asm volatile("" ::"r"(sink) : "memory");
  }
  return 2.0 * kSteps * kChains * Vec::kWidth / best * 1e-3;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 200;
  const GemmFn fns[2] = {&isa_old::gemm, &::NEW_NS::gemm};
  const char* names[2] = {"old", "new"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--peak") {
      std::printf("FMA peak from registers: %.1f GF/s\n", fma_peak());
      continue;
    }
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      continue;
    }
    long n = 0, d = 0, lanes = 0, bk = 0, offset = 0;
    const int got = std::sscanf(a.c_str(), "%ld,%ld,%ld,%ld,%ld", &n, &d, &lanes, &bk, &offset);
    if ((got != 4 && got != 5) || offset < 0 || offset > 15) {
      std::fprintf(stderr, "bad argument %s (expected N,D,lanes,block_k[,offset 0..15])\n",
                   a.c_str());
      return 2;
    }
    Case c(n, d, lanes, bk, offset);
    double best[2][2];
    for (auto& b : best) b[0] = b[1] = std::numeric_limits<double>::infinity();
    for (int r = 0; r < rounds; ++r) {
      for (int f = 0; f < 2; ++f) {
        const int which = (r % 2 == 0) ? f : 1 - f;
        double s = 0, pv = 0;
        c.round(fns[which], s, pv);
        best[which][0] = std::min(best[which][0], s);
        best[which][1] = std::min(best[which][1], pv);
      }
    }
    const double flops = 2.0 * n * d * lanes;  // per GEMM over all key blocks
    std::printf("N=%ld D=%ld lanes=%ld block_k=%ld offset=%ld %s (pitch %ld, ld %ld), fastest of %d:\n",
                n, d, lanes, bk, offset, c.in_place ? "in place" : "packed",
                static_cast<long>(c.pitch), static_cast<long>(c.ld), rounds);
    for (int f = 0; f < 2; ++f) {
      std::printf("  %s  S %8.1f us %6.1f GF/s   PV %8.1f us %6.1f GF/s\n", names[f], best[f][0],
                  flops / best[f][0] * 1e-3, best[f][1], flops / best[f][1] * 1e-3);
    }
  }
  return 0;
}
