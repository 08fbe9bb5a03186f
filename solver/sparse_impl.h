// The sparse-support solve path (Options::support = kSparse), internal to the solver module.
//
// Levels: (1) each side is quantized into cells: `cells` nodes are picked (seeded, uniformly at
// random without replacement) and every node joins its nearest pick, from provider queries in
// blocks of picks; (2) the cells are aligned by the dense loop on the pick-to-pick distances with
// cell masses as marginals; (3) each source node gets up to support_size candidate targets,
// members of the target cells its cell couples to most, and every target is covered by at least
// one source node; (4) the sampled GW iterations (run_gw_iterations, the same driver as the dense
// loops) run on that CSR support, and every support_regrow_every iterations each row's support is
// rebuilt from its heaviest current entries, a fixed backbone of its starting support (which
// keeps every target cell reached in proportion to the coarse plan, so the balanced problem stays
// nearly feasible), and members of its best match's cell and that cell's nearest cells, so a
// wrong coarse match can move. This fine level continues the coarse level's annealing instead of
// repeating it: it runs at epsilon_final, its stopping tests apply after 10 iterations with a
// plateau patience of one re-growth period (at least 5), and its polishing solves take at most 20
// inner iterations (step 5 fixes the rows); (5) the plan is pruned to support_size entries per
// row, scaled to the marginals on that support (Sinkhorn-Knopp on the entries, ending on a row
// pass: rows exact, columns off by what the pruned support cannot carry, reported as
// column_marginal_error), and the GW loss is estimated from anchor pairs drawn from it, in blocks
// of anchors.
// No buffer holds n x k entries: memory is O(n support_size + (n + k) M + cells^2).
#pragma once

#include <cstddef>
#include <vector>

#include "core/types.h"
#include "solver/options.h"
#include "solver/result.h"
#include "solver/solve.h"
#include "solver/solver_impl.h"

namespace gw::detail {

// One side's quantization.
struct Quantization {
  Index cells = 0;
  std::vector<Index> picks;      // cells node ids (the cell centres)
  std::vector<Index> cell;       // n: each node's cell (its nearest pick)
  std::vector<float> distances;  // cells x cells, symmetric, zero diagonal (pick to pick)
};
// `cells` picks from Rng(seed, stream), assignment by blocks of at most block_bytes of provider
// output. Unreachable pairs count as infinitely far; a node no pick reaches joins cell 0.
Quantization quantize(const DistanceProvider& provider,
                      Index cells,
                      std::uint64_t seed,
                      std::uint64_t stream,
                      std::size_t block_bytes);

// The sparse path from a prepared problem to a finished Result (plan_topk, matching, masses,
// marginal errors, loss estimate, timings, log). Throws kInvalidArgument for options it does not
// support (partial_mass, lambda_ema, a given dense initial plan).
void run_sparse_solve(PreparedProblem& problem, const Options& options, Result& result);

// Throws kBadData with a one-line message (the shape, both estimates, the budget and the flags)
// when the path `estimate` chose does not fit its budget.
void check_memory_budget(const Problem& problem, const Options& options, const MemoryEstimate& e);

// Cells per side that the sparse path uses for an n x k problem (Options::support_cells resolved).
Index resolved_support_cells(Index n, Index k, const Options& options);

}  // namespace gw::detail
