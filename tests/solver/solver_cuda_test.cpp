// The GW loop on a CUDA device against the CPU loop (ctest label "gpu"). Every test skips when no
// CUDA device is visible (always in a build without CUDA).
//
// What can be compared how: the two loops draw the same uniforms and start from the same plan, so
// they sample the same anchors as long as their plans agree to far below the spacing of the
// cumulative sums. In float64 that holds for the whole run (differences ~1e-13), so a short run
// is compared entry by entry; in float32 the plans differ by ~1e-5 after one iteration, enough for
// a draw to flip within a few iterations, after which the runs are two different samples of the
// same algorithm and are compared by quality (|rho|, mass, cost) instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
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

constexpr double kMinAbsRho = 0.998;  // the quality bar of the issue at every scale
// Float64 loops whose only differences are summation orders (cuBLAS vs Eigen GEMM, block vs
// sequential reductions, ~1e-16 relative) amplified by 1/epsilon <= 1e3 in the exponents.
constexpr double kF64LoopTolerance = 1e-9;
// One float32 iteration: the GEMMs differ by ~(M + 2) 2^-24 ~ 5e-6 in Lambda (<= 1), i.e. by
// 1e-3 relative in exp(-Lambda / epsilon) at epsilon = 0.005, before the Sinkhorn rescaling.
constexpr double kF32OneIterationTolerance = 2e-3;
// The profile start is computed in float32 on both sides: a GEMM of Q + 2 = 66 terms (~1e-7
// absolute in C) seen through epsilon = 0.1 mean(C) ~ 1e-3, plus each Sinkhorn's own rounding.
constexpr double kProfileStartTolerance = 2e-3;
// Plain OT in float32: each Sinkhorn implementation is within ~4 units of 2^-24 (1 + max C / eps)
// of the exact iterate (tests/sinkhorn), so two of them are within 8; 16 leaves a margin.
constexpr double kF32PlainOtUnits = 16.0;
// Two float32 runs (CPU and CUDA, or two seeds) are two samples of the same random algorithm once
// a draw has flipped. On the 400 x 500 landmark spiral, CPU runs with solver seeds 0..7 end with
// true GW losses from 0.84e-3 to 2.25e-3 (2.7x) and |rho| >= 0.9991; the mirror optimum costs
// 8-12x. A CUDA run must land within this factor of the CPU run of the same seed.
constexpr double kSeedSpreadFactor = 4.0;
// The final sampled estimate <Lambda, T> against the true loss of the same plan: within 12% on
// those CPU runs (M = 80 anchors for the estimate, 512 for the Monte Carlo loss).
constexpr double kEstimateVsLossTolerance = 0.3;

struct SpiralCase {
  datagen::PointSet source, target;
  Problem problem;
};

SpiralCase spiral_problem(Index n, Index k, std::uint64_t seed) {
  SpiralCase c{datagen::spiral(n, seed), datagen::swiss_roll(k, seed), {}};
  c.problem.source = Geometry::from_points(c.source.points, n, 2);
  c.problem.target = Geometry::from_points(c.target.points, k, 3);
  return c;
}

double abs_rho(const SpiralCase& c, const Result& r) {
  std::vector<double> matched(c.source.n);
  for (Index i = 0; i < c.source.n; ++i) matched[i] = c.target.angles[r.matching[i]];
  return std::abs(spearman(c.source.angles, matched));
}

// The reference table's settings (bench/README.md, spiral).
Options spiral_options(DistanceMode mode, Backend backend) {
  Options o;
  o.solver = SolverKind::kSampled;  // these tests are about the sampled loop
  o.knn = 5;
  o.epsilon = 0.005;
  o.num_anchors = 80;
  o.max_iterations = 300;
  o.distance_mode = mode;
  o.backend = backend;
  return o;
}

double l1_distance(const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0.0;
  for (std::size_t p = 0; p < a.size(); ++p) sum += std::abs(a[p] - b[p]);
  return sum;
}

double total(const std::vector<double>& values) {
  double sum = 0.0;
  for (double v : values) sum += v;
  return sum;
}

