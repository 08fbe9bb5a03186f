// The sparse-support Sinkhorn (sparse_sinkhorn.h) on a CUDA device, with the two other per-entry
// passes of the sparse GW loop: the cost on the support from anchor distance blocks, and the
// momentum step. For loops that keep the support, its costs, its plan and the potentials on the
// device across many solves.
//
//   CudaSparseSinkhorn sparse(stream);
//   sparse.set_support(view, transpose);          // uploads the CSR and its transpose
//   sparse.set_marginals(a, b);
//   sparse.upload_plan(values);                   // the starting plan on the support
//   for (each outer iteration) {
//     sparse.anchor_cost(dx, dy, m);              // or upload_cost(cost)
//     SinkhornResult r = sparse.solve(eps, options);  // warm-starts from the last potentials
//     sparse.plan_momentum(eps, alpha, stats);    // P on the device, per-row stats to the host
//     sparse.download_plan_rows(rows, values);    // the values of the rows one samples from
//   }
//   sparse.download_plan(values);
//
// Same math, schedule, residual, damping (rho_a, rho_b), zero-mass conventions and error codes as
// gw::sparse_sinkhorn and gw::sparse_plan_momentum: all arithmetic on potentials in double, costs
// float32 per support entry, f and g in cost units with kZeroMassPotential for zero mass. What
// differs is rounding only: summation order (per-warp partial sums) and CUDA's exp / log. Errors
// in the data (NaN / -inf costs, a positive-mass row or column without a finite entry) are
// detected on the device and thrown as kBadData at the next check iteration, so a solve may run up
// to check_every - 1 more iterations before it throws (gw::sparse_sinkhorn throws at once); the
// reported index is the smallest offending one.
//
// Device memory (kept across calls; grow-only): per support entry 4 B column + 4 B cost + 8 B
// plan + 12 B transpose (8 B position + 4 B row) + 4 B column-ordered cost copy = 32 B, plus 8 B
// with feature costs (set_feature_cost); per row and column about 8 doubles (marginals,
// potentials, scaled potentials, residuals, stats); the anchor blocks (n + k) M floats and their
// norms (anchor_cost). Per solve iteration: one warp per row, then one warp per column (two
// exponentials per entry); the residual is reduced on the device and read back (8 B plus 16 B of
// status) at check iterations only.
//
// Streams: all work (copies included) runs on one gw::CudaStream (core/cuda_stream.h): the
// instance's own or the caller's. Every host-facing call returns when its results are complete.
// Thread-safety: an instance is used by one host thread at a time.
//
// In a build without CUDA the constructors throw gw::Error(ErrorCode::kNotCompiled).
#pragma once

#include <memory>
#include <span>

#include "core/cuda_stream.h"
#include "core/types.h"
#include "sinkhorn/sinkhorn.h"
#include "sinkhorn/sparse_sinkhorn.h"

namespace gw {

class CudaSparseSinkhorn {
 public:
  // Binds to CUDA device `device`. Throws kNotCompiled without CUDA, kInvalidArgument when the
  // device does not exist.
  explicit CudaSparseSinkhorn(int device = 0);
  // Enqueues everything on `stream` (its device is the instance's device).
  explicit CudaSparseSinkhorn(const CudaStream& stream);
  ~CudaSparseSinkhorn();
  CudaSparseSinkhorn(CudaSparseSinkhorn&&) noexcept;
  CudaSparseSinkhorn& operator=(CudaSparseSinkhorn&&) noexcept;
  CudaSparseSinkhorn(const CudaSparseSinkhorn&) = delete;
  CudaSparseSinkhorn& operator=(const CudaSparseSinkhorn&) = delete;

  // Throws kUnsupported, naming the sizes, when a support of `nnz` entries on an n x k problem
  // with anchor blocks of up to `anchors` columns (0: no anchor_cost) and optional per-entry
  // feature costs would not fit in the device's free memory (plus what this instance holds
  // already). Call it before set_support when the support may be large.
  void check_device_memory(Index n, Index k, Offset nnz, int anchors, bool feature) const;

  // Uploads a support and its transpose (transpose_support(support); the shapes are checked
  // against each other). The costs and the plan on the device become undefined until the next
  // upload / anchor_cost / momentum. The potentials are kept when rows and cols are unchanged
  // (a re-grown support of the same problem warm-starts from them), else reset to zero and the
  // marginals must be set again.
  void set_support(const SparseSupportView& support, const SupportTranspose& transpose);
  Index rows() const;
  Index cols() const;
  Offset nnz() const;

  // Host marginals (same rules as sparse_sinkhorn: finite, >= 0, positive sums).
  void set_marginals(std::span<const double> a, std::span<const double> b);
  // Potentials in cost units (kZeroMassPotential or -inf for zero mass); without set_potentials a
  // solve starts from those the previous solve left (zeros after a shape change).
  void set_potentials(std::span<const double> f, std::span<const double> g);
  void reset_potentials();
  void download_potentials(std::span<double> f, std::span<double> g) const;

  // The cost on the support, nnz float32 values in CSR order.
  void upload_cost(std::span<const float> cost);
  void download_cost(std::span<float> cost) const;
  // Per-entry feature costs (nnz float64 values, CSR order) and their weight for anchor_cost's
  // fused blend; an empty span (or weight 0) turns the blend off. Kept on the device until the
  // next call or set_support (a new support has other entries).
  void set_feature_cost(std::span<const double> feature_cost, double fused_weight);
  // The GW cost on the support from host anchor distance blocks dx (rows x m) and dy (cols x m),
  // row-major float32:
  //   C_e = mean_t dx_it^2 + mean_t dy_jt^2 - (2 / m) sum_t dx_it dy_jt    for entry e = (i, j)
  // in float32, then, with feature costs set (set_feature_cost),
  //   C_e = float((1 - fused_weight) C_e + fused_weight feature_cost_e)     in double.
  // m >= 1. Returns when the cost is complete (dx and dy may then be rewritten).
  void anchor_cost(std::span<const float> dx, std::span<const float> dy, int m);

  // sparse_sinkhorn on the device from the device potentials (options.threads and precision are
  // ignored: the arithmetic is double). Needs a support, a cost and marginals.
  SinkhornResult solve(double epsilon, const SinkhornOptions& options = {});

  // The plan on the support, nnz float64 values in CSR order.
  void upload_plan(std::span<const double> plan);
  void download_plan(std::span<double> plan) const;
  // The plan values of rows[0], rows[1], ... (each in [0, rows()), repeats allowed) concatenated
  // in that order, each row's entries in CSR order: out needs the sum of those rows' lengths. A
  // gather on the device and one copy of just those values (for sampling from a few rows).
  void download_plan_rows(std::span<const Index> rows, std::span<double> out);
  // sparse_plan_momentum on the device plan from the device potentials and cost; stats (rows
  // entries) receive each row's change_sq, cost and mass. alpha in (0, 1].
  void plan_momentum(double epsilon, double alpha, std::span<PlanBlendStats> stats);

  int device() const;
  // The stream all work is enqueued on.
  const CudaStream& stream() const;

 private:
  class Impl;
  Impl& impl() const;  // throws kNotCompiled without CUDA
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw
