// Sparse-support Sinkhorn (sinkhorn/sparse_sinkhorn.h) against the dense reference oracle run on
// the same problem with +inf cost off the support.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "sinkhorn/cuda_sparse_sinkhorn.h"
#include "sinkhorn/sinkhorn_reference.h"
#include "sinkhorn/sparse_sinkhorn.h"

namespace gw {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Both solvers run the same schedule in double on the same float costs; only the summation order
// of the log-sum-exps differs (two-pass here, two-pass there over a different index set), so the
// potentials agree to a few ulps of the largest scaled potential. 1e-9 of epsilon leaves room.
constexpr double kPotentialTolerance = 1e-9;  // |f - f_ref| / epsilon
constexpr double kPlanTolerance = 1e-9;       // L1(plan - plan_ref) / mass

struct RandomSupport {
  Index n = 0, k = 0;
  std::vector<Offset> offsets;
  std::vector<Index> cols;
  std::vector<float> cost;
  SparseSupportView view() const { return {n, k, offsets, cols}; }
  // The same problem as a dense matrix: +inf off the support.
  std::vector<double> dense() const {
    std::vector<double> c(static_cast<std::size_t>(n) * k, kInf);
    for (Index i = 0; i < n; ++i)
      for (Offset e = offsets[i]; e < offsets[i + 1]; ++e)
        c[static_cast<std::size_t>(i) * k + cols[e]] = cost[e];
    return c;
  }
};

// Row i gets a random number of distinct columns in [1, max_per_row] (rows 0 and 1: exactly one),
// then every column no row reached is attached to a random row, so the balanced problem is
// feasible.
RandomSupport random_support(Index n, Index k, int max_per_row, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<Index>> rows(n);
  std::vector<char> reached(k, 0);
  for (Index i = 0; i < n; ++i) {
    const int count = i < 2 ? 1 : 1 + static_cast<int>(rng.uniform_index(max_per_row));
    std::vector<char> taken(k, 0);
    for (int c = 0; c < count; ++c) {
      const Index j = static_cast<Index>(rng.uniform_index(k));
      if (taken[j]) continue;
      taken[j] = 1;
      reached[j] = 1;
      rows[i].push_back(j);
    }
  }
  for (Index j = 0; j < k; ++j) {
    if (!reached[j]) rows[2 + rng.uniform_index(n - 2)].push_back(j);
  }
  RandomSupport s;
  s.n = n;
  s.k = k;
  s.offsets.push_back(0);
  for (Index i = 0; i < n; ++i) {
    for (Index j : rows[i]) {
      s.cols.push_back(j);
      s.cost.push_back(static_cast<float>(rng.uniform()));
    }
    s.offsets.push_back(static_cast<Offset>(s.cols.size()));
  }
  return s;
}

std::vector<double> random_marginal(Index n, Rng& rng) {
  std::vector<double> m(n);
  double total = 0.0;
  for (double& x : m) total += (x = 0.5 + rng.uniform());
  for (double& x : m) x /= total;
  return m;
}

TEST(SparseSinkhorn, MatchesDenseReferenceOnRandomSupportsWithSingleEntryRows) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const Index n = 60, k = 45;
    const RandomSupport s = random_support(n, k, 8, seed);
    ASSERT_EQ(s.offsets[1] - s.offsets[0], 1);  // a row with one entry is part of the test
    Rng rng(seed + 100);
    const std::vector<double> a = random_marginal(n, rng), b = random_marginal(k, rng);
    const double epsilon = 0.05;
    SinkhornOptions options;
    options.max_iterations = 40;
    options.tolerance = 0.0;
    std::vector<double> f(n, 0.0), g(k, 0.0), f_ref(n, 0.0), g_ref(k, 0.0);
    const SupportTranspose t = transpose_support(s.view());
    const SinkhornResult sparse =
        sparse_sinkhorn(s.view(), t, s.cost, a, b, epsilon, f, g, options);
    const std::vector<double> dense = s.dense();
    const SinkhornResult ref =
        sinkhorn_reference(CostView(dense.data(), n, k), a, b, epsilon, f_ref, g_ref, options);
    EXPECT_EQ(sparse.iterations, ref.iterations);
    EXPECT_NEAR(sparse.marginal_error, ref.marginal_error, 1e-12);
    for (Index i = 0; i < n; ++i) EXPECT_NEAR(f[i], f_ref[i], kPotentialTolerance * epsilon);
    for (Index j = 0; j < k; ++j) EXPECT_NEAR(g[j], g_ref[j], kPotentialTolerance * epsilon);
    // The plan from the momentum kernel at alpha = 1 against the reference plan.
    std::vector<double> plan(s.cols.size(), 0.0), plan_ref(static_cast<std::size_t>(n) * k);
    std::vector<PlanBlendStats> stats(n);
    sparse_plan_momentum(s.view(), s.cost, f, g, epsilon, plan, 1.0, stats);
    sinkhorn_plan_reference(CostView(dense.data(), n, k), f_ref, g_ref, epsilon, plan_ref);
    double l1 = 0.0, mass = 0.0;
    for (Index i = 0; i < n; ++i) {
      for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) {
        const double r = plan_ref[static_cast<std::size_t>(i) * k + s.cols[e]];
        l1 += std::abs(plan[e] - r);
        mass += r;
        plan_ref[static_cast<std::size_t>(i) * k + s.cols[e]] = 0.0;
      }
    }
    for (double r : plan_ref) l1 += r;  // the reference puts nothing off the support
    EXPECT_LT(l1 / mass, kPlanTolerance);
  }
}

