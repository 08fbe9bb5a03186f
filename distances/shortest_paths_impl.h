// Private to distances/: the unchecked Dijkstra kernel the providers call after validating their
// graph once at construction (shortest_paths.h's public functions validate on every call).
#pragma once

#include <span>

#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw::detail {

// row[v] = shortest-path length source -> v (+inf if unreachable), row has n entries. The graph
// must be valid (validate()) and source in [0, n): nothing is checked here.
void dijkstra_row(const CsrGraphView& graph, Index source, float* row);

// Throws kInvalidArgument naming the first id of `ids` outside [0, n); `what` names the ids
// ("anchor", "source").
void check_node_ids(std::span<const Index> ids, Index n, const char* what);

}  // namespace gw::detail
