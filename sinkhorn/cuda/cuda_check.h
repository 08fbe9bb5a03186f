// GW_CUDA_CHECK(call): throws gw::Error(kInternal) with the call, CUDA's message and file/line
// when a CUDA runtime call does not return cudaSuccess. Private to the module (CUDA builds only).
#pragma once

#include <cuda_runtime_api.h>

#include "core/error.h"

#ifndef GW_CUDA_CHECK
#define GW_CUDA_CHECK(call)                                                                   \
  do {                                                                                        \
    const cudaError_t gw_cuda_status_ = (call);                                               \
    if (gw_cuda_status_ != cudaSuccess) {                                                     \
      GW_THROW(::gw::ErrorCode::kInternal,                                                    \
               "CUDA call " #call " failed: " << cudaGetErrorName(gw_cuda_status_) << " ("    \
                                              << cudaGetErrorString(gw_cuda_status_) << ")"); \
    }                                                                                         \
  } while (0)
#endif

// After a kernel launch: reports launch-configuration errors at the launch site.
#define GW_CUDA_CHECK_LAUNCH() GW_CUDA_CHECK(cudaGetLastError())
