// The exact-gradient GW solver (Options::solver = kExact): dense distance matrices, the square-loss
// gradient by GEMMs, conditional gradient with network-simplex vertices and an exact line search,
// KL-proximal mirror descent on the warm-started Sinkhorn, and several starts ranked by exact loss.
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
#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <utility>

#include "core/context.h"
#include "core/error.h"
#include "core/progress.h"
#include "core/timer.h"
#include "sinkhorn/sinkhorn.h"
#include "solver/exact/exact.h"
#include "solver/exact/exact_gw_impl.h"
#include "solver/exact/exact_impl.h"
#include "solver/gw_cost_kernels_impl.h"
#include "solver/sampled/sampled_impl.h"

namespace gw::detail {

namespace {

// F(T + alpha D) = F(T) + a alpha + b alpha^2 -> the minimizing alpha in [0, 1].
double step_from_coefficients(double a, double b) {
  if (b > 0.0) return std::clamp(-a / (2.0 * b), 0.0, 1.0);
  return a + b <= 0.0 ? 1.0 : 0.0;  // concave or linear along the segment: an end point
}

// The finest relative decrease of F that conditional gradient on float32 products tests for: the
// products carry ~1e-7 relative error per entry, and F = r^T dx^2 r + c^T dy^2 c - 2 <A, T> loses
// about two more digits to cancellation (F is ~1e-3 of either term on the spiral benchmark).
// Measured on the spiral benchmark at 2,000 x 2,500 (bench/RESULTS.md): 1e-5 and down to 1.5e-6
// stop at a plateau of the Frank-Wolfe gap (47-51 iterations) at 1.0001x POT CG's objective;
// 1e-6 runs on through it (64 iterations, +4.5 s) to 0.9998x. With the warm-started
// TransportSimplex the vertices (among tied optima) and so the path changed: 1e-6 then stopped at
// 54 iterations at 1.0001x POT's objective; 5e-7 reaches 0.9998x (67 iterations, 7.8 s), 2.5e-7
// 0.99982x (76 iterations, 9.6 s). The gap below ~1e-9 absolute is float32 noise. Since
// 2026-11-27 the kept start continues in float64 below this floor (the float64 finish in
// run_exact_typed): 0.99980x POT's objective in 4.4-4.5 s at 2,000 x 2,500.
constexpr double kFloatRelativeTolerance = kExactFloat32Tolerance;

// The smallest plan entry mirror descent takes the log of (a zero entry stays at -eps log of it).
constexpr double kLogFloor = 1e-300;

// log T of a start, entry by entry, where its closed form is at hand: max(log p_i + log q_j,
// log kLogFloor) for p q^T (n + k logs instead of n k).
std::vector<double> product_log_plan(std::span<const double> p, std::span<const double> q) {
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
// predicted at n k (n + k) / kStartWorkPerSecond seconds. First calibrated at 1.7e9 on 2026-11-25
// (AMD EPYC Zen 4, 2 threads, default build: the spiral's first start at 400 x 500 0.105 s,
// 1,000 x 1,250 1.10 s, 2,000 x 2,500 5.6 s); the exact solver has become 2-3x faster since (the
// warm-started simplex, float32 start-up Sinkhorns, the crash basis), so that rate admitted only
// 2 starts at 700-800 nodes where 3 take half the budget. Recalibrated 2026-11-27 on the whole
// three-start solve of the spiral -> swiss roll k = 5 matrices (AMD EPYC Zen 5, 2 threads,
// default build, second of two runs): 400 x 500 0.117 s, 700 x 800 0.46 s, 1,000 x 1,250 1.37 s,
// i.e. three starts' work at 4.6e9, 5.5e9 and 6.2e9 per second; 4e9 over-predicts them by 15-55%,
// erring towards fewer starts (on a Zen 4 core, ~1.5x slower, the budget may be overrun by up to
// that factor). Three starts are admitted up to n k (n + k) = 1.33e9 (about 870 x 870), two up to
// 2e9 (about 1,000 x 1,000).
constexpr double kStartWorkPerSecond = 4e9;

Vertex to_vertex(LinearOtPlan&& lp) {
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

// distance_quantile_profiles (exact.h) on a row-major n x n matrix of either precision: the exact
// version of what distance_profile_features estimates from sampled anchors.
template <typename S>
Mat<double> dense_profiles(const S* d, Index n, std::span<const double> weights, int quantiles) {
  Mat<double> out(n, quantiles);
  // Equal weights (uniform marginals, the usual case): the cumulative sums below depend only on
  // how many entries they have passed, so sorting the distances alone gives the same quantiles,
  // bit for bit, at about half the cost of sorting (distance, weight) pairs; in `gwalign
  // pairwise` these sorts were a sixth of a one-start solve.
  const bool uniform =
      std::adjacent_find(weights.begin(), weights.end(), std::not_equal_to<>()) == weights.end();
  if (uniform && n > 0) {
    const double w = weights[0];
#pragma omp parallel
    {
      std::vector<double> row(n);
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        const S* di = d + static_cast<std::size_t>(i) * n;
        for (Index l = 0; l < n; ++l) row[l] = static_cast<double>(di[l]);
        std::sort(row.begin(), row.end());
        double total = 0.0;
        for (Index l = 0; l < n; ++l) total += w;
        double cumulative = w;
        Index at = 0;
        for (int q = 0; q < quantiles; ++q) {
          const double level = (q + 0.5) / quantiles * total;
          while (cumulative < level && at + 1 < n) {
            cumulative += w;
            ++at;
          }
          out(i, q) = row[at];
        }
      }
    }
    return out;
  }
#pragma omp parallel
  {
    std::vector<std::pair<double, double>> row(n);
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      const S* di = d + static_cast<std::size_t>(i) * n;
      for (Index l = 0; l < n; ++l) row[l] = {static_cast<double>(di[l]), weights[l]};
      std::sort(row.begin(), row.end());
      double total = 0.0;
      for (const auto& entry : row) total += entry.second;
      double cumulative = row[0].second;
      Index at = 0;
      for (int q = 0; q < quantiles; ++q) {
        const double level = (q + 0.5) / quantiles * total;
        while (cumulative < level && at + 1 < n) cumulative += row[++at].second;
        out(i, q) = row[at].first;
      }
    }
  }
  return out;
}

// The distance-profile starts of the exact solver. Both compare the nodes' distance distributions
// (Memoli's first lower bound) under the cost C_ij = |P_i - R_j|^2 / Q of their quantile
// profiles: "profiles" is the entropic plan of distance_profile_plan (Sinkhorn at
// profile_epsilon x mean C, profile_sinkhorn_iterations iterations), "profile-vertex" the exact
// network-simplex plan. The profiles are exact (every node's whole row) when both sides have at
// most profile_anchors nodes, else drawn as distance_profile_features draws them.
template <typename S>
class ProfileStarts {
 public:
  ProfileStarts(const PreparedProblem& pb, const Options& options, const ExactGw<S>& gw)
      : pb_(pb), options_(options), gw_(gw) {}

