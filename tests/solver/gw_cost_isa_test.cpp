// The exact solver's dispatched reductions (gw_cost_isa.cpp) against plain double loops, on fresh
// random inputs, once per supported target. They sum in the target's order (vector lanes), so the
// tolerance is relative to the sum of magnitudes: a few units of double rounding per term, far
// below what a wrong lane, a dropped tail entry or a float accumulator would give (a dropped entry
// moves the sum by ~1 / n of it; float accumulation by ~1e-7). The elementwise passes of the
// conditional-gradient iterations and square_axpy are checked entry by entry.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "core/rng.h"
#include "isa_test_util.h"
#include "solver/gw_cost_kernels_impl.h"

namespace gw {
namespace {

// Lengths that leave every tail of the 2-, 4-, 8- and 16-lane loops.
const std::int64_t kLengths[] = {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 150, 1001};
constexpr double kRelTol = 1e-13;

template <typename Real>
void check_reductions(Rng& rng) {
  const detail::GwCostKernels& kernels = detail::gw_cost_kernels();
  for (std::int64_t n : kLengths) {
    std::vector<Real> a(n), b(n);
    std::vector<double> x(n), acc(n), want_acc(n);
    for (std::int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<Real>(rng.uniform() - 0.3);
      b[i] = static_cast<Real>(rng.uniform());
      x[i] = rng.uniform();
      acc[i] = want_acc[i] = rng.uniform();
    }
    double dot = 0.0, dot_mag = 0.0, sq = 0.0, sum = 0.0, sum_mag = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double ai = a[i], bi = b[i];
      dot += ai * bi;
      dot_mag += std::abs(ai * bi);
      sq += ai * ai * x[i];
      sum += ai;
      sum_mag += std::abs(ai);
      want_acc[i] += ai;
    }
    EXPECT_NEAR(kernels.dot<Real>()(a.data(), b.data(), n), dot, kRelTol * dot_mag) << n;
    EXPECT_NEAR(kernels.square_dot<Real>()(a.data(), x.data(), n), sq, kRelTol * sq) << n;
    EXPECT_NEAR(kernels.row_sum_add<Real>()(a.data(), acc.data(), n), sum, kRelTol * sum_mag)
        << n;
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(acc[i], want_acc[i]) << n << " " << i;
    // out_i += s a_i^2, entry by entry: the target may fuse the multiply-add (one rounding less),
    // so a few units of double rounding of the terms' magnitudes; a wrong lane or a skipped tail
    // entry is off by the whole term.
    std::vector<double> out(n), start(n);
    for (std::int64_t i = 0; i < n; ++i) out[i] = start[i] = rng.uniform();
    const double s = rng.uniform() - 0.5;
    kernels.square_axpy<Real>()(a.data(), s, out.data(), n);
    for (std::int64_t i = 0; i < n; ++i) {
      const double ai = a[i], term = s * (ai * ai);
      ASSERT_NEAR(out[i], start[i] + term, 4 * 0x1p-52 * (std::abs(start[i]) + std::abs(term)))
          << n << " " << i;
    }
  }
}

TEST(GwCostIsaKernels, ReductionsMatchPlainLoopsOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(93);
    check_reductions<double>(rng);
    check_reductions<float>(rng);
  });
}

// The elementwise passes: each entry against the same formula in plain double, rounded once.
// A target may fuse a multiply-add (one rounding instead of two), so an entry may differ by a few
// units of double rounding before its conversion to Real: up to one unit of Real rounding. A wrong
// lane, a skipped tail entry or a dropped feature term is off by far more.
template <typename Real>
void check_elementwise(Rng& rng) {
  const detail::GwCostKernels& kernels = detail::gw_cost_kernels();
  const double unit = std::is_same_v<Real, float> ? 0x1p-23 : 0x1p-51;
  for (std::int64_t n : kLengths) {
    std::vector<Real> a(n), c(n), v(n), t(n), g(n);
    std::vector<double> cy(n);
    for (std::int64_t j = 0; j < n; ++j) {
      a[j] = static_cast<Real>(rng.uniform());
      c[j] = static_cast<Real>(rng.uniform());
      v[j] = static_cast<Real>(rng.uniform());
      t[j] = static_cast<Real>(rng.uniform());
      cy[j] = rng.uniform();
    }
    const double rx = rng.uniform(), gw = 1.5, w = 0.25;
    for (const bool fused : {false, true}) {
      kernels.gradient_row<Real>()(
          a.data(), cy.data(), fused ? c.data() : nullptr, rx, gw, w, g.data(), n);
      for (std::int64_t j = 0; j < n; ++j) {
        double want = gw * (rx + cy[j] - 2.0 * static_cast<double>(a[j]));
        if (fused) want += w * static_cast<double>(c[j]);
        ASSERT_NEAR(g[j], want, unit * (std::abs(want) + 4.0)) << n << " " << j << " " << fused;
      }
    }
    std::vector<Real> t2 = t, a2 = a;
    const Real keep = static_cast<Real>(0.625), alpha = static_cast<Real>(0.375);
    kernels.step<Real>()(t2.data(), a2.data(), v.data(), keep, alpha, n);
    for (std::int64_t e = 0; e < n; ++e) {
      ASSERT_EQ(t2[e], static_cast<Real>(keep * t[e])) << n << " " << e;
      const double want = static_cast<double>(keep) * a[e] + static_cast<double>(alpha) * v[e];
      ASSERT_NEAR(a2[e], want, 2.0 * unit * want) << n << " " << e;
    }
  }
}

