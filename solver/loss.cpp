// The GW loss of a plan: exact from full matrices (gw_loss), estimated from anchor pairs with a
// standard error (estimate_gw_loss), and the choice between them for a solve's final plan.
#include <Eigen/Core>

#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "sampling/sampling.h"
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

}  // namespace

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
                  const Options& options,
                  Result& result) {
  const Index n = pb.n, k = pb.k;
  if (loss_computed_exactly(*pb.source, *pb.target, options)) {
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

}  // namespace detail

}  // namespace gw
