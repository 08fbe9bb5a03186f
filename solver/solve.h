// gw::solve: sampled Gromov-Wasserstein alignment (docs/architecture.md section 2).
//
//   gw::Problem problem;
//   problem.source = gw::Geometry::from_points(std::move(xs), n, 2);
//   problem.target = gw::Geometry::from_points(std::move(ys), k, 3);
//   gw::Options options;
//   options.num_anchors = 80;
//   gw::Result result = gw::solve(problem, options);
//   std::puts(result.brief_report().c_str());
//
// Per iteration t: sample M anchor pairs from T; D_X, D_Y = distances of all nodes to the anchors
// (inf clamped, max-normalized); Lambda = mean_m(D_X^2) 1^T + 1 mean_m(D_Y^2)^T - (2/M) D_X D_Y^T
// (one GEMM); optional Lambda-EMA and fused-GW blend; slack row/column; warm-started Sinkhorn at
// epsilon_t; T <- (1 - alpha) T + alpha T_new; stop on convergence, cost plateau or max_iter.
//
// Misuse (invalid options, shape mismatch, missing geometry) throws gw::Error; numerical outcomes
// are reported in the Result. Thread-safety: concurrent solve() calls are independent, but each
// uses options.threads OpenMP threads.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "core/context.h"
#include "solver/options.h"
#include "solver/problem.h"
#include "solver/result.h"

namespace gw {

Result solve(const Problem& problem, const Options& options = {});

// The distance provider gw::solve builds for one side: a given provider itself; a dense matrix as
// given (DenseOptions::threads = options.threads); points through their kNN graph (options.knn,
// components connected); a graph, and that kNN graph, by precomputed all-pairs or landmark
// distances (options.distance_mode, or by size: precomputed up to auto_precomputed_max_nodes
// nodes). Throws kInvalidArgument for a geometry without distances (kNodes, kNone). The provider
// shares no state with the geometry (its data are copied or computed).
std::shared_ptr<const DistanceProvider> distance_provider_for(const Geometry& geometry,
                                                              const Options& options);

// The GW loss sum_{i,j,k,l} (dx_ik - dy_jl)^2 T_ij T_kl of a dense plan (n x k, row-major) for
// dense distance matrices dx (n x n) and dy (k x k), used as given (no normalization; neither
// needs to be symmetric). Computed as r^T dx^2 r + c^T dy^2 c - 2 <dx T dy^T, T> (r, c the plan's
// marginals, squares elementwise) in O(n^2 k + n k^2), multithreaded.
double gw_loss(std::span<const double> dx,
               std::span<const double> dy,
               std::span<const double> plan,
               Index n,
               Index k);

// A Monte Carlo estimate of the GW loss of a plan under two providers' distances: P = `anchors`
// pairs (i_p, j_p) are drawn from the plan (gw::Rng(seed)), and for each the exact inner sum
// l_p = sum_kl T_kl (dx(k, i_p) / scale_x - dy(l, j_p) / scale_y)^2 is computed (one provider
// query per side and one n x k x P GEMM). E[l_p] = loss / mass, so the estimate is
// mass * mean(l_p) with standard error mass * sd(l_p) / sqrt(P). Unreachable distances are clamped
// as in the loop (1.5 x the largest finite value of the block). scale <= 0 means "the largest
// distance of the sampled block" (the solver's choice when the global maximum is unknown).
struct LossEstimate {
  double value = 0.0;
  double standard_error = 0.0;
};
LossEstimate estimate_gw_loss(const DistanceProvider& source,
                              const DistanceProvider& target,
                              std::span<const double> plan,
                              Index n,
                              Index k,
                              int anchors,
                              std::uint64_t seed,
                              double scale_x = 0.0,
                              double scale_y = 0.0);

// The peak memory of gw::solve, estimated from the shapes and options alone (nothing is built),
// in bytes. `inputs`: the distance providers and their construction (a kNN graph for points;
// 4 n^2 for a precomputed or dense matrix; 8 n d + 12 n for landmarks; the row cache for
// Dijkstra; memory_bytes() of a given provider). `dense`: inputs + the dense loop's n x k buffers
// at their peak (three float32 plans' worth, 12 n k bytes, or 16 n k in float64, as measured in
// bench/RESULTS.md) or the loss estimate beside the float64 plan, whichever is larger. `sparse`:
// inputs + the support (about 40 bytes per entry at a re-growth, n support_size + k entries), the
// anchor blocks ((n + k) M 4 bytes), per-node arrays and the coarse cells x cells problem.
// Allocations the caller holds (the points themselves, the Problem) are not counted.
// These are host memory (with backend = cuda the sparse path keeps its support on the host too).
// Device memory is not part of the estimate or of `limit`: the dense CUDA loop needs about 3 n k
// elements of its precision (solver/cuda/gw_loop_cuda.cpp), the sparse one nnz x (4 column + 4
// cost + 8 plan + 12 transpose + 4 column-ordered cost [+ 8 feature cost when fused]) bytes plus
// (n + k) M 4 bytes for the anchor blocks and ~64 (n + k) bytes of per-node arrays
// (sinkhorn/cuda_sparse_sinkhorn.h); each checks the device's free memory before it allocates
// and throws kUnsupported with the numbers when it does not fit.
// `limit` is Options::memory_limit resolved (0: 60% of physical_memory_bytes()), and `chosen` the
// path Options::support selects: kAuto takes kDense when dense <= limit / 2, else kSparse.
struct MemoryEstimate {
  std::size_t inputs = 0;
  std::size_t dense = 0;
  std::size_t sparse = 0;
  std::size_t limit = 0;
  Support chosen = Support::kDense;
  // The estimate of the chosen path.
  std::size_t chosen_bytes() const { return chosen == Support::kSparse ? sparse : dense; }
};
MemoryEstimate estimate_memory(const Problem& problem, const Options& options);

// physical_memory_bytes() is in core/context.h.

}  // namespace gw
