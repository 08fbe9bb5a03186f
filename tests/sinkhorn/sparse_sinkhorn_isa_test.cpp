// The sparse Sinkhorn's per-target row loops (sparse_sinkhorn_isa.cpp) against plain std::exp
// loops, on fresh random rows with scattered partners, once per supported target; and the whole
// sparse Sinkhorn against the dense reference oracle on every target.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "core/rng.h"
#include "isa_test_util.h"
#include "sinkhorn/sinkhorn_reference.h"
#include "sinkhorn/sparse_sinkhorn.h"
#include "sinkhorn/sparse_sinkhorn_kernels_impl.h"

namespace gw {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// fast_exp is ~1 ulp; the sums differ from the plain loop's only in their order (vector lanes),
// so a few ulps of the result. The lse's absolute error is then a few ulps of its magnitude.
constexpr double kRelativeTolerance = 1e-13;

// Lengths that cover vector tails of every width (1..8 double lanes) and long columns.
const std::int64_t kLengths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 64, 100, 513};

struct ScatteredRow {
  std::vector<float> cost;
  std::vector<Index> index;
  std::vector<double> partner;  // scaled potentials, some -inf
};

// A row of `len` entries whose partners are drawn from a pool of 4 len potentials (every fifth
// of them -inf), costs in [0, 1).
ScatteredRow scattered_row(std::int64_t len, Rng& rng) {
  ScatteredRow r;
  const Index pool = static_cast<Index>(4 * len + 1);
  r.partner.resize(pool);
  for (Index j = 0; j < pool; ++j) r.partner[j] = j % 5 == 4 ? -kInf : 30.0 * rng.uniform() - 10.0;
  for (std::int64_t p = 0; p < len; ++p) {
    r.cost.push_back(static_cast<float>(rng.uniform()));
    r.index.push_back(static_cast<Index>(rng.uniform_index(pool)));
  }
  return r;
}

double plain_lse(const ScatteredRow& r, double inv_eps) {
  double max = -kInf;
  for (std::size_t p = 0; p < r.cost.size(); ++p) {
    const double v = r.partner[r.index[p]];
    if (v != -kInf) max = std::max(max, v - r.cost[p] * inv_eps);
  }
  if (max == -kInf) return max;
  double sum = 0.0;
  for (std::size_t p = 0; p < r.cost.size(); ++p) {
    const double v = r.partner[r.index[p]];
    if (v != -kInf) sum += std::exp(v - r.cost[p] * inv_eps - max);
  }
  return max + std::log(sum);
}

TEST(SparseSinkhornIsaKernels, SupportLogSumExpMatchesPlainLoopOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(81);
    const detail::SparseSinkhornKernels& kernels = detail::sparse_sinkhorn_kernels();
    for (std::int64_t len : kLengths) {
      const ScatteredRow r = scattered_row(len, rng);
      const double inv_eps = 1.0 / (0.001 + 0.1 * rng.uniform());
      std::vector<double> scratch(len);
      int bad = -1;
      const double got = kernels.support_lse(
          r.cost.data(), r.index.data(), r.partner.data(), inv_eps, len, scratch.data(), &bad);
      const double want = plain_lse(r, inv_eps);
      EXPECT_EQ(bad, 0);
      if (want == -kInf) {
        EXPECT_EQ(got, -kInf) << "len " << len;
      } else {
        EXPECT_NEAR(got, want, kRelativeTolerance * std::max(1.0, std::abs(want))) << "len " << len;
      }
    }
    // Every partner -inf: -inf. A NaN cost on a live partner: flagged.
    ScatteredRow dead = scattered_row(9, rng);
    for (double& v : dead.partner) v = -kInf;
    std::vector<double> scratch(9);
    int bad = -1;
    EXPECT_EQ(kernels.support_lse(dead.cost.data(), dead.index.data(), dead.partner.data(), 10.0, 9,
                                  scratch.data(), &bad),
              -kInf);
    EXPECT_EQ(bad, 0);
    ScatteredRow nan_row = scattered_row(9, rng);
    for (double& v : nan_row.partner) v = 0.0;
    nan_row.cost[5] = std::numeric_limits<float>::quiet_NaN();
    kernels.support_lse(nan_row.cost.data(), nan_row.index.data(), nan_row.partner.data(), 10.0, 9,
                        scratch.data(), &bad);
    EXPECT_EQ(bad, 1);
  });
}

