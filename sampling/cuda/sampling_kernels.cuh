// Host launchers of the anchor-sampling kernels (sampling_kernels.cu). Private to the module
// (included by cuda_sampling.cpp, CUDA builds only).
//
// Device data (all pointers device memory, all launches asynchronous on `stream`):
//   plan       n x k, row-major with row stride `stride`, float or double (plan_type), >= 0.
//   row_mass   n doubles, the row sums of the plan.
//   cdf        n doubles, inclusive prefix sums of row_mass.
//   uniforms   2m doubles in [0, 1): row uniforms first, then column uniforms (sampling.h).
//   pairs      2m Index: the drawn rows in [0, m), their columns in [m, 2m).
//   status     kSampleStatusSlots ints, each kSampleNoIndex (cudaMemset 0x7F) or the smallest
//              offending row (kSampleZeroTotal holds 0 when the plan has no mass).
// Every reduction and scan runs in a fixed order inside one block, so the pairs are a
// deterministic function of the inputs. Every launcher returns cudaGetLastError().
#pragma once

#include <cuda_runtime_api.h>

#include "core/types.h"

namespace gw::cuda {

enum SampleStatusSlot : int {
  kSampleZeroTotal = 0,  // the plan's total mass is not > 0 (zero or NaN)
  kSampleEmptyRow = 1,   // a drawn row has no mass (row masses inconsistent with the plan)
  kSampleStatusSlots = 2,
};
inline constexpr int kSampleNoIndex = 0x7F7F7F7F;  // the int that cudaMemset(..., 0x7F) writes

// row_mass[i] = sum_j plan[i * stride + j], in double, one block per row.
cudaError_t launch_row_sums(const void* plan,
                            Precision plan_type,
                            Index n,
                            Index k,
                            Offset stride,
                            double* row_mass,
                            cudaStream_t stream);

// cdf = inclusive prefix sums of row_mass (one block, tile by tile). Non-decreasing for
// non-negative input (each tile starts from the previous tile's last value).
cudaError_t launch_cumulative_sums(const double* row_mass,
                                   Index n,
                                   double* cdf,
                                   cudaStream_t stream);

// Rows: first i with cdf[i] > u_s * cdf[n-1] (clamped to n - 1, then moved down past rows of zero
// mass); columns: per drawn row, the first j with T_ij > 0 whose running sum exceeds
// u_{m+s} * (row sum), else the last j with T_ij > 0. The same rules as sample_anchor_pairs.
cudaError_t launch_draw_pairs(const void* plan,
                              Precision plan_type,
                              Index n,
                              Index k,
                              Offset stride,
                              const double* cdf,
                              const double* uniforms,
                              int m,
                              Index* pairs,
                              int* status,
                              cudaStream_t stream);

}  // namespace gw::cuda
