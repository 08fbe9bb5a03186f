// Anchor-sampling kernels and their host launchers (declared in sampling_kernels.cuh).
//
// Work decomposition, M draws from an n x k plan:
//   row sums      (only when the caller has no row masses) one block per row, strided loads,
//                 cub::BlockReduce in double: one read of the plan.
//   row CDF       one block of 1024 threads scans the n row masses in tiles of 4096 (each thread
//                 4 consecutive items, cub::BlockScan); a tile starts from the last value of the
//                 previous one, so the CDF is non-decreasing and bitwise reproducible.
//   row draws     one thread per draw: binary search of u * total in the CDF.
//   column draws  one block per draw: the drawn row's sum (block reduction), then tiles of 1024
//                 entries scanned in double until the first positive entry whose running sum
//                 exceeds u * row_sum; O(k) per draw, M rows read at most twice.
// No atomics feed a decision (atomicMin only records the smallest bad row for the message), so
// the pairs depend on the inputs alone. Sums are in a different order than the CPU sampler's
// sequential loops: the two agree except where a uniform falls within rounding of a boundary.
//
// Device code is compiled as C++17 (see cmake/GwalignOptions.cmake): no core/error.h here.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <climits>

#include "sampling/cuda/sampling_kernels.cuh"

namespace gw::cuda {
namespace {

constexpr int kRowSumThreads = 256;
constexpr int kScanThreads = 1024;
constexpr int kScanItems = 4;
constexpr int kColumnThreads = 256;
constexpr int kColumnItems = 4;
constexpr int kDrawThreads = 128;
constexpr Index kNoColumn = INT_MAX;

struct MinIndex {
  __device__ Index operator()(Index a, Index b) const { return b < a ? b : a; }
};
struct MaxIndex {
  __device__ Index operator()(Index a, Index b) const { return b > a ? b : a; }
};

template <typename T>
__global__ void __launch_bounds__(kRowSumThreads) row_sums_kernel(
    const T* __restrict__ plan, Index n, Index k, Offset stride, double* __restrict__ row_mass) {
  using Reduce = cub::BlockReduce<double, kRowSumThreads>;
  __shared__ typename Reduce::TempStorage temp;
  const Index i = static_cast<Index>(blockIdx.x);
  if (i >= n) return;  // uniform per block
  const T* __restrict__ row = plan + static_cast<Offset>(i) * stride;
  double sum = 0.0;
  for (Index j = threadIdx.x; j < k; j += kRowSumThreads) sum += static_cast<double>(row[j]);
  const double total = Reduce(temp).Sum(sum);  // valid in thread 0
  if (threadIdx.x == 0) row_mass[i] = total;
}

__global__ void __launch_bounds__(kScanThreads)
    cumulative_sums_kernel(const double* __restrict__ values, Index n, double* __restrict__ cdf) {
  using Scan = cub::BlockScan<double, kScanThreads>;
  __shared__ typename Scan::TempStorage temp;
  __shared__ double shared_carry;
  constexpr Offset kTile = static_cast<Offset>(kScanThreads) * kScanItems;
  double carry = 0.0;
  for (Offset base = 0; base < n; base += kTile) {
    const Offset first = base + static_cast<Offset>(threadIdx.x) * kScanItems;
    double items[kScanItems];
#pragma unroll
    for (int q = 0; q < kScanItems; ++q) items[q] = first + q < n ? values[first + q] : 0.0;
    Scan(temp).InclusiveSum(items, items);
#pragma unroll
    for (int q = 0; q < kScanItems; ++q) {
      if (first + q < n) cdf[first + q] = carry + items[q];
    }
    // The padding items add exact zeros, so the last thread's last item is the tile's last value.
    if (threadIdx.x == kScanThreads - 1) shared_carry = carry + items[kScanItems - 1];
    __syncthreads();  // shared_carry written; temp free for the next tile
    carry = shared_carry;
    __syncthreads();  // everyone read shared_carry before it is written again
  }
}

__global__ void draw_rows_kernel(const double* __restrict__ cdf,
                                 Index n,
                                 const double* __restrict__ uniforms,
                                 int m,
                                 Index* __restrict__ rows,
                                 int* __restrict__ status) {
  const int s = static_cast<int>(blockIdx.x) * kDrawThreads + static_cast<int>(threadIdx.x);
  if (s >= m) return;
  const double total = cdf[n - 1];
  if (!(total > 0.0)) {  // zero or NaN mass: the host throws
    if (s == 0) status[kSampleZeroTotal] = 0;
    rows[s] = 0;
    return;
  }
  const double target = uniforms[s] * total;
  // upper_bound: the first i with cdf[i] > target, n when there is none.
  Index lo = 0, hi = n;
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (cdf[mid] > target) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  Index i = lo < n ? lo : n - 1;
  // Rounding landed on a row of zero mass. `<=`, not `==`: the block scan's running sums are not
  // exactly monotone across thread boundaries (a carry added to a partial sum rounds differently
  // from the serial sum), so a zero-mass row can show a value a few ulp below its predecessor.
  while (i > 0 && cdf[i] <= cdf[i - 1]) --i;
  rows[s] = i;
}

template <typename T>
__global__ void __launch_bounds__(kColumnThreads)
    draw_columns_kernel(const T* __restrict__ plan,
                        Index n,
                        Index k,
                        Offset stride,
                        const double* __restrict__ uniforms,
                        int m,
                        Index* __restrict__ pairs,
                        int* __restrict__ status) {
  using Reduce = cub::BlockReduce<double, kColumnThreads>;
  using Scan = cub::BlockScan<double, kColumnThreads>;
  using IndexReduce = cub::BlockReduce<Index, kColumnThreads>;
  __shared__ union {
    typename Reduce::TempStorage reduce;
    typename Scan::TempStorage scan;
    typename IndexReduce::TempStorage index;
  } temp;
  __shared__ double shared_value;
  __shared__ Index shared_choice;

  const int s = static_cast<int>(blockIdx.x);
  const Index i = pairs[s];
  if (i < 0 || i >= n) return;  // cannot happen: rows come from draw_rows_kernel
  const T* __restrict__ row = plan + static_cast<Offset>(i) * stride;

  // The row's mass, as the CPU sampler recomputes it from the row (not from row_mass).
  double sum = 0.0;
  for (Index j = threadIdx.x; j < k; j += kColumnThreads) sum += static_cast<double>(row[j]);
  const double mass = Reduce(temp.reduce).Sum(sum);
  if (threadIdx.x == 0) shared_value = mass;
  __syncthreads();
  const double row_mass = shared_value;
  if (!(row_mass > 0.0)) {
    if (threadIdx.x == 0) {
      atomicMin(&status[kSampleEmptyRow], static_cast<int>(i));
      pairs[m + s] = 0;
    }
    return;
  }
  const double target = uniforms[m + s] * row_mass;

  constexpr Offset kTile = static_cast<Offset>(kColumnThreads) * kColumnItems;
  double carry = 0.0;
  Index last_positive = -1;
  for (Offset base = 0; base < k; base += kTile) {
    const Offset first = base + static_cast<Offset>(threadIdx.x) * kColumnItems;
    double items[kColumnItems];
    bool positive[kColumnItems];
#pragma unroll
    for (int q = 0; q < kColumnItems; ++q) {
      const T x = first + q < k ? row[first + q] : T(0);
      positive[q] = x > T(0);
      items[q] = static_cast<double>(x);
      if (positive[q]) last_positive = static_cast<Index>(first + q);
    }
    __syncthreads();  // the previous collective on `temp` is complete in every thread
    Scan(temp.scan).InclusiveSum(items, items);
    Index candidate = kNoColumn;
#pragma unroll
    for (int q = kColumnItems - 1; q >= 0; --q) {  // keep the first crossing of this thread
      if (positive[q] && carry + items[q] > target) candidate = static_cast<Index>(first + q);
    }
    __syncthreads();  // scan storage free
    const Index choice = IndexReduce(temp.index).Reduce(candidate, MinIndex());  // thread 0
    if (threadIdx.x == 0) shared_choice = choice;
    if (threadIdx.x == kColumnThreads - 1) shared_value = carry + items[kColumnItems - 1];
    __syncthreads();
    if (shared_choice != kNoColumn) {
      if (threadIdx.x == 0) pairs[m + s] = shared_choice;
      return;  // uniform: every thread read the same shared_choice
    }
    carry = shared_value;
  }
  // Rounding left the target at or above the final running sum: the last entry with mass.
  __syncthreads();
  const Index last = IndexReduce(temp.index).Reduce(last_positive, MaxIndex());
  if (threadIdx.x == 0) pairs[m + s] = last >= 0 ? last : 0;
}

unsigned blocks_for(Offset count, int threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

}  // namespace

cudaError_t launch_row_sums(const void* plan,
                            Precision plan_type,
                            Index n,
                            Index k,
                            Offset stride,
                            double* row_mass,
                            cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (plan_type == Precision::kF32) {
    row_sums_kernel<float><<<static_cast<unsigned>(n), kRowSumThreads, 0, stream>>>(
        static_cast<const float*>(plan), n, k, stride, row_mass);
  } else {
    row_sums_kernel<double><<<static_cast<unsigned>(n), kRowSumThreads, 0, stream>>>(
        static_cast<const double*>(plan), n, k, stride, row_mass);
  }
  return cudaGetLastError();
}

cudaError_t launch_cumulative_sums(const double* row_mass,
                                   Index n,
                                   double* cdf,
                                   cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  cumulative_sums_kernel<<<1, kScanThreads, 0, stream>>>(row_mass, n, cdf);
  return cudaGetLastError();
}

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
                              cudaStream_t stream) {
  if (m <= 0 || n <= 0) return cudaSuccess;
  draw_rows_kernel<<<blocks_for(m, kDrawThreads), kDrawThreads, 0, stream>>>(
      cdf, n, uniforms, m, pairs, status);
  const cudaError_t rows_status = cudaGetLastError();
  if (rows_status != cudaSuccess) return rows_status;
  if (plan_type == Precision::kF32) {
    draw_columns_kernel<float><<<static_cast<unsigned>(m), kColumnThreads, 0, stream>>>(
        static_cast<const float*>(plan), n, k, stride, uniforms, m, pairs, status);
  } else {
    draw_columns_kernel<double><<<static_cast<unsigned>(m), kColumnThreads, 0, stream>>>(
        static_cast<const double*>(plan), n, k, stride, uniforms, m, pairs, status);
  }
  return cudaGetLastError();
}

}  // namespace gw::cuda
