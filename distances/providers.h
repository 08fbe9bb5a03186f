// One entry point for the solver and the CLI: a distance provider for a graph from a DistanceMode.
#pragma once

#include <memory>

#include "distances/dijkstra_provider.h"
#include "distances/distance_provider.h"
#include "distances/landmark.h"
#include "distances/precomputed.h"
#include "graph/csr_graph.h"

namespace gw {

// Options of every mode; make_distance_provider reads the member of the mode it builds.
struct ProviderOptions {
  PrecomputedOptions precomputed;
  DijkstraOptions dijkstra;
  LandmarkOptions landmark;
};

// kPrecomputed -> make_precomputed_provider, kDijkstra -> make_dijkstra_provider,
// kLandmark -> make_landmark_provider (see those for costs and errors). The provider does not
// refer to `graph` after it returns.
std::unique_ptr<DistanceProvider> make_distance_provider(const CsrGraphView& graph,
                                                         DistanceMode mode,
                                                         const ProviderOptions& options = {});

}  // namespace gw
