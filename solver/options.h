// Options of the sampled Gromov-Wasserstein solver (docs/architecture.md, "The solver").
//
// Every field has its default at the declaration and a paragraph on what it does and when to change
// it. Defaults follow the reference solver unless a measurement said better. The CLI's solver flags
// set these fields (tools/gwalign/solver_flags.cpp), mostly one flag per field under a shorter name
// (--M, --eps, --alpha, ...), some inverted (--no-slack, --no-round, --no-loss) or in other units
// (--dijkstra-cache-mb); plateau_ema_weight, sinkhorn_check_every, the profile_* fields,
// exact_loss_max_work, mirror_sinkhorn_iterations, hybrid_sampled_work, hybrid_basin_iterations,
// start_probe_iterations and progress have no flag.
//
// Settings that belong to one solver (the sampled loop's, the exact solver's) and plan_format are
// Setting<T>: they remember whether the caller gave them. Assigning one (`options.num_anchors =
// 80`, a CLI flag, a Python keyword) marks it given, and a given setting is a request: under
// solver = kAuto a sampled-loop setting selects the sampled loop and an exact-solver setting the
// exact solver (choose_strategy, solver/strategy.h), so the same settings select the same solver
// through every front end. Reading one gives its value (a Setting<T> converts to T).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/progress.h"
#include "core/types.h"
#include "distances/distance_provider.h"

namespace gw {

// A setting with a default that remembers whether the caller gave it. Copy-initialized from its
// default at the declaration (not given); assigning a value marks it given (a default-valued
// assignment too: the caller asked for it). Converts to T, so code reads it like a plain field.
// set_default changes the value without marking it given (a front end with its own default).
template <typename T>
class Setting {
 public:
  constexpr Setting(T default_value) : value_(default_value) {}  // NOLINT: implicit by design
  Setting& operator=(T value) {
    value_ = value;
    given_ = true;
    return *this;
  }
  constexpr operator T() const { return value_; }  // NOLINT: implicit by design
  constexpr T value() const { return value_; }
  constexpr bool given() const { return given_; }
  void set_default(T value) { value_ = value; }
  // Keeps the value, drops the mark (Options::forget_given).
  void forget_given() { given_ = false; }

 private:
  T value_;
  bool given_ = false;
};

// Where the loop starts (when Problem::initial_plan is not given).
enum class InitialPlan {
  kProduct,           // T_0 = p q^T (the reference solver's start)
  kDistanceProfiles,  // T_0 = entropic OT between distance profiles (see Options::profile_*)
};
std::string_view to_string(InitialPlan init);
std::optional<InitialPlan> initial_plan_from_string(std::string_view name);

// How the final plan is returned.
enum class PlanFormat {
  kDense,  // n x k float64, row-major (Result::plan)
  kTopK,   // the top_k largest entries of each row as CSR (Result::plan_topk)
};
std::string_view to_string(PlanFormat format);
std::optional<PlanFormat> plan_format_from_string(std::string_view name);

// Which plan representation the loop keeps (Options::support).
enum class Support {
  kAuto,    // dense when its estimated peak fits memory_limit comfortably, else sparse
  kDense,   // the n x k plan (every pair may carry mass)
  kSparse,  // a CSR support of at most support_size candidates per source node (no n x k buffer)
};
std::string_view to_string(Support support);
std::optional<Support> support_from_string(std::string_view name);

// Which solver gw::solve runs (Options::solver).
enum class SolverKind {
  kAuto,     // exact when its per-iteration work fits Options::exact_max_work (and the problem is
             // one the exact solver takes), sampled otherwise
  kSampled,  // the sampled loop: M anchor pairs per iteration, entropic inner problems
  kExact,    // the exact-gradient solver on dense distance matrices (solver/exact/exact.h)
};
std::string_view to_string(SolverKind solver);
std::optional<SolverKind> solver_kind_from_string(std::string_view name);

// The outer algorithm of the exact solver (Options::exact_method).
enum class ExactMethod {
  kHybrid,               // a cheap basin phase (exact mirror descent, or the sampled loop on large
                         // problems, see hybrid_sampled_work), then conditional gradient
  kConditionalGradient,  // Frank-Wolfe from the start: network-simplex vertices, exact line search
  kMirrorDescent,        // KL-proximal mirror descent with the warm-started Sinkhorn only
};
std::string_view to_string(ExactMethod method);
std::optional<ExactMethod> exact_method_from_string(std::string_view name);

// The relative decrease of the exact solver's objective that float32 products resolve: conditional
// gradient on float32 products stops there (Options::exact_tolerance, the float64 finish).
inline constexpr double kExactFloat32Tolerance = 5e-7;

struct Options {
  // ---------------------------------------------------------------- sampling and cost
  // M: anchor pairs sampled from the plan per iteration. The cost Lambda is estimated from M
  // columns of each distance matrix, so its noise falls like 1/sqrt(M) and its price (the GEMM,
  // the distance queries) grows like M. 50 is the reference default; the spiral table uses 80,
  // and 100 at 25k x 30k and above.
  Setting<int> num_anchors = 50;