TEST(CudaSolver, Spiral400x500LandmarkMatchesTheCpuRun) {
  GW_REQUIRE_GPU();
  const SpiralCase c = spiral_problem(400, 500, 1);
  const Result cpu = solve(c.problem, spiral_options(DistanceMode::kLandmark, Backend::kCpu));
  const Result gpu = solve(c.problem, spiral_options(DistanceMode::kLandmark, Backend::kCuda));
  ASSERT_TRUE(gpu.ok()) << gpu.message;
  EXPECT_EQ(gpu.backend, Backend::kCuda);
  EXPECT_GT(gpu.threads, 0);
  EXPECT_GE(abs_rho(c, gpu), kMinAbsRho) << gpu.brief_report();
  EXPECT_NEAR(gpu.plan_mass, 1.0, 1e-4);
  ASSERT_EQ(gpu.plan.size(), 400u * 500u);
  double worst = 0.0;
  for (Index i = 0; i < 400; ++i) {
    double row = 0.0;
    for (Index j = 0; j < 500; ++j) row += gpu.plan[i * 500 + j];
    worst = std::max(worst, std::abs(row - 1.0 / 400));
  }
  EXPECT_LT(worst, 0.5 / 400) << "the row marginal is p up to the inner Sinkhorn tolerance";
  ASSERT_TRUE(std::isfinite(gpu.gw_loss) && std::isfinite(cpu.gw_loss));
  const std::string both = "CPU: " + cpu.brief_report() + "\nCUDA: " + gpu.brief_report();
  EXPECT_LE(gpu.gw_loss, kSeedSpreadFactor * cpu.gw_loss) << both;
  EXPECT_LE(cpu.gw_loss, kSeedSpreadFactor * gpu.gw_loss) << both;
  EXPECT_NEAR(gpu.gw_cost_estimate, gpu.gw_loss, kEstimateVsLossTolerance * gpu.gw_loss) << both;
  ASSERT_EQ(gpu.log.size(), static_cast<std::size_t>(gpu.iterations));
  for (const char* phase : {"sampling", "distances", "cost", "sinkhorn", "plan"}) {
    EXPECT_GT(gpu.timings.get(phase), 0.0) << phase;
  }
}

TEST(CudaSolver, SameSeedTwiceGivesTheBitwiseSamePlan) {
  GW_REQUIRE_GPU();
  const SpiralCase c = spiral_problem(200, 250, 3);
  Options o = spiral_options(DistanceMode::kLandmark, Backend::kCuda);
  o.max_iterations = 40;
  o.min_iterations = 40;
  o.seed = 11;
  const Result a = solve(c.problem, o);
  const Result b = solve(c.problem, o);
  ASSERT_EQ(a.plan.size(), b.plan.size());
  EXPECT_TRUE(a.plan == b.plan) << "same seed on the same device must reproduce the plan bitwise";
  ASSERT_EQ(a.log.size(), b.log.size());
  for (std::size_t t = 0; t < a.log.size(); ++t) EXPECT_EQ(a.log[t].cost, b.log[t].cost) << t;
  o.seed = 12;
  const Result other = solve(c.problem, o);
  EXPECT_FALSE(a.plan == other.plan) << "a different seed must draw different anchors";
}

// Float64 runs of the two loops, compared iteration by iteration, over the loop's variants. They
// start from p q^T or from a given plan: the distance-profile start is built in float32 on each
// side (compared on its own below).
struct LoopVariant {
  const char* name;
  double lambda_ema = 0.0;
  double fused_weight = 0.0;
  bool slack = true;
  double partial_mass = 0.0;  // > 0: exact partial transport
  bool given_start = false;   // Problem::initial_plan (random) instead of p q^T
};

// Names the variant in test listings (instead of its bytes).
void PrintTo(const LoopVariant& v, std::ostream* out) { *out << v.name; }

class CudaLoopVsCpu : public ::testing::TestWithParam<LoopVariant> {};