  // The entropic plan between the profiles; with `log_plan`, also its log entry by entry (from
  // the potentials: (f_i + g_j - C_ij) / epsilon - log(mass), floored at log kLogFloor).
  std::vector<double> entropic(std::vector<double>* log_plan = nullptr) {
    const Mat<double>& c = cost();
    const Index n = pb_.n, k = pb_.k;
    std::vector<double> plan(static_cast<std::size_t>(n) * k);
    const double mean = c.mean();
    if (!(mean > 0.0)) {  // every profile alike: nothing to prefer, p q^T
      for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < k; ++j)
          plan[static_cast<std::size_t>(i) * k + j] = pb_.p[i] * pb_.q[j];
      if (log_plan) *log_plan = product_log_plan(pb_.p, pb_.q);
      return plan;
    }
    std::vector<double> f(n, 0.0), g(k, 0.0);
    SinkhornOptions so;
    so.max_iterations = options_.profile_sinkhorn_iterations;
    so.tolerance = 0.0;
    // float32, as the mirror-descent basin: a start, not an answer (the plan goes to conditional
    // gradient next).
    so.precision = Precision::kF32;
    so.threads = options_.threads;
    const CostView view(c.data(), n, k);
    const double epsilon = options_.profile_epsilon * mean;
    sinkhorn(view, pb_.p, pb_.q, epsilon, f, g, so);
    sinkhorn_plan(view, f, g, epsilon, PlanView(plan.data(), n, k), so);
    double mass = 0.0;
    for (double t : plan) mass += t;
    GW_CHECK_CODE(mass > 0.0 && std::isfinite(mass),
                  ErrorCode::kInternal,
                  "distance-profile start has mass " << mass);
    for (double& t : plan) t /= mass;
    if (log_plan) {
      // A zero-mass row or column (potential kZeroMassPotential) has exact zeros in the plan.
      const double floor = std::log(kLogFloor), shift = std::log(mass);
      log_plan->resize(plan.size());
      for (Index i = 0; i < n; ++i) {
        for (Index j = 0; j < k; ++j) {
          const std::size_t at = static_cast<std::size_t>(i) * k + j;
          const bool zero = f[i] <= kZeroMassPotential / 2 || g[j] <= kZeroMassPotential / 2;
          (*log_plan)[at] =
              zero ? floor : std::max((f[i] + g[j] - c(i, j)) / epsilon - shift, floor);
        }
      }
    }
    return plan;
  }

