// Distance-profile initial plan (Options::initial_plan = kDistanceProfiles).
//
// Node i is summarized by the quantiles of d(i, X), X drawn from its side's marginal: a 1-D
// distribution that is invariant to isometries, as the GW problem is. Two nodes that can be
// matched with low GW cost must have similar distance distributions (Memoli's lower bounds), so
// entropic OT between the profiles under W2^2 of 1-D distributions -- the mean squared difference
// of matching quantiles -- is a start that is already oriented: on curve-like data the density
// along the curve breaks the mirror symmetry that p q^T leaves to chance.
//
// Cost: 2 provider queries of S anchors, (n + k) sorts of S floats, one GEMM of 2 n k Q flops for
// the cost, and a few Sinkhorn iterations over it.
#include <Eigen/Core>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/rng.h"
#include "sinkhorn/sinkhorn.h"
#include "solver/solver_impl.h"

namespace gw::detail {

namespace {

using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// n x Q quantile profiles of the distances from every node to S anchors drawn from `weights`.
RowMatrixF distance_profiles(const DistanceProvider& provider,
                             const std::vector<double>& weights,
                             int anchors,
                             int quantiles,
                             Rng& rng) {
  const Index n = provider.num_nodes();
  std::vector<double> cumulative(n);
  double total = 0.0;
  for (Index i = 0; i < n; ++i) cumulative[i] = (total += weights[i]);
  std::vector<Index> picks(anchors);
  for (Index& a : picks) {
    const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), rng.uniform() * total);
    a = static_cast<Index>(std::min<std::ptrdiff_t>(it - cumulative.begin(), n - 1));
  }
  std::vector<float> block(static_cast<std::size_t>(n) * anchors);
  provider.distances_to(picks, block);
  clamp_and_normalize(block, true);
  RowMatrixF profiles(n, quantiles);
#pragma omp parallel
  {
    std::vector<float> row(anchors);
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      std::copy_n(block.begin() + static_cast<std::size_t>(i) * anchors, anchors, row.begin());
      std::sort(row.begin(), row.end());
      for (int q = 0; q < quantiles; ++q) {
        const int at = std::min(anchors - 1, static_cast<int>((q + 0.5) * anchors / quantiles));
        profiles(i, q) = row[at];
      }
    }
  }
  return profiles;
}

}  // namespace

DistanceProfiles distance_profile_features(const PreparedProblem& problem, const Options& options) {
  Rng rng(options.seed, /*stream=*/4);
  const int quantiles = options.profile_quantiles;
  const RowMatrixF source =
      distance_profiles(*problem.source, problem.p, options.profile_anchors, quantiles, rng);
  const RowMatrixF target =
      distance_profiles(*problem.target, problem.q, options.profile_anchors, quantiles, rng);
  return {std::vector<float>(source.data(), source.data() + source.size()),
          std::vector<float>(target.data(), target.data() + target.size()),
          quantiles};
}

std::vector<double> distance_profile_plan(const PreparedProblem& problem, const Options& options) {
  const Index n = problem.n, k = problem.k;
  const int quantiles = options.profile_quantiles;
  Rng rng(options.seed, /*stream=*/4);
  const RowMatrixF source =
      distance_profiles(*problem.source, problem.p, options.profile_anchors, quantiles, rng);
  const RowMatrixF target =
      distance_profiles(*problem.target, problem.q, options.profile_anchors, quantiles, rng);

  // C_ij = |P_i - R_j|^2 / Q = (|P_i|^2 + |R_j|^2 - 2 P_i . R_j) / Q.
  RowMatrixF cost(n, k);
  cost.noalias() = (-2.0f / quantiles) * source * target.transpose();
  const Eigen::VectorXf source_norm =
      source.rowwise().squaredNorm() / static_cast<float>(quantiles);
  const Eigen::VectorXf target_norm =
      target.rowwise().squaredNorm() / static_cast<float>(quantiles);
  std::vector<double> row_sum(n, 0.0);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    double sum = 0.0;
    for (Index j = 0; j < k; ++j) {
      const float c = std::max(0.0f, cost(i, j) + source_norm[i] + target_norm[j]);
      cost(i, j) = c;
      sum += c;
    }
    row_sum[i] = sum;
  }
  double mean = 0.0;
  for (double s : row_sum) mean += s;
  mean /= static_cast<double>(n) * k;

  std::vector<double> plan(static_cast<std::size_t>(n) * k);
  if (!(mean > 0.0)) {  // every profile alike: nothing to prefer, start from p q^T
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < k; ++j)
        plan[static_cast<std::size_t>(i) * k + j] = problem.p[i] * problem.q[j];
    return plan;
  }
  const double epsilon = options.profile_epsilon * mean;
  std::vector<double> f(n, 0.0), g(k, 0.0);
  SinkhornOptions sinkhorn_options;
  sinkhorn_options.max_iterations = options.profile_sinkhorn_iterations;
  sinkhorn_options.tolerance = 0.0;
  sinkhorn_options.threads = options.threads;
  const CostView view(cost.data(), n, k);
  sinkhorn(view, problem.p, problem.q, epsilon, f, g, sinkhorn_options);
  sinkhorn_plan(view, f, g, epsilon, PlanView(plan.data(), n, k), sinkhorn_options);
  double mass = 0.0;
  for (double t : plan) mass += t;
  GW_CHECK_CODE(mass > 0.0 && std::isfinite(mass),
                ErrorCode::kInternal,
                "distance-profile initial plan has mass " << mass);
  for (double& t : plan) t /= mass;
  return plan;
}

}  // namespace gw::detail
