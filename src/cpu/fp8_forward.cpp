// The CPU backend's FP8 (e4m3) forward: Q, K and V decoded to float32, the float32 forward, and
// O times V's descale rounded to bf16. It computes the exact function of the stored values (the
// Hopper kernel rounds P to e4m3 on top), so it serves where there is no GPU and as a reference.
#define FLASHVISION_CPU_ISA_NS isa_fp8_driver  // convert.h's inline code, for this TU alone

#include <cstdint>
#include <vector>

#include "api/problem.h"
#include "cpu/convert.h"
#include "cpu/cpu_backend.h"

namespace flashvision::detail {
namespace {

/// float8_e4m3fn bits to float32 (exact): 4 exponent bits of bias 7, 3 mantissa bits, no
/// infinities, NaN where all seven magnitude bits are set.
float e4m3_to_float(uint8_t bits) {
  const int exponent = (bits >> 3) & 0xf, mantissa = bits & 0x7;
  float magnitude;
  if ((bits & 0x7f) == 0x7f) {
    magnitude = __builtin_nanf("");
  } else if (exponent == 0) {
    magnitude = static_cast<float>(mantissa) * 0x1p-9f;
  } else {
    magnitude = static_cast<float>(8 + mantissa) * static_cast<float>(1 << exponent) * 0x1p-10f;
  }
  return (bits & 0x80) != 0 ? -magnitude : magnitude;
}

/// A dense float32 copy of an operand: [sequence][row][head][dim], and its strides.
struct DecodedOperand {
  std::vector<float> values;
  Operand view;
};

DecodedOperand decode(const Operand& op, int64_t seqs, int64_t rows, int64_t heads,
                      int64_t head_dim) {
  static const std::vector<float> table = [] {
    std::vector<float> t(256);
    for (int bits = 0; bits < 256; ++bits) t[bits] = e4m3_to_float(static_cast<uint8_t>(bits));
    return t;
  }();
  DecodedOperand d;
  d.values.resize(static_cast<std::size_t>(seqs * rows * heads * head_dim));
  d.view = {d.values.data(), rows * heads * head_dim, heads * head_dim, head_dim};
  for (int64_t s = 0; s < seqs; ++s) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t h = 0; h < heads; ++h) {
        const uint8_t* src = op.at<const uint8_t>(s, r, h);
        float* dst = d.view.at<float>(s, r, h);
        for (int64_t i = 0; i < head_dim; ++i) dst[i] = table[src[i]];
      }
    }
  }
  return d;
}

}  // namespace

void cpu_fp8_forward(const Problem& problem) {
  using cpu::isa_fp8_driver::float_to_bf16;
  const int64_t seqs = problem.batch, d = problem.head_dim;
  const DecodedOperand q = decode(problem.q, seqs, problem.seqlen_q, problem.heads, d);
  const DecodedOperand k = decode(problem.k, seqs, problem.seqlen_k, problem.heads_kv, d);
  const DecodedOperand v = decode(problem.v, seqs, problem.seqlen_k, problem.heads_kv, d);
  std::vector<float> out(q.values.size());
  Problem f32 = problem;  // the softmax scale already holds Q's and K's descales
  f32.dtype = f32.out_dtype = DType::f32;
  f32.descale_v = 1.0f;
  f32.q = q.view;
  f32.k = k.view;
  f32.v = v.view;
  f32.out = {out.data(), q.view.seq_stride, q.view.row_stride, q.view.head_stride};
  cpu_forward(f32);
  for (int64_t s = 0; s < seqs; ++s) {
    for (int64_t r = 0; r < problem.seqlen_q; ++r) {
      for (int64_t h = 0; h < problem.heads; ++h) {
        const float* src = f32.out.at<float>(s, r, h);
        uint16_t* dst = problem.out.at<uint16_t>(s, r, h);
        for (int64_t i = 0; i < d; ++i) dst[i] = float_to_bf16(src[i] * problem.descale_v);
      }
    }
  }
}

}  // namespace flashvision::detail
