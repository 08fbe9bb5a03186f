// The per-gene segment mean of aggregate_by_gene, compiled once per instruction-set target
// (core/isa_dispatch_impl.h): the float -> double widening adds vectorize at the target's width.
#include <cstddef>

#include "cellgraph/aggregate_kernels_impl.h"

namespace gw::detail::GW_ISA_NS {
namespace {

// Tokens ahead whose embedding rows are prefetched: rows are visited in gene order, i.e. at
// random, so the hardware prefetcher sees only the lines within one row.
constexpr Offset kPrefetchDistance = 16;  // 8 and 32 measured slower

template <typename T>
void segment_mean_kernel(const T* __restrict emb,
                         const Offset* __restrict order,
                         Offset k0,
                         Offset k1,
                         Index hidden,
                         double* __restrict acc,
                         T* __restrict mean) {
  const std::size_t row_bytes = static_cast<std::size_t>(hidden) * sizeof(T);
  for (Index h = 0; h < hidden; ++h) acc[h] = 0.0;
  for (Offset k = k0; k < k1; ++k) {
    if (k + kPrefetchDistance < k1) {
      const char* ahead =
          reinterpret_cast<const char*>(emb + order[k + kPrefetchDistance] * hidden);
      for (std::size_t byte = 0; byte < row_bytes; byte += 64) {
        __builtin_prefetch(ahead + byte, 0, 1);  // into L2: more misses in flight
      }
    }
    const T* row = emb + order[k] * hidden;
#pragma omp simd
    for (Index h = 0; h < hidden; ++h) acc[h] += static_cast<double>(row[h]);
  }
  // A division, not a multiplication by the inverse: the same rounding as the reference.
  const double count = static_cast<double>(k1 - k0);
  for (Index h = 0; h < hidden; ++h) mean[h] = static_cast<T>(acc[h] / count);
}

}  // namespace

extern const AggregateKernels kAggregateKernels = {
    &segment_mean_kernel<float>,
    &segment_mean_kernel<double>,
};

}  // namespace gw::detail::GW_ISA_NS
