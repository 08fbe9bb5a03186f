// The cost GEMM of the CPU GW loop (gw_loop_cpu.cpp) and the exact solver's reductions
// (exact_gw_impl.h), compiled once per instruction-set target:
// Eigen picks its packet width and FMA use from the target's macros, so each copy runs at its
// target's width. Eigen's namespace is renamed per target by the build (core/isa_dispatch_impl.h).
#include <Eigen/Core>

#include <cstdint>

#include "solver/gw_cost_kernels_impl.h"

namespace gw::detail::GW_ISA_NS {
namespace {

template <typename Real>
using RowMatrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <typename Real>
void gemm_abt_kernel(const Real* left,
                     const Real* right,
                     Index rows,
                     Index cols,
                     Index inner,
                     Real* out,
                     Offset out_stride) {
  const Eigen::Map<const RowMatrix<Real>> a(left, rows, inner);
  const Eigen::Map<const RowMatrix<Real>> b(right, cols, inner);
  Eigen::Map<RowMatrix<Real>, 0, Eigen::OuterStride<>> c(
      out, rows, cols, Eigen::OuterStride<>(out_stride));
  c.noalias() = a * b.transpose();
}

template <typename Real>
void gemm_kernel(const Real* left,
                 bool transpose_left,
                 const Real* right,
                 Index rows,
                 Index cols,
                 Index inner,
                 Real* out,
                 Offset out_stride,
                 bool accumulate) {
  const Eigen::Map<const RowMatrix<Real>> b(right, inner, cols);
  Eigen::Map<RowMatrix<Real>, 0, Eigen::OuterStride<>> c(
      out, rows, cols, Eigen::OuterStride<>(out_stride));
  if (transpose_left) {
    const Eigen::Map<const RowMatrix<Real>> a(left, inner, rows);
    if (accumulate) {
      c.noalias() += a.transpose() * b;
    } else {
      c.noalias() = a.transpose() * b;
    }
  } else {
    const Eigen::Map<const RowMatrix<Real>> a(left, rows, inner);
    if (accumulate) {
      c.noalias() += a * b;
    } else {
      c.noalias() = a * b;
    }
  }
}

// The reductions: `omp simd` lets the compiler keep a vector of partial sums (the target's width)
// instead of one dependent add per entry.
//
// dot sums four quarters of the range into four vectors of partial sums: one vector's chain of
// dependent adds bounded it at a fraction of the multiply throughput, and the exact solver runs it
// over whole n x k plans every iteration (the same split made square_dot, called on rows of a
// ~150-node distance matrix, twice as slow: it stays a single chain).
template <typename Real>
double dot_kernel(const Real* __restrict a, const Real* __restrict b, std::int64_t n) {
  const std::int64_t quarter = n / 4;
  const Real *a1 = a + quarter, *a2 = a1 + quarter, *a3 = a2 + quarter;
  const Real *b1 = b + quarter, *b2 = b1 + quarter, *b3 = b2 + quarter;
  double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (std::int64_t i = 0; i < quarter; ++i) {
    s0 += static_cast<double>(a[i]) * static_cast<double>(b[i]);
    s1 += static_cast<double>(a1[i]) * static_cast<double>(b1[i]);
    s2 += static_cast<double>(a2[i]) * static_cast<double>(b2[i]);
    s3 += static_cast<double>(a3[i]) * static_cast<double>(b3[i]);
  }
  for (std::int64_t i = 4 * quarter; i < n; ++i) {
    s0 += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  }
  return (s0 + s1) + (s2 + s3);
}

template <typename Real>
double square_dot_kernel(const Real* __restrict d, const double* __restrict x, std::int64_t n) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(d[i]);
    sum += v * v * x[i];
  }
  return sum;
}

template <typename Real>
void square_axpy_kernel(const Real* __restrict d,
                        double s,
                        double* __restrict out,
                        std::int64_t n) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(d[i]);
    out[i] += s * (v * v);
  }
}

template <typename Real>
double row_sum_add_kernel(const Real* __restrict t, double* __restrict acc, std::int64_t n) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(t[i]);
    sum += v;
    acc[i] += v;
  }
  return sum;
}

template <typename Real>
void gradient_row_kernel(const Real* __restrict a,
                         const double* __restrict cy,
                         const Real* __restrict c,
                         double rx,
                         double gw,
                         double w,
                         Real* __restrict g,
                         std::int64_t n) {
  if (c == nullptr) {
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) {
      g[j] = static_cast<Real>(gw * (rx + cy[j] - 2.0 * static_cast<double>(a[j])));
    }
  } else {
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j) {
      g[j] = static_cast<Real>(gw * (rx + cy[j] - 2.0 * static_cast<double>(a[j])) +
                               w * static_cast<double>(c[j]));
    }
  }
}

template <typename Real>
void step_kernel(
    Real* __restrict t, Real* __restrict a, const Real* __restrict v, Real keep, Real alpha,
    std::int64_t n) {
#pragma omp simd
  for (std::int64_t e = 0; e < n; ++e) {
    t[e] *= keep;
    a[e] = keep * a[e] + alpha * v[e];
  }
}

double scale_row_kernel(double* __restrict t, const double* __restrict factor, std::int64_t n) {
  double mass = 0.0;
#pragma omp simd reduction(+ : mass)
  for (std::int64_t j = 0; j < n; ++j) mass += (t[j] *= factor[j]);
  return mass;
}

void scale_kernel(double* __restrict t, double s, std::int64_t n) {
#pragma omp simd
  for (std::int64_t j = 0; j < n; ++j) t[j] *= s;
}

void add_kernel(double* __restrict acc, const double* __restrict t, std::int64_t n) {
#pragma omp simd
  for (std::int64_t j = 0; j < n; ++j) acc[j] += t[j];
}

}  // namespace

extern const GwCostKernels kGwCostKernels = {
    &gemm_abt_kernel<float>,
    &gemm_abt_kernel<double>,
    &gemm_kernel<float>,
    &gemm_kernel<double>,
    &dot_kernel<float>,
    &dot_kernel<double>,
    &square_dot_kernel<float>,
    &square_dot_kernel<double>,
    &row_sum_add_kernel<float>,
    &row_sum_add_kernel<double>,
    &gradient_row_kernel<float>,
    &gradient_row_kernel<double>,
    &step_kernel<float>,
    &step_kernel<double>,
    &scale_row_kernel,
    &scale_kernel,
    &add_kernel,
    &square_axpy_kernel<float>,
    &square_axpy_kernel<double>,
};

}  // namespace gw::detail::GW_ISA_NS
