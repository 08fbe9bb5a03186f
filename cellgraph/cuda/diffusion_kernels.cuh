// Host launchers of the heat-diffusion CUDA kernels (diffusion_kernels.cu). Private to the
// module: included by cuda/cuda_diffusion.cpp only, in CUDA builds.
//
// Device data (all pointers device memory, launches asynchronous on `stream`):
//   row_offsets [nodes + 1], cols [nnz], values [nnz]: the operator L~ over the batch's compact
//       node ids (graph b's node i = node_offsets[b] + i), values in the signal's type
//   padded_row [nodes]: the row b * S + i of X / Y holding compact node node_offsets[b] + i
//   x, y [B * S * channels]; t0, t1 [nodes * channels]: the recurrence's two buffers
// Every launcher returns the launch status; wrap calls in GW_CUDA_CHECK.
#pragma once

#include <cuda_runtime_api.h>

#include "core/types.h"

namespace gw::cuda {

// t0[i, :] = x[padded_row[i], :];  y[padded_row[i], :] = w0 * t0[i, :].
cudaError_t launch_unpad(const float* x,
                         const Offset* padded_row,
                         Index nodes,
                         Index channels,
                         float w0,
                         float* t0,
                         float* y,
                         cudaStream_t stream);
cudaError_t launch_unpad(const double* x,
                         const Offset* padded_row,
                         Index nodes,
                         Index channels,
                         double w0,
                         double* t0,
                         double* y,
                         cudaStream_t stream);

// One step of the recurrence, one warp per row, lanes over channels, sums in CSR order:
//   first = true:   out[i] = (L~ cur)[i];                 y[padded_row[i]] += w * out[i]
//   first = false:  out[i] = 2 (L~ cur)[i] - out[i];     y[padded_row[i]] += w * out[i]
// (out holds T_{k-1} on entry and T_{k+1} on exit; cur and out must differ).
cudaError_t launch_chebyshev_step(const Offset* row_offsets,
                                  const Index* cols,
                                  const float* values,
                                  const Offset* padded_row,
                                  Index nodes,
                                  Index channels,
                                  const float* cur,
                                  float* out,
                                  bool first,
                                  float w,
                                  float* y,
                                  cudaStream_t stream);
cudaError_t launch_chebyshev_step(const Offset* row_offsets,
                                  const Index* cols,
                                  const double* values,
                                  const Offset* padded_row,
                                  Index nodes,
                                  Index channels,
                                  const double* cur,
                                  double* out,
                                  bool first,
                                  double w,
                                  double* y,
                                  cudaStream_t stream);

}  // namespace gw::cuda