// The projection's row passes: the elementwise products and sums exactly (one rounding each, as
// the plain loop), the row mass to the reductions' tolerance.
void check_projection_rows(Rng& rng) {
  const detail::GwCostKernels& kernels = detail::gw_cost_kernels();
  for (std::int64_t n : kLengths) {
    std::vector<double> t(n), factor(n), acc(n);
    for (std::int64_t j = 0; j < n; ++j) {
      t[j] = rng.uniform();
      factor[j] = 0.5 + rng.uniform();
      acc[j] = rng.uniform();
    }
    std::vector<double> got = t;
    const double mass = kernels.scale_row(got.data(), factor.data(), n);
    double want_mass = 0.0;
    for (std::int64_t j = 0; j < n; ++j) {
      ASSERT_EQ(got[j], t[j] * factor[j]) << n << " " << j;
      want_mass += t[j] * factor[j];
    }
    EXPECT_NEAR(mass, want_mass, kRelTol * want_mass) << n;
    std::vector<double> scaled = t;
    kernels.scale(scaled.data(), 0.7, n);
    std::vector<double> summed = acc;
    kernels.add(summed.data(), t.data(), n);
    for (std::int64_t j = 0; j < n; ++j) {
      ASSERT_EQ(scaled[j], t[j] * 0.7) << n << " " << j;
      ASSERT_EQ(summed[j], acc[j] + t[j]) << n << " " << j;
    }
  }
}

TEST(GwCostIsaKernels, ProjectionRowPassesMatchPlainLoopsOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(96);
    check_projection_rows(rng);
  });
}

TEST(GwCostIsaKernels, GradientRowsAndStepsMatchPlainLoopsOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(94);
    check_elementwise<double>(rng);
    check_elementwise<float>(rng);
  });
}

// out (+)= op(left) right against a plain triple loop in double, for both orientations of left,
// with and without accumulation, into an output with a row stride wider than its columns (the
// padding must stay untouched). Tolerance relative to the sum of the products' magnitudes: Real
// rounding over `inner` terms, far below a transposed operand, a skipped block or a lost
// accumulation.
template <typename Real>
void check_gemm(Rng& rng) {
  const detail::GwCostKernels& kernels = detail::gw_cost_kernels();
  const double unit = std::is_same_v<Real, float> ? 0x1p-23 : 0x1p-51;
  const Index shapes[][3] = {{1, 1, 1}, {3, 5, 2}, {17, 9, 33}, {150, 123, 7}, {64, 130, 150}};
  for (const auto& shape : shapes) {
    const Index rows = shape[0], cols = shape[1], inner = shape[2];
    const Offset stride = cols + 3;
    std::vector<Real> left(static_cast<std::size_t>(rows) * inner);
    std::vector<Real> right(static_cast<std::size_t>(inner) * cols);
    std::vector<Real> start(static_cast<std::size_t>(rows) * stride);
    for (Real& x : left) x = static_cast<Real>(rng.uniform() - 0.5);
    for (Real& x : right) x = static_cast<Real>(rng.uniform() - 0.5);
    for (Real& x : start) x = static_cast<Real>(rng.uniform());
    for (const bool transpose_left : {false, true}) {
      for (const bool accumulate : {false, true}) {
        std::vector<Real> out = start;
        kernels.gemm<Real>()(left.data(), transpose_left, right.data(), rows, cols, inner,
                             out.data(), stride, accumulate);
        for (Index i = 0; i < rows; ++i) {
          for (Offset j = 0; j < stride; ++j) {
            const std::size_t at = static_cast<std::size_t>(i) * stride + j;
            if (j >= cols) {
              ASSERT_EQ(out[at], start[at]) << "padding " << i << " " << j;
              continue;
            }
            double want = accumulate ? static_cast<double>(start[at]) : 0.0;
            double magnitude = std::abs(want);
            for (Index l = 0; l < inner; ++l) {
              const double a = transpose_left ? left[static_cast<std::size_t>(l) * rows + i]
                                              : left[static_cast<std::size_t>(i) * inner + l];
              const double term = a * right[static_cast<std::size_t>(l) * cols + j];
              want += term;
              magnitude += std::abs(term);
            }
            ASSERT_NEAR(out[at], want, 4.0 * unit * (magnitude + 1e-30))
                << rows << "x" << cols << "x" << inner << " " << transpose_left << accumulate
                << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

TEST(GwCostIsaKernels, GemmInBothOrientationsMatchesATripleLoopOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(95);
    check_gemm<double>(rng);
    check_gemm<float>(rng);
  });
}

}  // namespace
}  // namespace gw
