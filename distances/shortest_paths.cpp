#include "distances/shortest_paths.h"

#include <boost/graph/dijkstra_shortest_paths_no_color_map.hpp>

#include <algorithm>
#include <functional>
#include <limits>

#include "core/context.h"
#include "core/error.h"
#include "distances/boost_csr_impl.h"
#include "distances/shortest_paths_impl.h"

namespace gw {
namespace detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// No visitor callbacks: Boost's default visitor compiles to nothing in the inner loop.
template <typename WeightMap>
void run_dijkstra(const BoostCsrGraph& g, WeightMap weights, Index source, float* row) {
  std::fill(row, row + g.num_nodes, kInf);
  row[source] = 0.0f;
  // The _no_init variant skips Boost's own initialization pass (we just did it, with +inf as the
  // "undiscovered" marker it also uses as distance_infinity). std::plus is exact for IEEE
  // infinities, so closed_plus's extra comparisons are not needed.
  boost::dijkstra_shortest_paths_no_color_map_no_init(g,
                                                      source,
                                                      boost::dummy_property_map(),
                                                      row,
                                                      weights,
                                                      boost::typed_identity_property_map<Index>(),
                                                      std::less<float>(),
                                                      std::plus<float>(),
                                                      kInf,
                                                      0.0f,
                                                      boost::default_dijkstra_visitor());
}

}  // namespace

void dijkstra_row(const CsrGraphView& graph, Index source, float* row) {
  const BoostCsrGraph g(graph);
  if (graph.has_weights()) {
    run_dijkstra(g, CsrWeightMap{graph.weights.data()}, source, row);
  } else {
    run_dijkstra(g, UnitWeightMap{}, source, row);
  }
}

void check_node_ids(std::span<const Index> ids, Index n, const char* what) {
  for (std::size_t k = 0; k < ids.size(); ++k) {
    GW_CHECK(ids[k] >= 0 && ids[k] < n,
             what << " id " << ids[k] << " (position " << k << ") is outside [0, " << n
                  << "): the graph has " << n << " nodes; pass ids in [0, " << n << ")");
  }
}

}  // namespace detail

void shortest_path_lengths(const CsrGraphView& graph, Index source, std::span<float> row) {
  validate(graph, "graph");
  const Index ids[] = {source};
  detail::check_node_ids(ids, graph.num_nodes, "source");
  GW_CHECK(row.size() == static_cast<std::size_t>(graph.num_nodes),
           "shortest_path_lengths: row has " << row.size()
                                             << " entries, expected n = " << graph.num_nodes);
  detail::dijkstra_row(graph, source, row.data());
}

void shortest_path_rows(const CsrGraphView& graph,
                        std::span<const Index> sources,
                        std::span<float> rows,
                        int threads) {
  validate(graph, "graph");
  detail::check_node_ids(sources, graph.num_nodes, "source");
  const std::size_t n = static_cast<std::size_t>(graph.num_nodes);
  GW_CHECK(rows.size() == sources.size() * n,
           "shortest_path_rows: rows has " << rows.size() << " entries, expected |sources| x n = "
                                           << sources.size() << " x " << n);
  threads = resolve_threads(threads);
  const std::int64_t count = static_cast<std::int64_t>(sources.size());
  // Dynamic scheduling: run times differ (a source in a small component finishes at once).
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::int64_t k = 0; k < count; ++k) {
    detail::dijkstra_row(graph, sources[k], rows.data() + k * n);
  }
}

std::vector<float> all_pairs_shortest_paths(const CsrGraphView& graph, int threads) {
  validate(graph, "graph");
  const std::size_t n = static_cast<std::size_t>(graph.num_nodes);
  std::vector<float> matrix(n * n);
  threads = resolve_threads(threads);
  const std::int64_t count = graph.num_nodes;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (std::int64_t s = 0; s < count; ++s) {
    detail::dijkstra_row(graph, static_cast<Index>(s), matrix.data() + s * n);
  }
  return matrix;
}

}  // namespace gw
