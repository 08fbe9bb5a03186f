// The sampled GW loop on the CPU (docs/architecture.md section 2).
//
// Work per iteration, n x k real block, M anchors:
//   sampling   O(n + M k) reads of the plan (row masses come from the previous blend pass)
//   distances  provider queries, O((n + k) M) output
//   cost       one GEMM of 2 n k (M + 2) flops (Eigen, multithreaded, compiled per instruction-set
//              target in gw_cost_isa.cpp) writing Lambda with its
//              row/column terms folded in; one more pass only for the EMA / fused blends
//   sinkhorn   (inner iterations + 1) reads of Lambda
//   plan       one pass: T <- (1 - alpha) T + alpha T_new, with T_new computed from the potentials
//              on the fly (never stored) and ||dT||_F, <Lambda, T> and the row masses of T
//              accumulated on the way (per-row partials summed in row order, so every reduction
//              is independent of the thread count)
// Buffers (Real = float32 in mixed precision): Lambda (n+1)(k+1) and T n k, plus an EMA copy of
// Lambda when lambda_ema > 0.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/context.h"
#include "core/error.h"
#include "core/timer.h"
#include "sampling/sampling.h"
#include "sinkhorn/sinkhorn.h"
#include "solver/gw_cost_kernels_impl.h"
#include "solver/sampled/loop_driver_impl.h"
#include "solver/sampled/sampled_impl.h"

namespace gw::detail {

namespace {

template <typename Real>
class CpuLoop {
 public:
  CpuLoop(const PreparedProblem& problem, std::vector<double> initial_plan, const Options& options)
      : pb_(problem),
        opt_(options),
        n_(problem.n),
        k_(problem.k),
        m_(options.max_anchors(problem.n, problem.k)),
        slack_(slack_layout(problem.n, problem.k, options)),
        rows_(n_ + (slack_.enabled ? 1 : 0)),
        cols_(k_ + (slack_.enabled ? 1 : 0)),
        gw_(options.fused_weight < 1.0) {
    // T_0 first (the given plan, or p q^T), and the float64 initial plan freed before the other
    // n x k buffers exist: the peak stays at three plans' worth of memory.
    plan_.resize(static_cast<std::size_t>(n_) * k_);
    row_mass_.resize(n_);
    for (Index i = 0; i < n_; ++i) {
      double mass = 0.0;
      for (Index j = 0; j < k_; ++j) {
        const double t = initial_plan.empty() ? problem.p[i] * problem.q[j]
                                              : initial_plan[static_cast<std::size_t>(i) * k_ + j];
        plan_[static_cast<std::size_t>(i) * k_ + j] = static_cast<Real>(t);
        mass += static_cast<double>(static_cast<Real>(t));
      }
      row_mass_[i] = mass;
    }
    std::vector<double>().swap(initial_plan);
    lambda_.assign(static_cast<std::size_t>(rows_) * cols_, Real(0));
    if (opt_.lambda_ema > 0.0) lambda_ema_.resize(static_cast<std::size_t>(n_) * k_);
    if (gw_) {
      dx_.resize(static_cast<std::size_t>(n_) * m_);
      dy_.resize(static_cast<std::size_t>(k_) * m_);
      left_.resize(static_cast<std::size_t>(n_) * (m_ + 2));
      right_.resize(static_cast<std::size_t>(k_) * (m_ + 2));
    }
    if (problem.feature_cost != nullptr) {
      const auto& values = problem.feature_cost->values;
      max_feature_cost_ = *std::max_element(values.begin(), values.end());
    }
    a_.assign(problem.p.begin(), problem.p.end());
    b_.assign(problem.q.begin(), problem.q.end());
    if (slack_.enabled) {
      a_.push_back(slack_.row_mass);
      b_.push_back(slack_.col_mass);
    }
    f_ = problem.potential_f.empty() ? std::vector<double>(rows_, 0.0) : problem.potential_f;
    g_ = problem.potential_g.empty() ? std::vector<double>(cols_, 0.0) : problem.potential_g;
    GW_CHECK_CODE(f_.size() == static_cast<std::size_t>(rows_) &&
                      g_.size() == static_cast<std::size_t>(cols_),
                  ErrorCode::kInternal,
                  "starting potentials do not match the augmented shape");
    row_stats_.resize(n_);
    sinkhorn_options_.max_iterations = opt_.sinkhorn_max_iterations;
    sinkhorn_options_.tolerance = opt_.sinkhorn_tolerance;
    sinkhorn_options_.check_every = opt_.sinkhorn_check_every;
    sinkhorn_options_.rho_a = opt_.rho_a;
    sinkhorn_options_.rho_b = opt_.rho_b;
    sinkhorn_options_.precision = std::is_same_v<Real, float> ? Precision::kF32 : Precision::kF64;
    sinkhorn_options_.threads = opt_.threads;
  }

