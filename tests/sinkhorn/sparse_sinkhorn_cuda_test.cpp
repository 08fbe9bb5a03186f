// CudaSparseSinkhorn (sinkhorn/cuda_sparse_sinkhorn.h) against the CPU sparse_sinkhorn,
// sparse_plan_momentum and a plain loop for the anchor cost, on random supports (ctest label
// "gpu"). Every test skips when no CUDA device is visible (always in a build without CUDA).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "sinkhorn/cuda_sparse_sinkhorn.h"
#include "sinkhorn/sinkhorn.h"
#include "sinkhorn/sparse_sinkhorn.h"

namespace gw {
namespace {

#define GW_REQUIRE_GPU()                                                       \
  do {                                                                         \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device is visible"; \
  } while (0)

// Both sides run the same schedule in double on the same float32 costs; they differ in the
// summation order of the log-sum-exps (two-pass per row on the CPU, per-lane online maxima merged
// by a butterfly on the device) and in exp (fast_exp, ~1 ulp, against CUDA's, ~1 ulp): a few ulp
// of the largest scaled potential per iteration, contracted by Sinkhorn. A kernel that drops,
// duplicates or misroutes one entry moves the potentials by ~1e-3 or more.
constexpr double kPotentialTolerance = 1e-9;  // |f - f_cpu| / epsilon
// The momentum step: the same exponent up to the potentials' rounding, one exp, sums of a few
// dozen positive terms in another order.
constexpr double kMomentumRelativeTolerance = 1e-10;
// The anchor cost in float32 against double: m products of values in [0, 1] rounded in float32
// (~m 2^-24 relative to the largest term, 1e-5 at m = 64).
constexpr double kCostTolerance = 2e-5;

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Support {
  Index n = 0, k = 0;
  std::vector<Offset> offsets;
  std::vector<Index> cols;
  std::vector<float> cost;
  SupportTranspose transpose;
  std::vector<double> a, b;
  SparseSupportView view() const { return {n, k, offsets, cols}; }
  Offset nnz() const { return static_cast<Offset>(cols.size()); }
};

// A random support with rows of 1..max_per_row distinct columns (rows 0 and 1 exactly one entry),
// float costs in [0, 1), and marginals in [0.5, 1.5) normalized to mass 1, except that every
// zero_row_every-th row and zero_col_every-th column (0: none) has zero mass. Every positive-mass
// row reaches a positive-mass column and every positive-mass column a positive-mass row (extra
// entries are added where the draw left one out), so the balanced problem is feasible.
Support random_support(
    Index n, Index k, int max_per_row, int zero_row_every, int zero_col_every, std::uint64_t seed) {
  Rng rng(seed);
  Support s;
  s.n = n;
  s.k = k;
  s.a.resize(n);
  s.b.resize(k);
  for (Index i = 0; i < n; ++i)
    s.a[i] = zero_row_every > 0 && i % zero_row_every == 3 ? 0.0 : 0.5 + rng.uniform();
  for (Index j = 0; j < k; ++j)
    s.b[j] = zero_col_every > 0 && j % zero_col_every == 2 ? 0.0 : 0.5 + rng.uniform();
  std::vector<std::vector<Index>> rows(n);
  std::vector<char> reached(k, 0);
  for (Index i = 0; i < n; ++i) {
    const int count = i < 2 ? 1 : 1 + static_cast<int>(rng.uniform_index(max_per_row));
    for (int c = 0; c < count; ++c) {
      const Index j = static_cast<Index>(rng.uniform_index(k));
      if (std::find(rows[i].begin(), rows[i].end(), j) != rows[i].end()) continue;
      rows[i].push_back(j);
    }
  }
  Index positive_col = 0;
  while (s.b[positive_col] == 0.0) ++positive_col;
  for (Index i = 0; i < n; ++i) {
    if (s.a[i] == 0.0) continue;
    bool ok = false;
    for (Index j : rows[i]) ok = ok || s.b[j] > 0.0;
    if (!ok) rows[i].push_back(positive_col);
    for (Index j : rows[i]) reached[j] = 1;
  }
  for (Index j = 0; j < k; ++j) {
    if (reached[j] || s.b[j] == 0.0) continue;
    Index i = 2 + static_cast<Index>(rng.uniform_index(n - 2));
    while (s.a[i] == 0.0) i = (i + 1) % n;
    if (std::find(rows[i].begin(), rows[i].end(), j) == rows[i].end()) rows[i].push_back(j);
  }
  s.offsets.push_back(0);
  for (Index i = 0; i < n; ++i) {
    for (Index j : rows[i]) {
      s.cols.push_back(j);
      s.cost.push_back(static_cast<float>(rng.uniform()));
    }
    s.offsets.push_back(static_cast<Offset>(s.cols.size()));
  }
  double ta = 0.0, tb = 0.0;
  for (double x : s.a) ta += x;
  for (double x : s.b) tb += x;
  for (double& x : s.a) x /= ta;
  for (double& x : s.b) x /= tb;
  s.transpose = transpose_support(s.view());
  return s;
}

void expect_potentials_match(const std::vector<double>& got,
                             const std::vector<double>& want,
                             double epsilon,
                             const char* what) {
  ASSERT_EQ(got.size(), want.size());
  int reported = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (want[i] == kZeroMassPotential) {
      EXPECT_EQ(got[i], kZeroMassPotential) << what << " " << i << " has zero mass";
      continue;
    }
    if (std::abs(got[i] - want[i]) / epsilon > kPotentialTolerance && reported++ < 5) {
      ADD_FAILURE() << what << " " << i << ": cuda " << got[i] << ", cpu " << want[i];
    }
  }
  EXPECT_EQ(reported, 0) << what << ": entries beyond the tolerance";
}

struct Case {
  const char* name;
  double rho_a, rho_b;
  double tolerance;
};

// Runs both solvers from zero potentials, then a second, warm-started solve at a smaller epsilon,
// and compares potentials, iterations and residuals after each.
void expect_cuda_matches_cpu(const Support& s, const Case& c, int check_every) {
  SCOPED_TRACE(c.name);
  SinkhornOptions options;
  options.rho_a = c.rho_a;
  options.rho_b = c.rho_b;
  options.max_iterations = 150;
  options.tolerance = c.tolerance;
  options.check_every = check_every;
  CudaSparseSinkhorn cuda(0);
  cuda.set_support(s.view(), s.transpose);
  cuda.set_marginals(s.a, s.b);
  cuda.upload_cost(s.cost);
  std::vector<double> f(s.n, 0.0), g(s.k, 0.0), fc(s.n), gc(s.k);
  for (const double epsilon : {0.1, 0.03}) {
    const SinkhornResult cpu =
        sparse_sinkhorn(s.view(), s.transpose, s.cost, s.a, s.b, epsilon, f, g, options);
    const SinkhornResult gpu = cuda.solve(epsilon, options);
    cuda.download_potentials(fc, gc);
    EXPECT_EQ(gpu.backend, Backend::kCuda);
    EXPECT_EQ(gpu.iterations, cpu.iterations) << "epsilon " << epsilon;
    EXPECT_EQ(gpu.termination, cpu.termination) << "epsilon " << epsilon;
    EXPECT_NEAR(gpu.marginal_error, cpu.marginal_error, 1e-9 * (1.0 + cpu.marginal_error));
    expect_potentials_match(fc, f, epsilon, "row");
    expect_potentials_match(gc, g, epsilon, "column");
  }
}

const Case kCases[] = {
    {"balanced", kInf, kInf, 1e-7},
    {"semi-relaxed", kInf, 0.5, 1e-7},
    {"unbalanced", 0.3, 0.2, 1e-7},
    {"balanced, fixed iteration count", kInf, kInf, 0.0},
};

TEST(CudaSparseSinkhorn, MatchesCpuOnRandomSupportsWithSingleEntryAndZeroMassRowsAndColumns) {
  GW_REQUIRE_GPU();
  for (const Case& c : kCases) {
    // Zero-mass rows and columns (every 7th row, every 9th column), single-entry rows.
    expect_cuda_matches_cpu(random_support(300, 250, 12, 7, 9, 11), c, 5);
    // Rows longer than a warp (the lanes stride over 2+ chunks) and a column count below n.
    expect_cuda_matches_cpu(random_support(200, 60, 90, 0, 0, 12), c, 1);
  }
}

TEST(CudaSparseSinkhorn, MatchesCpuOnA20kRowSupport) {
  GW_REQUIRE_GPU();
  // 20,000 rows and 17,000 columns, one warp each: grids of 2,500 and 2,125 blocks.
  const Support s = random_support(20000, 17000, 24, 11, 13, 21);
  expect_cuda_matches_cpu(s, kCases[0], 10);
  expect_cuda_matches_cpu(s, kCases[2], 10);
}

TEST(CudaSparseSinkhorn, MatchesCpuWhenRowsOutnumberTheWarpsOfTheLargestGrid) {
  GW_REQUIRE_GPU();
  // The launchers cap a grid at 16,384 blocks of 8 warps (131,072 rows or columns at once); beyond
  // that each warp takes several rows through the grid-stride loop.
  const Support s = random_support(140000, 135000, 3, 0, 0, 22);
  expect_cuda_matches_cpu(s, kCases[0], 10);
}

TEST(CudaSparseSinkhorn, ASameShapeSupportKeepsThePotentialsForAWarmStart) {
  GW_REQUIRE_GPU();
  const Support s = random_support(400, 300, 10, 0, 0, 23);
  CudaSparseSinkhorn cuda(0);
  cuda.set_support(s.view(), s.transpose);
  cuda.set_marginals(s.a, s.b);
  cuda.upload_cost(s.cost);
  SinkhornOptions options;
  options.max_iterations = 50;
  cuda.solve(0.05, options);
  std::vector<double> f(s.n), g(s.k), f2(s.n), g2(s.k);
  cuda.download_potentials(f, g);
  // The sparse GW loop re-grows its support between solves: same rows and columns, other entries.
  const Support other = random_support(400, 300, 10, 0, 0, 24);
  cuda.set_support(other.view(), other.transpose);
  cuda.download_potentials(f2, g2);
  EXPECT_EQ(f2, f);
  EXPECT_EQ(g2, g);
  // A new shape starts from zeros and needs new marginals.
  const Support smaller = random_support(200, 300, 10, 0, 0, 25);
  cuda.set_support(smaller.view(), smaller.transpose);
  std::vector<double> f3(smaller.n), g3(smaller.k);
  cuda.download_potentials(f3, g3);
  EXPECT_EQ(f3, std::vector<double>(smaller.n, 0.0));
  cuda.upload_cost(smaller.cost);
  EXPECT_THROW(cuda.solve(0.05, options), Error);
}

TEST(CudaSparseSinkhorn, MomentumStepAndRowStatsMatchCpu) {
  GW_REQUIRE_GPU();
  for (const Index n : {Index{300}, Index{20000}}) {
    const Support s = random_support(n, n + 57, 40, 7, 9, 31 + n);
    SinkhornOptions options;
    options.max_iterations = 30;
    std::vector<double> f(s.n, 0.0), g(s.k, 0.0);
    const double epsilon = 0.05;
    sparse_sinkhorn(s.view(), s.transpose, s.cost, s.a, s.b, epsilon, f, g, options);
    // A plan with spread values, including exact zeros.
    Rng rng(5);
    std::vector<double> plan(s.nnz());
    for (std::size_t e = 0; e < plan.size(); ++e) plan[e] = e % 5 == 0 ? 0.0 : rng.uniform() / n;

    CudaSparseSinkhorn cuda(0);
    cuda.set_support(s.view(), s.transpose);
    cuda.set_marginals(s.a, s.b);
    cuda.upload_cost(s.cost);
    cuda.set_potentials(f, g);
    cuda.upload_plan(plan);
    std::vector<PlanBlendStats> stats_cpu(s.n), stats_gpu(s.n);
    std::vector<double> plan_gpu(s.nnz());
    for (const double alpha : {0.3, 1.0}) {
      sparse_plan_momentum(s.view(), s.cost, f, g, epsilon, plan, alpha, stats_cpu);
      cuda.plan_momentum(epsilon, alpha, stats_gpu);
      cuda.download_plan(plan_gpu);
      int bad = 0;
      for (std::size_t e = 0; e < plan.size(); ++e) {
        if (std::abs(plan_gpu[e] - plan[e]) > kMomentumRelativeTolerance * std::abs(plan[e]) &&
            bad++ < 5) {
          ADD_FAILURE() << "alpha " << alpha << " entry " << e << ": cuda " << plan_gpu[e]
                        << ", cpu " << plan[e];
        }
      }
      EXPECT_EQ(bad, 0);
      for (Index i = 0; i < s.n; ++i) {
        const PlanBlendStats& c = stats_cpu[i];
        const PlanBlendStats& d = stats_gpu[i];
        ASSERT_NEAR(d.mass, c.mass, kMomentumRelativeTolerance * c.mass) << "row " << i;
        ASSERT_NEAR(d.cost, c.cost, kMomentumRelativeTolerance * c.mass) << "row " << i;
        ASSERT_NEAR(d.change_sq, c.change_sq, 1e-9 * c.change_sq + 1e-30) << "row " << i;
      }
      // The sampled rows' values (repeats, the last row, a zero-mass row) gathered on the device.
      const std::vector<Index> rows = {5, 0, s.n - 1, 5, 3, 1};
      std::vector<double> expected_rows;
      for (Index i : rows)
        for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e)
          expected_rows.push_back(plan_gpu[e]);
      std::vector<double> gathered(expected_rows.size());
      cuda.download_plan_rows(rows, gathered);
      EXPECT_EQ(gathered, expected_rows);
      // A zero-mass row (row 3) is emptied by a full step on both sides.
      if (alpha == 1.0) {
        EXPECT_EQ(stats_gpu[3].mass, 0.0);
      }
    }
  }
}

TEST(CudaSparseSinkhorn, AnchorCostMatchesAPlainLoopWithAndWithoutTheFusedBlend) {
  GW_REQUIRE_GPU();
  for (const Index n : {Index{500}, Index{20000}}) {
    const Support s = random_support(n, n / 2 + 3, 50, 0, 0, 41 + n);
    const int m = 64;
    Rng rng(9);
    std::vector<float> dx(static_cast<std::size_t>(s.n) * m), dy(static_cast<std::size_t>(s.k) * m);
    for (float& x : dx) x = static_cast<float>(rng.uniform());
    for (float& y : dy) y = static_cast<float>(rng.uniform());
    std::vector<double> feature(s.nnz());
    for (double& x : feature) x = 3.0 * rng.uniform();
    std::vector<double> expected(s.nnz());
    for (Index i = 0; i < s.n; ++i) {
      double xn = 0.0;
      for (int t = 0; t < m; ++t) xn += double(dx[i * m + t]) * dx[i * m + t];
      for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) {
        const Index j = s.cols[e];
        double yn = 0.0, dot = 0.0;
        for (int t = 0; t < m; ++t) {
          yn += double(dy[j * m + t]) * dy[j * m + t];
          dot += double(dx[i * m + t]) * dy[j * m + t];
        }
        expected[e] = xn / m + yn / m - 2.0 * dot / m;
      }
    }
    CudaSparseSinkhorn cuda(0);
    cuda.set_support(s.view(), s.transpose);
    std::vector<float> cost(s.nnz());
    cuda.anchor_cost(dx, dy, m);
    cuda.download_cost(cost);
    for (Offset e = 0; e < s.nnz(); ++e) {
      ASSERT_NEAR(cost[e], expected[e], kCostTolerance) << "entry " << e;
    }
    const double w = 0.3;
    cuda.set_feature_cost(feature, w);
    cuda.anchor_cost(dx, dy, m);
    cuda.download_cost(cost);
    for (Offset e = 0; e < s.nnz(); ++e) {
      ASSERT_NEAR(cost[e], (1.0 - w) * expected[e] + w * feature[e], kCostTolerance)
          << "fused entry " << e;
    }
    // A new support drops the feature costs (its entries are others).
    cuda.set_support(s.view(), s.transpose);
    cuda.anchor_cost(dx, dy, m);
    cuda.download_cost(cost);
    EXPECT_NEAR(cost[0], expected[0], kCostTolerance);
  }
}

