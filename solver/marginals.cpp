// Putting a plan on the transport polytope (Options::round_marginals) and measuring how far it is.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "solver/gw_cost_kernels_impl.h"
#include "solver/solver_impl.h"

namespace gw::detail {

namespace {

// Rows per block of the column sums: the partial sums take n k / kRowBlock doubles, and a block
// of rows is the unit of work, so its size (not the thread count) fixes the summation order.
constexpr Index kRowBlock = 256;
// Columns per block: a block's partial sums stay in L1/L2 while its rows stream through.
constexpr Index kColumnBlock = 4096;

// Scaling stops when a sweep removes less than this fraction of the column error.
constexpr double kMinSweepProgress = 0.01;

double row_sum(const double* t, Index k) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (Index j = 0; j < k; ++j) sum += t[j];
  return sum;
}

// One pass over the plan: fn(i, row) updates each row in place, and the updated rows' column sums
// land in cols. The rows run in fixed blocks of kRowBlock (the unit of work), each block summing
// into its own slice of `partial`, and the slices are added in block order: the sums depend on n
// and k alone, not on the thread count. The row is still in cache when it is summed, so the pass
// reads and writes the plan once.
template <typename RowFn>
void update_rows_and_sum_columns(std::vector<double>& plan,
                                 Index n,
                                 Index k,
                                 std::vector<double>& partial,
                                 std::vector<double>& cols,
                                 RowFn&& fn) {
  const Index blocks = std::max<Index>(1, (n + kRowBlock - 1) / kRowBlock);
  partial.assign(static_cast<std::size_t>(blocks) * k, 0.0);
  const AddFn add = gw_cost_kernels().add;
#pragma omp parallel for schedule(static)
  for (Index b = 0; b < blocks; ++b) {
    double* sums = partial.data() + static_cast<std::size_t>(b) * k;
    for (Index i = b * kRowBlock; i < std::min(n, (b + 1) * kRowBlock); ++i) {
      double* t = plan.data() + static_cast<std::size_t>(i) * k;
      fn(i, t);
      add(sums, t, k);
    }
  }
  std::fill(cols.begin(), cols.end(), 0.0);
  for (Index b = 0; b < blocks; ++b) add(cols.data(), partial.data() + static_cast<std::size_t>(b) * k, k);
}

// t *= factor (elementwise) and the row's new mass, in the dispatched kernel (gw_cost_isa.cpp).
double scale_row(double* t, const double* factor, Index k) {
  return gw_cost_kernels().scale_row(t, factor, k);
}

// The sweeps both layouts run (Sinkhorn-Knopp scaling of the plan itself toward (p, q)). Each
// sweep is one pass: `pass(factor)` applies the pending column factors to every row, rescales the
// row to p_i and returns the updated plan's column sums; the next factors are q_j / column sum.
// It stops when the column error falls below `tolerance` (rows are exact after their pass), when
// a sweep after the first min_sweeps removes less than kMinSweepProgress of it (stalled: a plan
// whose mass sits far from some columns converges geometrically at a rate near 1; one spiral
// solve took 30 sweeps from 0.0041 to 0.0039), or after max_sweeps. Rows or columns of zero mass
// are left alone. Returns the last column factors, not applied.
template <typename Pass>
std::vector<double> sinkhorn_knopp_sweeps(std::span<const double> q,
                                          double tolerance,
                                          int max_sweeps,
                                          int min_sweeps,
                                          Pass&& pass) {
  const Index k = static_cast<Index>(q.size());
  std::vector<double> factor(k, 1.0);
  double previous_error = std::numeric_limits<double>::infinity();
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    const std::vector<double>& col = pass(factor);
    double error = 0.0;
    for (Index j = 0; j < k; ++j) {
      error += std::abs(col[j] - q[j]);
      factor[j] = col[j] > 0.0 ? q[j] / col[j] : 1.0;
    }
    if (error < tolerance ||
        (sweep >= min_sweeps && error > (1.0 - kMinSweepProgress) * previous_error)) {
      break;
    }
    previous_error = error;
  }
  return factor;
}

// Puts the plan on the transport polytope in place. First Sinkhorn-Knopp scaling of the plan
// itself towards (p, q), one pass per sweep: each row applies the pending column factors,
// rescales to p_i and adds to the column sums that give the next factors; it stops when the column
// error falls below `tolerance` (rows are exact after their pass), when a sweep removes less than
// 1% of it (stalled), or after max_sweeps. Rows or columns of zero mass are left alone. Then the
// Altschuler-Weed-Rigollet rounding onto {T >= 0 : T 1 = p, T^T 1 = q} (see
// Options::round_marginals): rows above p_i scaled down (the last column factors applied in the
// same pass), columns above q_j scaled down, and the row deficits times the column deficits /
// total deficit added. Three passes after the sweeps.
void scale_and_round(std::vector<double>& plan,
                     const std::vector<double>& p,
                     const std::vector<double>& q,
                     double tolerance,
                     int max_sweeps) {
  const Index n = static_cast<Index>(p.size()), k = static_cast<Index>(q.size());
  std::vector<double> col(k), partial;
  const std::vector<double> col_factor = sinkhorn_knopp_sweeps(
      q, tolerance, max_sweeps, /*min_sweeps=*/0,
      [&](const std::vector<double>& factor) -> const std::vector<double>& {
        update_rows_and_sum_columns(plan, n, k, partial, col, [&](Index i, double* t) {
          const double mass = scale_row(t, factor.data(), k);
          if (mass <= 0.0) return;
          gw_cost_kernels().scale(t, p[i] / mass, k);
        });
        return col;
      });
  // Rounding, pass 1: the last column factors, then rows above p_i scaled down to it.
  update_rows_and_sum_columns(plan, n, k, partial, col, [&](Index i, double* t) {
    const double mass = scale_row(t, col_factor.data(), k);
    if (mass > p[i]) gw_cost_kernels().scale(t, p[i] / mass, k);
  });
  // Pass 2: columns above q_j scaled down; each row's deficit below p_i.
  std::vector<double> col_scale(k), row_deficit(n, 0.0), col_deficit(k);
  for (Index j = 0; j < k; ++j) col_scale[j] = col[j] > q[j] ? q[j] / col[j] : 1.0;
  update_rows_and_sum_columns(plan, n, k, partial, col, [&](Index i, double* t) {
    row_deficit[i] = std::max(0.0, p[i] - scale_row(t, col_scale.data(), k));
  });
  // Pass 3: the deficits' outer product / total deficit fills both marginals exactly.
  double deficit = 0.0;
  for (Index j = 0; j < k; ++j) col_deficit[j] = std::max(0.0, q[j] - col[j]);
  for (double d : row_deficit) deficit += d;
  if (!(deficit > 0.0)) return;
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    if (row_deficit[i] == 0.0) continue;
    double* t = plan.data() + static_cast<std::size_t>(i) * k;
    const double* add = col_deficit.data();
    const double scale = row_deficit[i] / deficit;
#pragma omp simd
    for (Index j = 0; j < k; ++j) t[j] += scale * add[j];
  }
}

}  // namespace

