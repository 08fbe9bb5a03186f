// Sparse-support CUDA kernels and their host launchers (declared in sparse_sinkhorn_kernels.cuh).
//
// A support row (or column, through the transpose) holds a few dozen entries whose partners are
// scattered, so every pass gives one warp to one row: the lanes stride over its entries, keep an
// online-max log-sum-exp (or plain sums) in double, and combine them with a butterfly of shuffles,
// after which every lane holds the same value bit for bit. No atomics touch any sum (only the
// status slots use atomicMin), so a run is reproducible on a given device. Exponents are formed
// as on the CPU (v - c * inv_eps in double, with __dmul_rn / __dadd_rn so that nvcc does not
// contract them into a fused multiply-add); the remaining differences from sparse_sinkhorn.cpp are
// the summation order and CUDA's exp / log against fast_exp (both within a few ulp).
//
// Device code is compiled as C++17 (see cmake/GwalignOptions.cmake), so this file cannot include
// core/error.h (C++20): launchers return the launch status and the caller checks it.
#include <cmath>
#include <limits>

#include "sinkhorn/cuda/sinkhorn_kernels.cuh"
#include "sinkhorn/cuda/sparse_sinkhorn_kernels.cuh"

namespace gw::cuda {
namespace {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpsPerBlock = 8;
constexpr int kBlockThreads = kWarpsPerBlock * kWarp;
// Grid-stride loops cover any row count with at most this many blocks (far more than an H100
// keeps resident, so the cap never idles the device).
constexpr Offset kMaxBlocks = 16384;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

unsigned blocks_for(Offset count, int per_block) {
  const Offset blocks = (count + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks < kMaxBlocks ? blocks : kMaxBlocks));
}

__device__ __forceinline__ Index first_warp() {
  return static_cast<Index>(blockIdx.x) * kWarpsPerBlock + static_cast<Index>(threadIdx.x / kWarp);
}
__device__ __forceinline__ Index warp_stride() {
  return static_cast<Index>(gridDim.x) * kWarpsPerBlock;
}

// y = partner - c inv_eps, rounded as the CPU rounds it (no contraction).
__device__ __forceinline__ double exponent(double partner, float c, double inv_eps) {
  return __dadd_rn(partner, -__dmul_rn(static_cast<double>(c), inv_eps));
}

// Running log-sum-exp of one lane (and, after warp_merge, of the whole warp).
struct Lse {
  double max = -kInfinity;
  double sum = 0.0;

  __device__ void add(double y) {
    if (y > max) {
      sum = sum * exp(max - y) + 1.0;  // exp(-inf) = 0 at the start
      max = y;
    } else {
      sum += exp(y - max);
    }
  }
  __device__ void merge(double other_max, double other_sum) {
    const double m = max > other_max ? max : other_max;
    if (m == -kInfinity) return;
    const double mine = max == -kInfinity ? 0.0 : sum * exp(max - m);
    const double theirs = other_max == -kInfinity ? 0.0 : other_sum * exp(other_max - m);
    sum = mine + theirs;
    max = m;
  }
  __device__ double value() const { return max == -kInfinity ? -kInfinity : max + log(sum); }
};

// Adds y unless it is -inf (a forbidden +inf cost); returns 1 for NaN or +inf (a NaN / -inf cost).
__device__ __forceinline__ int add_term(Lse& lse, double y) {
  if (y == -kInfinity) return 0;
  if (!(y < kInfinity)) return 1;
  lse.add(y);
  return 0;
}

__device__ __forceinline__ void warp_merge(Lse& lse, int& bad) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    const double other_max = __shfl_xor_sync(kFullMask, lse.max, offset);
    const double other_sum = __shfl_xor_sync(kFullMask, lse.sum, offset);
    bad |= __shfl_xor_sync(kFullMask, bad, offset);
    lse.merge(other_max, other_sum);
  }
}

__device__ __forceinline__ double warp_sum(double x) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) x += __shfl_xor_sync(kFullMask, x, offset);
  return x;
}