  // Anchor warm-up: the first warmup_iterations iterations draw warmup_anchors pairs instead of M
  // (0: automatic, 40 M capped so that one warm-up GEMM stays below 8 GFLOP, i.e. 2000 pairs for
  // 400 x 500 and M = 50, 800 for 2000 x 2500, none beyond M above ~10k x 10k). The start decides
  // the basin: from a plan that is still spread out, M anchors are M random guesses of the
  // correspondence, and on near-symmetric inputs (a square's rotations, a curve's reversal) the
  // first few guesses pick an orientation by chance; many anchors average the guesses towards the
  // true gradient, which follows the data's own asymmetries (measured on a 400-node random
  // geometric graph: every seed found the right basin with a warm-up, about one in three without;
  // bench/RESULTS.md). The warm-up costs warmup_iterations GEMMs of 2 n k warmup_anchors flops. 0
  // iterations disables it.
  Setting<int> warmup_iterations = 2;
  Setting<int> warmup_anchors = 0;

  // Lambda-EMA weight beta in [0, 1): Lambda_t <- beta * Lambda_{t-1} + (1 - beta) * Lambda_t.
  // Smooths the sampled cost across iterations (less noise, slower reaction); costs one more n x k
  // buffer. 0 (off) by default.
  Setting<double> lambda_ema = 0.0;

  // --------------------------------------------------------------- entropic regularization
  // epsilon_0, in units of the max-normalized squared distances (the cost is in [0, ~1]). Smaller
  // is sharper but needs more Sinkhorn iterations; below ~1e-4 float32 loses resolution.
  Setting<double> epsilon = 1e-3;

  // Final epsilon of the geometric decay epsilon_t = epsilon_0 (epsilon_final / epsilon_0)^(t / T),
  // T = min(epsilon_decay_iterations, max_iterations) - 1, constant after T. A negative value
  // means the reference value max(epsilon / 10, min(5e-4, epsilon)). Set equal to epsilon for a
  // constant epsilon.
  Setting<double> epsilon_final = -1.0;

  // Iterations over which epsilon decays (capped by max_iterations). The reference decays over
  // all max_iterations, so no run can settle before max_iter; measured on the spiral benchmark
  // (bench/RESULTS.md), decaying over 100 iterations reaches the same |rho| and GW loss as over
  // 300, after which the plan settles and the stopping rules end the run.
  Setting<int> epsilon_decay_iterations = 80;

  // ---------------------------------------------------------------- outer loop
  // Momentum alpha in (0, 1]: T <- (1 - alpha) T + alpha T_new. 1 takes the Sinkhorn plan as is.
  Setting<double> momentum = 0.9;

  // Iteration limit, and the number of iterations before any stopping test applies.
  Setting<int> max_iterations = 500;
  Setting<int> min_iterations = 50;

  // Stop (converged) when ||T_t - T_{t-1}||_F < tolerance after min_iterations.
  Setting<double> tolerance = 1e-5;

  // Host checks (stopping tests, progress callback) every check_every iterations; the loop also
  // checks at max_iterations. On the GPU a check is a device-to-host synchronization, which is why
  // checks are spaced out; on the CPU a check costs nothing, but check_every still decides at which
  // iterations a run can stop (a multiple of check_every), so the same default on both backends
  // keeps their runs stopping at the same iteration. Lower it on the CPU for a finer stop.
  Setting<int> check_every = 5;

