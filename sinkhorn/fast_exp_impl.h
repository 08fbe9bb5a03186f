// A branch-free exp() for float and double that compilers vectorize inside `omp simd` loops
// (std::exp does not vectorize without -ffast-math / libmvec). Private to the module.
//
// Method: exp(x) = 2^n * exp(r) with n = round(x / ln 2) and r = x - n ln 2 (Cody-Waite: ln 2 in
// two parts so n * ln2_hi is exact), |r| <= ln(2)/2; exp(r) by a polynomial; 2^n by writing n
// into the exponent field. The float polynomial (degree 6) was fitted for minimal relative error
// on [-ln2/2, ln2/2] (fit error 2e-9, far below float's 6e-8); the double one is the Taylor
// series to degree 13 (truncation 2e-17).
//
// Accuracy (tested against std::exp in tests/sinkhorn): a few ulps on the normal range.
// Range: below kLo (-87.5 float, -708.5 double, where e^x is below the smallest normal number)
// the result is exactly +0, so e^-inf = 0; above kHi (88 / 709) it saturates at e^kHi (finite:
// 1.65e38 / 8.2e307) instead of overflowing. NaN propagates.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace gw::detail {

#if defined(__FMA__) || defined(__CUDA_ARCH__)
#define GW_SINKHORN_FMA(a, b, c) std::fma((a), (b), (c))
#else
// Without hardware FMA std::fma is a slow library call; plain arithmetic keeps the loops vector.
#define GW_SINKHORN_FMA(a, b, c) ((a) * (b) + (c))
#endif

inline float fast_exp(float x) {
  // Below kLo the result is < FLT_MIN (0 under FTZ anyway) and 2^n would leave the exponent
  // range; above kHi it would overflow. Those lanes are fixed by the two selects at the end rather
  // than by clamping x first: clamping made GCC specialize the whole polynomial per clamped case
  // (~12 extra vector instructions), while end selects cost one compare and one masked move each.
  constexpr float kLo = -87.5f;             // n >= -126 for every x >= kLo
  constexpr float kHi = 88.0f;              // n <= 127 and 2^n * e^r < FLT_MAX for every x <= kHi
  constexpr float kExpHi = 1.65163625e38f;  // e^88
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2Hi = 0.693145751953125f;  // 16 significant bits: n * kLn2Hi is exact
  constexpr float kLn2Lo = 1.428606765330187e-06f;
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float shifted = x * kLog2e + kShift;
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(shifted);  // low bits hold n
  const float n = shifted - kShift;
  float r = GW_SINKHORN_FMA(n, -kLn2Hi, x);
  r = GW_SINKHORN_FMA(n, -kLn2Lo, r);
  float p = 0.001384364930229314f;
  p = GW_SINKHORN_FMA(p, r, 0.0083741564567711f);
  p = GW_SINKHORN_FMA(p, r, 0.041668002180637376f);
  p = GW_SINKHORN_FMA(p, r, 0.16666431245187074f);
  p = GW_SINKHORN_FMA(p, r, 0.4999999420798894f);
  p = GW_SINKHORN_FMA(p, r, 1.0000000321703535f);
  p = GW_SINKHORN_FMA(p, r, 1.0f);
  // (n + 127) << 23; the high bits of `bits` (the shift constant) fall off the top.
  const float scale = std::bit_cast<float>((bits + 127u) << 23);
  float result = p * scale;
  // Comparisons with NaN are false, so NaN passes through.
  result = x < kLo ? 0.0f : result;
  result = x > kHi ? kExpHi : result;
  return result;
}

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

}  // namespace gw::detail
