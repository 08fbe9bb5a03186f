#include "spatial/plan_view.h"

namespace gw::spatial {

PlanView PlanView::dense(std::span<const double> values, Index n, Index k) {
  GW_CHECK(n >= 0 && k >= 0, "plan shape must be non-negative, got " << n << " x " << k);
  GW_CHECK(values.size() == static_cast<std::size_t>(n) * static_cast<std::size_t>(k),
           "dense plan: expected " << n << " x " << k << " = "
                                   << static_cast<std::size_t>(n) * static_cast<std::size_t>(k)
                                   << " values, got " << values.size());
  PlanView view;
  view.dense_ = true;
  view.n_ = n;
  view.k_ = k;
  view.values_ = values;
  return view;
}

PlanView PlanView::csr(std::span<const Offset> row_offsets,
                       std::span<const Index> col_indices,
                       std::span<const double> values,
                       Index n,
                       Index k) {
  GW_CHECK(n >= 0 && k >= 0, "plan shape must be non-negative, got " << n << " x " << k);
  GW_CHECK(row_offsets.size() == static_cast<std::size_t>(n) + 1,
           "CSR plan: row_offsets must hold n + 1 = " << n + 1 << " entries, got "
                                                      << row_offsets.size());
  GW_CHECK(col_indices.size() == values.size(),
           "CSR plan: " << col_indices.size() << " column indices but " << values.size()
                        << " values");
  GW_CHECK(row_offsets.front() == 0 &&
               row_offsets.back() == static_cast<Offset>(col_indices.size()),
           "CSR plan: row_offsets must start at 0 and end at nnz = " << col_indices.size());
  for (Index i = 0; i < n; ++i) {
    GW_CHECK(row_offsets[i] <= row_offsets[i + 1],
             "CSR plan: row_offsets decrease at row " << i);
  }
  for (std::size_t p = 0; p < col_indices.size(); ++p) {
    GW_CHECK(col_indices[p] >= 0 && col_indices[p] < k,
             "CSR plan: entry " << p << " has column " << col_indices[p] << " outside [0, " << k
                                << ")");
  }
  PlanView view;
  view.dense_ = false;
  view.n_ = n;
  view.k_ = k;
  view.offsets_ = row_offsets;
  view.indices_ = col_indices;
  view.values_ = values;
  return view;
}

}  // namespace gw::spatial