// detail::row_residual (sinkhorn_common_impl.h).
__device__ double row_residual(double row_mass,
                               double mass,
                               double u,
                               const SparseSinkhornParams& p) {
  if (mass == 0.0) return row_mass;
  const double target = isinf(p.rho_a) ? mass : mass * exp(-u * p.epsilon / p.rho_a);
  return fabs(row_mass - target);
}

__global__ void to_scaled_kernel(const double* __restrict__ f,
                                 Index count,
                                 double epsilon,
                                 double zero_mass,
                                 double* __restrict__ u) {
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    u[i] = f[i] <= 0.5 * zero_mass ? -kInfinity : f[i] / epsilon;
  }
}

__global__ void from_scaled_kernel(const double* __restrict__ u,
                                   Index count,
                                   double epsilon,
                                   double zero_mass,
                                   double* __restrict__ f) {
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += static_cast<Index>(gridDim.x) * blockDim.x) {
    f[i] = u[i] == -kInfinity ? zero_mass : u[i] * epsilon;
  }
}

__global__ void gather_kernel(const float* __restrict__ in,
                              const Offset* __restrict__ entries,
                              Offset nnz,
                              float* __restrict__ out) {
  for (Offset p = static_cast<Offset>(blockIdx.x) * blockDim.x + threadIdx.x; p < nnz;
       p += static_cast<Offset>(gridDim.x) * blockDim.x) {
    out[p] = in[entries[p]];
  }
}

__global__ void __launch_bounds__(kBlockThreads)
    gather_rows_kernel(const Offset* __restrict__ offsets,
                       const double* __restrict__ plan,
                       const Index* __restrict__ rows,
                       const Offset* __restrict__ out_offsets,
                       Index count,
                       double* __restrict__ out) {
  const int lane = threadIdx.x % kWarp;
  for (Index t = first_warp(); t < count; t += warp_stride()) {
    const Index i = rows[t];
    const Offset begin = offsets[i], len = offsets[i + 1] - begin;
    double* __restrict__ to = out + out_offsets[t];
    for (Offset p = lane; p < len; p += kWarp) to[p] = plan[begin + p];
  }
}

__global__ void __launch_bounds__(kBlockThreads) row_pass_kernel(const Offset* __restrict__ offsets,
                                                                 const Index* __restrict__ cols,
                                                                 const float* __restrict__ cost,
                                                                 SparseSinkhornParams p,
                                                                 const double* __restrict__ a,
                                                                 const double* __restrict__ u,
                                                                 const double* __restrict__ v,
                                                                 double* __restrict__ u_new,
                                                                 double* __restrict__ residual,
                                                                 int* __restrict__ status) {
  const int lane = threadIdx.x % kWarp;
  for (Index i = first_warp(); i < p.n; i += warp_stride()) {  // uniform per warp
    const double mass = a[i];
    const double ui = u[i];
    if (mass == 0.0 && ui == -kInfinity) {  // an empty row stays empty, its entries are not read
      if (lane == 0) {
        u_new[i] = -kInfinity;
        if (residual != nullptr) residual[i] = 0.0;
      }
      continue;
    }
    Lse lse;
    int bad = 0;
    for (Offset e = offsets[i] + lane; e < offsets[i + 1]; e += kWarp) {
      const double vj = v[cols[e]];
      if (vj != -kInfinity) bad |= add_term(lse, exponent(vj, cost[e], p.inv_eps));
    }
    warp_merge(lse, bad);
    if (lane != 0) continue;
    if (bad != 0) {
      atomicMin(&status[kBadRow], static_cast<int>(i));
      u_new[i] = ui;
      if (residual != nullptr) residual[i] = 0.0;  // the host throws on the status
      continue;
    }
    const double row_lse = lse.value();
    if (residual != nullptr) {
      const double row_mass = ui == -kInfinity ? 0.0 : exp(ui + row_lse);
      residual[i] = row_residual(row_mass, mass, ui, p);
    }
    if (mass == 0.0) {
      u_new[i] = -kInfinity;
    } else if (row_lse == -kInfinity) {
      atomicMin(&status[kEmptyRow], static_cast<int>(i));
      u_new[i] = ui;
    } else {
      u_new[i] = p.tau_a * (log(mass) - row_lse);
    }
  }
}

