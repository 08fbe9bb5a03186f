// Fuzz harness "linear_ot": differential. A transport problem of at most 12 x 12 decoded from the
// input (masses uniform or fuzzed with zeros, costs any finite doubles up to DBL_MAX / 16: ties,
// huge, subnormal, mixed signs) goes to LEMON's network simplex (solve_linear_ot, the reference)
// and to TransportSimplex twice: from scratch, and warm-started from the optimum of a second fuzzed
// cost on the same marginals. Both TransportSimplex plans must be feasible basic plans whose cost
// matches LEMON's within the integer-cost rounding; a mismatch aborts (a crash for libFuzzer), a
// cycling pivot rule shows as a timeout.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <span>
#include <vector>

#include "core/error.h"
#include "fuzz_input.h"
#include "linear_ot/linear_ot_reference.h"

namespace {

[[noreturn]] void fail(const char* what, double a, double b) {
  std::fprintf(stderr, "linear_ot fuzz: %s (%.17g vs %.17g)\n", what, a, b);
  std::abort();
}

// Costs up to this magnitude: <C, T> (a mass-weighted sum whose masses total 1 up to rounding)
// stays finite, so the two solvers' reported costs compare. At |C| near DBL_MAX the sum itself
// overflows in an order-dependent way (a run found -inf against LEMON's -DBL_MAX on the same
// optimum); that is arithmetic, not a solver difference.
constexpr double kMaxCost = std::numeric_limits<double>::max() / 16;

// A finite cost, often a tie with an earlier one.
double take_cost(gw::fuzz::FuzzInput& in, const std::vector<double>& earlier) {
  const std::uint8_t mode = in.take<std::uint8_t>();
  if (mode < 64 && !earlier.empty()) return earlier[mode % earlier.size()];
  const double v = in.take_double();
  return std::isfinite(v) ? std::clamp(v, -kMaxCost, kMaxCost) : 0.0;
}

// Non-negative masses, about a quarter of them zero, scaled to sum to `total`.
std::vector<double> take_masses(gw::fuzz::FuzzInput& in, std::size_t count, double total) {
  std::vector<double> m(count);
  double sum = 0.0;
  for (double& x : m) {
    const std::uint8_t raw = in.take<std::uint8_t>();
    x = raw < 64 ? 0.0 : static_cast<double>(raw);
    sum += x;
  }
  if (sum == 0.0) {
    m[0] = 1.0;
    sum = 1.0;
  }
  for (double& x : m) x *= total / sum;
  return m;
}

void check(const gw::LinearOtPlan& plan,
           const gw::LinearOtPlan& reference,
           const std::vector<double>& cost,
           const std::vector<double>& p,
           const std::vector<double>& q,
           double scale) {
  const std::size_t n = p.size(), k = q.size();
  if (plan.values.size() > n + k - 1)
    fail("more entries than a basis has", plan.values.size(), n + k - 1);
  std::vector<double> r(n, 0.0), c(k, 0.0);
  double total = 0.0;
  for (std::size_t e = 0; e < plan.values.size(); ++e) {
    if (!(plan.values[e] > 0.0)) fail("a non-positive entry", plan.values[e], 0.0);
    r[plan.rows[e]] += plan.values[e];
    c[plan.cols[e]] += plan.values[e];
    total += plan.values[e] * cost[plan.rows[e] * k + plan.cols[e]];
  }
  for (std::size_t i = 0; i < n; ++i)
    if (std::abs(r[i] - p[i]) > 1e-12) fail("a row sum off its mass", r[i], p[i]);
  for (std::size_t j = 0; j < k; ++j)
    if (std::abs(c[j] - q[j]) > 1e-12) fail("a column sum off its mass", c[j], q[j]);
  // Each solver is optimal for its own integer costs (units of max|C| / 2^40, rounded to nearest):
  // at most (n + k) entries x half a unit each from the optimum for C, per unit of mass.
  // Subnormal costs (max|C| below ~1e-308) lose mantissa bits in every product: 1e-300 absolute.
  const double tolerance = 1e-10 * scale + 1e-12 * std::abs(reference.cost) + 1e-300;
  if (std::abs(plan.cost - reference.cost) > tolerance)
    fail("cost differs from LEMON's", plan.cost, reference.cost);
  if (std::abs(total - plan.cost) > tolerance)
    fail("reported cost is not <C, T>", plan.cost, total);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gw::fuzz::FuzzInput in(data, size);
  const auto n = static_cast<gw::Index>(in.take_in(1, 12));
  const auto k = static_cast<gw::Index>(in.take_in(1, 12));
  const bool uniform = in.take_bool();
  std::vector<double> p(n, 1.0 / n), q(k, 1.0 / k);
  if (!uniform) {
    p = take_masses(in, n, 1.0);
    q = take_masses(in, k, 1.0);
  }
  std::vector<double> cost, other;
  for (gw::Index e = 0; e < n * k; ++e) cost.push_back(take_cost(in, cost));
  for (gw::Index e = 0; e < n * k; ++e) other.push_back(take_cost(in, other));
  double scale = 0.0;
  for (double c : cost) scale = std::max(scale, std::abs(c));

  const gw::LinearOtPlan reference = gw::solve_linear_ot(std::span<const double>(cost), n, k, p, q);
  gw::TransportSimplex cold(p, q);
  check(cold.solve(std::span<const double>(cost)), reference, cost, p, q, scale);
  gw::TransportSimplex warm(p, q);
  warm.solve(std::span<const double>(other));
  check(warm.solve(std::span<const double>(cost)), reference, cost, p, q, scale);
  return 0;
}
