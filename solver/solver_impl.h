// Internal pieces of the solver shared by the steps of solve() (solve.cpp and the files it
// names) and the backend loops (not installed).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/rng.h"
#include "distances/distance_provider.h"
#include "solver/options.h"
#include "solver/problem.h"
#include "solver/result.h"

namespace gw::detail {

// Which stretch of the iteration schedule one loop call runs. Restart probes (Options::restarts)
// run the first few iterations, each under its own anchor-sampling stream and without stopping
// tests; the winner's plan then starts the main call at first_iteration, so epsilon_t and the
// iteration counts continue where the probe left off.
struct LoopWindow {
  int first_iteration = 0;                          // 0-based t of the first iteration
  int max_count = std::numeric_limits<int>::max();  // iterations this call may run
  std::uint64_t stream = 1;                         // anchors from Rng(options.seed, stream)
  bool stopping = true;                             // apply the stopping rules
};

// A problem with everything resolved: providers built, marginals normalized, shapes checked.
struct PreparedProblem {
  Index n = 0;
  Index k = 0;
  std::shared_ptr<const DistanceProvider> source;  // null when fused_weight == 1
  std::shared_ptr<const DistanceProvider> target;
  std::vector<double> p;                              // n, sums to 1
  std::vector<double> q;                              // k, sums to 1
  const DenseMatrix<double>* feature_cost = nullptr;  // n x k, or null
  std::vector<double> initial_plan;                   // n x k, mass 1; empty: p q^T
  std::shared_ptr<const SpaceProfiles> source_profiles;  // Problem's, shapes checked
  std::shared_ptr<const SpaceProfiles> target_profiles;
  LoopWindow window;
  // Sinkhorn potentials of the augmented problem (n (+1 slack), k (+1 slack)): where the loop
  // starts (empty: zeros) and, on return, where it ended -- so a continued run (after restart
  // probes) keeps its warm start.
  std::vector<double> potential_f;
  std::vector<double> potential_g;
};

// A side's marginal normalized to mass 1 (empty: uniform), as gw::solve normalizes it; `side`
// names it in errors (kInvalidArgument on a wrong length, kBadData on bad values).
std::vector<double> normalized_weights(const std::vector<double>& weights,
                                       Index n,
                                       const char* side);

// Builds the distance provider of one side ("source" / "target" in messages).
std::shared_ptr<const DistanceProvider> make_provider(const Geometry& geometry,
                                                      const Options& options,
                                                      const char* side);

// Every node's distances to every node (n x n float32, row-major, n = provider.num_nodes()),
// unreachable pairs clamped and the block divided by its maximum (clamp_and_normalize): the dense
// matrices of the exact loss and the exact solver. 4 n^2 bytes.
std::vector<float> normalized_full_distances(const DistanceProvider& provider);

// The slack row/column layout of the augmented Sinkhorn problem.
struct SlackLayout {
  bool enabled = false;
  bool exact_partial = false;  // POT-style exact partial transport (Options::partial_mass)
  double mass = 1.0;           // m: mass the real block is meant to carry
  double row_mass = 0.0;       // slack row's marginal (source side)
  double col_mass = 0.0;       // slack column's marginal (target side)
};
SlackLayout slack_layout(Index n, Index k, const Options& options);

// Distance-profile initial plan (Options::initial_plan), n x k float64, mass 1.
std::vector<double> distance_profile_plan(const PreparedProblem& problem, const Options& options);

// The quantile profiles behind distance_profile_plan, drawn exactly as it draws them, for a
// backend that builds the plan itself (the CUDA loop): row-major float32, n x quantiles (source)
// and k x quantiles (target).
struct DistanceProfiles {
  std::vector<float> source;
  std::vector<float> target;
  int quantiles = 0;
};
DistanceProfiles distance_profile_features(const PreparedProblem& problem, const Options& options);

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

// Whether Options::solver = kAuto resolves to the exact solver for this problem and these options
// (the rule of Options::solver; false when solver is not kAuto).
bool auto_runs_exact(const Problem& problem, const Options& options);

// ---------------------------------------------------------------- the exact solver (exact.cpp)
// Multiply-adds of one dense GW gradient, n^2 k + n k^2 (Options::exact_max_work).
inline double exact_iteration_work(Index n, Index k) {
  return static_cast<double>(n) * k * (static_cast<double>(n) + k);
}
// Up to this work (about 80 x 80) the exact solver computes in float64 whatever
// Options::precision says: its iterations cost microseconds there. Above it, float32 products
// then the float64 finish (Options::exact_tolerance) give the same losses faster: at 400 x 500
// (spiral, 1.8e8) 0.064 s instead of 0.073-0.082 s, loss 4e-7 relative higher; on the 40-space
// pairwise collection (100-200 points) 5% less time, 23 of 780 distances different by <= 1e-7;
// the symmetric shapes (~750 vertices) the same maps (bench/RESULTS.md, issue 14). It was 4e9
// before the float64 finish existed, when CG's convergence tests needed double products.
inline constexpr double kExactDoubleWork = 1e6;
// Up to this work the exact solver runs on one thread whatever Options::threads says. Measured
// on the spiral benchmark (2 cores, quiet): two threads are faster from 200 x 250 (work 2.25e7,
// 0.028 vs 0.032 s) and at 400 x 500 (1.8e8, median 0.131 vs 0.152 s over 12 runs each, with the
// warm-started network simplex); 1e9, the earlier value, kept 400 x 500 on one thread.
inline constexpr double kExactSingleThreadWork = 1e7;

// The exact solver (Options::solver = kExact) on a prepared problem: fills plan (n x k, float64)
// and the loop fields of the result (termination, message, iterations, log with the objective F
// per iteration in IterationRecord::cost, starts, start_chosen, timings). The plan is on the
// polytope up to rounding for kConditionalGradient / kHybrid; solve() rounds it as for the loop.
void run_exact(PreparedProblem& problem,
               const Options& options,
               std::vector<double>& plan,
               Result& result);

// Puts a plan (mass 1) on {T >= 0 : T 1 = p, T^T 1 = q}: Sinkhorn-Knopp scaling of T itself, then
// the Altschuler-Weed-Rigollet rounding (Options::round_marginals describes both).
void project_to_marginals(std::vector<double>& plan,
                          const std::vector<double>& p,
                          const std::vector<double>& q);

// ---------------------------------------------------------------- the steps of solve()
// Validates `problem` against `options` and resolves it: providers built (make_provider),
// marginals normalized to mass 1, feature cost and initial plan checked (prepare.cpp). Throws
// gw::Error naming the field.
PreparedProblem prepare_problem(const Problem& problem, const Options& options);

// The loop of options.backend (run_cpu_loop or run_cuda_loop).
void run_loop(PreparedProblem& problem,
              const Options& options,
              std::vector<double>& plan,
              Result& result);

// Options::restarts probes (restarts.cpp): runs each probe's first restart_iterations
// iterations, records every probe's GW loss in result.restart_losses and the winner in
// restart_chosen, and leaves the winner's plan, potentials and window in `pb` for the main loop.
void run_restart_probes(PreparedProblem& pb, const Options& options, Result& result);

// Row sums (rows, n entries) and column sums (cols, k entries) of a dense row-major n x k plan,
// multithreaded (marginals.cpp). Every sum is accumulated in an order fixed by n and k alone (a
// row by one thread in SIMD lanes; a column over fixed blocks of rows, added in block order), so
// the results do not depend on the thread count.
void plan_row_sums(const double* plan, Index n, Index k, std::span<double> rows);
void plan_column_sums(const double* plan, Index n, Index k, std::span<double> cols);

// Both sums of a final plan, taken once for its marginal errors, its mass and its loss.
struct PlanSums {
  std::vector<double> rows, cols;
};
PlanSums plan_sums(std::span<const double> plan, Index n, Index k);

// L1 distances of the plan's row and column sums from p and q (marginals.cpp).
struct MarginalErrors {
  double rows = 0.0;
  double columns = 0.0;
};
MarginalErrors marginal_errors(const PlanSums& sums,
                               const std::vector<double>& p,
                               const std::vector<double>& q);

// compute_loss's rule: the loss is computed exactly when both providers hold full matrices and
// n k (n + k) <= Options::exact_loss_max_work (n, k: the providers' node counts).
bool loss_computed_exactly(const DistanceProvider& source,
                           const DistanceProvider& target,
                           const Options& options);

// The GW loss of a solve's final plan into result.gw_loss / gw_loss_stderr / gw_loss_exact:
// exact when loss_computed_exactly, else estimate_gw_loss over Options::loss_anchors pairs
// (loss.cpp).
// `sums` are plan_sums of `plan`.
void compute_loss(const PreparedProblem& pb,
                  const std::vector<double>& plan,
                  const PlanSums& sums,
                  const Options& options,
                  Result& result);

// Dense float64 plan (n x k, consumed) -> result.plan or result.plan_topk (Options::plan_format),
// result.matching (row argmax) and result.plan_mass (plan_output.cpp).
void finalize_plan(std::vector<double>& plan, const Options& options, Result& result);

}  // namespace gw::detail
