// Reference oracles for shortest paths (tests only, not installed): plain loops, double
// accumulation, no threads, no heap, nothing shared with the optimized code.
#pragma once

#include <vector>

#include "graph/csr_graph.h"

namespace gw::reference {

// All pairs by Floyd-Warshall in double: n x n row-major, D[s * n + v] = length of the shortest
// path s -> v along stored edges (+inf unreachable, 0 on the diagonal). Parallel edges: the
// shortest counts; self loops are ignored (lengths are >= 0). O(n^3) time, O(n^2) memory.
std::vector<double> floyd_warshall(const CsrGraphView& graph);

// Single source by Bellman-Ford in double: n entries, row[v] = length of the shortest path
// source -> v (+inf unreachable). O(n E).
std::vector<double> bellman_ford(const CsrGraphView& graph, Index source);

}  // namespace gw::reference
