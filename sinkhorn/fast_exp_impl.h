// Vectorized exponentials for the Sinkhorn kernels. Private to the module.
//
// fast_exp2(y) = 2^y (float, double) and fast_exp(x) = e^x (double, for the exact fallbacks) are
// branch-free and vectorized by the compiler inside `omp simd` loops (std::exp does not vectorize
// without -ffast-math / libmvec). Method: 2^y = 2^n * 2^f with n = round(y), |f| <= 1/2 (for e^x:
// n = round(x / ln 2) and r = x - n ln 2 by Cody-Waite, ln 2 in two parts so that n * ln2_hi is
// exact), the fraction by a polynomial, 2^n by writing n into the exponent field. The float
// polynomial (degree 5) was fitted for minimal relative error on [-1/2, 1/2] (fit error 9e-8, 0.8
// ulp; degree 6 would cost one more FMA per entry in the hot loop for no visible gain at float32
// exponent resolution); the double ones are Taylor series to degree 13 (truncation 2e-17).
//
// exp2_row() is the streaming kernel of the solver's row pass and of the plan: it writes
// out_j = 2^(fma(c_j, scale, w_j) + shift) and returns their sum. With AVX-512 and matching cost
// and compute types, or float32 compute on a double cost (rounded to float as it is loaded, as
// the portable loop rounds it), it runs an intrinsics loop (vrndscale for n, vscalef for 2^n:
// about 40% fewer instructions than the portable bit trick, plus a software prefetch of the cost
// stream); otherwise the portable exp2_row_generic(). Prefetching past the end of the cost is
// harmless (prefetches never fault).
//
// Accuracy (tested against std::exp / std::exp2 in tests/sinkhorn): ~1 ulp on the normal range.
// Range: below the normal range (e^x: x < -708.5; 2^y: y < -126 / -1022) results are +0 (or a
// denormal that flush-to-zero turns into 0), so e^-inf = 2^-inf = 0. Above it, the portable
// functions saturate at e^709, 2^127 (float), 2^1023 (double), the AVX-512 kernel returns +inf;
// callers treat both as out of range. NaN propagates everywhere.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

