// The integer form of a transport problem that both network simplexes solve (linear_ot_impl.h):
// masses as 64-bit integers, costs scaled by their largest magnitude.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "core/error.h"
#include "linear_ot/linear_ot_impl.h"

namespace gw {

namespace {

constexpr std::int64_t kMassTotal = std::int64_t{1} << 50;

// Integer masses of the positive entries of `mass` (indices `active`), summing to `total`. Every
// positive entry gets at least one unit: a mass below 2^-50 of the total would otherwise round to
// zero, and a zero-demand column's artificial arc in the starting star points away from the root
// with zero flow, which breaks the strongly feasible tree that termination rests on. The rounding
// remainder (fewer than active.size() units either way) goes on the largest entry.
std::vector<std::int64_t> integer_masses(std::span<const double> mass,
                                         const std::vector<Index>& active,
                                         double sum,
                                         std::int64_t total) {
  std::vector<std::int64_t> out(active.size());
  std::int64_t used = 0;
  std::size_t largest = 0;
  for (std::size_t a = 0; a < active.size(); ++a) {
    const double m = mass[active[a]];
    out[a] = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::floor(m / sum * static_cast<double>(total))));
    used += out[a];
    if (m > mass[active[largest]]) largest = a;
  }
  out[largest] += total - used;
  return out;
}

bool all_equal(std::span<const double> mass, const std::vector<Index>& active) {
  for (Index i : active) {
    if (std::abs(mass[i] - mass[active[0]]) > 1e-12 * mass[active[0]]) return false;
  }
  return true;
}

}  // namespace

namespace detail {

IntegerMarginals integer_marginals(std::span<const double> p,
                                   std::span<const double> q,
                                   const char* who) {
  IntegerMarginals m;
  double p_sum = 0.0, q_sum = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    GW_CHECK(std::isfinite(p[i]) && p[i] >= 0.0, who << ": p[" << i << "] = " << p[i]);
    if (p[i] > 0.0) m.rows.push_back(static_cast<Index>(i));
    p_sum += p[i];
  }
  for (std::size_t j = 0; j < q.size(); ++j) {
    GW_CHECK(std::isfinite(q[j]) && q[j] >= 0.0, who << ": q[" << j << "] = " << q[j]);
    if (q[j] > 0.0) m.cols.push_back(static_cast<Index>(j));
    q_sum += q[j];
  }
  GW_CHECK(p_sum > 0.0 && std::abs(p_sum - q_sum) <= 1e-9 * p_sum,
           who << ": marginal sums differ (" << p_sum << " vs " << q_sum << ")");
  const auto nr = static_cast<std::int64_t>(m.rows.size());
  const auto nc = static_cast<std::int64_t>(m.cols.size());
  std::int64_t total = kMassTotal;
  const std::int64_t lcm = std::lcm<std::int64_t>(nr, nc);
  if (all_equal(p, m.rows) && all_equal(q, m.cols) && lcm <= kMassTotal) {
    total = lcm;
    m.supply.assign(m.rows.size(), lcm / nr);
    m.demand.assign(m.cols.size(), lcm / nc);
  } else {
    m.supply = integer_masses(p, m.rows, p_sum, total);
    m.demand = integer_masses(q, m.cols, q_sum, total);
  }
  m.unit = p_sum / static_cast<double>(total);
  return m;
}

template <typename CostT>
double active_cost_scale(std::span<const CostT> cost,
                         Index k,
                         const std::vector<Index>& rows,
                         const std::vector<Index>& cols,
                         const char* who) {
  // One pass per row, written so that it vectorizes: max |v|, and whether any |v| failed
  // |v| <= DBL_MAX (NaN or infinity); the offending entry is located only then.
  double scale = 0.0;
  bool finite = true;
  const bool all_cols = cols.size() == static_cast<std::size_t>(k);
  for (Index r : rows) {
    const CostT* row = cost.data() + static_cast<std::size_t>(r) * k;
    double high = 0.0;
    bool ok = true;
    if (all_cols) {
      for (Index c = 0; c < k; ++c) {
        const double a = std::abs(static_cast<double>(row[c]));
        ok &= a <= std::numeric_limits<double>::max();
        high = a > high ? a : high;
      }
    } else {
      for (Index c : cols) {
        const double a = std::abs(static_cast<double>(row[c]));
        ok &= a <= std::numeric_limits<double>::max();
        high = a > high ? a : high;
      }
    }
    finite &= ok;
    scale = std::max(scale, high);
  }
  if (!finite) {
    for (Index r : rows)
      for (Index c : cols) {
        const double v = static_cast<double>(cost[static_cast<std::size_t>(r) * k + c]);
        GW_CHECK(std::isfinite(v), who << ": cost entry (" << r << ", " << c << ") is " << v);
      }
  }
  return scale;
}

template double active_cost_scale(std::span<const double>,
                                  Index,
                                  const std::vector<Index>&,
                                  const std::vector<Index>&,
                                  const char*);
template double active_cost_scale(std::span<const float>,
                                  Index,
                                  const std::vector<Index>&,
                                  const std::vector<Index>&,
                                  const char*);

}  // namespace detail


}  // namespace gw
