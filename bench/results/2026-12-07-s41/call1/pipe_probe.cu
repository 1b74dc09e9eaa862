// Session 41: which pipe F2FP (cvt.rn.bf16x2.f32) issues to on Hopper, beside MUFU.EX2.
// Each warp runs kIters rounds of 8 independent operations of the kinds chosen and reports its
// cycles a round; if two kinds share a pipe, a round of both takes about the sum of their times.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

constexpr int kIters = 4096;

template <int kMode>
__global__ void probe(uint32_t* sink, long long* cycles) {
  float a[8];
  for (int j = 0; j < 8; ++j) a[j] = 0.01f * (threadIdx.x + j) - 3.0f;
  uint32_t acc = 0;
  __syncthreads();
  const long long t0 = clock64();
  for (int i = 0; i < kIters; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      if constexpr (kMode & 1) {  // MUFU.EX2
        float e;
        asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(a[j]));
        acc ^= __float_as_uint(e);
      }
      if constexpr (kMode & 2) {  // F2FP: two floats to a bf16 pair, rounded to nearest even
        uint32_t d;
        asm volatile("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(d) : "f"(a[j]), "f"(a[(j + 1) % 8]));
        acc ^= d;
      }
      if constexpr (kMode & 4) {  // the same pair on the integer pipe: add half an ulp, take the tops
        uint32_t lo, hi, d;
        asm volatile("add.u32 %0, %1, 0x8000;" : "=r"(lo) : "r"(__float_as_uint(a[j])));
        asm volatile("add.u32 %0, %1, 0x8000;" : "=r"(hi) : "r"(__float_as_uint(a[(j + 1) % 8])));
        asm volatile("prmt.b32 %0, %1, %2, 0x7632;" : "=r"(d) : "r"(lo), "r"(hi));
        acc ^= d;
      }
    }
  }
  const long long t1 = clock64();
  sink[blockIdx.x * blockDim.x + threadIdx.x] = acc;
  if (threadIdx.x % 32 == 0) cycles[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = t1 - t0;
}

template <int kMode>
void run(const char* name, int warps_per_block, uint32_t* sink, long long* cycles) {
  const int blocks = 132;
  for (int rep = 0; rep < 2; ++rep) {
    probe<kMode><<<blocks, warps_per_block * 32>>>(sink, cycles);
  }
  cudaDeviceSynchronize();
  const int n = blocks * warps_per_block;
  long long* host = new long long[n];
  cudaMemcpy(host, cycles, n * sizeof(long long), cudaMemcpyDeviceToHost);
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(host[i]);
  printf("%-22s warps/SMSP %d  cycles a round of 8: %7.1f\n", name, warps_per_block / 4,
         sum / n / kIters);
  delete[] host;
}

int main() {
  uint32_t* sink;
  long long* cycles;
  cudaMalloc(&sink, 132 * 1024 * sizeof(uint32_t));
  cudaMalloc(&cycles, 132 * 32 * sizeof(long long));
  for (int w : {4, 8}) {
    run<1>("ex2", w, sink, cycles);
    run<2>("f2fp", w, sink, cycles);
    run<3>("ex2+f2fp", w, sink, cycles);
    run<4>("iadd+prmt", w, sink, cycles);
    run<5>("ex2+iadd+prmt", w, sink, cycles);
  }
  const cudaError_t err = cudaGetLastError();
  printf("%s\n", cudaGetErrorString(err));
  return err == cudaSuccess ? 0 : 1;
}
