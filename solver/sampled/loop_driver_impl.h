// The outer GW iteration (docs/architecture.md section 2), written once for every backend
// (internal).
//
// A backend (CpuLoop, CudaLoop) owns the n x k state in its memory and supplies the steps:
//   AnchorPairs sample(std::span<const double> uniforms);  // m pairs drawn from T
//   std::span<float> source_block(int m);                   // host n x m buffer for D_X
//   std::span<float> target_block(int m);                   // host k x m buffer for D_Y
//   void build_cost(int m, bool precise);  // Lambda from the two blocks (+ EMA / fused blends;
//                                          // precise: a polishing cost, kept out of the EMA)
//   SinkhornResult sinkhorn(double epsilon, int max_iterations, double tolerance);
//   IterationTotals plan_and_blend(double epsilon);         // T_new, momentum, totals
// where m <= Options::max_anchors(n, k) varies by iteration, and the driver does the rest: the
// epsilon schedule, the anchor uniforms, the distance queries, the phase timings, the per-iteration
// log, the stopping rules and the progress callback.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/timer.h"
#include "sampling/sampling.h"
#include "sinkhorn/sinkhorn.h"
#include "solver/sampled/sampled_impl.h"

namespace gw::detail {

struct IterationTotals {
  double cost = 0.0;   // <Lambda, T> after the blend
  double error = 0.0;  // ||T - T_prev||_F
};

// D_X and D_Y for the anchors, inf-clamped and max-normalized. The two sides run concurrently,
// one thread each (providers are thread-safe; their own parallel regions then run on one
// thread): for the small blocks of the loop a provider call is dominated by fixed costs that
// threads inside one call do not shrink, and on large problems two single-threaded calls keep
// the same two cores busy.
inline void query_distances(const PreparedProblem& problem,
                            const AnchorPairs& anchors,
                            std::span<float> dx,
                            std::span<float> dy) {
#pragma omp parallel sections num_threads(2)
  {
#pragma omp section
    {
      problem.source->distances_to(anchors.rows, dx);
      clamp_and_normalize(dx, true);
    }
#pragma omp section
    {
      problem.target->distances_to(anchors.cols, dy);
      clamp_and_normalize(dy, true);
    }
  }
}

template <typename Backend>
void run_gw_iterations(Backend& backend,
                       const PreparedProblem& problem,
                       const Options& options,
                       Result& result) {
  const LoopWindow& window = problem.window;
  Rng rng(options.seed, window.stream);
  StoppingRule stopping(options);
  Stopwatch watch;
  const int last = static_cast<int>(std::min<std::int64_t>(
      options.max_iterations, std::int64_t{window.first_iteration} + window.max_count));
  // One outer iteration at 0-based t; `polish` selects the final iterations' tight inner solves.
  // Returns false when the run must end (non-finite values).
  auto iterate = [&](int t, bool polish, IterationTotals& totals) {
    const int iteration = t + 1;
    const double epsilon = epsilon_at(options, t);
    const int m = polish ? options.many_anchors(problem.n, problem.k)
                         : options.anchors_at(t, problem.n, problem.k);
    AnchorPairs anchors;
    {
      ScopedPhase phase(result.timings, "sampling");
      anchors = backend.sample(draw_sampling_uniforms(rng, m));
    }
    {
      ScopedPhase phase(result.timings, "distances");
      query_distances(problem, anchors, backend.source_block(m), backend.target_block(m));
    }
    {
      ScopedPhase phase(result.timings, "cost");
      backend.build_cost(m, polish);
    }
    SinkhornResult inner;
    {
      ScopedPhase phase(result.timings, polish ? "polish_sinkhorn" : "sinkhorn");
      inner = polish ? backend.sinkhorn(epsilon,
                                        options.polish_sinkhorn_iterations,
                                        options.polish_sinkhorn_tolerance)
                     : backend.sinkhorn(
                           epsilon, options.sinkhorn_max_iterations, options.sinkhorn_tolerance);
    }
    if (inner.termination == SinkhornTermination::kNonFinite) {
      result.termination = Termination::kNonFinite;
      result.message = "Sinkhorn produced a non-finite marginal error at iteration " +
                       std::to_string(iteration) + " (epsilon " + std::to_string(epsilon) +
                       "); the plan is the previous iterate's";
      return false;
    }
    {
      ScopedPhase phase(result.timings, "plan");
      totals = backend.plan_and_blend(epsilon);
    }
    result.iterations = iteration;
    result.gw_cost_estimate = totals.cost;
    result.log.push_back({iteration,
                          totals.cost,
                          totals.error,
                          epsilon,
                          inner.iterations,
                          inner.marginal_error,
                          watch.seconds()});
    if (!std::isfinite(totals.cost) || !std::isfinite(totals.error)) {
      result.termination = Termination::kNonFinite;
      result.message = "the plan became non-finite at iteration " + std::to_string(iteration);
      return false;
    }
    return true;
  };
  // The final iterations solve the inner problems tightly, so that the momentum plan the run
  // returns has (nearly) its marginals; the loop's few warm-started inner iterations leave them a
  // few percent off. Probes skip this (their plans only rank the starts).
  auto polish = [&](int from) {
    if (!window.stopping) return;
    IterationTotals totals;
    const int end = std::min<int>(options.max_iterations, from + options.polish_iterations);
    for (int t = from; t < end; ++t) {
      if (!iterate(t, /*polish=*/true, totals)) return;
    }
  };
  // Within max_iterations: the last polish_iterations iterations are the polishing ones.
  const int polish_from = options.max_iterations - options.polish_iterations;
  for (int t = window.first_iteration; t < last; ++t) {
    const int iteration = t + 1;
    IterationTotals totals;
    if (!iterate(t, window.stopping && t >= polish_from, totals)) return;
    if (!window.stopping) continue;
    const bool check = iteration % options.check_every == 0 || iteration == options.max_iterations;
    if (const auto stop = stopping.update(iteration, totals.cost, totals.error, check)) {
      result.termination = *stop;
      result.message = stopping.message();
      if (t < polish_from) polish(t + 1);
      return;
    }
    if (check && options.progress) {
      const Progress progress{iteration,
                              options.max_iterations,
                              totals.cost,
                              totals.error,
                              epsilon_at(options, t),
                              watch.seconds()};
      if (!options.progress(progress)) {
        result.termination = Termination::kCancelled;
        result.message =
            "cancelled by the progress callback at iteration " + std::to_string(iteration);
        return;
      }
    }
  }
  result.termination = Termination::kMaxIterations;
  result.message =
      last < options.max_iterations
          ? "ran its window of " + std::to_string(last - window.first_iteration) + " iterations"
          : "reached max_iterations = " + std::to_string(options.max_iterations);
}

// Bookkeeping of the fused_weight == 1 path (one Sinkhorn solve on C_feat), shared by backends.
inline void record_plain_ot(const SinkhornResult& inner,
                            const IterationTotals& totals,
                            double epsilon,
                            double seconds,
                            Result& result) {
  result.iterations = 1;
  result.gw_cost_estimate = totals.cost;
  result.log.push_back(
      {1, totals.cost, totals.error, epsilon, inner.iterations, inner.marginal_error, seconds});
  if (inner.termination == SinkhornTermination::kNonFinite) {
    result.termination = Termination::kNonFinite;
    result.message = "plain OT (fused_weight = 1): Sinkhorn produced a non-finite value";
  } else {
    // Converged only when the one Sinkhorn solve reached its tolerance; a solve that ran out of
    // iterations is reported as such, not as convergence.
    result.termination = inner.termination == SinkhornTermination::kConverged
                             ? Termination::kConverged
                             : Termination::kMaxIterations;
    result.message = "plain entropic OT on the feature cost (fused_weight = 1): Sinkhorn " +
                     std::string(to_string(inner.termination)) + " after " +
                     std::to_string(inner.iterations) + " iterations";
  }
}

}  // namespace gw::detail
