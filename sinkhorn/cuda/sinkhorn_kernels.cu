// Sinkhorn CUDA kernels and their host launchers (declared in sinkhorn_kernels.cuh).
//
// One iteration is two reads of C: the row kernel (a warp per row) and the column kernels (32 x 256
// tiles, partial log-sum-exps per tile, then a per-column combine). Both use an online maximum, so
// they are exact at any epsilon from a cold start, and accumulate sums in double. The convergence
// residual is written per row by the row kernel and summed on the device; the host reads one double
// at check iterations only.
//
// Device code is compiled as C++17 (see cmake/GwalignOptions.cmake), so this file cannot include
// core/error.h (C++20): launchers return the launch status and the caller checks it.
#include <cmath>
#include <cstdint>
#include <limits>

#include "sinkhorn/cuda/sinkhorn_kernels.cuh"

namespace gw::cuda {
namespace {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kRowWarpsPerBlock = 8;
constexpr int kColumnTileColumns = 32;  // threadIdx.x: consecutive columns, coalesced rows
constexpr int kColumnThreadsY = 8;
constexpr int kColumnTileRows = 256;
constexpr int kFinalizeThreads = 256;
constexpr int kSumThreads = 1024;
constexpr int kPlanThreads = 256;
constexpr int kMaxGridY = 65535;

template <typename T>
__host__ __device__ constexpr T infinity() {
  return std::numeric_limits<T>::infinity();
}

__device__ __forceinline__ float dev_exp(float x) { return expf(x); }
__device__ __forceinline__ double dev_exp(double x) { return exp(x); }
__device__ __forceinline__ float dev_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double dev_fma(double a, double b, double c) { return fma(a, b, c); }

// Running log-sum-exp: value = max + log(sum), sum accumulated in double. Terms are
// weight * exp(y); -inf terms are skipped by the callers.
template <typename T>
struct Lse {
  T max;
  double sum;

