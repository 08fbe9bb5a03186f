// The per-gene sums of aggregate_by_gene (aggregate.cpp), compiled once per instruction-set target
// in aggregate_isa.cpp (core/isa_dispatch_impl.h). Private to cellgraph.
#pragma once

#include <type_traits>

#include "core/isa_dispatch_impl.h"
#include "core/types.h"

namespace gw::detail {

// One row of tokens, positions t in [t0, t1) in order: the token's gene is u = compact[ids[t]]
// (or u = ids[t] when compact is null); if u0 <= u < u1, then for every h < hidden
//   acc[(u - u0) * hidden + h] += row[t * hidden + h]   (each value widened to double).
// acc holds the rows of genes [u0, u1).
template <typename T>
using RowSumFn = void (*)(const T* row,
                          const Index* ids,
                          const Index* compact,
                          Index t0,
                          Index t1,
                          Index u0,
                          Index u1,
                          Index hidden,
                          double* acc);

struct AggregateKernels {
  RowSumFn<float> row_sum_f;
  RowSumFn<double> row_sum_d;

  template <typename T>
  RowSumFn<T> row_sum() const {
    if constexpr (std::is_same_v<T, float>) {
      return row_sum_f;
    } else {
      return row_sum_d;
    }
  }
};

GW_DECLARE_ISA_TABLE(AggregateKernels, kAggregateKernels)

inline const AggregateKernels& aggregate_kernels() {
  return GW_ACTIVE_ISA_TABLE(kAggregateKernels);
}

}  // namespace gw::detail
