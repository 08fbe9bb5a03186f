// Geometry -> DistanceProvider, the one place the solver chooses a distance mode.
#include <numeric>
#include <span>
#include <vector>

#include "core/error.h"
#include "distances/precomputed.h"
#include "distances/providers.h"
#include "graph/knn.h"
#include "solver/solver_impl.h"

namespace gw::detail {

namespace {

std::shared_ptr<const DistanceProvider> provider_for_graph(const CsrGraphView& graph,
                                                           const Options& options) {
  const DistanceMode mode = options.distance_mode.value_or(
      graph.num_nodes <= options.auto_precomputed_max_nodes ? DistanceMode::kPrecomputed
                                                            : DistanceMode::kLandmark);
  ProviderOptions provider;
  provider.precomputed.threads = options.threads;
  provider.dijkstra.threads = options.threads;
  if (options.dijkstra_cache_bytes > 0) {
    provider.dijkstra.cache_memory_bytes = options.dijkstra_cache_bytes;
  }
  provider.landmark.num_landmarks = options.num_landmarks;
  provider.landmark.seed = options.seed;
  provider.landmark.threads = options.threads;
  return make_distance_provider(graph, mode, provider);
}

}  // namespace

std::shared_ptr<const DistanceProvider> make_provider(const Geometry& geometry,
                                                      const Options& options,
                                                      const char* side) {
  switch (geometry.kind()) {
    case Geometry::Kind::kProvider:
      return geometry.provider();
    case Geometry::Kind::kDistances: {
      DenseOptions dense;
      dense.threads = options.threads;
      const DenseMatrix<float>& d = geometry.distances();
      return make_dense_provider(d.values, d.rows, dense);
    }
    case Geometry::Kind::kPoints: {
      KnnGraphOptions knn;
      knn.k = options.knn;
      knn.connect = true;
      const CsrGraph graph = knn_graph(std::span<const double>(geometry.points()),
                                       geometry.num_nodes(),
                                       geometry.dimension(),
                                       knn);
      return provider_for_graph(graph, options);
    }
    case Geometry::Kind::kGraph:
      return provider_for_graph(geometry.graph(), options);
    case Geometry::Kind::kNodes:
    case Geometry::Kind::kNone:
      break;
  }
  GW_THROW(ErrorCode::kInvalidArgument, "the " << side << " geometry has no distances");
}

std::vector<float> normalized_full_distances(const DistanceProvider& provider) {
  const Index n = provider.num_nodes();
  std::vector<Index> all(n);
  std::iota(all.begin(), all.end(), 0);
  std::vector<float> block(static_cast<std::size_t>(n) * n);
  provider.distances_to(all, block);
  clamp_and_normalize(block, true);
  return block;
}

}  // namespace gw::detail

namespace gw {

std::shared_ptr<const DistanceProvider> distance_provider_for(const Geometry& geometry,
                                                              const Options& options) {
  return detail::make_provider(geometry, options, "given");
}

}  // namespace gw
