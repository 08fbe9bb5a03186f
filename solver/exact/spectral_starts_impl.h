// The exact solver's orientation starts (exact/, not installed): both sides embedded by classical
// multidimensional scaling, and the maps between the embeddings under each reflection (and, where
// two axes' eigenvalues are close, each exchange) of their axes, so that a start exists in each
// handedness ("spectral", "spectral-reflected").
//
// Why: on a shape with a near-symmetry (a body's left and right) the GW objective has a mirrored
// optimum with a few times the true one's loss, and starts built from distance distributions
// (profiles) or from p q^T do not know left from right: they land in either basin by the small
// asymmetries, and conditional gradient never crosses over. The leading eigenvectors of the
// double-centred squared-distance matrix, B = -1/2 J D^2 J (J = I - 1 1^T / n), embed a side in R^d
// up to the sign of each axis, and up to the order of axes whose eigenvalues are close (a body as
// wide as it is high; the jitter then decides the order on each side). Mapping the source's
// embedding onto the target's under each of the 2^d sign patterns, and each exchange of close
// axes, gives maps in both handednesses; each is scored by the GW objective of its
// nearest-neighbour map, and the best one and the best one of the other handedness are the
// candidates. Cost: the top-d eigenvectors by subspace iteration (kIterations products with the
// n x n squared distances per side), up to 48 nearest-neighbour maps (n k d each) and map
// objectives (n^2 each), and an entropic plan per candidate that runs (as the profiles start).
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "solver/exact/exact_gw_impl.h"
#include "solver/exact/profile_starts_impl.h"
#include "solver/solver_impl.h"

namespace gw::detail {

template <typename S>
class SpectralStarts {
 public:
  // Embedding dimensions: three axes, the body plan of a shape (length, width, height).
  static constexpr int kDims = 3;
  // Subspace iterations of each side's top eigenvectors (their convergence factor is the ratio
  // of the 4th to the 3rd eigenvalue per iteration; a start needs the axes, not their digits).
  static constexpr int kIterations = 25;
  // Source rows over which a map's objective is summed (all of them up to this many): the
  // patterns are ranked against each other, on the same rows, so an n-fold cheaper sum serves.
  static constexpr Index kObjectiveRows = 256;

  SpectralStarts(const PreparedProblem& pb, const Options& options, const ExactGw<S>& gw)
      : pb_(pb), options_(options), gw_(gw) {}

  // The objective F of candidate `which` (0: the best sign pattern, 1: the best of the other
  // handedness) as its nearest-neighbour map: (1 - w) map GW loss + w sum_i p_i C_i,m(i).
  double objective(int which) {
    if (patterns_.empty()) rank();
    return objectives_[which];
  }

  // The share of source mass that matchings `a` and `b` (source node -> target node) send within
  // kAgreementRadius of each other (in the max-normalized target distances): how much two plans
  // with these argmax matchings agree on where the shape goes.
  static constexpr double kAgreementRadius = 0.05;
  double agreement(const std::vector<Index>& a, const std::vector<Index>& b) const {
    double share = 0.0;
    for (Index i = 0; i < pb_.n; ++i)
      if (static_cast<double>(gw_.dy()(a[i], b[i])) <= kAgreementRadius) share += pb_.p[i];
    return share;
  }

  // Candidate `which`'s nearest-neighbour map.
  const std::vector<Index>& map(int which) {
    if (patterns_.empty()) rank();
    return maps_[which];
  }

  // The entropic plan between the embeddings under candidate `which`'s sign pattern, as
  // ProfileStarts::entropic builds one from profiles; with `log_plan`, its log entry by entry.
  std::vector<double> entropic(int which, std::vector<double>* log_plan = nullptr) {
    if (patterns_.empty()) rank();
    const Index n = pb_.n, k = pb_.k;
    const Mat<double> y = transformed(patterns_[which]);
    Mat<double> cost(n, k);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < k; ++j) cost(i, j) = (x_.row(i) - y.row(j)).squaredNorm();
    return entropic_plan(cost, pb_, options_, log_plan, "orientation");
  }

