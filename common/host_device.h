// tensorkit/common/host_device.h: marking functions that run on the host and on a CUDA device.
//
// Glossary
//   TK_HOST_DEVICE  __host__ __device__ under nvcc, nothing for a host compiler: the per-element
//                   functions (conversions, 16-bit floats, the elementwise functors) are written
//                   once and compiled for both the CPU and the CUDA executor.
#ifndef TENSORKIT_COMMON_HOST_DEVICE_H_
#define TENSORKIT_COMMON_HOST_DEVICE_H_

#if defined(__CUDACC__)
#define TK_HOST_DEVICE __host__ __device__
#else
#define TK_HOST_DEVICE
#endif

#endif  // TENSORKIT_COMMON_HOST_DEVICE_H_
