// The exact-gradient GW solver (Strategy::solver = kExact): dense distance matrices, the
// square-loss gradient by GEMMs, conditional gradient with network-simplex vertices and an exact
// line search, KL-proximal mirror descent on the warm-started Sinkhorn, and several starts ranked
// by exact loss. The iterations are ExactRunner's (exact_runner_impl.h), the profile starts
// ProfileStarts' (profile_starts_impl.h); this file runs the starts and keeps the best.
//
// Work per iteration (n x k, dense matrices dx n x n, dy k x k):
//   conditional gradient  one product dx S dy with the vertex S sparse (at most n + k - 1
//                         entries): n k min(n, k) multiply-adds as one GEMM after a sparse pass;
//                         the linear OT by TransportSimplex warm-started from the previous
//                         vertex's basis: O(n k) to convert and price, plus the pivots.
//   mirror descent        dx T dy with T dense: n k (n + k) multiply-adds (two GEMMs), plus
//                         the inner Sinkhorn.
// The GEMMs go through the instruction-set dispatched kernel of the sampled loop
// (gw_cost_kernels_impl.h, out = A B^T); the distance matrices are symmetric, so B^T = B where
// that saves a transpose.
#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/timer.h"
#include "solver/exact/exact_gw_impl.h"
#include "solver/exact/exact_impl.h"
#include "solver/exact/exact_runner_impl.h"
#include "solver/exact/profile_starts_impl.h"
#include "solver/exact/spectral_starts_impl.h"
#include "solver/sampled/sampled_impl.h"

namespace gw::detail {

namespace {

// The record of the start that was kept, after it ran on (its probe continued, or the float64
// finish).
void update_start_record(StartRecord& record, const StartOutcome& kept, double seconds) {
  record.gw_loss = kept.loss;
  record.objective = kept.objective;
  record.iterations = kept.iterations;
  record.seconds += seconds;
}

// One solve's starts: how each is built and brought to conditional gradient (its basin phase),
// for the exact method of the options.
template <typename S>
class Starts {
 public:
  Starts(PreparedProblem& pb, const Options& options, ExactGw<S>& gw, ExactRunner<S>& runner,
         Result& result)
      : pb_(pb), options_(options), gw_(gw), runner_(runner), result_(result),
        profiles_(pb, options, gw), orientations_(pb, options, gw) {
    const double work = gw::exact_iteration_work(pb.n, pb.k);
    mirror_ = options.exact_method == ExactMethod::kMirrorDescent;
    sampled_basin_ = options.exact_method == ExactMethod::kHybrid && work > options.hybrid_sampled_work;
    mirror_basin_ = options.exact_method == ExactMethod::kHybrid && !sampled_basin_ &&
                    options.hybrid_mirror_iterations > 0;
    // The sampled basin phase: a short schedule (epsilon decays over it), no polishing (the
    // conditional-gradient iterations polish exactly).
    basin_options_ = options;
    basin_options_.max_iterations =
        std::min<int>(options.max_iterations, options.hybrid_basin_iterations);
    basin_options_.min_iterations =
        std::min<int>(options.min_iterations, basin_options_.max_iterations);
    basin_options_.epsilon_decay_iterations =
        std::min<int>(options.epsilon_decay_iterations, basin_options_.max_iterations);
    basin_options_.polish_iterations = 0;
  }

  // The starts, in order of preference, at most Options::starts of them.
  std::vector<std::string> names() const {
    std::vector<std::string> names;
    if (!pb_.initial_plan.empty()) {
      names.push_back("given");
    } else {
      const bool product_first = options_.initial_plan == InitialPlan::kProduct;
      names.push_back(product_first ? "product" : "profiles");
      names.push_back(product_first ? "profiles" : "product");
      names.push_back("profile-vertex");
    }
    names.resize(std::min<std::size_t>(names.size(), static_cast<std::size_t>(options_.starts)));
    return names;
  }
  bool mirror() const { return mirror_; }

  // The orientation starts (spectral_starts_impl.h): "spectral" and "spectral-reflected", and the
  // objective of each one's nearest-neighbour map.
  static constexpr const char* kOrientationNames[2] = {"spectral", "spectral-reflected"};
  double orientation_objective(int which) { return orientations_.objective(which); }
  // The share of mass on which two matchings agree (SpectralStarts::agreement).
  double agreement(const std::vector<Index>& a, const std::vector<Index>& b) const {
    return orientations_.agreement(a, b);
  }
  const std::vector<Index>& orientation_map(int which) { return orientations_.map(which); }

