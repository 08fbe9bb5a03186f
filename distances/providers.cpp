#include "distances/providers.h"

#include "core/error.h"

namespace gw {

std::unique_ptr<DistanceProvider> make_distance_provider(const CsrGraphView& graph,
                                                         DistanceMode mode,
                                                         const ProviderOptions& options) {
  switch (mode) {
    case DistanceMode::kPrecomputed:
      return make_precomputed_provider(graph, options.precomputed);
    case DistanceMode::kDijkstra:
      return make_dijkstra_provider(graph, options.dijkstra);
    case DistanceMode::kLandmark:
      return make_landmark_provider(graph, options.landmark);
  }
  GW_THROW(ErrorCode::kInvalidArgument,
           "make_distance_provider: unknown DistanceMode " << static_cast<int>(mode));
}

}  // namespace gw
