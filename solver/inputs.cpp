#include "solver/inputs.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
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
                          std::int64_t d,
                          std::int64_t max_pairs) {
  check_feature_shapes(source, n, target, k, d);
  if (n == 0 || k == 0) return 0.0;
  // The targets are covered by up to kBalls balls (farthest-point centres, each target in its
  // nearest centre's ball): max_j |f - g_j| <= max_b |f - c_b| + r_b, a bound that stays close to
  // the true row maximum where one ball around the targets' centroid does not (centred PCA scores
  // in 30 dimensions: that bound exceeded the answer for nearly every row, and the search became
  // the full n k d scan, minutes at 2 x 10^5 cells). Rows are visited by decreasing bound, and
  // within a row only the balls whose bound can still beat the maximum are scanned. Every pair
  // skipped is provably below the maximum, and the pairs scanned are evaluated exactly as
  // feature_cost_from_features does, so the result is the same double.
  constexpr Index kBalls = 128;
  const auto row = [d](std::span<const double> x, Index i) {
    return x.data() + static_cast<std::size_t>(i) * d;
  };
  const auto distance = [d](const double* a, const double* b) {
    double s = 0.0;
    for (std::int64_t c = 0; c < d; ++c) s += (a[c] - b[c]) * (a[c] - b[c]);
    return std::sqrt(s);
  };
  std::vector<double> target_norm(k);
  double largest_norm = 0.0;
  for (Index j = 0; j < k; ++j) {
    const double* g = row(target, j);
    double s = 0.0;
    for (std::int64_t c = 0; c < d; ++c) s += g[c] * g[c];
    target_norm[j] = s;
    largest_norm = std::max(largest_norm, s);
  }
  // Farthest-point centres: the first target, then repeatedly the target farthest from all.
  const Index balls = std::min(k, kBalls);
  std::vector<Index> centre{0};
  std::vector<double> to_centre(k);
  std::vector<Index> owner(k, 0);
  for (Index j = 0; j < k; ++j) to_centre[j] = distance(row(target, j), row(target, 0));
  while (static_cast<Index>(centre.size()) < balls) {
    const Index next = static_cast<Index>(
        std::max_element(to_centre.begin(), to_centre.end()) - to_centre.begin());
    if (to_centre[next] == 0.0) break;  // every target sits on a centre
    const Index b = static_cast<Index>(centre.size());
    centre.push_back(next);
#pragma omp parallel for schedule(static)
    for (Index j = 0; j < k; ++j) {
      const double dist = distance(row(target, j), row(target, next));
      if (dist < to_centre[j]) {
        to_centre[j] = dist;
        owner[j] = b;
      }
    }
  }
  const Index nb = static_cast<Index>(centre.size());
  std::vector<double> radius(nb, 0.0);
  std::vector<std::vector<Index>> members(nb);
  for (Index j = 0; j < k; ++j) {
    radius[owner[j]] = std::max(radius[owner[j]], to_centre[j]);
    members[owner[j]].push_back(j);
  }
  // Per row, the distance bound to each ball and the row's bound (squared).
  // float32, rounded up so each stays a bound: 4 n x 128 bytes (100 MB at 2 x 10^5 rows).
  std::vector<float> ball_bound(static_cast<std::size_t>(n) * nb);
  std::vector<std::pair<double, Index>> bound(n);
  double largest_source_norm = 0.0;
#pragma omp parallel for schedule(static) reduction(max : largest_source_norm)
  for (Index i = 0; i < n; ++i) {
    const double* f = row(source, i);
    double b_max = 0.0, f_norm = 0.0;
    for (std::int64_t c = 0; c < d; ++c) f_norm += f[c] * f[c];
    for (Index b = 0; b < nb; ++b) {
      const double b_i = distance(f, row(target, centre[b])) + radius[b];
      float stored = static_cast<float>(b_i * b_i);
      if (stored < b_i * b_i) stored = std::nextafter(stored, std::numeric_limits<float>::infinity());
      ball_bound[static_cast<std::size_t>(i) * nb + b] = stored;
      b_max = std::max(b_max, b_i * b_i);
    }
    bound[i] = {b_max, i};
    largest_source_norm = std::max(largest_source_norm, f_norm);
  }
  std::sort(bound.begin(), bound.end(), std::greater<>());
  // The bounds hold in exact arithmetic. The margin covers their rounding and that of the
  // expanded form |f|^2 + |g|^2 - 2 f.g (error ~ eps (|f|^2 + |g|^2)).
  const double margin = 1e-9 + 1e-12 * (largest_norm + largest_source_norm);
  const auto may_beat = [margin](double b, double best) { return b * (1.0 + 1e-9) + margin >= best; };
  double best = 0.0;
  constexpr Index kChunk = 64;  // rows scanned in parallel between two stopping tests
  std::int64_t scanned = 0;     // pairs evaluated so far, counted per chunk
  for (Index start = 0; start < n; start += kChunk) {
    if (!may_beat(bound[start].first, best)) break;
    // The budget: the rows of highest bound have been scanned; the maximum found among them is
    // the scale (see the header).
    if (scanned >= max_pairs) break;
    const Index stop = std::min(n, start + kChunk);
    const double floor = best;
    double chunk_max = 0.0;
    std::int64_t chunk_pairs = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(max : chunk_max) reduction(+ : chunk_pairs)
    for (Index r = start; r < stop; ++r) {
      const Index i = bound[r].second;
      if (!may_beat(bound[r].first, floor)) continue;
      const double* f = row(source, i);
      double f_norm = 0.0;
      for (std::int64_t c = 0; c < d; ++c) f_norm += f[c] * f[c];
      double row_max = floor;
      for (Index b = 0; b < nb; ++b) {
        if (!may_beat(ball_bound[static_cast<std::size_t>(i) * nb + b], row_max)) continue;
        for (Index j : members[b]) {
          row_max = std::max(row_max, feature_sq_distance(f, f_norm, row(target, j), target_norm[j], d));
        }
        chunk_pairs += static_cast<std::int64_t>(members[b].size());
      }
      chunk_max = std::max(chunk_max, row_max);
    }
    best = std::max(best, chunk_max);
    scanned += chunk_pairs;
  }
  return best;
}

}  // namespace gw
