// Multiscale warm start (internal): align farthest-point subsamples, lift the coarse plan.
#pragma once

#include <vector>

#include "core/rng.h"
#include "distances/distance_provider.h"
#include "solver/options.h"
#include "solver/solver_impl.h"

namespace gw::detail {

// m nodes picked by farthest-point sampling through a provider: the first uniformly at random,
// each next the node farthest (largest min-distance; unreachable counts as farthest) from those
// picked. Also every node's nearest pick (its Voronoi cell) and the pick-to-pick distances.
struct FarthestPointSubsample {
  std::vector<Index> nodes;      // m picked node ids, in pick order
  std::vector<Index> cell;       // n: index (into nodes) of each node's nearest pick
  std::vector<float> distances;  // m x m: distance between picks (row a, column b)
};
FarthestPointSubsample farthest_point_subsample(const DistanceProvider& provider,
                                                Index m,
                                                Rng& rng);

struct MultiscaleOutcome {
  bool used = false;         // false when a side is too small for a coarse level
  Index size = 0;            // subsample size per side
  int iterations = 0;        // iterations of the coarse solve
  std::vector<double> plan;  // lifted n x k initial plan (mass 1)
};

// Solves the coarse problem (options.multiscale_size nodes per side, same options otherwise) and
// lifts it: T0_ij = Tc(cell_i, cell_j) * p_i / pc(cell_i) * q_j / qc(cell_j), whose marginals are
// p and q when the coarse plan's are pc and qc.
MultiscaleOutcome multiscale_initial_plan(const PreparedProblem& problem, const Options& options);

}  // namespace gw::detail
