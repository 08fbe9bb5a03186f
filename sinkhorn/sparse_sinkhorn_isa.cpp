// The sparse Sinkhorn's per-row loops, compiled once per instruction-set target (GW_ISA_NS; see
// core/isa_dispatch_impl.h for the rules such a file follows). sparse_sinkhorn.cpp drives them.
//
// A row of the support has a few dozen entries whose partners are scattered, so the loops first
// gather the exponents into a contiguous scratch row (the gather is the memory-bound part), then
// run the max and the exponential sum as plain `omp simd` loops over it, which each target's
// compiler vectorizes at its own width with fast_exp (std::exp would stay scalar: it was the
// bulk of the sparse path's Sinkhorn time). Nothing here allocates, throws or synchronizes.
#include <cmath>
#include <cstdint>
#include <limits>

#include "sinkhorn/fast_exp_impl.h"
#include "sinkhorn/sparse_sinkhorn_kernels_impl.h"

namespace gw::detail::GW_ISA_NS {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double support_lse_kernel(const float* __restrict cost,
                          const Index* __restrict index,
                          const double* __restrict partner,
                          double inv_eps,
                          std::int64_t len,
                          double* __restrict scratch,
                          int* bad_out) {
  double max = -kInfinity;
  int bad = 0;
#pragma omp simd reduction(max : max) reduction(| : bad)
  for (std::int64_t p = 0; p < len; ++p) {
    const double v = partner[index[p]];
    const double y = v == -kInfinity ? -kInfinity : v - static_cast<double>(cost[p]) * inv_eps;
    bad |= (y != y || y == kInfinity) ? 1 : 0;
    max = y > max ? y : max;
    scratch[p] = y;
  }
  *bad_out = bad;
  if (bad != 0 || max == -kInfinity) return max;
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t p = 0; p < len; ++p) sum += fast_exp(scratch[p] - max);
  return max + std::log(sum);
}

PlanBlendStats support_blend_kernel(const float* __restrict cost,
                                    const Index* __restrict index,
                                    const double* __restrict v,
                                    double u,
                                    double inv_eps,
                                    double keep,
                                    double take,
                                    std::int64_t len,
                                    double* __restrict plan) {
  double change = 0.0, weighted = 0.0, mass = 0.0;
#pragma omp simd reduction(+ : change, weighted, mass)
  for (std::int64_t p = 0; p < len; ++p) {
    const double vj = v[index[p]];
    const double c = static_cast<double>(cost[p]);
    const double fresh =
        (u == -kInfinity || vj == -kInfinity) ? 0.0 : fast_exp(u + vj - c * inv_eps);
    const double old = plan[p];
    const double blended = keep * old + take * fresh;
    const double delta = blended - old;
    change += delta * delta;
    weighted += c * blended;
    mass += blended;
    plan[p] = blended;
  }
  return {change, weighted, mass};
}

}  // namespace

extern const SparseSinkhornKernels kSparseSinkhornKernels = {
    &support_lse_kernel,
    &support_blend_kernel,
};

}  // namespace gw::detail::GW_ISA_NS
