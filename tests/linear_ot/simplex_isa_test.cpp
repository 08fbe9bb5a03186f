// The transport simplex's per-target loops (simplex_isa.cpp) against plain loops, on random inputs,
// once per supported target: the pricing minimum, the cost maximum with its non-finite flag, and
// the integer conversion (which must give integer_costs()'s integers exactly).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "isa_test_util.h"
#include "linear_ot/linear_ot_impl.h"
#include "linear_ot/simplex_kernels_impl.h"

namespace gw {
namespace {

// Lengths that leave every tail of the 4-, 8- and 16-lane loops.
const int kLengths[] = {0, 1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 123, 500};

std::int64_t random_int(Rng& rng, std::int64_t magnitude) {
  return static_cast<std::int64_t>((2.0 * rng.uniform() - 1.0) * static_cast<double>(magnitude));
}

TEST(SimplexIsaKernels, ReducedCostMinimumEqualsThePlainLoopOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(91);
    const auto fn = detail::simplex_kernels().reduced_cost_min;
    for (int len : kLengths) {
      for (int trial = 0; trial < 20; ++trial) {
        // Magnitudes as in the simplex: costs up to 2^40, potentials up to ~2^52; some trials all
        // positive (the answer is then 0), and the minimum placed anywhere, tails included.
        const std::int64_t cost_scale = std::int64_t{1} << 40, pi_scale = std::int64_t{1} << 52;
        std::vector<std::int64_t> cost(len), pi_col(len);
        for (auto& c : cost)
          c = trial % 4 == 0 ? std::abs(random_int(rng, cost_scale)) : random_int(rng, cost_scale);
        for (auto& p : pi_col)
          p = trial % 4 == 0 ? -std::abs(random_int(rng, pi_scale)) : random_int(rng, pi_scale);
        const std::int64_t pi_row = trial % 4 == 0 ? pi_scale : random_int(rng, pi_scale);
        std::int64_t expected = 0;
        for (int j = 0; j < len; ++j) expected = std::min(expected, cost[j] + pi_row - pi_col[j]);
        EXPECT_EQ(fn(cost.data(), pi_row, pi_col.data(), len), expected)
            << "len " << len << " trial " << trial;
      }
    }
  });
}

template <typename CostT>
void check_abs_max_and_integers(Rng& rng) {
  const detail::SimplexKernels& kernels = detail::simplex_kernels();
  for (int len : kLengths) {
    std::vector<CostT> src(len);
    for (auto& v : src) v = static_cast<CostT>((2.0 * rng.uniform() - 1.0) * 3.7);
    double expected = 0.0;
    for (CostT v : src) expected = std::max(expected, std::abs(static_cast<double>(v)));
    EXPECT_EQ(kernels.abs_max<CostT>()(src.data(), len), expected) << "len " << len;

    if (len > 0) {
      std::vector<std::int64_t> got(len), want(len);
      kernels.to_integer<CostT>()(
          src.data(),
          got.data(),
          len,
          static_cast<double>(std::int64_t{1} << detail::kCostBits) / expected);
      detail::integer_costs(src.data(), want.data(), want.size(), expected);
      EXPECT_EQ(got, want) << "len " << len;
      // Half-integer products: ties go to even, as integer_costs' rounding does.
      std::vector<double> halves = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5};
      std::vector<std::int64_t> rounded(halves.size());
      kernels.to_integer_d(halves.data(), rounded.data(), std::ssize(halves), 1.0);
      EXPECT_EQ(rounded, (std::vector<std::int64_t>{0, 2, 2, 0, -2, -2}));

      // Any NaN or infinite entry, anywhere (tails included), gives -1.
      for (CostT bad : {std::numeric_limits<CostT>::quiet_NaN(),
                        std::numeric_limits<CostT>::infinity(),
                        -std::numeric_limits<CostT>::infinity()}) {
        std::vector<CostT> poisoned = src;
        poisoned[static_cast<std::size_t>(rng.uniform() * len) % len] = bad;
        EXPECT_EQ(kernels.abs_max<CostT>()(poisoned.data(), len), -1.0) << "len " << len;
      }
    }
  }
}

TEST(SimplexIsaKernels, CostMaximumAndIntegerCostsEqualThePlainLoopsOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(92);
    check_abs_max_and_integers<double>(rng);
    check_abs_max_and_integers<float>(rng);
  });
}

}  // namespace
}  // namespace gw
