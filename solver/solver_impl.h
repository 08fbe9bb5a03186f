// Internal pieces of the solver that every path shares (the prepared problem, providers,
// marginals, rounding, loss, output) and the internal entry point of sub-solves (not installed).
// Each path's own internals are in sampled/sampled_impl.h, sparse/sparse_impl.h and
// exact/exact_impl.h.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/rng.h"
#include "distances/distance_provider.h"
#include "sampling/sampling.h"
#include "solver/options.h"
#include "solver/problem.h"
#include "solver/result.h"
#include "solver/solve.h"
#include "solver/strategy.h"

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
  // Problem::source_features / target_features (n x d, k x d) and their cost's divisor
  // (feature_cost_scale), or null; on a dense path solve_with materializes them into
  // owned_feature_cost and points feature_cost at it.
  const DenseMatrix<double>* source_features = nullptr;
  const DenseMatrix<double>* target_features = nullptr;
  double feature_scale = 0.0;
  DenseMatrix<double> owned_feature_cost;
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

// A plan as the loss estimator sees it, whatever its layout: the row sums r (n) and column sums c
// (k), the anchor pairs drawn from it (with the sampler of its layout, sampling.h), and its
// product with a block of target distances: times(dy, b, out) writes out = T dy, n x b row-major,
// for dy k x b row-major (unreachable entries already filled).
struct LossPlan {
  Index n = 0;
  Index k = 0;
  std::span<const double> rows;
  std::span<const double> cols;
  AnchorPairs pairs;
  std::function<void(const double* dy, int b, double* out)> times;
};

// The Monte Carlo GW loss of a plan (estimate_gw_loss, solve.h, describes it), computed in blocks
// of anchors so that the provider output stays at (n + k) x 64 floats: per anchor p the exact
// inner sum l_p = sum_kl T_kl (dx(k, i_p) / sx - dy(l, j_p) / sy)^2, kept in raw units until every
// block is seen. sx, sy: the given scales, or (<= 0) the largest finite distance of all anchors'
// columns. Unreachable entries count as 1.5 x the largest finite distance (in the cross term, of
// their own block: the one place where the block size shows, and only on disconnected inputs).
// The value depends on the thread count only through rounding.
LossEstimate estimate_loss_in_blocks(const DistanceProvider& source,
                                     const DistanceProvider& target,
                                     const LossPlan& plan,
                                     double scale_x,
                                     double scale_y);

// A plan held as CSR rows (the sparse support's layout): row i's entries are
// values[offsets[i] .. offsets[i + 1]) in columns cols[...].
struct CsrPlan {
  Index n = 0;
  Index k = 0;
  std::span<const Offset> offsets;
  std::span<const Index> cols;
  std::span<double> values;
};

// Sinkhorn-Knopp scaling of a CSR plan's entries toward (p, q), the sweeps of
// project_to_marginals on the entries the support has: at least min_sweeps (10) sweeps, at most
// max_sweeps, stopping once the column L1 error after a row pass is below `tolerance` or a sweep
// removes less than 1% of it. It ends on a row pass, so the rows are exact (to rounding) and the
// columns carry what the support cannot (reported as the column marginal error). Column sums are
// per-thread partial arrays added in thread order.
void scale_csr_to_marginals(const CsrPlan& plan,
                            std::span<const double> p,
                            std::span<const double> q,
                            double tolerance,
                            int max_sweeps);

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

// ---------------------------------------------------------------- the solve itself (solve.cpp)
// gw::solve with a given strategy (choose_strategy's): prepares the problem, runs the strategy's
// path and the shared finishing steps.
Result solve_with(const Problem& problem, const Options& options, const Strategy& strategy);

// The entry point of a sub-solve (a multiscale start, the sparse path's coarse level): `options`
// with its given marks dropped (Options::forget_given), so that the sub-problem gets the strategy
// of its own size, then solve_with. Never the public gw::solve.
Result solve_internal(const Problem& problem, Options options);

}  // namespace gw::detail
