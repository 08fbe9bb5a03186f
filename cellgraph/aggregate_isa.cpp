// The per-gene sums of aggregate_by_gene, compiled once per instruction-set target
// (core/isa_dispatch_impl.h): the float -> double widening adds vectorize at the target's width.
#include <cstddef>

#include "cellgraph/aggregate_kernels_impl.h"

namespace gw::detail::GW_ISA_NS {
namespace {

// Tokens ahead whose rows and gene sums are prefetched when their gene is in the chunk: a chunk
// owns a fraction of the tokens, so the rows it reads are increasing but with gaps, which the
// hardware prefetcher does not bridge, and each token's 1 KiB of double sums (hidden 128) sits at
// a random place in a chunk of last-level cache, so the sums are prefetched too (for writing).
// 8 tokens ahead measured best of 4-32 (bench/RESULTS.md, "Calibrated constants").
constexpr Index kPrefetchDistance = 8;

template <typename T>
void row_sum_kernel(const T* __restrict row,
                    const Index* __restrict ids,
                    const Index* __restrict compact,
                    Index t0,
                    Index t1,
                    Index u0,
                    Index u1,
                    Index hidden,
                    double* __restrict acc) {
  const std::size_t row_bytes = static_cast<std::size_t>(hidden) * sizeof(T);
  const std::size_t sum_bytes = static_cast<std::size_t>(hidden) * sizeof(double);
  auto gene = [&](Index t) { return compact != nullptr ? compact[ids[t]] : ids[t]; };
  for (Index t = t0; t < t1; ++t) {
    if (t + kPrefetchDistance < t1) {
      const Index ahead_gene = gene(t + kPrefetchDistance);
      if (ahead_gene >= u0 && ahead_gene < u1) {
        const char* ahead = reinterpret_cast<const char*>(
            row + static_cast<Offset>(t + kPrefetchDistance) * hidden);
        for (std::size_t byte = 0; byte < row_bytes; byte += 64) __builtin_prefetch(ahead + byte);
        const char* sums =
            reinterpret_cast<const char*>(acc + static_cast<Offset>(ahead_gene - u0) * hidden);
        for (std::size_t byte = 0; byte < sum_bytes; byte += 64) {
          __builtin_prefetch(sums + byte, /*rw=*/1, /*locality=*/3);
        }
      }
    }
    const Index u = gene(t);
    if (u < u0 || u >= u1) continue;
    const T* values = row + static_cast<Offset>(t) * hidden;
    double* sum = acc + static_cast<Offset>(u - u0) * hidden;
#pragma omp simd
    for (Index h = 0; h < hidden; ++h) sum[h] += static_cast<double>(values[h]);
  }
}

}  // namespace

extern const AggregateKernels kAggregateKernels = {
    &row_sum_kernel<float>,
    &row_sum_kernel<double>,
};

}  // namespace gw::detail::GW_ISA_NS
