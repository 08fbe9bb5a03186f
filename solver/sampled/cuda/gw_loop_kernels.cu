// GW-loop kernels and their host launchers (declared in gw_loop_kernels.cuh).
//
// Per outer iteration on an n x k real block (slack row/column aside):
//   factors      one thread per node builds its row of the augmented GEMM factors from the
//                uploaded distances (n + k rows of m + 2 entries); the GEMM itself is cuBLAS.
//   cost blends  (EMA / fused only) one elementwise pass over the real block of Lambda.
//   blend        one block per row: T <- (1 - alpha) T + alpha T_new with the row's squared
//                change, <Lambda, T> and mass reduced in double by cub::BlockReduce: reads T,
//                T_new, Lambda once, writes T once -- 16 n k bytes in float32.
//   totals       one block sums the n per-row partials in a fixed order.
// No atomics anywhere: every sum has a fixed order, so a run is bitwise reproducible on a given
// device. Products and sums that the CPU loop rounds separately use __*_rn intrinsics so that
// nvcc does not contract them into fused multiply-adds (the CPU build does not contract either).
//
// Device code is compiled as C++17 (see cmake/GwalignOptions.cmake): no core/error.h here.
#include <cub/block/block_reduce.cuh>

#include "solver/sampled/cuda/gw_loop_kernels.cuh"

