// The transport simplex's per-arc loops (transport_simplex.cpp): the pricing scan and the
// conversion of each new cost to integers, compiled once per instruction-set target in
// simplex_isa.cpp (core/isa_dispatch_impl.h). Private to the solver.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/isa_dispatch_impl.h"

namespace gw::detail {

// min(0, min over j < len of cost[j] + pi_row - pi_col[j]): the most negative reduced cost of
// `len` arcs leaving one row node (0 when none is negative). Exact int64 arithmetic; the caller
// guarantees no term or sum overflows (|values| < 2^62). cost and pi_col need no alignment.
using ReducedCostMinFn = std::int64_t (*)(const std::int64_t* cost,
                                          std::int64_t pi_row,
                                          const std::int64_t* pi_col,
                                          int len);

// max |src[e]| over e < count, or -1 when any entry is NaN or infinite (0 for count 0).
template <typename CostT>
using AbsMaxFn = double (*)(const CostT* src, std::int64_t count);

// dst[e] = round(src[e] x factor) to nearest, ties to even, for |src[e] x factor| <= 2^50 (the
// caller's factor 2^kCostBits / max|src| keeps it within 2^40): the same integers as
// integer_costs() in linear_ot_impl.h.
template <typename CostT>
using ToIntegerFn =
    void (*)(const CostT* src, std::int64_t* dst, std::int64_t count, double factor);

struct SimplexKernels {
  ReducedCostMinFn reduced_cost_min;
  AbsMaxFn<double> abs_max_d;
  AbsMaxFn<float> abs_max_f;
  ToIntegerFn<double> to_integer_d;
  ToIntegerFn<float> to_integer_f;

  template <typename CostT>
  AbsMaxFn<CostT> abs_max() const {
    if constexpr (std::is_same_v<CostT, float>) {
      return abs_max_f;
    } else {
      return abs_max_d;
    }
  }
  template <typename CostT>
  ToIntegerFn<CostT> to_integer() const {
    if constexpr (std::is_same_v<CostT, float>) {
      return to_integer_f;
    } else {
      return to_integer_d;
    }
  }
};

GW_DECLARE_ISA_TABLE(SimplexKernels, kSimplexKernels)

inline const SimplexKernels& simplex_kernels() { return GW_ACTIVE_ISA_TABLE(kSimplexKernels); }

}  // namespace gw::detail
