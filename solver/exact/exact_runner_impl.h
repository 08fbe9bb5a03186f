// The exact solver's iterations on one problem (exact/, not installed): conditional gradient with
// network-simplex vertices and the exact line search, and KL-proximal mirror descent, on the
// ExactGw state (exact_gw_impl.h); shared by every start of a solve (exact.cpp).
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/context.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/timer.h"
#include "linear_ot/transport_simplex.h"
#include "sinkhorn/sinkhorn.h"
#include "solver/exact/exact_gw_impl.h"
#include "solver/solver_impl.h"

namespace gw::detail {

// F(T + alpha D) = F(T) + a alpha + b alpha^2 -> the minimizing alpha in [0, 1].
inline double step_from_coefficients(double a, double b) {
  if (b > 0.0) return std::clamp(-a / (2.0 * b), 0.0, 1.0);
  return a + b <= 0.0 ? 1.0 : 0.0;  // concave or linear along the segment: an end point
}

// The finest relative decrease of F that conditional gradient on float32 products tests for: the
// products carry ~1e-7 relative error per entry, and F = r^T dx^2 r + c^T dy^2 c - 2 <A, T> loses
// about two more digits to cancellation (F is ~1e-3 of either term on the spiral benchmark). Below
// it the kept start continues in float64 (the float64 finish, exact.cpp): at 2,000 x 2,500 that
// reaches 0.99980x POT CG's objective, where float32 alone stops on a plateau of the Frank-Wolfe
// gap at 1.0001x (bench/RESULTS.md, "Calibrated constants").
inline constexpr double kFloatRelativeTolerance = kExactFloat32Tolerance;

// The smallest plan entry mirror descent takes the log of (a zero entry stays at -eps log of it).
inline constexpr double kLogFloor = 1e-300;

// log T of a start, entry by entry, where its closed form is at hand: max(log p_i + log q_j,
// log kLogFloor) for p q^T (n + k logs instead of n k).
inline std::vector<double> product_log_plan(std::span<const double> p,
                                            std::span<const double> q) {
  const double floor = std::log(kLogFloor);
  std::vector<double> lq(q.size());
  for (std::size_t j = 0; j < q.size(); ++j) lq[j] = std::log(std::max(q[j], kLogFloor));
  std::vector<double> out(p.size() * q.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double lp = std::log(std::max(p[i], kLogFloor));
    for (std::size_t j = 0; j < q.size(); ++j) out[i * q.size() + j] = std::max(lp + lq[j], floor);
  }
  return out;
}

// Starts are admitted by a prediction of their time, never by a clock: the same problem and seed
// must give the same plan on a loaded machine (a wall-clock budget admitted fewer starts under
// load, and the CLI and the Python module then disagreed on the same inputs). One start is
// predicted at n k (n + k) / kStartWorkPerSecond seconds. 4e9 is below the rates of the measured
// three-start solves (4.6e9-6.2e9 per second from 400 x 500 to 1,000 x 1,250 on the spiral
// matrices, 2 Zen 5 cores, default build), so the prediction errs towards fewer starts; on a core
// ~1.5x slower (Zen 4) the budget may be overrun by up to that factor. Three starts are admitted up
// to n k (n + k) = 1.33e9 (about 870 x 870), two up to 2e9 (about 1,000 x 1,000). The calibration's
// history: bench/RESULTS.md, "Calibrated constants".
inline constexpr double kStartWorkPerSecond = 4e9;

inline Vertex to_vertex(LinearOtPlan&& lp) {
  return {std::move(lp.rows), std::move(lp.cols), std::move(lp.values)};
}

// The dense max-normalized distance matrix of a provider (as the exact loss uses it).
// Symmetrized, (d_ij + d_ji) / 2 in S: the gradient formula needs it, and provider rows may differ
// in the last bit. One pass in square tiles (the transposed reads stay in cache) into the result,
// without the two n x n temporaries of the expression `0.5 * (D + D^T)` on a cast copy: on a VM
// where a page fault costs 12 us, faulting in those temporaries was most of this function's time.
template <typename S>
Mat<S> dense_distances(const DistanceProvider& provider) {
  const Index n = provider.num_nodes();
  const std::vector<float> block = detail::normalized_full_distances(provider);
  Mat<S> out(n, n);
  constexpr Index kTile = 64;
  for (Index i0 = 0; i0 < n; i0 += kTile) {
    const Index i1 = std::min(i0 + kTile, n);
    for (Index j0 = 0; j0 < n; j0 += kTile) {
      const Index j1 = std::min(j0 + kTile, n);
      for (Index i = i0; i < i1; ++i) {
        const float* row = block.data() + static_cast<std::size_t>(i) * n;
        for (Index j = j0; j < j1; ++j) {
          const float mirrored = block[static_cast<std::size_t>(j) * n + i];
          out(i, j) = static_cast<S>(0.5) * (static_cast<S>(row[j]) + static_cast<S>(mirrored));
        }
      }
    }
  }
  return out;
}

// What one start produced.
struct StartOutcome {
  std::vector<double> plan;
  double objective = std::numeric_limits<double>::infinity();
  double loss = std::numeric_limits<double>::infinity();
  int iterations = 0;
  Termination termination = Termination::kMaxIterations;
  std::string message;
  std::vector<IterationRecord> log;
  // Conditional-gradient state (see ExactRunner::conditional_gradient).
  int cg_iterations = 0;
  bool done = false;
};

template <typename S>
class ExactRunner {
 public:
  ExactRunner(PreparedProblem& pb, const Options& options, ExactGw<S>& gw, Result& result)
      : pb_(pb), opt_(options), gw_(gw), result_(result), simplex_(gw.p(), gw.q()) {}
  // Continues with another runner's network simplex (same marginals), i.e. its last basis.
  ExactRunner(PreparedProblem& pb,
              const Options& options,
              ExactGw<S>& gw,
              Result& result,
              TransportSimplex simplex)
      : pb_(pb), opt_(options), gw_(gw), result_(result), simplex_(std::move(simplex)) {}

