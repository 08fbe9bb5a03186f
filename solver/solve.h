// gw::solve: Gromov-Wasserstein alignment (docs/architecture.md, "The solver").
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
#include "solver/strategy.h"

namespace gw {

// Chooses the strategy (choose_strategy, strategy.h: the support, the solver, the backend, the
// precision, each with its reason), runs it, and returns the plan with Result::strategy.
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



// physical_memory_bytes() is in core/context.h.

}  // namespace gw
