#include "solver/solve.h"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include <omp.h>

#include "core/context.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/timer.h"
#include "sampling/sampling.h"
#include "solver/metrics.h"
#include "solver/multiscale_impl.h"
#include "solver/solver_impl.h"
#include "solver/sparse_impl.h"

namespace gw {

namespace detail {

double epsilon_at(const Options& options, int iteration) {
  const double start = options.epsilon;
  const double end = options.resolved_epsilon_final();
  const int horizon = std::min(options.epsilon_decay_iterations, options.max_iterations);
  if (horizon <= 1) return start;
  const double fraction = static_cast<double>(iteration) / (horizon - 1);
  return start * std::pow(end / start, std::min(1.0, fraction));
}

SlackLayout slack_layout(Index n, Index k, const Options& options) {
  SlackLayout slack;
  const double larger = static_cast<double>(std::max(n, k));
  if (options.partial_mass) {
    slack.enabled = true;
    slack.exact_partial = true;
    slack.mass = *options.partial_mass / larger;
    GW_CHECK(slack.mass <= 1.0 + 1e-12,
             "partial_mass " << *options.partial_mass << " moves " << slack.mass
                             << " of the mass, more than the marginals hold (at most max(n, k) = "
                             << larger << " points)");
    slack.mass = std::min(slack.mass, 1.0);
  } else if (options.slack) {
    slack.enabled = true;
    const double shared = options.slack_shared.value_or(static_cast<double>(std::min(n, k)));
    GW_CHECK(shared <= larger,
             "slack_shared " << shared << " is more than max(n, k) = " << larger << " points");
    slack.mass = shared / larger;
  } else {
    return slack;
  }
  // Marginals are normalized to mass 1 per side: |p| = |q| = 1.
  slack.row_mass = std::max(1.0 - slack.mass, 1e-10);
  slack.col_mass = std::max(1.0 - slack.mass, 1e-10);
  return slack;
}

StoppingRule::StoppingRule(const Options& options) : options_(options) {}

std::optional<Termination> StoppingRule::update(int iteration,
                                                double cost,
                                                double error,
                                                bool check) {
  const double w = options_.plateau_ema_weight;
  ema_ = started_ ? w * cost + (1.0 - w) * ema_ : cost;
  if (!started_ || ema_ < best_ * (1.0 - options_.plateau_improvement)) {
    best_ = ema_;
    best_iteration_ = iteration;
  }
  started_ = true;
  if (!check || iteration < options_.min_iterations) return std::nullopt;
  if (error < options_.tolerance) {
    message_ = "converged: ||T_t - T_{t-1}||_F = " + std::to_string(error) + " < tolerance " +
               std::to_string(options_.tolerance) + " at iteration " + std::to_string(iteration);
    return Termination::kConverged;
  }
  const int patience = options_.resolved_plateau_patience();
  if (options_.plateau_improvement > 0.0 && iteration - best_iteration_ >= patience) {
    message_ = "cost plateau: the smoothed cost has not improved by " +
               std::to_string(100.0 * options_.plateau_improvement) + "% for " +
               std::to_string(iteration - best_iteration_) + " iterations (best at iteration " +
               std::to_string(best_iteration_) + ")";
    return Termination::kPlateau;
  }
  return std::nullopt;
}

}  // namespace detail

namespace {

std::vector<double> normalized_weights(const std::vector<double>& weights,
                                       Index n,
                                       const char* side) {
  if (weights.empty()) return std::vector<double>(n, 1.0 / n);
  GW_CHECK(weights.size() == static_cast<std::size_t>(n),
           side << " weights have " << weights.size() << " entries for " << n << " nodes");
  double total = 0.0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const double w = weights[i];
    if (!std::isfinite(w) || w < 0.0) {
      GW_THROW(
          ErrorCode::kBadData,
          side << " weight " << i << " is " << w << "; marginal weights must be finite and >= 0");
    }
    total += w;
  }
  GW_CHECK_CODE(total > 0.0, ErrorCode::kBadData, side << " weights sum to 0; give some node mass");
  std::vector<double> out(weights);
  for (double& w : out) w /= total;
  return out;
}

detail::PreparedProblem prepare(const Problem& problem, const Options& options) {
  detail::PreparedProblem pb;
  pb.n = problem.source.num_nodes();
  pb.k = problem.target.num_nodes();
  GW_CHECK(problem.source.kind() != Geometry::Kind::kNone, "the source geometry is not set");
  GW_CHECK(problem.target.kind() != Geometry::Kind::kNone, "the target geometry is not set");
  const bool gw_term = options.fused_weight < 1.0;
  if (options.fused_weight > 0.0) {
    GW_CHECK(problem.feature_cost.has_value(),
             "fused_weight = " << options.fused_weight
                               << " needs a feature cost (Problem::feature_cost, n x k)");
  }
  if (problem.feature_cost) {
    const DenseMatrix<double>& c = *problem.feature_cost;
    GW_CHECK(c.rows == pb.n && c.cols == pb.k,
             "feature cost is " << c.rows << " x " << c.cols << " but the problem is " << pb.n
                                << " x " << pb.k << " (source x target)");
    GW_CHECK(c.values.size() == static_cast<std::size_t>(c.rows) * c.cols,
             "feature cost has " << c.values.size() << " values for " << c.rows << " x " << c.cols);
    check_all_finite(std::span<const double>(c.values), "feature cost");
    pb.feature_cost = &c;
  }
  pb.p = normalized_weights(problem.source_weights, pb.n, "source");
  pb.q = normalized_weights(problem.target_weights, pb.k, "target");
  if (problem.initial_plan) {
    const DenseMatrix<double>& t0 = *problem.initial_plan;
    GW_CHECK(t0.rows == pb.n && t0.cols == pb.k && t0.values.size() == std::size_t(pb.n) * pb.k,
             "initial plan is " << t0.rows << " x " << t0.cols << " but the problem is " << pb.n
                                << " x " << pb.k);
    double mass = 0.0;
    for (std::size_t p = 0; p < t0.values.size(); ++p) {
      const double t = t0.values[p];
      if (!std::isfinite(t) || t < 0.0) {
        GW_THROW(ErrorCode::kBadData,
                 "initial plan entry " << p << " is " << t << "; plans must be finite and >= 0");
      }
      mass += t;
    }
    GW_CHECK_CODE(mass > 0.0, ErrorCode::kBadData, "initial plan has zero mass");
    pb.initial_plan = t0.values;
    for (double& t : pb.initial_plan) t /= mass;
  }
  if (gw_term) {
    GW_CHECK(problem.source.kind() != Geometry::Kind::kNodes,
             "the source has no geometry (only a node count); give points, a graph or distances, "
             "or set fused_weight = 1 for plain OT on the feature cost");
    GW_CHECK(problem.target.kind() != Geometry::Kind::kNodes,
             "the target has no geometry (only a node count); give points, a graph or distances, "
             "or set fused_weight = 1 for plain OT on the feature cost");
    pb.source = detail::make_provider(problem.source, options, "source");
    pb.target = detail::make_provider(problem.target, options, "target");
  }
  return pb;
}

// Dense f64 plan -> the requested output form, matching and mass.
void finalize_plan(std::vector<double>& plan, const Options& options, Result& result) {
  const Index n = result.n, k = result.k;
  result.matching = argmax_matching(plan, n, k);
  double mass = 0.0;
  for (double t : plan) mass += t;
  result.plan_mass = mass;
  if (options.plan_format == PlanFormat::kDense) {
    result.plan = std::move(plan);
    return;
  }
  const int top = std::min<int>(options.top_k, k);
  CsrMatrix<double>& csr = result.plan_topk;
  csr.rows = n;
  csr.cols = k;
  csr.row_offsets.resize(static_cast<std::size_t>(n) + 1);
  csr.col_indices.resize(static_cast<std::size_t>(n) * top);
  csr.values.resize(static_cast<std::size_t>(n) * top);
#pragma omp parallel
  {
    std::vector<Index> order(k);
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      const double* row = plan.data() + static_cast<std::size_t>(i) * k;
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + top, order.end(), [&](Index a, Index b) {
        return row[a] > row[b] || (row[a] == row[b] && a < b);
      });
      std::sort(order.begin(), order.begin() + top);
      for (int t = 0; t < top; ++t) {
        csr.col_indices[static_cast<std::size_t>(i) * top + t] = order[t];
        csr.values[static_cast<std::size_t>(i) * top + t] = row[order[t]];
      }
    }
  }
  for (Index i = 0; i <= n; ++i) csr.row_offsets[i] = static_cast<Offset>(i) * top;
  plan.clear();
  plan.shrink_to_fit();
}