  // Cost-plateau stopping: c_t = <Lambda_t, T_t> is smoothed by an EMA of weight
  // plateau_ema_weight (ema <- w c_t + (1 - w) ema); after min_iterations, when the EMA has not
  // improved on its best value by plateau_improvement (relative) for plateau_patience iterations,
  // the loop stops (termination kPlateau). plateau_patience < 0 means max(min_iterations / 2, 20).
  // plateau_improvement = 0 disables the test.
  Setting<double> plateau_ema_weight = 0.2;
  Setting<double> plateau_improvement = 0.005;
  Setting<int> plateau_patience = -1;

  // ---------------------------------------------------------------- inner Sinkhorn
  // Per outer iteration; warm-started from the previous potentials. The reference solver allows
  // up to 100 iterations; measured on the spiral and graph-matching benchmarks, 3 reach the same
  // |rho|, node correctness and (after polishing) GW loss at a fraction of the time, because the
  // next outer iteration's cost changes more than further inner iterations would
  // (bench/RESULTS.md). The tolerance is on the L1 row-marginal error, checked every
  // sinkhorn_check_every iterations.
  Setting<int> sinkhorn_max_iterations = 3;
  Setting<double> sinkhorn_tolerance = 5e-4;
  Setting<int> sinkhorn_check_every = 10;

  // Polishing: the last polish_iterations iterations of a run (after the stopping rule fires, or
  // the last ones before max_iterations) draw as many anchors as the warm-up (a nearly exact cost
  // instead of an M-sample estimate) and solve their inner problem to polish_sinkhorn_tolerance
  // (at most polish_sinkhorn_iterations iterations). With a handful of inner iterations per outer
  // iteration the momentum plan's row marginals end a few percent off in L1, and with M anchors
  // its entries carry the sampling noise of the last cost; a few precise iterations at the end
  // remove most of both (bench/RESULTS.md).
  Setting<int> polish_iterations = 3;
  Setting<int> polish_sinkhorn_iterations = 100;
  Setting<double> polish_sinkhorn_tolerance = 1e-6;

  // ---------------------------------------------------------------- geometry
  // How distances to anchors are obtained from a graph or point cloud. Unset (auto): precomputed
  // all-pairs shortest paths when the side has at most auto_precomputed_max_nodes nodes, landmarks
  // above. Ignored for sides given as distance matrices or providers.
  std::optional<DistanceMode> distance_mode;
  Index auto_precomputed_max_nodes = 5000;

  // Neighbours per point when a side is a point cloud (kNN graph, symmetrized, stitched until
  // connected). Default 30; the spiral benchmark uses 5.
  int knn = 30;

  // Landmarks for DistanceMode::kLandmark (farthest-point sampling; coordinates = distances to
  // them).
  int num_landmarks = 50;

  // Dijkstra row cache in bytes for DistanceMode::kDijkstra (0: the provider's default budget).
  std::size_t dijkstra_cache_bytes = 0;

  // ---------------------------------------------------------------- problem variants
  // Fused GW weight alpha_f in [0, 1]: Lambda <- (1 - alpha_f) Lambda + alpha_f C_feat, where
  // C_feat is Problem::feature_cost. 0: pure GW (no feature cost needed). 1: plain entropic OT on
  // C_feat (no geometry needed).
  double fused_weight = 0.0;

  // KL penalties on the source (rho_a) and target (rho_b) marginals. +inf: hard constraint.
  // One finite: semi-relaxed (that side's marginal is free, penalized); both: unbalanced. In cost
  // units (the cost is ~[0, 1]).
  double rho_a = std::numeric_limits<double>::infinity();
  double rho_b = std::numeric_limits<double>::infinity();

  // The reference solver's slack: one extra row and column with slack cost
  // 100 max(1, max Lambda) and corner 0, slack masses max(|q| - m, 1e-10) (row) and
  // max(|p| - m, 1e-10) (column), m = min(n, k) / max(n, k). With that cost the slack carries
  // (almost) no mass: it is a safety valve, the plan still moves all the mass. false drops it.
  bool slack = true;

