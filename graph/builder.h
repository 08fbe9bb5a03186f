// Building CSR graphs from edge lists, and back.
#pragma once

#include <span>
#include <vector>

#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw {

// A list of E directed edges src[e] -> dst[e] with optional weights (empty = unweighted).
// Non-owning; the caller keeps the arrays alive.
struct EdgeListView {
  std::span<const Index> src;
  std::span<const Index> dst;
  std::span<const float> weights;
};

// An owning edge list (what to_edge_list returns).
struct EdgeList {
  std::vector<Index> src;
  std::vector<Index> dst;
  std::vector<float> weights;  // empty for an unweighted graph

  EdgeListView view() const { return {src, dst, weights}; }
  Offset size() const { return static_cast<Offset>(src.size()); }
};

// What to do with parallel edges (same source and target).
enum class DuplicatePolicy {
  kKeepAll,  // keep every copy (multigraph)
  kMin,      // one edge with the smallest weight
  kMax,      // one edge with the largest weight
  kSum,      // one edge with the summed weight
};

enum class SelfLoopPolicy { kKeep, kDrop };

struct BuildOptions {
  // Add the reverse of every edge, making the graph undirected. Parallel edges are then merged by
  // `duplicates`, where kKeepAll is taken to mean kMax ("symmetrize by max"): an undirected graph
  // has one length per node pair.
  bool symmetrize = false;
  DuplicatePolicy duplicates = DuplicatePolicy::kKeepAll;
  SelfLoopPolicy self_loops = SelfLoopPolicy::kKeep;
};

// Builds a CSR graph with `num_nodes` nodes from an edge list. Columns are sorted within each
// row; kept parallel edges stay in input order. Throws gw::Error(kBadData) naming the edge for an
// id outside [0, num_nodes) or a negative / non-finite weight, and kInvalidArgument for arrays of
// different lengths. O(E log(max degree)) time, O(n + E) extra memory. Uses OpenMP over rows.
CsrGraph build_csr(Index num_nodes, const EdgeListView& edges, const BuildOptions& options = {});

// The edges of a CSR graph in CSR order (row by row).
EdgeList to_edge_list(const CsrGraphView& graph);

}  // namespace gw
