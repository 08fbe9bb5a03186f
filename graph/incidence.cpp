#include "graph/incidence.h"

#include <numeric>

#include "core/error.h"

namespace gw {

Incidence build_incidence(Index num_nodes, const EdgeListView& edges) {
  GW_CHECK(num_nodes >= 0, "build_incidence: node count must be >= 0, got " << num_nodes);
  GW_CHECK(
      edges.src.size() == edges.dst.size(),
      "build_incidence: " << edges.src.size() << " sources but " << edges.dst.size() << " targets");
  const Offset m = static_cast<Offset>(edges.src.size());
  Incidence inc;
  inc.offsets.assign(static_cast<std::size_t>(num_nodes) + 1, 0);
  for (Offset e = 0; e < m; ++e) {
    const Index u = edges.src[e];
    const Index v = edges.dst[e];
    if (u < 0 || u >= num_nodes || v < 0 || v >= num_nodes) {
      GW_THROW(ErrorCode::kBadData,
               "build_incidence: edge " << e << " (" << u << " -> " << v
                                        << ") has a node id outside [0, " << num_nodes << ")");
    }
    ++inc.offsets[u + 1];
    if (v != u) ++inc.offsets[v + 1];
  }
  std::partial_sum(inc.offsets.begin(), inc.offsets.end(), inc.offsets.begin());
  inc.edge_ids.resize(inc.offsets.back());
  // Scanning edges in order fills every node's list in ascending edge id.
  std::vector<Offset> cursor(inc.offsets.begin(), inc.offsets.end() - 1);
  for (Offset e = 0; e < m; ++e) {
    const Index u = edges.src[e];
    const Index v = edges.dst[e];
    inc.edge_ids[cursor[u]++] = e;
    if (v != u) inc.edge_ids[cursor[v]++] = e;
  }
  return inc;
}

Incidence build_incidence(const CsrGraphView& graph) {
  const EdgeList edges = to_edge_list(graph);
  return build_incidence(graph.num_nodes, edges.view());
}

}  // namespace gw
