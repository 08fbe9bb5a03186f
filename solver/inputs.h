// One side of an alignment built from in-memory arrays, shared by the front ends (the CLI after it
// has read its files, the Python package from numpy / scipy arrays) so that both build the same
// Problem from the same numbers, with the same checks and the same descriptions in the report.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/types.h"
#include "solver/problem.h"

namespace gw {

// A side's geometry and its one-line description for reports ("400 x 2 points (kNN graph)",
// "graph, 200 nodes, 1200 undirected edges", "300 x 300 distance matrix").
struct SideGeometry {
  Geometry geometry;
  std::string description;
};

// n x d points, row-major, moved in (no further copy). kBadData naming `what` ("points 'X' in
// 'a.h5'", "source points") on a non-finite value.
SideGeometry side_from_points(std::vector<double> points, Index n, int d, const std::string& what);

// An n x n sparse graph given as CSR arrays (indptr: n + 1 offsets, indices and lengths: nnz
// entries; lengths are edge lengths, finite and >= 0). The graph is symmetrized by max and its
// self-loops dropped (scanpy's obsp graphs store one direction of some edges). Errors are
// prefixed with `what` ("graph 'obsp/distances' in 'a.h5ad'"). The arrays are read, not kept.
SideGeometry side_from_csr_graph(Index n,
                                 std::span<const Offset> indptr,
                                 std::span<const Index> indices,
                                 std::span<const float> lengths,
                                 const std::string& what);

// An n x n distance matrix, row-major, moved in and used as given. `sparse`: the matrix came from
// a sparse one whose missing entries are unreachable (the caller put +inf there); the diagonal is
// then set to 0. Validated (square, non-negative, symmetric, finite or +inf) with `threads`
// threads; errors are prefixed with `what`.
SideGeometry side_from_distance_matrix(
    std::vector<float> matrix, Index n, bool sparse, int threads, const std::string& what);

// C_feat[i][j] = |f_i - g_j|^2 / max over all pairs between source features f (n x d, row-major)
// and target features g (k x d), so the cost is in [0, 1] like the GW term (all zeros stay zero).
// O(n k d) time, O(n k) memory, OpenMP over rows.
DenseMatrix<double> feature_cost_from_features(std::span<const double> source,
                                               Index n,
                                               std::span<const double> target,
                                               Index k,
                                               std::int64_t d);

// The divisor of that cost: max over all pairs of |f_i - g_j|^2 (0 when every pair coincides),
// the same double feature_cost_from_features divides by, without the n x k matrix: the targets are
// covered by up to 128 balls (farthest-point centres c_b, radii r_b), each source row gets the
// bound max_b (|f_i - c_b| + r_b)^2, rows are visited by decreasing bound, and in a visited row only
// the balls whose bound can beat the maximum so far are scanned, each pair evaluated exactly as
// that function does; the search stops once no remaining row's bound can beat the maximum.
// O(k d) + 4 n x 128 bytes of memory; O((n + k) 128 d) time plus the scanned pairs (a few rows'
// worth on well-separated features; O(n k d) in the worst case, which high-dimensional features
// of 10^5 cells per side reach: the bounds then beat the maximum on most rows). So the scan stops
// after `max_pairs` pairs (kFeatureScaleMaxPairs: a few seconds on 2 cores): the result is then
// the largest value over the rows of highest bound that were scanned, a lower bound of the
// maximum (the cost's entries may then exceed 1 a little), and the exact maximum otherwise.
inline constexpr std::int64_t kFeatureScaleMaxPairs = std::int64_t{1} << 30;
double feature_cost_scale(std::span<const double> source,
                          Index n,
                          std::span<const double> target,
                          Index k,
                          std::int64_t d,
                          std::int64_t max_pairs = kFeatureScaleMaxPairs);

// One entry of that cost before the division: max(0, |f|^2 + |g|^2 - 2 f . g), the expanded form
// (as feature_cost_from_features evaluates it), for rows f and g of d values and their squared
// norms.
inline double feature_sq_distance(const double* f, double f_norm, const double* g, double g_norm,
                                  std::int64_t d) {
  double dot = 0.0;
  for (std::int64_t c = 0; c < d; ++c) dot += f[c] * g[c];
  return std::max(0.0, f_norm + g_norm - 2.0 * dot);
}

}  // namespace gw