// Sinkhorn-Knopp scaling of the plan itself towards marginals (p, q), one pass per sweep: each
// row pass applies the pending column factors, rescales the row to p_i and accumulates the column
// sums that give the next column factors. Stops when the column error falls below `tolerance`
// (rows are exact after their pass) or after max_sweeps; a final pass applies the last column
// factors. Rows or columns of zero mass are left alone.
void scale_to_marginals(std::vector<double>& plan,
                        const std::vector<double>& p,
                        const std::vector<double>& q,
                        double tolerance,
                        int max_sweeps) {
  const Index n = static_cast<Index>(p.size()), k = static_cast<Index>(q.size());
  std::vector<double> col_factor(k, 1.0), col_sum(k);
  const int threads = available_threads();
  std::vector<std::vector<double>> partial(threads, std::vector<double>(k));
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
#pragma omp parallel num_threads(threads)
    {
      std::vector<double>& local = partial[omp_get_thread_num()];
      std::fill(local.begin(), local.end(), 0.0);
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        double* t = plan.data() + static_cast<std::size_t>(i) * k;
        double mass = 0.0;
        for (Index j = 0; j < k; ++j) mass += (t[j] *= col_factor[j]);
        if (mass <= 0.0) continue;
        const double scale = p[i] / mass;
        for (Index j = 0; j < k; ++j) local[j] += (t[j] *= scale);
      }
    }
    std::fill(col_sum.begin(), col_sum.end(), 0.0);
    for (const auto& local : partial)
      for (Index j = 0; j < k; ++j) col_sum[j] += local[j];
    double error = 0.0;
    for (Index j = 0; j < k; ++j) {
      error += std::abs(col_sum[j] - q[j]);
      col_factor[j] = col_sum[j] > 0.0 ? q[j] / col_sum[j] : 1.0;
    }
    if (error < tolerance) break;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (Index i = 0; i < n; ++i) {
    double* t = plan.data() + static_cast<std::size_t>(i) * k;
    for (Index j = 0; j < k; ++j) t[j] *= col_factor[j];
  }
}

