// Putting a plan on the transport polytope (Options::round_marginals) and measuring how far it is.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/context.h"
#include "solver/solver_impl.h"

namespace gw::detail {

namespace {

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

}  // namespace

void project_to_marginals(std::vector<double>& plan,
                          const std::vector<double>& p,
                          const std::vector<double>& q) {
  scale_to_marginals(plan, p, q, /*tolerance=*/1e-7, /*max_sweeps=*/30);
  round_to_marginals(plan, p, q);
}

MarginalErrors marginal_errors(const std::vector<double>& plan,
                               const std::vector<double>& p,
                               const std::vector<double>& q) {
  const Index n = static_cast<Index>(p.size()), k = static_cast<Index>(q.size());
  std::vector<double> col(k, 0.0);
  MarginalErrors errors;
  for (Index i = 0; i < n; ++i) {
    const double* t = plan.data() + static_cast<std::size_t>(i) * k;
    double row = 0.0;
    for (Index j = 0; j < k; ++j) {
      row += t[j];
      col[j] += t[j];
    }
    errors.rows += std::abs(row - p[i]);
  }
  for (Index j = 0; j < k; ++j) errors.columns += std::abs(col[j] - q[j]);
  return errors;
}

}  // namespace gw::detail
