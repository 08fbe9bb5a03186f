// Entropic optimal transport by log-domain Sinkhorn iterations (docs/architecture.md section 1).
//
// Problem: given a cost C (n x k), marginals a (n) and b (k) and a regularization epsilon > 0,
// find potentials f (n) and g (k) such that the plan
//     T_ij = exp((f_i + g_j - C_ij) / epsilon)
// has row sums a and column sums b (balanced), or the KL-relaxed version of those constraints
// (unbalanced / semi-relaxed, see SinkhornOptions::rho_a / rho_b).
//
// One iteration updates the rows, then the columns (log domain, tau = rho / (rho + epsilon), tau =
// 1 when rho is infinite):
//     f_i <- tau_a * (epsilon log a_i - epsilon LSE_j((g_j - C_ij) / epsilon))
//     g_j <- tau_b * (epsilon log b_j - epsilon LSE_i((f_i - C_ij) / epsilon))
//
// Implementations that share this interface: sinkhorn() below (the fused CPU kernel: OpenMP over
// row blocks, SIMD, one read of C per iteration), sinkhorn_reference() in sinkhorn_reference.h
// (plain double loops, the test oracle), and gw::CudaSinkhorn in cuda_sinkhorn.h (device buffers,
// for the GPU solver loop).
//
// Zero-mass entries (a_i = 0 or b_j = 0) have potential -inf in exact arithmetic. gwalign returns
// the finite stand-in kZeroMassPotential for them instead: their plan row / column is then exactly
// 0 and they never contribute to any sum, and passing such potentials back in (warm start, plan)
// is safe. On input, a potential <= kZeroMassPotential / 2 (or -inf) is read as "minus infinity".
//
// Precision (SinkhornOptions::precision): kF64 computes everything in double. kF32 keeps float32
// copies of the potentials and forms the exponent (f_i + g_j - C_ij) / epsilon in float32, with
// every per-row / per-column quantity and every reduction in double. Each exponent then carries an
// absolute error of about 2^-24 * max(|C|, |f|, |g|) / epsilon: kF32 solves exactly a problem
// whose cost is perturbed entrywise by ~2^-24 * max(|C|, |f|, |g|) (6e-8 for costs in [0, 1]),
// which moves individual plan entries by up to ~6e-4 relative at epsilon = 1e-4 (6e-5 at 1e-3).
// Measured against the double reference (tests/sinkhorn): plan L1 distance <= 1.1e-4 relative at
// epsilon = 1e-4. Marginal errors much below that level are not resolvable in kF32; use kF64 for
// tight tolerances at small epsilon or for large cost ranges (e.g. a slack cost of 100).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "core/types.h"

namespace gw {

// Finite stand-in for the potential of a zero-mass row or column (see the file comment).
inline constexpr double kZeroMassPotential = -1e30;

// A read-only view of a dense n x k matrix, row-major with a row stride: entry (i, j) is at
// data[i * row_stride + j], row_stride >= cols. Elements are float32 or float64. Does not own
// the data; the memory must stay valid while a call that received the view runs. The pointer may
// be host or device memory depending on the function it is given to (each function says which).
//
// The cost enters the kernels only through this view, so that a later factored cost (the GW cost
// has rank M + 2, so a row can be formed from D_X and D_Y without storing Lambda) can replace the
// dense row load without touching the solvers.
class CostView {
 public:
  CostView() = default;
  // row_stride < 0 means "contiguous": row_stride = cols.
  CostView(const float* data, Index rows, Index cols, Offset row_stride = -1)
      : data_(data),
        type_(Precision::kF32),
        rows_(rows),
        cols_(cols),
        row_stride_(row_stride < 0 ? cols : row_stride) {}
  CostView(const double* data, Index rows, Index cols, Offset row_stride = -1)
      : data_(data),
        type_(Precision::kF64),
        rows_(rows),
        cols_(cols),
        row_stride_(row_stride < 0 ? cols : row_stride) {}

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  Offset row_stride() const { return row_stride_; }
  // The element type of the stored matrix.
  Precision element_type() const { return type_; }
  const void* data() const { return data_; }
  // Typed pointer; nullptr when the element type differs.
  const float* f32() const {
    return type_ == Precision::kF32 ? static_cast<const float*>(data_) : nullptr;
  }
  const double* f64() const {
    return type_ == Precision::kF64 ? static_cast<const double*>(data_) : nullptr;
  }

