#include "cellgraph/edge_masks_reference.h"

namespace gw {

std::vector<std::uint8_t> keep_mask_reference(Index num_nodes,
                                              const EdgeListView& edges,
                                              const PerturbationBatch& batch) {
  const Index samples = batch.num_samples();
  const Offset m = static_cast<Offset>(edges.src.size());
  std::vector<std::uint8_t> keep(static_cast<std::size_t>(samples * m));
  std::vector<bool> perturbed(num_nodes);
  for (Index b = 0; b < samples; ++b) {
    perturbed.assign(num_nodes, false);
    for (Offset i = batch.ptr[b]; i < batch.ptr[b + 1]; ++i) perturbed[batch.ids[i]] = true;
    for (Offset e = 0; e < m; ++e) {
      const bool dropped = perturbed[edges.src[e]] || perturbed[edges.dst[e]];
      keep[b * m + e] = dropped ? 0 : 1;
    }
  }
  return keep;
}

RemovedEdges removed_edges_reference(Index num_nodes,
                                     const EdgeListView& edges,
                                     const PerturbationBatch& batch) {
  const std::vector<std::uint8_t> keep = keep_mask_reference(num_nodes, edges, batch);
  const Index samples = batch.num_samples();
  const Offset m = static_cast<Offset>(edges.src.size());
  RemovedEdges out;
  out.num_edges = m;
  out.ptr.push_back(0);
  for (Index b = 0; b < samples; ++b) {
    for (Offset e = 0; e < m; ++e) {
      if (keep[b * m + e] == 0) out.positions.push_back(b * m + e);
    }
    out.ptr.push_back(static_cast<Offset>(out.positions.size()));
  }
  return out;
}

BatchEdgeList filter_edges_reference(Index num_nodes,
                                     const EdgeListView& edges,
                                     const std::vector<std::uint8_t>& keep,
                                     Index num_samples) {
  const Offset m = static_cast<Offset>(edges.src.size());
  BatchEdgeList out;
  out.ptr.push_back(0);
  for (Index b = 0; b < num_samples; ++b) {
    for (Offset e = 0; e < m; ++e) {
      if (keep[b * m + e] == 0) continue;
      out.src.push_back(b * num_nodes + edges.src[e]);
      out.dst.push_back(b * num_nodes + edges.dst[e]);
      out.edge_ids.push_back(e);
    }
    out.ptr.push_back(out.size());
  }
  return out;
}

}  // namespace gw