  // `simplex` (on pb_.p, pb_.q) starts from whatever basis it holds: the last conditional-gradient
  // vertex's basis is a closer start for this matching than the artificial one.
  std::vector<double> vertex(TransportSimplex& simplex) {
    const Mat<double>& c = cost();
    const Index n = pb_.n, k = pb_.k;
    LinearOtPlan lp = simplex.solve(std::span<const double>(c.data(), c.size()));
    std::vector<double> plan(static_cast<std::size_t>(n) * k, 0.0);
    for (std::size_t e = 0; e < lp.values.size(); ++e) {
      plan[static_cast<std::size_t>(lp.rows[e]) * k + lp.cols[e]] += lp.values[e];
    }
    return plan;
  }

 private:
  const Mat<double>& cost() {
    if (cost_.size() != 0) return cost_;
    const Index n = pb_.n, k = pb_.k;
    Mat<double> a, b;
    const int quantiles = options_.profile_quantiles;
    if (std::max(n, k) <= options_.profile_anchors) {
      if (pb_.source_profiles && pb_.target_profiles) {
        // Precomputed by exact_distance_profiles (shapes checked by prepare_problem).
        a = Eigen::Map<const Mat<double>>(pb_.source_profiles->values.data(), n, quantiles);
        b = Eigen::Map<const Mat<double>>(pb_.target_profiles->values.data(), k, quantiles);
      } else {
        a = dense_profiles(gw_.dx().data(), n, pb_.p, quantiles);
        b = dense_profiles(gw_.dy().data(), k, pb_.q, quantiles);
      }
    } else {
      const DistanceProfiles profiles = distance_profile_features(pb_, options_);
      a = Eigen::Map<const Mat<float>>(profiles.source.data(), n, profiles.quantiles)
              .template cast<double>();
      b = Eigen::Map<const Mat<float>>(profiles.target.data(), k, profiles.quantiles)
              .template cast<double>();
    }
    const double scale = 1.0 / static_cast<double>(a.cols());
    // a b^T by the dispatched GEMM: Eigen's product here would be this file's (baseline x86-64)
    // build, ~2% of a 150-node pair in `gwalign pairwise` (bench/RESULTS.md, issue 14).
    cost_.resize(n, k);
    gw_cost_kernels().gemm_abt<double>()(a.data(), b.data(), n, k, a.cols(), cost_.data(), k);
    cost_ *= -2.0 * scale;
    const Eigen::VectorXd an = a.rowwise().squaredNorm() * scale;
    const Eigen::VectorXd bn = b.rowwise().squaredNorm() * scale;
    cost_.colwise() += an;
    cost_.rowwise() += bn.transpose();
    cost_ = cost_.cwiseMax(0.0);
    return cost_;
  }

  const PreparedProblem& pb_;
  const Options& options_;
  const ExactGw<S>& gw_;
  Mat<double> cost_;
};

template <typename S>
void run_exact_typed(PreparedProblem& pb,
                     const Options& options,
                     std::vector<double>& plan,
                     Result& result) {
  const Index n = pb.n, k = pb.k;
  const double w = options.fused_weight;
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
                w);
  ExactRunner<S> runner(pb, options, gw, result);
  ProfileStarts<S> profile_starts(pb, options, gw);

