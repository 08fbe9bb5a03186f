#include "graph/laplacian.h"

#include <cmath>

#include "core/error.h"

namespace gw {

CsrMatrix<double> normalized_laplacian(const CsrGraphView& graph) {
  const Index n = graph.num_nodes;
  std::vector<double> inv_sqrt_degree(n, 0.0);
  for (Index i = 0; i < n; ++i) {
    double degree = 0.0;
    for (Offset e = graph.row_offsets[i]; e < graph.row_offsets[i + 1]; ++e)
      degree += graph.weight(e);
    inv_sqrt_degree[i] = degree > 0.0 ? 1.0 / std::sqrt(degree) : 0.0;
  }

  CsrMatrix<double> lap;
  lap.rows = n;
  lap.cols = n;
  lap.row_offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  // Row i holds its distinct columns plus the diagonal; count first so the arrays are sized once.
  for (Index i = 0; i < n; ++i) {
    Offset count = 0;
    bool has_diagonal = false;
    Index previous = -1;
    for (Index j : graph.neighbors(i)) {
      GW_CHECK(j >= previous,
               "normalized_laplacian needs sorted columns (row "
                   << i << "); rebuild the graph with build_csr");
      if (j != previous) ++count;
      has_diagonal = has_diagonal || j == i;
      previous = j;
    }
    lap.row_offsets[i + 1] = lap.row_offsets[i] + count + (has_diagonal ? 0 : 1);
  }
  lap.col_indices.resize(lap.row_offsets[n]);
  lap.values.resize(lap.row_offsets[n]);

#pragma omp parallel for schedule(dynamic, 256)
  for (Index i = 0; i < n; ++i) {
    // Merge the row's (sorted) neighbours with the diagonal entry 1, accumulating parallel edges.
    Offset out = lap.row_offsets[i];
    bool diagonal_written = false;
    auto emit = [&](Index col, double value) {
      if (out > lap.row_offsets[i] && lap.col_indices[out - 1] == col) {
        lap.values[out - 1] += value;
        return;
      }
      lap.col_indices[out] = col;
      lap.values[out] = value;
      ++out;
    };
    for (Offset e = graph.row_offsets[i]; e < graph.row_offsets[i + 1]; ++e) {
      const Index j = graph.col_indices[e];
      if (!diagonal_written && j >= i) {
        emit(i, 1.0);
        diagonal_written = true;
      }
      emit(j, -graph.weight(e) * inv_sqrt_degree[i] * inv_sqrt_degree[j]);
    }
    if (!diagonal_written) emit(i, 1.0);
  }
  return lap;
}

}  // namespace gw