// Everything here has internal linkage (an unnamed namespace): the kernel files compiled once per
// instruction-set target (*_isa.cpp, core/isa_dispatch_impl.h) each keep their own copy, so the
// linker can never hand an AVX-512 copy of these functions to a baseline caller.
namespace gw::detail {
namespace {

#if defined(__FMA__) || defined(__CUDA_ARCH__)
#define GW_SINKHORN_FMA(a, b, c) std::fma((a), (b), (c))
#else
// Without hardware FMA std::fma is a slow library call; plain arithmetic keeps the loops vector.
#define GW_SINKHORN_FMA(a, b, c) ((a) * (b) + (c))
#endif

inline double fast_exp(double x) {
  constexpr double kLo = -708.5;  // n >= -1022 for every x >= kLo
  constexpr double kHi = 709.0;   // n <= 1023 and 2^n * e^r < DBL_MAX for every x <= kHi
  constexpr double kExpHi = 8.218407461554972e307;  // e^709
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 32 significant bits
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  constexpr double kShift = 6755399441055744.0;  // 1.5 * 2^52
  const double shifted = x * kLog2e + kShift;
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(shifted);
  const double n = shifted - kShift;
  double r = GW_SINKHORN_FMA(n, -kLn2Hi, x);
  r = GW_SINKHORN_FMA(n, -kLn2Lo, r);
  // Taylor coefficients 1/13! ... 1/1!, 1.
  double p = 1.6059043836821613e-10;
  p = GW_SINKHORN_FMA(p, r, 2.08767569878680990e-09);
  p = GW_SINKHORN_FMA(p, r, 2.50521083854417188e-08);
  p = GW_SINKHORN_FMA(p, r, 2.75573192239858907e-07);
  p = GW_SINKHORN_FMA(p, r, 2.75573192239858907e-06);
  p = GW_SINKHORN_FMA(p, r, 2.48015873015873016e-05);
  p = GW_SINKHORN_FMA(p, r, 1.98412698412698413e-04);
  p = GW_SINKHORN_FMA(p, r, 1.38888888888888889e-03);
  p = GW_SINKHORN_FMA(p, r, 8.33333333333333333e-03);
  p = GW_SINKHORN_FMA(p, r, 4.16666666666666667e-02);
  p = GW_SINKHORN_FMA(p, r, 1.66666666666666667e-01);
  p = GW_SINKHORN_FMA(p, r, 0.5);
  p = GW_SINKHORN_FMA(p, r, 1.0);
  p = GW_SINKHORN_FMA(p, r, 1.0);
  const double scale = std::bit_cast<double>((bits + 1023u) << 52);
  double result = p * scale;
  result = x < kLo ? 0.0 : result;
  result = x > kHi ? kExpHi : result;
  return result;
}

inline float fast_exp2(float y) {
  constexpr float kLo = -126.0f;             // n >= -126 for every y >= kLo
  constexpr float kHi = 127.0f;              // n <= 127: 2^n * 2^f < FLT_MAX
  constexpr float kExp2Hi = 1.70141183e38f;  // 2^127
  constexpr float kShift = 12582912.0f;      // 1.5 * 2^23: adding it rounds to an integer
  const float shifted = y + kShift;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(shifted);  // low bits hold n
  const float f = y - (shifted - kShift);                            // exact, |f| <= 1/2
  float p = 0.001326472032815218f;
  p = GW_SINKHORN_FMA(p, f, 0.009671512991189957f);
  p = GW_SINKHORN_FMA(p, f, 0.05550733953714371f);
  p = GW_SINKHORN_FMA(p, f, 0.24022242426872253f);
  p = GW_SINKHORN_FMA(p, f, 0.6931470036506653f);
  p = GW_SINKHORN_FMA(p, f, 1.0f);
  float result = p * std::bit_cast<float>((bits + 127u) << 23);
  result = y < kLo ? 0.0f : result;  // comparisons with NaN are false: NaN passes through
  result = y > kHi ? kExp2Hi : result;
  return result;
}

inline double fast_exp2(double y) {
  constexpr double kLo = -1022.0;
  constexpr double kHi = 1023.0;
  constexpr double kExp2Hi = 8.98846567431158e307;  // 2^1023
  constexpr double kShift = 6755399441055744.0;     // 1.5 * 2^52
  const double shifted = y + kShift;
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(shifted);
  const double f = y - (shifted - kShift);
  // ln2^k / k!, k = 13 ... 1, then 1.
  double p = 1.3691488853904128e-12;
  p = GW_SINKHORN_FMA(p, f, 2.5678435993488206e-11);
  p = GW_SINKHORN_FMA(p, f, 4.4455382718708116e-10);
  p = GW_SINKHORN_FMA(p, f, 7.054911620801123e-09);
  p = GW_SINKHORN_FMA(p, f, 1.01780860092397e-07);
  p = GW_SINKHORN_FMA(p, f, 1.321548679014431e-06);
  p = GW_SINKHORN_FMA(p, f, 1.5252733804059841e-05);
  p = GW_SINKHORN_FMA(p, f, 0.0001540353039338161);
  p = GW_SINKHORN_FMA(p, f, 0.0013333558146428443);
  p = GW_SINKHORN_FMA(p, f, 0.009618129107628477);
  p = GW_SINKHORN_FMA(p, f, 0.05550410866482158);
  p = GW_SINKHORN_FMA(p, f, 0.24022650695910072);
  p = GW_SINKHORN_FMA(p, f, 0.6931471805599453);
  p = GW_SINKHORN_FMA(p, f, 1.0);
  double result = p * std::bit_cast<double>((bits + 1023u) << 52);
  result = y < kLo ? 0.0 : result;
  result = y > kHi ? kExp2Hi : result;
  return result;
}

// Float partial sums of exp2_row cover this many entries before they are added into double, so
// float rounding stays ~1e-6 relative.
inline constexpr std::int64_t kExp2RowBlock = 1024;

// out_j = fast_exp2(fma(c_j, scale, w_j) + shift) for j < k; returns sum_j out_j (float partial
// sums per kExp2RowBlock entries, accumulated in double). Portable: any cost / compute types.
template <typename CostT, typename T>
double exp2_row_generic(const CostT* __restrict c,
                        const T* __restrict w,
                        T shift,
                        T scale,
                        std::int64_t k,
                        T* __restrict out) {
  double total = 0.0;
  for (std::int64_t j0 = 0; j0 < k; j0 += kExp2RowBlock) {
    const std::int64_t j1 = std::min(k, j0 + kExp2RowBlock);
    T partial = 0;
#pragma omp simd reduction(+ : partial)
    for (std::int64_t j = j0; j < j1; ++j) {
      const T e = fast_exp2(GW_SINKHORN_FMA(static_cast<T>(c[j]), scale, w[j]) + shift);
      out[j] = e;
      partial += e;
    }
    total += static_cast<double>(partial);
  }
  return total;
}

#if defined(__AVX512F__)
// AVX-512 kernels: n = round(y) by vrndscale, 2^f by the same polynomials, 2^n by vscalef (which
// handles the whole range itself: 0 below, +inf above). y is first raised to at least -200 / -2000
// so that -inf gives 0 instead of NaN (max(lo, y) returns y when y is NaN).
inline __m512 exp2_avx512(__m512 y) {
  y = _mm512_max_ps(_mm512_set1_ps(-200.0f), y);
  const __m512 n = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(y, n);
  __m512 p = _mm512_set1_ps(0.001326472032815218f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.009671512991189957f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.05550733953714371f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.24022242426872253f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(0.6931470036506653f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

inline __m512d exp2_avx512(__m512d y) {
  y = _mm512_max_pd(_mm512_set1_pd(-2000.0), y);
  const __m512d n = _mm512_roundscale_pd(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512d f = _mm512_sub_pd(y, n);
  __m512d p = _mm512_set1_pd(1.3691488853904128e-12);
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(2.5678435993488206e-11));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(4.4455382718708116e-10));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(7.054911620801123e-09));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(1.01780860092397e-07));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(1.321548679014431e-06));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(1.5252733804059841e-05));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(0.0001540353039338161));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(0.0013333558146428443));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(0.009618129107628477));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(0.05550410866482158));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(0.24022650695910072));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(0.6931471805599453));
  p = _mm512_fmadd_pd(p, f, _mm512_set1_pd(1.0));
  return _mm512_scalef_pd(p, n);
}