  // The starts, in order of preference.
  std::vector<std::string> names;
  if (!pb.initial_plan.empty()) {
    names.push_back("given");
  } else {
    names.push_back(options.initial_plan == InitialPlan::kProduct ? "product" : "profiles");
    names.push_back(options.initial_plan == InitialPlan::kProduct ? "profiles" : "product");
    names.push_back("profile-vertex");
  }
  names.resize(std::min<std::size_t>(names.size(), static_cast<std::size_t>(options.starts)));
  const double work = gw::exact_iteration_work(n, k);
  const bool mirror = options.exact_method == ExactMethod::kMirrorDescent;
  const bool sampled_basin =
      options.exact_method == ExactMethod::kHybrid && work > options.hybrid_sampled_work;
  const bool mirror_basin = options.exact_method == ExactMethod::kHybrid && !sampled_basin &&
                            options.hybrid_mirror_iterations > 0;
  // The sampled basin phase: a short schedule (epsilon decays over it), no polishing (the
  // conditional-gradient iterations polish exactly).
  Options basin_options = options;
  basin_options.max_iterations = std::min(options.max_iterations, options.hybrid_basin_iterations);
  basin_options.min_iterations = std::min(options.min_iterations, basin_options.max_iterations);
  basin_options.epsilon_decay_iterations =
      std::min(options.epsilon_decay_iterations, basin_options.max_iterations);
  basin_options.polish_iterations = 0;
  // With several starts, each runs `probe` iterations first; the best one then runs to the end.
  const int probe = names.size() > 1 && !mirror ? options.start_probe_iterations.value() : 0;