 private:
  // An orthogonal map of the target's embedding axes: axis a of the result is
  // sign[a] * axis order[a] of the target's.
  struct Pattern {
    std::array<int, kDims> order{};
    std::array<double, kDims> sign{};
    // 0 or 1: whether the map reverses orientation (odd reflections, odd exchanges).
    int handedness() const {
      int odd = 0;
      for (int a = 0; a < kDims; ++a) odd ^= sign[a] < 0 ? 1 : 0;
      for (int a = 0; a < kDims; ++a)
        for (int b = a + 1; b < kDims; ++b) odd ^= order[a] > order[b] ? 1 : 0;
      return odd;
    }
  };

  // Axes whose eigenvalues are within this ratio may come in either order on the two sides.
  static constexpr double kCloseAxes = 0.7;

  // Every sign pattern of every axis order that exchanges only close axes (on both sides).
  std::vector<Pattern> patterns() const {
    std::vector<Pattern> out;
    std::array<int, kDims> order;
    for (int a = 0; a < kDims; ++a) order[a] = a;
    do {
      bool allowed = true;
      for (int a = 0; a < kDims; ++a) {
        const int b = order[a];
        if (a == b) continue;
        for (const Eigen::Vector<double, kDims>* values : {&x_values_, &y_values_}) {
          const double lo = std::min((*values)[a], (*values)[b]);
          const double hi = std::max((*values)[a], (*values)[b]);
          if (!(lo >= kCloseAxes * hi)) allowed = false;
        }
      }
      if (!allowed) continue;
      for (int bits = 0; bits < (1 << kDims); ++bits) {
        Pattern p;
        p.order = order;
        for (int a = 0; a < kDims; ++a) p.sign[a] = (bits >> a) & 1 ? -1.0 : 1.0;
        out.push_back(p);
      }
    } while (std::next_permutation(order.begin(), order.end()));
    return out;
  }

  // The target's embedding under pattern p (k x kDims).
  Mat<double> transformed(const Pattern& p) const {
    Mat<double> y(y_.rows(), kDims);
    for (int a = 0; a < kDims; ++a) y.col(a) = p.sign[a] * y_.col(p.order[a]);
    return y;
  }

  // The top kDims classical-MDS coordinates of a side: rows scaled by sqrt(eigenvalue).
  static Mat<double> embed(const Mat<S>& d, std::uint64_t stream,
                           Eigen::Vector<double, kDims>& values) {
    const Index n = d.rows();
    const Mat<double> d2 = d.template cast<double>().cwiseAbs2();
    Rng rng(17, stream);
    Mat<double> v(n, kDims);
    for (Index i = 0; i < n; ++i)
      for (int a = 0; a < kDims; ++a) v(i, a) = rng.uniform() - 0.5;
    // B w = -1/2 J D^2 J w; the iterates are kept centred, so J w = w.
    auto apply = [&](const Mat<double>& w) {
      Mat<double> out = -0.5 * (d2 * w);
      out.rowwise() -= out.colwise().mean();
      return out;
    };
    auto orthonormal = [](Mat<double> w) {
      w.rowwise() -= w.colwise().mean();
      Eigen::HouseholderQR<Mat<double>> qr(w);
      return Mat<double>(qr.householderQ() * Mat<double>::Identity(w.rows(), w.cols()));
    };
    v = orthonormal(v);
    for (int it = 0; it < kIterations; ++it) v = orthonormal(apply(v));
    // Rayleigh-Ritz: the eigenpairs within the subspace.
    const Mat<double> bv = apply(v);
    const Eigen::Matrix<double, kDims, kDims> h = v.transpose() * bv;
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, kDims, kDims>> eig(0.5 * (h + h.transpose()));
    // Eigen orders the eigenvalues ascending; the axes here go from the largest down.
    Mat<double> out(n, kDims);
    for (int a = 0; a < kDims; ++a) {
      const int from = kDims - 1 - a;
      values[a] = std::max(eig.eigenvalues()[from], 0.0);
      out.col(a) = (v * eig.eigenvectors().col(from)) * std::sqrt(values[a]);
    }
    return out;
  }