  __device__ void init() {
    max = -infinity<T>();
    sum = 0.0;
  }
  __device__ void add(T y, double weight) {
    if (y > max) {
      sum = sum * static_cast<double>(dev_exp(max - y)) + weight;  // exp(-inf) = 0 at the start
      max = y;
    } else {
      sum += weight * static_cast<double>(dev_exp(y - max));
    }
  }
  __device__ void merge(T other_max, double other_sum) {
    const T m = max > other_max ? max : other_max;
    if (m == -infinity<T>()) return;
    const double mine = max == -infinity<T>() ? 0.0 : sum * static_cast<double>(dev_exp(max - m));
    const double theirs =
        other_max == -infinity<T>() ? 0.0 : other_sum * static_cast<double>(dev_exp(other_max - m));
    sum = mine + theirs;
    max = m;
  }
  __device__ double value() const {
    return max == -infinity<T>() ? -infinity<double>() : static_cast<double>(max) + log(sum);
  }
};

// Adds C_ij's term y = v - C_ij / eps; returns 1 when y is NaN or +inf (a NaN or -inf cost).
template <typename T>
__device__ __forceinline__ int add_term(Lse<T>& lse, T c, T minus_inv_eps, T shift, double weight) {
  const T y = dev_fma(c, minus_inv_eps, shift);
  if (y == -infinity<T>()) return 0;  // +inf cost: a forbidden pair
  if (!(y < infinity<T>())) return 1;
  lse.add(y, weight);
  return 0;
}

// The marginal-error term of one row (see detail::row_residual in sinkhorn_common_impl.h).
__device__ double row_residual(double row_mass, double mass, double u, const SinkhornParams& p) {
  if (mass == 0.0) return row_mass;
  const double target = isinf(p.rho_a) ? mass : mass * exp(-u * p.epsilon / p.rho_a);
  return fabs(row_mass - target);
}

template <typename T>
__global__ void scale_potentials_kernel(const double* __restrict__ pot,
                                        Index count,
                                        double inv_eps,
                                        T* __restrict__ scaled,
                                        T* __restrict__ correction) {
  const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const double u = pot[i] * inv_eps;
  const T ut = static_cast<T>(u);
  scaled[i] = ut;
  if (correction != nullptr) {
    correction[i] =
        u == -infinity<double>() ? T(1) : static_cast<T>(exp(u - static_cast<double>(ut)));
  }
}

// Warp per row. Loads are issued four at a time before they are used, so each warp keeps several
// 128-byte requests in flight.
template <typename CostT, typename T>
__global__ void __launch_bounds__(kRowWarpsPerBlock* kWarp)
    row_update_kernel(const CostT* __restrict__ cost,
                      SinkhornParams p,
                      const double* __restrict__ a,
                      const double* __restrict__ f,
                      const T* __restrict__ gt,
                      double* __restrict__ f_new,
                      T* __restrict__ ft_new,
                      T* __restrict__ fcorr_new,
                      double* __restrict__ row_residual_out,
                      int* __restrict__ status) {
  const int lane = threadIdx.x % kWarp;
  const Index i = static_cast<Index>(blockIdx.x) * kRowWarpsPerBlock + threadIdx.x / kWarp;
  if (i >= p.n) return;  // uniform per warp
  const double mass = a[i];
  const double u = f[i] * p.inv_eps;
  if (mass == 0.0 && u == -infinity<double>()) {  // an empty row stays empty, C is not read
    if (lane == 0) {
      f_new[i] = -infinity<double>();
      ft_new[i] = -infinity<T>();
      fcorr_new[i] = T(1);
      if (row_residual_out != nullptr) row_residual_out[i] = 0.0;
    }
    return;
  }
  const CostT* __restrict__ crow = cost + static_cast<Offset>(i) * p.cost_stride;
  const T minus_inv_eps = static_cast<T>(-p.inv_eps);
  Lse<T> lse;
  lse.init();
  int bad = 0;
  Index j = lane;
  for (; j + 3 * kWarp < p.k; j += 4 * kWarp) {
    const CostT c0 = crow[j], c1 = crow[j + kWarp], c2 = crow[j + 2 * kWarp],
                c3 = crow[j + 3 * kWarp];
    const T v0 = gt[j], v1 = gt[j + kWarp], v2 = gt[j + 2 * kWarp], v3 = gt[j + 3 * kWarp];
    if (v0 != -infinity<T>()) bad |= add_term(lse, static_cast<T>(c0), minus_inv_eps, v0, 1.0);
    if (v1 != -infinity<T>()) bad |= add_term(lse, static_cast<T>(c1), minus_inv_eps, v1, 1.0);
    if (v2 != -infinity<T>()) bad |= add_term(lse, static_cast<T>(c2), minus_inv_eps, v2, 1.0);
    if (v3 != -infinity<T>()) bad |= add_term(lse, static_cast<T>(c3), minus_inv_eps, v3, 1.0);
  }
  for (; j < p.k; j += kWarp) {
    const T v = gt[j];
    if (v != -infinity<T>()) bad |= add_term(lse, static_cast<T>(crow[j]), minus_inv_eps, v, 1.0);
  }
  // Butterfly: every lane ends with the same (max, sum); max and + are commutative, so the lanes
  // agree bit for bit.
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    const T other_max = __shfl_xor_sync(kFullMask, lse.max, offset);
    const double other_sum = __shfl_xor_sync(kFullMask, lse.sum, offset);
    bad |= __shfl_xor_sync(kFullMask, bad, offset);
    lse.merge(other_max, other_sum);
  }
  if (lane != 0) return;

