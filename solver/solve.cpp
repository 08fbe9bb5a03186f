// gw::solve: the order of one solve (validation, memory check, solver choice, start, restarts,
// loop, rounding, loss, output); each step lives in its own file (docs/architecture.md, section 2).
#include "solver/solve.h"

#include <cmath>
#include <sstream>
#include <string>

#include "core/context.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/timer.h"
#include "solver/multiscale_impl.h"
#include "solver/solver_impl.h"
#include "solver/sparse_impl.h"

namespace gw {

namespace {

// Both marginals are hard constraints and all the mass moves: the transport polytope, where the
// exact solver works and where rounding puts a plan.
bool balanced_problem(const Options& options) {
  return std::isinf(options.rho_a) && std::isinf(options.rho_b) && !options.partial_mass;
}

// Whether the exact solver runs (Options::solver), with the reason in *reason.
bool choose_exact(const Problem& problem,
                  const Options& options,
                  const MemoryEstimate& memory,
                  std::string* reason) {
  const Index n = problem.source.num_nodes(), k = problem.target.num_nodes();
  const bool balanced = balanced_problem(options);
  // What keeps the exact solver out, first reason first (empty: nothing).
  std::string blocker;
  if (!balanced) {
    blocker = "an unbalanced, semi-relaxed or partial problem (rho_a, rho_b, partial_mass)";
  } else if (options.backend != Backend::kCpu) {
    blocker = "backend cuda (the exact solver runs on the CPU)";
  } else if (memory.chosen == Support::kSparse) {
    blocker = "the sparse plan support";
  } else if (options.multiscale) {
    blocker = "multiscale (a sampled-loop warm start)";
  } else if (options.restarts > 1) {
    blocker = "restart probes (restarts > 1, the sampled loop's)";
  } else if (options.slack_shared) {
    blocker = "slack_shared (the sampled loop's slack)";
  }
  const double work = detail::exact_iteration_work(n, k);
  std::ostringstream why;
  switch (options.solver) {
    case SolverKind::kSampled:
      *reason = options.solver_note.empty() ? "requested" : options.solver_note;
      return false;
    case SolverKind::kExact:
      GW_CHECK_CODE(blocker.empty(),
                    ErrorCode::kUnsupported,
                    "solver = exact does not support "
                        << blocker << "; use solver sampled (--solver sampled)");
      *reason = options.solver_note.empty() ? "requested" : options.solver_note;
      return true;
    case SolverKind::kAuto:
      break;
  }
  if (!blocker.empty()) {
    *reason = "auto: sampled for " + blocker;
    return false;
  }
  const bool exact = work <= options.exact_max_work;
  why << "auto: n^2 k + n k^2 = " << work << (exact ? " <= " : " > ") << "exact_max_work "
      << options.exact_max_work;
  *reason = why.str();
  return exact;
}

}  // namespace

namespace detail {

bool auto_runs_exact(const Problem& problem, const Options& options) {
  std::string reason;
  return options.solver == SolverKind::kAuto &&
         choose_exact(problem, options, estimate_memory(problem, options), &reason);
}

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

}  // namespace detail

Result solve(const Problem& problem, const Options& options) {
  std::string why;
  GW_CHECK(options.is_valid(&why), "invalid options: " << why);
  require_backend(options.backend, options.device);
  Stopwatch total;
  Result result;
  result.options = options;
  result.options.progress = nullptr;
  result.seed = options.seed;
  result.isa = to_string(active_isa());
  ScopedThreads threads(options.threads);

  // The memory check comes before anything large exists (providers included).
  const MemoryEstimate memory = estimate_memory(problem, options);
  detail::check_memory_budget(problem, options, memory);
  result.support = memory.chosen;
  result.estimated_peak_bytes = memory.chosen_bytes();
  result.memory_limit_bytes = memory.limit;
  const bool sparse = memory.chosen == Support::kSparse;
  const bool exact = choose_exact(problem, options, memory, &result.solver_reason);
  result.solver = exact ? "exact" : "sampled";
  detail::PreparedProblem pb;
  {
    ScopedPhase phase(result.timings, "setup");
    pb = detail::prepare_problem(problem, options);
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
  if (sparse) {
    detail::run_sparse_solve(pb, options, result);
    result.source_distance_stats = pb.source->stats();
    result.target_distance_stats = pb.target->stats();
    result.total_seconds = total.seconds();
    return result;
  }
  result.support_nnz = static_cast<Offset>(pb.n) * pb.k;

  std::vector<double> plan;
  if (exact) {
    result.exact_method = std::string(to_string(options.exact_method));
    result.backend = Backend::kCpu;
    result.threads = available_threads();
    detail::run_exact(pb, options, plan, result);
  } else {
    if (options.multiscale && pb.source && pb.initial_plan.empty()) {
      Stopwatch watch;
      detail::MultiscaleOutcome coarse = detail::multiscale_initial_plan(pb, options);
      result.multiscale_used = coarse.used;
      result.multiscale_size = coarse.size;
      result.multiscale_iterations = coarse.iterations;
      result.multiscale_seconds = watch.seconds();
      result.timings.add("multiscale", result.multiscale_seconds);
      if (coarse.used) pb.initial_plan = std::move(coarse.plan);
    }

    // The CUDA loop builds the distance-profile plan on the device (gw_loop_cuda.cpp).
    if (pb.initial_plan.empty() && pb.source &&
        options.initial_plan == InitialPlan::kDistanceProfiles &&
        options.backend != Backend::kCuda) {
      ScopedPhase phase(result.timings, "init");
      pb.initial_plan = detail::distance_profile_plan(pb, options);
    }

    if (options.restarts > 1 && pb.source && options.restart_iterations < options.max_iterations) {
      detail::run_restart_probes(pb, options, result);
    }
    detail::run_loop(pb, options, plan, result);
  }

  const bool balanced = balanced_problem(options);
  // Conditional-gradient plans are on the polytope already, and their exact loss is known.
  const bool exact_on_polytope = exact && options.exact_method != ExactMethod::kMirrorDescent;
  if (options.round_marginals && balanced && result.termination != Termination::kNonFinite &&
      !exact_on_polytope) {
    ScopedPhase phase(result.timings, "round");
    detail::project_to_marginals(plan, pb.p, pb.q);
  }
  // The returned plan's row and column sums, once, for its marginal errors, mass and loss.
  const detail::PlanSums sums = detail::plan_sums(plan, pb.n, pb.k);
  if (result.termination != Termination::kNonFinite) {
    // L1 marginal errors of the returned plan (the sparse path reports the same).
    const detail::MarginalErrors errors = detail::marginal_errors(sums, pb.p, pb.q);
    result.row_marginal_error = errors.rows;
    result.column_marginal_error = errors.columns;
  }
  if (options.compute_gw_loss && pb.source) {
    ScopedPhase phase(result.timings, "loss");
    double mass = 0.0;
    for (double r : sums.rows) mass += r;
    result.plan_mass = mass;
    if (mass > 0.0 && std::isfinite(mass) && !exact_on_polytope) {
      detail::compute_loss(pb, plan, sums, options, result);
    }
  }
  {
    ScopedPhase phase(result.timings, "output");
    detail::finalize_plan(plan, options, result);
  }
  if (pb.source) {
    result.source_distance_stats = pb.source->stats();
    result.target_distance_stats = pb.target->stats();
  }
  result.total_seconds = total.seconds();
  return result;
}

}  // namespace gw
