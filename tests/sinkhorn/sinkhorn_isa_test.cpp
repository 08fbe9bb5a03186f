// The fused Sinkhorn's per-target row loops (sinkhorn_isa.cpp) against plain double loops, on
// fresh random rows, once per supported target.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "core/rng.h"
#include "isa_test_util.h"
#include "sinkhorn/sinkhorn_kernels_impl.h"

namespace gw {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Relative error of the row exponential: the polynomial's ~1 ulp plus the rounding of the exponent
// argument in T (|argument| <= ~30 here: 30 ulp of T relative, times ln 2).
template <typename T>
double exp2_tolerance() {
  return 64.0 * std::numeric_limits<T>::epsilon();
}

// Row lengths that cover vector tails of every width (1..16 lanes) and the 1024-entry blocks.
const std::int64_t kLengths[] = {1, 3, 8, 15, 16, 17, 33, 100, 1023, 1024, 1025, 2500};

template <typename CostT, typename T>
void check_exp2_row(const detail::SinkhornKernels& kernels, Rng& rng) {
  const auto fn = kernels.exp2_row<CostT, T>();
  for (std::int64_t k : kLengths) {
    std::vector<CostT> c(k);
    std::vector<T> w(k), out(k);
    for (auto& x : c) x = static_cast<CostT>(rng.uniform());
    for (auto& x : w) x = static_cast<T>(-8.0 * rng.uniform());
    const T shift = static_cast<T>(-2.0 + rng.uniform());
    const T scale = static_cast<T>(-20.0 * rng.uniform());
    const double sum = fn(c.data(), w.data(), shift, scale, k, out.data());
    double expected_sum = 0.0;
    for (std::int64_t j = 0; j < k; ++j) {
      const T argument = static_cast<T>(static_cast<T>(c[j]) * scale + w[j]) + shift;
      const double expected = std::exp2(static_cast<double>(argument));
      expected_sum += expected;
      ASSERT_NEAR(out[j], expected, exp2_tolerance<T>() * expected) << "k " << k << " j " << j;
    }
    EXPECT_NEAR(sum, expected_sum, exp2_tolerance<T>() * expected_sum) << "k " << k;
  }
}

template <typename CostT, typename T>
void check_exact_row_lse(const detail::SinkhornKernels& kernels, Rng& rng) {
  const auto fn = kernels.exact_row_lse<CostT, T>();
  const double inv_eps = 1e4;  // exponents far below double's range: the max shift must work
  for (std::int64_t k : kLengths) {
    std::vector<CostT> c(k);
    std::vector<T> wt(k);
    for (auto& x : c) x = static_cast<CostT>(rng.uniform());
    for (auto& x : wt) x = static_cast<T>(-3.0 * rng.uniform());
    if (k > 2) wt[1] = static_cast<T>(-kInf);  // a zero-mass column is skipped
    double max = -kInf;
    for (std::int64_t j = 0; j < k; ++j) {
      if (static_cast<double>(wt[j]) == -kInf) continue;
      max = std::max(max, static_cast<double>(wt[j]) * std::log(2.0) - c[j] * inv_eps);
    }
    double sum = 0.0;
    for (std::int64_t j = 0; j < k; ++j) {
      if (static_cast<double>(wt[j]) == -kInf) continue;
      sum += std::exp(static_cast<double>(wt[j]) * std::log(2.0) - c[j] * inv_eps - max);
    }
    int bad = -1;
    const double lse = fn(c.data(), wt.data(), inv_eps, k, &bad);
    EXPECT_EQ(bad, 0);
    EXPECT_NEAR(lse, max + std::log(sum), 1e-12 * std::abs(max)) << "k " << k;
    // A NaN cost entry is reported, never summed.
    c[k - 1] = std::numeric_limits<CostT>::quiet_NaN();
    fn(c.data(), wt.data(), inv_eps, k, &bad);
    EXPECT_EQ(bad, 1) << "k " << k;
  }
}

template <typename T>
void check_accumulate(const detail::SinkhornKernels& kernels, Rng& rng) {
  for (std::int64_t k : kLengths) {
    std::vector<T> p(k), acc(k), acc0(k);
    std::vector<double> sum(k), sum0(k);
    for (auto& x : p) x = static_cast<T>(rng.uniform());
    for (auto& x : acc0) x = static_cast<T>(rng.uniform());
    for (auto& x : sum0) x = rng.uniform();
    acc = acc0;
    sum = sum0;
    const T scale = static_cast<T>(rng.uniform());
    kernels.scaled_add<T>()(p.data(), scale, k, acc.data());
    for (std::int64_t j = 0; j < k; ++j) {
      const double expected = static_cast<double>(p[j]) * scale + acc0[j];
      // One rounding of the multiply-add (two without hardware FMA).
      ASSERT_NEAR(acc[j], expected, 2.0 * std::numeric_limits<T>::epsilon() * expected);
    }
    // Two rows in one pass: bit for bit two scaled_add calls of the same target.
    std::vector<T> p1(k), pair = acc0, twice = acc0;
    for (auto& x : p1) x = static_cast<T>(rng.uniform());
    const T scale1 = static_cast<T>(rng.uniform());
    kernels.scaled_add2<T>()(p.data(), scale, p1.data(), scale1, k, pair.data());
    kernels.scaled_add<T>()(p.data(), scale, k, twice.data());
    kernels.scaled_add<T>()(p1.data(), scale1, k, twice.data());
    for (std::int64_t j = 0; j < k; ++j) {
      ASSERT_EQ(pair[j], twice[j]) << "entry " << j;
      const double expected = static_cast<double>(p[j]) * scale + acc0[j] +
                              static_cast<double>(p1[j]) * scale1;
      ASSERT_NEAR(pair[j], expected, 4.0 * std::numeric_limits<T>::epsilon() * expected);
    }
    const std::vector<T> before = acc;
    kernels.flush<T>()(acc.data(), sum.data(), k);
    for (std::int64_t j = 0; j < k; ++j) {
      ASSERT_EQ(acc[j], T(0));
      ASSERT_EQ(sum[j], sum0[j] + static_cast<double>(before[j]));
    }
  }
}

template <typename T, typename OutT>
void check_scale_store(const detail::SinkhornKernels& kernels, Rng& rng) {
  for (std::int64_t k : kLengths) {
    std::vector<T> r(k);
    std::vector<OutT> out(k);
    for (auto& x : r) x = static_cast<T>(rng.uniform());
    const T scale = static_cast<T>(0.5 + rng.uniform());
    kernels.scale_store<T, OutT>()(r.data(), scale, k, out.data());
    for (std::int64_t j = 0; j < k; ++j) ASSERT_EQ(out[j], static_cast<OutT>(r[j] * scale));
  }
}

template <typename CostT, typename T, typename PlanT>
void check_blend(const detail::SinkhornKernels& kernels, Rng& rng) {
  for (std::int64_t k : kLengths) {
    std::vector<T> r(k);
    std::vector<CostT> c(k);
    std::vector<PlanT> p(k), p0(k);
    for (auto& x : r) x = static_cast<T>(rng.uniform() / k);
    for (auto& x : c) x = static_cast<CostT>(rng.uniform());
    for (auto& x : p0) x = static_cast<PlanT>(rng.uniform() / k);
    p = p0;
    const T correction = static_cast<T>(0.5 + rng.uniform());
    const PlanT keep = static_cast<PlanT>(0.1), take = static_cast<PlanT>(0.9);
    const PlanBlendStats stats = kernels.blend_row<CostT, T, PlanT>()(
        r.data(), correction, c.data(), keep, take, k, p.data());
    double change = 0.0, cost = 0.0, mass = 0.0;
    for (std::int64_t j = 0; j < k; ++j) {
      const PlanT expected = keep * p0[j] + take * static_cast<PlanT>(r[j] * correction);
      // Exact unless the target contracts keep * p + take * x into one FMA: then one rounding less.
      ASSERT_NEAR(p[j], expected, 2.0 * std::numeric_limits<PlanT>::epsilon() * expected);
      const double delta = static_cast<double>(p[j]) - static_cast<double>(p0[j]);
      change += delta * delta;
      cost += static_cast<double>(c[j]) * static_cast<double>(p[j]);
      mass += static_cast<double>(p[j]);
    }
    EXPECT_NEAR(stats.change_sq, change, 1e-12 * change + 1e-300);
    EXPECT_NEAR(stats.cost, cost, 1e-12 * cost);
    EXPECT_NEAR(stats.mass, mass, 1e-12 * mass);
  }
}

TEST(SinkhornIsaKernels, RowExponentialMatchesStdExp2OnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(71);
    const detail::SinkhornKernels& kernels = detail::sinkhorn_kernels();
    check_exp2_row<float, float>(kernels, rng);
    check_exp2_row<double, float>(kernels, rng);
    check_exp2_row<float, double>(kernels, rng);
    check_exp2_row<double, double>(kernels, rng);
  });
}