  if (bad != 0) {
    atomicMin(&status[kBadRow], static_cast<int>(i));
    if (row_residual_out != nullptr) row_residual_out[i] = 0.0;  // the host throws on the status
    f_new[i] = f[i];
    ft_new[i] = static_cast<T>(u);
    fcorr_new[i] = T(1);
    return;
  }
  const double row_lse = lse.value();  // LSE_j(gt_j - C_ij / eps)
  if (row_residual_out != nullptr) {
    const double row_mass = u == -infinity<double>() ? 0.0 : exp(u + row_lse);
    row_residual_out[i] = row_residual(row_mass, mass, u, p);
  }
  if (mass == 0.0) {
    f_new[i] = -infinity<double>();
    ft_new[i] = -infinity<T>();
    fcorr_new[i] = T(1);
    return;
  }
  if (row_lse == -infinity<double>()) {
    atomicMin(&status[kEmptyRow], static_cast<int>(i));
    f_new[i] = f[i];
    ft_new[i] = static_cast<T>(u);
    fcorr_new[i] = T(1);
    return;
  }
  const double u_new = p.tau_a * (log(mass) - row_lse);
  const T ut = static_cast<T>(u_new);
  f_new[i] = u_new * p.epsilon;
  ft_new[i] = ut;
  fcorr_new[i] = static_cast<T>(exp(u_new - static_cast<double>(ut)));
}

// Block (32, 8) covers 32 columns x kColumnTileRows rows of each row tile it visits; thread
// (x, y) takes rows y, y + 8, ... of the tile. Row tiles are visited with a grid stride over
// gridDim.y (at most kMaxGridY), so more than 65,535 tiles (n > 16.7 M rows) need no larger grid.
template <typename CostT, typename T>
__global__ void __launch_bounds__(kColumnTileColumns* kColumnThreadsY)
    column_partial_kernel(const CostT* __restrict__ cost,
                          SinkhornParams p,
                          const T* __restrict__ ft,
                          const T* __restrict__ fcorr,
                          double* __restrict__ partial_max,
                          double* __restrict__ partial_sum,
                          int* __restrict__ status) {
  __shared__ T shared_max[kColumnThreadsY][kColumnTileColumns];
  __shared__ double shared_sum[kColumnThreadsY][kColumnTileColumns];
  __shared__ int shared_bad[kColumnThreadsY][kColumnTileColumns];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const Index j = static_cast<Index>(blockIdx.x) * kColumnTileColumns + tx;
  const T minus_inv_eps = static_cast<T>(-p.inv_eps);
  const Index tiles = (p.n + kColumnTileRows - 1) / kColumnTileRows;
  for (Index tile = blockIdx.y; tile < tiles; tile += gridDim.y) {
    const Index row_begin = tile * kColumnTileRows;
    const Index row_end = min(p.n, row_begin + kColumnTileRows);
    Lse<T> lse;
    lse.init();
    int bad = 0;
    if (j < p.k) {
      const CostT* __restrict__ ccol = cost + j;
      Index i = row_begin + ty;
      constexpr int kStep = kColumnThreadsY;
      for (; i + 3 * kStep < row_end; i += 4 * kStep) {
        const CostT c0 = ccol[static_cast<Offset>(i) * p.cost_stride];
        const CostT c1 = ccol[static_cast<Offset>(i + kStep) * p.cost_stride];
        const CostT c2 = ccol[static_cast<Offset>(i + 2 * kStep) * p.cost_stride];
        const CostT c3 = ccol[static_cast<Offset>(i + 3 * kStep) * p.cost_stride];
        const T u0 = ft[i], u1 = ft[i + kStep], u2 = ft[i + 2 * kStep], u3 = ft[i + 3 * kStep];
        if (u0 != -infinity<T>()) {
          bad |=
              add_term(lse, static_cast<T>(c0), minus_inv_eps, u0, static_cast<double>(fcorr[i]));
        }
        if (u1 != -infinity<T>()) {
          bad |= add_term(
              lse, static_cast<T>(c1), minus_inv_eps, u1, static_cast<double>(fcorr[i + kStep]));
        }
        if (u2 != -infinity<T>()) {
          bad |= add_term(lse,
                          static_cast<T>(c2),
                          minus_inv_eps,
                          u2,
                          static_cast<double>(fcorr[i + 2 * kStep]));
        }
        if (u3 != -infinity<T>()) {
          bad |= add_term(lse,
                          static_cast<T>(c3),
                          minus_inv_eps,
                          u3,
                          static_cast<double>(fcorr[i + 3 * kStep]));
        }
      }
      for (; i < row_end; i += kStep) {
        const T u = ft[i];
        if (u != -infinity<T>()) {
          bad |= add_term(lse,
                          static_cast<T>(ccol[static_cast<Offset>(i) * p.cost_stride]),
                          minus_inv_eps,
                          u,
                          static_cast<double>(fcorr[i]));
        }
      }
    }
    shared_max[ty][tx] = lse.max;
    shared_sum[ty][tx] = lse.sum;
    shared_bad[ty][tx] = bad;
    __syncthreads();
    if (ty == 0 && j < p.k) {
      for (int r = 1; r < kColumnThreadsY; ++r) {
        lse.merge(shared_max[r][tx], shared_sum[r][tx]);
        bad |= shared_bad[r][tx];
      }
      const Offset at = static_cast<Offset>(tile) * p.k + j;
      partial_max[at] = static_cast<double>(lse.max);
      partial_sum[at] = lse.sum;
      if (bad != 0) atomicMin(&status[kBadColumn], static_cast<int>(j));
    }
    __syncthreads();  // the shared arrays are reused by the next tile
  }
}

template <typename T>
__global__ void column_finalize_kernel(SinkhornParams p,
                                       const double* __restrict__ b,
                                       const double* __restrict__ partial_max,
                                       const double* __restrict__ partial_sum,
                                       int tiles,
                                       double* __restrict__ g,
                                       T* __restrict__ gt,
                                       int* __restrict__ status) {
  const Index j = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= p.k) return;
  const double mass = b[j];
  if (mass == 0.0) {
    g[j] = -infinity<double>();
    gt[j] = -infinity<T>();
    return;
  }
  double max = -infinity<double>();
  for (int t = 0; t < tiles; ++t) max = fmax(max, partial_max[static_cast<Offset>(t) * p.k + j]);
  if (max == -infinity<double>()) {
    atomicMin(&status[kEmptyColumn], static_cast<int>(j));
    return;
  }
  double sum = 0.0;
  for (int t = 0; t < tiles; ++t) {
    const Offset at = static_cast<Offset>(t) * p.k + j;
    if (partial_max[at] != -infinity<double>()) sum += partial_sum[at] * exp(partial_max[at] - max);
  }
  const double v = p.tau_b * (log(mass) - (max + log(sum)));
  g[j] = v * p.epsilon;
  gt[j] = static_cast<T>(v);
}