namespace gw::cuda {
namespace {

constexpr int kRowThreads = 256;
constexpr int kTotalsThreads = 1024;
constexpr int kElementThreads = 256;
constexpr int kFactorThreads = 128;
constexpr int kSlackThreads = 256;
constexpr unsigned kMaxGridY = 65535;

__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }

struct RowPartials {
  double change;
  double cost;
  double mass;
};

struct AddRowPartials {
  __device__ RowPartials operator()(const RowPartials& a, const RowPartials& b) const {
    return {a.change + b.change, a.cost + b.cost, a.mass + b.mass};
  }
};

struct PairSum {
  double first;
  double second;
};

struct AddPairSum {
  __device__ PairSum operator()(const PairSum& a, const PairSum& b) const {
    return {a.first + b.first, a.second + b.second};
  }
};

template <typename Real>
__global__ void __launch_bounds__(kFactorThreads) augmented_factors_kernel(
    const float* __restrict__ dist, Index count, int m, bool left, Real* __restrict__ factors) {
  const Index r = static_cast<Index>(blockIdx.x) * kFactorThreads + static_cast<Index>(threadIdx.x);
  if (r >= count) return;
  const float* __restrict__ x = dist + static_cast<Offset>(r) * m;
  Real* __restrict__ out = factors + static_cast<Offset>(r) * (m + 2);
  const Real count_m = static_cast<Real>(m);
  Real norm = 0;
  if (left) {
    for (int t = 0; t < m; ++t) {
      const Real v = static_cast<Real>(x[t]);
      out[t] = v;
      norm = add_rn(norm, mul_rn(v, v));
    }
    out[m] = norm / count_m;
    out[m + 1] = Real(1);
  } else {
    const Real scale = Real(-2) / count_m;
    for (int t = 0; t < m; ++t) {
      const Real v = static_cast<Real>(x[t]);
      out[t] = mul_rn(scale, v);
      norm = add_rn(norm, mul_rn(v, v));
    }
    out[m] = Real(1);
    out[m + 1] = norm / count_m;
  }
}

template <typename Real>
__global__ void __launch_bounds__(kElementThreads)
    cost_blends_kernel(Real* __restrict__ lambda,
                       Index n,
                       Index k,
                       Offset stride,
                       Real* __restrict__ ema,
                       bool first,
                       double beta,
                       const Real* __restrict__ feature,
                       double alpha_f) {
  const Index j =
      static_cast<Index>(blockIdx.x) * kElementThreads + static_cast<Index>(threadIdx.x);
  if (j >= k) return;
  const double keep_ema = 1.0 - beta;
  const double keep_gw = 1.0 - alpha_f;
  for (Index i = static_cast<Index>(blockIdx.y); i < n; i += static_cast<Index>(gridDim.y)) {
    Real* at = lambda + static_cast<Offset>(i) * stride + j;
    const Offset e = static_cast<Offset>(i) * k + j;
    Real value = *at;
    if (ema != nullptr) {
      if (!first) {
        value = static_cast<Real>(add_rn(mul_rn(beta, static_cast<double>(ema[e])),
                                         mul_rn(keep_ema, static_cast<double>(value))));
      }
      ema[e] = value;
    }
    if (feature != nullptr) {
      value = static_cast<Real>(add_rn(mul_rn(keep_gw, static_cast<double>(value)),
                                       mul_rn(alpha_f, static_cast<double>(feature[e]))));
    }
    *at = value;
  }
}

template <typename Real>
__global__ void __launch_bounds__(kSlackThreads) fill_slack_kernel(
    Real* __restrict__ lambda, Index n, Index k, Offset stride, Real edge, Real corner) {
  const Offset t = static_cast<Offset>(blockIdx.x) * kSlackThreads + threadIdx.x;
  if (t < n) {
    lambda[t * stride + k] = edge;
  } else if (t < static_cast<Offset>(n) + k) {
    lambda[static_cast<Offset>(n) * stride + (t - n)] = edge;
  } else if (t == static_cast<Offset>(n) + k) {
    lambda[static_cast<Offset>(n) * stride + k] = corner;
  }
}

template <typename Real>
__global__ void __launch_bounds__(kRowThreads) outer_product_kernel(const double* __restrict__ p,
                                                                    const double* __restrict__ q,
                                                                    Index k,
                                                                    Real* __restrict__ plan,
                                                                    double* __restrict__ row_mass) {
  using Reduce = cub::BlockReduce<double, kRowThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const Index i = static_cast<Index>(blockIdx.x);
  const double pi = p[i];
  Real* __restrict__ row = plan + static_cast<Offset>(i) * k;
  double sum = 0.0;
  for (Index j = threadIdx.x; j < k; j += kRowThreads) {
    const Real t = static_cast<Real>(pi * q[j]);
    row[j] = t;
    sum += static_cast<double>(t);
  }
  const double total = Reduce(temp).Sum(sum);  // valid in thread 0
  if (threadIdx.x == 0) row_mass[i] = total;
}

template <typename Real>
__global__ void __launch_bounds__(kRowThreads)
    momentum_blend_kernel(Real* __restrict__ plan,
                          const Real* __restrict__ fresh,
                          const Real* __restrict__ lambda,
                          Index k,
                          Offset stride,
                          Real keep,
                          Real take,
                          double* __restrict__ row_change,
                          double* __restrict__ row_cost,
                          double* __restrict__ row_mass) {
  using Reduce = cub::BlockReduce<RowPartials, kRowThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const Index i = static_cast<Index>(blockIdx.x);
  Real* __restrict__ t = plan + static_cast<Offset>(i) * k;
  const Real* __restrict__ f = fresh + static_cast<Offset>(i) * stride;
  const Real* __restrict__ c = lambda + static_cast<Offset>(i) * stride;
  RowPartials partial{0.0, 0.0, 0.0};
  for (Index j = threadIdx.x; j < k; j += kRowThreads) {
    const Real old = t[j];
    const Real blended = add_rn(mul_rn(keep, old), mul_rn(take, f[j]));
    const double delta = static_cast<double>(blended) - static_cast<double>(old);
    partial.change += delta * delta;
    partial.cost += static_cast<double>(c[j]) * static_cast<double>(blended);
    partial.mass += static_cast<double>(blended);
    t[j] = blended;
  }
  const RowPartials total = Reduce(temp).Reduce(partial, AddRowPartials());  // thread 0
  if (threadIdx.x == 0) {
    row_change[i] = total.change;
    row_cost[i] = total.cost;
    row_mass[i] = total.mass;
  }
}

__global__ void __launch_bounds__(kTotalsThreads)
    pair_sums_kernel(const double* __restrict__ first,
                     const double* __restrict__ second,
                     Index n,
                     double* __restrict__ out) {
  using Reduce = cub::BlockReduce<PairSum, kTotalsThreads>;
  __shared__ typename Reduce::TempStorage temp;
  PairSum partial{0.0, 0.0};
  for (Index i = threadIdx.x; i < n; i += kTotalsThreads) {
    partial.first += first[i];
    partial.second += second[i];
  }
  const PairSum total = Reduce(temp).Reduce(partial, AddPairSum());  // thread 0
  if (threadIdx.x == 0) {
    out[0] = total.first;
    out[1] = total.second;
  }
}

__global__ void __launch_bounds__(kRowThreads)
    clamp_rows_kernel(float* __restrict__ cost, Index k, double* __restrict__ row_sum) {
  using Reduce = cub::BlockReduce<double, kRowThreads>;
  __shared__ typename Reduce::TempStorage temp;
  float* __restrict__ row = cost + static_cast<Offset>(blockIdx.x) * k;
  double sum = 0.0;
  for (Index j = threadIdx.x; j < k; j += kRowThreads) {
    const float c = row[j];
    const float clamped = c > 0.0f ? c : 0.0f;  // std::max(0.0f, c): NaN becomes 0 as well
    row[j] = clamped;
    sum += static_cast<double>(clamped);
  }
  const double total = Reduce(temp).Sum(sum);
  if (threadIdx.x == 0) row_sum[blockIdx.x] = total;
}

// divisor <= 0: only the row sums; otherwise each entry is divided first.
template <typename Real>
__global__ void __launch_bounds__(kRowThreads) row_sums_kernel(Real* __restrict__ plan,
                                                               Index k,
                                                               double divisor,
                                                               double* __restrict__ row_mass) {
  using Reduce = cub::BlockReduce<double, kRowThreads>;
  __shared__ typename Reduce::TempStorage temp;
  Real* __restrict__ row = plan + static_cast<Offset>(blockIdx.x) * k;
  double sum = 0.0;
  for (Index j = threadIdx.x; j < k; j += kRowThreads) {
    Real t = row[j];
    if (divisor > 0.0) {
      t = static_cast<Real>(static_cast<double>(t) / divisor);
      row[j] = t;
    }
    sum += static_cast<double>(t);
  }
  const double total = Reduce(temp).Sum(sum);
  if (threadIdx.x == 0) row_mass[blockIdx.x] = total;
}

unsigned blocks_for(Offset count, int threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

// 2-D grid of the elementwise kernels: x over column blocks, y over rows (grid-stride).
dim3 element_grid(Index n, Index k) {
  const unsigned rows = static_cast<unsigned>(n) < kMaxGridY ? static_cast<unsigned>(n) : kMaxGridY;
  return dim3(blocks_for(k, kElementThreads), rows > 0 ? rows : 1);
}

}  // namespace

cudaError_t launch_augmented_factors(const float* dist,
                                     Index count,
                                     int m,
                                     bool left,
                                     Precision real,
                                     void* factors,
                                     cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  const unsigned blocks = blocks_for(count, kFactorThreads);
  if (real == Precision::kF32) {
    augmented_factors_kernel<float>
        <<<blocks, kFactorThreads, 0, stream>>>(dist, count, m, left, static_cast<float*>(factors));
  } else {
    augmented_factors_kernel<double><<<blocks, kFactorThreads, 0, stream>>>(
        dist, count, m, left, static_cast<double*>(factors));
  }
  return cudaGetLastError();
}

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
                               cudaStream_t stream) {
  if (n <= 0 || k <= 0 || (ema == nullptr && feature == nullptr)) return cudaSuccess;
  const dim3 grid = element_grid(n, k);
  if (real == Precision::kF32) {
    cost_blends_kernel<float>
        <<<grid, kElementThreads, 0, stream>>>(static_cast<float*>(lambda),
                                               n,
                                               k,
                                               stride,
                                               static_cast<float*>(ema),
                                               first,
                                               beta,
                                               static_cast<const float*>(feature),
                                               alpha_f);
  } else {
    cost_blends_kernel<double>
        <<<grid, kElementThreads, 0, stream>>>(static_cast<double*>(lambda),
                                               n,
                                               k,
                                               stride,
                                               static_cast<double*>(ema),
                                               first,
                                               beta,
                                               static_cast<const double*>(feature),
                                               alpha_f);
  }
  return cudaGetLastError();
}

