#include "sinkhorn/sinkhorn_reference.h"

#include <cmath>
#include <vector>

#include "core/error.h"
#include "sinkhorn/sinkhorn_common_impl.h"

namespace gw {
namespace {

using detail::kInf;

double cost_at(const CostView& cost, Index i, Index j) {
  const Offset at = static_cast<Offset>(i) * cost.row_stride() + j;
  return cost.f32() != nullptr ? static_cast<double>(cost.f32()[at]) : cost.f64()[at];
}

// LSE_j((g_j - C_ij) / epsilon) in scaled units: log sum_j exp(v_j - C_ij / epsilon) with
// v = g / epsilon. Columns with potential -inf (zero mass) are skipped: their cost is never read.
// NaN for a NaN or -inf cost entry, -inf when no term is left.
double row_lse(const CostView& cost, Index i, const std::vector<double>& v, double epsilon) {
  double max = -kInf;
  for (Index j = 0; j < cost.cols(); ++j) {
    if (v[j] == -kInf) continue;
    const double y = v[j] - cost_at(cost, i, j) / epsilon;
    if (std::isnan(y) || y == kInf) return std::nan("");
    max = std::max(max, y);
  }
  if (max == -kInf) return max;
  double sum = 0.0;
  for (Index j = 0; j < cost.cols(); ++j) {
    if (v[j] != -kInf) sum += std::exp(v[j] - cost_at(cost, i, j) / epsilon - max);
  }
  return max + std::log(sum);
}

// LSE_i((f_i - C_ij) / epsilon), the column counterpart of row_lse.
double column_lse(const CostView& cost, Index j, const std::vector<double>& u, double epsilon) {
  double max = -kInf;
  for (Index i = 0; i < cost.rows(); ++i) {
    if (u[i] == -kInf) continue;
    const double y = u[i] - cost_at(cost, i, j) / epsilon;
    if (std::isnan(y) || y == kInf) return std::nan("");
    max = std::max(max, y);
  }
  if (max == -kInf) return max;
  double sum = 0.0;
  for (Index i = 0; i < cost.rows(); ++i) {
    if (u[i] != -kInf) sum += std::exp(u[i] - cost_at(cost, i, j) / epsilon - max);
  }
  return max + std::log(sum);
}

// A finite log-sum-exp is needed wherever the mass is positive; anything else is bad input.
void check_lse(double lse, const char* what, Index index) {
  GW_CHECK_CODE(!std::isnan(lse),
                ErrorCode::kBadData,
                "sinkhorn_reference: the cost has a NaN or -inf entry in " << what << " " << index);
  GW_CHECK_CODE(lse != -kInf,
                ErrorCode::kBadData,
                "sinkhorn_reference: " << what << " " << index
                                       << " has positive mass but no finite-cost entry towards "
                                          "any positive-mass partner");
}

}  // namespace

SinkhornResult sinkhorn_reference(const CostView& cost,
                                  std::span<const double> a,
                                  std::span<const double> b,
                                  double epsilon,
                                  std::span<double> f,
                                  std::span<double> g,
                                  const SinkhornOptions& options) {
  detail::validate_problem("sinkhorn_reference", cost, a, b, epsilon, f, g, options);
  const Index n = cost.rows();
  const Index k = cost.cols();
  const double tau_a = detail::damping(options.rho_a, epsilon);
  const double tau_b = detail::damping(options.rho_b, epsilon);

  std::vector<double> u(n), v(k), row_lses(n);
  for (Index i = 0; i < n; ++i) u[i] = detail::to_scaled(f[i], epsilon);
  for (Index j = 0; j < k; ++j) v[j] = detail::to_scaled(g[j], epsilon);

  SinkhornResult result;
  result.backend = Backend::kCpu;
  result.threads = 1;
  for (int t = 0;; ++t) {
    for (Index i = 0; i < n; ++i) {
      // A zero-mass row that already has the zero-mass potential is never read.
      if (a[i] == 0.0 && u[i] == -kInf) {
        row_lses[i] = -kInf;
        continue;
      }
      row_lses[i] = row_lse(cost, i, v, epsilon);
      GW_CHECK_CODE(!std::isnan(row_lses[i]),
                    ErrorCode::kBadData,
                    "sinkhorn_reference: the cost has a NaN or -inf entry in row " << i);
    }
    if (detail::is_check_iteration(t, options)) {
      double error = 0.0;
      for (Index i = 0; i < n; ++i) {
        const double row_mass = u[i] == -kInf ? 0.0 : std::exp(u[i] + row_lses[i]);
        error += detail::row_residual(row_mass, a[i], u[i], epsilon, options.rho_a);
      }
      if (detail::finish_check(t, error, options, result)) break;
    }
    for (Index i = 0; i < n; ++i) {
      if (a[i] > 0.0) check_lse(row_lses[i], "row", i);
      u[i] = detail::updated_potential(a[i], row_lses[i], tau_a);
    }
    for (Index j = 0; j < k; ++j) {
      if (b[j] == 0.0) {
        v[j] = -kInf;
        continue;
      }
      const double lse = column_lse(cost, j, u, epsilon);
      check_lse(lse, "column", j);
      v[j] = detail::updated_potential(b[j], lse, tau_b);
    }
  }
  for (Index i = 0; i < n; ++i) f[i] = detail::from_scaled(u[i], epsilon);
  for (Index j = 0; j < k; ++j) g[j] = detail::from_scaled(v[j], epsilon);
  return result;
}

void sinkhorn_plan_reference(const CostView& cost,
                             std::span<const double> f,
                             std::span<const double> g,
                             double epsilon,
                             std::span<double> plan) {
  GW_CHECK(plan.size() == static_cast<std::size_t>(cost.rows()) * cost.cols(),
           "sinkhorn_plan_reference: the plan has " << plan.size() << " entries, expected "
                                                    << cost.rows() << " x " << cost.cols());
  detail::validate_plan("sinkhorn_plan_reference",
                        cost,
                        f,
                        g,
                        epsilon,
                        PlanView(plan.data(), cost.rows(), cost.cols()),
                        SinkhornOptions{});
  for (Index i = 0; i < cost.rows(); ++i) {
    const double u = detail::to_scaled(f[i], epsilon);
    for (Index j = 0; j < cost.cols(); ++j) {
      const double v = detail::to_scaled(g[j], epsilon);
      const double x = u + v - cost_at(cost, i, j) / epsilon;
      plan[static_cast<std::size_t>(i) * cost.cols() + j] =
          (u == -kInf || v == -kInf) ? 0.0 : std::exp(x);
    }
  }
}

}  // namespace gw
