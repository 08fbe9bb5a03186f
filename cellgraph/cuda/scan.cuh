// Prefix sums over int64 arrays on the device (cub::DeviceScan), shared by the cellgraph CUDA
// kernels. With temp == nullptr only temp_bytes is set (no launch). Private to the module.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "core/types.h"

namespace gw::cuda {

// out[i] = in[0] + ... + in[i - 1] (out[0] = 0), i < count.
cudaError_t exclusive_sum(void* temp,
                          std::size_t& temp_bytes,
                          const Offset* in,
                          Offset* out,
                          Offset count,
                          cudaStream_t stream);
// out[i] = in[0] + ... + in[i], i < count.
cudaError_t inclusive_sum(void* temp,
                          std::size_t& temp_bytes,
                          const Offset* in,
                          Offset* out,
                          Offset count,
                          cudaStream_t stream);

}  // namespace gw::cuda