__global__ void __launch_bounds__(kBlockThreads)
    column_pass_kernel(const Offset* __restrict__ col_offsets,
                       const Index* __restrict__ col_rows,
                       const float* __restrict__ cost_by_column,
                       SparseSinkhornParams p,
                       const double* __restrict__ b,
                       const double* __restrict__ u,
                       double* __restrict__ v,
                       int* __restrict__ status) {
  const int lane = threadIdx.x % kWarp;
  for (Index j = first_warp(); j < p.k; j += warp_stride()) {
    const double mass = b[j];
    if (mass == 0.0) {
      if (lane == 0) v[j] = -kInfinity;
      continue;
    }
    Lse lse;
    int bad = 0;
    for (Offset q = col_offsets[j] + lane; q < col_offsets[j + 1]; q += kWarp) {
      const double ui = u[col_rows[q]];
      if (ui != -kInfinity) bad |= add_term(lse, exponent(ui, cost_by_column[q], p.inv_eps));
    }
    warp_merge(lse, bad);
    if (lane != 0) continue;
    const double column_lse = lse.value();
    if (bad != 0) {
      atomicMin(&status[kBadColumn], static_cast<int>(j));
    } else if (column_lse == -kInfinity) {
      atomicMin(&status[kEmptyColumn], static_cast<int>(j));
    } else {
      v[j] = p.tau_b * (log(mass) - column_lse);
    }
  }
}

__global__ void __launch_bounds__(kBlockThreads) momentum_kernel(const Offset* __restrict__ offsets,
                                                                 const Index* __restrict__ cols,
                                                                 const float* __restrict__ cost,
                                                                 const double* __restrict__ u,
                                                                 const double* __restrict__ v,
                                                                 Index n,
                                                                 double inv_eps,
                                                                 double keep,
                                                                 double take,
                                                                 double* __restrict__ plan,
                                                                 double* __restrict__ stats) {
  const int lane = threadIdx.x % kWarp;
  for (Index i = first_warp(); i < n; i += warp_stride()) {
    const double ui = u[i];
    double change = 0.0, weighted = 0.0, mass = 0.0;
    for (Offset e = offsets[i] + lane; e < offsets[i + 1]; e += kWarp) {
      const double vj = v[cols[e]];
      const double c = static_cast<double>(cost[e]);
      const double fresh = (ui == -kInfinity || vj == -kInfinity)
                               ? 0.0
                               : exp(__dadd_rn(__dadd_rn(ui, vj), -__dmul_rn(c, inv_eps)));
      const double old = plan[e];
      const double blended = __dadd_rn(__dmul_rn(keep, old), __dmul_rn(take, fresh));
      const double delta = blended - old;
      change += delta * delta;
      weighted += c * blended;
      mass += blended;
      plan[e] = blended;
    }
    change = warp_sum(change);
    weighted = warp_sum(weighted);
    mass = warp_sum(mass);
    if (lane == 0) {
      double* out = stats + 3 * static_cast<Offset>(i);
      out[0] = change;
      out[1] = weighted;
      out[2] = mass;
    }
  }
}

__global__ void row_norms_kernel(const float* __restrict__ dist,
                                 Index count,
                                 int m,
                                 float* __restrict__ norm) {
  for (Index r = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; r < count;
       r += static_cast<Index>(gridDim.x) * blockDim.x) {
    const float* x = dist + static_cast<Offset>(r) * m;
    float sum = 0.0f;
    for (int t = 0; t < m; ++t) sum = __fadd_rn(sum, __fmul_rn(x[t], x[t]));
    norm[r] = sum / static_cast<float>(m);
  }
}

