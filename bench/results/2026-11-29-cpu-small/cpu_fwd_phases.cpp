// Single-thread time per phase of one forward task (one query block against all keys of one
// head), with the library's kernels and the forward's default tiling: where the time of a call
// goes apart from threads. Built against the library's internal headers (see README.md).
//
//   cpu_fwd_phases [--rounds R] N,D[,block_q,block_k] ...
//
// The head is fp32 in the [B, H, N, D] layout (rows D floats apart). Three variants run in turn,
// round after round (each round runs every query block of one head), so that a shared machine's
// slow spells hit them alike: "main" (main at 82bbc13: K and V packed, the max taken by the
// softmax), "gemm max" (K and V packed, the max taken by the S GEMM) and "in place" (the max taken
// by the S GEMM, K and V read in place when their row stride allows, as the branch's forward
// does). Prints per variant and phase the fastest of R rounds in us.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cpu/isa.h"
#include "cpu/kernels.h"
#include "cpu/scratch.h"
#include "cpu/tiling.h"

using namespace flashvision::detail::cpu;

namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

enum Phase { kPackQ, kPackK, kGemmS, kSoftmax, kPackV, kGemmPV, kStore, kPhases };
const char* kNames[] = {"pack Q^T", "pack K", "S GEMM", "softmax", "pack V", "PV GEMM", "store O"};

struct Variant {
  const char* name;
  bool gemm_max;
  bool in_place;
};
const Variant kVariants[] = {
    {"main", false, false}, {"gemm max", true, false}, {"in place", true, true}};

struct Head {
  int64_t n, d;
  Tiling t;
  std::vector<float> q, k, v, out;
  AlignedFloats q_t, o_t, s_t, kb, vb, row_max, row_sum, row_scale, block_max;

  Head(int64_t n_, int64_t d_, Tiling t_)
      : n(n_),
        d(d_),
        t(t_),
        q(n * d),
        k(n * d),
        v(n * d),
        out(n * d),
        q_t(d * t.lane_pitch()),
        o_t(d * t.lane_pitch()),
        s_t(t.max_keys() * t.lane_pitch()),
        kb(t.max_keys() * tile_pitch(d)),
        vb(t.max_keys() * tile_pitch(d)),
        row_max(t.max_rows()),
        row_sum(t.max_rows()),
        row_scale(t.max_rows()),
        block_max(t.max_rows()) {
    std::mt19937 gen(1);
    std::normal_distribution<float> normal;
    for (auto* x : {&q, &k, &v}) {
      for (float& e : *x) e = normal(gen);
    }
  }