  // The slack's shared mass in points (the reference solver's s_shared): m = slack_shared /
  // max(n, k), at most max(n, k). Unset: min(n, k). Used only with `slack` (and without
  // partial_mass). Smaller values give the slack marginals more mass; with the slack cost above
  // they still carry (almost) none of the real points' mass.
  std::optional<double> slack_shared;

  // Exact partial transport: move exactly m = partial_mass / max(n, k) of mass (partial_mass is in
  // "points"; e.g. min(n, k)). Implemented with the same extra row and column but POT's costs:
  // 0 between real points and slack, 100 max(1, max Lambda) for the slack corner, so the real
  // block carries exactly m and the rest is discarded at no cost. Unset: no partial transport.
  std::optional<double> partial_mass;

  // The starting plan. kDistanceProfiles describes each node by the distribution of its distances
  // to profile_anchors nodes drawn from its side's marginal (profile_quantiles quantiles of the
  // max-normalized distances), and starts from the entropic OT plan between those profiles under
  // the squared 2-Wasserstein cost of 1-D distributions (a GEMM; Sinkhorn with
  // profile_sinkhorn_iterations iterations at epsilon = profile_epsilon x the mean profile cost).
  // It is a lower-bound-style start in the spirit of Memoli's FLB: on the spiral benchmark it puts
  // every run in the right basin, where p q^T ends in the mirror optimum (12-15x the GW loss, the
  // same |rho|) for about one seed in three (bench/RESULTS.md). Costs O((n + k) S log S + n k Q).
  // The exact solver (solver = kExact) uses the exact quantiles of every node's whole distance row
  // instead (distance_quantile_profiles in exact.h, O((n^2 + k^2) log n)) when both sides have at
  // most profile_anchors nodes (its "profiles" Sinkhorn runs float32 exponentials, as its
  // mirror-descent basin does).
  InitialPlan initial_plan = InitialPlan::kDistanceProfiles;
  int profile_anchors = 1024;
  int profile_quantiles = 64;
  double profile_epsilon = 0.1;
  int profile_sinkhorn_iterations = 30;

  // Restart probes: `restarts` runs of the first restart_iterations iterations from the same
  // starting plan, each drawing its anchors from its own random stream; the probe whose plan has
  // the lowest GW loss (exact or estimated, as for Result::gw_loss) continues to the end. Sampled
  // GW decides its basin in the first few iterations from a handful of anchors, and on inputs with
  // near-symmetries (a square domain's rotations, a curve's reversal) a noisy start can settle in
  // a symmetric image of the optimum with a few times the loss; the probes make that unlikely. The
  // cost is (restarts - 1) x restart_iterations extra iterations. 1 disables probing.
  Setting<int> restarts = 1;
  Setting<int> restart_iterations = 15;

  // Initial plan from a coarse problem: farthest-point subsamples of multiscale_size nodes per side
  // are aligned first, and the coarse plan is lifted (each node takes its nearest subsample node's
  // mass) to start the full problem. Result says whether it ran and what it cost.
  Setting<bool> multiscale = false;
  Setting<Index> multiscale_size = 500;

  // ---------------------------------------------------------------- numerics and execution
  // kF32: float32 cost, Sinkhorn and plan with float64 reductions (mixed precision, the default);
  // kF64: float64 throughout. The returned plan is float64 either way.
  Precision precision = Precision::kF32;

  // kCuda needs a CUDA build and a device (gw::Error kNotCompiled / kInvalidArgument otherwise).
  Backend backend = Backend::kCpu;
  int device = 0;

  // CPU threads, 0 = all available.
  int threads = 0;

  // Seed of the anchor sampling (and of landmark / multiscale picks). Same seed, same backend,
  // same thread count, same machine: bitwise the same plan.
  std::uint64_t seed = 0;

  // ---------------------------------------------------------------- output
  // Put the final plan on the transport polytope (balanced problems only: infinite rho_a and
  // rho_b, no partial_mass). The loop's warm-started Sinkhorn iterations leave the momentum plan's
  // row marginals a few percent off in L1 (columns are exact after each update). The plan is first
  // rescaled, rows then columns, until its column marginal's L1 error is below 1e-7 (Sinkhorn-Knopp
  // matrix scaling of T itself: the KL projection, which keeps every entry's support and shape), at
  // most 30 sweeps, and fewer once a sweep removes less than 1% of the error (scaling has stalled:
  // a plan far from some columns converges at a rate near 1); the last residual is then removed
  // exactly by the rounding of Altschuler, Weed & Rigollet (2017), which moves at most twice that
  // residual in L1 (their Lemma 7).
  bool round_marginals = true;

