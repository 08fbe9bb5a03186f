// The exact solver's public building blocks (exact.h): the GW gradient, the line search of the
// conditional-gradient step and the exact distance profiles, on the ExactGw state the solver
// itself uses.
#include <Eigen/Core>

#include <span>
#include <vector>

#include "core/error.h"
#include "solver/exact/exact.h"
#include "solver/exact/exact_gw_impl.h"
#include "solver/exact/exact_runner_impl.h"
#include "solver/exact/profile_starts_impl.h"

namespace gw {

void gw_gradient(std::span<const double> dx,
                 std::span<const double> dy,
                 std::span<const double> plan,
                 Index n,
                 Index k,
                 std::span<double> gradient) {
  GW_CHECK(dx.size() == static_cast<std::size_t>(n) * n &&
               dy.size() == static_cast<std::size_t>(k) * k &&
               plan.size() == static_cast<std::size_t>(n) * k &&
               gradient.size() == static_cast<std::size_t>(n) * k,
           "gw_gradient: shapes do not match " << n << " x " << k);
  using M = detail::Mat<double>;
  detail::ExactGw<double> gw(Eigen::Map<const M>(dx.data(), n, n),
                             Eigen::Map<const M>(dy.data(), k, k),
                             {},
                             {},
                             nullptr,
                             0.0);
  gw.set_plan(plan);
  gw.objective();
  Eigen::Map<M>(gradient.data(), n, k) = gw.gradient();
}

double gw_line_search(std::span<const double> dx,
                      std::span<const double> dy,
                      std::span<const double> plan,
                      std::span<const double> vertex,
                      Index n,
                      Index k,
                      std::span<const double> feature_cost,
                      double fused_weight) {
  GW_CHECK(dx.size() == static_cast<std::size_t>(n) * n &&
               dy.size() == static_cast<std::size_t>(k) * k &&
               plan.size() == static_cast<std::size_t>(n) * k &&
               vertex.size() == static_cast<std::size_t>(n) * k,
           "gw_line_search: shapes do not match " << n << " x " << k);
  GW_CHECK(fused_weight == 0.0 || feature_cost.size() == static_cast<std::size_t>(n) * k,
           "gw_line_search: fused_weight " << fused_weight << " needs an n x k feature cost");
  using M = detail::Mat<double>;
  detail::ExactGw<double> gw(Eigen::Map<const M>(dx.data(), n, n),
                             Eigen::Map<const M>(dy.data(), k, k),
                             {},
                             {},
                             feature_cost.empty() ? nullptr : feature_cost.data(),
                             fused_weight);
  gw.set_plan(plan);
  gw.objective();
  gw.gradient();
  detail::Vertex s;
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < k; ++j) {
      const double v = vertex[static_cast<std::size_t>(i) * k + j];
      if (v == 0.0) continue;
      s.rows.push_back(i);
      s.cols.push_back(j);
      s.values.push_back(v);
    }
  }
  const auto [a, b] = gw.segment(s);
  return detail::step_from_coefficients(a, b);
}

SpaceProfiles exact_distance_profiles(const DistanceProvider& provider,
                                      const std::vector<double>& weights,
                                      int quantiles) {
  GW_CHECK(quantiles > 0, "exact_distance_profiles: quantiles must be > 0, got " << quantiles);
  const Index n = provider.num_nodes();
  const std::vector<double> p = detail::normalized_weights(weights, n, "space");
  // The matrix and the weights exactly as the exact solver builds them (float64 products), so the
  // profiles are the ones its profile starts would compute.
  const detail::Mat<double> d = detail::dense_distances<double>(provider);
  const detail::Mat<double> out = detail::dense_profiles(d.data(), n, p, quantiles);
  SpaceProfiles profiles;
  profiles.quantiles = quantiles;
  profiles.values.assign(out.data(), out.data() + out.size());
  return profiles;
}

std::vector<double> distance_quantile_profiles(std::span<const double> d,
                                               Index n,
                                               std::span<const double> weights,
                                               int quantiles) {
  GW_CHECK(n > 0 && d.size() == static_cast<std::size_t>(n) * n &&
               weights.size() == static_cast<std::size_t>(n) && quantiles > 0,
           "distance_quantile_profiles: needs an n x n matrix, n weights and quantiles > 0 (n = "
               << n << ", quantiles = " << quantiles << ")");
  const detail::Mat<double> out = detail::dense_profiles(d.data(), n, weights, quantiles);
  return std::vector<double>(out.data(), out.data() + out.size());
}

}  // namespace gw
