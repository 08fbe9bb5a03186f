// The GW loss of a plan: exact from full matrices (gw_loss), estimated from anchor pairs with a
// standard error (estimate_loss_in_blocks: every path's estimator, the dense plan's through a
// GEMM, the sparse support's through its rows), and the choice between them for a solve's final
// plan.
#include <Eigen/Core>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "sampling/sampling.h"
#include "solver/gw_cost_kernels_impl.h"
#include "solver/solve.h"
#include "solver/solver_impl.h"

namespace gw {

namespace {

using RowMatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Full distance matrix of a provider (n x n), max-normalized; for the exact loss.
RowMatrixD full_distances(const DistanceProvider& provider) {
  const Index n = provider.num_nodes();
  const std::vector<float> block = detail::normalized_full_distances(provider);
  return Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
             block.data(), n, n)
      .cast<double>();
}

// gw_loss (solve.h), with the plan's row and column sums when the caller has them (else nullptr).
double gw_loss_given_sums(std::span<const double> dx,
                          std::span<const double> dy,
                          std::span<const double> plan,
                          Index n,
                          Index k,
                          const detail::PlanSums* given) {
  GW_CHECK(dx.size() == static_cast<std::size_t>(n) * n, "gw_loss: dx is not " << n << " x " << n);
  GW_CHECK(dy.size() == static_cast<std::size_t>(k) * k, "gw_loss: dy is not " << k << " x " << k);
  GW_CHECK(plan.size() == static_cast<std::size_t>(n) * k,
           "gw_loss: plan is not " << n << " x " << k);
  const detail::PlanSums own =
      given != nullptr ? detail::PlanSums{} : detail::plan_sums(plan, n, k);
  const detail::PlanSums& sums = given != nullptr ? *given : own;
  const Eigen::Map<const RowMatrixD> x(dx.data(), n, n), y(dy.data(), k, k), t(plan.data(), n, k);
  const Eigen::Map<const Eigen::VectorXd> r(sums.rows.data(), n), c(sums.cols.data(), k);
  const double term_x = r.dot(x.cwiseAbs2() * r);
  const double term_y = c.dot(y.cwiseAbs2() * c);
  // sum_{ijab} dx_ia dy_jb t_ij t_ab = <t, x t y^T> (y^T: the matrices need not be symmetric).
  // The two n k (n + k) products go through the dispatched GEMM (this file is compiled for the
  // baseline target, where Eigen's own product runs SSE2 without FMA): z = t y^T, then x z.
  const auto gemm = detail::gw_cost_kernels().gemm_abt<double>();
  RowMatrixD z(n, k);
  gemm(plan.data(), dy.data(), n, k, k, z.data(), k);
  const RowMatrixD zt = z.transpose();
  gemm(dx.data(), zt.data(), n, k, n, z.data(), k);  // z <- x (t y^T)
  return term_x + term_y - 2.0 * z.cwiseProduct(t).sum();
}

// Anchors per block of the estimate: the provider output is (n + k) x kLossBlock floats at a time
// (and the product n x kLossBlock doubles), whatever the number of anchors.
constexpr int kLossBlock = 64;

// estimate_gw_loss (solve.h) on a dense plan, with its row and column sums when the caller has
// them (else nullptr); the row sums also drive the row draw.
LossEstimate estimate_given_sums(const DistanceProvider& source,
                                 const DistanceProvider& target,
                                 std::span<const double> plan,
                                 Index n,
                                 Index k,
                                 int anchors,
                                 std::uint64_t seed,
                                 double scale_x,
                                 double scale_y,
                                 const detail::PlanSums* given) {
  GW_CHECK(source.num_nodes() == n && target.num_nodes() == k,
           "estimate_gw_loss: providers have " << source.num_nodes() << " and "
                                               << target.num_nodes() << " nodes for a " << n
                                               << " x " << k << " plan");
  GW_CHECK(plan.size() == static_cast<std::size_t>(n) * k,
           "estimate_gw_loss: plan is not " << n << " x " << k);
  GW_CHECK(anchors >= 1, "estimate_gw_loss: anchors must be >= 1, got " << anchors);
  const detail::PlanSums own =
      given != nullptr ? detail::PlanSums{} : detail::plan_sums(plan, n, k);
  const detail::PlanSums& sums = given != nullptr ? *given : own;
  Rng rng(seed, /*stream=*/2);
  const std::vector<double> uniforms = draw_sampling_uniforms(rng, anchors);
  detail::LossPlan lp;
  lp.n = n;
  lp.k = k;
  lp.rows = sums.rows;
  lp.cols = sums.cols;
  lp.pairs = sample_anchor_pairs(plan.data(), n, k, k, sums.rows, uniforms);
  // T dy through the dispatched GEMM (out = A B^T with B = dy^T); this file is compiled for the
  // baseline target, where Eigen's own product would run SSE2 without FMA.
  std::vector<double> dy_t;
  lp.times = [&](const double* dy, int b, double* out) {
    dy_t.resize(static_cast<std::size_t>(b) * k);
    for (Index j = 0; j < k; ++j)
      for (int t = 0; t < b; ++t) dy_t[static_cast<std::size_t>(t) * k + j] = dy[static_cast<std::size_t>(j) * b + t];
    detail::gw_cost_kernels().gemm_abt<double>()(plan.data(), dy_t.data(), n, b, k, out, b);
  };
  return detail::estimate_loss_in_blocks(source, target, lp, scale_x, scale_y);
}

}  // namespace