cudaError_t launch_fill_slack(void* lambda,
                              Precision real,
                              Index n,
                              Index k,
                              Offset stride,
                              double edge,
                              double corner,
                              cudaStream_t stream) {
  const unsigned blocks = blocks_for(static_cast<Offset>(n) + k + 1, kSlackThreads);
  if (real == Precision::kF32) {
    fill_slack_kernel<float><<<blocks, kSlackThreads, 0, stream>>>(static_cast<float*>(lambda),
                                                                   n,
                                                                   k,
                                                                   stride,
                                                                   static_cast<float>(edge),
                                                                   static_cast<float>(corner));
  } else {
    fill_slack_kernel<double><<<blocks, kSlackThreads, 0, stream>>>(
        static_cast<double*>(lambda), n, k, stride, edge, corner);
  }
  return cudaGetLastError();
}

cudaError_t launch_outer_product(const double* p,
                                 const double* q,
                                 Index n,
                                 Index k,
                                 Precision real,
                                 void* plan,
                                 double* row_mass,
                                 cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>(n);
  if (real == Precision::kF32) {
    outer_product_kernel<float>
        <<<blocks, kRowThreads, 0, stream>>>(p, q, k, static_cast<float*>(plan), row_mass);
  } else {
    outer_product_kernel<double>
        <<<blocks, kRowThreads, 0, stream>>>(p, q, k, static_cast<double*>(plan), row_mass);
  }
  return cudaGetLastError();
}

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
                                  cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>(n);
  if (real == Precision::kF32) {
    momentum_blend_kernel<float>
        <<<blocks, kRowThreads, 0, stream>>>(static_cast<float*>(plan),
                                             static_cast<const float*>(fresh),
                                             static_cast<const float*>(lambda),
                                             k,
                                             stride,
                                             static_cast<float>(1.0 - alpha),
                                             static_cast<float>(alpha),
                                             row_change,
                                             row_cost,
                                             row_mass);
  } else {
    momentum_blend_kernel<double>
        <<<blocks, kRowThreads, 0, stream>>>(static_cast<double*>(plan),
                                             static_cast<const double*>(fresh),
                                             static_cast<const double*>(lambda),
                                             k,
                                             stride,
                                             1.0 - alpha,
                                             alpha,
                                             row_change,
                                             row_cost,
                                             row_mass);
  }
  return cudaGetLastError();
}

