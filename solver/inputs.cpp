#include "solver/inputs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>

#include "core/error.h"
#include "distances/precomputed.h"
#include "graph/builder.h"

namespace gw {
namespace {

// Runs fn; a gw::Error from it gets `what` in front of its message.
template <typename Fn>
decltype(auto) prefixed(const std::string& what, Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const Error& e) {
    throw Error(e.code(), what + ": " + e.what());
  }
}

}  // namespace

SideGeometry side_from_points(std::vector<double> points, Index n, int d, const std::string& what) {
  check_all_finite(std::span<const double>(points), what);
  SideGeometry side;
  side.description = std::to_string(n) + " x " + std::to_string(d) + " points (kNN graph)";
  side.geometry = Geometry::from_points(std::move(points), n, d);
  return side;
}

SideGeometry side_from_csr_graph(Index n,
                                 std::span<const Offset> indptr,
                                 std::span<const Index> indices,
                                 std::span<const float> lengths,
                                 const std::string& what) {
  GW_CHECK_CODE(
      indptr.size() == static_cast<std::size_t>(n) + 1 && indices.size() == lengths.size() &&
          static_cast<std::size_t>(indptr.back()) == indices.size(),
      ErrorCode::kBadData,
      what << ": CSR arrays do not fit together (indptr has " << indptr.size() << " entries for "
           << n << " rows, " << indices.size() << " indices, " << lengths.size() << " values)");
  std::vector<Index> src(indices.size());
  for (Index i = 0; i < n; ++i) {
    GW_CHECK_CODE(
        indptr[i] <= indptr[i + 1], ErrorCode::kBadData, what << ": indptr decreases at row " << i);
    std::fill(src.begin() + indptr[i], src.begin() + indptr[i + 1], i);
  }
  BuildOptions options;
  options.symmetrize = true;
  options.self_loops = SelfLoopPolicy::kDrop;
  CsrGraph graph = prefixed(what + " (weights are edge lengths, must be finite >= 0)", [&] {
    return build_csr(n, EdgeListView{src, indices, lengths}, options);
  });
  SideGeometry side;
  side.description = "graph, " + std::to_string(n) + " nodes, " +
                     std::to_string(graph.num_edges() / 2) + " undirected edges";
  side.geometry = Geometry::from_graph(std::move(graph));
  return side;
}

SideGeometry side_from_distance_matrix(
    std::vector<float> matrix, Index n, bool sparse, int threads, const std::string& what) {
  if (sparse) {
    // A sparse distance matrix lists the known distances; a node is at distance 0 from itself
    // whether or not the diagonal is stored.
    for (Index i = 0; i < n; ++i) matrix[static_cast<std::size_t>(i) * n + i] = 0.0f;
  }
  DenseOptions options;
  options.threads = threads;
  std::shared_ptr<const DistanceProvider> provider = prefixed(what, [&] {
    return std::shared_ptr<const DistanceProvider>(
        make_dense_provider(std::move(matrix), n, options));
  });
  SideGeometry side;
  side.description = std::to_string(n) + " x " + std::to_string(n) + (sparse ? " sparse" : "") +
                     " distance matrix";
  side.geometry = Geometry::from_provider(std::move(provider));
  return side;
}

namespace {

void check_feature_shapes(std::span<const double> source,
                          Index n,
                          std::span<const double> target,
                          Index k,
                          std::int64_t d) {
  GW_CHECK(source.size() == static_cast<std::size_t>(n) * d &&
               target.size() == static_cast<std::size_t>(k) * d,
           "feature matrices must be n x d and k x d (got "
               << source.size() << " and " << target.size() << " values for n = " << n
               << ", k = " << k << ", d = " << d << ")");
}

}  // namespace

DenseMatrix<double> feature_cost_from_features(std::span<const double> source,
                                               Index n,
                                               std::span<const double> target,
                                               Index k,
                                               std::int64_t d) {
  check_feature_shapes(source, n, target, k, d);
  std::vector<double> cost(static_cast<std::size_t>(n) * k);
  std::vector<double> target_norm(k);
  for (Index j = 0; j < k; ++j) {
    double s = 0.0;
    for (std::int64_t c = 0; c < d; ++c) s += target[j * d + c] * target[j * d + c];
    target_norm[j] = s;
  }
  double max_cost = 0.0;
#pragma omp parallel for schedule(static) reduction(max : max_cost)
  for (Index i = 0; i < n; ++i) {
    const double* f = source.data() + static_cast<std::size_t>(i) * d;
    double f_norm = 0.0;
    for (std::int64_t c = 0; c < d; ++c) f_norm += f[c] * f[c];
    for (Index j = 0; j < k; ++j) {
      const double* g = target.data() + static_cast<std::size_t>(j) * d;
      // The expanded form can round below zero for near-identical rows (feature_sq_distance).
      const double value = feature_sq_distance(f, f_norm, g, target_norm[j], d);
      cost[static_cast<std::size_t>(i) * k + j] = value;
      max_cost = std::max(max_cost, value);
    }
  }
  if (max_cost > 0.0) {
    for (double& c : cost) c /= max_cost;
  }
  return DenseMatrix<double>(n, k, std::move(cost));
}

double feature_cost_scale(std::span<const double> source,
                          Index n,
                          std::span<const double> target,
                          Index k,
                          std::int64_t d) {
  check_feature_shapes(source, n, target, k, d);
  if (n == 0 || k == 0) return 0.0;
  std::vector<double> target_norm(k), centre(d, 0.0);
  for (Index j = 0; j < k; ++j) {
    const double* g = target.data() + static_cast<std::size_t>(j) * d;
    double s = 0.0;
    for (std::int64_t c = 0; c < d; ++c) {
      s += g[c] * g[c];
      centre[c] += g[c] / k;
    }
    target_norm[j] = s;
  }
  double radius = 0.0;
  for (Index j = 0; j < k; ++j) {
    const double* g = target.data() + static_cast<std::size_t>(j) * d;
    double s = 0.0;
    for (std::int64_t c = 0; c < d; ++c) s += (g[c] - centre[c]) * (g[c] - centre[c]);
    radius = std::max(radius, std::sqrt(s));
  }
  std::vector<std::pair<double, Index>> bound(n);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    const double* f = source.data() + static_cast<std::size_t>(i) * d;
    double s = 0.0;
    for (std::int64_t c = 0; c < d; ++c) s += (f[c] - centre[c]) * (f[c] - centre[c]);
    const double b = std::sqrt(s) + radius;
    bound[i] = {b * b, i};
  }
  std::sort(bound.begin(), bound.end(), std::greater<>());
  // The bound holds in exact arithmetic; the margin covers the rounding of both computations.
  constexpr double kBoundMargin = 1e-9;
  double best = 0.0;
  for (const auto& [b, i] : bound) {
    if (b * (1.0 + kBoundMargin) + kBoundMargin < best) break;
    const double* f = source.data() + static_cast<std::size_t>(i) * d;
    double f_norm = 0.0;
    for (std::int64_t c = 0; c < d; ++c) f_norm += f[c] * f[c];
    double row_max = 0.0;
#pragma omp parallel for schedule(static) reduction(max : row_max)
    for (Index j = 0; j < k; ++j) {
      const double* g = target.data() + static_cast<std::size_t>(j) * d;
      row_max = std::max(row_max, feature_sq_distance(f, f_norm, g, target_norm[j], d));
    }
    best = std::max(best, row_max);
  }
  return best;
}

}  // namespace gw
