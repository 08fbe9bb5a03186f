#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/error.h"
#include "sinkhorn/sinkhorn.h"
#include "sinkhorn/sinkhorn_common_impl.h"

namespace gw {

bool SinkhornOptions::is_valid(std::string* why) const {
  std::ostringstream message;
  if (max_iterations < 0) {
    message << "max_iterations must be >= 0, got " << max_iterations;
  } else if (!(tolerance >= 0.0) || std::isinf(tolerance)) {
    message << "tolerance must be finite and >= 0, got " << tolerance;
  } else if (check_every < 1) {
    message << "check_every must be >= 1, got " << check_every;
  } else if (!(rho_a > 0.0)) {
    message << "rho_a must be > 0 (+infinity for a hard row constraint), got " << rho_a;
  } else if (!(rho_b > 0.0)) {
    message << "rho_b must be > 0 (+infinity for a hard column constraint), got " << rho_b;
  } else if (threads < 0) {
    message << "threads must be >= 0 (0 = all), got " << threads;
  } else {
    return true;
  }
  if (why != nullptr) *why = message.str();
  return false;
}

std::string_view to_string(SinkhornTermination termination) {
  switch (termination) {
    case SinkhornTermination::kNotRun:
      return "not run";
    case SinkhornTermination::kConverged:
      return "converged";
    case SinkhornTermination::kMaxIterations:
      return "max iterations";
    case SinkhornTermination::kNonFinite:
      return "non-finite";
  }
  return "unknown";
}

namespace detail {

void check_options(const char* who, const SinkhornOptions& options) {
  std::string why;
  GW_CHECK(options.is_valid(&why), who << ": SinkhornOptions." << why);
}

void check_cost_shape(const char* who, const CostView& cost) {
  GW_CHECK(cost.data() != nullptr, who << ": the cost view has no data pointer");
  GW_CHECK(cost.rows() >= 1 && cost.cols() >= 1,
           who << ": the cost must have at least one row and one column, got " << cost.rows()
               << " x " << cost.cols());
  GW_CHECK(cost.row_stride() >= cost.cols(),
           who << ": the cost's row_stride (" << cost.row_stride()
               << ") is smaller than its column count (" << cost.cols() << ")");
}

void check_epsilon(const char* who, double epsilon) {
  GW_CHECK(epsilon > 0.0 && std::isfinite(epsilon),
           who << ": epsilon must be finite and > 0, got " << epsilon);
}

double checked_mass(const char* who, std::span<const double> m, const char* name) {
  double total = 0.0;
  for (std::size_t i = 0; i < m.size(); ++i) {
    GW_CHECK_CODE(std::isfinite(m[i]) && m[i] >= 0.0,
                  ErrorCode::kBadData,
                  who << ": marginal " << name << "[" << i << "] = " << m[i]
                      << " is not a finite, non-negative mass");
    total += m[i];
  }
  GW_CHECK_CODE(total > 0.0,
                ErrorCode::kBadData,
                who << ": marginal " << name << " has zero total mass; give it positive entries");
  return total;
}

void check_balance(const char* who, double mass_a, double mass_b, const SinkhornOptions& options) {
  if (!std::isinf(options.rho_a) || !std::isinf(options.rho_b)) return;
  GW_CHECK(std::abs(mass_a - mass_b) <= kMassMismatchTolerance * std::max(mass_a, mass_b),
           who << ": balanced transport needs equal masses, got sum(a) = " << mass_a
               << " and sum(b) = " << mass_b
               << "; normalize the marginals or set rho_a / rho_b for unbalanced transport");
}

void check_potentials(const char* who, std::span<const double> values, const char* name) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    GW_CHECK_CODE(!std::isnan(values[i]) && values[i] != kInf,
                  ErrorCode::kBadData,
                  who << ": potential " << name << "[" << i << "] = " << values[i]
                      << " is NaN or +inf; start from zeros or a previous solution");
  }
}

void validate_problem(const char* who,
                      const CostView& cost,
                      std::span<const double> a,
                      std::span<const double> b,
                      double epsilon,
                      std::span<const double> f,
                      std::span<const double> g,
                      const SinkhornOptions& options) {
  check_options(who, options);
  check_cost_shape(who, cost);
  const auto n = static_cast<std::size_t>(cost.rows());
  const auto k = static_cast<std::size_t>(cost.cols());
  GW_CHECK(a.size() == n,
           who << ": marginal a has " << a.size() << " entries, the cost has " << n << " rows");
  GW_CHECK(b.size() == k,
           who << ": marginal b has " << b.size() << " entries, the cost has " << k << " columns");
  GW_CHECK(f.size() == n,
           who << ": potential f has " << f.size() << " entries, the cost has " << n << " rows");
  GW_CHECK(g.size() == k,
           who << ": potential g has " << g.size() << " entries, the cost has " << k << " columns");
  check_epsilon(who, epsilon);
  check_balance(who, checked_mass(who, a, "a"), checked_mass(who, b, "b"), options);
  check_potentials(who, f, "f");
  check_potentials(who, g, "g");
}

void validate_plan(const char* who,
                   const CostView& cost,
                   std::span<const double> f,
                   std::span<const double> g,
                   double epsilon,
                   const PlanView& plan,
                   const SinkhornOptions& options) {
  GW_CHECK(options.threads >= 0,
           who << ": SinkhornOptions.threads must be >= 0, got " << options.threads);
  check_cost_shape(who, cost);
  GW_CHECK(f.size() == static_cast<std::size_t>(cost.rows()),
           who << ": potential f has " << f.size() << " entries, the cost has " << cost.rows()
               << " rows");
  GW_CHECK(g.size() == static_cast<std::size_t>(cost.cols()),
           who << ": potential g has " << g.size() << " entries, the cost has " << cost.cols()
               << " columns");
  check_epsilon(who, epsilon);
  GW_CHECK(plan.data() != nullptr, who << ": the plan view has no data pointer");
  GW_CHECK(plan.rows() == cost.rows() && plan.cols() == cost.cols(),
           who << ": the plan is " << plan.rows() << " x " << plan.cols() << " but the cost is "
               << cost.rows() << " x " << cost.cols());
  GW_CHECK(plan.row_stride() >= plan.cols(),
           who << ": the plan's row_stride (" << plan.row_stride()
               << ") is smaller than its column count (" << plan.cols() << ")");
  check_potentials(who, f, "f");
  check_potentials(who, g, "g");
}

bool finish_check(int t, double error, const SinkhornOptions& options, SinkhornResult& result) {
  result.iterations = t;
  result.marginal_error = error;
  std::ostringstream message;
  // +inf is a legitimate (if useless) residual: a warm start on a much lower cost overflows the
  // plan's mass in double before the first update brings it back. Only NaN means breakdown.
  if (std::isnan(error)) {
    result.termination = SinkhornTermination::kNonFinite;
    message << "marginal error became NaN after " << t
            << " iterations; potentials are left as they were at that check";
  } else if (options.tolerance > 0.0 && error <= options.tolerance) {
    result.termination = SinkhornTermination::kConverged;
    message << "converged in " << t << " iterations (marginal error " << error << " <= tolerance "
            << options.tolerance << ")";
  } else if (t >= options.max_iterations) {
    result.termination = SinkhornTermination::kMaxIterations;
    message << "reached max_iterations = " << options.max_iterations << " with marginal error "
            << error << " > tolerance " << options.tolerance;
  } else {
    return false;
  }
  result.message = message.str();
  return true;
}

}  // namespace detail
}  // namespace gw