// Altschuler-Weed-Rigollet rounding onto {T >= 0 : T 1 = p, T^T 1 = q} (see
// Options::round_marginals).
void round_to_marginals(std::vector<double>& plan,
                        const std::vector<double>& p,
                        const std::vector<double>& q) {
  const Index n = static_cast<Index>(p.size()), k = static_cast<Index>(q.size());
  std::vector<double> col(k, 0.0), row_deficit(n, 0.0);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    double* t = plan.data() + static_cast<std::size_t>(i) * k;
    double mass = 0.0;
    for (Index j = 0; j < k; ++j) mass += t[j];
    if (mass > p[i]) {
      const double scale = p[i] / mass;
      for (Index j = 0; j < k; ++j) t[j] *= scale;
    }
  }
  for (Index i = 0; i < n; ++i) {
    const double* t = plan.data() + static_cast<std::size_t>(i) * k;
    for (Index j = 0; j < k; ++j) col[j] += t[j];
  }
  std::vector<double> col_scale(k), col_deficit(k);
  for (Index j = 0; j < k; ++j) col_scale[j] = col[j] > q[j] ? q[j] / col[j] : 1.0;
  std::fill(col.begin(), col.end(), 0.0);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    double* t = plan.data() + static_cast<std::size_t>(i) * k;
    double mass = 0.0;
    for (Index j = 0; j < k; ++j) mass += (t[j] *= col_scale[j]);
    row_deficit[i] = std::max(0.0, p[i] - mass);
  }
  for (Index i = 0; i < n; ++i) {
    const double* t = plan.data() + static_cast<std::size_t>(i) * k;
    for (Index j = 0; j < k; ++j) col[j] += t[j];
  }
  double deficit = 0.0;
  for (Index j = 0; j < k; ++j) col_deficit[j] = std::max(0.0, q[j] - col[j]);
  for (double d : row_deficit) deficit += d;
  if (!(deficit > 0.0)) return;
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    if (row_deficit[i] == 0.0) continue;
    double* t = plan.data() + static_cast<std::size_t>(i) * k;
    const double scale = row_deficit[i] / deficit;
    for (Index j = 0; j < k; ++j) t[j] += scale * col_deficit[j];
  }
}

using RowMatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Full distance matrix of a provider (n x n), max-normalized; for the exact loss.
RowMatrixD full_distances(const DistanceProvider& provider) {
  const Index n = provider.num_nodes();
  const std::vector<float> block = detail::normalized_full_distances(provider);
  return Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
             block.data(), n, n)
      .cast<double>();
}

// The true GW loss of the final plan: exact from full matrices when affordable, else the Monte
// Carlo average over anchor pairs (i_p, j_p) ~ T of sum_kl T_kl (DX(k, i_p) - DY(l, j_p))^2, whose
// expectation is the loss divided by the plan mass.
void compute_loss(const detail::PreparedProblem& pb,
                  const std::vector<double>& plan,
                  const Options& options,
                  Result& result) {
  const Index n = pb.n, k = pb.k;
  const double work = static_cast<double>(n) * k * (static_cast<double>(n) + k);
  auto exact_capable = [](const DistanceProvider& p) { return p.holds_full_matrix(); };
  if (work <= options.exact_loss_max_work && exact_capable(*pb.source) &&
      exact_capable(*pb.target)) {
    const RowMatrixD dx = full_distances(*pb.source);
    const RowMatrixD dy = full_distances(*pb.target);
    result.gw_loss = gw_loss(std::span<const double>(dx.data(), dx.size()),
                             std::span<const double>(dy.data(), dy.size()),
                             plan,
                             n,
                             k);
    result.gw_loss_exact = true;
    result.gw_loss_stderr = 0.0;
    return;
  }
  const LossEstimate estimate =
      estimate_gw_loss(*pb.source, *pb.target, plan, n, k, options.loss_anchors, options.seed);
  result.gw_loss = estimate.value;
  result.gw_loss_stderr = estimate.standard_error;
  result.gw_loss_exact = false;
}

// Whether the exact solver runs (Options::solver), with the reason in *reason.
bool choose_exact(const Problem& problem,
                  const Options& options,
                  const MemoryEstimate& memory,
                  std::string* reason) {
  const Index n = problem.source.num_nodes(), k = problem.target.num_nodes();
  const bool balanced =
      std::isinf(options.rho_a) && std::isinf(options.rho_b) && !options.partial_mass;
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
      GW_CHECK_CODE(blocker.empty(), ErrorCode::kUnsupported,
                    "solver = exact does not support " << blocker
                                                       << "; use solver sampled (--solver sampled)");
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

void project_to_marginals(std::vector<double>& plan,
                          const std::vector<double>& p,
                          const std::vector<double>& q) {
  scale_to_marginals(plan, p, q, /*tolerance=*/1e-7, /*max_sweeps=*/30);
  round_to_marginals(plan, p, q);
}

}  // namespace detail

double gw_loss(std::span<const double> dx,
               std::span<const double> dy,
               std::span<const double> plan,
               Index n,
               Index k) {
  GW_CHECK(dx.size() == static_cast<std::size_t>(n) * n, "gw_loss: dx is not " << n << " x " << n);
  GW_CHECK(dy.size() == static_cast<std::size_t>(k) * k, "gw_loss: dy is not " << k << " x " << k);
  GW_CHECK(plan.size() == static_cast<std::size_t>(n) * k,
           "gw_loss: plan is not " << n << " x " << k);
  const Eigen::Map<const RowMatrixD> x(dx.data(), n, n), y(dy.data(), k, k), t(plan.data(), n, k);
  const Eigen::VectorXd r = t.rowwise().sum();
  const Eigen::VectorXd c = t.colwise().sum().transpose();
  const double term_x = r.dot(x.cwiseAbs2() * r);
  const double term_y = c.dot(y.cwiseAbs2() * c);
  const RowMatrixD xty = x * t * y;
  return term_x + term_y - 2.0 * xty.cwiseProduct(t).sum();
}