  // Conditional gradient from the current plan of gw_ (on the polytope), at most `budget` more
  // iterations (out.iterations counts across calls; simplex_ keeps the last vertex's basis, which
  // starts the next linear OT, of this start or the next). Sets out.done when a stopping test
  // fired.
  void conditional_gradient(StartOutcome& out, int budget) {
    gw_.set_on_polytope(true);
    double objective = gw_.objective();
    const double tol = std::is_same_v<S, double>
                           ? opt_.exact_tolerance.value()
                           : std::max(opt_.exact_tolerance.value(), kFloatRelativeTolerance);
    out.termination = Termination::kMaxIterations;
    out.message = "conditional gradient ran exact_max_iterations = " +
                  std::to_string(opt_.exact_max_iterations) + " iterations";
    for (int it = 0; it < budget && out.cg_iterations < opt_.exact_max_iterations; ++it) {
      Vertex vertex;
      {
        ScopedPhase phase(result_.timings, "exact_gradient");
        gw_.gradient();
      }
      {
        ScopedPhase phase(result_.timings, "exact_linear_ot");
        const Mat<S>& g = gw_.gradient_matrix();
        if (!simplex_.has_basis()) {
          // The first vertex of a problem: start from the basis that the current plan's largest
          // entries make, not the artificial star. At 400 x 500 (spiral, first start) 3,126
          // pivots instead of 7,142; over 150-node shape pairs 4,258 pivots per pair instead of
          // 4,648 (bench/RESULTS.md, issue 14).
          const Mat<S>& t = gw_.plan();
          simplex_.crash(std::span<const S>(t.data(), t.size()));
        }
        vertex = to_vertex(simplex_.solve(std::span<const S>(g.data(), g.size())));
      }
      std::pair<double, double> coef;
      {
        ScopedPhase phase(result_.timings, "exact_product");
        coef = gw_.segment(vertex);
      }
      const double gap = -coef.first;
      const double alpha = step_from_coefficients(coef.first, coef.second);
      const double scale = std::max(std::abs(objective), 1e-300);
      if (gap <= tol * scale || alpha <= 0.0) {
        out.done = true;
        out.termination = Termination::kConverged;
        out.message = "conditional gradient converged: Frank-Wolfe gap " + format_double(gap) +
                      (alpha <= 0.0 ? " with no descent step" : " <= exact_tolerance") + " after " +
                      std::to_string(out.cg_iterations) + " iterations";
        break;
      }
      gw_.step(vertex, alpha);
      double next = gw_.objective();  // also refreshes the marginal terms of the next gradient
      if constexpr (!std::is_same_v<S, double>) {
        // float32 products resolve F to ~1e-6 relative only; the quadratic model of the step,
        // evaluated in double, tracks it without that noise (and never increases).
        next = objective + alpha * coef.first + alpha * alpha * coef.second;
      }
      ++out.iterations;
      ++out.cg_iterations;
      if (!record(out, next, gap, 0.0, 0)) {
        objective = next;
        break;
      }
      const double decrease = objective - next;
      objective = next;
      if (decrease <= tol * scale) {
        out.done = true;
        out.termination = Termination::kConverged;
        out.message = "conditional gradient converged: relative decrease " +
                      format_double(decrease / scale) + " <= exact_tolerance after " +
                      std::to_string(out.cg_iterations) + " iterations";
        break;
      }
    }
    if (out.cg_iterations >= opt_.exact_max_iterations) out.done = true;
    out.objective = objective;
    // The loss of the plan as it is, with its own marginals: float32 steps drift them from p
    // and q by ~1e-7, which moves the loss by up to ~1e-5 relative (the quadratic marginal terms
    // are ~100x the loss); once per run instead of per iteration.
    gw_.set_on_polytope(false);
    gw_.objective();
    out.loss = gw_.loss();
  }

