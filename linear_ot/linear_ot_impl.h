// What the two exact linear-OT solvers share (TransportSimplex, transport_simplex.h; the LEMON
// reference, linear_ot_reference.h): masses as 64-bit integers and costs as integers in units of max|C| / 2^kCostBits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/types.h"

namespace gw::detail {

// The simplex runs on integer costs, round(C / max|C| x 2^kCostBits), i.e. in units of
// quantum = max|C| / 2^kCostBits. On double costs, potentials updated incrementally pivot after
// pivot drift by rounding until an arc's reduced cost changes sign back and forth and the
// degenerate pivots cycle for ever (found by the solve fuzzer on an 8 x 9 problem); in integers
// every pivot is exact and the strongly feasible tree rule guarantees termination. The vertex is
// optimal for the rounded costs, i.e. within n_arcs_in_plan x quantum / 2 of the optimum for C,
// and its potentials leave every reduced cost of C above -quantum / 2.
inline constexpr int kCostBits = 40;

// The positive-mass rows and columns of a transport problem and their integer masses: exactly
// proportional when both sides are uniform and lcm(rows, cols) <= 2^50 (the common case), else
// scaled to a total of 2^50 (an error of at most 2^-50 of the total per entry). `unit` is the mass
// of one integer unit. Throws kInvalidArgument (naming `who`) on negative or non-finite masses and
// on sums that differ by more than 1e-9 relative.
struct IntegerMarginals {
  std::vector<Index> rows, cols;  // original indices of the positive-mass rows / columns
  std::vector<std::int64_t> supply, demand;
  double unit = 0.0;
};
IntegerMarginals integer_marginals(std::span<const double> p,
                                   std::span<const double> q,
                                   const char* who);

// max |C| over the active block (rows x cols of an n x k row-major cost); throws kInvalidArgument
// (naming `who` and the entry) on a non-finite entry.
template <typename CostT>
double active_cost_scale(std::span<const CostT> cost,
                         Index k,
                         const std::vector<Index>& rows,
                         const std::vector<Index>& cols,
                         const char* who);

// round(c / scale x 2^kCostBits); 0 when scale is 0. Dividing by max|C| first keeps the ratio in
// [-1, 1] however small max|C| is (c / quantum overflows when the quantum underflows).
inline std::int64_t integer_cost(double c, double scale) {
  constexpr double kUnits = static_cast<double>(std::int64_t{1} << kCostBits);
  return scale > 0.0 ? static_cast<std::int64_t>(__builtin_llround(c / scale * kUnits)) : 0;
}
// integer_cost over `count` values: dst[e] = round(src[e] / scale x 2^kCostBits) to nearest (ties
// to even), given scale = max |src| > 0 over them. Multiplies by 2^kCostBits / scale (one division
// in all) unless that factor would overflow (subnormal scales), and rounds with the 1.5 x 2^52
// trick (exact below 2^51), so the loop vectorizes; the per-entry division and llround of
// integer_cost made the conversion the larger part of a warm-started TransportSimplex solve.
template <typename CostT>
void integer_costs(const CostT* src, std::int64_t* dst, std::size_t count, double scale) {
  constexpr double kUnits = static_cast<double>(std::int64_t{1} << kCostBits);
  constexpr double kRound = 0x1.8p52;
  if (scale >= 0x1p-960) {
    const double factor = kUnits / scale;
    for (std::size_t e = 0; e < count; ++e) {
      const double t = static_cast<double>(src[e]) * factor;
      dst[e] = static_cast<std::int64_t>((t + kRound) - kRound);
    }
  } else {
    for (std::size_t e = 0; e < count; ++e)
      dst[e] = integer_cost(static_cast<double>(src[e]), scale);
  }
}

// An integer potential or reduced cost back in units of C.
inline double cost_from_integer(std::int64_t v, double scale) {
  constexpr double kUnits = static_cast<double>(std::int64_t{1} << kCostBits);
  return static_cast<double>(v) / kUnits * scale;
}

}  // namespace gw::detail