TEST_P(CudaLoopVsCpu, Float64RunsAgreeIterationByIteration) {
  GW_REQUIRE_GPU();
  const LoopVariant v = GetParam();
  const Index n = 80, k = 90;
  SpiralCase c = spiral_problem(n, k, 5);
  if (v.fused_weight > 0.0) {
    Rng rng(8);
    std::vector<double> feature(static_cast<std::size_t>(n) * k);
    for (double& x : feature) x = rng.uniform();
    c.problem.feature_cost = DenseMatrix<double>(n, k, feature);
  }
  Options o = spiral_options(DistanceMode::kPrecomputed, Backend::kCpu);
  o.precision = Precision::kF64;
  o.max_iterations = 15;
  o.min_iterations = 15;
  o.num_anchors = 30;
  o.lambda_ema = v.lambda_ema;
  o.fused_weight = v.fused_weight;
  o.slack = v.slack;
  if (v.partial_mass > 0.0) o.partial_mass = v.partial_mass;
  o.initial_plan = InitialPlan::kProduct;
  if (v.given_start) {
    Rng rng(9);
    std::vector<double> start(static_cast<std::size_t>(n) * k);
    for (double& x : start) x = rng.uniform();
    c.problem.initial_plan = DenseMatrix<double>(n, k, start);
  }
  const Result cpu = solve(c.problem, o);
  o.backend = Backend::kCuda;
  const Result gpu = solve(c.problem, o);
  ASSERT_TRUE(cpu.ok()) << cpu.message;
  ASSERT_TRUE(gpu.ok()) << gpu.message;
  EXPECT_EQ(gpu.termination, cpu.termination);
  ASSERT_EQ(gpu.log.size(), cpu.log.size());
  for (std::size_t t = 0; t < cpu.log.size(); ++t) {
    const IterationRecord& a = cpu.log[t];
    const IterationRecord& b = gpu.log[t];
    EXPECT_NEAR(b.cost, a.cost, kF64LoopTolerance * std::abs(a.cost)) << "iteration " << t + 1;
    EXPECT_NEAR(b.error, a.error, kF64LoopTolerance * (a.error + 1e-12)) << "iteration " << t + 1;
    EXPECT_EQ(b.sinkhorn_iterations, a.sinkhorn_iterations) << "iteration " << t + 1;
    EXPECT_EQ(b.epsilon, a.epsilon);
  }
  ASSERT_EQ(gpu.plan.size(), cpu.plan.size());
  const double mass = total(cpu.plan);
  EXPECT_LE(l1_distance(gpu.plan, cpu.plan), kF64LoopTolerance * mass);
  EXPECT_NEAR(gpu.plan_mass, cpu.plan_mass, kF64LoopTolerance);
  EXPECT_EQ(gpu.matching, cpu.matching);
}

