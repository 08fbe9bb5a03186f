// GW_CUDA_CHECK(call): throws gw::Error(kInternal) naming the call and CUDA's error when a CUDA
// runtime call does not return cudaSuccess. Private to the module (CUDA builds only). The same
// macro as sinkhorn/cuda/cuda_check.h (guarded, so either definition serves); it belongs in core/
// once core offers a CUDA header.
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