cudaError_t launch_pair_sums(
    const double* first, const double* second, Index n, double* out, cudaStream_t stream) {
  pair_sums_kernel<<<1, kTotalsThreads, 0, stream>>>(first, second, n, out);
  return cudaGetLastError();
}

cudaError_t launch_clamp_rows(float* cost, Index n, Index k, double* row_sum, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  clamp_rows_kernel<<<static_cast<unsigned>(n), kRowThreads, 0, stream>>>(cost, k, row_sum);
  return cudaGetLastError();
}

namespace {
cudaError_t launch_row_sums(void* plan,
                            Precision real,
                            Index n,
                            Index k,
                            double divisor,
                            double* row_mass,
                            cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const unsigned blocks = static_cast<unsigned>(n);
  if (real == Precision::kF32) {
    row_sums_kernel<float>
        <<<blocks, kRowThreads, 0, stream>>>(static_cast<float*>(plan), k, divisor, row_mass);
  } else {
    row_sums_kernel<double>
        <<<blocks, kRowThreads, 0, stream>>>(static_cast<double*>(plan), k, divisor, row_mass);
  }
  return cudaGetLastError();
}
}  // namespace

cudaError_t launch_plan_row_sums(
    const void* plan, Precision real, Index n, Index k, double* row_mass, cudaStream_t stream) {
  // divisor 0: the kernel only reads the plan.
  return launch_row_sums(const_cast<void*>(plan), real, n, k, 0.0, row_mass, stream);
}

cudaError_t launch_divide_plan(void* plan,
                               Precision real,
                               Index n,
                               Index k,
                               double divisor,
                               double* row_mass,
                               cudaStream_t stream) {
  if (!(divisor > 0.0)) return cudaErrorInvalidValue;
  return launch_row_sums(plan, real, n, k, divisor, row_mass, stream);
}

}  // namespace gw::cuda
