// The sparse-graph core: compressed sparse row (CSR) graphs, owning and non-owning.
//
// Layout (n nodes, E stored edges):
//   row_offsets  int64 [n + 1]   edges of node i are positions [row_offsets[i], row_offsets[i+1])
//   col_indices  int32 [E]       target node of each edge
//   weights      float32 [E]     edge weight (a length, for distances), or empty = unweighted (1)
// A directed edge i -> j is stored once, in row i. An undirected graph stores both directions
// (see build_csr(..., symmetrize)). Columns within a row are sorted ascending in every graph this
// module builds; views over user data need not be sorted unless a function says so.
//
// CsrGraphView is a non-owning view (cheap to copy; the caller keeps the arrays alive). CsrGraph
// owns its arrays (std::vector) and hands out views. Both are immutable once built, so concurrent
// reads from several threads are safe.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace gw {

struct CsrGraphView {
  Index num_nodes = 0;
  std::span<const Offset> row_offsets;  // num_nodes + 1 entries
  std::span<const Index> col_indices;   // num_edges() entries
  std::span<const float> weights;       // num_edges() entries, or empty for an unweighted graph

  Offset num_edges() const { return static_cast<Offset>(col_indices.size()); }
  bool has_weights() const { return !weights.empty(); }
  Offset degree(Index node) const { return row_offsets[node + 1] - row_offsets[node]; }
  // Targets of the edges leaving `node`.
  std::span<const Index> neighbors(Index node) const {
    return col_indices.subspan(row_offsets[node], degree(node));
  }
  // Weights of the edges leaving `node` (empty for an unweighted graph).
  std::span<const float> neighbor_weights(Index node) const {
    return has_weights() ? weights.subspan(row_offsets[node], degree(node))
                         : std::span<const float>{};
  }
  // Weight of the edge at CSR position `edge` (1 for an unweighted graph).
  float weight(Offset edge) const { return has_weights() ? weights[edge] : 1.0f; }
};

class CsrGraph {
 public:
  // An empty graph with zero nodes.
  CsrGraph() : row_offsets_(1, 0) {}
  // Takes ownership of the arrays. Checks only that the sizes agree (row_offsets.size() ==
  // num_nodes + 1, weights empty or as long as col_indices); use validate() for a full check.
  CsrGraph(Index num_nodes,
           std::vector<Offset> row_offsets,
           std::vector<Index> col_indices,
           std::vector<float> weights = {});

  // A deep copy of any view.
  static CsrGraph copy_of(const CsrGraphView& view);

  CsrGraphView view() const { return {num_nodes_, row_offsets_, col_indices_, weights_}; }
  operator CsrGraphView() const { return view(); }  // NOLINT(google-explicit-constructor)

  Index num_nodes() const { return num_nodes_; }
  Offset num_edges() const { return static_cast<Offset>(col_indices_.size()); }
  bool has_weights() const { return !weights_.empty(); }
  const std::vector<Offset>& row_offsets() const { return row_offsets_; }
  const std::vector<Index>& col_indices() const { return col_indices_; }
  const std::vector<float>& weights() const { return weights_; }

 private:
  Index num_nodes_ = 0;
  std::vector<Offset> row_offsets_;
  std::vector<Index> col_indices_;
  std::vector<float> weights_;
};

// A general sparse matrix in CSR form with values of type T (rows x cols; row i's entries are
// positions [row_offsets[i], row_offsets[i+1]), columns sorted ascending). Used for operators
// derived from graphs, such as the normalized Laplacian, where the values are not edge lengths.
template <typename T>
struct CsrMatrix {
  Index rows = 0;
  Index cols = 0;
  std::vector<Offset> row_offsets;
  std::vector<Index> col_indices;
  std::vector<T> values;

  Offset nnz() const { return static_cast<Offset>(col_indices.size()); }
};

// Validates a view and throws gw::Error(kBadData) naming `name` and the first problem found:
// row_offsets of the wrong length, not starting at 0, not monotone, not ending at num_edges();
// a column index outside [0, num_nodes); weights of the wrong length; a negative or non-finite
// weight. O(n + E).
void validate(const CsrGraphView& graph, std::string_view name = "graph");

// True when every edge i -> j with weight w has a reverse edge j -> i with the same weight.
// Requires sorted columns. O(E log deg).
bool is_symmetric(const CsrGraphView& graph);

}  // namespace gw
