// The sparse-support solve path (Options::support = kSparse) on a CUDA device against the same
// path on the CPU (ctest label "gpu"). Every test skips when no CUDA device is visible (always in a
// build without CUDA); tests/solver/sparse_solver_test.cpp checks what a machine without a device
// gets instead.
//
// The two runs share the host steps (quantization, support building, sampling, re-growth, scaling,
// loss estimate) and differ in the per-entry arithmetic only by rounding (float32 dot products in
// another order, exp / log on the device), but the coarse level is a dense solve on the same
// backend, so the CUDA run starts from the dense CUDA loop's coarse plan: a different support and
// from there a different sample of the same algorithm. Full-size runs are therefore compared by
// quality; the full support (support_size >= k: no coarse level, the same start) by plan.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "datagen/spiral.h"
#include "solver/metrics.h"
#include "solver/solve.h"

namespace gw {
namespace {

#define GW_REQUIRE_GPU()                                                       \
  do {                                                                         \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device is visible"; \
  } while (0)

// The bar for the sparse path on CUDA: |rho| at least this, and within kRhoSlack of the
// CPU sparse run of the same seed.
constexpr double kMinAbsRho = 0.99;
constexpr double kRhoSlack = 0.005;
// Full support, 12 iterations: sparse_solver_test.cpp measures the CPU sparse path against the
// dense loop at 1.2e-4 (L1 / mass) from float32 rounding of the cost; the CUDA cost rounds in
// another order by the same amount. A different anchor, start or schedule moves the plan by ~0.2.
constexpr int kEqualIterations = 12;
constexpr double kFullSupportTolerance = 5e-3;

struct Spiral {
  datagen::PointSet source, target;
  Problem problem;
};

Spiral spiral(Index n, Index k, std::uint64_t seed) {
  Spiral c{datagen::spiral(n, seed), datagen::swiss_roll(k, seed), {}};
  c.problem.source = Geometry::from_points(c.source.points, n, 2);
  c.problem.target = Geometry::from_points(c.target.points, k, 3);
  return c;
}

double abs_rho(const Spiral& c, const std::vector<Index>& matching) {
  std::vector<double> matched(c.source.n);
  for (Index i = 0; i < c.source.n; ++i) matched[i] = c.target.angles[matching[i]];
  return std::abs(spearman(c.source.angles, matched));
}

Options sparse_options(Backend backend) {
  Options o;
  o.solver = SolverKind::kSampled;
  o.support = Support::kSparse;
  o.knn = 5;
  o.epsilon = 0.005;
  o.num_anchors = 80;
  o.max_iterations = 300;
  o.distance_mode = DistanceMode::kLandmark;
  o.backend = backend;
  return o;
}

std::vector<double> densify(const CsrMatrix<double>& csr) {
  std::vector<double> t(static_cast<std::size_t>(csr.rows) * csr.cols, 0.0);
  for (Index i = 0; i < csr.rows; ++i)
    for (Offset e = csr.row_offsets[i]; e < csr.row_offsets[i + 1]; ++e)
      t[static_cast<std::size_t>(i) * csr.cols + csr.col_indices[e]] = csr.values[e];
  return t;
}

TEST(CudaSparseSolver, Spiral3000x3500MatchesTheCpuSparseRunInQuality) {
  GW_REQUIRE_GPU();
  const Spiral c = spiral(3000, 3500, 1);
  const Result cpu = solve(c.problem, sparse_options(Backend::kCpu));
  const Result gpu = solve(c.problem, sparse_options(Backend::kCuda));
  ASSERT_TRUE(cpu.ok() && gpu.ok()) << cpu.message << " / " << gpu.message;
  EXPECT_EQ(gpu.strategy.support, Support::kSparse);
  EXPECT_EQ(gpu.backend, Backend::kCuda);
  const double rho_cpu = abs_rho(c, cpu.matching), rho_gpu = abs_rho(c, gpu.matching);
  const std::string both = "CPU: " + cpu.brief_report() + "\nCUDA: " + gpu.brief_report();
  EXPECT_GE(rho_gpu, kMinAbsRho) << both;
  EXPECT_NEAR(rho_gpu, rho_cpu, kRhoSlack) << both;
  EXPECT_GT(gpu.support_regrowths, 0);
  // The scaled plan: rows on their marginals, mass 1, at most support_size entries per row.
  EXPECT_NEAR(gpu.plan_mass, 1.0, 1e-6);
  EXPECT_LT(gpu.row_marginal_error, 1e-6);
  EXPECT_LT(gpu.column_marginal_error, 0.05);
  for (Index i = 0; i < 3000; ++i) {
    ASSERT_LE(gpu.plan_topk.row_offsets[i + 1] - gpu.plan_topk.row_offsets[i],
              gpu.options.support_size);
  }
  ASSERT_TRUE(std::isfinite(gpu.gw_loss) && std::isfinite(cpu.gw_loss));
  EXPECT_LE(gpu.gw_loss, 2.0 * cpu.gw_loss) << both;
}

TEST(CudaSparseSolver, FullSupportRunEqualsTheCpuSparseRunUpToRounding) {
  GW_REQUIRE_GPU();
  const Index n = 150, k = 180;
  for (const double fused_weight : {0.0, 0.4}) {
    SCOPED_TRACE(fused_weight);
    Spiral c = spiral(n, k, 3);
    if (fused_weight > 0.0) {
      Rng rng(8);
      std::vector<double> feature(static_cast<std::size_t>(n) * k);
      for (double& x : feature) x = rng.uniform();
      c.problem.feature_cost = DenseMatrix<double>(n, k, feature);
    }
    Options o = sparse_options(Backend::kCpu);
    o.distance_mode = DistanceMode::kPrecomputed;
    o.max_iterations = kEqualIterations;
    o.round_marginals = false;
    o.compute_gw_loss = false;
    o.support_size = static_cast<int>(k);
    o.fused_weight = fused_weight;
    const Result cpu = solve(c.problem, o);
    o.backend = Backend::kCuda;
    const Result gpu = solve(c.problem, o);
    ASSERT_TRUE(cpu.ok() && gpu.ok()) << cpu.message << " / " << gpu.message;
    EXPECT_EQ(gpu.iterations, cpu.iterations);
    ASSERT_EQ(gpu.plan_topk.values.size(), static_cast<std::size_t>(n) * k);
    const std::vector<double> tc = densify(cpu.plan_topk), tg = densify(gpu.plan_topk);
    double l1 = 0.0, mass = 0.0;
    for (std::size_t e = 0; e < tc.size(); ++e) {
      l1 += std::abs(tg[e] - tc[e]);
      mass += tc[e];
    }
    EXPECT_LT(l1 / mass, kFullSupportTolerance);
    int differ = 0;
    for (Index i = 0; i < n; ++i) differ += gpu.matching[i] != cpu.matching[i];
    EXPECT_LE(differ, 2) << "rows whose best match differs (near-ties at most)";
    // The per-iteration log: same costs up to the same rounding.
    ASSERT_EQ(gpu.log.size(), cpu.log.size());
    for (std::size_t t = 0; t < cpu.log.size(); ++t) {
      EXPECT_NEAR(gpu.log[t].cost, cpu.log[t].cost, 1e-2 * cpu.log[t].cost)
          << "iteration " << t + 1;
    }
  }
}

TEST(CudaSparseSolver, HonoursOptionsDeviceAndRejectsAMissingOne) {
  GW_REQUIRE_GPU();
  const Spiral c = spiral(300, 350, 2);
  Options o = sparse_options(Backend::kCuda);
  o.max_iterations = 30;
  o.device = cuda_device_count() - 1;
  const Result r = solve(c.problem, o);
  EXPECT_TRUE(r.ok()) << r.message;
  o.device = cuda_device_count();
  EXPECT_THROW(solve(c.problem, o), Error);
}

}  // namespace
}  // namespace gw
