// ExactGw, the state of the exact-gradient solver (solver/exact/exact.cpp) on dense distance matrices:
// the plan T, the product A = dx T dy that the objective, the gradient and the line search share,
// and the ways to set T with A computed cheaply. In a header so that the tests can check every way
// of setting a plan against set_plan's two dense GEMMs (tests/solver/exact_test.cpp).
#pragma once

#include <Eigen/Core>

#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "core/types.h"
#include "solver/gw_cost_kernels_impl.h"

namespace gw::detail {

template <typename S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One vertex of the transport polytope as a list of entries, each cell at most once.
struct Vertex {
  std::vector<Index> rows, cols;
  std::vector<double> values;
};

template <typename S>
class ExactGw {
 public:
  // dx, dy: symmetric, row-major; feature: n x k or null.
  ExactGw(Mat<S> dx,
          Mat<S> dy,
          std::span<const double> p,
          std::span<const double> q,
          const double* feature,
          double fused_weight)
      : n_(static_cast<Index>(dx.rows())),
        k_(static_cast<Index>(dy.rows())),
        dx_(std::move(dx)),
        dy_(std::move(dy)),
        p_(p.begin(), p.end()),
        q_(q.begin(), q.end()),
        w_(fused_weight) {
    feature_ptr_ = feature;
    if (feature != nullptr && w_ > 0.0) {
      feature_ = Eigen::Map<const Mat<double>>(feature, n_, k_).template cast<S>();
    }
  }

  Index n() const { return n_; }
  const Mat<S>& dx() const { return dx_; }
  const Mat<S>& dy() const { return dy_; }
  const double* feature_f64() const { return feature_ptr_; }
  Index k() const { return k_; }
  const Mat<S>& plan() const { return t_; }
  // The plan for in-place writes; call update_product() after changing it.
  Mat<S>& mutable_plan() {
    plan_sparse_ = false;
    return t_;
  }
  std::span<const double> p() const { return p_; }
  std::span<const double> q() const { return q_; }

  void set_plan(std::span<const double> plan) {
    t_ = Eigen::Map<const Mat<double>>(plan.data(), n_, k_).template cast<S>();
    plan_sparse_ = false;
    update_product();
  }
  // A plan with few nonzeros (a vertex; at most about n + k): A = dx T dy by one GEMM after a
  // sparse pass instead of two dense GEMMs. A plan with more than 4 (n + k) nonzeros (e.g. after
  // a rounding correction) goes through set_plan, whose cost does not grow with them.
  void set_sparse_plan(std::span<const double> plan) {
    const auto nonzeros = static_cast<std::size_t>(
        std::count_if(plan.begin(), plan.end(), [](double v) { return v != 0.0; }));
    if (nonzeros > 4 * static_cast<std::size_t>(n_ + k_)) {
      set_plan(plan);
      return;
    }
    t_ = Eigen::Map<const Mat<double>>(plan.data(), n_, k_).template cast<S>();
    Vertex s;
    for (Index i = 0; i < n_; ++i)
      for (Index j = 0; j < k_; ++j) {
        const double v = plan[static_cast<std::size_t>(i) * k_ + j];
        if (v != 0.0) {
          s.rows.push_back(i);
          s.cols.push_back(j);
          s.values.push_back(v);
        }
      }
    vertex_product(s);
    a_.swap(v_);
    has_previous_ = false;  // v_ now holds the old A, not dx S dy of the last vertex
    set_support(s);
  }
  // The product plan T = p q^T: A = (dx p)(dy q)^T, two matrix-vector products.
  void set_product_plan() {
    const Eigen::Map<const Eigen::VectorXd> p(p_.data(), n_), q(q_.data(), k_);
    t_ = (p * q.transpose()).template cast<S>();
    plan_sparse_ = false;
    const Eigen::VectorXd xp = dx_.template cast<double>() * p;
    const Eigen::VectorXd yq = dy_.template cast<double>() * q;
    a_ = (xp * yq.transpose()).template cast<S>();
  }
  // A plan and its product A = dx T dy saved earlier from this object (plan_f64(), product()).
  void restore(std::span<const double> plan, Mat<S> product) {
    t_ = Eigen::Map<const Mat<double>>(plan.data(), n_, k_).template cast<S>();
    plan_sparse_ = false;
    a_ = std::move(product);
  }
  const Mat<S>& product() const { return a_; }
  std::vector<double> plan_f64() const {
    std::vector<double> out(static_cast<std::size_t>(n_) * k_);
    Eigen::Map<Mat<double>>(out.data(), n_, k_) = t_.template cast<double>();
    return out;
  }