  // The network simplex of the vertices (its basis carries over between starts).
  TransportSimplex& simplex() { return simplex_; }

  // KL-proximal mirror descent from the current plan of gw_ (any positive plan):
  // T_{t+1} = argmin_{T in Pi(p, q)} <G_t / 2, T> + epsilon_t KL(T | T_t), i.e. Sinkhorn on
  // cost_t = G_t / 2 + (epsilon_t / epsilon_{t-1}) cost_{t-1}, cost_{-1} = -epsilon_0 log T_0,
  // warm-started from the previous potentials scaled by the same ratio.
  //
  // With `defer_last`, the last step leaves the product A (and so the objective) of its plan
  // uncomputed and its log record pending: the caller projects the plan onto the marginals and
  // sets it, which computes A anyway, and then calls record_deferred() (a basin phase saves one
  // dense product, two GEMMs of n k (n + k) / 2 multiply-adds each, per start).
  //
  // `log_plan` (n x k, row-major; empty: taken elementwise from the plan) is log T_0 where the
  // start knows it in closed form (product_log_plan, ProfileStarts::entropic): 22,500 std::log
  // calls were 2% of a 150-node pair in `gwalign pairwise` (issue 14).
  void mirror_descent(StartOutcome& out,
                      int iterations,
                      bool defer_last = false,
                      std::span<const double> log_plan = {}) {
    const Index n = gw_.n(), k = gw_.k();
    Mat<S> cost(n, k);
    {
      const double eps0 = opt_.mirror_epsilon;
      if (!log_plan.empty()) {
        GW_CHECK_CODE(log_plan.size() == static_cast<std::size_t>(n) * k,
                      ErrorCode::kInternal,
                      "mirror descent: log plan of " << log_plan.size() << " entries");
        for (Index i = 0; i < n; ++i)
          for (Index j = 0; j < k; ++j)
            cost(i, j) = static_cast<S>(-eps0 * log_plan[static_cast<std::size_t>(i) * k + j]);
      } else {
        const Mat<S>& t = gw_.plan();
        for (Index i = 0; i < n; ++i)
          for (Index j = 0; j < k; ++j)
            cost(i, j) =
                static_cast<S>(-eps0 * std::log(std::max(static_cast<double>(t(i, j)), kLogFloor)));
      }
    }
    std::vector<double> f(n, 0.0), g(k, 0.0);
    SinkhornOptions so;
    so.max_iterations = opt_.mirror_sinkhorn_iterations;
    so.tolerance = 1e-5;
    // float32 exponentials whatever S is: the basin phase only has to land near a good vertex,
    // and its double Sinkhorn (a degree-13 exponential per entry) was 15% of a small solve. On
    // the benchmarks of bench/RESULTS.md the losses and matchings stayed the same (Les Miserables:
    // 407 instead of 408 of 616 nodes; karate, RGG, WormNet and the pairwise collections equal).
    so.precision = Precision::kF32;
    so.threads = opt_.threads;
    double previous_eps = opt_.mirror_epsilon;
    double objective = gw_.objective();
    for (int t = 0; t < iterations; ++t) {
      const double eps =
          iterations > 1
              ? opt_.mirror_epsilon * std::pow(opt_.mirror_epsilon_final / opt_.mirror_epsilon,
                                               static_cast<double>(t) / (iterations - 1))
              : opt_.mirror_epsilon.value();
      const double ratio = eps / previous_eps;
      {
        ScopedPhase phase(result_.timings, "exact_gradient");
        const Mat<S>& grad = gw_.gradient();
        cost = (static_cast<S>(0.5) * grad + static_cast<S>(ratio) * cost).eval();
      }
      for (double& v : f) v *= ratio;
      for (double& v : g) v *= ratio;
      SinkhornResult sr;
      {
        ScopedPhase phase(result_.timings, "exact_sinkhorn");
        const CostView view(cost.data(), n, k);
        sr = sinkhorn(view, pb_.p, pb_.q, eps, f, g, so);
        if (sr.termination == SinkhornTermination::kNonFinite) break;
        sinkhorn_plan(view, f, g, eps, PlanView(gw_.mutable_plan().data(), n, k), so);
      }
      previous_eps = eps;
      if (defer_last && t + 1 == iterations) {
        deferred_ = {true, objective, eps, sr.iterations};
        return;
      }
      {
        ScopedPhase phase(result_.timings, "exact_product");
        gw_.update_product();
      }
      const double next = gw_.objective();
      ++out.iterations;
      const bool go_on = record(out, next, std::abs(objective - next), eps, sr.iterations);
      objective = next;
      if (!go_on) break;
    }
    out.objective = objective;
    out.loss = gw_.loss();
    if (cancelled_) return;
    out.termination = Termination::kMaxIterations;
    out.message = "mirror descent ran " + std::to_string(out.iterations) + " iterations";
  }