  // Start `name`, run `cg_iterations` conditional-gradient iterations after its basin (all of a
  // mirror-descent run's iterations for exact_method mirror).
  StartOutcome run(const std::string& name, int cg_iterations) {
    std::vector<double> start_log;  // log of the start where a mirror-descent basin needs it
    std::vector<double> start = start_plan(name, mirror_ || mirror_basin_ ? &start_log : nullptr);
    StartOutcome out;
    if (mirror_) {
      gw_.set_plan(start);
      runner_.mirror_descent(out, options_.mirror_iterations, /*defer_last=*/false, start_log);
      out.done = true;
      return out;
    }
    const bool basin_ran = run_basin(name, start, start_log, out);
    // Cancelled during the basin: the start ends there (conditional gradient would overwrite the
    // termination and call the callback again after it said stop).
    if (runner_.cancelled()) {
      gw_.set_plan(start);
      out.objective = gw_.objective();
      out.loss = gw_.loss();
      return out;
    }
    {
      ScopedPhase phase(result_.timings, "exact_project");
      project_to_marginals(start, pb_.p, pb_.q);
    }
    // dx T dy for the start: rank one for p q^T, one GEMM for a vertex (no basin replaces it), two
    // for a dense plan.
    if (name == "product" && !basin_ran) {
      gw_.set_product_plan();
    } else if (name == "profile-vertex") {
      gw_.set_sparse_plan(start);
    } else {
      gw_.set_plan(start);
    }
    // The basin's last step is logged now, with the objective of its projected plan.
    if (runner_.record_deferred(out)) runner_.conditional_gradient(out, cg_iterations);
    return out;
  }

 private:
  std::vector<double> start_plan(const std::string& name, std::vector<double>* log) {
    ScopedPhase phase(result_.timings, "init");
    if (name == "given") return pb_.initial_plan;
    if (name == "profiles") return profiles_.entropic(log);
    if (name == kOrientationNames[0]) return orientations_.entropic(0, log);
    if (name == kOrientationNames[1]) return orientations_.entropic(1, log);
    if (name == "product") {
      if (log != nullptr) *log = product_log_plan(pb_.p, pb_.q);
      const Index n = pb_.n, k = pb_.k;
      std::vector<double> start(static_cast<std::size_t>(n) * k);
      for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < k; ++j) start[static_cast<std::size_t>(i) * k + j] = pb_.p[i] * pb_.q[j];
      return start;
    }
    return profiles_.vertex(runner_.simplex());
  }

  // The hybrid method's basin phase (none for profile-vertex, a vertex already): the sampled loop
  // on large problems, a few mirror-descent steps on small ones. Whether one ran.
  bool run_basin(const std::string& name,
                 std::vector<double>& start,
                 const std::vector<double>& start_log,
                 StartOutcome& out) {
    // A vertex has no basin to find, and an orientation start must keep its handedness: both go
    // straight to conditional gradient.
    if (name == "profile-vertex" || name == kOrientationNames[0] || name == kOrientationNames[1]) {
      return false;
    }
    if (sampled_basin_) {
      // The basin from the sampled loop: cheap iterations on M anchors instead of exact ones.
      PreparedProblem basin = pb_;
      basin.initial_plan = std::move(start);
      basin.window = LoopWindow{};
      Result sampled;
      std::vector<double> sampled_plan;
      run_cpu_loop(basin, basin_options_, sampled_plan, sampled);
      for (const auto& [phase, seconds] : sampled.timings.entries()) {
        result_.timings.add("basin_" + phase, seconds);
      }
      out.iterations += sampled.iterations;
      start = std::move(sampled_plan);
      if (sampled.termination == Termination::kCancelled) runner_.cancel(out, sampled.message);
      return true;
    }
    if (mirror_basin_) {
      // The basin by a few mirror-descent steps: an entropic, smoothed path that ties (hop
      // distances) do not pin to one vertex early (Options::hybrid_mirror_iterations has the
      // measurements). A vertex start has zeros that KL-proximal steps keep, so profile-vertex
      // goes straight to conditional gradient.
      gw_.set_plan(start);
      runner_.mirror_descent(out, options_.hybrid_mirror_iterations, /*defer_last=*/true, start_log);
      start = gw_.plan_f64();
      return true;
    }
    return false;
  }

  PreparedProblem& pb_;
  const Options& options_;
  ExactGw<S>& gw_;
  ExactRunner<S>& runner_;
  Result& result_;
  ProfileStarts<S> profiles_;
  SpectralStarts<S> orientations_;
  bool mirror_ = false, sampled_basin_ = false, mirror_basin_ = false;
  Options basin_options_;
};

// What the starts left: each start's outcome, its plan and (with several starts) its dx T dy.
template <typename S>
struct StartsRun {
  std::vector<StartOutcome> outcomes;
  std::vector<std::vector<double>> plans;
  std::vector<Mat<S>> products;
  std::size_t best = 0;
};

// The orientation check after the starts. The two orientation candidates are the best map
// between the sides' spectral embeddings ("spectral") and the best one of the other handedness
// ("spectral-reflected"). Where their maps' objectives come within kHandednessMargin of each
// other the problem has no clear handedness (a curve, a symmetric body) and neither runs: the
// embeddings cannot tell the kept plan anything. Otherwise "spectral-reflected" is skipped (its
// handedness is the clearly worse one) and "spectral" is set against the kept plan: skipped if
// the kept plan already agrees with its map (half the mass or more matched within 5% of the
// target's diameter of where the map sends it), else it runs its probe iterations
// (start_probe_iterations, as the ordinary starts do) and continues to the end unless its plan
// then agrees with the kept one (the same basin reached another way) or its objective is over
// kOrientationProbeMargin times the kept plan's final one (a mirrored basin's loss is a few times
// the true one's, and a step or two shows it); it always continues when already below the kept
// plan's objective. The lowest objective is kept; both
// candidates are listed in Result::starts (a skipped one with its reason and NaN losses, a
// stopped one with its probe's loss and the reason).
constexpr double kOrientationProbeMargin = 1.5;
// The handedness is clear when the other handedness's best map has this many times the objective
// of the best map: 1.6-12x on the asymmetric meshes of bench/peers/real_shapes.py, 1.05 on the
// spiral benchmark's distance matrices.
constexpr double kHandednessMargin = 1.25;
// Two matchings agree when at least this share of the mass does.
constexpr double kAgreedShare = 0.5;

// The argmax target of each row of a dense n x k plan.
std::vector<Index> row_argmax(const std::vector<double>& plan, Index n, Index k) {
  std::vector<Index> m(n, 0);
  for (Index i = 0; i < n; ++i) {
    const double* row = plan.data() + static_cast<std::size_t>(i) * k;
    m[i] = static_cast<Index>(std::max_element(row, row + k) - row);
  }
  return m;
}

std::string format_number(const char* fmt, double value) {
  char text[96];
  std::snprintf(text, sizeof text, fmt, value);
  return text;
}

template <typename S>
void run_orientation_starts(const PreparedProblem& pb,
                            Starts<S>& starts,
                            const Options& options,
                            ExactGw<S>& gw,
                            ExactRunner<S>& runner,
                            Result& result,
                            StartsRun<S>& run) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Index> kept = row_argmax(run.plans[run.best], pb.n, pb.k);
  const double kept_objective = run.outcomes[run.best].objective;
  const int probe = std::max(1, options.start_probe_iterations.value());
  double ratio = 0.0;
  {
    // Both sides' embeddings and the ranking of the axis patterns by their maps' objectives.
    ScopedPhase phase(result.timings, "orientation_embedding");
    ratio = starts.orientation_objective(1) / starts.orientation_objective(0);
  }
  for (int which = 0; which < 2 && !runner.cancelled(); ++which) {
    const char* name = Starts<S>::kOrientationNames[which];
    Stopwatch watch;
    StartRecord record{name, kNaN, kNaN, 0, 0.0, starts.orientation_objective(which), "", ""};
    StartOutcome out;
    if (!(ratio >= kHandednessMargin)) {
      record.skipped = format_number(
          "no clear handedness: the other handedness's map objective is only %.2fx", ratio);
    } else if (which == 1) {
      record.skipped = format_number("its handedness's map objective is %.2fx the other's", ratio);
    } else {
      const double agreement = starts.agreement(starts.orientation_map(which), kept);
      if (agreement >= kAgreedShare) {
        record.skipped = format_number("the kept plan agrees with its map on %.0f%% of the mass",
                                       100.0 * agreement);
      }
    }
    if (!record.skipped.empty()) {
      out.objective = out.loss = std::numeric_limits<double>::infinity();
      out.done = true;
    } else {
      out = starts.run(name, probe);
      if (!out.done && !(out.objective < kept_objective)) {
        const double after_probe =
            starts.agreement(row_argmax(gw.plan_f64(), pb.n, pb.k), kept);
        if (after_probe >= kAgreedShare) {
          record.stopped = format_number(
              "after its probe it agrees with the kept plan on %.0f%% of the mass",
              100.0 * after_probe);
        } else if (out.objective > kOrientationProbeMargin * kept_objective) {
          record.stopped = format_number("after its probe its objective is %.1fx the kept plan's",
                                         out.objective / kept_objective);
        }
      }
      if (!out.done && record.stopped.empty()) {
        runner.conditional_gradient(out, options.exact_max_iterations);
      }
      out.done = true;
      record.gw_loss = out.loss;
      record.objective = out.objective;
      record.iterations = out.iterations;
    }
    record.seconds = watch.seconds();
    // Kept in step with result.starts (start_chosen indexes both).
    run.plans.push_back(record.skipped.empty() ? gw.plan_f64() : std::vector<double>());
    result.starts.push_back(std::move(record));
    run.outcomes.push_back(std::move(out));
    if (run.outcomes.back().objective < run.outcomes[run.best].objective) {
      run.best = run.outcomes.size() - 1;
    }
  }
}

// Runs the starts that the start budget admits (each its probe iterations when there are
// several), ranks them by objective and lets the best one run on to the end.
template <typename S>
StartsRun<S> run_starts(PreparedProblem& pb, const Options& options, ExactGw<S>& gw,
                        ExactRunner<S>& runner, Result& result) {
  Starts<S> starts(pb, options, gw, runner, result);
  const std::vector<std::string> names = starts.names();
  // With several starts, each runs `probe` iterations first; the best one then runs to the end.
  const int probe = names.size() > 1 && !starts.mirror() ? options.start_probe_iterations.value() : 0;
  const double predicted_start_seconds =
      static_cast<double>(pb.n) * pb.k * static_cast<double>(pb.n + pb.k) / kStartWorkPerSecond;
  StartsRun<S> run;
  for (std::size_t s = 0; s < names.size(); ++s) {
    if (runner.cancelled()) break;
    if (s > 0 && static_cast<double>(s + 1) * predicted_start_seconds > options.start_time_budget) {
      break;
    }
    Stopwatch watch;
    StartOutcome out =
        starts.run(names[s], probe > 0 ? probe : options.exact_max_iterations.value());
    result.starts.push_back(
        {names[s], out.loss, out.objective, out.iterations, watch.seconds(),
         std::numeric_limits<double>::quiet_NaN(), "", ""});
    run.plans.push_back(gw.plan_f64());
    if (names.size() > 1) run.products.push_back(gw.product());
    run.outcomes.push_back(std::move(out));
  }
  for (std::size_t s = 1; s < run.outcomes.size(); ++s) {
    if (run.outcomes[s].objective < run.outcomes[run.best].objective) run.best = s;
  }
  StartOutcome& kept = run.outcomes[run.best];
  if (!kept.done && !runner.cancelled()) {
    // The best probe continues where it stopped.
    Stopwatch more;
    if (run.best < run.products.size()) {
      gw.restore(run.plans[run.best], std::move(run.products[run.best]));
    } else {
      gw.set_plan(run.plans[run.best]);
    }
    runner.conditional_gradient(kept, options.exact_max_iterations);
    update_start_record(result.starts[run.best], kept, more.seconds());
    run.plans[run.best] = gw.plan_f64();
  }
  if (options.orientation_starts && !starts.mirror() && pb.initial_plan.empty()) {
    run_orientation_starts(pb, starts, options, gw, runner, result, run);
  }
  return run;
}

// The float64 state of a float32 run: the float64 finish below the float32 floor and the
// report's loss in float64. Only where exact_tolerance asks for more than float32 products resolve
// (kFloatRelativeTolerance); otherwise the float32 state's loss (float64 sums of float32 products,
// ~1e-6 relative) is as precise as the solve was asked to be, and the float64 copy and its two
// float64 GEMMs were 5% of a 150-node pair in `gwalign pairwise` (bench/RESULTS.md, issue 14).
template <typename S>
std::optional<ExactGw<double>> finish_in_float64(PreparedProblem& pb,
                                                 const Options& options,
                                                 ExactGw<S>& gw,
                                                 ExactRunner<S>& runner,
                                                 StartsRun<S>& run,
                                                 Result& result) {
  std::optional<ExactGw<double>> exact;
  if constexpr (!std::is_same_v<S, double>) {
    if (options.exact_tolerance >= kFloatRelativeTolerance) return exact;
    {
      ScopedPhase phase(result.timings, "loss");
      exact.emplace(gw.dx().template cast<double>(),
                    gw.dy().template cast<double>(),
                    pb.p,
                    pb.q,
                    gw.feature_f64(),
                    options.fused_weight);
      exact->set_plan(run.plans[run.best]);
    }
    // The float64 finish: float32 products stop conditional gradient at their noise floor (a
    // relative decrease of kFloatRelativeTolerance), short of exact_tolerance. The same iterations
    // in float64 from the float32 plan, the network simplex continuing from its last basis, take
    // it the rest of the way: the float32 phase found the basin, these only descend within it.
    // Measured on the spiral benchmark at 2,000 x 2,500 (bench/RESULTS.md, issue 15).
    StartOutcome& kept = run.outcomes[run.best];
    if (kept.termination == Termination::kConverged && !runner.cancelled()) {
      Stopwatch more;
      ExactRunner<double> finish(pb, options, *exact, result, std::move(runner.simplex()));
      const int before = kept.iterations;
      kept.done = false;
      finish.conditional_gradient(kept, options.exact_max_iterations);
      update_start_record(result.starts[run.best], kept, more.seconds());
      result.float64_finish_iterations = kept.iterations - before;
      run.plans[run.best] = exact->plan_f64();
    }
  }
  return exact;
}

