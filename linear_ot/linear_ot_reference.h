// LEMON's network simplex as an exact linear-OT oracle (test support: compiled into
// gwalign_testing, never installed): the reference TransportSimplex (transport_simplex.h) is tested
// against, and the fuzzers' oracle. Same problem and plan conventions as transport_simplex.h.
#pragma once

#include <span>

#include "core/types.h"
#include "linear_ot/transport_simplex.h"

namespace gw {

// Optional inputs of solve_linear_ot that speed it up without changing its result.
struct LinearOtHints {
  // Candidate arcs per row and per column of the first restricted problem, and arcs added per row
  // in each pricing round.
  int candidates = 8;
  // Pairs that join the first restricted problem (e.g. the support of the previous solution).
  std::span<const Index> rows;
  std::span<const Index> cols;
  // Column duals of a previous, similar problem (k entries): the rows' candidates are then their
  // cheapest arcs in reduced cost c_ij - hint_j instead of in c_ij.
  std::span<const double> column_hint;
};

// Exact linear OT by LEMON's NetworkSimplex (block-search pivoting). The masses are scaled to
// 64-bit integers (exactly when both sides are uniform and lcm(n', k') <= 2^50, n', k' the
// positive-mass counts; otherwise to a total of 2^50, an error of at most 2^-50 per entry), and
// the costs to integers in units of max|C| / 2^40 (on double costs the simplex can cycle through
// degenerate pivots on near-ties; the vertex is optimal for C within 2^-40 max|C| per unit of
// mass; `cost` is <C, T> in the given costs). Zero-mass rows and columns are left out. Instead of the dense n k arcs, the
// solver starts from a restricted problem: each row's and each column's `candidates` cheapest
// arcs, the hinted pairs, and a north-west-corner basis that makes it feasible; then it prices
// every arc with the duals (reduced cost c_ij + pi_i - pi_j) and adds each row's most negative
// ones until none is below -1e-12 max|C| (the dense problem's optimality condition), or solves the
// dense problem after 12 rounds. p and q must have equal positive sums (relative 1e-9;
// kInvalidArgument otherwise). Single-threaded.
LinearOtPlan solve_linear_ot(std::span<const double> cost,
                             Index n,
                             Index k,
                             std::span<const double> p,
                             std::span<const double> q,
                             const LinearOtHints& hints = {});
// The same for a float32 cost (the exact solver's kF32 path).
LinearOtPlan solve_linear_ot(std::span<const float> cost,
                             Index n,
                             Index k,
                             std::span<const double> p,
                             std::span<const double> q,
                             const LinearOtHints& hints = {});

}  // namespace gw