 private:
  const void* data_ = nullptr;
  Precision type_ = Precision::kF32;
  Index rows_ = 0;
  Index cols_ = 0;
  Offset row_stride_ = 0;
};

// A writable view of a dense n x k output matrix (the transport plan), same layout rules as
// CostView. Does not own the data.
class PlanView {
 public:
  PlanView() = default;
  PlanView(float* data, Index rows, Index cols, Offset row_stride = -1)
      : data_(data),
        type_(Precision::kF32),
        rows_(rows),
        cols_(cols),
        row_stride_(row_stride < 0 ? cols : row_stride) {}
  PlanView(double* data, Index rows, Index cols, Offset row_stride = -1)
      : data_(data),
        type_(Precision::kF64),
        rows_(rows),
        cols_(cols),
        row_stride_(row_stride < 0 ? cols : row_stride) {}

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  Offset row_stride() const { return row_stride_; }
  Precision element_type() const { return type_; }
  void* data() const { return data_; }
  float* f32() const { return type_ == Precision::kF32 ? static_cast<float*>(data_) : nullptr; }
  double* f64() const { return type_ == Precision::kF64 ? static_cast<double*>(data_) : nullptr; }

 private:
  void* data_ = nullptr;
  Precision type_ = Precision::kF32;
  Index rows_ = 0;
  Index cols_ = 0;
  Offset row_stride_ = 0;
};

struct SinkhornOptions {
  // Upper bound on the number of iterations (one row update + one column update each). The GW
  // loop uses <= 100 per outer iteration with warm starts.
  int max_iterations = 100;

  // Stop when the marginal error (SinkhornResult::marginal_error) is <= tolerance. 0 disables the
  // test: exactly max_iterations iterations run (benchmarks).
  double tolerance = 5e-4;

  // The marginal error is measured before iterations 0, check_every, 2 * check_every, ... and
  // after the last one. Measuring is free on the CPU (it is a by-product of the row pass) and
  // costs one device-to-host synchronization on the GPU; a converged check costs one extra read
  // of C, since the row update it would have fed is not applied.
  int check_every = 10;

  // KL penalty weights of the row / column marginal constraints. +infinity (the default) makes the
  // constraint hard (balanced); a finite value relaxes it (damping tau = rho / (rho + epsilon)).
  // Both finite: unbalanced; one finite: semi-relaxed. In the units of the cost.
  double rho_a = std::numeric_limits<double>::infinity();
  double rho_b = std::numeric_limits<double>::infinity();

  // kF32: float32 compute with float64 accumulation (mixed precision); kF64: float64 throughout.
  // See the file comment for what kF32 can resolve at small epsilon.
  Precision precision = Precision::kF32;

  // CPU worker threads (0 = all available), an upper bound: each thread gets at least 65,536 cost
  // entries, so small problems run on fewer threads (SinkhornResult::threads says how many).
  // Ignored by the CUDA backend.
  int threads = 0;

  // True if every field is in range; otherwise false and, when `why` is non-null, a one-line
  // message naming the first bad field.
  bool is_valid(std::string* why = nullptr) const;
};

enum class SinkhornTermination {
  kNotRun,         // the solver was never called
  kConverged,      // the marginal error reached the tolerance
  kMaxIterations,  // max_iterations iterations ran without reaching the tolerance
  kNonFinite,      // the marginal error became NaN (potentials left as they were)
};

// "not run", "converged", "max iterations", "non-finite".
std::string_view to_string(SinkhornTermination termination);

struct SinkhornResult {
  // Iterations applied to the potentials (row update + column update each).
  int iterations = 0;

