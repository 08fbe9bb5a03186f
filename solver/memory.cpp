// Up-front memory estimates of each path (strategy.h: estimate_memory), read by choose_strategy.
#include <algorithm>

#include "core/context.h"
#include "core/error.h"
#include "solver/sparse/sparse_impl.h"
#include "solver/strategy.h"

namespace gw {

namespace {

// The share of physical memory the default budget allows.
constexpr double kDefaultMemoryFraction = 0.6;
// The transient of the sparse path's quantization (provider output per block of picks).
constexpr double kQuantizeBlock = 64.0 * 1048576.0;
// Loss-estimate anchors per block on the sparse path.
constexpr double kSparseLossBlock = 64.0;

double provider_bytes(const Geometry& g, const Options& options) {
  const double n = static_cast<double>(g.num_nodes());
  switch (g.kind()) {
    case Geometry::Kind::kProvider:
      return g.provider() ? static_cast<double>(g.provider()->memory_bytes()) : 0.0;
    case Geometry::Kind::kDistances:
      return 4.0 * n * n;  // the provider's own copy
    case Geometry::Kind::kPoints:
    case Geometry::Kind::kGraph: {
      const DistanceMode mode = options.distance_mode.value_or(
          g.num_nodes() <= options.auto_precomputed_max_nodes ? DistanceMode::kPrecomputed
                                                              : DistanceMode::kLandmark);
      // A symmetrized kNN graph: up to 2 knn edges per node, 4-byte column + 8-byte weight, plus
      // the unsymmetrized lists while it is built.
      const double graph =
          g.kind() == Geometry::Kind::kPoints ? 2.0 * 12.0 * n * options.knn : 0.0;
      double provider = 0.0;
      switch (mode) {
        case DistanceMode::kPrecomputed:
          provider = 4.0 * n * n;
          break;
        case DistanceMode::kLandmark:
          provider = (8.0 * options.num_landmarks + 12.0) * n;
          break;
        case DistanceMode::kDijkstra:
          provider = options.dijkstra_cache_bytes > 0 ? options.dijkstra_cache_bytes
                                                      : 512.0 * 1048576.0;
          provider = std::min(provider, 4.0 * n * n) + graph / 2.0;
          break;
      }
      return provider + graph;
    }
    case Geometry::Kind::kNodes:
    case Geometry::Kind::kNone:
      break;
  }
  return 0.0;
}

std::size_t to_bytes(double x) { return static_cast<std::size_t>(std::max(0.0, x)); }

}  // namespace

MemoryEstimate estimate_memory(const Problem& problem, const Options& options) {
  MemoryEstimate e;
  const double n = static_cast<double>(problem.source.num_nodes());
  const double k = static_cast<double>(problem.target.num_nodes());
  const bool gw_term = options.fused_weight < 1.0;
  const double inputs = gw_term ? provider_bytes(problem.source, options) +
                                      provider_bytes(problem.target, options)
                                : 0.0;
  e.inputs = to_bytes(inputs);
  const double nk = n * k;
  const double loop = (options.precision == Precision::kF64 ? 16.0 : 12.0) * nk;
  const double loss_anchors = options.loss_anchors;
  const double loss = 8.0 * nk + loss_anchors * (20.0 * n + 12.0 * k);
  // Features instead of a feature cost: the dense paths materialize the n x k cost.
  const bool features = options.fused_weight > 0.0 && problem.source_features.has_value();
  const double feature_cost = features ? 8.0 * nk : 0.0;
  e.dense = to_bytes(inputs + std::max(loop, loss) + feature_cost);

  const double width = options.support_size;
  const double nnz = n * std::min(width, k) + k * (1.0 + options.support_feature_candidates);
  const double m = options.max_anchors(static_cast<Index>(n), static_cast<Index>(k));
  const double cells = static_cast<double>(detail::resolved_support_cells(
      std::max<Index>(1, problem.source.num_nodes()),
      std::max<Index>(1, problem.target.num_nodes()), options));
  const double support =
      (features ? 48.0 : 40.0) * nnz + 4.0 * (n + k) * m + 64.0 * n + 40.0 * k;
  const double quantize = std::min(kQuantizeBlock, 4.0 * std::max(n, k) * cells) + 8.0 * (n + k);
  // The coarse level: a dense solve (28 bytes per cell pair), and while its orientation candidates
  // run (solver/sparse/handedness.cpp) the cells' distances in float64 (16), up to three coarse
  // plans kept for the fine probes (24) and the candidates' start plans (16), with a second solve.
  const double coarse = (28.0 + 16.0 + 24.0 + 16.0) * cells * cells;
  const double finish = 28.0 * nnz + kSparseLossBlock * 4.0 * (n + k) + 16.0 * (n + k);
  e.sparse = to_bytes(inputs + std::max({support, quantize, finish}) + coarse);
  e.exact = to_bytes(inputs + 12.0 * (n * n + k * k) + 64.0 * nk + feature_cost);

  e.limit = options.memory_limit > 0
                ? options.memory_limit
                : to_bytes(kDefaultMemoryFraction * static_cast<double>(physical_memory_bytes()));
  return e;
}


}  // namespace gw
