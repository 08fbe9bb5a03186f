#include "graph/batch.h"

#include <limits>

#include "core/error.h"

namespace gw {

GraphBatch batch_graphs(std::span<const CsrGraphView> graphs) {
  GraphBatch batch;
  batch.node_offsets.assign(graphs.size() + 1, 0);
  batch.edge_offsets.assign(graphs.size() + 1, 0);
  const bool weighted = !graphs.empty() && graphs[0].has_weights();
  for (std::size_t b = 0; b < graphs.size(); ++b) {
    GW_CHECK(graphs[b].has_weights() == weighted,
             "batch_graphs: graph " << b << " is " << (weighted ? "unweighted" : "weighted")
                                    << " but graph 0 is not; give all graphs weights or none");
    batch.node_offsets[b + 1] = batch.node_offsets[b] + graphs[b].num_nodes;
    batch.edge_offsets[b + 1] = batch.edge_offsets[b] + graphs[b].num_edges();
  }
  const Offset total_nodes = batch.node_offsets.back();
  GW_CHECK(
      total_nodes <= std::numeric_limits<Index>::max(),
      "batch_graphs: " << total_nodes << " nodes in total exceed the node id range (2^31 - 1)");
  const Offset total_edges = batch.edge_offsets.back();

  std::vector<Offset> row_offsets(static_cast<std::size_t>(total_nodes) + 1, 0);
  std::vector<Index> cols(total_edges);
  std::vector<float> weights(weighted ? total_edges : 0);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t b = 0; b < graphs.size(); ++b) {
    const CsrGraphView& g = graphs[b];
    const Index node_base = static_cast<Index>(batch.node_offsets[b]);
    const Offset edge_base = batch.edge_offsets[b];
    for (Index i = 0; i < g.num_nodes; ++i) {
      row_offsets[node_base + i + 1] = edge_base + g.row_offsets[i + 1];
    }
    for (Offset e = 0; e < g.num_edges(); ++e) cols[edge_base + e] = g.col_indices[e] + node_base;
    if (weighted) std::copy(g.weights.begin(), g.weights.end(), weights.begin() + edge_base);
  }
  batch.graph = CsrGraph(
      static_cast<Index>(total_nodes), std::move(row_offsets), std::move(cols), std::move(weights));
  return batch;
}

CsrGraph unbatch_graph(const GraphBatch& batch, Index b) {
  GW_CHECK(b >= 0 && b < batch.num_graphs(),
           "unbatch_graph: graph " << b << " outside [0, " << batch.num_graphs() << ")");
  const CsrGraphView all = batch.graph.view();
  const Index node_base = static_cast<Index>(batch.node_offsets[b]);
  const Index n = batch.num_nodes_of(b);
  const Offset edge_base = batch.edge_offsets[b];
  const Offset m = batch.edge_offsets[b + 1] - edge_base;
  std::vector<Offset> row_offsets(static_cast<std::size_t>(n) + 1);
  for (Index i = 0; i <= n; ++i) row_offsets[i] = all.row_offsets[node_base + i] - edge_base;
  std::vector<Index> cols(m);
  for (Offset e = 0; e < m; ++e) cols[e] = all.col_indices[edge_base + e] - node_base;
  std::vector<float> weights;
  if (all.has_weights()) {
    weights.assign(all.weights.begin() + edge_base, all.weights.begin() + edge_base + m);
  }
  return CsrGraph(n, std::move(row_offsets), std::move(cols), std::move(weights));
}

std::vector<CsrGraph> unbatch_graphs(const GraphBatch& batch) {
  std::vector<CsrGraph> graphs;
  graphs.reserve(batch.num_graphs());
  for (Index b = 0; b < batch.num_graphs(); ++b) graphs.push_back(unbatch_graph(batch, b));
  return graphs;
}

}  // namespace gw