  // L1 residual of the row marginal of the plan defined by the returned potentials:
  //     sum_i | sum_j T_ij - a_i * exp(-f_i / rho_a) |
  // which is sum_i |row_sum_i - a_i| in the balanced case and the fixed-point residual of the
  // row update in the unbalanced case. The column side needs no measure: after a column update
  // the column residual sum_j | sum_i T_ij - b_j exp(-g_j / rho_b) | is zero up to rounding.
  // NaN when no check ran.
  double marginal_error = std::numeric_limits<double>::quiet_NaN();

  SinkhornTermination termination = SinkhornTermination::kNotRun;
  std::string message = "sinkhorn was not called";

  // What actually ran: the backend and the CPU threads (0 on the CUDA backend).
  Backend backend = Backend::kCpu;
  int threads = 0;

  bool converged() const { return termination == SinkhornTermination::kConverged; }
};

// Fused CPU Sinkhorn (OpenMP over row blocks + SIMD). One iteration reads C once: a row pass
// computes each row's update and, in the same pass, accumulates the column sums of the updated
// plan; the column update is then O(k). Rows or columns whose sums under- or overflow the
// floating-point range fall back to an exact max-shifted log-sum-exp (double), so epsilon down
// to 1e-4 with costs in [0, 1] is safe from a cold start.
//
//   cost   n x k host matrix (float32 or float64; converted on load when it differs from
//          options.precision). Entries must not be NaN or -inf (a row or column whose sum comes
//          out NaN throws kBadData); +inf marks a forbidden pair (plan entry 0).
//   a, b   marginals, length n and k, finite and >= 0 with positive sums (kBadData otherwise);
//          in the balanced case sum(a) and sum(b) must agree to 1e-5 relative (kInvalidArgument).
//   epsilon > 0, in the units of the cost.
//   f, g   potentials, length n and k, in the units of the cost: the starting point on input
//          (zeros for a cold start, the previous solution for a warm start), the result on
//          output. Zero-mass entries come back as kZeroMassPotential.
//
// Misuse (shapes, options) throws kInvalidArgument; numerical outcomes are in the result. The
// caller's threads must not call this concurrently on the same f/g. Sets flush-to-zero and
// denormals-are-zero on the OpenMP worker threads (see core/context.h).
// Cost: (iterations + 1) reads of C, O(threads * k) extra memory.
SinkhornResult sinkhorn(const CostView& cost,
                        std::span<const double> a,
                        std::span<const double> b,
                        double epsilon,
                        std::span<double> f,
                        std::span<double> g,
                        const SinkhornOptions& options = {});

// Writes the plan T_ij = exp((f_i + g_j - C_ij) / epsilon) into `plan` (float32 or float64,
// same shape as the cost), computed in options.precision with options.threads threads (the
// other option fields are ignored). Rows / columns whose potential is kZeroMassPotential come out
// exactly 0. One read of C and one write of the plan.
void sinkhorn_plan(const CostView& cost,
                   std::span<const double> f,
                   std::span<const double> g,
                   double epsilon,
                   const PlanView& plan,
                   const SinkhornOptions& options = {});

// Per-row statistics of sinkhorn_plan_momentum, accumulated in double.
struct PlanBlendStats {
  double change_sq = 0.0;  // sum_j (P_new_ij - P_old_ij)^2
  double cost = 0.0;       // sum_j C_ij P_new_ij
  double mass = 0.0;       // sum_j P_new_ij
};

// The momentum step of the GW loop fused into the plan materialization, one pass over C:
//     P_ij <- (1 - alpha) P_ij + alpha exp((f_i + g_j - C_ij) / epsilon)
// for the leading plan.rows() x plan.cols() block of the cost (the GW loop keeps its slack row
// and column out of its plan), with stats[i] (plan.rows() entries) set for every row. The plan
// entries are exactly those sinkhorn_plan would write, blended in the plan's element type.
// alpha in (0, 1]. One read of the cost block and one read-modify-write of the plan.
void sinkhorn_plan_momentum(const CostView& cost,
                            std::span<const double> f,
                            std::span<const double> g,
                            double epsilon,
                            const PlanView& plan,
                            double alpha,
                            std::span<PlanBlendStats> stats,
                            const SinkhornOptions& options = {});

}  // namespace gw
