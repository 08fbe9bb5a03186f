// The per-target inner loops of the sparse (CSR) Sinkhorn and of its plan pass
// (sparse_sinkhorn.cpp), compiled once per instruction-set target in sparse_sinkhorn_isa.cpp
// (core/isa_dispatch_impl.h). Private to the module.
//
// Each function works on one row (or one column, through the transpose) of a CSR support: `len`
// entries whose costs are contiguous and whose partners are reached through an index array. The
// caller owns all memory, threads and error handling. Exponentials are fast_exp (fast_exp_impl.h,
// ~1 ulp in double), so results match the std::exp versions to a few ulp.
#pragma once

#include <cstdint>

#include "core/isa_dispatch_impl.h"
#include "core/types.h"
#include "sinkhorn/sinkhorn.h"

namespace gw::detail {

// log sum_p exp(partner[index[p]] - cost[p] inv_eps) over p < len in double with a max shift;
// partners whose scaled potential is -inf are skipped. `scratch` holds len doubles (the shifted
// exponents between the max and the sum pass). Sets *bad to 1 when an exponent is NaN or +inf (a
// NaN or -inf cost); the return value is then meaningless. Returns -inf when every entry is
// skipped (or len is 0).
using SupportLseFn = double (*)(const float* cost,
                                const Index* index,
                                const double* partner,
                                double inv_eps,
                                std::int64_t len,
                                double* scratch,
                                int* bad);

// The momentum step on one row: for p < len,
//   fresh = u == -inf or v[index[p]] == -inf ? 0 : exp(u + v[index[p]] - cost[p] inv_eps)
//   plan[p] <- keep plan[p] + take fresh
// returning sum (delta plan)^2, sum cost plan and sum plan of the blended row (in double).
using SupportBlendFn = PlanBlendStats (*)(const float* cost,
                                          const Index* index,
                                          const double* v,
                                          double u,
                                          double inv_eps,
                                          double keep,
                                          double take,
                                          std::int64_t len,
                                          double* plan);

struct SparseSinkhornKernels {
  SupportLseFn support_lse;
  SupportBlendFn support_blend;
};

GW_DECLARE_ISA_TABLE(SparseSinkhornKernels, kSparseSinkhornKernels)

// The active target's table.
inline const SparseSinkhornKernels& sparse_sinkhorn_kernels() {
  return GW_ACTIVE_ISA_TABLE(kSparseSinkhornKernels);
}

}  // namespace gw::detail
