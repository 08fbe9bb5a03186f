// Host launchers of the GW-loop kernels (gw_loop_kernels.cu). Private to the module: included by
// gw_loop_cuda.cpp only, in CUDA builds.
//
// Device data conventions (all pointers device memory, all launches asynchronous on `stream`).
// `real` names the element type (float or double) of every Real buffer of one call:
//   lambda      the augmented cost, (n + slack) x (k + slack), row stride `stride` >= k; the real
//               block is its first n rows and k columns.
//   plan        T, n x k contiguous (row stride k).
//   fresh       the Sinkhorn plan T_new, same layout as lambda (row stride `stride`).
//   dist        D_X (n x m) or D_Y (k x m), float32, row-major (the providers' output).
//   factors     count x (m + 2) Real, row-major: the augmented GEMM factors.
// Per-row outputs are double and written by one block per row in a fixed order (deterministic).
// Every launcher returns cudaGetLastError().
#pragma once

#include <cuda_runtime_api.h>

#include "core/types.h"

namespace gw::cuda {

// Augmented GEMM factors of Lambda = a 1^T + 1 b^T - (2/m) D_X D_Y^T (see gw_loop_cpu.cpp):
//   left  (source side):  [ D_X[i, :] | |D_X[i, :]|^2 / m | 1 ]
//   right (target side):  [ scale * D_Y[j, :] | 1 | |D_Y[j, :]|^2 / m ],  scale = -2 / m
// The squared norms are accumulated in Real in column order, as on the CPU.
cudaError_t launch_augmented_factors(const float* dist,
                                     Index count,
                                     int m,
                                     bool left,
                                     Precision real,
                                     void* factors,
                                     cudaStream_t stream);

// Optional per-iteration blends of the real block of lambda, in the CPU loop's arithmetic:
//   EMA (ema != null):       v = first ? v : Real(beta * ema_ij + (1 - beta) * v);  ema_ij = v
//   fused (feature != null): v = Real((1 - alpha_f) * v + alpha_f * feature_ij)
// ema and feature are n x k contiguous Real.
cudaError_t launch_cost_blends(void* lambda,
                               Precision real,
                               Index n,
                               Index k,
                               Offset stride,
                               void* ema,
                               bool first,
                               double beta,
                               const void* feature,
                               double alpha_f,
                               cudaStream_t stream);

// Slack entries of the augmented cost: lambda[i, k] = lambda[n, j] = edge (i < n, j < k),
// lambda[n, k] = corner.
cudaError_t launch_fill_slack(void* lambda,
                              Precision real,
                              Index n,
                              Index k,
                              Offset stride,
                              double edge,
                              double corner,
                              cudaStream_t stream);

// T_0 = p q^T: plan_ij = Real(p_i q_j), row_mass_i = sum_j double(plan_ij).
cudaError_t launch_outer_product(const double* p,
                                 const double* q,
                                 Index n,
                                 Index k,
                                 Precision real,
                                 void* plan,
                                 double* row_mass,
                                 cudaStream_t stream);

// Momentum step, one block per row: T_ij <- keep * T_ij + take * fresh_ij (Real arithmetic, no
// fused multiply-add, as on the CPU), keep = Real(1 - alpha), take = Real(alpha), and per row
//   row_change_i = sum_j (T_new_ij - T_old_ij)^2, row_cost_i = sum_j lambda_ij T_new_ij,
//   row_mass_i = sum_j T_new_ij (double accumulation).
cudaError_t launch_momentum_blend(void* plan,
                                  const void* fresh,
                                  const void* lambda,
                                  Precision real,
                                  Index n,
                                  Index k,
                                  Offset stride,
                                  double alpha,
                                  double* row_change,
                                  double* row_cost,
                                  double* row_mass,
                                  cudaStream_t stream);

// out[0] = sum_i first_i, out[1] = sum_i second_i (one block, fixed order); the iteration's
// totals from the blend's per-row change and cost.
cudaError_t launch_pair_sums(
    const double* first, const double* second, Index n, double* out, cudaStream_t stream);

// Distance-profile start (see profile_init.cpp), on a float32 n x k contiguous cost:
// cost_ij <- max(0, cost_ij) and row_sum_i = sum_j cost_ij (double), one block per row.
cudaError_t launch_clamp_rows(float* cost, Index n, Index k, double* row_sum, cudaStream_t stream);

// row_mass_i = sum_j double(plan_ij) for a Real n x k contiguous plan, one block per row.
cudaError_t launch_plan_row_sums(
    const void* plan, Precision real, Index n, Index k, double* row_mass, cudaStream_t stream);

// plan_ij <- Real(double(plan_ij) / divisor), row_mass_i = sum_j double(plan_ij) afterwards.
cudaError_t launch_divide_plan(void* plan,
                               Precision real,
                               Index n,
                               Index k,
                               double divisor,
                               double* row_mass,
                               cudaStream_t stream);

}  // namespace gw::cuda
