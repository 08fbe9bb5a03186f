// The transport simplex's per-arc loops, compiled once per instruction-set target (GW_ISA_NS; see
// core/isa_dispatch_impl.h for the rules such a file follows).
//
// Why intrinsics: the scan is a min-reduction over int64 reduced costs, ~90% of the simplex's time
// on the sizes the exact GW solver meets (a full scan of all n x k arcs proves each optimum). The
// plain loop carries its minimum through a compare + cmov chain (about 2 cycles per arc); GCC 12
// vectorizes it for x86-64-v3 with a single accumulator (0.4 ns per arc on Zen 4), while two
// independent AVX2 accumulators (vpcmpgtq + vpblendvb; AVX2 has no 64-bit min) reach 0.2 ns and
// AVX-512's vpminsq less. The scalar target keeps four independent minima for the same reason.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "linear_ot/simplex_kernels_impl.h"

namespace gw::detail::GW_ISA_NS {
namespace {

std::int64_t min64(std::int64_t a, std::int64_t b) { return b < a ? b : a; }

std::int64_t reduced_cost_min_kernel(const std::int64_t* __restrict cost,
                                     std::int64_t pi_row,
                                     const std::int64_t* __restrict pi_col,
                                     int len) {
  int j = 0;
  std::int64_t low = 0;
#if defined(__AVX512F__)
  const __m512i row = _mm512_set1_epi64(pi_row);
  __m512i a0 = _mm512_setzero_si512(), a1 = a0;
  for (; j + 16 <= len; j += 16) {
    const __m512i x0 = _mm512_sub_epi64(_mm512_add_epi64(_mm512_loadu_si512(cost + j), row),
                                        _mm512_loadu_si512(pi_col + j));
    const __m512i x1 = _mm512_sub_epi64(_mm512_add_epi64(_mm512_loadu_si512(cost + j + 8), row),
                                        _mm512_loadu_si512(pi_col + j + 8));
    // The masked forms: GCC 12's unmasked _mm512_min_epi64 warns of an uninitialized operand.
    a0 = _mm512_mask_min_epi64(a0, 0xFF, a0, x0);
    a1 = _mm512_mask_min_epi64(a1, 0xFF, a1, x1);
  }
  // The last len % 16 arcs by masked loads (masked-out lanes are not read): a scalar tail was up
  // to 15 dependent compares, as long as the vector loop on the pricing's typical 100-200-arc
  // rows.
  for (; j < len; j += 8) {
    const int rest = len - j;
    const __mmask8 m = rest >= 8 ? static_cast<__mmask8>(0xFF)
                                 : static_cast<__mmask8>((1u << rest) - 1u);
    const __m512i x = _mm512_sub_epi64(
        _mm512_add_epi64(_mm512_maskz_loadu_epi64(m, cost + j), row),
        _mm512_maskz_loadu_epi64(m, pi_col + j));
    a0 = _mm512_mask_min_epi64(a0, m, a0, x);
  }
  alignas(64) std::int64_t lanes[8];
  _mm512_store_si512(lanes, _mm512_mask_min_epi64(a0, 0xFF, a0, a1));
  for (const std::int64_t lane : lanes) low = min64(low, lane);
#elif defined(__AVX2__)
  const __m256i row = _mm256_set1_epi64x(pi_row);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0;
  for (; j + 8 <= len; j += 8) {
    const __m256i x0 = _mm256_sub_epi64(
        _mm256_add_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(cost + j)), row),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pi_col + j)));
    const __m256i x1 = _mm256_sub_epi64(
        _mm256_add_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(cost + j + 4)), row),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(pi_col + j + 4)));
    a0 = _mm256_blendv_epi8(a0, x0, _mm256_cmpgt_epi64(a0, x0));
    a1 = _mm256_blendv_epi8(a1, x1, _mm256_cmpgt_epi64(a1, x1));
  }
  a0 = _mm256_blendv_epi8(a0, a1, _mm256_cmpgt_epi64(a0, a1));
  alignas(32) std::int64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), a0);
  low = min64(min64(lanes[0], lanes[1]), min64(lanes[2], lanes[3]));
#else
  std::int64_t l0 = 0, l1 = 0, l2 = 0, l3 = 0;
  for (; j + 4 <= len; j += 4) {
    l0 = min64(l0, cost[j] + pi_row - pi_col[j]);
    l1 = min64(l1, cost[j + 1] + pi_row - pi_col[j + 1]);
    l2 = min64(l2, cost[j + 2] + pi_row - pi_col[j + 2]);
    l3 = min64(l3, cost[j + 3] + pi_row - pi_col[j + 3]);
  }
  low = min64(min64(l0, l1), min64(l2, l3));
#endif
  for (; j < len; ++j) low = min64(low, cost[j] + pi_row - pi_col[j]);
  return low;
}

// Plain loops that every target vectorizes (the max through `omp simd`, since without it GCC keeps
// a floating-point max reduction scalar): the max, plus a sum of |v| x 0, which is 0 unless some
// entry is NaN or infinite (then NaN). The conversion uses the 1.5 x 2^52 trick on the bits:
// t + 1.5 x 2^52 lies in [2^52, 2^53), where doubles are spaced by 1, so its low bits hold
// round(t); baseline x86-64 has no vector double -> int64 conversion, and a scalar cvttsd2si per
// arc was half of a warm-started solve.
template <typename CostT>
double abs_max_kernel(const CostT* __restrict src, std::int64_t count) {
  double high = 0.0, poison = 0.0;
#pragma omp simd reduction(max : high) reduction(+ : poison)
  for (std::int64_t e = 0; e < count; ++e) {
    const double a = std::abs(static_cast<double>(src[e]));
    high = a > high ? a : high;
    poison += a * 0.0;
  }
  return poison == 0.0 ? high : -1.0;
}

template <typename CostT>
void to_integer_kernel(const CostT* __restrict src,
                       std::int64_t* __restrict dst,
                       std::int64_t count,
                       double factor) {
  constexpr double kRound = 0x1.8p52;
  constexpr std::int64_t kRoundBits = std::bit_cast<std::int64_t>(kRound);
  for (std::int64_t e = 0; e < count; ++e) {
    const double t = static_cast<double>(src[e]) * factor + kRound;
    dst[e] = std::bit_cast<std::int64_t>(t) - kRoundBits;
  }
}

}  // namespace

extern const SimplexKernels kSimplexKernels = {
    &reduced_cost_min_kernel,
    &abs_max_kernel<double>,
    &abs_max_kernel<float>,
    &to_integer_kernel<double>,
    &to_integer_kernel<float>,
};

}  // namespace gw::detail::GW_ISA_NS