  Setting<PlanFormat> plan_format = PlanFormat::kDense;
  int top_k = 10;  // entries kept per row with PlanFormat::kTopK

  // ---------------------------------------------------------------- plan support and memory
  // kDense keeps n x k buffers (plan, cost: about 16 n k bytes in float32 at the peak, see
  // estimate_peak_memory in solve.h). kSparse never allocates n x k entries: both sides are
  // quantized into support_cells cells (farthest points in distance space), the cells are aligned
  // by the dense loop, each source node gets support_size candidate targets (members of the
  // target cells its cell couples to most), and the sampled GW iterations run on that CSR support,
  // which is re-grown around each node's best match every support_regrow_every iterations. The
  // cells' alignment uses epsilon, epsilon_final, min_iterations and the plateau test as given;
  // the full-resolution level starts from it at epsilon_final with shorter stopping tests
  // (solver/sparse/sparse_impl.h). The plan then comes back as CSR (Result::plan_topk, at most
  // support_size entries per row, rows on their marginal) and plan_format is ignored. With
  // backend = kCuda the iterations' per-entry work (cost, Sinkhorn, momentum) runs on the device
  // and sampling / re-growth on the host (solver/sparse/sparse_impl.h). kAuto picks kDense when its
  // estimate is at most half of memory_limit, kSparse otherwise; when neither fits, solve()
  // throws kBadData before allocating anything large.
  Support support = Support::kAuto;
  // Memory budget in bytes for the automatic choice and the up-front check. 0: 60% of the
  // physical memory, or of the cgroup's memory limit when lower (core/context.h; the rest is left
  // to the system and to the inputs the caller holds).
  std::size_t memory_limit = 0;
  // K: candidate targets per source node on the sparse path.
  int support_size = 64;
  // Cells per side on the sparse path (0: automatic, min(n, k) / (support_size / 2) clipped to
  // [2, 2000]: a cell then holds about half a row's candidates, and the coarse dense problem
  // stays near 2000 x 2000). On meshes of a few thousand vertices a coarse level of ~100 cells may
  // not resolve the shape's left from its right (a 3,000-vertex quadruped: mirrored with its 95
  // cells, true with 512; bench/RESULTS.md, "Real shapes"): the sparse path then also lifts the
  // coarse plans of the cells' orientation candidates and lets a few fine iterations choose
  // (solver/sparse/handedness.cpp; Result::starts lists them), which finds the quadruped's true
  // map at the default cells.
  Index support_cells = 0;
  // Re-grow the sparse support every this many iterations (0: never).
  int support_regrow_every = 5;
  // Sparse path, fused problems with per-node features (Problem::source/target_features): at each
  // re-growth every target node also joins the supports of this many source nodes closest to it
  // in feature space, among those whose best match lies in its cell or the cells next to it
  // (kNeighbourCells; up to 256 looked at). For couplings the features carry (an atlas mapped onto
  // a section: the section's cells mix every cell type, and a node of a type scattered over the
  // section was often in no support of a source node of its type: cell types 0.898 -> 0.962 at
  // 4,000 x 2,703 with 4). 0: off -- the default, because where the geometry carries the coupling
  // it pulls the support towards look-alikes elsewhere (`gwalign slices`' domain transfer 0.884
  // -> 0.870 over three draws). Needs fused_weight > 0 and per-node features (choose_strategy
  // throws kInvalidArgument otherwise); used on the sparse support only.
  int support_feature_candidates = 0;

  // Compute the true GW loss of the final plan (Result::gw_loss): exactly when both sides have
  // exact distance matrices and n k (n + k) <= exact_loss_max_work, else estimated from
  // loss_anchors anchor pairs drawn from the plan (with a standard error).
  bool compute_gw_loss = true;
  double exact_loss_max_work = 2e9;
  int loss_anchors = 512;

