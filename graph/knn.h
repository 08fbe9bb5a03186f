// Exact k-nearest-neighbour search and kNN graphs from point clouds.
//
// Points are n x d, row-major (point i is points[i*d .. i*d + d)), float32 or float64. Distances
// are Euclidean, computed in float64 whatever the input type. Neighbours of point i exclude i
// itself (by index; a duplicate point at distance 0 is a neighbour) and are ordered by
// (distance, index): among equidistant candidates the smaller index wins, so results are exact
// and deterministic, independent of thread count and algorithm.
//
// Memory: O(n d + n k), never O(n^2) (knn_graph's symmetrization adds 4 bytes per point per
// thread). Thread-safety: pure functions; parallel inside (OpenMP).
#pragma once

#include <span>
#include <vector>

#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw {

enum class KnnAlgorithm {
  kAuto,        // k-d tree for d <= 12 or n > 50,000 (brute force's n^2 d work would dominate
                // any solve), blocked brute force otherwise
  kKdTree,      // k-d tree (leaf size 48, tight bounding boxes); fast for low dimension
  kBruteForce,  // blocked GEMM distances (Eigen) + exact re-ranking of the candidates
};

struct KnnResult {
  Index n = 0;
  int k = 0;                     // neighbours per point (min(requested k, n - 1))
  std::vector<Index> indices;    // n x k, row-major, ordered by (distance, index)
  std::vector<float> distances;  // n x k Euclidean distances matching `indices`
};

// The k nearest neighbours of every point among the others. k >= 1; a k >= n is clipped to n - 1.
// Throws kInvalidArgument for n < 1, d < 1, k < 1 or a span of the wrong size, and kBadData for a
// NaN/Inf coordinate.
KnnResult knn_search(std::span<const float> points,
                     Index n,
                     int d,
                     int k,
                     KnnAlgorithm algorithm = KnnAlgorithm::kAuto);
KnnResult knn_search(std::span<const double> points,
                     Index n,
                     int d,
                     int k,
                     KnnAlgorithm algorithm = KnnAlgorithm::kAuto);

struct KnnGraphOptions {
  // Neighbours per point before symmetrization (default 30; the spiral benchmark uses 5).
  int k = 30;
  KnnAlgorithm algorithm = KnnAlgorithm::kAuto;
  // If the kNN graph is disconnected, stitch it (see stitch_components): repeatedly add the
  // shortest Euclidean edge between the first component and the rest until connected.
  bool connect = true;
};

// Undirected kNN graph: edge i - j if j is among i's k nearest or i among j's (symmetrized by
// max; both directions stored, columns sorted), weight = Euclidean distance (float32).
CsrGraph knn_graph(std::span<const float> points,
                   Index n,
                   int d,
                   const KnnGraphOptions& options = {});
CsrGraph knn_graph(std::span<const double> points,
                   Index n,
                   int d,
                   const KnnGraphOptions& options = {});

}  // namespace gw
