#include "distances/precomputed.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/context.h"
#include "core/error.h"
#include "distances/provider_util_impl.h"
#include "distances/shortest_paths.h"

namespace gw {

PrecomputedProvider::PrecomputedProvider(
    std::vector<float> matrix, Index n, std::string name, std::int64_t setup_runs, int threads)
    : matrix_(std::move(matrix)), n_(n), name_(std::move(name)), threads_(threads) {
  GW_CHECK(n >= 0 && matrix_.size() == static_cast<std::size_t>(n) * static_cast<std::size_t>(n),
           "PrecomputedProvider: matrix has " << matrix_.size()
                                              << " entries, expected n x n = " << n << " x " << n);
  counters_.shortest_path_runs = setup_runs;
}

void PrecomputedProvider::distances_to(std::span<const Index> anchors, std::span<float> out) const {
  detail::check_request(anchors, n_, out);
  counters_.count_request(anchors.size());
  std::vector<const float*> rows(anchors.size());
  for (std::size_t k = 0; k < anchors.size(); ++k) {
    rows[k] = matrix_.data() + static_cast<std::size_t>(anchors[k]) * n_;
  }
  detail::gather_columns(rows, n_, out, resolve_threads(threads_));
}

std::unique_ptr<PrecomputedProvider> make_precomputed_provider(const CsrGraphView& graph,
                                                               const PrecomputedOptions& options) {
  const std::size_t n = static_cast<std::size_t>(graph.num_nodes);
  const std::size_t bytes = n * n * sizeof(float);
  GW_CHECK(bytes <= options.max_bytes,
           "precomputed distances for n = " << n << " nodes need " << bytes
                                            << " bytes, above PrecomputedOptions::max_bytes = "
                                            << options.max_bytes
                                            << "; use the dijkstra or landmark mode, or raise "
                                               "max_bytes");
  const int threads = resolve_threads(options.threads);
  std::vector<float> matrix = all_pairs_shortest_paths(graph, threads);
  return std::make_unique<PrecomputedProvider>(
      std::move(matrix), graph.num_nodes, "precomputed", graph.num_nodes, options.threads);
}

namespace {

// The first (row-major) position of an entry that is NaN, -inf or negative, or of a non-zero
// diagonal entry; n * n if none.
std::int64_t first_invalid_entry(const std::vector<float>& d, std::int64_t n, int threads) {
  std::int64_t first = n * n;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(min : first)
  for (std::int64_t i = 0; i < n; ++i) {
    const float* row = d.data() + i * n;
    for (std::int64_t j = 0; j < n; ++j) {
      const float v = row[j];
      // !(v >= 0) catches NaN as well as negative values and -inf.
      if (!(v >= 0.0f) || (i == j && v != 0.0f)) {
        first = std::min(first, i * n + j);
        break;
      }
    }
  }
  return first;
}

bool nearly_equal(float a, float b, float tolerance) {
  if (a == b) return true;  // also equal infinities
  if (std::isinf(a) || std::isinf(b)) return false;
  return std::abs(a - b) <= tolerance * std::max(a, b);
}

// The first (row-major, upper triangle) position (i, j), i < j, with D[i][j] and D[j][i] further
// apart than the tolerance; n * n if none. Tiled so the transposed reads stay in cache.
std::int64_t first_asymmetric_entry(const std::vector<float>& d,
                                    std::int64_t n,
                                    float tolerance,
                                    int threads) {
  constexpr std::int64_t kTile = 64;
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  std::int64_t first = n * n;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) reduction(min : first)
  for (std::int64_t ti = 0; ti < tiles; ++ti) {
    for (std::int64_t tj = ti; tj < tiles; ++tj) {
      const std::int64_t i_end = std::min(n, (ti + 1) * kTile);
      const std::int64_t j_end = std::min(n, (tj + 1) * kTile);
      for (std::int64_t i = ti * kTile; i < i_end; ++i) {
        for (std::int64_t j = std::max(i + 1, tj * kTile); j < j_end; ++j) {
          if (!nearly_equal(d[i * n + j], d[j * n + i], tolerance)) {
            first = std::min(first, i * n + j);
          }
        }
      }
    }
  }
  return first;
}

}  // namespace

std::unique_ptr<PrecomputedProvider> make_dense_provider(std::vector<float> matrix,
                                                         Index n,
                                                         const DenseOptions& options) {
  GW_CHECK(n >= 1, "dense distance matrix: n must be >= 1, got " << n);
  const std::int64_t nn = static_cast<std::int64_t>(n) * n;
  GW_CHECK(static_cast<std::int64_t>(matrix.size()) == nn,
           "dense distance matrix has " << matrix.size() << " entries, expected n x n = " << n
                                        << " x " << n << " (a square, row-major matrix)");
  GW_CHECK(options.symmetry_tolerance >= 0.0f,
           "DenseOptions::symmetry_tolerance must be >= 0, got " << options.symmetry_tolerance);
  const int threads = resolve_threads(options.threads);

  const std::int64_t bad = first_invalid_entry(matrix, n, threads);
  if (bad < nn) {
    const std::int64_t i = bad / n;
    const std::int64_t j = bad % n;
    if (i == j && matrix[bad] >= 0.0f) {
      GW_THROW(ErrorCode::kBadData,
               "dense distance matrix has D[" << i << "][" << i << "] = " << matrix[bad]
                                              << " on the diagonal; a node's distance to itself "
                                                 "must be 0");
    }
    GW_THROW(ErrorCode::kBadData,
             "dense distance matrix has D[" << i << "][" << j << "] = " << matrix[bad]
                                            << "; entries must be >= 0 or +inf (unreachable)");
  }
  if (!options.allow_asymmetric) {
    const std::int64_t asym =
        first_asymmetric_entry(matrix, n, options.symmetry_tolerance, threads);
    if (asym < nn) {
      const std::int64_t i = asym / n;
      const std::int64_t j = asym % n;
      GW_THROW(ErrorCode::kBadData,
               "dense distance matrix is not symmetric: D["
                   << i << "][" << j << "] = " << matrix[i * n + j] << " but D[" << j << "][" << i
                   << "] = " << matrix[j * n + i]
                   << "; symmetrize it or set DenseOptions::allow_asymmetric");
    }
  }
  return std::make_unique<PrecomputedProvider>(std::move(matrix), n, "dense", 0, options.threads);
}

}  // namespace gw