  void run(std::vector<double>& plan_out, Result& result) {
    if (!gw_) {
      run_plain_ot(result);
    } else {
      run_gw_iterations(*this, pb_, opt_, result);
    }
    // Release the loop's buffers before the float64 copy, so the peak stays at three plans.
    std::vector<Real>().swap(lambda_);
    std::vector<Real>().swap(lambda_ema_);
    plan_out.assign(plan_.begin(), plan_.end());
  }

  // The potentials the loop ended with (for a continued run).
  void take_potentials(std::vector<double>& f, std::vector<double>& g) {
    f = std::move(f_);
    g = std::move(g_);
  }

  // The steps run_gw_iterations (loop_driver_impl.h) drives.
  AnchorPairs sample(std::span<const double> uniforms) {
    return sample_anchor_pairs(plan_.data(), n_, k_, k_, row_mass_, uniforms);
  }
  std::span<float> source_block(int m) {
    return std::span<float>(dx_).first(static_cast<std::size_t>(n_) * m);
  }
  std::span<float> target_block(int m) {
    return std::span<float>(dy_).first(static_cast<std::size_t>(k_) * m);
  }
  void build_cost(int m, bool precise) { fill_gw_cost(m, precise); }
  SinkhornResult sinkhorn(double epsilon, int max_iterations, double tolerance) {
    SinkhornOptions inner = sinkhorn_options_;
    inner.max_iterations = max_iterations;
    inner.tolerance = tolerance;
    return gw::sinkhorn(cost_view(), a_, b_, epsilon, f_, g_, inner);
  }
  IterationTotals plan_and_blend(double epsilon) { return blend(epsilon, opt_.momentum); }

 private:
  // fused_weight == 1: Lambda = C_feat never changes, so the loop reduces to one Sinkhorn solve,
  // run to the polishing tolerance.
  void run_plain_ot(Result& result) {
    Stopwatch watch;
    {
      ScopedPhase phase(result.timings, "cost");
      fill_cost_without_gw();
    }
    SinkhornResult inner;
    {
      ScopedPhase phase(result.timings, "sinkhorn");
      inner =
          sinkhorn(opt_.epsilon, opt_.polish_sinkhorn_iterations, opt_.polish_sinkhorn_tolerance);
    }
    record_plain_ot(inner, blend(opt_.epsilon, 1.0), opt_.epsilon, watch.seconds(), result);
  }

  CostView cost_view() const { return CostView(lambda_.data(), rows_, cols_); }

  Real& lambda_at(Index i, Index j) { return lambda_[static_cast<std::size_t>(i) * cols_ + j]; }

  // Lambda = C_feat (fused_weight == 1), plus the slack entries.
  void fill_cost_without_gw() {
    const DenseMatrix<double>& c = *pb_.feature_cost;
    double max_cost = 0.0;
    for (Index i = 0; i < n_; ++i) {
      for (Index j = 0; j < k_; ++j) {
        lambda_at(i, j) = static_cast<Real>(c(i, j));
        max_cost = std::max(max_cost, c(i, j));
      }
    }
    fill_slack(max_cost);
  }

  // Lambda = a 1^T + 1 b^T - (2/M) D_X D_Y^T as ONE GEMM over augmented factors,
  //   [D_X | a | 1] (n x (M+2)) times [-(2/M) D_Y | 1 | b]^T ((M+2) x k),
  // so Lambda is written once with no separate pass for the row/column terms. Then the EMA and
  // fused blends (one pass, only when enabled) and the slack entries.
  // `precise` (polishing iterations): the cost from many anchors is used as it is, neither mixed
  // with nor fed into the EMA, whose history is noisier than it.
  void fill_gw_cost(Index m, bool precise) {
    const Real scale = Real(-2) / static_cast<Real>(m);
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n_; ++i) {
      const float* x = &dx_[static_cast<std::size_t>(i) * m];
      Real* out = &left_[static_cast<std::size_t>(i) * (m + 2)];
      Real norm = 0;
      for (Index t = 0; t < m; ++t) {
        out[t] = static_cast<Real>(x[t]);
        norm += out[t] * out[t];
      }
      out[m] = norm / static_cast<Real>(m);
      out[m + 1] = Real(1);
    }
#pragma omp parallel for schedule(static)
    for (Index j = 0; j < k_; ++j) {
      const float* y = &dy_[static_cast<std::size_t>(j) * m];
      Real* out = &right_[static_cast<std::size_t>(j) * (m + 2)];
      Real norm = 0;
      for (Index t = 0; t < m; ++t) {
        const Real value = static_cast<Real>(y[t]);
        out[t] = scale * value;
        norm += value * value;
      }
      out[m] = Real(1);
      out[m + 1] = norm / static_cast<Real>(m);
    }
    // The GEMM runs in the active instruction-set target's copy (gw_cost_isa.cpp).
    gw_cost_kernels().gemm_abt<Real>()(
        left_.data(), right_.data(), n_, k_, m + 2, lambda_.data(), cols_);