  // The log record of a deferred last mirror-descent step, with the objective of the plan the
  // caller set since (gw_'s product must be current). False when the progress callback said stop
  // (then out is marked cancelled); true when nothing was pending.
  bool record_deferred(StartOutcome& out) {
    if (!deferred_.pending) return true;
    deferred_.pending = false;
    const double next = gw_.objective();
    ++out.iterations;
    out.objective = next;
    out.loss = gw_.loss();
    return record(out, next, std::abs(deferred_.objective - next), deferred_.eps, deferred_.inner);
  }

  static std::string format_double(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.3g", v);
    return buffer;
  }
  bool cancelled() const { return cancelled_; }
  // A basin phase run outside the runner (the sampled loop) was cancelled by the same callback.
  void cancel(StartOutcome& out, std::string message) {
    cancelled_ = true;
    out.done = true;
    out.termination = Termination::kCancelled;
    out.message = std::move(message);
  }

 private:
  // Appends an iteration to the log and reports it to the progress callback; false when the
  // callback asked to stop (then out is marked cancelled).
  bool record(StartOutcome& out, double objective, double change, double eps, int inner) {
    IterationRecord rec;
    rec.iteration = static_cast<int>(out.log.size()) + 1;
    rec.cost = objective;
    rec.error = change;
    rec.epsilon = eps;
    rec.sinkhorn_iterations = inner;
    rec.sinkhorn_error = std::numeric_limits<double>::quiet_NaN();
    rec.seconds = watch_.seconds();
    out.log.push_back(rec);
    if (opt_.progress) {
      const Progress progress{
          rec.iteration, opt_.exact_max_iterations, objective, change, eps, rec.seconds};
      if (!opt_.progress(progress)) {
        cancelled_ = true;
        out.done = true;
        out.termination = Termination::kCancelled;
        out.message =
            "cancelled by the progress callback at iteration " + std::to_string(rec.iteration);
        return false;
      }
    }
    return true;
  }

  PreparedProblem& pb_;
  const Options& opt_;
  ExactGw<S>& gw_;
  Result& result_;
  TransportSimplex simplex_;
  Stopwatch watch_;
  bool cancelled_ = false;
  struct Deferred {
    bool pending = false;
    double objective = 0.0;  // before the deferred step
    double eps = 0.0;
    int inner = 0;
  } deferred_;
};

}  // namespace gw::detail