__global__ void __launch_bounds__(kSumThreads)
    sum_kernel(const double* __restrict__ values, Index count, double* __restrict__ out) {
  __shared__ double partial[kSumThreads];
  double sum = 0.0;
  for (Index i = threadIdx.x; i < count; i += kSumThreads) sum += values[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kSumThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}

template <typename CostT, typename T, typename OutT>
__global__ void plan_kernel(const CostT* __restrict__ cost,
                            Index n,
                            Index k,
                            Offset cost_stride,
                            T minus_inv_eps,
                            const T* __restrict__ ft,
                            const T* __restrict__ fcorr,
                            const T* __restrict__ gt,
                            OutT* __restrict__ out,
                            Offset out_stride) {
  const Index j = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= k) return;
  const T v = gt[j];
  for (Index i = blockIdx.y; i < n; i += gridDim.y) {
    const T u = ft[i];
    OutT value = OutT(0);
    if (u != -infinity<T>() && v != -infinity<T>()) {
      const T c = static_cast<T>(cost[static_cast<Offset>(i) * cost_stride + j]);
      value = static_cast<OutT>(dev_exp(dev_fma(c, minus_inv_eps, v) + u) * fcorr[i]);
    }
    out[static_cast<Offset>(i) * out_stride + j] = value;
  }
}

constexpr int kReadThreads = 256;
constexpr unsigned kReadBlocks = 132 * 8;  // enough resident blocks to saturate an H100/H200

__device__ __forceinline__ double vector_sum(float4 v) {
  return static_cast<double>(v.x) + v.y + v.z + v.w;
}
__device__ __forceinline__ double vector_sum(double2 v) { return v.x + v.y; }