// A double cost with float32 compute (the exact solver's start-up Sinkhorns on its float64
// matrices) is rounded to float as it is loaded: the float kernel on the rounded cost. With
// AVX-512 both run the same intrinsics loop, so bit for bit; the portable loop is vectorized by the
// compiler per instantiation (clang gave the two a different lane order for the float partial
// sums), so there each entry within 2 ulp and the sum within float summation error. A wrong lane
// order in the conversion, a dropped tail entry or a cost not rounded to float fails either way.
TEST(SinkhornIsaKernels, DoubleCostFloatRowIsTheFloatRowOnTheRoundedCost) {
  test::for_each_isa([](Isa isa) {
    Rng rng(74);
    const detail::SinkhornKernels& kernels = detail::sinkhorn_kernels();
    const auto mixed = kernels.exp2_row<double, float>();
    const auto plain = kernels.exp2_row<float, float>();
    const bool exact = isa == Isa::kAvx512;
    for (std::int64_t k : kLengths) {
      std::vector<double> c(k);
      std::vector<float> c32(k), w(k), a(k), b(k);
      for (std::int64_t j = 0; j < k; ++j) {
        c[j] = rng.uniform();  // 53 bits: a float keeps 24, so any other rounding shows
        c32[j] = static_cast<float>(c[j]);
        w[j] = static_cast<float>(-8.0 * rng.uniform());
      }
      const double sa = mixed(c.data(), w.data(), -1.5f, -13.0f, k, a.data());
      const double sb = plain(c32.data(), w.data(), -1.5f, -13.0f, k, b.data());
      if (exact) {
        ASSERT_EQ(sa, sb) << " k " << k;
      } else {
        ASSERT_NEAR(sa, sb, 1e-6 * sb) << " k " << k;
      }
      for (std::int64_t j = 0; j < k; ++j) {
        if (exact) {
          ASSERT_EQ(a[j], b[j]) << " k " << k << " j " << j;
        } else {
          ASSERT_NEAR(a[j], b[j], 0x1p-22 * b[j]) << " k " << k << " j " << j;
        }
      }
    }
  });
}

