// Offset batching: B graphs as one block-diagonal graph, and back.
//
// Graph b's node i becomes node node_offsets[b] + i of the batch and its edges occupy positions
// [edge_offsets[b], edge_offsets[b+1]) of the batch's CSR arrays, in the same order. A kernel can
// then run once over the batch (one SpMM, one Dijkstra pool) and results are scattered back with
// the offsets.
#pragma once

#include <span>
#include <vector>

#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw {

struct GraphBatch {
  CsrGraph graph;                    // block-diagonal union of the B graphs
  std::vector<Offset> node_offsets;  // B + 1 cumulative node counts
  std::vector<Offset> edge_offsets;  // B + 1 cumulative edge counts

  Index num_graphs() const { return static_cast<Index>(node_offsets.size()) - 1; }
  Index num_nodes_of(Index b) const {
    return static_cast<Index>(node_offsets[b + 1] - node_offsets[b]);
  }
};

// Concatenates the graphs. All must be weighted or all unweighted (kInvalidArgument otherwise);
// the total node count must fit gw::Index. O(total nodes + edges).
GraphBatch batch_graphs(std::span<const CsrGraphView> graphs);

// Graph b of the batch, with local node ids (a copy). O(nodes + edges of graph b).
CsrGraph unbatch_graph(const GraphBatch& batch, Index b);

// All graphs of the batch.
std::vector<CsrGraph> unbatch_graphs(const GraphBatch& batch);

}  // namespace gw
