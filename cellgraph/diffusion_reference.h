// Reference oracles of the heat diffusion (cellgraph/diffusion.h). Not installed; used by tests
// and benchmarks. Plain loops, double accumulation, no threads.
#pragma once

#include <span>
#include <vector>

#include "cellgraph/diffusion.h"
#include "graph/csr_graph.h"

namespace gw {

// Y = sum_k weights[k] T_k(L~) X for one graph, L~ = (2 / lambda_max) L - I with L =
// normalized_laplacian(graph); X and Y are n x channels row-major. The recurrence of diffusion.h
// in its plainest form.
std::vector<double> chebyshev_diffusion_reference(const CsrGraphView& graph,
                                                  std::span<const double> x,
                                                  Index channels,
                                                  const std::vector<double>& weights,
                                                  double lambda_max);

// The padded batch one graph at a time: graph b's local edges -> build_csr (symmetrized when
// options.symmetrize) -> chebyshev_diffusion_reference with options.lambda_max (no estimation)
// -> rows of Y; padding rows zero. The batch must be valid (nothing is checked).
void diffuse_batch_reference(const DiffusionGraphs& graphs,
                             std::span<const double> x,
                             Index seq_len,
                             Index channels,
                             std::span<double> y,
                             const DiffusionOptions& options);

// exp(-beta L) X exactly, by a dense eigendecomposition L = V diag(lambda) V^T (Eigen, float64):
// V diag(e^{-beta lambda}) V^T X. Undirected graphs only (L symmetric); kInvalidArgument
// otherwise. O(n^3): small graphs.
std::vector<double> heat_kernel_eigen_reference(const CsrGraphView& graph,
                                                double beta,
                                                std::span<const double> x,
                                                Index channels);

// exp(-beta L) X for any graph (directed too) by the Taylor series sum_m (-beta L)^m X / m!,
// summed until a term's largest entry falls below 1e-20 of the running sum's (at most 400
// terms); accurate for beta * ||L|| up to ~20 (all the tests use far less).
std::vector<double> heat_kernel_taylor_reference(const CsrGraphView& graph,
                                                 double beta,
                                                 std::span<const double> x,
                                                 Index channels);

}  // namespace gw
