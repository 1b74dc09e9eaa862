// A minimal program written against the installed library: one attention call, checked.
#include <cmath>
#include <cstdio>
#include <vector>

#include <flashvision/flashvision.h>

int main() {
  constexpr int64_t B = 1, N = 3, H = 1, D = 4;
  std::vector<float> q(B * N * H * D), k(q.size()), v(q.size()), out(q.size(), NAN);
  for (size_t i = 0; i < q.size(); ++i) {
    q[i] = 0.1f * static_cast<float>(i % 5);
    k[i] = 0.2f * static_cast<float>(i % 3);
    v[i] = static_cast<float>(i);
  }
  flashvision::ForwardArgs args;
  args.q = flashvision::contiguous_view(q.data(), flashvision::DType::f32, {B, N, H, D});
  args.k = flashvision::contiguous_view(k.data(), flashvision::DType::f32, {B, N, H, D});
  args.v = flashvision::contiguous_view(v.data(), flashvision::DType::f32, {B, N, H, D});
  args.out = flashvision::contiguous_view(out.data(), flashvision::DType::f32, {B, N, H, D});
  flashvision::forward(args);
  // Each output element is a convex combination of the value column, so it lies in its range.
  for (int64_t i = 0; i < N; ++i) {
    for (int64_t d = 0; d < D; ++d) {
      const float o = out[i * D + d];
      if (!(o >= v[d] && o <= v[(N - 1) * D + d])) {
        std::printf("consumer: out[%ld][%ld] = %f is outside the values' range\n", long(i), long(d),
                    o);
        return 1;
      }
    }
  }
  std::printf("consumer: flashvision %s ok\n", flashvision::kVersion);
  return 0;
}