    const double beta = opt_.lambda_ema;
    const bool ema = beta > 0.0 && !precise;
    const double alpha_f = opt_.fused_weight;
    const DenseMatrix<double>* feature = alpha_f > 0.0 ? pb_.feature_cost : nullptr;
    if (ema || feature != nullptr) {
      const bool first = !ema_started_;
#pragma omp parallel for schedule(static)
      for (Index i = 0; i < n_; ++i) {
        Real* row = &lambda_at(i, 0);
        Real* ema_row = ema ? &lambda_ema_[static_cast<std::size_t>(i) * k_] : nullptr;
        for (Index j = 0; j < k_; ++j) {
          Real value = row[j];
          if (ema) {
            value = first ? value : static_cast<Real>(beta * ema_row[j] + (1.0 - beta) * value);
            ema_row[j] = value;
          }
          if (feature != nullptr) {
            value = static_cast<Real>((1.0 - alpha_f) * value + alpha_f * (*feature)(i, j));
          }
          row[j] = value;
        }
      }
      ema_started_ = ema_started_ || ema;
    }
    // Distances are max-normalized, so Lambda_ij = mean_m (dx - dy)^2 <= 1 (the EMA keeps that);
    // the fused blend stays below max(1, max C_feat). The slack cost needs only this bound:
    // 100 max(1, max Lambda) is the same number whenever max Lambda <= 1.
    fill_slack(feature != nullptr ? (1.0 - alpha_f) + alpha_f * max_feature_cost_ : 1.0);
  }

  // Slack entries (docs/architecture.md section 2). Reference (soft) slack: real <-> slack cost
  // 100 max(1, max Lambda), corner 0. Exact partial transport (POT): real <-> slack 0, corner
  // 100 max(1, max Lambda).
  void fill_slack(double max_lambda) {
    if (!slack_.enabled) return;
    const Real big = static_cast<Real>(100.0 * std::max(1.0, max_lambda));
    const Real edge = slack_.exact_partial ? Real(0) : big;
    const Real corner = slack_.exact_partial ? big : Real(0);
    for (Index i = 0; i < n_; ++i) lambda_at(i, k_) = edge;
    for (Index j = 0; j < k_; ++j) lambda_at(n_, j) = edge;
    lambda_at(n_, k_) = corner;
  }

  // T <- (1 - alpha) T + alpha T_new with T_new = exp((f + g - Lambda) / epsilon) never stored
  // (sinkhorn_plan_momentum); the per-row statistics are summed in row order, so every total is
  // independent of the thread count.
  IterationTotals blend(double epsilon, double alpha) {
    sinkhorn_plan_momentum(cost_view(),
                           f_,
                           g_,
                           epsilon,
                           PlanView(plan_.data(), n_, k_),
                           alpha,
                           row_stats_,
                           sinkhorn_options_);
    IterationTotals totals;
    for (Index i = 0; i < n_; ++i) {
      totals.error += row_stats_[i].change_sq;
      totals.cost += row_stats_[i].cost;
      row_mass_[i] = row_stats_[i].mass;
    }
    totals.error = std::sqrt(totals.error);
    return totals;
  }

  const PreparedProblem& pb_;
  const Options& opt_;
  const Index n_, k_;
  const int m_;  // the most anchors of any iteration (buffer sizes)
  const SlackLayout slack_;
  const Index rows_, cols_;  // augmented shape
  const bool gw_;
  SinkhornOptions sinkhorn_options_;
  std::vector<Real> lambda_, lambda_ema_, plan_;
  bool ema_started_ = false;
  std::vector<float> dx_, dy_;
  std::vector<Real> left_, right_;  // augmented GEMM factors, n x (M+2) and k x (M+2)
  double max_feature_cost_ = 0.0;
  std::vector<double> a_, b_, f_, g_, row_mass_;
  std::vector<PlanBlendStats> row_stats_;
};

}  // namespace

void run_cpu_loop(PreparedProblem& problem,
                  const Options& options,
                  std::vector<double>& plan,
                  Result& result) {
  result.backend = Backend::kCpu;
  result.threads = available_threads();
  set_flush_denormals_all_threads(result.threads);
  std::vector<double> initial_plan = std::move(problem.initial_plan);
  problem.initial_plan.clear();
  if (options.precision == Precision::kF64) {
    CpuLoop<double> loop(problem, std::move(initial_plan), options);
    loop.run(plan, result);
    loop.take_potentials(problem.potential_f, problem.potential_g);
  } else {
    CpuLoop<float> loop(problem, std::move(initial_plan), options);
    loop.run(plan, result);
    loop.take_potentials(problem.potential_f, problem.potential_g);
  }
}

}  // namespace gw::detail
