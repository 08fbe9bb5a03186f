#include "sinkhorn/sparse_sinkhorn.h"

#include <algorithm>
#include <cmath>

#include "core/context.h"
#include "core/error.h"
#include "sinkhorn/sinkhorn_common_impl.h"
#include "sinkhorn/sparse_sinkhorn_kernels_impl.h"

namespace gw {
namespace {

using detail::kInf;

// Two-pass log-sum-exp of base - cost[e] / epsilon over entries [begin, end) addressed through
// `at` (identity for rows, the transpose for columns), skipping partners whose scaled potential
// is -inf. NaN for a NaN / -inf cost, -inf for an empty sum. Two passes (max, then sum) instead of
// an online maximum: the entries of one row are few and hot in cache, and the sum pass then needs
// one exponential per entry.
template <typename Partner, typename Entry>
double support_lse(Offset begin,
                   Offset end,
                   const Partner& partner_scaled,
                   const Entry& entry_of,
                   std::span<const float> cost,
                   double inv_epsilon) {
  double max = -kInf;
  for (Offset p = begin; p < end; ++p) {
    const double v = partner_scaled(p);
    if (v == -kInf) continue;
    const double y = v - static_cast<double>(cost[entry_of(p)]) * inv_epsilon;
    if (std::isnan(y) || y == kInf) return std::nan("");
    max = std::max(max, y);
  }
  if (max == -kInf) return max;
  double sum = 0.0;
  for (Offset p = begin; p < end; ++p) {
    const double v = partner_scaled(p);
    if (v == -kInf) continue;
    sum += std::exp(v - static_cast<double>(cost[entry_of(p)]) * inv_epsilon - max);
  }
  return max + std::log(sum);
}

void check_lse(double lse, const char* what, Index index) {
  GW_CHECK_CODE(!std::isnan(lse),
                ErrorCode::kBadData,
                "sparse_sinkhorn: the cost has a NaN or -inf entry in " << what << " " << index);
  GW_CHECK_CODE(lse != -kInf,
                ErrorCode::kBadData,
                "sparse_sinkhorn: "
                    << what << " " << index
                    << " has positive mass but no finite-cost support entry towards a positive-mass "
                       "partner; cover every positive-mass row and column with the support");
}

void check_support(const SparseSupportView& s) {
  GW_CHECK(s.rows >= 0 && s.cols >= 0, "sparse support: negative shape");
  GW_CHECK(s.row_offsets.size() == static_cast<std::size_t>(s.rows) + 1,
           "sparse support: row_offsets has " << s.row_offsets.size() << " entries for " << s.rows
                                              << " rows (need rows + 1)");
  GW_CHECK(s.row_offsets.front() == 0 && s.row_offsets.back() == s.nnz(),
           "sparse support: row_offsets must start at 0 and end at nnz = " << s.nnz());
  for (Index i = 0; i < s.rows; ++i) {
    GW_CHECK(s.row_offsets[i] <= s.row_offsets[i + 1],
             "sparse support: row_offsets decrease at row " << i);
  }
  for (Offset e = 0; e < s.nnz(); ++e) {
    GW_CHECK(s.col_indices[e] >= 0 && s.col_indices[e] < s.cols,
             "sparse support: entry " << e << " has column " << s.col_indices[e] << " outside [0, "
                                      << s.cols << ")");
  }
}

}  // namespace

SupportTranspose transpose_support(const SparseSupportView& s) {
  check_support(s);
  SupportTranspose t;
  t.col_offsets.assign(static_cast<std::size_t>(s.cols) + 1, 0);
  for (Offset e = 0; e < s.nnz(); ++e) ++t.col_offsets[s.col_indices[e] + 1];
  for (Index j = 0; j < s.cols; ++j) t.col_offsets[j + 1] += t.col_offsets[j];
  t.entries.resize(s.nnz());
  t.rows.resize(s.nnz());
  std::vector<Offset> next(t.col_offsets.begin(), t.col_offsets.end() - 1);
  for (Index i = 0; i < s.rows; ++i) {
    for (Offset e = s.row_offsets[i]; e < s.row_offsets[i + 1]; ++e) {
      const Offset at = next[s.col_indices[e]]++;
      t.entries[at] = e;
      t.rows[at] = i;
    }
  }
  return t;
}

SinkhornResult sparse_sinkhorn(const SparseSupportView& support,
                               const SupportTranspose& transpose,
                               std::span<const float> cost,
                               std::span<const double> a,
                               std::span<const double> b,
                               double epsilon,
                               std::span<double> f,
                               std::span<double> g,
                               const SinkhornOptions& options) {
  const char* who = "sparse_sinkhorn";
  detail::check_options(who, options);
  detail::check_epsilon(who, epsilon);
  const Index n = support.rows, k = support.cols;
  GW_CHECK(support.row_offsets.size() == static_cast<std::size_t>(n) + 1 &&
               support.row_offsets.back() == support.nnz(),
           who << ": malformed support (row_offsets)");
  GW_CHECK(transpose.col_offsets.size() == static_cast<std::size_t>(k) + 1 &&
               transpose.entries.size() == static_cast<std::size_t>(support.nnz()),
           who << ": the transpose does not belong to this support");
  GW_CHECK(cost.size() == static_cast<std::size_t>(support.nnz()),
           who << ": cost has " << cost.size() << " entries for a support of " << support.nnz());
  GW_CHECK(a.size() == static_cast<std::size_t>(n) && f.size() == a.size(),
           who << ": a and f need " << n << " entries, got " << a.size() << " and " << f.size());
  GW_CHECK(b.size() == static_cast<std::size_t>(k) && g.size() == b.size(),
           who << ": b and g need " << k << " entries, got " << b.size() << " and " << g.size());
  detail::check_potentials(who, f, "f");
  detail::check_potentials(who, g, "g");
  detail::check_balance(
      who, detail::checked_mass(who, a, "a"), detail::checked_mass(who, b, "b"), options);

  const int threads = resolve_threads(options.threads);
  const double inv_eps = 1.0 / epsilon;
  const double tau_a = detail::damping(options.rho_a, epsilon);
  const double tau_b = detail::damping(options.rho_b, epsilon);
  std::vector<double> u(n), v(k), row_lses(n);
  for (Index i = 0; i < n; ++i) u[i] = detail::to_scaled(f[i], epsilon);
  for (Index j = 0; j < k; ++j) v[j] = detail::to_scaled(g[j], epsilon);
  const auto& offsets = support.row_offsets;
  const auto& cols = support.col_indices;
  const auto identity = [](Offset p) { return p; };
  const auto& col_offsets = transpose.col_offsets;
  const auto& col_rows = transpose.rows;
  // The cost in column order, gathered once per call: every column pass then streams it instead
  // of gathering it (nnz floats more memory while the call runs).
  std::vector<float> cost_by_column(cost.size());
#pragma omp parallel for num_threads(threads) schedule(static)
  for (Index j = 0; j < k; ++j) {
    for (Offset p = col_offsets[j]; p < col_offsets[j + 1]; ++p) {
      cost_by_column[p] = cost[transpose.entries[p]];
    }
  }

  // The rows' and columns' longest runs size each thread's scratch row of the kernels.
  Offset longest = 0;
  for (Index i = 0; i < n; ++i) longest = std::max(longest, offsets[i + 1] - offsets[i]);
  for (Index j = 0; j < k; ++j) longest = std::max(longest, col_offsets[j + 1] - col_offsets[j]);
  const detail::SparseSinkhornKernels& kernels = detail::sparse_sinkhorn_kernels();
  // The kernels' lse with support_lse's conventions: NaN for a NaN / -inf cost.
  auto lse_of = [&](const float* c, const Index* index, const double* partner, Offset len,
                    double* scratch) {
    int bad = 0;
    const double lse = kernels.support_lse(c, index, partner, inv_eps, len, scratch, &bad);
    return bad != 0 ? std::nan("") : lse;
  };

  SinkhornResult result;
  result.backend = Backend::kCpu;
  result.threads = threads;
  for (int t = 0;; ++t) {
#pragma omp parallel num_threads(threads)
    {
      std::vector<double> scratch(static_cast<std::size_t>(longest));
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        if (a[i] == 0.0 && u[i] == -kInf) {
          row_lses[i] = -kInf;
          continue;
        }
        row_lses[i] = lse_of(cost.data() + offsets[i], cols.data() + offsets[i], v.data(),
                             offsets[i + 1] - offsets[i], scratch.data());
      }
    }
    for (Index i = 0; i < n; ++i) {
      GW_CHECK_CODE(!std::isnan(row_lses[i]),
                    ErrorCode::kBadData,
                    who << ": the cost has a NaN or -inf entry in row " << i);
    }
    if (detail::is_check_iteration(t, options)) {
      // Summed in row order: the residual does not depend on the thread count.
      double error = 0.0;
      for (Index i = 0; i < n; ++i) {
        const double row_mass = u[i] == -kInf ? 0.0 : std::exp(u[i] + row_lses[i]);
        error += detail::row_residual(row_mass, a[i], u[i], epsilon, options.rho_a);
      }
      if (detail::finish_check(t, error, options, result)) break;
    }
    for (Index i = 0; i < n; ++i) {
      if (a[i] > 0.0) check_lse(row_lses[i], "row", i);
      u[i] = detail::updated_potential(a[i], row_lses[i], tau_a);
    }
    // Bad columns are remembered per thread and reported after the loop (no throw inside omp).
    Index bad_column = -1;
#pragma omp parallel num_threads(threads) reduction(max : bad_column)
    {
      std::vector<double> scratch(static_cast<std::size_t>(longest));
#pragma omp for schedule(static)
      for (Index j = 0; j < k; ++j) {
        if (b[j] == 0.0) {
          v[j] = -kInf;
          continue;
        }
        const double lse = lse_of(cost_by_column.data() + col_offsets[j],
                                  col_rows.data() + col_offsets[j], u.data(),
                                  col_offsets[j + 1] - col_offsets[j], scratch.data());
        if (std::isnan(lse) || lse == -kInf) {
          bad_column = std::max(bad_column, j);
          continue;
        }
        v[j] = detail::updated_potential(b[j], lse, tau_b);
      }
    }
    if (bad_column >= 0) {
      const double lse = support_lse(
          col_offsets[bad_column], col_offsets[bad_column + 1],
          [&](Offset p) { return u[col_rows[p]]; }, identity,
          std::span<const float>(cost_by_column), inv_eps);
      check_lse(lse, "column", bad_column);
    }
  }
  for (Index i = 0; i < n; ++i) f[i] = detail::from_scaled(u[i], epsilon);
  for (Index j = 0; j < k; ++j) g[j] = detail::from_scaled(v[j], epsilon);
  return result;
}