TEST(SparseSinkhorn, ConvergesToMarginalsOnAFeasibleSupport) {
  // A support holding the diagonal (so exact marginals are reachable) plus random entries;
  // uniform marginals.
  const Index n = 150, k = 150;
  RandomSupport s = random_support(n, k, 20, 7);
  {
    std::vector<Offset> offsets = {0};
    std::vector<Index> cols;
    std::vector<float> cost;
    for (Index i = 0; i < n; ++i) {
      bool diagonal = false;
      for (Offset e = s.offsets[i]; e < s.offsets[i + 1]; ++e) {
        cols.push_back(s.cols[e]);
        cost.push_back(s.cost[e]);
        diagonal = diagonal || s.cols[e] == i;
      }
      if (!diagonal) {
        cols.push_back(i);
        cost.push_back(0.5f);
      }
      offsets.push_back(static_cast<Offset>(cols.size()));
    }
    s.offsets = offsets;
    s.cols = cols;
    s.cost = cost;
  }
  const std::vector<double> a(n, 1.0 / n), b(k, 1.0 / k);
  std::vector<double> f(n, 0.0), g(k, 0.0);
  SinkhornOptions options;
  options.max_iterations = 20000;
  options.tolerance = 1e-9;
  options.check_every = 1;
  const SupportTranspose t = transpose_support(s.view());
  const SinkhornResult r = sparse_sinkhorn(s.view(), t, s.cost, a, b, 0.1, f, g, options);
  ASSERT_TRUE(r.converged()) << r.message;
  std::vector<double> plan(s.cols.size(), 0.0), col(k, 0.0);
  std::vector<PlanBlendStats> stats(n);
  sparse_plan_momentum(s.view(), s.cost, f, g, 0.1, plan, 1.0, stats);
  double row_error = 0.0, col_error = 0.0;
  for (Index i = 0; i < n; ++i) row_error += std::abs(stats[i].mass - a[i]);
  for (std::size_t e = 0; e < plan.size(); ++e) col[s.cols[e]] += plan[e];
  for (Index j = 0; j < k; ++j) col_error += std::abs(col[j] - b[j]);
  EXPECT_LT(row_error, 1e-8);
  EXPECT_LT(col_error, 1e-8);
}

TEST(SparseSinkhorn, UnreachedPositiveMassColumnIsRejectedLikeTheDenseOracle) {
  // Column 2 has mass but no support entry: the balanced problem is infeasible; both the sparse
  // solver and the dense oracle (with +inf off the support) throw kBadData naming the column.
  const std::vector<Offset> offsets = {0, 2, 3};
  const std::vector<Index> cols = {0, 1, 1};
  const std::vector<float> cost = {0.1f, 0.2f, 0.3f};
  const SparseSupportView s{2, 3, offsets, cols};
  const std::vector<double> a = {0.5, 0.5}, b = {0.4, 0.4, 0.2};
  std::vector<double> f(2, 0.0), g(3, 0.0);
  const SupportTranspose t = transpose_support(s);
  try {
    sparse_sinkhorn(s, t, cost, a, b, 0.1, f, g);
    FAIL() << "no error for an unreached column";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kBadData);
    EXPECT_NE(std::string(e.what()).find("column 2"), std::string::npos) << e.what();
  }
  const std::vector<double> dense = {0.1, 0.2, kInf, kInf, 0.3, kInf};
  std::vector<double> f2(2, 0.0), g2(3, 0.0);
  EXPECT_THROW(sinkhorn_reference(CostView(dense.data(), 2, 3), a, b, 0.1, f2, g2), Error);
}

TEST(SparseSinkhorn, UnreachedZeroMassColumnGetsTheZeroMassPotential) {
  const std::vector<Offset> offsets = {0, 1, 2};
  const std::vector<Index> cols = {0, 1};
  const std::vector<float> cost = {0.1f, 0.3f};
  const SparseSupportView s{2, 3, offsets, cols};
  const std::vector<double> a = {0.5, 0.5}, b = {0.5, 0.5, 0.0};
  std::vector<double> f(2, 0.0), g(3, 0.0);
  const SinkhornResult r = sparse_sinkhorn(s, transpose_support(s), cost, a, b, 0.1, f, g);
  EXPECT_TRUE(r.converged()) << r.message;
  EXPECT_EQ(g[2], kZeroMassPotential);
}

TEST(SparseSinkhorn, TransposeRejectsOutOfRangeColumnAndNamesTheEntry) {
  const std::vector<Offset> offsets = {0, 1};
  const std::vector<Index> cols = {5};
  try {
    transpose_support({1, 3, offsets, cols});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("entry 0"), std::string::npos) << e.what();
  }
}

// The device class fails like every CUDA class where it cannot run: kNotCompiled in a build without
// CUDA, kInvalidArgument without a device (test_sinkhorn_cuda runs it where there is one).
TEST(CudaSparseSinkhorn, ReportsAMissingBackend) {
  if (GW_HAS_CUDA && cuda_device_count() > 0) {
    GTEST_SKIP() << "a CUDA device is present; test_sinkhorn_cuda covers it";
  }
  try {
    CudaSparseSinkhorn sparse(0);
    FAIL() << "no error without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), GW_HAS_CUDA ? ErrorCode::kInvalidArgument : ErrorCode::kNotCompiled)
        << e.what();
  }
}

}  // namespace
}  // namespace gw