  // Conditional gradient keeps the plan on the transport polytope, where its marginals are p and
  // q (to rounding): the marginal terms r = p, c = q, dx^2 p, dy^2 q are then constants, and a
  // vertex's marginals equal the plan's, so the line search's marginal term Q vanishes. While on,
  // objective() and segment() use these instead of summing the plan (row sums and four squared
  // products per iteration were ~5% of a 150-node pair in `gwalign pairwise`, issue 14). Only for
  // plans on the polytope: mirror descent's entropic plans are not.
  void set_on_polytope(bool on) {
    if (on && !polytope_terms_) {
      pr_ = Eigen::Map<const Eigen::VectorXd>(p_.data(), n_);
      pc_ = Eigen::Map<const Eigen::VectorXd>(q_.data(), k_);
      prx_ = squared_times(dx_, pr_);
      pcy_ = squared_times(dy_, pc_);
      polytope_terms_ = true;
    }
    on_polytope_ = on;
  }

  // F(T), with T's own marginals (exact for any plan) unless set_on_polytope(true).
  double objective() {
    if (on_polytope_) {
      r_ = pr_;
      c_ = pc_;
      rx_ = prx_;
      cy_ = pcy_;
    } else {
      marginal_terms();
    }
    const double cross = plan_dot(a_);
    const double linear = feature_.size() != 0 ? plan_dot(feature_) : 0.0;
    const double loss = r_.dot(rx_) + c_.dot(cy_) - 2.0 * cross;
    loss_ = loss;
    return (1.0 - w_) * loss + w_ * linear;
  }
  // The pure GW loss of the last objective() call.
  double loss() const { return loss_; }

  // dF/dT into grad_ (after objective(), which sets the marginal terms).
  // Row by row in the dispatched kernel (gw_cost_isa.cpp).
  const Mat<S>& gradient() {
    grad_.resize(n_, k_);
    const double gw = 2.0 * (1.0 - w_);
    const auto gradient_row = gw_cost_kernels().gradient_row<S>();
    for (Index i = 0; i < n_; ++i) {
      const std::size_t base = static_cast<std::size_t>(i) * k_;
      const S* c = feature_.size() ? feature_.data() + base : nullptr;
      gradient_row(a_.data() + base, cy_.data(), c, rx_[i], gw, w_, grad_.data() + base, k_);
    }
    return grad_;
  }

  const Mat<S>& gradient_matrix() const { return grad_; }
  // dx S dy of the last segment()'s vertex S.
  const Mat<S>& vertex_product_matrix() const { return v_; }

  // Coefficients of F(T + alpha (S - T)) = F(T) + a alpha + b alpha^2 for a vertex S, computing
  // v_ = dx S dy on the way. Needs gradient() of the current plan.
  std::pair<double, double> segment(const Vertex& s) {
    vertex_product(s);
    // D = S - T; <G, D>; <dx D dy, D> = <V - A, S - T>; the marginal terms of Q(D, D).
    double g_s = 0.0, v_s = 0.0, a_s = 0.0;
    for (std::size_t e = 0; e < s.values.size(); ++e) {
      const std::size_t at = static_cast<std::size_t>(s.rows[e]) * k_ + s.cols[e];
      g_s += s.values[e] * static_cast<double>(grad_.data()[at]);
      v_s += s.values[e] * static_cast<double>(v_.data()[at]);
      a_s += s.values[e] * static_cast<double>(a_.data()[at]);
    }
    const double g_t = plan_dot(grad_);
    const double v_t = plan_dot(v_);
    const double a_t = plan_dot(a_);
    double quad_marg = 0.0;  // on the polytope D = S - T has zero marginals
    if (!on_polytope_) {
      std::vector<double> rd(n_), cd(k_);
      for (std::size_t e = 0; e < s.values.size(); ++e) {
        rd[s.rows[e]] += s.values[e];
        cd[s.cols[e]] += s.values[e];
      }
      for (Index i = 0; i < n_; ++i) rd[i] -= r_[i];
      for (Index j = 0; j < k_; ++j) cd[j] -= c_[j];
      quad_marg = square_form(dx_, rd) + square_form(dy_, cd);
    }
    const double cross = v_s - v_t - a_s + a_t;  // <dx D dy, D>
    const double a = g_s - g_t;
    const double b = (1.0 - w_) * (quad_marg - 2.0 * cross);
    return {a, b};
  }