LossEstimate estimate_gw_loss(const DistanceProvider& source,
                              const DistanceProvider& target,
                              std::span<const double> plan,
                              Index n,
                              Index k,
                              int anchors,
                              std::uint64_t seed,
                              double scale_x,
                              double scale_y) {
  GW_CHECK(source.num_nodes() == n && target.num_nodes() == k,
           "estimate_gw_loss: providers have " << source.num_nodes() << " and "
                                               << target.num_nodes() << " nodes for a " << n
                                               << " x " << k << " plan");
  GW_CHECK(plan.size() == static_cast<std::size_t>(n) * k,
           "estimate_gw_loss: plan is not " << n << " x " << k);
  GW_CHECK(anchors >= 1, "estimate_gw_loss: anchors must be >= 1, got " << anchors);
  const int m = anchors;
  Rng rng(seed, /*stream=*/2);
  const AnchorPairs pairs = sample_anchor_pairs(plan.data(), n, k, k, m, rng);
  std::vector<float> dx32(static_cast<std::size_t>(n) * m), dy32(static_cast<std::size_t>(k) * m);
  source.distances_to(pairs.rows, dx32);
  target.distances_to(pairs.cols, dy32);
  // Without a given scale, each block is divided by its own maximum (as in the loop).
  clamp_and_normalize(dx32, scale_x <= 0.0);
  clamp_and_normalize(dy32, scale_y <= 0.0);
  using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  RowMatrixD dx = Eigen::Map<const RowMatrixF>(dx32.data(), n, m).cast<double>();
  RowMatrixD dy = Eigen::Map<const RowMatrixF>(dy32.data(), k, m).cast<double>();
  if (scale_x > 0.0) dx /= scale_x;
  if (scale_y > 0.0) dy /= scale_y;
  const Eigen::Map<const RowMatrixD> t(plan.data(), n, k);
  const Eigen::VectorXd r = t.rowwise().sum();
  const Eigen::VectorXd c = t.colwise().sum().transpose();
  const double mass = r.sum();
  const RowMatrixD t_dy = t * dy;  // n x m
  std::vector<double> per_anchor(m);
  for (int p = 0; p < m; ++p) {
    per_anchor[p] = r.dot(dx.col(p).cwiseAbs2()) + c.dot(dy.col(p).cwiseAbs2()) -
                    2.0 * dx.col(p).dot(t_dy.col(p));
  }
  const double mean = std::accumulate(per_anchor.begin(), per_anchor.end(), 0.0) / m;
  double var = 0.0;
  for (double v : per_anchor) var += (v - mean) * (v - mean);
  var = m > 1 ? var / (m - 1) : 0.0;
  // Each l_p already carries the plan's mass once (sum_kl T_kl); E over (i,j) ~ T / mass.
  return {mean * mass, std::sqrt(var / m) * mass};
}

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
  if (sparse) {
    GW_CHECK_CODE(options.backend != Backend::kCuda,
                  ErrorCode::kUnsupported,
                  "support = sparse is not implemented for cuda; use --backend cpu, or "
                  "--support dense when the dense plan fits");
  }

  detail::PreparedProblem pb;
  {
    ScopedPhase phase(result.timings, "setup");
    pb = prepare(problem, options);
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
      options.initial_plan == InitialPlan::kDistanceProfiles && options.backend != Backend::kCuda) {
    ScopedPhase phase(result.timings, "init");
    pb.initial_plan = detail::distance_profile_plan(pb, options);
  }

  auto run_loop = [&](detail::PreparedProblem& problem, std::vector<double>& out, Result& into) {
    if (options.backend == Backend::kCuda) {
      detail::run_cuda_loop(problem, options, out, into);
    } else {
      detail::run_cpu_loop(problem, options, out, into);
    }
  };

  const bool probing =
      options.restarts > 1 && pb.source && options.restart_iterations < options.max_iterations;
  if (probing) {
    // The starting plan is kept in float32 between probes (a start needs no more), so that the
    // probes' peak memory stays within three plans plus this copy and the best probe's plan.
    const std::vector<float> start(pb.initial_plan.begin(), pb.initial_plan.end());
    std::vector<float> best_plan;
    std::vector<double> best_f, best_g;
    double best_loss = std::numeric_limits<double>::infinity();
    for (int r = 0; r < options.restarts; ++r) {
      detail::PreparedProblem probe = pb;
      probe.initial_plan.assign(start.begin(), start.end());
      probe.window = {0,
                      options.restart_iterations,
                      /*stream=*/100 + static_cast<std::uint64_t>(r),
                      /*stopping=*/false};
      Result probe_result;
      std::vector<double> probe_plan;
      run_loop(probe, probe_plan, probe_result);
      for (const auto& [phase, seconds] : probe_result.timings.entries()) {
        result.timings.add("probe_" + phase, seconds);
      }
      result.backend = probe_result.backend;
      result.threads = probe_result.threads;
      if (probe_result.termination == Termination::kNonFinite) {
        result.restart_losses.push_back(std::numeric_limits<double>::quiet_NaN());
        continue;
      }
      Result scored;
      {
        ScopedPhase phase(result.timings, "probe_loss");
        compute_loss(pb, probe_plan, options, scored);
      }
      result.restart_losses.push_back(scored.gw_loss);
      if (scored.gw_loss < best_loss) {
        best_loss = scored.gw_loss;
        result.restart_chosen = r;
        best_plan.assign(probe_plan.begin(), probe_plan.end());
        best_f = std::move(probe.potential_f);
        best_g = std::move(probe.potential_g);
      }
    }
    if (result.restart_chosen >= 0) {
      pb.initial_plan.assign(best_plan.begin(), best_plan.end());
      pb.potential_f = std::move(best_f);
      pb.potential_g = std::move(best_g);
      pb.window.first_iteration = options.restart_iterations;
    }
  }
  run_loop(pb, plan, result);
  }  // sampled

  const bool balanced =
      std::isinf(options.rho_a) && std::isinf(options.rho_b) && !options.partial_mass;
  // Conditional-gradient plans are on the polytope already, and their exact loss is known.
  const bool exact_on_polytope = exact && options.exact_method != ExactMethod::kMirrorDescent;
  if (options.round_marginals && balanced && result.termination != Termination::kNonFinite &&
      !exact_on_polytope) {
    ScopedPhase phase(result.timings, "round");
    scale_to_marginals(plan, pb.p, pb.q, /*tolerance=*/1e-7, /*max_sweeps=*/30);
    round_to_marginals(plan, pb.p, pb.q);
  }
  if (result.termination != Termination::kNonFinite) {
    // L1 marginal errors of the returned plan (the sparse path reports the same).
    std::vector<double> col(pb.k, 0.0);
    double row_error = 0.0;
    for (Index i = 0; i < pb.n; ++i) {
      const double* t = plan.data() + static_cast<std::size_t>(i) * pb.k;
      double row = 0.0;
      for (Index j = 0; j < pb.k; ++j) {
        row += t[j];
        col[j] += t[j];
      }
      row_error += std::abs(row - pb.p[i]);
    }
    double col_error = 0.0;
    for (Index j = 0; j < pb.k; ++j) col_error += std::abs(col[j] - pb.q[j]);
    result.row_marginal_error = row_error;
    result.column_marginal_error = col_error;
  }
  if (options.compute_gw_loss && pb.source) {
    ScopedPhase phase(result.timings, "loss");
    double mass = 0.0;
    for (double t : plan) mass += t;
    result.plan_mass = mass;
    if (mass > 0.0 && std::isfinite(mass) && !exact_on_polytope) {
      compute_loss(pb, plan, options, result);
    }
  }
  {
    ScopedPhase phase(result.timings, "output");
    finalize_plan(plan, options, result);
  }
  if (pb.source) {
    result.source_distance_stats = pb.source->stats();
    result.target_distance_stats = pb.target->stats();
  }
  result.total_seconds = total.seconds();
  return result;
}

}  // namespace gw
