#include <algorithm>
#include <limits>

#include "core/error.h"
#include "solver/sampled/multiscale_impl.h"
#include "solver/solver_impl.h"

namespace gw::detail {

FarthestPointSubsample farthest_point_subsample(const DistanceProvider& provider,
                                                Index m,
                                                Rng& rng) {
  const Index n = provider.num_nodes();
  GW_CHECK(m >= 1 && m <= n, "farthest-point subsample of " << m << " out of " << n << " nodes");
  FarthestPointSubsample sub;
  sub.cell.assign(n, 0);
  std::vector<float> nearest(n, std::numeric_limits<float>::infinity());
  std::vector<std::vector<float>> rows;
  rows.reserve(m);
  Index next = static_cast<Index>(rng.uniform_index(n));
  std::vector<float> row(n);
  for (Index a = 0; a < m; ++a) {
    sub.nodes.push_back(next);
    const Index picked[] = {next};
    provider.distances_to(picked, row);
    Index farthest = 0;
    float farthest_distance = -1.0f;
    for (Index i = 0; i < n; ++i) {
      if (row[i] < nearest[i]) {
        nearest[i] = row[i];
        sub.cell[i] = a;
      }
      // Unreachable (+inf) nodes are the farthest of all; ties go to the smallest id.
      if (nearest[i] > farthest_distance) {
        farthest_distance = nearest[i];
        farthest = i;
      }
    }
    rows.push_back(row);
    next = farthest;
  }
  sub.distances.resize(static_cast<std::size_t>(m) * m);
  for (Index a = 0; a < m; ++a) {
    for (Index b = 0; b < m; ++b) {
      // Symmetrize: providers are symmetric up to rounding for undirected graphs.
      const float ab = rows[b][sub.nodes[a]];
      const float ba = rows[a][sub.nodes[b]];
      sub.distances[static_cast<std::size_t>(a) * m + b] = a == b ? 0.0f : std::min(ab, ba);
    }
  }
  return sub;
}

MultiscaleOutcome multiscale_initial_plan(const PreparedProblem& problem, const Options& options) {
  MultiscaleOutcome outcome;
  const Index m = options.multiscale_size;
  // A coarse level only pays when it is clearly smaller than both sides.
  if (2 * m > problem.n || 2 * m > problem.k) return outcome;
  Rng rng(options.seed, /*stream=*/3);
  const FarthestPointSubsample src = farthest_point_subsample(*problem.source, m, rng);
  const FarthestPointSubsample tgt = farthest_point_subsample(*problem.target, m, rng);

  Problem coarse;
  coarse.source = Geometry::from_distances(DenseMatrix<float>(m, m, src.distances));
  coarse.target = Geometry::from_distances(DenseMatrix<float>(m, m, tgt.distances));
  std::vector<double> pc(m, 0.0), qc(m, 0.0);
  for (Index i = 0; i < problem.n; ++i) pc[src.cell[i]] += problem.p[i];
  for (Index j = 0; j < problem.k; ++j) qc[tgt.cell[j]] += problem.q[j];
  // A pick always lies in its own cell, so a cell with zero mass holds only zero-mass nodes; their
  // lifted rows are 0/0 and are set to 0.
  coarse.source_weights = pc;
  coarse.target_weights = qc;
  Options coarse_options = options;
  coarse_options.multiscale = false;
  coarse_options.compute_gw_loss = false;
  coarse_options.plan_format = PlanFormat::kDense;
  coarse_options.support = Support::kDense;  // the lift below reads the dense coarse plan
  coarse_options.support_feature_candidates = 0;
  coarse_options.progress = nullptr;
  coarse_options.num_anchors = std::min<int>(options.num_anchors, m);
  // Masses given in points keep their fraction of max(n, k) on the m x m problem.
  const double points_scale = static_cast<double>(m) / std::max(problem.n, problem.k);
  if (options.slack_shared) coarse_options.slack_shared = *options.slack_shared * points_scale;
  if (options.partial_mass) coarse_options.partial_mass = *options.partial_mass * points_scale;
  const Result coarse_result = solve_internal(coarse, coarse_options);
  if (!coarse_result.ok()) return outcome;

  // The lifted plan is only a starting point for sampling, so the small marginal defects of the
  // coarse plan (slack, rounding) are left alone; the total is renormalized to 1 below.
  outcome.plan.resize(static_cast<std::size_t>(problem.n) * problem.k);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < problem.n; ++i) {
    const Index a = src.cell[i];
    const double row_scale = pc[a] > 0.0 ? problem.p[i] / pc[a] : 0.0;
    for (Index j = 0; j < problem.k; ++j) {
      const Index b = tgt.cell[j];
      const double col_scale = qc[b] > 0.0 ? problem.q[j] / qc[b] : 0.0;
      outcome.plan[static_cast<std::size_t>(i) * problem.k + j] =
          coarse_result.plan[static_cast<std::size_t>(a) * m + b] * row_scale * col_scale;
    }
  }
  double mass = 0.0;
  for (double t : outcome.plan) mass += t;
  if (!(mass > 0.0)) return outcome;
  for (double& t : outcome.plan) t /= mass;
  outcome.used = true;
  outcome.size = m;
  outcome.iterations = coarse_result.iterations;
  return outcome;
}

}  // namespace gw::detail
