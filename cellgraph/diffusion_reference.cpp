#include "cellgraph/diffusion_reference.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "graph/builder.h"
#include "graph/laplacian.h"

namespace gw {

namespace {

// out = a * in, a sparse n x n, in / out n x channels.
void spmm(const CsrMatrix<double>& a,
          const std::vector<double>& in,
          Index channels,
          std::vector<double>& out) {
  out.assign(in.size(), 0.0);
  for (Index i = 0; i < a.rows; ++i) {
    for (Offset p = a.row_offsets[i]; p < a.row_offsets[i + 1]; ++p) {
      const Index j = a.col_indices[p];
      for (Index c = 0; c < channels; ++c) {
        out[static_cast<std::size_t>(i) * channels + c] +=
            a.values[p] * in[static_cast<std::size_t>(j) * channels + c];
      }
    }
  }
}

}  // namespace

std::vector<double> chebyshev_diffusion_reference(const CsrGraphView& graph,
                                                  std::span<const double> x,
                                                  Index channels,
                                                  const std::vector<double>& weights,
                                                  double lambda_max) {
  CsrMatrix<double> op = normalized_laplacian(graph);
  for (Index i = 0; i < op.rows; ++i) {
    for (Offset p = op.row_offsets[i]; p < op.row_offsets[i + 1]; ++p) {
      op.values[p] = 2.0 / lambda_max * op.values[p] - (op.col_indices[p] == i ? 1.0 : 0.0);
    }
  }
  std::vector<double> t_prev(x.begin(), x.end());
  std::vector<double> y(x.size());
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = weights[0] * t_prev[i];
  if (weights.size() < 2) return y;
  std::vector<double> t_cur, t_next;
  spmm(op, t_prev, channels, t_cur);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] += weights[1] * t_cur[i];
  for (std::size_t k = 2; k < weights.size(); ++k) {
    spmm(op, t_cur, channels, t_next);
    for (std::size_t i = 0; i < y.size(); ++i) {
      t_next[i] = 2.0 * t_next[i] - t_prev[i];
      y[i] += weights[k] * t_next[i];
    }
    t_prev.swap(t_cur);
    t_cur.swap(t_next);
  }
  return y;
}

void diffuse_batch_reference(const DiffusionGraphs& graphs,
                             std::span<const double> x,
                             Index seq_len,
                             Index channels,
                             std::span<double> y,
                             const DiffusionOptions& options) {
  const std::vector<double> weights =
      heat_chebyshev_weights(options.order, options.beta, options.lambda_max, options.halve_c0);
  std::fill(y.begin(), y.end(), 0.0);
  for (Index b = 0; b < graphs.num_graphs(); ++b) {
    const Index n = graphs.num_nodes[b];
    const Offset e0 = graphs.edge_ptr[b];
    const Offset m = graphs.edge_ptr[b + 1] - e0;
    EdgeListView edges{
        graphs.src.subspan(e0, m),
        graphs.dst.subspan(e0, m),
        graphs.weights.empty() ? std::span<const float>{} : graphs.weights.subspan(e0, m)};
    BuildOptions build;
    build.symmetrize = options.symmetrize;
    const CsrGraph graph = build_csr(n, edges, build);
    const std::size_t row0 = static_cast<std::size_t>(b) * seq_len * channels;
    const std::span<const double> xb = x.subspan(row0, static_cast<std::size_t>(n) * channels);
    const std::vector<double> yb =
        chebyshev_diffusion_reference(graph, xb, channels, weights, options.lambda_max);
    std::copy(yb.begin(), yb.end(), y.begin() + row0);
  }
}

std::vector<double> heat_kernel_eigen_reference(const CsrGraphView& graph,
                                                double beta,
                                                std::span<const double> x,
                                                Index channels) {
  const Index n = graph.num_nodes;
  const CsrMatrix<double> lap = normalized_laplacian(graph);
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(n, n);
  for (Index i = 0; i < n; ++i) {
    for (Offset p = lap.row_offsets[i]; p < lap.row_offsets[i + 1]; ++p) {
      dense(i, lap.col_indices[p]) += lap.values[p];
    }
  }
  GW_CHECK((dense - dense.transpose()).cwiseAbs().maxCoeff() <= 1e-12,
           "heat_kernel_eigen_reference needs an undirected graph (a symmetric Laplacian)");
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> solver(dense);
  const Eigen::MatrixXd& v = solver.eigenvectors();
  const Eigen::VectorXd decay = (-beta * solver.eigenvalues().array()).exp().matrix();
  Eigen::MatrixXd xm(n, channels);
  for (Index i = 0; i < n; ++i) {
    for (Index c = 0; c < channels; ++c) xm(i, c) = x[static_cast<std::size_t>(i) * channels + c];
  }
  const Eigen::MatrixXd ym = v * (decay.asDiagonal() * (v.transpose() * xm));
  std::vector<double> y(static_cast<std::size_t>(n) * channels);
  for (Index i = 0; i < n; ++i) {
    for (Index c = 0; c < channels; ++c) y[static_cast<std::size_t>(i) * channels + c] = ym(i, c);
  }
  return y;
}

std::vector<double> heat_kernel_taylor_reference(const CsrGraphView& graph,
                                                 double beta,
                                                 std::span<const double> x,
                                                 Index channels) {
  const CsrMatrix<double> lap = normalized_laplacian(graph);
  std::vector<double> term(x.begin(), x.end());
  std::vector<double> y = term;
  std::vector<double> next;
  for (int m = 1; m <= 400; ++m) {
    spmm(lap, term, channels, next);
    double term_max = 0.0, y_max = 0.0;
    for (std::size_t i = 0; i < next.size(); ++i) {
      next[i] *= -beta / m;
      y[i] += next[i];
      term_max = std::max(term_max, std::abs(next[i]));
      y_max = std::max(y_max, std::abs(y[i]));
    }
    term.swap(next);
    if (term_max <= 1e-20 * y_max) break;
  }
  return y;
}

}  // namespace gw