void project_to_marginals(std::vector<double>& plan,
                          const std::vector<double>& p,
                          const std::vector<double>& q) {
  scale_and_round(plan, p, q, /*tolerance=*/1e-7, /*max_sweeps=*/30);
}

void scale_csr_to_marginals(const CsrPlan& plan,
                            std::span<const double> p,
                            std::span<const double> q,
                            double tolerance,
                            int max_sweeps) {
  constexpr int kMinCsrSweeps = 10;
  const Index n = plan.n, k = plan.k;
  std::vector<double> col(k);
  // One pass: the pending column factors and the row's rescaling to p_i entry by entry, the
  // column sums in per-thread arrays added in thread order.
  auto pass = [&](const std::vector<double>& factor) -> const std::vector<double>& {
    std::fill(col.begin(), col.end(), 0.0);
#pragma omp parallel
    {
      std::vector<double> local(k, 0.0);
#pragma omp for schedule(static) nowait
      for (Index i = 0; i < n; ++i) {
        const Offset begin = plan.offsets[i], end = plan.offsets[i + 1];
        double mass = 0.0;
        for (Offset e = begin; e < end; ++e) mass += (plan.values[e] *= factor[plan.cols[e]]);
        if (mass <= 0.0) continue;
        const double scale = p[i] / mass;
        for (Offset e = begin; e < end; ++e) local[plan.cols[e]] += (plan.values[e] *= scale);
      }
#pragma omp for ordered schedule(static, 1)
      for (int thread = 0; thread < omp_get_num_threads(); ++thread) {
#pragma omp ordered
        for (Index j = 0; j < k; ++j) col[j] += local[j];
      }
    }
    return col;
  };
  sinkhorn_knopp_sweeps(q, tolerance, max_sweeps, kMinCsrSweeps, pass);
}

void plan_row_sums(const double* plan, Index n, Index k, std::span<double> rows) {
  GW_CHECK(rows.size() == static_cast<std::size_t>(n),
           "plan_row_sums: " << rows.size() << " outputs for " << n << " rows");
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) rows[i] = row_sum(plan + static_cast<std::size_t>(i) * k, k);
}

void plan_column_sums(const double* plan, Index n, Index k, std::span<double> cols) {
  GW_CHECK(cols.size() == static_cast<std::size_t>(k),
           "plan_column_sums: " << cols.size() << " outputs for " << k << " columns");
  const Index row_blocks = std::max<Index>(1, (n + kRowBlock - 1) / kRowBlock);
  const Index col_blocks = (k + kColumnBlock - 1) / kColumnBlock;
  std::vector<double> partial(static_cast<std::size_t>(row_blocks) * k, 0.0);
#pragma omp parallel for collapse(2) schedule(static)
  for (Index rb = 0; rb < row_blocks; ++rb) {
    for (Index cb = 0; cb < col_blocks; ++cb) {
      const Index j0 = cb * kColumnBlock, j1 = std::min(k, j0 + kColumnBlock);
      double* sums = partial.data() + static_cast<std::size_t>(rb) * k;
      for (Index i = rb * kRowBlock; i < std::min(n, (rb + 1) * kRowBlock); ++i) {
        const double* t = plan + static_cast<std::size_t>(i) * k;
#pragma omp simd
        for (Index j = j0; j < j1; ++j) sums[j] += t[j];
      }
    }
  }
  std::fill(cols.begin(), cols.end(), 0.0);
  for (Index rb = 0; rb < row_blocks; ++rb) {
    const double* sums = partial.data() + static_cast<std::size_t>(rb) * k;
    for (Index j = 0; j < k; ++j) cols[j] += sums[j];
  }
}

PlanSums plan_sums(std::span<const double> plan, Index n, Index k) {
  PlanSums sums{std::vector<double>(n), std::vector<double>(k)};
  plan_row_sums(plan.data(), n, k, sums.rows);
  plan_column_sums(plan.data(), n, k, sums.cols);
  return sums;
}

MarginalErrors marginal_errors(const PlanSums& sums,
                               const std::vector<double>& p,
                               const std::vector<double>& q) {
  MarginalErrors errors;
  for (std::size_t i = 0; i < p.size(); ++i) errors.rows += std::abs(sums.rows[i] - p[i]);
  for (std::size_t j = 0; j < q.size(); ++j) errors.columns += std::abs(sums.cols[j] - q[j]);
  return errors;
}

}  // namespace gw::detail