TEST(CudaSparseSinkhorn, RejectsNaNCostsAndUnreachedPositiveMassColumnsLikeTheCpu) {
  GW_REQUIRE_GPU();
  Support s = random_support(100, 80, 6, 0, 0, 51);
  SinkhornOptions options;
  options.max_iterations = 20;
  {
    std::vector<float> cost = s.cost;
    cost[s.offsets[10]] = std::numeric_limits<float>::quiet_NaN();
    CudaSparseSinkhorn cuda(0);
    cuda.set_support(s.view(), s.transpose);
    cuda.set_marginals(s.a, s.b);
    cuda.upload_cost(cost);
    try {
      cuda.solve(0.1, options);
      ADD_FAILURE() << "a NaN cost was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kBadData) << e.what();
      EXPECT_NE(std::string(e.what()).find("row 10"), std::string::npos) << e.what();
    }
  }
  {
    // Column k - 1 gets positive mass but no entry: one more column than the support reaches.
    Support wide = s;
    wide.k += 1;
    wide.b.push_back(0.01);
    double total = 0.0;
    for (double x : wide.b) total += x;
    for (double& x : wide.b) x /= total;
    wide.transpose = transpose_support(wide.view());
    CudaSparseSinkhorn cuda(0);
    cuda.set_support(wide.view(), wide.transpose);
    cuda.set_marginals(wide.a, wide.b);
    cuda.upload_cost(wide.cost);
    try {
      cuda.solve(0.1, options);
      ADD_FAILURE() << "an unreached positive-mass column was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kBadData) << e.what();
      EXPECT_NE(std::string(e.what()).find("column 80"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gw
