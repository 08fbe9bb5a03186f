// The GW loop's cost GEMM and the exact solver's reductions, compiled once per instruction-set
// target in gw_cost_isa.cpp (core/isa_dispatch_impl.h). Private to the solver.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/isa_dispatch_impl.h"
#include "core/types.h"

namespace gw::detail {

// out = left * right^T: left is rows x inner and right is cols x inner, both row-major and dense;
// out is rows x cols with row stride out_stride (>= cols). Multithreaded with OpenMP (Eigen's
// blocked GEMM, compiled for the target).
template <typename Real>
using GemmAbtFn = void (*)(const Real* left,
                           const Real* right,
                           Index rows,
                           Index cols,
                           Index inner,
                           Real* out,
                           Offset out_stride);

// out (+)= op(left) * right: right is inner x cols, row-major and dense; op(left) is left
// (rows x inner, row-major) or, with transpose_left, the transpose of left (inner x rows,
// row-major); out is rows x cols with row stride out_stride (>= cols), overwritten or, with
// accumulate, added to. Multithreaded with OpenMP (Eigen's blocked GEMM, compiled for the target).
// The exact solver's vertex products build their sparse factor row by row (contiguous adds) and
// hand it over in whichever orientation that leaves it.
template <typename Real>
using GemmFn = void (*)(const Real* left,
                        bool transpose_left,
                        const Real* right,
                        Index rows,
                        Index cols,
                        Index inner,
                        Real* out,
                        Offset out_stride,
                        bool accumulate);

// sum_i a_i b_i over n entries, in double (float entries widened). The summation order is the
// target's (vector lanes, then their sum), so the last bits differ between targets.
template <typename Real>
using DotFn = double (*)(const Real* a, const Real* b, std::int64_t n);
// sum_i d_i^2 x_i over n entries, in double.
template <typename Real>
using SquareDotFn = double (*)(const Real* d, const double* x, std::int64_t n);
// out_i += s d_i^2 over n entries, in double: a row's share of (d o d) x for a symmetric d, whose
// sum over rows has no dependent chain (ExactGw::squared_times).
template <typename Real>
using SquareAxpyFn = void (*)(const Real* d, double s, double* out, std::int64_t n);
// Returns sum_i t_i and adds t_i to acc_i (a plan row's sum and its share of the column sums).
template <typename Real>
using RowSumAddFn = double (*)(const Real* t, double* acc, std::int64_t n);

// One row of the exact solver's gradient (ExactGw::gradient, exact_gw_impl.h), each entry in
// double and rounded once: g[j] = gw (rx + cy[j] - 2 a[j]) (+ w c[j] when c is not null).
// Elementwise; the target may fuse the multiply-adds, so the last bit of an entry can differ
// between targets.
template <typename Real>
using GradientRowFn = void (*)(const Real* a,
                               const double* cy,
                               const Real* c,
                               double rx,
                               double gw,
                               double w,
                               Real* g,
                               std::int64_t n);
// The conditional-gradient step on the dense arrays (ExactGw::step): t[e] = keep t[e] and
// a[e] = keep a[e] + alpha v[e], in Real. Elementwise, the same fusing caveat.
template <typename Real>
using StepFn = void (*)(Real* t, Real* a, const Real* v, Real keep, Real alpha, std::int64_t n);

// Putting a plan on the polytope (scale_and_round, marginals.cpp), per plan row:
// ScaleRowFn: t[j] *= factor[j], returns the new sum of t (the target's summation order);
// ScaleFn: t[j] *= s; AddFn: acc[j] += t[j].
using ScaleRowFn = double (*)(double* t, const double* factor, std::int64_t n);
using ScaleFn = void (*)(double* t, double s, std::int64_t n);
using AddFn = void (*)(double* acc, const double* t, std::int64_t n);

struct GwCostKernels {
  GemmAbtFn<float> gemm_abt_f;
  GemmAbtFn<double> gemm_abt_d;
  GemmFn<float> gemm_f;
  GemmFn<double> gemm_d;
  // The exact solver's per-iteration reductions over n x k (solver/exact/exact_gw_impl.h): as plain
  // loops they are one dependent double add per entry (no reassociation without -ffast-math),
  // ~14% of a 150-node pair in `gwalign pairwise`.
  DotFn<float> dot_f;
  DotFn<double> dot_d;
  SquareDotFn<float> square_dot_f;
  SquareDotFn<double> square_dot_d;
  RowSumAddFn<float> row_sum_add_f;
  RowSumAddFn<double> row_sum_add_d;
  // Elementwise passes of every conditional-gradient iteration: in the exact solver's own
  // (baseline) build they were ~8% of a 150-node pair in `gwalign pairwise` (bench/RESULTS.md,
  // issue 14).
  GradientRowFn<float> gradient_row_f;
  GradientRowFn<double> gradient_row_d;
  StepFn<float> step_f;
  StepFn<double> step_d;
  // The Sinkhorn-Knopp sweeps of the projection onto the marginals: in its own (baseline) build
  // ~5% of a 150-node pair in `gwalign pairwise` (bench/RESULTS.md, issue 14).
  ScaleRowFn scale_row;
  ScaleFn scale;
  AddFn add;
  // (d o d) x by row axpys (ExactGw::squared_times): square_dot per row of a ~150-node matrix is
  // one chain of ~19 dependent vector adds and was ~4% of a pair in `gwalign pairwise`.
  SquareAxpyFn<float> square_axpy_f;
  SquareAxpyFn<double> square_axpy_d;

  template <typename Real>
  SquareAxpyFn<Real> square_axpy() const {
    if constexpr (std::is_same_v<Real, float>) {
      return square_axpy_f;
    } else {
      return square_axpy_d;
    }
  }

  template <typename Real>
  DotFn<Real> dot() const {
    if constexpr (std::is_same_v<Real, float>) {
      return dot_f;
    } else {
      return dot_d;
    }
  }
  template <typename Real>
  SquareDotFn<Real> square_dot() const {
    if constexpr (std::is_same_v<Real, float>) {
      return square_dot_f;
    } else {
      return square_dot_d;
    }
  }
  template <typename Real>
  RowSumAddFn<Real> row_sum_add() const {
    if constexpr (std::is_same_v<Real, float>) {
      return row_sum_add_f;
    } else {
      return row_sum_add_d;
    }
  }

  template <typename Real>
  GradientRowFn<Real> gradient_row() const {
    if constexpr (std::is_same_v<Real, float>) {
      return gradient_row_f;
    } else {
      return gradient_row_d;
    }
  }
  template <typename Real>
  StepFn<Real> step() const {
    if constexpr (std::is_same_v<Real, float>) {
      return step_f;
    } else {
      return step_d;
    }
  }

  template <typename Real>
  GemmFn<Real> gemm() const {
    if constexpr (std::is_same_v<Real, float>) {
      return gemm_f;
    } else {
      return gemm_d;
    }
  }

  template <typename Real>
  GemmAbtFn<Real> gemm_abt() const {
    if constexpr (std::is_same_v<Real, float>) {
      return gemm_abt_f;
    } else {
      return gemm_abt_d;
    }
  }
};

GW_DECLARE_ISA_TABLE(GwCostKernels, kGwCostKernels)

inline const GwCostKernels& gw_cost_kernels() { return GW_ACTIVE_ISA_TABLE(kGwCostKernels); }

}  // namespace gw::detail
