// The exact solver's dispatched reductions (gw_cost_isa.cpp) against plain double loops, on fresh
// random inputs, once per supported target. They sum in the target's order (vector lanes), so the
// tolerance is relative to the sum of magnitudes: a few units of double rounding per term, far
// below what a wrong lane, a dropped tail entry or a float accumulator would give (a dropped entry
// moves the sum by ~1 / n of it; float accumulation by ~1e-7).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
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

}  // namespace
}  // namespace gw
