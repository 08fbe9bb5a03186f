// Shortest-path lengths on CSR graphs: single source, many sources, all pairs.
//
// Algorithm: Dijkstra (Boost.Graph's dijkstra_shortest_paths_no_color_map, 4-ary heap) run
// directly on the CSR arrays, no copy of the graph. Parallel over sources (OpenMP).
//
// Direction: row[v] is the length of the shortest path source -> v following edges i -> j as
// stored in row i of the CSR. For an undirected graph (both directions stored) this is the usual
// symmetric distance. Unreachable nodes get +inf; row[source] = 0.
//
// Lengths: edge weights are float32 lengths (>= 0, finite; zero-weight edges and self loops are
// fine), 1 for an unweighted graph. Path lengths are accumulated in float32: the value returned
// for a path of h edges is within about h x 2^-24 (relative) of the exact sum, and the path chosen
// is optimal up to that rounding. That is what every provider in distances/ returns.
//
// Thread-safety: pure functions of their inputs; safe to call concurrently.
#pragma once

#include <span>
#include <vector>

#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw {

// Fills `row` (n floats) with the shortest-path lengths from `source` to every node.
// Validates the graph first (O(n + E), gw::Error kBadData for a malformed graph or a negative /
// non-finite weight); kInvalidArgument for a source outside [0, n) or a row of the wrong size.
// Time O(E log n); memory: Boost's heap, O(n).
void shortest_path_lengths(const CsrGraphView& graph, Index source, std::span<float> row);

// Row-major |sources| x n block: rows[k * n + v] = length of the shortest path sources[k] -> v.
// Sources may repeat. Parallel over sources with `threads` OpenMP threads (0 = all available).
// Same checks as shortest_path_lengths (an out-of-range source is named in the message).
void shortest_path_rows(const CsrGraphView& graph,
                        std::span<const Index> sources,
                        std::span<float> rows,
                        int threads = 0);

// All pairs: the n x n row-major matrix D with D[s * n + v] = length of the shortest path
// s -> v (symmetric for an undirected graph). n Dijkstra runs, parallel over sources.
// Memory: 4 n^2 bytes (n = 10,000: 400 MB). Time O(n E log n) / threads.
std::vector<float> all_pairs_shortest_paths(const CsrGraphView& graph, int threads = 0);

}  // namespace gw