void sparse_plan_momentum(const SparseSupportView& support,
                          std::span<const float> cost,
                          std::span<const double> f,
                          std::span<const double> g,
                          double epsilon,
                          std::span<double> plan,
                          double alpha,
                          std::span<PlanBlendStats> stats,
                          int threads) {
  const Index n = support.rows;
  GW_CHECK(cost.size() == static_cast<std::size_t>(support.nnz()) && plan.size() == cost.size(),
           "sparse_plan_momentum: cost and plan need nnz = " << support.nnz() << " entries");
  GW_CHECK(f.size() == static_cast<std::size_t>(n) &&
               g.size() == static_cast<std::size_t>(support.cols) &&
               stats.size() == static_cast<std::size_t>(n),
           "sparse_plan_momentum: f, g, stats do not match the support's shape");
  GW_CHECK(alpha > 0.0 && alpha <= 1.0, "sparse_plan_momentum: alpha must be in (0, 1]");
  detail::check_epsilon("sparse_plan_momentum", epsilon);
  const double inv_eps = 1.0 / epsilon;
  const int team = resolve_threads(threads);
  std::vector<double> v(g.size());
#pragma omp parallel for num_threads(team) schedule(static)
  for (std::size_t j = 0; j < g.size(); ++j) v[j] = detail::to_scaled(g[j], epsilon);
  const detail::SparseSinkhornKernels& kernels = detail::sparse_sinkhorn_kernels();
#pragma omp parallel for num_threads(team) schedule(static)
  for (Index i = 0; i < n; ++i) {
    const Offset begin = support.row_offsets[i];
    stats[i] = kernels.support_blend(cost.data() + begin, support.col_indices.data() + begin,
                                     v.data(), detail::to_scaled(f[i], epsilon), inv_eps,
                                     1.0 - alpha, alpha, support.row_offsets[i + 1] - begin,
                                     plan.data() + begin);
  }
}

}  // namespace gw
