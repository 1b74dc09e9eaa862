// Times flashvision::forward on the CPU in the layout the Python bench uses ([B, H, N, D], "bhsd")
// or the CLI's ([B, N, H, D], "bshd"): the CLI alone cannot show a change that depends on the
// layout. Built against a static libflashvision.a (see README.md in this folder).
//
//   cpu_fwd_time [--threads N] [--layout bhsd|bshd] [--seconds S] B,H,N,D | B,H,Nq,Nk,D ...
//
// Prints per shape the median and the fastest call in ms, and GFLOP/s of the median.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "flashvision/flashvision.h"

namespace {

struct Shape {
  int64_t b, h, nq, nk, d;
};

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

flashvision::TensorView view(float* data, const Shape& s, int64_t n, bool heads_first) {
  if (heads_first) {
    return flashvision::strided_view(data, flashvision::DType::f32, {s.b, n, s.h, s.d},
                                     {s.h * n * s.d, s.d, n * s.d, 1});
  }
  return flashvision::contiguous_view(data, flashvision::DType::f32, {s.b, n, s.h, s.d});
}

void time_shape(const Shape& s, int threads, bool heads_first, double seconds) {
  const size_t q_count = static_cast<size_t>(s.b * s.h * s.nq * s.d);
  const size_t k_count = static_cast<size_t>(s.b * s.h * s.nk * s.d);
  std::vector<float> q(q_count), k(k_count), v(k_count), out(q_count);
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  for (auto* x : {&q, &k, &v}) {
    for (float& e : *x) e = normal(gen);
  }
  flashvision::ForwardArgs args;
  args.q = view(q.data(), s, s.nq, heads_first);
  args.k = view(k.data(), s, s.nk, heads_first);
  args.v = view(v.data(), s, s.nk, heads_first);
  args.out = view(out.data(), s, s.nq, heads_first);
  args.backend = flashvision::Backend::cpu;
  args.num_threads = threads;
  for (int i = 0; i < 3; ++i) flashvision::forward(args);
  std::vector<double> times;
  const double start = now_ms();
  while (times.size() < 5 || (now_ms() - start < seconds * 1e3 && times.size() < 2000)) {
    const double t0 = now_ms();
    flashvision::forward(args);
    times.push_back(now_ms() - t0);
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double flop = 4.0 * s.b * s.h * s.nq * s.nk * s.d;
  std::printf(
      "%ldx%ldx%ldx%ldx%ld %s threads %d: median %.3f ms, min %.3f ms, %.1f GFLOP/s "
      "(%zu calls)\n",
      static_cast<long>(s.b), static_cast<long>(s.h), static_cast<long>(s.nq),
      static_cast<long>(s.nk), static_cast<long>(s.d), heads_first ? "bhsd" : "bshd", threads,
      median, times[0], flop / median * 1e-6, times.size());
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 0;
  bool heads_first = true;
  double seconds = 2.0;
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--layout" && i + 1 < argc) {
      heads_first = std::strcmp(argv[++i], "bhsd") == 0;
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      Shape s{};
      const int got = std::sscanf(a.c_str(), "%ld,%ld,%ld,%ld,%ld", &s.b, &s.h, &s.nq, &s.nk, &s.d);
      if (got == 4) {  // B,H,N,D: self-attention
        s.d = s.nk;
        s.nk = s.nq;
      } else if (got != 5) {
        std::fprintf(stderr, "bad argument %s (expected B,H,N,D or B,H,Nq,Nk,D)\n", a.c_str());
        return 2;
      }
      shapes.push_back(s);
    }
  }
  for (const Shape& s : shapes) time_shape(s, threads, heads_first, seconds);
  return 0;
}
