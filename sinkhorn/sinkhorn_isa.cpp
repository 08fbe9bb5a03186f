// The fused Sinkhorn's inner loops, compiled once per instruction-set target (GW_ISA_NS; see
// core/isa_dispatch_impl.h for the rules such a file follows). sinkhorn_cpu.cpp drives them.
//
// The loops are plain `omp simd` C++ that each target's compiler vectorizes at its own width; with
// AVX-512 the row exponential takes the intrinsics path of fast_exp_impl.h (vscalef). Nothing here
// allocates, throws or synchronizes.
#include <cmath>
#include <cstdint>
#include <limits>

#include "sinkhorn/fast_exp_impl.h"
#include "sinkhorn/sinkhorn_kernels_impl.h"

namespace gw::detail::GW_ISA_NS {
namespace {

constexpr double kLn2 = 0.6931471805599453;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

template <typename CostT, typename T>
double exp2_row_kernel(const CostT* c, const T* w, T shift, T scale, std::int64_t k, T* out) {
  return exp2_row<CostT, T>(c, w, shift, scale, k, out);
}

template <typename CostT, typename T>
double exact_row_lse_kernel(const CostT* __restrict c,
                            const T* __restrict wt,
                            double inv_eps,
                            std::int64_t k,
                            int* bad_out) {
  double max = -kInfinity;
  int bad = 0;
#pragma omp simd reduction(max : max) reduction(| : bad)
  for (std::int64_t j = 0; j < k; ++j) {
    const double v = static_cast<double>(wt[j]) * kLn2;
    const double y = v == -kInfinity ? -kInfinity : v - static_cast<double>(c[j]) * inv_eps;
    bad |= (y != y || y == kInfinity) ? 1 : 0;
    max = y > max ? y : max;
  }
  *bad_out = bad;
  if (bad != 0 || max == -kInfinity) return max;
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t j = 0; j < k; ++j) {
    const double v = static_cast<double>(wt[j]) * kLn2;
    const double y = v == -kInfinity ? -kInfinity : v - static_cast<double>(c[j]) * inv_eps;
    sum += fast_exp(y - max);
  }
  return max + std::log(sum);
}

template <typename T>
void scaled_add_kernel(const T* __restrict p, T scale, std::int64_t k, T* __restrict acc) {
#pragma omp simd
  for (std::int64_t j = 0; j < k; ++j) acc[j] = GW_SINKHORN_FMA(p[j], scale, acc[j]);
}

template <typename T>
void scaled_add2_kernel(const T* __restrict p0,
                        T s0,
                        const T* __restrict p1,
                        T s1,
                        std::int64_t k,
                        T* __restrict acc) {
#pragma omp simd
  for (std::int64_t j = 0; j < k; ++j) {
    acc[j] = GW_SINKHORN_FMA(p1[j], s1, GW_SINKHORN_FMA(p0[j], s0, acc[j]));
  }
}

template <typename T>
void flush_kernel(T* __restrict acc, double* __restrict sum, std::int64_t k) {
#pragma omp simd
  for (std::int64_t j = 0; j < k; ++j) {
    sum[j] += static_cast<double>(acc[j]);
    acc[j] = 0;
  }
}

template <typename T, typename OutT>
void scale_store_kernel(const T* __restrict r, T scale, std::int64_t k, OutT* __restrict out) {
#pragma omp simd
  for (std::int64_t j = 0; j < k; ++j) out[j] = static_cast<OutT>(r[j] * scale);
}

template <typename CostT, typename T, typename PlanT>
PlanBlendStats blend_row_kernel(const T* __restrict r,
                                T correction,
                                const CostT* __restrict c,
                                PlanT keep,
                                PlanT take,
                                std::int64_t cols,
                                PlanT* __restrict p) {
  double change = 0.0, weighted = 0.0, mass = 0.0;
#pragma omp simd reduction(+ : change, weighted, mass)
  for (std::int64_t j = 0; j < cols; ++j) {
    const PlanT blended = keep * p[j] + take * static_cast<PlanT>(r[j] * correction);
    const double delta = static_cast<double>(blended) - static_cast<double>(p[j]);
    change += delta * delta;
    weighted += static_cast<double>(c[j]) * static_cast<double>(blended);
    mass += static_cast<double>(blended);
    p[j] = blended;
  }
  return {change, weighted, mass};
}

}  // namespace

extern const SinkhornKernels kSinkhornKernels = {
    &exp2_row_kernel<float, float>,
    &exp2_row_kernel<double, float>,
    &exp2_row_kernel<float, double>,
    &exp2_row_kernel<double, double>,
    &exact_row_lse_kernel<float, float>,
    &exact_row_lse_kernel<double, float>,
    &exact_row_lse_kernel<float, double>,
    &exact_row_lse_kernel<double, double>,
    &scaled_add_kernel<float>,
    &scaled_add_kernel<double>,
    &scaled_add2_kernel<float>,
    &scaled_add2_kernel<double>,
    &flush_kernel<float>,
    &flush_kernel<double>,
    &scale_store_kernel<float, float>,
    &scale_store_kernel<float, double>,
    &scale_store_kernel<double, float>,
    &scale_store_kernel<double, double>,
    &blend_row_kernel<float, float, float>,
    &blend_row_kernel<float, float, double>,
    &blend_row_kernel<float, double, float>,
    &blend_row_kernel<float, double, double>,
    &blend_row_kernel<double, float, float>,
    &blend_row_kernel<double, float, double>,
    &blend_row_kernel<double, double, float>,
    &blend_row_kernel<double, double, double>,
};

}  // namespace gw::detail::GW_ISA_NS
