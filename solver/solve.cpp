// gw::solve: the strategy (strategy.cpp decides), then one path, then the finishing steps every
// dense path shares (rounding onto the marginals, the loss, the output form); each step lives in a
// file of its own (docs/architecture.md, "The solver").
#include "solver/solve.h"

#include <cmath>
#include <string>

#include "core/context.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/timer.h"
#include "solver/exact/exact_impl.h"
#include "solver/inputs.h"
#include "solver/sampled/multiscale_impl.h"
#include "solver/solver_impl.h"
#include "solver/sparse/sparse_impl.h"

namespace gw {

namespace detail {

namespace {

// The sampled loop on the dense plan: the optional warm starts (multiscale, distance profiles),
// restart probes, then the loop of the strategy's backend.
void run_sampled(PreparedProblem& pb, const Options& options, std::vector<double>& plan, Result& result) {
  if (options.multiscale && pb.source && pb.initial_plan.empty()) {
    Stopwatch watch;
    MultiscaleOutcome coarse = multiscale_initial_plan(pb, options);
    result.multiscale_used = coarse.used;
    result.multiscale_size = coarse.size;
    result.multiscale_iterations = coarse.iterations;
    result.multiscale_seconds = watch.seconds();
    result.timings.add("multiscale", result.multiscale_seconds);
    if (coarse.used) pb.initial_plan = std::move(coarse.plan);
  }
  // The CUDA loop builds the distance-profile plan on the device (gw_loop_cuda.cpp).
  if (pb.initial_plan.empty() && pb.source &&
      options.initial_plan == InitialPlan::kDistanceProfiles && options.backend != Backend::kCuda) {
    ScopedPhase phase(result.timings, "init");
    pb.initial_plan = distance_profile_plan(pb, options);
  }
  if (options.restarts > 1 && pb.source && options.restart_iterations < options.max_iterations) {
    run_restart_probes(pb, options, result);
  }
  run_loop(pb, options, plan, result);
}

// Rounding, marginal errors, loss and output of a dense plan (every path but the sparse one).
void finish_dense(PreparedProblem& pb, const Options& options, std::vector<double>& plan, Result& result) {
  const bool balanced =
      std::isinf(options.rho_a) && std::isinf(options.rho_b) && !options.partial_mass;
  const Strategy& s = result.strategy;
  // Conditional-gradient plans are on the polytope already, and their exact loss is known.
  const bool exact_on_polytope =
      s.solver == SolverKind::kExact && s.exact_method != ExactMethod::kMirrorDescent;
  if (options.round_marginals && balanced && result.termination != Termination::kNonFinite &&
      !exact_on_polytope) {
    ScopedPhase phase(result.timings, "round");
    project_to_marginals(plan, pb.p, pb.q);
  }
  // The returned plan's row and column sums, once, for its marginal errors, mass and loss.
  const PlanSums sums = plan_sums(plan, pb.n, pb.k);
  if (result.termination != Termination::kNonFinite) {
    const MarginalErrors errors = marginal_errors(sums, pb.p, pb.q);
    result.row_marginal_error = errors.rows;
    result.column_marginal_error = errors.columns;
  }
  if (options.compute_gw_loss && pb.source) {
    ScopedPhase phase(result.timings, "loss");
    double mass = 0.0;
    for (double r : sums.rows) mass += r;
    result.plan_mass = mass;
    if (mass > 0.0 && std::isfinite(mass) && !exact_on_polytope) {
      compute_loss(pb, plan, sums, options, result);
    }
  }
  ScopedPhase phase(result.timings, "output");
  finalize_plan(plan, options, result);
}

// The dense paths read the feature cost as an n x k matrix: built from the features once, with
// the scale prepare_problem found (the same values feature_cost_from_features gives).
void materialize_feature_cost(PreparedProblem& pb, Result& result) {
  ScopedPhase phase(result.timings, "setup");
  const DenseMatrix<double>& f = *pb.source_features;
  const DenseMatrix<double>& g = *pb.target_features;
  pb.owned_feature_cost = feature_cost_from_features(f.values, f.rows, g.values, g.rows, f.cols);
  pb.feature_cost = &pb.owned_feature_cost;
}

}  // namespace

void run_loop(PreparedProblem& problem,
              const Options& options,
              std::vector<double>& plan,
              Result& result) {
  if (options.backend == Backend::kCuda) {
    run_cuda_loop(problem, options, plan, result);
  } else {
    run_cpu_loop(problem, options, plan, result);
  }
}

Result solve_with(const Problem& problem, const Options& options, const Strategy& strategy) {
  require_backend(options.backend, options.device);
  Stopwatch total;
  Result result;
  result.options = options;
  result.options.progress = nullptr;
  result.seed = options.seed;
  result.isa = to_string(active_isa());
  result.strategy = strategy;
  ScopedThreads threads(options.threads);

  PreparedProblem pb;
  {
    ScopedPhase phase(result.timings, "setup");
    pb = prepare_problem(problem, options);
  }
  result.n = pb.n;
  result.k = pb.k;
  if (pb.source) {
    result.source_distances = std::string(pb.source->name());
    result.target_distances = std::string(pb.target->name());
    result.distance_memory_bytes = pb.source->memory_bytes() + pb.target->memory_bytes();
  } else {
    result.source_distances = result.target_distances = "none";
  }
  if (strategy.support == Support::kSparse) {
    run_sparse_solve(pb, options, result);
  } else {
    if (pb.source_features) materialize_feature_cost(pb, result);
    result.support_nnz = static_cast<Offset>(pb.n) * pb.k;
    std::vector<double> plan;
    if (strategy.solver == SolverKind::kExact) {
      run_exact(pb, options, strategy, plan, result);
    } else {
      run_sampled(pb, options, plan, result);
    }
    finish_dense(pb, options, plan, result);
  }
  if (pb.source) {
    result.source_distance_stats = pb.source->stats();
    result.target_distance_stats = pb.target->stats();
  }
  result.total_seconds = total.seconds();
  return result;
}

Result solve_internal(const Problem& problem, Options options) {
  options.forget_given();
  return solve_with(problem, options, choose_strategy(problem, options));
}

}  // namespace detail

Result solve(const Problem& problem, const Options& options) {
  return detail::solve_with(problem, options, choose_strategy(problem, options));
}

}  // namespace gw
