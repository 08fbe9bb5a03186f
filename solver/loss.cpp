// The GW loss of a plan: exact from full matrices (gw_loss), estimated from anchor pairs with a
// standard error (estimate_gw_loss), and the choice between them for a solve's final plan.
#include <Eigen/Core>

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

// estimate_gw_loss (solve.h), with the plan's row and column sums when the caller has them (else
// nullptr); the row sums also drive the row draw, instead of the sampler's own sequential pass.
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
  const int m = anchors;
  const detail::PlanSums own =
      given != nullptr ? detail::PlanSums{} : detail::plan_sums(plan, n, k);
  const detail::PlanSums& sums = given != nullptr ? *given : own;
  const std::vector<double>& r = sums.rows;
  const std::vector<double>& c = sums.cols;
  Rng rng(seed, /*stream=*/2);
  const std::vector<double> uniforms = draw_sampling_uniforms(rng, m);
  const AnchorPairs pairs = sample_anchor_pairs(plan.data(), n, k, k, r, uniforms);
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
  const double mass = std::accumulate(r.begin(), r.end(), 0.0);
  // t dy (n x m), the n k m product of the estimate, through the dispatched GEMM (t dy = t
  // (dy^T)^T); Eigen's product in this baseline-compiled file would run SSE2 without FMA.
  const RowMatrixD dy_t = dy.transpose();
  RowMatrixD t_dy(n, m);
  detail::gw_cost_kernels().gemm_abt<double>()(plan.data(), dy_t.data(), n, m, k, t_dy.data(), m);
  // l_p = sum_i r_i dx_ip^2 + sum_j c_j dy_jp^2 - 2 sum_i dx_ip (t dy)_ip, accumulated row by row
  // (contiguous in the row-major blocks).
  std::vector<double> per_anchor(m, 0.0);
  for (Index i = 0; i < n; ++i) {
    const double* a = dx.data() + static_cast<std::size_t>(i) * m;
    const double* b = t_dy.data() + static_cast<std::size_t>(i) * m;
    for (int q = 0; q < m; ++q) per_anchor[q] += r[i] * a[q] * a[q] - 2.0 * a[q] * b[q];
  }
  for (Index j = 0; j < k; ++j) {
    const double* a = dy.data() + static_cast<std::size_t>(j) * m;
    for (int q = 0; q < m; ++q) per_anchor[q] += c[j] * a[q] * a[q];
  }
  const double mean = std::accumulate(per_anchor.begin(), per_anchor.end(), 0.0) / m;
  double var = 0.0;
  for (double v : per_anchor) var += (v - mean) * (v - mean);
  var = m > 1 ? var / (m - 1) : 0.0;
  // Each l_p already carries the plan's mass once (sum_kl T_kl); E over (i,j) ~ T / mass.
  return {mean * mass, std::sqrt(var / m) * mass};
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
