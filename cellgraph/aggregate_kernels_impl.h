// The per-gene segment mean of aggregate_by_gene (aggregate.cpp), compiled once per
// instruction-set target in aggregate_isa.cpp (core/isa_dispatch_impl.h). Private to cellgraph.
#pragma once

#include <type_traits>

#include "core/isa_dispatch_impl.h"
#include "core/types.h"

namespace gw::detail {

// mean[h] = (sum over t in [k0, k1) of emb[order[t] * hidden + h]) / (k1 - k0), summed in double in
// the order of `order`; acc is caller scratch of `hidden` doubles. k1 > k0.
template <typename T>
using SegmentMeanFn = void (*)(
    const T* emb, const Offset* order, Offset k0, Offset k1, Index hidden, double* acc, T* mean);

struct AggregateKernels {
  SegmentMeanFn<float> segment_mean_f;
  SegmentMeanFn<double> segment_mean_d;

  template <typename T>
  SegmentMeanFn<T> segment_mean() const {
    if constexpr (std::is_same_v<T, float>) {
      return segment_mean_f;
    } else {
      return segment_mean_d;
    }
  }
};

GW_DECLARE_ISA_TABLE(AggregateKernels, kAggregateKernels)

inline const AggregateKernels& aggregate_kernels() {
  return GW_ACTIVE_ISA_TABLE(kAggregateKernels);
}

}  // namespace gw::detail
