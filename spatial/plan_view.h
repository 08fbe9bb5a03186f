// A read-only view of a transport plan in either form gw::Result returns it: dense (n x k,
// row-major, Result::plan) or CSR (Result::plan_topk, the sparse path's support or the top-k rows
// of a dense plan). The spatial functions (registration.h, transfer.h) visit entries through it, so
// a dense plan is never copied into CSR and a CSR plan never densified.
#pragma once

#include <cstddef>
#include <span>

#include "core/error.h"
#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw::spatial {

// Rows are source nodes (n), columns target nodes (k). Entries are masses >= 0; the plan's total
// mass need not be 1 (a partial plan moves less). The view does not own its arrays: they must
// outlive it. Thread-safety: read-only, safe to share.
class PlanView {
 public:
  // n x k dense, row-major: entry (i, j) is values[i * k + j]. kInvalidArgument on a size mismatch.
  static PlanView dense(std::span<const double> values, Index n, Index k);
  // CSR: row i holds entries row_offsets[i] .. row_offsets[i+1]-1 with columns col_indices[p]
  // (in [0, k)) and masses values[p]. Shapes are checked (offsets n + 1, monotone, ending at nnz);
  // a column out of range is kInvalidArgument naming the entry.
  static PlanView csr(std::span<const Offset> row_offsets,
                      std::span<const Index> col_indices,
                      std::span<const double> values,
                      Index n,
                      Index k);
  static PlanView csr(const CsrMatrix<double>& plan) {
    return csr(plan.row_offsets, plan.col_indices, plan.values, plan.rows, plan.cols);
  }

  Index rows() const { return n_; }
  Index cols() const { return k_; }
  bool is_dense() const { return dense_; }

  // Calls fn(j, mass) for every stored entry of row i (dense: every column, zeros included).
  template <typename Fn>
  void for_each_in_row(Index i, Fn&& fn) const {
    if (dense_) {
      const double* row = values_.data() + static_cast<std::size_t>(i) * k_;
      for (Index j = 0; j < k_; ++j) fn(j, row[j]);
    } else {
      for (Offset p = offsets_[i]; p < offsets_[i + 1]; ++p) fn(indices_[p], values_[p]);
    }
  }

 private:
  bool dense_ = true;
  Index n_ = 0;
  Index k_ = 0;
  std::span<const Offset> offsets_;
  std::span<const Index> indices_;
  std::span<const double> values_;
};

}  // namespace gw::spatial