INSTANTIATE_TEST_SUITE_P(Variants,
                         CudaLoopVsCpu,
                         ::testing::Values(LoopVariant{"plain"},
                                           LoopVariant{"ema_and_fused", 0.3, 0.25},
                                           LoopVariant{"no_slack", 0.0, 0.0, false},
                                           LoopVariant{"partial", 0.0, 0.0, true, 60.0},
                                           LoopVariant{"given_start", 0.0, 0.0, true, 0.0, true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(CudaSolver, OneFloat32IterationMatchesTheCpu) {
  GW_REQUIRE_GPU();
  const SpiralCase c = spiral_problem(400, 500, 2);
  Options o = spiral_options(DistanceMode::kLandmark, Backend::kCpu);
  o.max_iterations = 1;
  o.min_iterations = 1;
  o.initial_plan = InitialPlan::kProduct;  // the same T_0 on both sides, so the same anchors
  const Result cpu = solve(c.problem, o);
  o.backend = Backend::kCuda;
  const Result gpu = solve(c.problem, o);
  ASSERT_EQ(gpu.iterations, 1);
  ASSERT_EQ(gpu.plan.size(), cpu.plan.size());
  const double mass = total(cpu.plan);
  EXPECT_LE(l1_distance(gpu.plan, cpu.plan), kF32OneIterationTolerance * mass);
  EXPECT_NEAR(gpu.log[0].cost, cpu.log[0].cost, kF32OneIterationTolerance * cpu.log[0].cost);
}

// The distance-profile start, built on the device by the CUDA loop and on the host by solve() for
// the CPU loop. With momentum 1e-9 the plan after one iteration is T_0 to 1e-9 (L1).
TEST(CudaSolver, DistanceProfileStartMatchesTheCpu) {
  GW_REQUIRE_GPU();
  const SpiralCase c = spiral_problem(400, 500, 3);
  for (Precision precision : {Precision::kF32, Precision::kF64}) {
    Options o = spiral_options(DistanceMode::kLandmark, Backend::kCpu);
    o.precision = precision;
    o.max_iterations = 1;
    o.min_iterations = 1;
    o.momentum = 1e-9;
    const Result cpu = solve(c.problem, o);
    o.backend = Backend::kCuda;
    const Result gpu = solve(c.problem, o);
    ASSERT_EQ(gpu.plan.size(), cpu.plan.size());
    EXPECT_GT(gpu.timings.get("init"), 0.0) << "the profile start runs on the device";
    EXPECT_LE(l1_distance(gpu.plan, cpu.plan), kProfileStartTolerance * total(cpu.plan))
        << to_string(precision);
  }
}

// fused_weight = 1: one Sinkhorn solve on the feature cost, no sampling; the plans agree to the
// precision of the Sinkhorn implementations.
TEST(CudaSolver, FusedWeightOneMatchesTheCpuPlainOtPlan) {
  GW_REQUIRE_GPU();
  const Index n = 30, k = 40;
  Rng rng(1);
  std::vector<double> values(static_cast<std::size_t>(n) * k);
  for (double& v : values) v = rng.uniform();
  Problem problem;
  problem.source = Geometry::nodes_only(n);
  problem.target = Geometry::nodes_only(k);
  problem.feature_cost = DenseMatrix<double>(n, k, values);
  for (Precision precision : {Precision::kF64, Precision::kF32}) {
    for (bool slack : {false, true}) {
      Options o;
      // The entropic plain-OT path on both backends: kAuto would give the CPU the exact linear OT
      // (a 30 x 40 problem is far below exact_max_work), a different plan by design.
      o.solver = SolverKind::kSampled;
      o.fused_weight = 1.0;
      o.slack = slack;
      o.epsilon = 0.05;
      o.precision = precision;
      // Plain OT runs one Sinkhorn solve to the polishing tolerance; tolerance 0 makes it exactly
      // 300 iterations on both sides, so the iterates are comparable.
      o.polish_sinkhorn_tolerance = 0.0;
      o.polish_sinkhorn_iterations = 300;
      const Result cpu = solve(problem, o);
      o.backend = Backend::kCuda;
      const Result gpu = solve(problem, o);
      const std::string label =
          std::string(to_string(precision)) + (slack ? " with slack" : " without slack") +
          "; CPU: " + cpu.message + "; CUDA: " + gpu.message;
      ASSERT_TRUE(gpu.ok()) << label;
      EXPECT_EQ(gpu.iterations, 1);
      ASSERT_EQ(gpu.plan.size(), cpu.plan.size());
      const double tolerance = precision == Precision::kF64
                                   ? kF64LoopTolerance
                                   : kF32PlainOtUnits * std::ldexp(1.0, -24) * (1.0 + 1.0 / 0.05);
      EXPECT_LE(l1_distance(gpu.plan, cpu.plan), tolerance * total(cpu.plan)) << label;
      EXPECT_NEAR(gpu.plan_mass, 1.0, 1e-4) << label;
      EXPECT_NEAR(gpu.gw_cost_estimate, cpu.gw_cost_estimate, tolerance * cpu.gw_cost_estimate)
          << label;
    }
  }
}

TEST(CudaSolver, Float64SpiralKeepsTheQuality) {
  GW_REQUIRE_GPU();
  const SpiralCase c = spiral_problem(400, 500, 1);
  Options o = spiral_options(DistanceMode::kLandmark, Backend::kCuda);
  o.precision = Precision::kF64;
  const Result r = solve(c.problem, o);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_GE(abs_rho(c, r), kMinAbsRho) << r.brief_report();
  EXPECT_NEAR(r.plan_mass, 1.0, 1e-4);
}

TEST(CudaSolver, PartialTransportMovesTheRequestedMass) {
  GW_REQUIRE_GPU();
  const SpiralCase c = spiral_problem(120, 150, 6);
  Options o = spiral_options(DistanceMode::kPrecomputed, Backend::kCuda);
  o.max_iterations = 80;
  o.partial_mass = 90.0;
  const Result r = solve(c.problem, o);
  EXPECT_NEAR(r.plan_mass, 90.0 / 150.0, 0.01) << r.brief_report();
}

TEST(CudaSolver, ProgressCallbackSeesChecksAndCancels) {
  GW_REQUIRE_GPU();
  const SpiralCase c = spiral_problem(100, 120, 7);
  Options o = spiral_options(DistanceMode::kPrecomputed, Backend::kCuda);
  std::vector<int> seen;
  o.progress = [&](const Progress& p) {
    seen.push_back(p.iteration);
    EXPECT_TRUE(std::isfinite(p.cost) && p.cost > 0.0);
    return seen.size() < 2;
  };
  const Result r = solve(c.problem, o);
  EXPECT_EQ(r.termination, Termination::kCancelled) << r.message;
  EXPECT_EQ(seen, (std::vector<int>{o.check_every, 2 * o.check_every}));
  EXPECT_EQ(r.iterations, 2 * o.check_every);
  EXPECT_EQ(r.log.size(), static_cast<std::size_t>(r.iterations));
}

TEST(CudaSolver, RejectsADeviceThatDoesNotExist) {
  GW_REQUIRE_GPU();
  const SpiralCase c = spiral_problem(50, 60, 1);
  Options o = spiral_options(DistanceMode::kPrecomputed, Backend::kCuda);
  o.device = cuda_device_count();
  try {
    solve(c.problem, o);
    FAIL() << "a missing device must be an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
  }
}

}  // namespace
}  // namespace gw