template <typename S>
void run_exact_typed(PreparedProblem& pb,
                     const Options& options,
                     std::vector<double>& plan,
                     Result& result) {
  Mat<S> dx, dy;
  {
    ScopedPhase phase(result.timings, "exact_setup");
    dx = dense_distances<S>(*pb.source);
    dy = dense_distances<S>(*pb.target);
  }
  ExactGw<S> gw(std::move(dx),
                std::move(dy),
                pb.p,
                pb.q,
                pb.feature_cost ? pb.feature_cost->values.data() : nullptr,
                options.fused_weight);
  ExactRunner<S> runner(pb, options, gw, result);
  StartsRun<S> run = run_starts(pb, options, gw, runner, result);
  std::optional<ExactGw<double>> exact = finish_in_float64(pb, options, gw, runner, run, result);

  StartOutcome& kept = run.outcomes[run.best];
  result.start_chosen = static_cast<int>(run.best);
  plan = std::move(run.plans[run.best]);
  result.iterations = kept.iterations;
  result.termination = kept.termination;
  result.message = kept.message;
  if (runner.cancelled()) {
    // Whichever start was running when the callback said stop (the last one begun), the run was
    // cancelled: the kept plan is the best so far, reported as such.
    result.termination = Termination::kCancelled;
    result.message = run.outcomes.back().message;
  }
  result.log = std::move(kept.log);
  result.gw_cost_estimate = kept.objective;
  // The loss of the kept plan, exactly (dense matrices at hand); solve_with keeps it when the plan
  // needs no rounding (conditional-gradient plans are convex combinations of vertices).
  result.gw_loss = kept.loss;
  if (exact) {
    // The float32 run's loss (after its float64 finish, if it ran) in float64 for the report (the
    // float32 state's otherwise, set above).
    ScopedPhase phase(result.timings, "loss");
    result.gw_cost_estimate = exact->objective();
    result.gw_loss = exact->loss();
  }
  result.gw_loss_exact = true;
  result.gw_loss_stderr = 0.0;
}

}  // namespace

void run_exact(PreparedProblem& pb,
               const Options& options,
               const Strategy& strategy,
               std::vector<double>& plan,
               Result& result) {
  result.backend = Backend::kCpu;
  result.threads = available_threads();
  if (!pb.source) {
    // fused_weight = 1: plain exact OT on the feature cost.
    const DenseMatrix<double>& c = *pb.feature_cost;
    TransportSimplex simplex(pb.p, pb.q);
    LinearOtPlan lp = simplex.solve(std::span<const double>(c.values));
    plan.assign(static_cast<std::size_t>(pb.n) * pb.k, 0.0);
    for (std::size_t e = 0; e < lp.values.size(); ++e) {
      plan[static_cast<std::size_t>(lp.rows[e]) * pb.k + lp.cols[e]] += lp.values[e];
    }
    result.iterations = 1;
    result.termination = Termination::kConverged;
    result.message = "exact linear OT on the feature cost (fused_weight = 1)";
    result.gw_cost_estimate = lp.cost;
    return;
  }
  // The strategy may run small problems on one thread (their GEMMs are too short to share, and the
  // linear OT is sequential anyway; this also keeps many concurrent small solves from
  // oversubscribing cores).
  std::optional<ScopedThreads> single;
  if (strategy.threads == 1) {
    single.emplace(1);
    result.threads = 1;
  }
  if (strategy.precision == Precision::kF64) {
    run_exact_typed<double>(pb, options, plan, result);
  } else {
    run_exact_typed<float>(pb, options, plan, result);
  }
}

}  // namespace gw::detail
