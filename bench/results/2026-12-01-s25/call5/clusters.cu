#include <cstdio>
#include <cuda_runtime.h>
__global__ void __launch_bounds__(384, 1) probe_kernel(int* out) {
  extern __shared__ int smem[];
  if (threadIdx.x == 0 && out) out[blockIdx.x] = smem[0];
}
int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int smem_kb : {75, 200, 227}) {
    const int smem = smem_kb * 1024;
    cudaFuncSetAttribute(probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (int ctas : {1, 2, 4}) {
      cudaLaunchConfig_t config{};
      config.gridDim = dim3(ctas);
      config.blockDim = dim3(384);
      config.dynamicSmemBytes = smem;
      cudaLaunchAttribute attr{};
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim.x = ctas;
      attr.val.clusterDim.y = 1;
      attr.val.clusterDim.z = 1;
      config.attrs = &attr;
      config.numAttrs = 1;
      int clusters = 0;
      const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, probe_kernel, &config);
      std::printf("SMs %d, %d KiB smem, clusters of %d: %d resident (%d CTAs) %s\n", sms, smem_kb,
                  ctas, clusters, clusters * ctas, cudaGetErrorString(e));
    }
  }
}
