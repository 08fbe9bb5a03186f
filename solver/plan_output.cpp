// The returned plan's form (Options::plan_format): dense, or each row's top_k entries as CSR; and
// the argmax matching and mass of the plan.
#include <algorithm>
#include <numeric>
#include <vector>

#include "solver/metrics.h"
#include "solver/solver_impl.h"

namespace gw::detail {

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

}  // namespace gw::detail