__global__ void __launch_bounds__(kBlockThreads) cost_kernel(const Offset* __restrict__ offsets,
                                                             const Index* __restrict__ cols,
                                                             Index n,
                                                             const float* __restrict__ dx,
                                                             const float* __restrict__ dy,
                                                             const float* __restrict__ xn,
                                                             const float* __restrict__ yn,
                                                             int m,
                                                             const double* __restrict__ feature,
                                                             double fused,
                                                             float* __restrict__ cost) {
  const int lane = threadIdx.x % kWarp;
  const float scale = -2.0f / static_cast<float>(m);
  for (Index i = first_warp(); i < n; i += warp_stride()) {
    const float* __restrict__ x = dx + static_cast<Offset>(i) * m;
    const float x_norm = xn[i];
    for (Offset e = offsets[i] + lane; e < offsets[i + 1]; e += kWarp) {
      const Index j = cols[e];
      const float* __restrict__ y = dy + static_cast<Offset>(j) * m;
      float dot = 0.0f;
      for (int t = 0; t < m; ++t) dot = fmaf(x[t], y[t], dot);
      float value = __fadd_rn(__fadd_rn(x_norm, yn[j]), __fmul_rn(scale, dot));
      if (feature != nullptr) {
        value = static_cast<float>((1.0 - fused) * static_cast<double>(value) + fused * feature[e]);
      }
      cost[e] = value;
    }
  }
}

}  // namespace

cudaError_t launch_support_to_scaled(const double* f,
                                     Index count,
                                     double epsilon,
                                     double zero_mass,
                                     double* u,
                                     cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  to_scaled_kernel<<<blocks_for(count, kBlockThreads), kBlockThreads, 0, stream>>>(
      f, count, epsilon, zero_mass, u);
  return cudaGetLastError();
}

cudaError_t launch_support_from_scaled(const double* u,
                                       Index count,
                                       double epsilon,
                                       double zero_mass,
                                       double* f,
                                       cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  from_scaled_kernel<<<blocks_for(count, kBlockThreads), kBlockThreads, 0, stream>>>(
      u, count, epsilon, zero_mass, f);
  return cudaGetLastError();
}

cudaError_t launch_gather_entries(
    const float* in, const Offset* entries, Offset nnz, float* out, cudaStream_t stream) {
  if (nnz == 0) return cudaSuccess;
  gather_kernel<<<blocks_for(nnz, kBlockThreads), kBlockThreads, 0, stream>>>(
      in, entries, nnz, out);
  return cudaGetLastError();
}

cudaError_t launch_gather_rows(const Offset* offsets,
                               const double* plan,
                               const Index* rows,
                               const Offset* out_offsets,
                               Index count,
                               double* out,
                               cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  gather_rows_kernel<<<blocks_for(count, kWarpsPerBlock), kBlockThreads, 0, stream>>>(
      offsets, plan, rows, out_offsets, count, out);
  return cudaGetLastError();
}

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
                                    cudaStream_t stream) {
  if (params.n == 0) return cudaSuccess;
  row_pass_kernel<<<blocks_for(params.n, kWarpsPerBlock), kBlockThreads, 0, stream>>>(
      offsets, cols, cost, params, a, u, v, u_new, residual, status);
  return cudaGetLastError();
}

cudaError_t launch_support_column_pass(const Offset* col_offsets,
                                       const Index* col_rows,
                                       const float* cost_by_column,
                                       const SparseSinkhornParams& params,
                                       const double* b,
                                       const double* u,
                                       double* v,
                                       int* status,
                                       cudaStream_t stream) {
  if (params.k == 0) return cudaSuccess;
  column_pass_kernel<<<blocks_for(params.k, kWarpsPerBlock), kBlockThreads, 0, stream>>>(
      col_offsets, col_rows, cost_by_column, params, b, u, v, status);
  return cudaGetLastError();
}

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
                                    cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  momentum_kernel<<<blocks_for(n, kWarpsPerBlock), kBlockThreads, 0, stream>>>(
      offsets, cols, cost, u, v, n, inv_eps, keep, take, plan, stats);
  return cudaGetLastError();
}

cudaError_t launch_support_row_norms(
    const float* dist, Index count, int m, float* norm, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  row_norms_kernel<<<blocks_for(count, kBlockThreads), kBlockThreads, 0, stream>>>(
      dist, count, m, norm);
  return cudaGetLastError();
}

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
                                cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  cost_kernel<<<blocks_for(n, kWarpsPerBlock), kBlockThreads, 0, stream>>>(
      offsets, cols, n, dx, dy, xn, yn, m, feature, fused, cost);
  return cudaGetLastError();
}

}  // namespace gw::cuda