// Sum of `count` 16-byte vectors (a flat contiguous cost); the sum only defeats dead-code removal.
template <typename Vec>
__global__ void __launch_bounds__(kReadThreads)
    read_flat_kernel(const Vec* __restrict__ data, Offset count, double* __restrict__ sink) {
  __shared__ double partial[kReadThreads];
  double sum = 0.0;
  for (Offset at = static_cast<Offset>(blockIdx.x) * kReadThreads + threadIdx.x; at < count;
       at += static_cast<Offset>(gridDim.x) * kReadThreads) {
    sum += vector_sum(data[at]);
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kReadThreads / 2; stride > 0; stride /= 2) {
    if (static_cast<int>(threadIdx.x) < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sink, partial[0]);
}

// Row by row, for strided or unaligned costs.
template <typename CostT>
__global__ void __launch_bounds__(kReadThreads) read_rows_kernel(
    const CostT* __restrict__ cost, Index n, Index k, Offset stride, double* __restrict__ sink) {
  __shared__ double partial[kReadThreads];
  double sum = 0.0;
  for (Index i = blockIdx.x; i < n; i += gridDim.x) {
    for (Index j = threadIdx.x; j < k; j += kReadThreads) {
      sum += static_cast<double>(cost[static_cast<Offset>(i) * stride + j]);
    }
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = kReadThreads / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sink, partial[0]);
}

unsigned blocks_for(Offset count, int threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

// Calls fn(CostT{}, T{}) with the types named by (cost_type, compute).
template <typename Fn>
void dispatch(Precision cost_type, Precision compute, Fn&& fn) {
  if (cost_type == Precision::kF32) {
    if (compute == Precision::kF32) {
      fn(float{}, float{});
    } else {
      fn(float{}, double{});
    }
  } else if (compute == Precision::kF32) {
    fn(double{}, float{});
  } else {
    fn(double{}, double{});
  }
}

}  // namespace

int column_row_tiles(Index n) {
  return static_cast<int>((n + kColumnTileRows - 1) / kColumnTileRows);
}

cudaError_t launch_scale_potentials(const double* pot,
                                    Index count,
                                    double inv_eps,
                                    Precision compute,
                                    void* scaled,
                                    void* correction,
                                    cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(count, kFinalizeThreads);
  if (compute == Precision::kF32) {
    scale_potentials_kernel<float><<<blocks, kFinalizeThreads, 0, stream>>>(
        pot, count, inv_eps, static_cast<float*>(scaled), static_cast<float*>(correction));
  } else {
    scale_potentials_kernel<double><<<blocks, kFinalizeThreads, 0, stream>>>(
        pot, count, inv_eps, static_cast<double*>(scaled), static_cast<double*>(correction));
  }
  return cudaGetLastError();
}

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
                              double* row_residual_out,
                              int* status,
                              cudaStream_t stream) {
  const unsigned blocks = blocks_for(params.n, kRowWarpsPerBlock);
  dispatch(cost_type, compute, [&](auto cost_tag, auto compute_tag) {
    using CostT = decltype(cost_tag);
    using T = decltype(compute_tag);
    row_update_kernel<CostT, T>
        <<<blocks, kRowWarpsPerBlock * kWarp, 0, stream>>>(static_cast<const CostT*>(cost),
                                                           params,
                                                           a,
                                                           f,
                                                           static_cast<const T*>(gt),
                                                           f_new,
                                                           static_cast<T*>(ft_new),
                                                           static_cast<T*>(fcorr_new),
                                                           row_residual_out,
                                                           status);
  });
  return cudaGetLastError();
}

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
                                 cudaStream_t stream) {
  const int tiles = column_row_tiles(params.n);
  const dim3 grid(blocks_for(params.k, kColumnTileColumns),
                  static_cast<unsigned>(tiles < kMaxGridY ? tiles : kMaxGridY));
  const dim3 block(kColumnTileColumns, kColumnThreadsY);
  dispatch(cost_type, compute, [&](auto cost_tag, auto compute_tag) {
    using CostT = decltype(cost_tag);
    using T = decltype(compute_tag);
    column_partial_kernel<CostT, T><<<grid, block, 0, stream>>>(static_cast<const CostT*>(cost),
                                                                params,
                                                                static_cast<const T*>(ft),
                                                                static_cast<const T*>(fcorr),
                                                                partial_max,
                                                                partial_sum,
                                                                status);
  });
  const cudaError_t partial_status = cudaGetLastError();
  if (partial_status != cudaSuccess) return partial_status;
  const unsigned blocks = blocks_for(params.k, kFinalizeThreads);
  if (compute == Precision::kF32) {
    column_finalize_kernel<float><<<blocks, kFinalizeThreads, 0, stream>>>(
        params, b, partial_max, partial_sum, tiles, g, static_cast<float*>(gt), status);
  } else {
    column_finalize_kernel<double><<<blocks, kFinalizeThreads, 0, stream>>>(
        params, b, partial_max, partial_sum, tiles, g, static_cast<double*>(gt), status);
  }
  return cudaGetLastError();
}