  // The GW loss of a map m (source node i to target node m[i], mass p_i), summed over the rows
  // rows_ (every kObjectiveRows-th share of the source, scaled to the whole):
  // sum_i p_i sum_l p_l (dx_il - dy_m(i)m(l))^2.
  double map_loss(const std::vector<Index>& m) const {
    const Index n = pb_.n;
    const Mat<S>& dx = gw_.dx();
    const Mat<S>& dy = gw_.dy();
    const Index rows = static_cast<Index>(rows_.size());
    double total = 0.0, mass = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total, mass)
    for (Index r = 0; r < rows; ++r) {
      const Index i = rows_[r];
      double row = 0.0;
      for (Index l = 0; l < n; ++l) {
        const double diff = static_cast<double>(dx(i, l)) - static_cast<double>(dy(m[i], m[l]));
        row += pb_.p[l] * diff * diff;
      }
      total += pb_.p[i] * row;
      mass += pb_.p[i];
    }
    return mass > 0.0 ? total / mass : 0.0;
  }

  // Ranks the patterns by the objective of their nearest-neighbour maps and keeps the best one and
  // the best one of the other handedness.
  void rank() {
    const Index stride = std::max<Index>(1, pb_.n / kObjectiveRows);
    for (Index i = 0; i < pb_.n; i += stride) rows_.push_back(i);
    x_ = embed(gw_.dx(), 1, x_values_);
    y_ = embed(gw_.dy(), 2, y_values_);
    const Index n = pb_.n, k = pb_.k;
    const std::vector<Pattern> all = patterns();
    std::vector<double> objective(all.size());
    std::vector<std::vector<Index>> maps(all.size());
    for (std::size_t c = 0; c < all.size(); ++c) {
      const Mat<double> y = transformed(all[c]);
      std::vector<Index> m(n);
#pragma omp parallel for schedule(static)
      for (Index i = 0; i < n; ++i) {
        double best = std::numeric_limits<double>::infinity();
        for (Index j = 0; j < k; ++j) {
          const double d = (x_.row(i) - y.row(j)).squaredNorm();
          if (d < best) best = d, m[i] = j;
        }
      }
      objective[c] = map_objective(m);
      maps[c] = std::move(m);
    }
    std::size_t best = 0;
    for (std::size_t c = 1; c < all.size(); ++c)
      if (objective[c] < objective[best]) best = c;
    std::size_t other = all.size();
    for (std::size_t c = 0; c < all.size(); ++c) {
      if (all[c].handedness() == all[best].handedness()) continue;
      if (other == all.size() || objective[c] < objective[other]) other = c;
    }
    patterns_ = {all[best], all[other]};
    objectives_ = {objective[best], objective[other]};
    maps_ = {std::move(maps[best]), std::move(maps[other])};
  }

  // map_loss fused with the feature cost of the map's pairs as in F.
  double map_objective(const std::vector<Index>& m) const {
    const double w = options_.fused_weight;
    double value = (1.0 - w) * map_loss(m);
    if (w > 0.0 && pb_.feature_cost != nullptr) {
      double feature = 0.0;
      for (Index i = 0; i < pb_.n; ++i) feature += pb_.p[i] * (*pb_.feature_cost)(i, m[i]);
      value += w * feature;
    }
    return value;
  }

  const PreparedProblem& pb_;
  const Options& options_;
  const ExactGw<S>& gw_;
  Mat<double> x_, y_;          // n x kDims and k x kDims embeddings, largest axis first
  Eigen::Vector<double, kDims> x_values_, y_values_;  // their eigenvalues
  std::vector<Index> rows_;  // the source rows of map_loss
  std::vector<Pattern> patterns_;  // the best pattern, then the best of the other handedness
  std::vector<double> objectives_;  // their maps' objectives
  std::vector<std::vector<Index>> maps_;  // their nearest-neighbour maps (n entries each)
};

}  // namespace gw::detail
