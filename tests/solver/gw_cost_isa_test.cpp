// The exact solver's dispatched reductions (gw_cost_isa.cpp) against plain double loops, on fresh
// random inputs, once per supported target. They sum in the target's order (vector lanes), so the
// tolerance is relative to the sum of magnitudes: a few units of double rounding per term, far
// below what a wrong lane, a dropped tail entry or a float accumulator would give (a dropped entry
// moves the sum by ~1 / n of it; float accumulation by ~1e-7). The elementwise passes of the
// conditional-gradient iterations are checked entry by entry.
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

TEST(GwCostIsaKernels, GradientRowsAndStepsMatchPlainLoopsOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(94);
    check_elementwise<double>(rng);
    check_elementwise<float>(rng);
  });
}

}  // namespace
}  // namespace gw
