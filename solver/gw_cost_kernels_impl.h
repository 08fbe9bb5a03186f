// The GW loop's cost GEMM, compiled once per instruction-set target in gw_cost_isa.cpp
// (core/isa_dispatch_impl.h). Private to the solver.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/isa_dispatch_impl.h"
#include "core/types.h"

namespace gw::detail {

// out = left * right^T: left is rows x inner and right is cols x inner, both row-major and dense;
// out is rows x cols with row stride out_stride (>= cols). Multithreaded with OpenMP (Eigen's
// blocked GEMM, compiled for the target).
template <typename Real>
using GemmAbtFn = void (*)(const Real* left,
                           const Real* right,
                           Index rows,
                           Index cols,
                           Index inner,
                           Real* out,
                           Offset out_stride);

struct GwCostKernels {
  GemmAbtFn<float> gemm_abt_f;
  GemmAbtFn<double> gemm_abt_d;

  template <typename Real>
  GemmAbtFn<Real> gemm_abt() const {
    if constexpr (std::is_same_v<Real, float>) {
      return gemm_abt_f;
    } else {
      return gemm_abt_d;
    }
  }
};

GW_DECLARE_ISA_TABLE(GwCostKernels, kGwCostKernels)

inline const GwCostKernels& gw_cost_kernels() { return GW_ACTIVE_ISA_TABLE(kGwCostKernels); }

}  // namespace gw::detail