  // T <- (1 - alpha) T + alpha S, and dx T dy with it (from v_ of the last segment()).
  void step(const Vertex& s, double alpha) {
    const S keep = static_cast<S>(1.0 - alpha);
    gw_cost_kernels().step<S>()(t_.data(),
                                a_.data(),
                                v_.data(),
                                keep,
                                static_cast<S>(alpha),
                                static_cast<std::int64_t>(t_.size()));
    for (std::size_t e = 0; e < s.values.size(); ++e) {
      t_(s.rows[e], s.cols[e]) += static_cast<S>(alpha * s.values[e]);
    }
    // A full step leaves exactly the vertex. On Euclidean distance matrices conditional gradient
    // takes only full steps: both matrices are conditionally negative definite, so <dx D dy, D>
    // >= 0 for every D with zero marginals and F is concave on the polytope.
    if (alpha == 1.0) {
      set_support(s);
    } else {
      plan_sparse_ = false;
    }
  }

  // A = dx T dy for the current dense plan: Z = T dy (dy symmetric), then dx Z.
  void update_product() {
    z_.resize(n_, k_);
    gw_cost_kernels().gemm_abt<S>()(t_.data(), dy_.data(), n_, k_, k_, z_.data(), k_);
    a_.resize(n_, k_);
    gw_cost_kernels().gemm<S>()(dx_.data(), false, z_.data(), n_, k_, n_, a_.data(), k_, false);
  }

 private:
  // <X, T>: over T's support when T is a vertex (~n + k cells instead of n k; four such dots per
  // conditional-gradient iteration were ~3% of a 150-node pair in `gwalign pairwise`, issue 14),
  // else one whole-matrix dot (the n x k matrices are contiguous).
  double plan_dot(const Mat<S>& x) const {
    if (plan_sparse_) {
      double sum = 0.0;
      for (const std::size_t at : support_) {
        sum += static_cast<double>(x.data()[at]) * static_cast<double>(t_.data()[at]);
      }
      return sum;
    }
    return gw_cost_kernels().dot<S>()(x.data(), t_.data(), static_cast<std::int64_t>(t_.size()));
  }
  void set_support(const Vertex& s) {
    support_.resize(s.values.size());
    for (std::size_t e = 0; e < s.values.size(); ++e) {
      support_[e] = static_cast<std::size_t>(s.rows[e]) * k_ + s.cols[e];
    }
    plan_sparse_ = true;
  }

  // x^T (d o d) x for a symmetric matrix d.
  static double square_form(const Mat<S>& d, const std::vector<double>& x) {
    const Eigen::VectorXd dx2 =
        squared_times(d, Eigen::Map<const Eigen::VectorXd>(x.data(), std::ssize(x)));
    double total = 0.0;
    for (Index i = 0; i < static_cast<Index>(x.size()); ++i) total += x[i] * dx2[i];
    return total;
  }

