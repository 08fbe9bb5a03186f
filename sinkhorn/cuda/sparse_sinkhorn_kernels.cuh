// Host launchers of the sparse-support CUDA kernels (sparse_sinkhorn_kernels.cu). Private to the
// module: included by cuda/cuda_sparse_sinkhorn.cpp only, in CUDA builds.
//
// Device data conventions (all pointers are device memory, all launches asynchronous on `stream`):
//   offsets, cols   the CSR support: row i's entries are [offsets[i], offsets[i + 1]), cols[e] in
//                   [0, k). Per-entry arrays (cost, plan, feature) are in this order.
//   col_offsets,    the transpose (sparse_sinkhorn.h: SupportTranspose): column j's entries are
//   col_rows        positions [col_offsets[j], col_offsets[j + 1]) of the column-ordered arrays,
//                   col_rows[p] their rows; entries[p] the CSR position of position p.
//   f, g            potentials in cost units, double; a value <= zero_mass / 2 (the host's
//                   kZeroMassPotential) marks a zero-mass row / column, as on the CPU.
//   u, v            scaled potentials f / epsilon, g / epsilon in double, -inf for zero mass.
//   status          kStatusSlots ints of sinkhorn_kernels.cuh (the smallest offending index or
//                   kNoIndex); reset by cudaMemsetAsync(status, 0x7F, ...).
// Rows and columns are processed one warp each, with a grid-stride loop over a one-dimensional
// grid of at most kMaxBlocks blocks, so no grid dimension depends on n, k or nnz.
// Every launcher returns cudaGetLastError(); wrap calls in GW_CUDA_CHECK.
#pragma once

#include <cuda_runtime_api.h>

#include "core/types.h"

namespace gw::cuda {

struct SparseSinkhornParams {
  Index n = 0;
  Index k = 0;
  double epsilon = 1.0;
  double inv_eps = 1.0;
  double tau_a = 1.0;
  double tau_b = 1.0;
  double rho_a = 0.0;  // +inf for a hard row constraint
};

// u[i] = f[i] <= zero_mass / 2 ? -inf : f[i] / epsilon (detail::to_scaled).
cudaError_t launch_support_to_scaled(
    const double* f, Index count, double epsilon, double zero_mass, double* u, cudaStream_t stream);

// f[i] = u[i] == -inf ? zero_mass : u[i] * epsilon (detail::from_scaled).
cudaError_t launch_support_from_scaled(
    const double* u, Index count, double epsilon, double zero_mass, double* f, cudaStream_t stream);

// out[p] = in[entries[p]] for p < nnz (the cost in column order).
cudaError_t launch_gather_entries(
    const float* in, const Offset* entries, Offset nnz, float* out, cudaStream_t stream);

// out[out_offsets[t] + p] = plan[offsets[rows[t]] + p] for each of the row's entries p, t < count
// (one warp per t): the plan values of a list of rows, concatenated.
cudaError_t launch_gather_rows(const Offset* offsets,
                               const double* plan,
                               const Index* rows,
                               const Offset* out_offsets,
                               Index count,
                               double* out,
                               cudaStream_t stream);

// Row pass, one warp per row: row_lse = LSE over the row's entries e with v[cols[e]] > -inf of
// v[cols[e]] - cost[e] / eps (online maximum, double); rows with a[i] == 0 and u[i] == -inf are
// skipped (lse -inf). Writes
//   u_new[i]     tau_a (log a_i - lse), or -inf when a_i == 0 (u[i] itself for a bad row),
//   residual[i]  (when non-null) the row's term of the marginal error of the plan (u, v):
//                |exp(u_i + lse) - a_i exp(-u_i eps / rho_a)|, or the row mass when a_i == 0,
//   status       kBadRow for a NaN / +inf exponent, kEmptyRow for a_i > 0 with lse = -inf.
cudaError_t launch_support_row_pass(const Offset* offsets,
                                    const Index* cols,
                                    const float* cost,
                                    const SparseSinkhornParams& params,
                                    const double* a,
                                    const double* u,
                                    const double* v,
                                    double* u_new,
                                    double* residual,
                                    int* status,
                                    cudaStream_t stream);

// Column pass, one warp per column, through the transpose: lse over column j's positions p with
// u[col_rows[p]] > -inf of u[col_rows[p]] - cost_by_column[p] / eps; v[j] = tau_b (log b_j - lse),
// -inf when b_j == 0; kBadColumn / kEmptyColumn as for rows (v[j] is then left unchanged).
cudaError_t launch_support_column_pass(const Offset* col_offsets,
                                       const Index* col_rows,
                                       const float* cost_by_column,
                                       const SparseSinkhornParams& params,
                                       const double* b,
                                       const double* u,
                                       double* v,
                                       int* status,
                                       cudaStream_t stream);

// Momentum step, one warp per row (detail::SupportBlendFn on every row):
//   fresh = u_i == -inf or v_j == -inf ? 0 : exp(u_i + v_j - cost_e inv_eps)
//   plan_e <- keep plan_e + take fresh
// with stats[3 i + 0, 1, 2] = the row's sum (delta plan)^2, sum cost plan, sum plan (double,
// the layout of PlanBlendStats).
cudaError_t launch_support_momentum(const Offset* offsets,
                                    const Index* cols,
                                    const float* cost,
                                    const double* u,
                                    const double* v,
                                    Index n,
                                    double inv_eps,
                                    double keep,
                                    double take,
                                    double* plan,
                                    double* stats,
                                    cudaStream_t stream);

// norm[r] = (sum_t dist[r, t]^2) / m in float, summed in t order (dist is count x m row-major).
cudaError_t launch_support_row_norms(
    const float* dist, Index count, int m, float* norm, cudaStream_t stream);

// The GW cost on the support, one warp per row:
//   cost_e = xn_i + yn_j + scale sum_t dx[i, t] dy[j, t]   (float, scale = -2 / m)
// then, when feature is non-null, cost_e = float((1 - fused) cost_e + fused feature_e) in double.
cudaError_t launch_support_cost(const Offset* offsets,
                                const Index* cols,
                                Index n,
                                const float* dx,
                                const float* dy,
                                const float* xn,
                                const float* yn,
                                int m,
                                const double* feature,
                                double fused,
                                float* cost,
                                cudaStream_t stream);

}  // namespace gw::cuda