TEST(SparseSinkhornIsaKernels, SupportMomentumBlendMatchesPlainLoopOnEveryTarget) {
  test::for_each_isa([](Isa) {
    Rng rng(82);
    const detail::SparseSinkhornKernels& kernels = detail::sparse_sinkhorn_kernels();
    for (std::int64_t len : kLengths) {
      for (double u : {-3.0 + rng.uniform(), -kInf}) {
        const ScatteredRow r = scattered_row(len, rng);
        const double inv_eps = 1.0 / (0.01 + 0.1 * rng.uniform());
        const double alpha = 0.2 + 0.8 * rng.uniform();
        std::vector<double> plan(len), want(len);
        for (std::int64_t p = 0; p < len; ++p) plan[p] = want[p] = rng.uniform() * 1e-3;
        double change = 0.0, cost = 0.0, mass = 0.0;
        for (std::int64_t p = 0; p < len; ++p) {
          const double v = r.partner[r.index[p]];
          const double fresh = (u == -kInf || v == -kInf) ? 0.0 : std::exp(u + v - r.cost[p] * inv_eps);
          const double blended = (1.0 - alpha) * want[p] + alpha * fresh;
          change += (blended - want[p]) * (blended - want[p]);
          cost += r.cost[p] * blended;
          mass += blended;
          want[p] = blended;
        }
        const PlanBlendStats stats =
            kernels.support_blend(r.cost.data(), r.index.data(), r.partner.data(), u, inv_eps,
                                  1.0 - alpha, alpha, len, plan.data());
        for (std::int64_t p = 0; p < len; ++p) {
          EXPECT_NEAR(plan[p], want[p], kRelativeTolerance * std::abs(want[p]) + 1e-300)
              << "len " << len << " entry " << p;
        }
        EXPECT_NEAR(stats.change_sq, change, kRelativeTolerance * change + 1e-300);
        EXPECT_NEAR(stats.cost, cost, kRelativeTolerance * cost + 1e-300);
        EXPECT_NEAR(stats.mass, mass, kRelativeTolerance * mass + 1e-300);
      }
    }
  });
}

TEST(SparseSinkhornIsaKernels, EachTargetHasItsOwnTable) {
  std::set<const detail::SparseSinkhornKernels*> tables;
  test::for_each_isa([&](Isa) { tables.insert(&detail::sparse_sinkhorn_kernels()); });
  EXPECT_EQ(tables.size(), supported_isas().size());
}

// The whole sparse Sinkhorn on every target against the dense oracle with +inf off a random
// support (every row 1..12 entries, every column covered). Same schedule in double; only the
// exponentials (fast_exp, ~1 ulp) and summation orders differ, so 1e-9 of epsilon on the
// potentials leaves room.
TEST(SparseSinkhornIsaKernels, SparseSinkhornMatchesDenseOracleOnEveryTarget) {
  const Index n = 70, k = 50;
  Rng rng(83);
  std::vector<Offset> offsets{0};
  std::vector<Index> cols;
  std::vector<float> cost;
  std::vector<char> reached(k, 0);
  for (Index i = 0; i < n; ++i) {
    std::vector<char> taken(k, 0);
    const int count = 1 + static_cast<int>(rng.uniform_index(12));
    for (int c = 0; c < count; ++c) taken[rng.uniform_index(k)] = 1;
    if (i == n - 1)
      for (Index j = 0; j < k; ++j) taken[j] |= !reached[j];
    for (Index j = 0; j < k; ++j) {
      if (!taken[j]) continue;
      reached[j] = 1;
      cols.push_back(j);
      cost.push_back(static_cast<float>(rng.uniform()));
    }
    offsets.push_back(static_cast<Offset>(cols.size()));
  }
  std::vector<double> a(n, 1.0 / n), b(k, 1.0 / k);
  std::vector<double> dense(static_cast<std::size_t>(n) * k, kInf);
  for (Index i = 0; i < n; ++i)
    for (Offset e = offsets[i]; e < offsets[i + 1]; ++e)
      dense[static_cast<std::size_t>(i) * k + cols[e]] = cost[e];
  const double epsilon = 0.03;
  SinkhornOptions options;
  options.max_iterations = 30;
  options.tolerance = 0.0;
  std::vector<double> f_ref(n, 0.0), g_ref(k, 0.0);
  sinkhorn_reference(CostView(dense.data(), n, k), a, b, epsilon, f_ref, g_ref, options);
  const SparseSupportView view{n, k, offsets, cols};
  const SupportTranspose t = transpose_support(view);
  test::for_each_isa([&](Isa) {
    std::vector<double> f(n, 0.0), g(k, 0.0);
    sparse_sinkhorn(view, t, cost, a, b, epsilon, f, g, options);
    for (Index i = 0; i < n; ++i) EXPECT_NEAR(f[i], f_ref[i], 1e-9 * epsilon);
    for (Index j = 0; j < k; ++j) EXPECT_NEAR(g[j], g_ref[j], 1e-9 * epsilon);
  });
}

}  // namespace
}  // namespace gw