  // r_, c_ (the plan's marginals), rx_ = dx^2 r, cy_ = dy^2 c.
  void marginal_terms() {
    r_ = Eigen::VectorXd::Zero(n_);
    c_ = Eigen::VectorXd::Zero(k_);
    const auto row_sum_add = gw_cost_kernels().row_sum_add<S>();
    for (Index i = 0; i < n_; ++i) {
      r_[i] = row_sum_add(t_.data() + static_cast<std::size_t>(i) * k_, c_.data(), k_);
    }
    rx_ = squared_times(dx_, r_);
    cy_ = squared_times(dy_, c_);
  }
  // (d o d) x for a symmetric d. Up to kAxpyRows rows as a sum of rows scaled by x (independent
  // lanes, the output in L1; rows where x is 0 skipped); larger ones as one dot per row, across
  // threads. A dot per row of ~150 entries was one chain of dependent vector adds: ~4% of a pair
  // in `gwalign pairwise` (bench/RESULTS.md, issue 14).
  template <typename Vector>
  static Eigen::VectorXd squared_times(const Mat<S>& d, const Vector& x) {
    constexpr Index kAxpyRows = 1024;
    const Index m = static_cast<Index>(d.rows());
    Eigen::VectorXd out = Eigen::VectorXd::Zero(m);
    if (m <= kAxpyRows) {
      const auto square_axpy = gw_cost_kernels().square_axpy<S>();
      for (Index i = 0; i < m; ++i) {
        if (x[i] != 0.0) {
          square_axpy(d.data() + static_cast<std::size_t>(i) * m, x[i], out.data(), m);
        }
      }
      return out;
    }
    const auto square_dot = gw_cost_kernels().square_dot<S>();
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < m; ++i) {
      out[i] = square_dot(d.data() + static_cast<std::size_t>(i) * m, x.data(), m);
    }
    return out;
  }

  // v_ = dx S dy for a sparse S. From the previous vertex's product when fewer than half of
  // min(n, k) rows changed: v_ += dx (S - S_prev) dy, one GEMM of n k m multiply-adds for m
  // changed rows (consecutive conditional-gradient vertices share most rows: on the spiral's
  // 400 x 500, 0-160 of 400 rows changed per iteration); else one GEMM of n k min(n, k).
  // The chain of incremental updates restarts from a full product every kMaxIncremental steps,
  // so rounding cannot pile up (it stays ~1e-15 relative in double, ~1e-6 in float).
  void vertex_product(const Vertex& s) {
    if (has_previous_ && incremental_steps_ < kMaxIncremental && incremental_product(s)) {
      previous_ = s;
      ++incremental_steps_;
      return;
    }
    full_vertex_product(s);
    previous_ = s;
    has_previous_ = true;
    incremental_steps_ = 0;
  }
  static constexpr int kMaxIncremental = 16;

  // The incremental path of vertex_product; false, with v_ untouched, when too many rows differ
  // or an entry list is not in row order.
  bool incremental_product(const Vertex& s) {
    const Vertex& prev = previous_;
    const auto row_ordered = [](const Vertex& v) {
      return std::is_sorted(v.rows.begin(), v.rows.end());
    };
    if (!row_ordered(s) || !row_ordered(prev)) return false;
    // Rows whose entries differ, with S - S_prev's entries of each.
    changed_.clear();
    delta_.clear();
    std::size_t a = 0, b = 0;
    const std::size_t na = s.values.size(), nb = prev.values.size();
    const std::size_t limit = static_cast<std::size_t>(std::min(n_, k_) / 2);
    while (a < na || b < nb) {
      const Index row = std::min(a < na ? s.rows[a] : n_, b < nb ? prev.rows[b] : n_);
      std::size_t a_end = a, b_end = b;
      while (a_end < na && s.rows[a_end] == row) ++a_end;
      while (b_end < nb && prev.rows[b_end] == row) ++b_end;
      bool same = a_end - a == b_end - b;
      for (std::size_t e = 0; same && e < a_end - a; ++e) {
        same = s.cols[a + e] == prev.cols[b + e] && s.values[a + e] == prev.values[b + e];
      }
      if (!same) {
        if (changed_.size() == limit) return false;
        const Index slot = static_cast<Index>(changed_.size());
        changed_.push_back(row);
        for (std::size_t e = a; e < a_end; ++e) delta_.push_back({slot, s.cols[e], s.values[e]});
        for (std::size_t e = b; e < b_end; ++e)
          delta_.push_back({slot, prev.cols[e], -prev.values[e]});
      }
      a = a_end;
      b = b_end;
    }
    const Index m = static_cast<Index>(changed_.size());
    if (m == 0) return true;  // the same vertex: v_ stands
    // v_ += L R with L (n x m): column t is dx's column changed_[t] (= its row: dx is symmetric),
    // held as L^T (m x n, row t = that row); R (m x k): row t is row t of (S - S_prev) dy. Both
    // are built by contiguous row copies and adds.
    left_.resize(m, n_);
    for (Index t = 0; t < m; ++t) {
      const S* row = dx_.data() + static_cast<std::size_t>(changed_[t]) * n_;
      std::copy(row, row + n_, left_.data() + static_cast<std::size_t>(t) * n_);
    }
    right_.setZero(m, k_);
    for (const DeltaEntry& d : delta_) {
      const S v = static_cast<S>(d.value);
      const S* row = dy_.data() + static_cast<std::size_t>(d.col) * k_;
      S* out = right_.data() + static_cast<std::size_t>(d.slot) * k_;
      for (Index l = 0; l < k_; ++l) out[l] += v * row[l];
    }
    gw_cost_kernels().gemm<S>()(left_.data(),
                                /*transpose_left=*/true,
                                right_.data(),
                                n_,
                                k_,
                                m,
                                v_.data(),
                                k_,
                                /*accumulate=*/true);
    return true;
  }

