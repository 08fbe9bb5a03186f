// The exact solver's distance-profile starts (exact/, not installed): the nodes' quantile profiles
// of their distance rows and the plans built from them ("profiles", "profile-vertex").
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <vector>

#include "core/error.h"
#include "linear_ot/transport_simplex.h"
#include "sinkhorn/sinkhorn.h"
#include "solver/exact/exact_gw_impl.h"
#include "solver/exact/exact_runner_impl.h"
#include "solver/solver_impl.h"

namespace gw::detail {

// distance_quantile_profiles (exact.h) on a row-major n x n matrix of either precision: the exact
// version of what distance_profile_features estimates from sampled anchors.
template <typename S>
Mat<double> dense_profiles(const S* d, Index n, std::span<const double> weights, int quantiles) {
  Mat<double> out(n, quantiles);
  // Equal weights (uniform marginals, the usual case): the cumulative sums below depend only on
  // how many entries they have passed, so sorting the distances alone gives the same quantiles,
  // bit for bit, at about half the cost of sorting (distance, weight) pairs; in `gwalign
  // pairwise` these sorts were a sixth of a one-start solve.
  const bool uniform =
      std::adjacent_find(weights.begin(), weights.end(), std::not_equal_to<>()) == weights.end();
  if (uniform && n > 0) {
    const double w = weights[0];
#pragma omp parallel
    {
      std::vector<double> row(n);
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        const S* di = d + static_cast<std::size_t>(i) * n;
        for (Index l = 0; l < n; ++l) row[l] = static_cast<double>(di[l]);
        std::sort(row.begin(), row.end());
        double total = 0.0;
        for (Index l = 0; l < n; ++l) total += w;
        double cumulative = w;
        Index at = 0;
        for (int q = 0; q < quantiles; ++q) {
          const double level = (q + 0.5) / quantiles * total;
          while (cumulative < level && at + 1 < n) {
            cumulative += w;
            ++at;
          }
          out(i, q) = row[at];
        }
      }
    }
    return out;
  }
#pragma omp parallel
  {
    std::vector<std::pair<double, double>> row(n);
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      const S* di = d + static_cast<std::size_t>(i) * n;
      for (Index l = 0; l < n; ++l) row[l] = {static_cast<double>(di[l]), weights[l]};
      std::sort(row.begin(), row.end());
      double total = 0.0;
      for (const auto& entry : row) total += entry.second;
      double cumulative = row[0].second;
      Index at = 0;
      for (int q = 0; q < quantiles; ++q) {
        const double level = (q + 0.5) / quantiles * total;
        while (cumulative < level && at + 1 < n) cumulative += row[++at].second;
        out(i, q) = row[at].first;
      }
    }
  }
  return out;
}

// A start between two sides' node descriptions: the entropic plan of the cost c (n x k,
// non-negative) between the marginals, by profile_sinkhorn_iterations Sinkhorn iterations at
// profile_epsilon x the mean cost, mass 1; with `log_plan`, also its log entry by entry (from the
// potentials: (f_i + g_j - C_ij) / epsilon - log(mass), floored at log kLogFloor). p q^T when every
// cost is zero (nothing to prefer). `what` names the start in an internal error.
inline std::vector<double> entropic_plan(const Mat<double>& c,
                                         const PreparedProblem& pb,
                                         const Options& options,
                                         std::vector<double>* log_plan,
                                         const char* what) {
  const Index n = pb.n, k = pb.k;
  std::vector<double> plan(static_cast<std::size_t>(n) * k);
  const double mean = c.mean();
  if (!(mean > 0.0)) {
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < k; ++j) plan[static_cast<std::size_t>(i) * k + j] = pb.p[i] * pb.q[j];
    if (log_plan) *log_plan = product_log_plan(pb.p, pb.q);
    return plan;
  }
  std::vector<double> f(n, 0.0), g(k, 0.0);
  SinkhornOptions so;
  so.max_iterations = options.profile_sinkhorn_iterations;
  so.tolerance = 0.0;
  // float32, as the mirror-descent basin: a start, not an answer (the plan goes to conditional
  // gradient next).
  so.precision = Precision::kF32;
  so.threads = options.threads;
  const CostView view(c.data(), n, k);
  const double epsilon = options.profile_epsilon * mean;
  sinkhorn(view, pb.p, pb.q, epsilon, f, g, so);
  sinkhorn_plan(view, f, g, epsilon, PlanView(plan.data(), n, k), so);
  double mass = 0.0;
  for (double t : plan) mass += t;
  GW_CHECK_CODE(mass > 0.0 && std::isfinite(mass),
                ErrorCode::kInternal,
                what << " start has mass " << mass);
  for (double& t : plan) t /= mass;
  if (log_plan) {
    // A zero-mass row or column (potential kZeroMassPotential) has exact zeros in the plan.
    const double floor = std::log(kLogFloor), shift = std::log(mass);
    log_plan->resize(plan.size());
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < k; ++j) {
        const std::size_t at = static_cast<std::size_t>(i) * k + j;
        const bool zero = f[i] <= kZeroMassPotential / 2 || g[j] <= kZeroMassPotential / 2;
        (*log_plan)[at] = zero ? floor : std::max((f[i] + g[j] - c(i, j)) / epsilon - shift, floor);
      }
    }
  }
  return plan;
}

