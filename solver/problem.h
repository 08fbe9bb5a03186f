// What gw::solve aligns: two geometries (source with n nodes, target with k), their marginals, and
// optionally a feature cost and an initial plan.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "core/types.h"
#include "distances/distance_provider.h"
#include "graph/csr_graph.h"

namespace gw {

// A dense row-major matrix owned by value: entry (i, j) is values[i * cols + j].
template <typename T>
struct DenseMatrix {
  Index rows = 0;
  Index cols = 0;
  std::vector<T> values;

  DenseMatrix() = default;
  DenseMatrix(Index r, Index c, std::vector<T> v) : rows(r), cols(c), values(std::move(v)) {}
  T operator()(Index i, Index j) const { return values[static_cast<std::size_t>(i) * cols + j]; }
};

// One side's geometry. Exactly one representation is held:
//   points     n x d coordinates -> exact kNN graph (Options::knn), stitched connected, whose
//              shortest paths are the distances (mode per Options::distance_mode)
//   graph      a weighted graph (edge weights are lengths, >= 0) -> shortest paths
//   distances  a dense n x n distance matrix used as is (non-negative, zero diagonal, symmetric)
//   provider   any DistanceProvider the caller built (shared, so one provider can serve many
//   solves) nodes      only a node count: no geometry (valid only with Options::fused_weight = 1)
class Geometry {
 public:
  enum class Kind { kNone, kNodes, kPoints, kGraph, kDistances, kProvider };

  Geometry() = default;
  // Copies nothing beyond what is moved in. Shapes are checked here (kInvalidArgument); contents
  // (NaN, negative weights, asymmetry) are checked when the solver builds its provider (kBadData).
  static Geometry from_points(std::vector<double> points, Index n, int d);
  static Geometry from_graph(CsrGraph graph);
  static Geometry from_distances(DenseMatrix<float> distances);
  static Geometry from_provider(std::shared_ptr<const DistanceProvider> provider);
  static Geometry nodes_only(Index n);

  Kind kind() const { return kind_; }
  Index num_nodes() const { return n_; }

  // The representation (empty / null when another kind is held).
  const std::vector<double>& points() const { return points_; }
  int dimension() const { return dimension_; }
  const CsrGraph& graph() const { return graph_; }
  const DenseMatrix<float>& distances() const { return distances_; }
  const std::shared_ptr<const DistanceProvider>& provider() const { return provider_; }

 private:
  Kind kind_ = Kind::kNone;
  Index n_ = 0;
  std::vector<double> points_;
  int dimension_ = 0;
  CsrGraph graph_;
  DenseMatrix<float> distances_;
  std::shared_ptr<const DistanceProvider> provider_;
};

// One side's exact distance profiles, computed once for many solves on the same space (what
// `gwalign pairwise` does for each space of its collection): for every node, the profile_quantiles
// quantiles of its distances to all nodes under the side's normalized weights, on the
// max-normalized dense distance matrix (n x quantiles, row-major). Build it with
// gw::exact_distance_profiles (solver/exact/exact.h); the exact solver's profile starts then skip their
// O(n^2 log n) sorts and give the same plan, bit for bit. Immutable once built: one object may be
// shared by any number of Problems and threads.
struct SpaceProfiles {
  int quantiles = 0;
  std::vector<double> values;
};

struct Problem {
  Geometry source;  // n nodes
  Geometry target;  // k nodes

  // Marginals p (n) and q (k): non-negative, finite, positive sum. Empty: uniform. Each side is
  // normalized to total mass 1 before solving (the plan then has mass 1).
  std::vector<double> source_weights;
  std::vector<double> target_weights;

  // C_feat (n x k) for fused GW (Options::fused_weight > 0): finite, in the units of the
  // max-normalized squared distances (values in ~[0, 1] balance with the GW term).
  std::optional<DenseMatrix<double>> feature_cost;

  // Instead of feature_cost: per-node features, source_features n x d and target_features k x d
  // (row-major, the same d, finite), whose cost is C_ij = |f_i - g_j|^2 / max over all pairs
  // (feature_cost_from_features in solver/inputs.h; the maximum is found without the n x k
  // matrix, feature_cost_scale). The cost is evaluated where a path needs it: the dense paths
  // materialize it (8 n k bytes, counted in their memory estimate), the sparse support only on
  // its entries, so a fused problem of 10^5 - 10^6 nodes per side never holds n x k values.
  // Exclusive with feature_cost.
  std::optional<DenseMatrix<double>> source_features;
  std::optional<DenseMatrix<double>> target_features;

  // A starting plan T_0 (n x k, non-negative, positive mass; rescaled to mass 1). Unset: the
  // multiscale plan when Options::multiscale is on, else Options::initial_plan decides (default:
  // the distance-profile plan; InitialPlan::kProduct gives p q^T).
  std::optional<DenseMatrix<double>> initial_plan;

  // Optional precomputed distance profiles of each side (see SpaceProfiles), used by the exact
  // solver's profile starts when both are set and hold Options::profile_quantiles quantiles per
  // node (n x Q and k x Q values; other shapes are kInvalidArgument), and when both sides have at
  // most Options::profile_anchors nodes (the exact profiles' range); ignored otherwise. They must
  // come from this problem's geometries and weights: others only give a different start.
  std::shared_ptr<const SpaceProfiles> source_profiles;
  std::shared_ptr<const SpaceProfiles> target_profiles;
};

}  // namespace gw
