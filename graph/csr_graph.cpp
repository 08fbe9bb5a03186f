#include "graph/csr_graph.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace gw {

CsrGraph::CsrGraph(Index num_nodes,
                   std::vector<Offset> row_offsets,
                   std::vector<Index> col_indices,
                   std::vector<float> weights)
    : num_nodes_(num_nodes),
      row_offsets_(std::move(row_offsets)),
      col_indices_(std::move(col_indices)),
      weights_(std::move(weights)) {
  GW_CHECK(num_nodes_ >= 0, "graph node count must be >= 0, got " << num_nodes_);
  GW_CHECK(row_offsets_.size() == static_cast<std::size_t>(num_nodes_) + 1,
           "graph row_offsets must have num_nodes + 1 = " << num_nodes_ + 1 << " entries, got "
                                                          << row_offsets_.size());
  GW_CHECK(weights_.empty() || weights_.size() == col_indices_.size(),
           "graph weights must be empty or have one entry per edge ("
               << col_indices_.size() << "), got " << weights_.size());
}

CsrGraph CsrGraph::copy_of(const CsrGraphView& view) {
  return CsrGraph(view.num_nodes,
                  std::vector<Offset>(view.row_offsets.begin(), view.row_offsets.end()),
                  std::vector<Index>(view.col_indices.begin(), view.col_indices.end()),
                  std::vector<float>(view.weights.begin(), view.weights.end()));
}

void validate(const CsrGraphView& graph, std::string_view name) {
  const Index n = graph.num_nodes;
  GW_CHECK_CODE(n >= 0, ErrorCode::kBadData, name << ": negative node count " << n);
  GW_CHECK_CODE(graph.row_offsets.size() == static_cast<std::size_t>(n) + 1,
                ErrorCode::kBadData,
                name << ": row_offsets has " << graph.row_offsets.size()
                     << " entries but the graph has " << n << " nodes (expected " << n + 1 << ")");
  GW_CHECK_CODE(graph.row_offsets[0] == 0,
                ErrorCode::kBadData,
                name << ": row_offsets[0] = " << graph.row_offsets[0] << ", expected 0");
  for (Index i = 0; i < n; ++i) {
    if (graph.row_offsets[i + 1] < graph.row_offsets[i]) {
      GW_THROW(ErrorCode::kBadData,
               name << ": row_offsets not monotone at row " << i << " (offsets[" << i
                    << "] = " << graph.row_offsets[i] << " > offsets[" << i + 1
                    << "] = " << graph.row_offsets[i + 1] << ")");
    }
  }
  GW_CHECK_CODE(graph.row_offsets[n] == graph.num_edges(),
                ErrorCode::kBadData,
                name << ": row_offsets ends at " << graph.row_offsets[n] << " but there are "
                     << graph.num_edges() << " column indices");
  for (Offset e = 0; e < graph.num_edges(); ++e) {
    const Index j = graph.col_indices[e];
    if (j < 0 || j >= n) {
      GW_THROW(
          ErrorCode::kBadData,
          name << ": column index " << j << " at edge " << e << " is outside [0, " << n << ")");
    }
  }
  if (graph.has_weights()) {
    GW_CHECK_CODE(
        graph.weights.size() == graph.col_indices.size(),
        ErrorCode::kBadData,
        name << ": " << graph.weights.size() << " weights for " << graph.num_edges() << " edges");
    for (Offset e = 0; e < graph.num_edges(); ++e) {
      const float w = graph.weights[e];
      if (!std::isfinite(w)) {
        GW_THROW(ErrorCode::kBadData,
                 name << ": non-finite weight " << w << " at edge " << e
                      << "; edge weights must be finite lengths");
      }
      if (w < 0.0f) {
        GW_THROW(ErrorCode::kBadData,
                 name << ": negative weight " << w << " at edge " << e
                      << "; shortest paths need non-negative edge lengths");
      }
    }
  }
}

bool is_symmetric(const CsrGraphView& graph) {
  for (Index i = 0; i < graph.num_nodes; ++i) {
    const auto row = graph.neighbors(i);
    for (std::size_t p = 0; p < row.size(); ++p) {
      const Index j = row[p];
      const float w = graph.weight(graph.row_offsets[i] + static_cast<Offset>(p));
      const auto back = graph.neighbors(j);
      const auto [lo, hi] = std::equal_range(back.begin(), back.end(), i);
      if (lo == hi) return false;
      bool found = false;
      for (auto it = lo; it != hi; ++it) {
        const Offset e = graph.row_offsets[j] + (it - back.begin());
        if (graph.weight(e) == w) {
          found = true;
          break;
        }
      }
      if (!found) return false;
    }
  }
  return true;
}

}  // namespace gw
