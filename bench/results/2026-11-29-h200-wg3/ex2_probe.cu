// Throughput probe: exponentials per second per SM of ex2.approx.f32 vs the packed 16-bit forms.
#include <cstdio>
#include <cuda_runtime.h>
template <int kMode>
__global__ void probe(unsigned* out, int iters) {
  unsigned v[16];
  for (int i = 0; i < 16; ++i) v[i] = 0x3c003c00u ^ (threadIdx.x * 7 + i);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      if (kMode == 0) asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+r"(v[i]));
      if (kMode == 1) asm volatile("ex2.approx.ftz.bf16x2 %0, %0;" : "+r"(v[i]));
      if (kMode == 2) asm volatile("ex2.approx.f16x2 %0, %0;" : "+r"(v[i]));
    }
  }
  unsigned s = 0;
  for (int i = 0; i < 16; ++i) s ^= v[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template <int kMode>
void run(const char* name, int per_op) {
  unsigned* out; cudaMalloc(&out, 132 * 8 * 256 * 4);
  const int iters = 4096;
  probe<kMode><<<132 * 8, 256>>>(out, 16);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  cudaEventRecord(a);
  probe<kMode><<<132 * 8, 256>>>(out, iters);
  cudaEventRecord(b); cudaEventSynchronize(b);
  float ms; cudaEventElapsedTime(&ms, a, b);
  double exps = 132.0 * 8 * 256 * iters * 16 * per_op;
  int clk; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  printf("%-10s %8.3f ms  %8.1f Gexp/s  %6.2f exp/clk/SM (at %d MHz)\n", name, ms, exps / ms / 1e6,
         exps / (ms * 1e-3) / 132 / (clk * 1e3), clk / 1000);
  cudaFree(out);
}
int main() {
  run<0>("f32", 1); run<1>("bf16x2", 2); run<2>("f16x2", 2);
  return 0;
}
