// Graph Laplacians.
#pragma once

#include "graph/csr_graph.h"

namespace gw {

// The symmetric normalized Laplacian L = I - D^{-1/2} A D^{-1/2} of a weighted graph, in float64.
//
// A is the weighted adjacency (an unweighted graph has weights 1; parallel edges add up; a self
// loop i -> i contributes A_ii). D is the diagonal of weighted OUT-degrees d_i = sum_j A_ij, so a
// directed graph is normalized by the degrees of its rows. Nodes with d_i = 0 (isolated nodes, or
// sinks of a directed graph) use D^{-1/2}_ii = 0: their rows and columns of D^{-1/2} A D^{-1/2} are
// zero, so L_ii = 1 and the node only keeps its own signal under diffusion.
//
// The result has every diagonal entry present (merged with the self loop, if any) and sorted
// columns; its pattern is the graph's pattern plus the diagonal. Eigenvalues of L lie in [0, 2]
// for an undirected graph. The input must have sorted columns (kInvalidArgument otherwise), as
// every graph from build_csr has. O(n + E).
CsrMatrix<double> normalized_laplacian(const CsrGraphView& graph);

}  // namespace gw
