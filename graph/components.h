// Connected components, and stitching a disconnected point-cloud graph into a connected one.
#pragma once

#include <span>
#include <vector>

#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw {

struct Components {
  Index count = 0;
  // labels[i] = component of node i. Components are numbered in order of their smallest node, so
  // labels[0] == 0 and the numbering is deterministic.
  std::vector<Index> labels;
  // sizes[c] = number of nodes in component c.
  std::vector<Index> sizes;
};

// Weakly connected components: edge direction is ignored (i -> j joins i and j). O(n + E) with
// union-find (path halving, union by index).
Components connected_components(const CsrGraphView& graph);

// An edge added by stitch_components.
struct Bridge {
  Index source = 0;  // a node of the growing main component
  Index target = 0;  // the closest node outside it
  float length = 0;  // Euclidean distance between the two points
};

struct StitchResult {
  CsrGraph graph;               // the input plus both directions of every bridge
  std::vector<Bridge> bridges;  // in the order they were added (count - 1 of them)
};

// Makes the graph over `points` (n x d, row-major, n = graph.num_nodes) connected: starting from
// the component of node 0, repeatedly add the shortest Euclidean edge between the component grown
// so far and any node outside it (Prim's rule over components), until one component remains.
// Ties are broken by the smallest outside node, then the smallest inside node. An already
// connected graph is returned unchanged with no bridges.
// Cost: O(n d) per added bridge plus O(|C| (n - |A|) d) for each merged component C; O(n^2 d)
// in the worst case (many tiny components), nothing when the graph is connected.
StitchResult stitch_components(const CsrGraphView& graph, std::span<const double> points, int d);
StitchResult stitch_components(const CsrGraphView& graph, std::span<const float> points, int d);

}  // namespace gw
