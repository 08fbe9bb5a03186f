// Internals of the exact-gradient solver (exact/): its entry point from solve_with (not
// installed). The public building blocks (gradient, line search, profiles) are in exact.h.
#pragma once

#include <vector>

#include "solver/options.h"
#include "solver/result.h"
#include "solver/solver_impl.h"
#include "solver/strategy.h"

namespace gw::detail {

// The exact solver (Strategy::solver = kExact) on a prepared problem, in the strategy's precision,
// thread count and method: fills plan (n x k, float64) and the loop fields of the result
// (termination, message, iterations, log with the objective F per iteration in
// IterationRecord::cost, starts, start_chosen, timings). The plan is on the polytope up to
// rounding for kConditionalGradient / kHybrid; solve_with rounds it as for the loop.
void run_exact(PreparedProblem& problem,
               const Options& options,
               const Strategy& strategy,
               std::vector<double>& plan,
               Result& result);

}  // namespace gw::detail