TEST(SinkhornIsaKernels, ExactRowLogSumExpMatchesPlainLoopOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(72);
    const detail::SinkhornKernels& kernels = detail::sinkhorn_kernels();
    check_exact_row_lse<float, float>(kernels, rng);
    check_exact_row_lse<double, float>(kernels, rng);
    check_exact_row_lse<float, double>(kernels, rng);
    check_exact_row_lse<double, double>(kernels, rng);
  });
}

TEST(SinkhornIsaKernels, ColumnAccumulationMatchesPlainLoopOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(73);
    const detail::SinkhornKernels& kernels = detail::sinkhorn_kernels();
    check_accumulate<float>(kernels, rng);
    check_accumulate<double>(kernels, rng);
  });
}

TEST(SinkhornIsaKernels, PlanOutputAndMomentumBlendMatchPlainLoopOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(74);
    const detail::SinkhornKernels& kernels = detail::sinkhorn_kernels();
    check_scale_store<float, float>(kernels, rng);
    check_scale_store<float, double>(kernels, rng);
    check_scale_store<double, float>(kernels, rng);
    check_scale_store<double, double>(kernels, rng);
    check_blend<float, float, float>(kernels, rng);
    check_blend<float, float, double>(kernels, rng);
    check_blend<float, double, float>(kernels, rng);
    check_blend<float, double, double>(kernels, rng);
    check_blend<double, float, float>(kernels, rng);
    check_blend<double, float, double>(kernels, rng);
    check_blend<double, double, float>(kernels, rng);
    check_blend<double, double, double>(kernels, rng);
  });
}

TEST(SinkhornIsaKernels, EachTargetHasItsOwnTable) {
  // The tables differ between targets (a dispatch that always returned one table would pass the
  // checks above while running one target only).
  std::set<const detail::SinkhornKernels*> tables;
  test::for_each_isa([&](Isa) { tables.insert(&detail::sinkhorn_kernels()); });
  EXPECT_EQ(tables.size(), supported_isas().size());
}

}  // namespace
}  // namespace gw