// The distance-profile starts of the exact solver. Both compare the nodes' distance distributions
// (Memoli's first lower bound) under the cost C_ij = |P_i - R_j|^2 / Q of their quantile
// profiles: "profiles" is the entropic plan of distance_profile_plan (Sinkhorn at
// profile_epsilon x mean C, profile_sinkhorn_iterations iterations), "profile-vertex" the exact
// network-simplex plan. The profiles are exact (every node's whole row) when both sides have at
// most profile_anchors nodes, else drawn as distance_profile_features draws them.
template <typename S>
class ProfileStarts {
 public:
  ProfileStarts(const PreparedProblem& pb, const Options& options, const ExactGw<S>& gw)
      : pb_(pb), options_(options), gw_(gw) {}

  // The entropic plan between the profiles (entropic_plan); with `log_plan`, its log.
  std::vector<double> entropic(std::vector<double>* log_plan = nullptr) {
    return entropic_plan(cost(), pb_, options_, log_plan, "distance-profile");
  }

  // `simplex` (on pb_.p, pb_.q) starts from whatever basis it holds: the last conditional-gradient
  // vertex's basis is a closer start for this matching than the artificial one.
  std::vector<double> vertex(TransportSimplex& simplex) {
    const Mat<double>& c = cost();
    const Index n = pb_.n, k = pb_.k;
    LinearOtPlan lp = simplex.solve(std::span<const double>(c.data(), c.size()));
    std::vector<double> plan(static_cast<std::size_t>(n) * k, 0.0);
    for (std::size_t e = 0; e < lp.values.size(); ++e) {
      plan[static_cast<std::size_t>(lp.rows[e]) * k + lp.cols[e]] += lp.values[e];
    }
    return plan;
  }

 private:
  const Mat<double>& cost() {
    if (cost_.size() != 0) return cost_;
    const Index n = pb_.n, k = pb_.k;
    Mat<double> a, b;
    const int quantiles = options_.profile_quantiles;
    if (std::max(n, k) <= options_.profile_anchors) {
      if (pb_.source_profiles && pb_.target_profiles) {
        // Precomputed by exact_distance_profiles (shapes checked by prepare_problem).
        a = Eigen::Map<const Mat<double>>(pb_.source_profiles->values.data(), n, quantiles);
        b = Eigen::Map<const Mat<double>>(pb_.target_profiles->values.data(), k, quantiles);
      } else {
        a = dense_profiles(gw_.dx().data(), n, pb_.p, quantiles);
        b = dense_profiles(gw_.dy().data(), k, pb_.q, quantiles);
      }
    } else {
      const DistanceProfiles profiles = distance_profile_features(pb_, options_);
      a = Eigen::Map<const Mat<float>>(profiles.source.data(), n, profiles.quantiles)
              .template cast<double>();
      b = Eigen::Map<const Mat<float>>(profiles.target.data(), k, profiles.quantiles)
              .template cast<double>();
    }
    const double scale = 1.0 / static_cast<double>(a.cols());
    // a b^T by the dispatched GEMM: Eigen's product here would be this file's (baseline x86-64)
    // build, ~2% of a 150-node pair in `gwalign pairwise` (bench/RESULTS.md, issue 14).
    cost_.resize(n, k);
    gw_cost_kernels().gemm_abt<double>()(a.data(), b.data(), n, k, a.cols(), cost_.data(), k);
    cost_ *= -2.0 * scale;
    const Eigen::VectorXd an = a.rowwise().squaredNorm() * scale;
    const Eigen::VectorXd bn = b.rowwise().squaredNorm() * scale;
    cost_.colwise() += an;
    cost_.rowwise() += bn.transpose();
    cost_ = cost_.cwiseMax(0.0);
    return cost_;
  }

  const PreparedProblem& pb_;
  const Options& options_;
  const ExactGw<S>& gw_;
  Mat<double> cost_;
};

}  // namespace gw::detail
