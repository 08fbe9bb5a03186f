// Log-domain Sinkhorn on a sparse support (CSR), for the sparse-support GW path (Options::support).
//
// The problem is the one of sinkhorn.h restricted to a support S (a set of allowed (i, j) pairs):
// T_ij = exp((f_i + g_j - C_ij) / epsilon) for (i, j) in S and 0 elsewhere. Equivalently, it is the
// dense problem with C_ij = +inf off the support, and that is how the tests compare it with the
// dense reference oracle (sinkhorn_reference with +inf off the support): same iteration schedule
// (rows, then columns; residual checks as in SinkhornOptions), same residual, same potentials.
//
// Layout: the support is CSR, `rows` + 1 offsets and nnz column indices (any order within a row,
// no duplicates); costs are float32 per support entry in the same order (cost[e] for entry e).
// The column pass reads the entries through a SupportTranspose (built once per support, reused
// across calls), so both passes are gathers, parallel over rows / columns and independent of the
// thread count.
//
// Rows or columns without support entries: a zero-mass one gets kZeroMassPotential; one with
// positive mass makes the balanced problem infeasible and throws gw::Error(kBadData) naming it
// (the dense reference oracle rejects the same input). Callers that may leave a column unreached
// must cover it first (the sparse GW loop does).
//
// Cost per iteration: two exponentials per support entry (one in the row pass, one in the column
// pass; each pass also takes a maximum first), O(nnz) reads. Memory: the transpose, (cols + 1) * 8
// + nnz * 12 bytes, and a column-ordered copy of the cost while a call runs (nnz * 4 bytes).
// Thread-safety: pure functions of their arguments (f, g are written).
//
// CUDA: gw::CudaSparseSinkhorn (cuda_sparse_sinkhorn.h) runs the same Sinkhorn, the momentum step
// of sparse_plan_momentum and the GW cost on the support on a device, with the support, its
// transpose, costs, plan and potentials resident there; transpose_support stays a host function
// (the device class uploads its result).
#pragma once

#include <span>
#include <vector>

#include "core/types.h"
#include "sinkhorn/sinkhorn.h"

namespace gw {

// A read-only CSR support: row i holds col_indices[row_offsets[i] .. row_offsets[i + 1]).
struct SparseSupportView {
  Index rows = 0;
  Index cols = 0;
  std::span<const Offset> row_offsets;  // rows + 1, starts at 0, non-decreasing
  std::span<const Index> col_indices;   // nnz, each in [0, cols)
  Offset nnz() const { return static_cast<Offset>(col_indices.size()); }
};

// Column-major index of a support: column j's entries are entries[col_offsets[j] ..
// col_offsets[j + 1]) (positions in the CSR order, ascending), with their rows in `rows`.
struct SupportTranspose {
  std::vector<Offset> col_offsets;  // cols + 1
  std::vector<Offset> entries;      // nnz
  std::vector<Index> rows;          // nnz
};

// Validates the support (kInvalidArgument naming the first bad offset or column) and builds its
// transpose. O(nnz + cols).
SupportTranspose transpose_support(const SparseSupportView& support);

// Sinkhorn on the support. cost has nnz entries (finite, or +inf for a forbidden entry). a, b, f,
// g, epsilon and options as for gw::sinkhorn (options.precision and threads: all arithmetic is in
// double; threads bounds the OpenMP team). f and g are the warm start on input and the result on
// output.
SinkhornResult sparse_sinkhorn(const SparseSupportView& support,
                               const SupportTranspose& transpose,
                               std::span<const float> cost,
                               std::span<const double> a,
                               std::span<const double> b,
                               double epsilon,
                               std::span<double> f,
                               std::span<double> g,
                               const SinkhornOptions& options = {});

// The momentum step on the support, one pass:
//   P_e <- (1 - alpha) P_e + alpha exp((f_i + g_j - C_e) / epsilon)   for every entry e = (i, j)
// with stats[i] (rows entries) as in sinkhorn_plan_momentum. alpha in (0, 1].
void sparse_plan_momentum(const SparseSupportView& support,
                          std::span<const float> cost,
                          std::span<const double> f,
                          std::span<const double> g,
                          double epsilon,
                          std::span<double> plan,
                          double alpha,
                          std::span<PlanBlendStats> stats,
                          int threads = 0);

}  // namespace gw
