// One pair of spaces of a collection through gw::solve: every pair `gwalign pairwise` computes
// goes through solve_pair(), so a better solver behind gw::solve (chosen by Options) serves the
// whole matrix without change here.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "distances/distance_provider.h"
#include "pairwise/collection.h"
#include "solver/options.h"
#include "solver/result.h"

namespace gw::pairwise {

// A space with its distances built once, shared by the N - 1 pairs it takes part in.
struct PreparedSpace {
  std::shared_ptr<const DistanceProvider> provider;
  std::vector<double> weights;  // empty: uniform
  // The exact solver's distance profiles of this space (gw::exact_distance_profiles), computed
  // once instead of in every pair: set when the exact solver may run on it (options.solver not
  // sampled, at most options.profile_anchors nodes, fused_weight < 1), else null. n x
  // profile_quantiles doubles.
  std::shared_ptr<const SpaceProfiles> profiles;
};

// How a point-cloud space becomes a metric space.
enum class PointMetric {
  kEuclidean,    // the n x n Euclidean distance matrix (what CAJAL uses for sampled shapes)
  kKnnGeodesic,  // shortest paths in the kNN graph, as gw::solve does for points
};

// The n x n Euclidean distances of n x d row-major points (computed in double, stored as float).
DenseMatrix<float> euclidean_distances(std::span<const double> points, Index n, int d);

// The distances of `space`, built once: points by `metric` (kKnnGeodesic: the provider gw::solve
// would build, an exact kNN graph with options.knn neighbours, stitched connected); a graph: its
// shortest paths (precomputed up to options.auto_precomputed_max_nodes nodes, or
// options.distance_mode); a distance matrix as given; then the profiles (see PreparedSpace).
// options.threads threads. Thread-safe (concurrent calls on different spaces).
PreparedSpace prepare_space(const Space& space,
                            const Options& options,
                            PointMetric metric = PointMetric::kEuclidean);

// The solver options of one pair of 100-200-node spaces: gw::Options defaults except where their
// fixed costs, sized for thousands of nodes, dominate a small pair (measured in bench/RESULTS.md,
// "All-pairs GW distances"): threads = 1 (the pairs are the parallel work), 200 warm-up and
// polishing anchor pairs instead of 40 M, epsilon 3e-3 -> 1e-3, min_iterations 20, one start of
// the exact solver, 10 Sinkhorn iterations (not 30) for its start's profile plan and mirror-descent
// basin, a dense plan, the exact loss.
Options default_pair_options();

// The seed of pair (i, j), i < j: a function of (base, i, j) only, so a pair gets the same seed
// whatever the thread or rank count and whichever order the pairs run in.
std::uint64_t pair_seed(std::uint64_t base, Index i, Index j);

// What the matrix keeps of one pair's solve.
struct PairResult {
  // GW loss of the plan found (distances max-normalized per space; see gw::Result::gw_loss),
  // and its standard error (0 when exact).
  double objective = std::numeric_limits<double>::quiet_NaN();
  double standard_error = std::numeric_limits<double>::quiet_NaN();
  // Whether `objective` is the exact loss (gw::Result::gw_loss_exact), not a Monte Carlo estimate.
  bool loss_exact = false;
  Termination termination = Termination::kNotRun;
  int iterations = 0;
  double seconds = 0.0;
};

// The GW distance as CAJAL reports it: 0.5 sqrt(objective).
double gw_distance(double objective);

// gw::solve of (source, target) with `options` (its seed is used as given: pass
// pair_seed(...)). Throws what gw::solve throws.
PairResult solve_pair(const PreparedSpace& source,
                      const PreparedSpace& target,
                      const Options& options);

// Whether solve_pair(source, target, options) will report the exact loss (PairResult::loss_exact)
// rather than an estimate, decided before solving by gw::solve's rules: the exact solver's
// conditional-gradient finish always knows its loss; otherwise the dense path computes it when
// both providers hold full matrices and n k (n + k) <= options.exact_loss_max_work
// (solver/loss.cpp), and the sparse support only estimates it. The --nearest pruning relies on it
// (pairwise/run.h), and run_pairwise checks it against every pair it solves.
bool loss_is_exact(const PreparedSpace& source,
                   const PreparedSpace& target,
                   const Options& options);

}  // namespace gw::pairwise
