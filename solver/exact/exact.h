// Building blocks of the exact-gradient GW solver (Options::solver = kExact, see options.h): the
// square-loss GW gradient on dense distance matrices, the exact line search of the conditional-
// gradient step, and the distance profiles of its starts; its linear OT sub-problems are solved by
// TransportSimplex (linear_ot/transport_simplex.h).
// gw::solve runs them; they are public so that callers and tests can use them directly.
//
// Conventions shared by every function here: distance matrices are dense, row-major, symmetric
// (dx n x n, dy k x k), used as given (no normalization); plans and costs are n x k row-major;
// marginals p (n) and q (k) are non-negative. The square-loss GW objective of a plan T is
//     L(T) = sum_{i,j,k,l} (dx_ik - dy_jl)^2 T_ij T_kl
// and the fused objective with feature cost C (n x k) and weight w in [0, 1] is
//     F(T) = (1 - w) L(T) + w <C, T>.
// All functions are reentrant and allocate their own workspace; they use the calling thread's
// OpenMP thread count for the GEMMs (none when it is 1).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/types.h"
#include "linear_ot/transport_simplex.h"
#include "solver/problem.h"

namespace gw {

// dL/dT at `plan`: G_ij = 2 [ (dx^2 r)_i + (dy^2 c)_j - 2 (dx T dy)_ij ], r and c the plan's own
// row and column sums, dx^2 the entrywise square (Peyre, Cuturi & Solomon 2016, Prop. 1; valid for
// symmetric dx, dy). Two GEMMs, O(n^2 k + n k^2). Writes n x k values into `gradient`.
void gw_gradient(std::span<const double> dx,
                 std::span<const double> dy,
                 std::span<const double> plan,
                 Index n,
                 Index k,
                 std::span<double> gradient);

// The step of a conditional-gradient iteration: the alpha in [0, 1] minimizing
// F(T + alpha (S - T)) for a plan T and a vertex S with the same marginals (the square loss makes
// F quadratic in alpha: F(T) + a alpha + b alpha^2, both coefficients from one dx D dy product,
// D = S - T). `feature_cost` may be empty when fused_weight == 0. Ties go to the larger step.
double gw_line_search(std::span<const double> dx,
                      std::span<const double> dy,
                      std::span<const double> plan,
                      std::span<const double> vertex,
                      Index n,
                      Index k,
                      std::span<const double> feature_cost = {},
                      double fused_weight = 0.0);

// One space's exact distance profiles for Problem::source_profiles / target_profiles: the
// provider's dense max-normalized (symmetrized) distance matrix and the weights normalized to mass
// 1 (empty: uniform), exactly as the exact solver builds them in float64, then
// distance_quantile_profiles with `quantiles` (pass Options::profile_quantiles). O(n^2) memory
// (the dense matrix, freed on return) and O(n^2 log n) time, rows over the calling thread's OpenMP
// threads. kInvalidArgument on quantiles <= 0 or weights of the wrong length, kBadData on bad
// weights.
SpaceProfiles exact_distance_profiles(const DistanceProvider& provider,
                                      const std::vector<double>& weights,
                                      int quantiles);

// The distance profiles behind the exact solver's "profiles" and "profile-vertex" starts
// (Options::profile_anchors): for each row i of a dense n x n distance matrix d (row-major), the
// quantiles of the distribution that puts mass weights[l] on d_il, at the levels (q + 1/2) / Q of
// the total weight, q < Q = quantiles. The quantile at a level is the smallest d_il whose
// cumulative weight, entries taken in increasing order of distance, reaches the level. Weights are
// non-negative with a positive sum. Returns n x Q values, row-major. O(n^2 log n), rows split over
// the calling thread's OpenMP threads.
std::vector<double> distance_quantile_profiles(std::span<const double> d,
                                               Index n,
                                               std::span<const double> weights,
                                               int quantiles);

}  // namespace gw
