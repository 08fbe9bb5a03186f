// Batched heat diffusion over per-cell gene graphs: Y = exp(-beta L) X per graph, by a Chebyshev
// expansion (docs/architecture.md section 1).
//
// L is the symmetric normalized Laplacian L = I - D^{-1/2} A D^{-1/2} of each graph (see
// graph/laplacian.h): A the weighted adjacency (weights 1 when the graph is unweighted; parallel
// edges add up; a self loop contributes A_ii), D the diagonal of OUT-degrees, so a directed graph
// is normalized by the degrees of its rows. Isolated nodes (and sinks of a directed graph) have
// out-degree 0; they use D^{-1/2}_ii = 0, so their row and column of D^{-1/2} A D^{-1/2} are zero
// and L_ii = 1: such a node keeps its own signal scaled by e^{-beta} and exchanges nothing.
//
// The expansion: with L~ = (2 / lambda_max) L - I (spectrum mapped from [0, lambda_max] into
// [-1, 1]) and beta' = beta * lambda_max / 2,
//   exp(-beta L) = e^{-beta'} exp(-beta' L~) = sum_{k=0..K} w_k T_k(L~),
//   w_k = c_k for k >= 1 and w_0 = c_0 / 2,   c_k = 2 e^{-beta'} (-1)^k I_k(beta'),
// (the Jacobi-Anger expansion of exp(-beta' x)), T_k the Chebyshev polynomials, I_k the modified
// Bessel functions of the first kind. Y = sum_k w_k T_k(L~) X is evaluated by the three-term
// recurrence T_{k+1} = 2 L~ T_k - T_{k-1}: K sparse-matrix x dense-matrix products (SpMM).
// For an undirected graph the spectrum of L lies in [0, 2], so lambda_max = 2 (the default) is
// always safe; a tighter estimate (Lanczos) helps only slightly. For a directed graph L is not
// symmetric; its eigenvalues lie in the disc |z - 1| <= 1, where the same series still converges
// faster than geometrically because exp is entire, so lambda_max = 2 stays correct.
//
// Truncation error: the series tail after K terms is bounded by about 2 I_{K+1}(beta'), below
// 1e-100 for K = 64 and beta' = 0.1; in practice the result is exact to rounding for K >= ~10 at
// beta' <= 1 (K >= ~2 beta' + 20 in general).
//
// Compatibility: halve_c0 = false reproduces a widely used implementation that forgets to halve
// c_0, i.e. returns exp(-beta L) X + e^{-beta'} I_0(beta') X (with lambda_max = 2: the exact
// result plus e^{-beta} I_0(beta) X). Use it only to reproduce results of that implementation.
//
// Batched layout. B graphs, graph b with n_b nodes (local ids 0 .. n_b - 1) and its own edges.
// The signals are padded: X and Y are [B, S, C] row-major, C = H * D channels, element (b, i, c)
// at [(b * S + i) * C + c]; rows i < n_b are graph b's nodes, rows n_b <= i < S are padding. The
// batch is computed as one block-diagonal operator (unpad -> one recurrence over all graphs and
// channels -> repad). Padding rows of Y are written as exact zeros; padding rows of X are never
// read.
//
// The CUDA version is gw::CudaHeatDiffusion (cellgraph/cuda_diffusion.h).
#pragma once

#include <span>
#include <vector>

#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw {

// ---------------------------------------------------------------------------------------------
// Coefficients

// Modified Bessel function of the first kind I_k(x), k >= 0, x >= 0, by its power series
// sum_m (x/2)^(2m+k) / (m! (m+k)!) summed in double until the terms stop contributing. All terms
// are positive, so the sum is accurate to a few ulp; the cost grows like x, so the supported range
// is 0 <= x <= 700 (beyond, I_k overflows double anyway). Relative accuracy ~1e-15 where the
// result is a normal double; tiny values underflow to 0.
double bessel_i(int k, double x);

// e^{-x} I_k(x) over the same range, computed without forming e^{x} (no overflow for x <= 700).
double bessel_i_scaled(int k, double x);

// The weights w_0 .. w_K of the expansion above (K = order), for diffusion time beta >= 0 on
// [0, lambda_max] (lambda_max > 0); halve_c0 = false gives w_0 = c_0 (the compatibility variant).
// The Bessel values are cached per (order, beta, lambda_max) in a process-wide cache (thread-safe,
// at most 256 entries), so a training loop pays for them once.
std::vector<double> heat_chebyshev_weights(int order,
                                           double beta,
                                           double lambda_max = 2.0,
                                           bool halve_c0 = true);

// ---------------------------------------------------------------------------------------------
// Batched diffusion

// B graphs in local node ids. Non-owning; the caller keeps the arrays alive.
struct DiffusionGraphs {
  std::span<const Index> num_nodes;  // B: n_b, 0 <= n_b <= S
  std::span<const Offset> edge_ptr;  // B + 1: graph b's edges are [edge_ptr[b], edge_ptr[b+1])
  std::span<const Index> src;        // local source ids in [0, n_b)
  std::span<const Index> dst;        // local target ids in [0, n_b)
  std::span<const float> weights;    // edge weights (>= 0), or empty: unweighted

