// Internals of the sampled loop on the dense plan (sampled/): the CPU and CUDA loops, the epsilon
// schedule and stopping rules they share with the sparse path, restart probes (not installed).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "solver/options.h"
#include "solver/result.h"
#include "solver/solver_impl.h"

namespace gw::detail {

// The loop on the CPU: fills plan (n x k, float64, row-major), matching-independent fields of the
// result (termination, message, iterations, log, gw_cost_estimate, timings, threads). Takes over
// (and frees) problem.initial_plan once the loop's own plan holds it, to keep peak memory down.
void run_cpu_loop(PreparedProblem& problem,
                  const Options& options,
                  std::vector<double>& plan,
                  Result& result);

// The loop on a CUDA device (same contract). It also builds the distance-profile start on the
// device when problem.initial_plan is empty (solve() leaves that step to it for kCuda). Throws
// kNotCompiled in a build without CUDA.
void run_cuda_loop(PreparedProblem& problem,
                   const Options& options,
                   std::vector<double>& plan,
                   Result& result);

// The loop of options.backend (run_cpu_loop or run_cuda_loop).
void run_loop(PreparedProblem& problem,
              const Options& options,
              std::vector<double>& plan,
              Result& result);

// epsilon_t of the geometric schedule.
double epsilon_at(const Options& options, int iteration);

// The stopping rules shared by both loops (see Options: tolerance, plateau_*).
class StoppingRule {
 public:
  explicit StoppingRule(const Options& options);
  // Feeds iteration `iteration` (1-based). Returns a termination when the loop should stop at a
  // host check, else std::nullopt. `check` says whether this iteration is a host check.
  std::optional<Termination> update(int iteration, double cost, double error, bool check);
  const std::string& message() const { return message_; }

 private:
  const Options& options_;
  double ema_ = 0.0;
  double best_ = 0.0;
  int best_iteration_ = 0;
  bool started_ = false;
  std::string message_;
};

// Options::restarts probes (restarts.cpp): runs each probe's first restart_iterations
// iterations, records every probe's GW loss in result.restart_losses and the winner in
// restart_chosen, and leaves the winner's plan, potentials and window in `pb` for the main loop.
void run_restart_probes(PreparedProblem& pb, const Options& options, Result& result);

}  // namespace gw::detail