double gw_loss(std::span<const double> dx,
               std::span<const double> dy,
               std::span<const double> plan,
               Index n,
               Index k) {
  return gw_loss_given_sums(dx, dy, plan, n, k, nullptr);
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
  return estimate_given_sums(source, target, plan, n, k, anchors, seed, scale_x, scale_y, nullptr);
}

namespace detail {

LossEstimate estimate_loss_in_blocks(const DistanceProvider& source,
                                     const DistanceProvider& target,
                                     const LossPlan& plan,
                                     double scale_x,
                                     double scale_y) {
  const Index n = plan.n, k = plan.k;
  const int anchors = static_cast<int>(plan.pairs.rows.size());
  const std::span<const double> r = plan.rows, c = plan.cols;
  const double mass = std::accumulate(r.begin(), r.end(), 0.0);
  // Per anchor, in raw units: finite and unreachable parts of r . dx^2 and c . dy^2, and the cross
  // sum dx . T dy; the scales are applied once every block is seen.
  std::vector<double> ax(anchors), ax_inf(anchors), by(anchors), by_inf(anchors), cross(anchors);
  double max_x = 0.0, max_y = 0.0;
  std::vector<float> dx, dy;
  std::vector<double> y, ty;
  for (int start = 0; start < anchors; start += kLossBlock) {
    const int b = std::min(kLossBlock, anchors - start);
    dx.resize(static_cast<std::size_t>(n) * b);
    dy.resize(static_cast<std::size_t>(k) * b);
    source.distances_to(std::span<const Index>(plan.pairs.rows.data() + start, b), dx);
    target.distances_to(std::span<const Index>(plan.pairs.cols.data() + start, b), dy);
    double bx = 0.0, b_y = 0.0;
    for (float v : dx)
      if (std::isfinite(v)) bx = std::max<double>(bx, v);
    for (float v : dy)
      if (std::isfinite(v)) b_y = std::max<double>(b_y, v);
    max_x = std::max(max_x, bx);
    max_y = std::max(max_y, b_y);
    // Unreachable entries count as 1.5 x the block's largest distance in the product.
    const double fill_x = 1.5 * bx, fill_y = 1.5 * b_y;
    y.resize(dy.size());
    for (std::size_t e = 0; e < dy.size(); ++e) y[e] = std::isfinite(dy[e]) ? dy[e] : fill_y;
    ty.assign(static_cast<std::size_t>(n) * b, 0.0);
    plan.times(y.data(), b, ty.data());
    // Per-thread sums added in thread order: the value depends on the thread count only through
    // rounding.
    std::vector<double> fx(b, 0.0), ix(b, 0.0), fy(b, 0.0), iy(b, 0.0), cr(b, 0.0);
#pragma omp parallel
    {
      std::vector<double> lfx(b, 0.0), lix(b, 0.0), lfy(b, 0.0), liy(b, 0.0), lcr(b, 0.0);
#pragma omp for schedule(static) nowait
      for (Index i = 0; i < n; ++i) {
        const float* row = &dx[static_cast<std::size_t>(i) * b];
        const double* t_row = &ty[static_cast<std::size_t>(i) * b];
        for (int t = 0; t < b; ++t) {
          const bool finite = std::isfinite(row[t]);
          const double x = finite ? row[t] : fill_x;
          lfx[t] += finite ? r[i] * x * x : 0.0;
          lix[t] += finite ? 0.0 : r[i];
          lcr[t] += x * t_row[t];
        }
      }
#pragma omp for schedule(static)
      for (Index j = 0; j < k; ++j) {
        const float* col = &dy[static_cast<std::size_t>(j) * b];
        for (int t = 0; t < b; ++t) {
          const bool finite = std::isfinite(col[t]);
          lfy[t] += finite ? c[j] * static_cast<double>(col[t]) * col[t] : 0.0;
          liy[t] += finite ? 0.0 : c[j];
        }
      }
#pragma omp for ordered schedule(static, 1)
      for (int thread = 0; thread < omp_get_num_threads(); ++thread) {
#pragma omp ordered
        for (int t = 0; t < b; ++t) {
          fx[t] += lfx[t];
          ix[t] += lix[t];
          fy[t] += lfy[t];
          iy[t] += liy[t];
          cr[t] += lcr[t];
        }
      }
    }
    for (int t = 0; t < b; ++t) {
      ax[start + t] = fx[t];
      ax_inf[start + t] = ix[t];
      by[start + t] = fy[t];
      by_inf[start + t] = iy[t];
      cross[start + t] = cr[t];
    }
  }
  const double sx = scale_x > 0.0 ? scale_x : (max_x > 0.0 ? max_x : 1.0);
  const double sy = scale_y > 0.0 ? scale_y : (max_y > 0.0 ? max_y : 1.0);
  // An unreachable entry's square: (1.5 x the largest distance / the scale)^2 (2.25 without a
  // given scale).
  const double inf_x = 2.25 * (max_x / sx) * (max_x / sx), inf_y = 2.25 * (max_y / sy) * (max_y / sy);
  std::vector<double> per_anchor(anchors);
  for (int p = 0; p < anchors; ++p) {
    per_anchor[p] = ax[p] / (sx * sx) + inf_x * ax_inf[p] + by[p] / (sy * sy) + inf_y * by_inf[p] -
                    2.0 * cross[p] / (sx * sy);
  }
  const double mean = std::accumulate(per_anchor.begin(), per_anchor.end(), 0.0) / anchors;
  double var = 0.0;
  for (double v : per_anchor) var += (v - mean) * (v - mean);
  var = anchors > 1 ? var / (anchors - 1) : 0.0;
  // Each l_p already carries the plan's mass once (sum_kl T_kl); E over (i,j) ~ T / mass.
  return {mean * mass, std::sqrt(var / anchors) * mass};
}

bool loss_computed_exactly(const DistanceProvider& source,
                           const DistanceProvider& target,
                           const Options& options) {
  const double n = static_cast<double>(source.num_nodes());
  const double k = static_cast<double>(target.num_nodes());
  return n * k * (n + k) <= options.exact_loss_max_work && source.holds_full_matrix() &&
         target.holds_full_matrix();
}

// The true GW loss of the final plan: exact from full matrices when affordable, else the Monte
// Carlo average over anchor pairs (i_p, j_p) ~ T of sum_kl T_kl (DX(k, i_p) - DY(l, j_p))^2, whose
// expectation is the loss divided by the plan mass.
void compute_loss(const PreparedProblem& pb,
                  const std::vector<double>& plan,
                  const PlanSums& sums,
                  const Options& options,
                  Result& result) {
  const Index n = pb.n, k = pb.k;
  if (loss_computed_exactly(*pb.source, *pb.target, options)) {
    const RowMatrixD dx = full_distances(*pb.source);
    const RowMatrixD dy = full_distances(*pb.target);
    result.gw_loss = gw_loss_given_sums(std::span<const double>(dx.data(), dx.size()),
                                        std::span<const double>(dy.data(), dy.size()),
                                        plan,
                                        n,
                                        k,
                                        &sums);
    result.gw_loss_exact = true;
    result.gw_loss_stderr = 0.0;
    return;
  }
  const LossEstimate estimate = estimate_given_sums(
      *pb.source, *pb.target, plan, n, k, options.loss_anchors, options.seed, 0.0, 0.0, &sums);
  result.gw_loss = estimate.value;
  result.gw_loss_stderr = estimate.standard_error;
  result.gw_loss_exact = false;
}

}  // namespace detail

}  // namespace gw