  Index num_graphs() const { return static_cast<Index>(num_nodes.size()); }
};

struct DiffusionOptions {
  // Chebyshev order K: polynomials T_0 .. T_K, i.e. K SpMMs. 64 is far more than needed for
  // beta' <= 1 (see the truncation note above) and is the default of the training pipelines.
  int order = 64;
  // Diffusion time beta >= 0 (dimensionless: L has no units).
  double beta = 0.1;
  // Upper end of the expansion interval [0, lambda_max]. 2 bounds the spectrum of every
  // normalized Laplacian of an undirected graph.
  double lambda_max = 2.0;
  // Estimate lambda_max instead (undirected graphs only: kInvalidArgument otherwise) by
  // `lanczos_steps` Lanczos steps on the whole batch from a fixed start vector (reproducible);
  // the estimate is the largest Ritz value plus its residual bound, capped at 2.
  bool estimate_lambda_max = false;
  int lanczos_steps = 20;
  // false: the compatibility variant that does not halve c_0 (see the top of this file).
  bool halve_c0 = true;
  // Treat every input edge as undirected: add its reverse, merging a pair given in both
  // directions into one edge of the larger weight (graph/builder.h, "symmetrize by max").
  bool symmetrize = false;
  // CPU worker threads (0 = all available).
  int threads = 0;
};

// The block-diagonal operator L~ of a batch of graphs, built once and applied to any number of
// padded signals (e.g. several layers or heads over the same graphs).
//
// Construction: O(total nodes + edges) (offset edges, build_csr, normalized_laplacian, shift),
// multithreaded. apply(): K SpMMs with the operator's nnz, blocked so that each (group of
// graphs, block of 64 float / 32 double channels) runs the whole recurrence in its thread's cache;
// batches with fewer such tasks than threads split each product's rows across the team, unless
// they are small (under 2^26 multiply-adds, e.g. one graph of a few hundred nodes), which run on
// the calling thread: a barrier per step costs more than it saves on a busy machine. Every sum over
// a row's entries runs in CSR order, so results do not depend on the thread count.
//
// Thread-safety: immutable after construction; apply() may be called concurrently.
class HeatDiffusion {
 public:
  // Checks the graphs (kInvalidArgument for inconsistent sizes or n_b > seq_len, kBadData naming
  // the graph and edge for an endpoint outside [0, n_b) or a negative / non-finite weight) and the
  // options (order >= 0, beta >= 0 and finite, lambda_max > 0, lanczos_steps >= 1).
  HeatDiffusion(const DiffusionGraphs& graphs, Index seq_len, const DiffusionOptions& options = {});

  // y = exp(-beta L) x per graph. x and y are [B, S, channels] (see the top of this file) and must
  // not overlap. kInvalidArgument for wrong sizes or channels < 1. The arithmetic is in the
  // signal's type; weights w_k that round to a subnormal number in that type are used as 0 (in
  // float32 at beta' = 0.1 that is w_18 .. w_20, each below 1e-38: subnormal operands cost a
  // microcode assist per multiply-add on x86, tripling the run time for no visible change).
  void apply(std::span<const float> x, Index channels, std::span<float> y) const;
  void apply(std::span<const double> x, Index channels, std::span<double> y) const;

  Index num_graphs() const { return static_cast<Index>(node_offsets_.size()) - 1; }
  Index seq_len() const { return seq_len_; }
  // Total (unpadded) nodes of the batch.
  Index num_nodes() const { return static_cast<Index>(node_offsets_.back()); }
  // Cumulative node counts (B + 1): graph b's node i is operator row node_offsets()[b] + i.
  const std::vector<Offset>& node_offsets() const { return node_offsets_; }
  // The operator L~ = (2 / lambda_max) L - I of the whole batch in float64 (exact zeros dropped).
  const CsrMatrix<double>& shifted_laplacian() const { return op_; }
  Offset nnz() const { return op_.nnz(); }
  double lambda_max() const { return lambda_max_; }
  // The expansion weights w_0 .. w_K in use.
  const std::vector<double>& weights() const { return weights_; }
  const DiffusionOptions& options() const { return options_; }

 private:
  template <typename T>
  void apply_impl(std::span<const T> x, Index channels, std::span<T> y) const;

  DiffusionOptions options_;
  Index seq_len_ = 0;
  std::vector<Offset> node_offsets_;
  CsrMatrix<double> op_;
  std::vector<float> values_f32_;    // op_.values rounded to float, for float signals
  std::vector<Offset> entry_bytes_;  // per entry: (column - its graph's first row) * 256 bytes
  double lambda_max_ = 2.0;
  std::vector<double> weights_;
};

// One call: HeatDiffusion(graphs, seq_len, options).apply(x, channels, y).
void diffuse_batch(const DiffusionGraphs& graphs,
                   std::span<const float> x,
                   Index seq_len,
                   Index channels,
                   std::span<float> y,
                   const DiffusionOptions& options = {});
void diffuse_batch(const DiffusionGraphs& graphs,
                   std::span<const double> x,
                   Index seq_len,
                   Index channels,
                   std::span<double> y,
                   const DiffusionOptions& options = {});

}  // namespace gw