  const double predicted_start_seconds = static_cast<double>(n) * static_cast<double>(k) *
                                         static_cast<double>(n + k) / kStartWorkPerSecond;
  std::vector<StartOutcome> outcomes;
  std::vector<std::vector<double>> probe_plans;
  std::vector<Mat<S>> probe_products;  // dx T dy of each probe's plan (with several starts)
  for (std::size_t s = 0; s < names.size(); ++s) {
    if (runner.cancelled()) break;
    if (s > 0 && static_cast<double>(s + 1) * predicted_start_seconds > options.start_time_budget) {
      break;
    }
    Stopwatch start_watch;
    const std::string& name = names[s];
    std::vector<double> start;
    std::vector<double> start_log;  // log of `start` where a mirror-descent basin will need it
    const bool basin_logs = mirror || (mirror_basin && !sampled_basin);
    {
      ScopedPhase phase(result.timings, "init");
      if (name == "given") {
        start = pb.initial_plan;
      } else if (name == "profiles") {
        start = profile_starts.entropic(basin_logs ? &start_log : nullptr);
      } else if (name == "product") {
        if (basin_logs) start_log = product_log_plan(pb.p, pb.q);
        start.resize(static_cast<std::size_t>(n) * k);
        for (Index i = 0; i < n; ++i)
          for (Index j = 0; j < k; ++j)
            start[static_cast<std::size_t>(i) * k + j] = pb.p[i] * pb.q[j];
      } else {
        start = profile_starts.vertex(runner.simplex());
      }
    }
    StartOutcome out;
    if (mirror) {
      gw.set_plan(start);
      runner.mirror_descent(out, options.mirror_iterations, /*defer_last=*/false, start_log);
      out.done = true;
    } else {
      bool basin_ran = false;
      if (sampled_basin && name != "profile-vertex") {
        basin_ran = true;
        // The basin from the sampled loop: cheap iterations on M anchors instead of exact ones.
        PreparedProblem basin = pb;
        basin.initial_plan = std::move(start);
        basin.window = LoopWindow{};
        Result sampled;
        std::vector<double> sampled_plan;
        run_cpu_loop(basin, basin_options, sampled_plan, sampled);
        for (const auto& [phase, seconds] : sampled.timings.entries()) {
          result.timings.add("basin_" + phase, seconds);
        }
        out.iterations += sampled.iterations;
        start = std::move(sampled_plan);
        if (sampled.termination == Termination::kCancelled) runner.cancel(out, sampled.message);
      } else if (mirror_basin && name != "profile-vertex") {
        // The basin by a few mirror-descent steps: an entropic, smoothed path that ties (hop
        // distances) do not pin to one vertex early (Options::hybrid_mirror_iterations has the
        // measurements). A vertex start has zeros that KL-proximal steps keep, so profile-vertex
        // goes straight to conditional gradient.
        basin_ran = true;
        gw.set_plan(start);
        runner.mirror_descent(
            out, options.hybrid_mirror_iterations, /*defer_last=*/true, start_log);
        start = gw.plan_f64();
      }
      // Cancelled during the basin: the start ends there (conditional gradient would overwrite the
      // termination and call the callback again after it said stop).
      if (runner.cancelled()) {
        gw.set_plan(start);
        out.objective = gw.objective();
        out.loss = gw.loss();
      } else {
        {
          ScopedPhase phase(result.timings, "exact_project");
          project_to_marginals(start, pb.p, pb.q);
        }
        // dx T dy for the start: rank one for p q^T, one GEMM for a vertex (no basin replaces
        // it), two for a dense plan.
        if (name == "product" && !basin_ran) {
          gw.set_product_plan();
        } else if (name == "profile-vertex") {
          gw.set_sparse_plan(start);
        } else {
          gw.set_plan(start);
        }
        // The basin's last step is logged now, with the objective of its projected plan.
        if (runner.record_deferred(out)) {
          runner.conditional_gradient(out, probe > 0 ? probe : options.exact_max_iterations.value());
        }
      }
    }
    const double seconds = start_watch.seconds();
    result.starts.push_back({name, out.loss, out.objective, out.iterations, seconds});
    probe_plans.push_back(gw.plan_f64());
    if (names.size() > 1) probe_products.push_back(gw.product());
    outcomes.push_back(std::move(out));
  }
  std::size_t best = 0;
  for (std::size_t s = 1; s < outcomes.size(); ++s) {
    if (outcomes[s].objective < outcomes[best].objective) best = s;
  }
  StartOutcome& kept = outcomes[best];
  // The kept start's record after it ran on (its probe continued, or the float64 finish).
  const auto update_kept_record = [&](double seconds) {
    StartRecord& record = result.starts[best];
    record.gw_loss = kept.loss;
    record.objective = kept.objective;
    record.iterations = kept.iterations;
    record.seconds += seconds;
  };
  if (!kept.done && !runner.cancelled()) {
    // The best probe continues where it stopped.
    Stopwatch more;
    if (best < probe_products.size()) {
      gw.restore(probe_plans[best], std::move(probe_products[best]));
    } else {
      gw.set_plan(probe_plans[best]);
    }
    runner.conditional_gradient(kept, options.exact_max_iterations);
    update_kept_record(more.seconds());
    probe_plans[best] = gw.plan_f64();
  }
  // The float64 state of a float32 run: the float64 finish below the float32 floor and the
  // report's loss in float64. Only where exact_tolerance asks for more than float32 products
  // resolve (kFloatRelativeTolerance); otherwise the float32 state's loss (float64 sums of float32
  // products, ~1e-6 relative) is as precise as the solve was asked to be, and the float64 copy and
  // its two float64 GEMMs were 5% of a 150-node pair in `gwalign pairwise` (bench/RESULTS.md,
  // issue 14).
  std::optional<ExactGw<double>> exact;
  if constexpr (!std::is_same_v<S, double>) {
    if (options.exact_tolerance < kFloatRelativeTolerance) {
      {
        ScopedPhase phase(result.timings, "loss");
        exact.emplace(gw.dx().template cast<double>(),
                      gw.dy().template cast<double>(),
                      pb.p,
                      pb.q,
                      gw.feature_f64(),
                      w);
        exact->set_plan(probe_plans[best]);
      }
      // The float64 finish: float32 products stop conditional gradient at their noise floor (a
      // relative decrease of kFloatRelativeTolerance), short of exact_tolerance. The same
      // iterations in float64 from the float32 plan, the network simplex continuing from its last
      // basis, take it the rest of the way: the float32 phase found the basin, these only descend
      // within it. Measured on the spiral benchmark at 2,000 x 2,500 (bench/RESULTS.md, issue 15).
      if (kept.termination == Termination::kConverged && !runner.cancelled()) {
        Stopwatch more;
        ExactRunner<double> finish(pb, options, *exact, result, std::move(runner.simplex()));
        const int before = kept.iterations;
        kept.done = false;
        finish.conditional_gradient(kept, options.exact_max_iterations);
        update_kept_record(more.seconds());
        result.float64_finish_iterations = kept.iterations - before;
        probe_plans[best] = exact->plan_f64();
      }
    }
  }
  result.start_chosen = static_cast<int>(best);
  plan = std::move(probe_plans[best]);
  result.iterations = kept.iterations;
  result.termination = kept.termination;
  result.message = kept.message;
  if (runner.cancelled()) {
    // Whichever start was running when the callback said stop (the last one begun), the run was
    // cancelled: the kept plan is the best so far, reported as such.
    result.termination = Termination::kCancelled;
    result.message = outcomes.back().message;
  }
  result.log = std::move(kept.log);
  result.gw_cost_estimate = kept.objective;
  // The loss of the kept plan, exactly (dense matrices at hand); solve() keeps it when the plan
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

namespace gw {

void gw_gradient(std::span<const double> dx,
                 std::span<const double> dy,
                 std::span<const double> plan,
                 Index n,
                 Index k,
                 std::span<double> gradient) {
  GW_CHECK(dx.size() == static_cast<std::size_t>(n) * n &&
               dy.size() == static_cast<std::size_t>(k) * k &&
               plan.size() == static_cast<std::size_t>(n) * k &&
               gradient.size() == static_cast<std::size_t>(n) * k,
           "gw_gradient: shapes do not match " << n << " x " << k);
  using M = detail::Mat<double>;
  detail::ExactGw<double> gw(Eigen::Map<const M>(dx.data(), n, n),
                             Eigen::Map<const M>(dy.data(), k, k),
                             {},
                             {},
                             nullptr,
                             0.0);
  gw.set_plan(plan);
  gw.objective();
  Eigen::Map<M>(gradient.data(), n, k) = gw.gradient();
}

double gw_line_search(std::span<const double> dx,
                      std::span<const double> dy,
                      std::span<const double> plan,
                      std::span<const double> vertex,
                      Index n,
                      Index k,
                      std::span<const double> feature_cost,
                      double fused_weight) {
  GW_CHECK(dx.size() == static_cast<std::size_t>(n) * n &&
               dy.size() == static_cast<std::size_t>(k) * k &&
               plan.size() == static_cast<std::size_t>(n) * k &&
               vertex.size() == static_cast<std::size_t>(n) * k,
           "gw_line_search: shapes do not match " << n << " x " << k);
  GW_CHECK(fused_weight == 0.0 || feature_cost.size() == static_cast<std::size_t>(n) * k,
           "gw_line_search: fused_weight " << fused_weight << " needs an n x k feature cost");
  using M = detail::Mat<double>;
  detail::ExactGw<double> gw(Eigen::Map<const M>(dx.data(), n, n),
                             Eigen::Map<const M>(dy.data(), k, k),
                             {},
                             {},
                             feature_cost.empty() ? nullptr : feature_cost.data(),
                             fused_weight);
  gw.set_plan(plan);
  gw.objective();
  gw.gradient();
  detail::Vertex s;
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < k; ++j) {
      const double v = vertex[static_cast<std::size_t>(i) * k + j];
      if (v == 0.0) continue;
      s.rows.push_back(i);
      s.cols.push_back(j);
      s.values.push_back(v);
    }
  }
  const auto [a, b] = gw.segment(s);
  return detail::step_from_coefficients(a, b);
}

