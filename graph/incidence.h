// Node -> incident-edge index in CSR form.
//
// For each node, the ids of the edges that touch it, as source or target, ascending; a self loop
// is listed once. Stored as offsets + edge ids, never as a padded [n, max_degree] table: in the
// yeast gene graph one edge type has a node of degree 4,908 among ~6,600 nodes, so padding would
// cost hundreds of MB where the CSR form costs 2E + n + 1 integers.
#pragma once

#include <span>
#include <vector>

#include "core/types.h"
#include "graph/builder.h"
#include "graph/csr_graph.h"

namespace gw {

struct Incidence {
  std::vector<Offset> offsets;   // n + 1
  std::vector<Offset> edge_ids;  // edges touching node i: edge_ids[offsets[i] .. offsets[i+1])

  Index num_nodes() const { return static_cast<Index>(offsets.size()) - 1; }
  std::span<const Offset> edges_of(Index node) const {
    return std::span<const Offset>(edge_ids).subspan(offsets[node],
                                                     offsets[node + 1] - offsets[node]);
  }
};

// Edge e is position e of the edge list (src[e] -> dst[e]). Ids outside [0, num_nodes) throw
// kBadData naming the edge. O(n + E).
Incidence build_incidence(Index num_nodes, const EdgeListView& edges);

// Edge e is CSR position e of the graph.
Incidence build_incidence(const CsrGraphView& graph);

}  // namespace gw
