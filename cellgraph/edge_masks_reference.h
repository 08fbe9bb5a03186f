// Reference oracle of the edge masks (cellgraph/edge_masks.h): the definition, in plain loops.
// Not installed; used by tests and benchmarks. The batch must be valid (see
// validate_perturbations); nothing is checked here.
#pragma once

#include <cstdint>
#include <vector>

#include "cellgraph/edge_masks.h"
#include "graph/builder.h"

namespace gw {

// keep[b * E + e] = 1 iff neither edges.src[e] nor edges.dst[e] is among sample b's ids.
std::vector<std::uint8_t> keep_mask_reference(Index num_nodes,
                                              const EdgeListView& edges,
                                              const PerturbationBatch& batch);

// The zero positions of keep_mask_reference, ascending, with the per-sample ptr.
RemovedEdges removed_edges_reference(Index num_nodes,
                                     const EdgeListView& edges,
                                     const PerturbationBatch& batch);

// Edges e with keep[b * E + e] = 1 in order of (b, e), with batch node ids b * n + endpoint.
BatchEdgeList filter_edges_reference(Index num_nodes,
                                     const EdgeListView& edges,
                                     const std::vector<std::uint8_t>& keep,
                                     Index num_samples);

}  // namespace gw
