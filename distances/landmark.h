// Farthest-point sampling on graphs, and the landmark distance provider built on it.
//
// Farthest-point sampling picks nodes one at a time: the first is a seeded random node (or a given
// one), each next one is the node farthest from all nodes picked so far, i.e. the maximizer of
// min_{c picked} dist(c -> v). Each pick costs exactly one Dijkstra run, whose row also updates
// those minima, so `count` picks cost `count` runs.
//
// The landmark provider uses d such picks as landmarks. Node i's coordinates are its distances
// from the landmarks, x_i = (dist(l_1 -> i), ..., dist(l_d -> i)), and the distance from node i to
// an anchor a is approximated by the Euclidean distance ||x_i - x_a||_2 in that space. For an
// undirected graph the triangle inequality gives |dist(l, i) - dist(l, a)| <= dist(a, i) for every
// landmark l, so the max-norm distance max_l |x_il - x_al| never exceeds dist(a, i) (and equals it
// when a or i is a landmark), and ||x_i - x_a||_2 <= sqrt(d) dist(a, i).
// O(n d) memory at any scale; one request is a GEMM of n x d by d x m, computed in blocks of
// nodes (Eigen), followed by the square root, in one pass over the output.
//
// Unreachable pairs: coordinates of nodes a landmark cannot reach are +inf. Nodes are grouped into
// classes (same weakly connected component and the same set of landmarks reaching them); the
// provider returns +inf between nodes of different classes and the Euclidean distance over the
// finite coordinates within a class. For an undirected graph this gives +inf exactly for the
// unreachable pairs. For a directed graph the landmark distance is a heuristic with no guarantee
// (the GW loop works on undirected graphs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/types.h"
#include "distances/distance_provider.h"
#include "graph/components.h"
#include "graph/csr_graph.h"

namespace gw {

struct FarthestPointOptions {
  // The first pick is node Rng(seed).uniform_index(n) unless `start` is given.
  std::uint64_t seed = 0;
  std::optional<Index> start;
  // Keep the Dijkstra row of every pick (count x n floats) in FarthestPointSample::rows.
  bool keep_rows = false;
};

struct FarthestPointSample {
  // The picks in order; nodes[0] is the start node. Distinct.
  std::vector<Index> nodes;
  // radius[k] = min over nodes[0..k) of dist(c -> nodes[k]) when nodes[k] was picked (the
  // farthest distance at that point; +inf for k = 0 and for a pick no earlier pick reaches).
  // Non-increasing while finite.
  std::vector<float> radius;
  // min_distance[v] = min over all picks c of dist(c -> v), n entries (+inf if none reaches v).
  std::vector<float> min_distance;
  // With keep_rows: count x n, row-major, rows[k * n + v] = dist(nodes[k] -> v). Else empty.
  std::vector<float> rows;
};

// Picks min(count, n) nodes by farthest-point sampling. Ties go to the smallest node id; once
// every node not yet picked is at distance 0, the smallest such id is next. Unreachable nodes count
// as infinitely far, so every component of an undirected graph gets a pick before any component
// gets a second one, as long as count allows. Sequential: each Dijkstra run starts from the
// previous pick. Validates the graph (kBadData); kInvalidArgument for count < 1, an empty graph,
// or a start outside [0, n).
// Time: count Dijkstra runs + O(count n). Memory: O(n), plus count x n floats with keep_rows.
FarthestPointSample farthest_point_sample(const CsrGraphView& graph,
                                          Index count,
                                          const FarthestPointOptions& options = {});

struct LandmarkOptions {
  // Number of landmarks d (clipped to n).
  int num_landmarks = 50;
  // Seed of the first landmark (see FarthestPointOptions), or an explicit start node.
  std::uint64_t seed = 0;
  std::optional<Index> start;
  // CPU threads for setup and queries (0 = all available).
  int threads = 0;
};

class LandmarkProvider final : public DistanceProvider {
 public:
  // Runs farthest-point sampling (d Dijkstra runs) and builds the coordinates. Validates the graph
  // (kBadData); kInvalidArgument for num_landmarks < 1 or an empty graph. The graph is not kept.
  LandmarkProvider(const CsrGraphView& graph, const LandmarkOptions& options = {});
  // The provider of landmarks picked elsewhere (farthest_point_sample_cuda,
  // distances/cuda_shortest_paths.h): `rows` is d x n row-major, rows[l * n + v] =
  // dist(landmarks[l] -> v), and `components` holds the graph's weakly connected components (n
  // labels, graph/components.h), which group the nodes into classes as above. kInvalidArgument for
  // no landmarks, a landmark outside [0, n) or sizes that disagree. threads: CPU threads of the
  // setup and of the queries (0 = all available).
  LandmarkProvider(std::vector<Index> landmarks,
                   std::span<const float> rows,
                   const Components& components,
                   int threads = 0);

  std::string_view name() const override { return "landmark"; }
  Index num_nodes() const override { return n_; }
  // out[i * m + k] = ||x_i - x_{anchors[k]}||_2 (+inf across classes, see above), in float32 as
  // sqrt(|x_i|^2 + |x_a|^2 - 2 x_i.x_a) on coordinates centred per landmark: one GEMM per block
  // of nodes. Pairs whose squared distance is below 1/64 of |x_i|^2 + |x_a|^2 (where that formula
  // cancels) are recomputed from coordinate differences, so near pairs are exact up to float
  // rounding (0 for i == a) and every entry is within about 1e-4 (relative, d = 50) of the exact
  // Euclidean distance. Time O(n m d) / threads; no allocation beyond m x d.
  void distances_to(std::span<const Index> anchors, std::span<float> out) const override;
  // Coordinates, their centred copy and norms, classes: about 8 n d + 12 n bytes.
  std::size_t memory_bytes() const override;
  DistanceStats stats() const override { return counters_.snapshot(); }

  // The landmarks, in the order farthest-point sampling picked them (d entries).
  std::span<const Index> landmarks() const { return landmarks_; }
  Index num_landmarks() const { return d_; }
  // n x d row-major: coordinates()[i * d + l] = dist(landmarks()[l] -> i) exactly as Dijkstra
  // computed it (+inf where unreachable).
  std::span<const float> coordinates() const { return coordinates_; }
  // Number of reachability classes (1 for a connected undirected graph).
  Index num_classes() const { return num_classes_; }

 private:
  // Coordinates, centred copy, norms and classes from the d x n rows of `landmarks_`.
  void build_coordinates(std::span<const float> rows, const Components& components);

  Index n_ = 0;
  Index d_ = 0;
  int threads_ = 0;
  std::vector<Index> landmarks_;
  std::vector<float> coordinates_;  // n x d, as computed
  std::vector<float> centred_;      // n x d, +inf -> 0, minus the per-landmark mean
  std::vector<float> sq_norms_;     // n, |centred row|^2 (accumulated in double)
  std::vector<Index> classes_;      // n, empty when num_classes_ == 1
  Index num_classes_ = 1;
  mutable DistanceCounters counters_;
};

std::unique_ptr<LandmarkProvider> make_landmark_provider(const CsrGraphView& graph,
                                                         const LandmarkOptions& options = {});

}  // namespace gw