cudaError_t launch_sum(const double* values, Index count, double* out, cudaStream_t stream) {
  sum_kernel<<<1, kSumThreads, 0, stream>>>(values, count, out);
  return cudaGetLastError();
}

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
                        cudaStream_t stream) {
  const dim3 grid(blocks_for(k, kPlanThreads),
                  static_cast<unsigned>(n < kMaxGridY ? n : kMaxGridY));
  dispatch(cost_type, compute, [&](auto cost_tag, auto compute_tag) {
    using CostT = decltype(cost_tag);
    using T = decltype(compute_tag);
    const T minus_inv_eps = static_cast<T>(-inv_eps);
    if (out_type == Precision::kF32) {
      plan_kernel<CostT, T, float>
          <<<grid, kPlanThreads, 0, stream>>>(static_cast<const CostT*>(cost),
                                              n,
                                              k,
                                              cost_stride,
                                              minus_inv_eps,
                                              static_cast<const T*>(ft),
                                              static_cast<const T*>(fcorr),
                                              static_cast<const T*>(gt),
                                              static_cast<float*>(out),
                                              out_stride);
    } else {
      plan_kernel<CostT, T, double>
          <<<grid, kPlanThreads, 0, stream>>>(static_cast<const CostT*>(cost),
                                              n,
                                              k,
                                              cost_stride,
                                              minus_inv_eps,
                                              static_cast<const T*>(ft),
                                              static_cast<const T*>(fcorr),
                                              static_cast<const T*>(gt),
                                              static_cast<double*>(out),
                                              out_stride);
    }
  });
  return cudaGetLastError();
}

cudaError_t launch_read_cost(const void* cost,
                             Precision cost_type,
                             Index n,
                             Index k,
                             Offset cost_stride,
                             double* sink,
                             cudaStream_t stream) {
  const std::size_t elem = cost_type == Precision::kF32 ? sizeof(float) : sizeof(double);
  const Offset bytes = static_cast<Offset>(n) * k * static_cast<Offset>(elem);
  const bool flat =
      cost_stride == k && bytes % 16 == 0 && reinterpret_cast<std::uintptr_t>(cost) % 16 == 0;
  if (flat && cost_type == Precision::kF32) {
    read_flat_kernel<float4><<<kReadBlocks, kReadThreads, 0, stream>>>(
        static_cast<const float4*>(cost), bytes / 16, sink);
  } else if (flat) {
    read_flat_kernel<double2><<<kReadBlocks, kReadThreads, 0, stream>>>(
        static_cast<const double2*>(cost), bytes / 16, sink);
  } else if (cost_type == Precision::kF32) {
    read_rows_kernel<float><<<kReadBlocks, kReadThreads, 0, stream>>>(
        static_cast<const float*>(cost), n, k, cost_stride, sink);
  } else {
    read_rows_kernel<double><<<kReadBlocks, kReadThreads, 0, stream>>>(
        static_cast<const double*>(cost), n, k, cost_stride, sink);
  }
  return cudaGetLastError();
}

}  // namespace gw::cuda