// Software prefetch distance of the cost stream in the AVX-512 row kernels. With the exp work in
// the loop the hardware prefetcher alone leaves ~15% of the time in load stalls; 2-8 KB ahead
// measure the same, 16 KB worse (bench/RESULTS.md, "Calibrated constants").
inline constexpr int kCostPrefetchBytes = 4096;

// Lane sums in a fixed order (GCC 12's _mm512_reduce_add_pd warns about its own header).
inline double horizontal_sum(__m512 v) {
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float sum = 0.0f;
  for (float x : lanes) sum += x;
  return static_cast<double>(sum);
}
inline double horizontal_sum(__m512d v) {
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, v);
  double sum = 0.0;
  for (double x : lanes) sum += x;
  return sum;
}

// 16 costs as float: as stored, or rounded from double as static_cast<float> rounds them (the
// exact solver's float32 Sinkhorns on its float64 matrices). `count` < 16 loads that many, zeros
// after.
inline __m512 load16_ps(const float* c) { return _mm512_loadu_ps(c); }
inline __m512 load16_ps(const double* c) {
  return _mm512_insertf32x8(
      _mm512_castps256_ps512(_mm512_cvtpd_ps(_mm512_loadu_pd(c))),
      _mm512_cvtpd_ps(_mm512_loadu_pd(c + 8)),
      1);
}
inline __m512 load16_ps(const float* c, std::int64_t count) {
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << count) - 1u), c);
}
inline __m512 load16_ps(const double* c, std::int64_t count) {
  const auto lo = static_cast<__mmask8>(count >= 8 ? 0xFFu : (1u << count) - 1u);
  const auto hi = static_cast<__mmask8>(count <= 8 ? 0u : (1u << (count - 8)) - 1u);
  return _mm512_insertf32x8(
      _mm512_castps256_ps512(_mm512_cvtpd_ps(_mm512_maskz_loadu_pd(lo, c))),
      _mm512_cvtpd_ps(_mm512_maskz_loadu_pd(hi, c + 8)),
      1);
}