  /// One round: every query block of the head; adds each phase's time to `sum`.
  void round(const KernelTable& kt, const Variant& variant, std::vector<double>& sum) {
    const int64_t ld = t.lane_pitch();
    const int64_t pitch = tile_pitch(d);
    // reads_rows_in_place: rows a whole number of cache lines apart, not a multiple of 4.
    const bool in_place = variant.in_place && (d * 4) % 64 == 0 && (d * 4) % 256 != 0;
    for (int64_t q0 = 0; q0 < n;) {
      const int64_t rows = block_span(q0, n, t.block_q);
      const int64_t lanes = pad_lanes(rows);
      double t0 = now_us();
      kt.pack_transposed(flashvision::DType::f32, q.data() + q0 * d, d, rows, d, 0.1f, q_t.data(),
                         ld, lanes);
      for (int64_t i = 0; i < lanes; ++i) {
        row_max.data()[i] = -std::numeric_limits<float>::infinity();
        row_sum.data()[i] = 0.0f;
      }
      for (int64_t i = 0; i < d * ld; ++i) o_t.data()[i] = 0.0f;
      double t1 = now_us();
      sum[kPackQ] += t1 - t0;
      for (int64_t k0 = 0, keys = 0; k0 < n; k0 += keys) {
        keys = block_span(k0, n, t.block_k);
        t0 = now_us();
        const float* k_rows = k.data() + k0 * d;
        const float* v_rows = v.data() + k0 * d;
        const int64_t k_pitch = in_place ? d : pitch;
        if (!in_place) {
          kt.pack_rows(flashvision::DType::f32, k_rows, d, keys, d, 1.0f, kb.data(), pitch, d);
          k_rows = kb.data();
        }
        t1 = now_us();
        ScoreTile scores{s_t.data(), ld, keys, lanes, nullptr, nullptr};
        GemmArgs s_gemm{keys,       lanes, d,          k_rows, k_pitch, 1,
                        q_t.data(), ld,    s_t.data(), ld,     false,   nullptr};
        if (variant.gemm_max) {
          for (int64_t i = 0; i < lanes; ++i)
            block_max.data()[i] = -std::numeric_limits<float>::infinity();
          s_gemm.col_max = block_max.data();
          scores.max = block_max.data();
        }
        kt.gemm(s_gemm);
        const double t2 = now_us();
        kt.online_softmax(scores, row_max.data(), row_sum.data(), o_t.data(), d, ld);
        const double t3 = now_us();
        if (!in_place) {
          kt.pack_rows(flashvision::DType::f32, v_rows, d, keys, d, 1.0f, vb.data(), pitch, d);
          v_rows = vb.data();
        }
        const double t4 = now_us();
        kt.gemm(
            {d, lanes, keys, v_rows, 1, k_pitch, s_t.data(), ld, o_t.data(), ld, true, nullptr});
        const double t5 = now_us();
        sum[kPackK] += t1 - t0;
        sum[kGemmS] += t2 - t1;
        sum[kSoftmax] += t3 - t2;
        sum[kPackV] += t4 - t3;
        sum[kGemmPV] += t5 - t4;
      }
      t0 = now_us();
      for (int64_t i = 0; i < rows; ++i) row_scale.data()[i] = 1.0f / row_sum.data()[i];
      kt.store_transposed(flashvision::DType::f32, o_t.data(), ld, rows, d, row_scale.data(),
                          out.data() + q0 * d, d);
      sum[kStore] += now_us() - t0;
      q0 += rows;
    }
  }
};

void run(int64_t n, int64_t d, Tiling t, int rounds) {
  const KernelTable& kt = select_kernels();
  Head head(n, d, t);
  constexpr int kCount = sizeof(kVariants) / sizeof(kVariants[0]);
  std::vector<std::vector<double>> best(
      kCount, std::vector<double>(kPhases, std::numeric_limits<double>::infinity()));
  std::vector<double> best_total(kCount, std::numeric_limits<double>::infinity());
  for (int r = 0; r < rounds; ++r) {
    for (int v = 0; v < kCount; ++v) {
      std::vector<double> sum(kPhases, 0.0);
      head.round(kt, kVariants[v], sum);
      double total = 0.0;
      for (int p = 0; p < kPhases; ++p) {
        best[v][p] = std::min(best[v][p], sum[p]);
        total += sum[p];
      }
      best_total[v] = std::min(best_total[v], total);
    }
  }
  std::printf("N=%ld D=%ld blocks %ldx%ld (%s), fastest of %d rounds, us:\n%-9s",
              static_cast<long>(n), static_cast<long>(d), static_cast<long>(t.block_q),
              static_cast<long>(t.block_k), kt.name, rounds, "");
  for (const Variant& v : kVariants) std::printf(" %10s", v.name);
  std::printf("\n");
  for (int p = 0; p < kPhases; ++p) {
    std::printf("%-9s", kNames[p]);
    for (int v = 0; v < kCount; ++v) std::printf(" %10.1f", best[v][p]);
    std::printf("\n");
  }
  std::printf("%-9s", "round");
  for (int v = 0; v < kCount; ++v) std::printf(" %10.1f", best_total[v]);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 50;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
      continue;
    }
    long n = 0, d = 0, bq = 0, bk = 0;
    const int got = std::sscanf(a.c_str(), "%ld,%ld,%ld,%ld", &n, &d, &bq, &bk);
    if (got != 2 && got != 4) {
      std::fprintf(stderr, "bad argument %s (expected N,D or N,D,block_q,block_k)\n", a.c_str());
      return 2;
    }
    const Tiling t = got == 4 ? Tiling{bq, bk} : choose_tiling(Pass::forward, d, n, 16, 16);
    run(n, d, t, rounds);
  }
  return 0;
}
