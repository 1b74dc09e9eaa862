// FLASHVISION_HOST_DEVICE marks plain functions that the kernels call and host-only tests check
// (__host__ __device__ under nvcc, nothing under a host compiler).
#pragma once

#if defined(__CUDACC__)
#define FLASHVISION_HOST_DEVICE __host__ __device__
#else
#define FLASHVISION_HOST_DEVICE
#endif
