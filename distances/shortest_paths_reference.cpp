#include "distances/shortest_paths_reference.h"

#include <limits>

namespace gw::reference {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

std::vector<double> floyd_warshall(const CsrGraphView& graph) {
  const std::size_t n = static_cast<std::size_t>(graph.num_nodes);
  std::vector<double> d(n * n, kInf);
  for (std::size_t i = 0; i < n; ++i) d[i * n + i] = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (Offset e = graph.row_offsets[i]; e < graph.row_offsets[i + 1]; ++e) {
      const std::size_t j = static_cast<std::size_t>(graph.col_indices[e]);
      const double w = graph.weight(e);
      if (w < d[i * n + j]) d[i * n + j] = w;
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t i = 0; i < n; ++i) {
      const double dik = d[i * n + k];
      if (dik == kInf) continue;
      for (std::size_t j = 0; j < n; ++j) {
        const double through = dik + d[k * n + j];
        if (through < d[i * n + j]) d[i * n + j] = through;
      }
    }
  }
  return d;
}

std::vector<double> bellman_ford(const CsrGraphView& graph, Index source) {
  const std::size_t n = static_cast<std::size_t>(graph.num_nodes);
  std::vector<double> row(n, kInf);
  row[static_cast<std::size_t>(source)] = 0.0;
  for (std::size_t round = 0; round + 1 < n || round == 0; ++round) {
    bool changed = false;
    for (std::size_t i = 0; i < n; ++i) {
      if (row[i] == kInf) continue;
      for (Offset e = graph.row_offsets[i]; e < graph.row_offsets[i + 1]; ++e) {
        const std::size_t j = static_cast<std::size_t>(graph.col_indices[e]);
        const double through = row[i] + graph.weight(e);
        if (through < row[j]) {
          row[j] = through;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  return row;
}

}  // namespace gw::reference