  // v_ = dx S dy for a sparse S, as one GEMM of n k min(n, k) multiply-adds after a pass that
  // builds the sparse side's factor by contiguous row adds.
  void full_vertex_product(const Vertex& s) {
    const auto gemm = gw_cost_kernels().gemm<S>();
    v_.resize(n_, k_);
    if (n_ <= k_) {
      // W = S dy (n x k): row i gathers v dy.row(j) over S's entries (i, j, v); v_ = dx W.
      z_.setZero(n_, k_);
      for (std::size_t e = 0; e < s.values.size(); ++e) {
        const S v = static_cast<S>(s.values[e]);
        const S* row = dy_.data() + static_cast<std::size_t>(s.cols[e]) * k_;
        S* out = z_.data() + static_cast<std::size_t>(s.rows[e]) * k_;
        for (Index l = 0; l < k_; ++l) out[l] += v * row[l];
      }
      gemm(dx_.data(), false, z_.data(), n_, k_, n_, v_.data(), k_, false);
    } else {
      // Z^T = (dx S)^T (k x n): row j gathers v dx.row(i) over S's entries (i, j, v) (dx is
      // symmetric); v_ = Z dy.
      zt_.setZero(k_, n_);
      for (std::size_t e = 0; e < s.values.size(); ++e) {
        const S v = static_cast<S>(s.values[e]);
        const S* row = dx_.data() + static_cast<std::size_t>(s.rows[e]) * n_;
        S* out = zt_.data() + static_cast<std::size_t>(s.cols[e]) * n_;
        for (Index l = 0; l < n_; ++l) out[l] += v * row[l];
      }
      gemm(zt_.data(), true, dy_.data(), n_, k_, k_, v_.data(), k_, false);
    }
  }

  Index n_, k_;
  Mat<S> dx_, dy_, feature_;
  std::vector<double> p_, q_;
  double w_;
  Mat<S> t_, a_, v_, grad_, z_, zt_;
  // The incremental vertex product: the last vertex (v_ = dx previous_ dy while has_previous_),
  // and scratch for the changed rows.
  struct DeltaEntry {
    Index slot, col;
    double value;
  };
  Vertex previous_;
  bool has_previous_ = false;
  int incremental_steps_ = 0;
  std::vector<Index> changed_;
  std::vector<DeltaEntry> delta_;
  Mat<S> left_, right_;
  Eigen::VectorXd r_, c_, rx_, cy_;
  bool on_polytope_ = false, polytope_terms_ = false;
  bool plan_sparse_ = false;             // t_ is zero outside support_ (a vertex)
  std::vector<std::size_t> support_;     // flat indices of a vertex plan's cells
  Eigen::VectorXd pr_, pc_, prx_, pcy_;  // the marginal terms of p and q (set_on_polytope)
  double loss_ = 0.0;
  const double* feature_ptr_ = nullptr;
};

}  // namespace gw::detail