  // ---------------------------------------------------------------- solver choice (issue 15)
  // Sampled or exact gradient. kAuto (the default) runs the exact solver when the dense gradient's
  // n^2 k + n k^2 multiply-adds per iteration are at most exact_max_work, both sides have a
  // geometry (or fused_weight = 1), the problem is balanced (no rho_a / rho_b / partial_mass), the
  // backend is the CPU, the plan is dense (support not kSparse) and no sampled-loop feature is
  // asked for (multiscale, restarts > 1, slack_shared); otherwise the sampled loop. Result::solver
  // and Result::solver_reason record what ran and why. The threshold is measured on the spiral
  // benchmark (bench/RESULTS.md, "Exact gradient"): up to 2,000 x 2,500 (2.25e10) the hybrid
  // exact solver is faster than the sampled loop at its default settings and reaches a lower GW
  // loss; at 4,000 x 5,000 one exact gradient costs about as much as the whole sampled run.
  SolverKind solver = SolverKind::kAuto;
  double exact_max_work = 3e10;

  // The exact solver's algorithm. Every method works on dense max-normalized distance matrices
  // (n^2 + k^2 entries, from the sides' providers) and minimizes the fused objective
  // F(T) = (1 - fused_weight) L(T) + fused_weight <C_feat, T>, L the square-loss GW loss.
  // Conditional gradient (Frank-Wolfe, as POT's gromov_wasserstein): per iteration the gradient
  // G = (1 - w) 2 (dx^2 r 1^T + 1 (dy^2 c)^T - 2 dx T dy) + w C_feat, the vertex S minimizing <G,
  // S> on the transport polytope by network simplex (TransportSimplex, warm-started from the
  // previous vertex's basis; LEMON's is the tested reference), and the exact minimizing step along
  // T -> S (F is quadratic along the segment); the objective never increases. Stops when the
  // Frank-Wolfe gap <G, T - S> or the decrease of F falls below exact_tolerance x F, or after
  // exact_max_iterations. When the products are float32 (precision kF32 and n k (n + k) > 1e6)
  // they resolve F to about 5e-7 x F only: conditional gradient stops there, then continues in
  // float64 from that plan (the network simplex keeping its basis) down to exact_tolerance, the
  // "float64 finish" (Result::float64_finish_iterations), and Result::gw_loss is computed with
  // float64 products. With exact_tolerance >= kExactFloat32Tolerance (5e-7) neither runs: the
  // loss reported is the float32 products' (summed in float64; ~1e-6 relative), as precise as
  // the tolerance asked for. The sparse path's coarse level never runs the finish (its plan only
  // seeds the fine level; see solver/sparse/support.cpp).
  // Mirror descent: mirror_iterations KL-proximal steps (Sinkhorn on G / 2 plus
  // epsilon_t KL(T | T_t)) with epsilon_t decaying geometrically from mirror_epsilon to
  // mirror_epsilon_final (in the units of the max-normalized squared distances).
  Setting<ExactMethod> exact_method = ExactMethod::kHybrid;
  Setting<int> exact_max_iterations = 200;
  Setting<double> exact_tolerance = 1e-9;
  Setting<int> mirror_iterations = 10;
  Setting<double> mirror_epsilon = 5e-3;
  Setting<double> mirror_epsilon_final = 1e-3;
  Setting<int> mirror_sinkhorn_iterations = 30;
  // kHybrid's basin phase: exact mirror descent when n k (n + k) <= hybrid_sampled_work, else the
  // sampled loop with this Options' sampled settings (cheaper per iteration on large problems).
  Setting<double> hybrid_sampled_work = 2e9;
  // The mirror-descent basin runs this many steps (epsilon from mirror_epsilon to
  // mirror_epsilon_final) from the profiles and product starts (the profile-vertex start, a
  // vertex, goes straight to conditional gradient); 0: none. Measured (bench/RESULTS.md, exact
  // solver): on Les Miserables (8 instances, hop distances) 1 / 2 / 3 steps matched 400 / 408 / 406
  // of 616 nodes (none: 399; POT's entropic GW at its best epsilon 403); at 400 x 500 (spiral) each
  // step costs ~0.015 s.
  Setting<int> hybrid_mirror_iterations = 2;
  // The sampled basin phase runs at most this many iterations, with epsilon decaying over them
  // and no polishing iterations (conditional gradient finishes exactly).
  Setting<int> hybrid_basin_iterations = 40;

