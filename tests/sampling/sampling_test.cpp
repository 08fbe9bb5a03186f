#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "sampling/sampling.h"

namespace gw {
namespace {

// A small random plan with some exactly-zero rows and entries.
std::vector<double> random_plan(Rng& rng, Index n, Index k) {
  std::vector<double> plan(static_cast<std::size_t>(n) * k);
  for (Index i = 0; i < n; ++i) {
    const bool empty_row = i % 5 == 3;
    for (Index j = 0; j < k; ++j) {
      const bool zero = empty_row || rng.uniform() < 0.3;
      plan[i * k + j] = zero ? 0.0 : rng.uniform();
    }
  }
  return plan;
}

TEST(Sampling, FrequenciesMatchThePlan) {
  Rng rng(10);
  const Index n = 7, k = 6;
  const auto plan = random_plan(rng, n, k);
  double total = 0.0;
  for (double x : plan) total += x;
  constexpr int kDraws = 200000;
  Rng draw(99);
  const AnchorPairs pairs = sample_anchor_pairs(plan.data(), n, k, k, kDraws, draw);
  std::vector<int> counts(n * k, 0);
  for (int s = 0; s < kDraws; ++s) ++counts[pairs.rows[s] * k + pairs.cols[s]];
  double chi2 = 0.0;
  int cells = 0;
  for (Index c = 0; c < n * k; ++c) {
    const double expected = kDraws * plan[c] / total;
    if (plan[c] == 0.0) {
      EXPECT_EQ(counts[c], 0) << "a zero entry was sampled at " << c;
      continue;
    }
    chi2 += (counts[c] - expected) * (counts[c] - expected) / expected;
    ++cells;
  }
  // Chi-square with (cells - 1) degrees of freedom: mean cells - 1, sd sqrt(2 (cells - 1)); a
  // 6-sigma bound keeps the test stable while catching any bias in row or column choice.
  const double dof = cells - 1;
  EXPECT_LT(chi2, dof + 6.0 * std::sqrt(2.0 * dof)) << "cells " << cells;
}

// The CSR sampler draws exactly what the dense sampler draws on the densified plan, whether the
// rows keep their zero entries (every column stored) or only the positive ones, and whatever the
// rows' column order within the stored ones (ascending, as a support keeps them).
TEST(Sampling, CsrSamplerDrawsTheDenseSamplersPairsOnTheSamePlan) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    const Index n = 3 + static_cast<Index>(rng.uniform() * 40);
    const Index k = 2 + static_cast<Index>(rng.uniform() * 40);
    const std::vector<double> plan = random_plan(rng, n, k);
    std::vector<double> row_mass(n, 0.0);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < k; ++j) row_mass[i] += plan[i * k + j];
    const std::vector<double> uniforms = draw_sampling_uniforms(rng, 300);
    const AnchorPairs dense = sample_anchor_pairs(plan.data(), n, k, k, row_mass, uniforms);
    for (bool keep_zeros : {true, false}) {
      std::vector<Offset> offsets{0};
      std::vector<Index> cols;
      std::vector<double> values;
      for (Index i = 0; i < n; ++i) {
        for (Index j = 0; j < k; ++j) {
          if (!keep_zeros && plan[i * k + j] == 0.0) continue;
          cols.push_back(j);
          values.push_back(plan[i * k + j]);
        }
        offsets.push_back(static_cast<Offset>(cols.size()));
      }
      const AnchorPairs csr = sample_csr_anchor_pairs(offsets, cols, values, row_mass, uniforms);
      EXPECT_EQ(csr.rows, dense.rows) << "seed " << seed << " zeros " << keep_zeros;
      EXPECT_EQ(csr.cols, dense.cols) << "seed " << seed << " zeros " << keep_zeros;
    }
  }
}

TEST(Sampling, SameUniformsSamePairsAndFloatAgrees) {
  Rng rng(3);
  const Index n = 40, k = 33;
  const auto plan = random_plan(rng, n, k);
  std::vector<float> plan32(plan.begin(), plan.end());
  Rng a(5), b(5), c(6);
  const auto uniforms = draw_sampling_uniforms(a, 50);
  EXPECT_EQ(uniforms, draw_sampling_uniforms(b, 50));
  EXPECT_NE(uniforms, draw_sampling_uniforms(c, 50));
  const AnchorPairs p1 = sample_anchor_pairs<double>(plan.data(), n, k, k, {}, uniforms);
  const AnchorPairs p2 = sample_anchor_pairs<double>(plan.data(), n, k, k, {}, uniforms);
  EXPECT_EQ(p1.rows, p2.rows);
  EXPECT_EQ(p1.cols, p2.cols);
  // Float32 storage of the same values changes cumulative sums only in the last bits: the draws
  // may differ only where a uniform falls within rounding of a boundary, which these do not.
  const AnchorPairs p3 = sample_anchor_pairs<float>(plan32.data(), n, k, k, {}, uniforms);
  int same = 0;
  for (int s = 0; s < 50; ++s) same += p1.rows[s] == p3.rows[s] && p1.cols[s] == p3.cols[s];
  EXPECT_GE(same, 49);
}

TEST(Sampling, HonoursStrideAndGivenRowMasses) {
  // 3 x 2 plan stored with stride 4 (two padding columns that must never be read as mass).
  const std::vector<double> padded = {0, 1, 9, 9, 0, 0, 9, 9, 2, 0, 9, 9};
  const std::vector<double> row_mass = {1, 0, 2};
  Rng rng(1);
  const auto uniforms = draw_sampling_uniforms(rng, 1000);
  const AnchorPairs pairs = sample_anchor_pairs<double>(padded.data(), 3, 2, 4, row_mass, uniforms);
  int row0 = 0;
  for (int s = 0; s < 1000; ++s) {
    ASSERT_NE(pairs.rows[s], 1);
    if (pairs.rows[s] == 0) {
      ++row0;
      EXPECT_EQ(pairs.cols[s], 1);
    } else {
      EXPECT_EQ(pairs.cols[s], 0);
    }
  }
  EXPECT_NEAR(row0 / 1000.0, 1.0 / 3.0, 0.06);
}

TEST(Sampling, RejectsEmptyPlansAndBadArguments) {
  const std::vector<double> zeros(6, 0.0);
  Rng rng(1);
  try {
    sample_anchor_pairs(zeros.data(), 2, 3, 3, 4, rng);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kBadData);
  }
  const std::vector<double> ones(6, 1.0);
  EXPECT_THROW(sample_anchor_pairs(ones.data(), 2, 3, 2, 4, rng), Error);  // stride < k
  EXPECT_THROW(sample_anchor_pairs(ones.data(), 2, 3, 3, 0, rng), Error);  // no pairs
}

}  // namespace
}  // namespace gw
