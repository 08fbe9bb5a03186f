// Validation of a Problem against its Options and resolution into a PreparedProblem
// (solver_impl.h): shapes, finiteness, marginals, the initial plan, the distance providers.
#include <cmath>
#include <vector>

#include "core/error.h"
#include "solver/inputs.h"
#include "solver/solver_impl.h"

namespace gw::detail {

std::vector<double> normalized_weights(const std::vector<double>& weights,
                                       Index n,
                                       const char* side) {
  if (weights.empty()) return std::vector<double>(n, 1.0 / n);
  GW_CHECK(weights.size() == static_cast<std::size_t>(n),
           side << " weights have " << weights.size() << " entries for " << n << " nodes");
  double total = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double w = weights[i];
    if (!std::isfinite(w) || w < 0.0) {
      GW_THROW(
          ErrorCode::kBadData,
          side << " weight " << i << " is " << w << "; marginal weights must be finite and >= 0");
    }
    total += w;
  }
  GW_CHECK_CODE(total > 0.0, ErrorCode::kBadData, side << " weights sum to 0; give some node mass");
  std::vector<double> out(weights);
  for (double& w : out) w /= total;
  return out;
}

PreparedProblem prepare_problem(const Problem& problem, const Options& options) {
  PreparedProblem pb;
  pb.n = problem.source.num_nodes();
  pb.k = problem.target.num_nodes();
  GW_CHECK(problem.source.kind() != Geometry::Kind::kNone, "the source geometry is not set");
  GW_CHECK(problem.target.kind() != Geometry::Kind::kNone, "the target geometry is not set");
  const bool gw_term = options.fused_weight < 1.0;
  const bool features = problem.source_features || problem.target_features;
  if (options.fused_weight > 0.0) {
    GW_CHECK(problem.feature_cost.has_value() || features,
             "fused_weight = " << options.fused_weight
                               << " needs a feature cost (Problem::feature_cost, n x k) or "
                                  "features (Problem::source_features and target_features)");
  }
  if (features) {
    GW_CHECK(!problem.feature_cost,
             "give either Problem::feature_cost or Problem::source_features / target_features, "
             "not both");
    GW_CHECK(problem.source_features && problem.target_features,
             "give features for both sides (Problem::source_features and target_features)");
    const DenseMatrix<double>& f = *problem.source_features;
    const DenseMatrix<double>& g = *problem.target_features;
    GW_CHECK(f.rows == pb.n && g.rows == pb.k && f.cols == g.cols && f.cols >= 1,
             "features are " << f.rows << " x " << f.cols << " and " << g.rows << " x " << g.cols
                             << " but the problem is " << pb.n << " x " << pb.k
                             << " (source x target; both need the same d >= 1 columns)");
    GW_CHECK(f.values.size() == static_cast<std::size_t>(f.rows) * f.cols &&
                 g.values.size() == static_cast<std::size_t>(g.rows) * g.cols,
             "feature matrices hold " << f.values.size() << " and " << g.values.size()
                                      << " values for their shapes");
    check_all_finite(std::span<const double>(f.values), "source features");
    check_all_finite(std::span<const double>(g.values), "target features");
    pb.source_features = &f;
    pb.target_features = &g;
    pb.feature_scale = feature_cost_scale(f.values, f.rows, g.values, g.rows, f.cols);
  }
  if (problem.feature_cost) {
    const DenseMatrix<double>& c = *problem.feature_cost;
    GW_CHECK(c.rows == pb.n && c.cols == pb.k,
             "feature cost is " << c.rows << " x " << c.cols << " but the problem is " << pb.n
                                << " x " << pb.k << " (source x target)");
    GW_CHECK(c.values.size() == static_cast<std::size_t>(c.rows) * c.cols,
             "feature cost has " << c.values.size() << " values for " << c.rows << " x " << c.cols);
    check_all_finite(std::span<const double>(c.values), "feature cost");
    pb.feature_cost = &c;
  }
  pb.p = normalized_weights(problem.source_weights, pb.n, "source");
  pb.q = normalized_weights(problem.target_weights, pb.k, "target");
  const auto check_profiles = [&](const std::shared_ptr<const SpaceProfiles>& profiles, Index nodes,
                                  const char* side) {
    if (!profiles) return;
    GW_CHECK(profiles->quantiles == options.profile_quantiles &&
                 profiles->values.size() ==
                     static_cast<std::size_t>(nodes) * static_cast<std::size_t>(profiles->quantiles),
             side << " profiles hold " << profiles->values.size() << " values of "
                  << profiles->quantiles << " quantiles for " << nodes
                  << " nodes; build them with gw::exact_distance_profiles and profile_quantiles = "
                  << options.profile_quantiles);
  };
  check_profiles(problem.source_profiles, pb.n, "source");
  check_profiles(problem.target_profiles, pb.k, "target");
  pb.source_profiles = problem.source_profiles;
  pb.target_profiles = problem.target_profiles;
  if (problem.initial_plan) {
    const DenseMatrix<double>& t0 = *problem.initial_plan;
    GW_CHECK(t0.rows == pb.n && t0.cols == pb.k && t0.values.size() == std::size_t(pb.n) * pb.k,
             "initial plan is " << t0.rows << " x " << t0.cols << " but the problem is " << pb.n
                                << " x " << pb.k);
    double mass = 0.0;
    for (std::size_t p = 0; p < t0.values.size(); ++p) {
      const double t = t0.values[p];
      if (!std::isfinite(t) || t < 0.0) {
        GW_THROW(ErrorCode::kBadData,
                 "initial plan entry " << p << " is " << t << "; plans must be finite and >= 0");
      }
      mass += t;
    }
    GW_CHECK_CODE(mass > 0.0, ErrorCode::kBadData, "initial plan has zero mass");
    pb.initial_plan = t0.values;
    for (double& t : pb.initial_plan) t /= mass;
  }
  if (gw_term) {
    GW_CHECK(problem.source.kind() != Geometry::Kind::kNodes,
             "the source has no geometry (only a node count); give points, a graph or distances, "
             "or set fused_weight = 1 for plain OT on the feature cost");
    GW_CHECK(problem.target.kind() != Geometry::Kind::kNodes,
             "the target has no geometry (only a node count); give points, a graph or distances, "
             "or set fused_weight = 1 for plain OT on the feature cost");
    pb.source = make_provider(problem.source, options, "source");
    pb.target = make_provider(problem.target, options, "target");
  }
  return pb;
}

}  // namespace gw::detail