  // Starts of the exact solver, tried in this order while the time allows: the initial_plan
  // (profiles or product), the other one of the two, and "profile-vertex" (the network-simplex
  // plan between the nodes' distance profiles, an exact first-lower-bound matching). When both
  // sides have at most profile_anchors nodes, the exact solver's profiles are the exact quantiles
  // of each node's whole distance row (no sampling). The plan with the lowest objective is kept
  // and every start's loss is in Result::starts. Start number s (from 1) begins only when s
  // predicted start times fit within start_time_budget seconds; a start is predicted at
  // n k (n + k) / 4e9 seconds (calibrated on 2 Zen 5 cores, bench/RESULTS.md, "Calibrated constants"; 400 x 500 and
  // 800 x 800: all three starts; 1,000 x 1,250: 0.7 s, so one). A prediction rather than a clock, so that a result
  // never depends on the machine's load. A given Problem::initial_plan is the only start.
  // With several starts, each first runs start_probe_iterations conditional-gradient iterations
  // (a step or two decides the basin: a mirrored optimum's loss is several times the right one's);
  // only the start with the lowest objective then runs to the end (0: every start runs to the
  // end). Result::starts has each start's loss at the end of its run.
  // orientation_starts: after the starts, the orientation check (solver/exact/
  // spectral_starts_impl.h). Both sides are embedded by classical MDS; the maps between the
  // embeddings under each reflection of their axes are scored by their objective, and the best one
  // ("spectral") and the best one of the other handedness ("spectral-reflected") are candidates.
  // Where their maps' objectives are within 1.25x the handedness is unclear and neither runs;
  // otherwise the worse handedness is skipped and "spectral" is skipped too if the kept plan
  // already agrees with its map (half its mass or more matched within 5% of the target's diameter
  // of where the map sends it), else it runs its probe iterations and then on to the end when it
  // is below the kept plan's objective, or still disagrees with the kept plan and is within 1.5x
  // of it. Both are listed in Result::starts either way (with the reason one was skipped or
  // stopped). Why: a near-symmetric shape's mirrored optimum has a few times the true one's loss,
  // and the other starts do not know left from right. Not with a given initial plan nor with
  // exact_method mirror; off by default in `gwalign pairwise` (pairwise/pair_solve.cpp).
  Setting<bool> orientation_starts = true;
  Setting<int> starts = 3;
  Setting<double> start_time_budget = 1.0;
  Setting<int> start_probe_iterations = 2;

  // Called at host checks with the iteration, cost, error, epsilon and elapsed time; returning
  // false stops the loop (termination kCancelled).
  ProgressCallback progress;

  // True when every field is in range and no field is made inert by another (restarts > 1 with
  // restart_iterations >= max_iterations, partial_mass with slack = false, a nonzero device with
  // backend cpu); otherwise false with a one-line message naming the first bad field in *why (when
  // given).
  bool is_valid(std::string* why = nullptr) const;

  // epsilon_final with the reference default applied.
  double resolved_epsilon_final() const;
  // Anchor pairs drawn at iteration t (0-based) of an n x k problem (warm-up, then M), by the
  // warm-up and polishing iterations (many_anchors), and the most of any iteration.
  int anchors_at(int t, Index n, Index k) const;
  int many_anchors(Index n, Index k) const;
  int max_anchors(Index n, Index k) const;
  // plateau_patience with its default applied.
  int resolved_plateau_patience() const;

  // The names of the given settings of the sampled loop (num_anchors ... multiscale_size) and of
  // the exact solver (exact_method ... start_probe_iterations), in declaration order: what
  // choose_strategy reads as a request for one solver under solver = kAuto.
  std::vector<std::string_view> given_sampled_settings() const;
  std::vector<std::string_view> given_exact_settings() const;
  // Drops every Setting's given mark, keeping the values: what an internal sub-solve (a coarse
  // level, a multiscale start) does before choose_strategy, so that its strategy follows its own
  // problem, not the requests the caller made of the whole solve.
  void forget_given();
};

}  // namespace gw
