// Host launchers of the Sinkhorn CUDA kernels (sinkhorn_kernels.cu). Private to the module:
// included by cuda/cuda_sinkhorn.cpp only, in CUDA builds.
//
// Device data conventions (all pointers are device memory, all launches asynchronous on `stream`):
//   cost        n x k, row-major with row stride cost_stride, float or double (cost_type).
//   f, g        potentials in cost units, double; -inf marks a zero-mass row / column.
//   ft, gt      scaled potentials f / eps, g / eps rounded to the compute type (float or double).
//   fcorr       per row exp(f/eps - ft) rounded to the compute type: carries the rounding of ft
//               into every sum so that row scales are exact (see sinkhorn_cpu.cpp).
//   status      kStatusSlots ints, each the smallest offending index found or kNoIndex; reset by
//               cudaMemsetAsync(status, 0x7F, ...).
// Every launcher returns the launch status (cudaGetLastError()); wrap calls in GW_CUDA_CHECK.
#pragma once

#include <cuda_runtime_api.h>

#include "core/types.h"

namespace gw::cuda {

struct SinkhornParams {
  Index n = 0;
  Index k = 0;
  Offset cost_stride = 0;
  double epsilon = 1.0;
  double inv_eps = 1.0;
  double tau_a = 1.0;
  double tau_b = 1.0;
  double rho_a = 0.0;  // +inf for a hard row constraint
};

// Slots of the status array.
enum StatusSlot : int {
  kBadRow = 0,       // a row met a NaN or -inf cost entry
  kEmptyRow = 1,     // a row with positive mass has no finite term
  kBadColumn = 2,    // a column met a NaN or -inf cost entry
  kEmptyColumn = 3,  // a column with positive mass has no finite term
  kStatusSlots = 4,
};
inline constexpr int kNoIndex = 0x7F7F7F7F;  // the int that cudaMemset(..., 0x7F, ...) writes

// Row tiles of the column kernels: the partial buffers hold column_row_tiles(n) * k doubles each.
int column_row_tiles(Index n);

// scaled[i] = (compute) (pot[i] * inv_eps); correction[i] (when non-null) = exp(pot[i] * inv_eps -
// scaled[i]) in the compute type (1 for -inf entries).
cudaError_t launch_scale_potentials(const double* pot,
                                    Index count,
                                    double inv_eps,
                                    Precision compute,
                                    void* scaled,
                                    void* correction,
                                    cudaStream_t stream);

// Row update, one warp per row, online-max log-sum-exp of gt_j - C_ij / eps:
//   f_new = eps * tau_a (log a_i - LSE), ft_new / fcorr_new its compute-type copy and correction,
//   row_residual[i] (when non-null) = this row's term of the marginal error of the plan (f, g).
cudaError_t launch_row_update(const void* cost,
                              Precision cost_type,
                              Precision compute,
                              const SinkhornParams& params,
                              const double* a,
                              const double* f,
                              const void* gt,
                              double* f_new,
                              void* ft_new,
                              void* fcorr_new,
                              double* row_residual,
                              int* status,
                              cudaStream_t stream);

// Column update: per (32-column x 256-row) tile an online-max log-sum-exp of ft_i - C_ij / eps
// (times fcorr_i) into partial_max / partial_sum [tile][j], then one thread per column combines
// the tiles and writes g = eps * tau_b (log b_j - LSE) and gt. No atomics on the sums.
cudaError_t launch_column_update(const void* cost,
                                 Precision cost_type,
                                 Precision compute,
                                 const SinkhornParams& params,
                                 const double* b,
                                 const void* ft,
                                 const void* fcorr,
                                 double* partial_max,
                                 double* partial_sum,
                                 double* g,
                                 void* gt,
                                 int* status,
                                 cudaStream_t stream);

// *out = sum of values[0..count) (one block, fixed order: deterministic).
cudaError_t launch_sum(const double* values, Index count, double* out, cudaStream_t stream);

// out_ij = exp(ft_i + gt_j - C_ij / eps) * fcorr_i in the compute type, stored as out_type with
// row stride out_stride; exactly 0 where ft_i or gt_j is -inf.
cudaError_t launch_plan(const void* cost,
                        Precision cost_type,
                        Precision compute,
                        Index n,
                        Index k,
                        Offset cost_stride,
                        double inv_eps,
                        const void* ft,
                        const void* fcorr,
                        const void* gt,
                        void* out,
                        Precision out_type,
                        Offset out_stride,
                        cudaStream_t stream);

// Benchmark floor: reads every cost entry once with a plain streaming kernel (16-byte loads when
// the rows are contiguous and aligned) and adds a per-block sum into *sink.
cudaError_t launch_read_cost(const void* cost,
                             Precision cost_type,
                             Index n,
                             Index k,
                             Offset cost_stride,
                             double* sink,
                             cudaStream_t stream);

}  // namespace gw::cuda