// Same contract as exp2_row_generic (float compute, float or double costs); masked loads and
// stores for the last partial vector.
template <typename CostT>
double exp2_row_avx512(const CostT* __restrict c,
                       const float* __restrict w,
                       float shift,
                       float scale,
                       std::int64_t k,
                       float* __restrict out) {
  const __m512 vscale = _mm512_set1_ps(scale);
  const __m512 vshift = _mm512_set1_ps(shift);
  double total = 0.0;
  for (std::int64_t j0 = 0; j0 < k; j0 += kExp2RowBlock) {
    const std::int64_t j1 = std::min(k, j0 + kExp2RowBlock);
    __m512 acc = _mm512_setzero_ps();
    std::int64_t j = j0;
    for (; j + 16 <= j1; j += 16) {
      _mm_prefetch(reinterpret_cast<const char*>(c + j) + kCostPrefetchBytes, _MM_HINT_T0);
      if constexpr (sizeof(CostT) == 8) {  // 16 doubles: two cache lines
        _mm_prefetch(reinterpret_cast<const char*>(c + j) + kCostPrefetchBytes + 64, _MM_HINT_T0);
      }
      const __m512 y = _mm512_add_ps(
          _mm512_fmadd_ps(load16_ps(c + j), vscale, _mm512_loadu_ps(w + j)), vshift);
      const __m512 e = exp2_avx512(y);
      _mm512_storeu_ps(out + j, e);
      acc = _mm512_add_ps(acc, e);
    }
    if (j < j1) {
      const auto mask = static_cast<__mmask16>((1u << (j1 - j)) - 1u);
      const __m512 y = _mm512_add_ps(
          _mm512_fmadd_ps(load16_ps(c + j, j1 - j), vscale, _mm512_maskz_loadu_ps(mask, w + j)),
          vshift);
      const __m512 e = exp2_avx512(y);
      _mm512_mask_storeu_ps(out + j, mask, e);
      acc = _mm512_mask_add_ps(acc, mask, acc, e);
    }
    total += horizontal_sum(acc);
  }
  return total;
}

inline double exp2_row_avx512(const double* __restrict c,
                              const double* __restrict w,
                              double shift,
                              double scale,
                              std::int64_t k,
                              double* __restrict out) {
  const __m512d vscale = _mm512_set1_pd(scale);
  const __m512d vshift = _mm512_set1_pd(shift);
  __m512d acc = _mm512_setzero_pd();
  std::int64_t j = 0;
  for (; j + 8 <= k; j += 8) {
    _mm_prefetch(reinterpret_cast<const char*>(c + j) + kCostPrefetchBytes, _MM_HINT_T0);
    const __m512d y = _mm512_add_pd(
        _mm512_fmadd_pd(_mm512_loadu_pd(c + j), vscale, _mm512_loadu_pd(w + j)), vshift);
    const __m512d e = exp2_avx512(y);
    _mm512_storeu_pd(out + j, e);
    acc = _mm512_add_pd(acc, e);
  }
  if (j < k) {
    const auto mask = static_cast<__mmask8>((1u << (k - j)) - 1u);
    const __m512d y = _mm512_add_pd(
        _mm512_fmadd_pd(
            _mm512_maskz_loadu_pd(mask, c + j), vscale, _mm512_maskz_loadu_pd(mask, w + j)),
        vshift);
    const __m512d e = exp2_avx512(y);
    _mm512_mask_storeu_pd(out + j, mask, e);
    acc = _mm512_mask_add_pd(acc, mask, acc, e);
  }
  return horizontal_sum(acc);
}
#endif  // __AVX512F__

// The row kernel the solver and the plan use: AVX-512 when available and the cost already has the
// compute type, the portable loop otherwise.
template <typename CostT, typename T>
double exp2_row(const CostT* __restrict c,
                const T* __restrict w,
                T shift,
                T scale,
                std::int64_t k,
                T* __restrict out) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<CostT, T> || std::is_same_v<T, float>) {
    return exp2_row_avx512(c, w, shift, scale, k, out);
  } else {
    return exp2_row_generic<CostT, T>(c, w, shift, scale, k, out);
  }
#else
  return exp2_row_generic<CostT, T>(c, w, shift, scale, k, out);
#endif
}

}  // namespace
}  // namespace gw::detail
