// Private to distances/: a Boost.Graph adaptor over CsrGraphView, so Boost's Dijkstra runs on our
// CSR arrays in place (no second copy of the graph). Only distances/*.cpp include this header;
// Boost never appears in a public header.
//
// The adaptor models IncidenceGraph and VertexListGraph: vertices are Index ids, an edge is its
// CSR position plus its source (Boost's relax() asks for source(e, g)). Edge weights are read by
// position from the view's float32 weights (UnitWeightMap for an unweighted graph).
#pragma once

#include <boost/graph/graph_traits.hpp>
#include <boost/graph/properties.hpp>
#include <boost/iterator/counting_iterator.hpp>
#include <boost/iterator/iterator_facade.hpp>
#include <boost/property_map/property_map.hpp>

#include <cstddef>
#include <iterator>
#include <utility>

#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw::detail {

struct CsrEdge {
  Index source = 0;
  Offset position = 0;
  friend bool operator==(const CsrEdge& a, const CsrEdge& b) { return a.position == b.position; }
  friend bool operator!=(const CsrEdge& a, const CsrEdge& b) { return a.position != b.position; }
};

// Iterates the CSR positions of one row, yielding CsrEdge values.
class CsrOutEdgeIterator : public boost::iterator_facade<CsrOutEdgeIterator,
                                                         CsrEdge,
                                                         std::random_access_iterator_tag,
                                                         CsrEdge,
                                                         std::ptrdiff_t> {
 public:
  CsrOutEdgeIterator() = default;
  CsrOutEdgeIterator(Index source, Offset position) : source_(source), position_(position) {}

 private:
  friend class boost::iterator_core_access;
  CsrEdge dereference() const { return {source_, position_}; }
  bool equal(const CsrOutEdgeIterator& other) const { return position_ == other.position_; }
  void increment() { ++position_; }
  void decrement() { --position_; }
  void advance(std::ptrdiff_t k) { position_ += k; }
  std::ptrdiff_t distance_to(const CsrOutEdgeIterator& other) const {
    return static_cast<std::ptrdiff_t>(other.position_ - position_);
  }

  Index source_ = 0;
  Offset position_ = 0;
};

// The graph type Boost sees. Raw pointers, not spans: the inner loop should not pay for span
// bookkeeping. Lifetime: the arrays of the view it was made from.
struct BoostCsrGraph {
  explicit BoostCsrGraph(const CsrGraphView& view)
      : num_nodes(view.num_nodes),
        row_offsets(view.row_offsets.data()),
        col_indices(view.col_indices.data()) {}

  Index num_nodes;
  const Offset* row_offsets;
  const Index* col_indices;
};

inline std::pair<CsrOutEdgeIterator, CsrOutEdgeIterator> out_edges(Index v,
                                                                   const BoostCsrGraph& g) {
  return {CsrOutEdgeIterator(v, g.row_offsets[v]), CsrOutEdgeIterator(v, g.row_offsets[v + 1])};
}
inline Index source(const CsrEdge& e, const BoostCsrGraph&) { return e.source; }
inline Index target(const CsrEdge& e, const BoostCsrGraph& g) { return g.col_indices[e.position]; }
inline Offset out_degree(Index v, const BoostCsrGraph& g) {
  return g.row_offsets[v + 1] - g.row_offsets[v];
}
inline Index num_vertices(const BoostCsrGraph& g) { return g.num_nodes; }
inline std::pair<boost::counting_iterator<Index>, boost::counting_iterator<Index>> vertices(
    const BoostCsrGraph& g) {
  return {boost::counting_iterator<Index>(0), boost::counting_iterator<Index>(g.num_nodes)};
}

// Edge lengths by CSR position.
struct CsrWeightMap {
  using key_type = CsrEdge;
  using value_type = float;
  using reference = float;
  using category = boost::readable_property_map_tag;
  const float* weights;
};
inline float get(const CsrWeightMap& map, const CsrEdge& e) { return map.weights[e.position]; }

// Every edge has length 1 (an unweighted graph).
struct UnitWeightMap {
  using key_type = CsrEdge;
  using value_type = float;
  using reference = float;
  using category = boost::readable_property_map_tag;
};
inline float get(const UnitWeightMap&, const CsrEdge&) { return 1.0f; }

}  // namespace gw::detail

namespace boost {

template <>
struct graph_traits<gw::detail::BoostCsrGraph> {
  using vertex_descriptor = gw::Index;
  using edge_descriptor = gw::detail::CsrEdge;
  using out_edge_iterator = gw::detail::CsrOutEdgeIterator;
  using vertex_iterator = boost::counting_iterator<gw::Index>;
  using directed_category = directed_tag;
  using edge_parallel_category = allow_parallel_edge_tag;
  struct traversal_category : incidence_graph_tag, vertex_list_graph_tag {};
  using vertices_size_type = gw::Index;
  using edges_size_type = gw::Offset;
  using degree_size_type = gw::Offset;
  // Not modelled (Dijkstra does not need them).
  using adjacency_iterator = void;
  using in_edge_iterator = void;
  using edge_iterator = void;
  static vertex_descriptor null_vertex() { return -1; }
};

}  // namespace boost