SpaceProfiles exact_distance_profiles(const DistanceProvider& provider,
                                      const std::vector<double>& weights,
                                      int quantiles) {
  GW_CHECK(quantiles > 0, "exact_distance_profiles: quantiles must be > 0, got " << quantiles);
  const Index n = provider.num_nodes();
  const std::vector<double> p = detail::normalized_weights(weights, n, "space");
  // The matrix and the weights exactly as the exact solver builds them (float64 products), so the
  // profiles are the ones its profile starts would compute.
  const detail::Mat<double> d = detail::dense_distances<double>(provider);
  const detail::Mat<double> out = detail::dense_profiles(d.data(), n, p, quantiles);
  SpaceProfiles profiles;
  profiles.quantiles = quantiles;
  profiles.values.assign(out.data(), out.data() + out.size());
  return profiles;
}

std::vector<double> distance_quantile_profiles(std::span<const double> d,
                                               Index n,
                                               std::span<const double> weights,
                                               int quantiles) {
  GW_CHECK(n > 0 && d.size() == static_cast<std::size_t>(n) * n &&
               weights.size() == static_cast<std::size_t>(n) && quantiles > 0,
           "distance_quantile_profiles: needs an n x n matrix, n weights and quantiles > 0 (n = "
               << n << ", quantiles = " << quantiles << ")");
  const detail::Mat<double> out = detail::dense_profiles(d.data(), n, weights, quantiles);
  return std::vector<double>(out.data(), out.data() + out.size());
}

}  // namespace gw
