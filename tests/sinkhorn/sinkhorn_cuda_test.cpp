// CudaSinkhorn against the CPU reference on random problems (ctest label "gpu"). Every test skips
// when no CUDA device is visible (always in a build without CUDA).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/config.h"
#include "core/context.h"
#include "core/device_array.h"
#include "core/error.h"
#include "core/rng.h"
#include "sinkhorn/cuda_sinkhorn.h"
#include "sinkhorn/cuda_sparse_sinkhorn.h"
#include "sinkhorn/sinkhorn.h"
#include "sinkhorn/sinkhorn_reference.h"
#include "sinkhorn_test_util.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gw {
namespace {

using test::Mode;
using test::Problem;

// kF64 on the device: online-max log-sum-exp with CUDA's exp/log (<= 2 ulp) against the
// reference's two-pass one; only rounding differs (same reasoning as the CPU kF64 tolerance).
constexpr double kF64PotentialTolerance = 1e-9;  // |f - f_ref| / epsilon
constexpr double kF64PlanTolerance = 1e-9;       // L1(plan - plan_ref) / mass
// kF32: float exponents carry ~2^-24 (1 + max|C| / epsilon) absolute error (sinkhorn.h); the
// relative plan distance stays within 4 such units (the CPU kernel measures up to 0.2).
constexpr double kF32PlanUnits = 4.0;

double f32_plan_tolerance(double epsilon, double max_cost = 1.0) {
  return kF32PlanUnits * std::ldexp(1.0, -24) * (1.0 + max_cost / epsilon);
}

#define GW_REQUIRE_GPU()                                                       \
  do {                                                                         \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device is visible"; \
  } while (0)

// Compares the CUDA solve (from the potentials already on the device) with the reference started
// from the same potentials (f0, g0).
void expect_cuda_matches_reference(CudaSinkhorn& cuda,
                                   const Problem& p,
                                   double epsilon,
                                   const SinkhornOptions& options,
                                   const std::vector<double>& f0,
                                   const std::vector<double>& g0,
                                   double max_cost = 1.0) {
  std::vector<double> f_ref = f0, g_ref = g0, f(p.n), g(p.k);
  const SinkhornResult ref =
      sinkhorn_reference(p.cost(Precision::kF64), p.a, p.b, epsilon, f_ref, g_ref, options);
  const SinkhornResult result = cuda.solve(epsilon, options);
  cuda.download_potentials(f, g);
  EXPECT_EQ(result.backend, Backend::kCuda);
  ASSERT_TRUE(test::all_finite(f) && test::all_finite(g));
  ASSERT_FALSE(std::isnan(result.marginal_error));
  const std::vector<double> plan_ref = test::reference_plan(p, f_ref, g_ref, epsilon);
  const std::vector<double> plan = test::reference_plan(p, f, g, epsilon);
  double mass = 0.0;
  for (double x : plan_ref) mass += x;
  if (options.precision == Precision::kF64) {
    EXPECT_EQ(result.iterations, ref.iterations);
    for (Index i = 0; i < p.n; ++i) {
      EXPECT_NEAR(f[i] / epsilon, f_ref[i] / epsilon, kF64PotentialTolerance) << "row " << i;
    }
    for (Index j = 0; j < p.k; ++j) {
      EXPECT_NEAR(g[j] / epsilon, g_ref[j] / epsilon, kF64PotentialTolerance) << "column " << j;
    }
    EXPECT_LE(test::l1_distance(plan, plan_ref) / mass, kF64PlanTolerance);
    EXPECT_NEAR(result.marginal_error, ref.marginal_error, 1e-9 * (1.0 + ref.marginal_error));
  } else {
    EXPECT_LE(test::l1_distance(plan, plan_ref) / mass, f32_plan_tolerance(epsilon, max_cost));
  }
}

struct Shape {
  Index n;
  Index k;
};

class CudaVsReference : public ::testing::TestWithParam<std::tuple<Shape, Precision, Mode>> {};

TEST_P(CudaVsReference, CudaMatchesReference) {
  GW_REQUIRE_GPU();
  const auto [shape, precision, mode] = GetParam();
  Rng rng(2000 + shape.n * 7 + shape.k, static_cast<std::uint64_t>(mode));
  CudaSinkhorn cuda(0);
  for (double epsilon : {1.0, 0.1, 1e-2, 1e-3, 1e-4}) {
    SCOPED_TRACE("epsilon = " + std::to_string(epsilon));
    const Problem p = test::random_problem(rng, shape.n, shape.k);
    SinkhornOptions options;
    options.max_iterations = 60;
    options.tolerance = 0.0;
    options.precision = precision;
    test::set_mode(mode, options);
    cuda.upload_cost(p.cost(Precision::kF32));
    cuda.set_marginals(p.a, p.b);
    cuda.reset_potentials();
    expect_cuda_matches_reference(
        cuda, p, epsilon, options, std::vector<double>(p.n), std::vector<double>(p.k));
  }
}

std::string shape_name(const ::testing::TestParamInfo<CudaVsReference::ParamType>& info) {
  const auto [shape, precision, mode] = info.param;
  return std::to_string(shape.n) + "x" + std::to_string(shape.k) + "_" +
         std::string(to_string(precision)) + "_" + test::mode_name(mode);
}

// The shapes exercise a single row / column, partial warps (k < 32, k not a multiple of 128),
// several column tiles (n > 256 rows, not a multiple) and n != k.
INSTANTIATE_TEST_SUITE_P(
    Shapes,
    CudaVsReference,
    ::testing::Combine(::testing::Values(Shape{1, 37},
                                         Shape{29, 1},
                                         Shape{17, 23},
                                         Shape{64, 48},
                                         Shape{3, 200},
                                         Shape{600, 131}),
                       ::testing::Values(Precision::kF32, Precision::kF64),
                       ::testing::Values(Mode::kBalanced, Mode::kSemiRelaxed, Mode::kUnbalanced)),
    shape_name);

TEST(CudaSinkhorn, AgreesWithReferenceAtEpsilon1e4WithoutNaN) {
  GW_REQUIRE_GPU();
  Rng rng(61);
  const Problem p = test::random_problem(rng, 300, 200);
  CudaSinkhorn cuda(0);
  cuda.upload_cost(p.cost(Precision::kF32));
  cuda.set_marginals(p.a, p.b);
  for (Precision precision : {Precision::kF32, Precision::kF64}) {
    SinkhornOptions options;
    options.precision = precision;
    options.max_iterations = 300;
    options.tolerance = 1e-3;
    cuda.reset_potentials();
    expect_cuda_matches_reference(
        cuda, p, 1e-4, options, std::vector<double>(p.n), std::vector<double>(p.k));
  }
}

TEST(CudaSinkhorn, WarmStartFromConvergedPotentialsTakesAtMostTwoIterations) {
  GW_REQUIRE_GPU();
  Rng rng(62);
  const Problem p = test::random_problem(rng, 120, 90);
  CudaSinkhorn cuda(0);
  cuda.upload_cost(p.cost(Precision::kF32));
  cuda.set_marginals(p.a, p.b);
  for (Precision precision : {Precision::kF32, Precision::kF64}) {
    SinkhornOptions options;
    options.precision = precision;
    options.max_iterations = 2000;
    options.tolerance = 5e-4;
    cuda.reset_potentials();
    const SinkhornResult cold = cuda.solve(1e-3, options);
    ASSERT_TRUE(cold.converged()) << cold.message;
    ASSERT_GT(cold.iterations, 2);
    const SinkhornResult warm = cuda.solve(1e-3, options);  // the device kept the potentials
    EXPECT_TRUE(warm.converged()) << warm.message;
    EXPECT_LE(warm.iterations, 2);
  }
}

TEST(CudaSinkhorn, PotentialsUploadAndDownloadRoundTrip) {
  GW_REQUIRE_GPU();
  Rng rng(63);
  const Problem p = test::random_problem(rng, 10, 12);
  CudaSinkhorn cuda(0);
  cuda.upload_cost(p.cost(Precision::kF64));
  std::vector<double> f(p.n), g(p.k), f_back(p.n), g_back(p.k);
  for (double& x : f) x = rng.uniform() - 0.5;
  for (double& x : g) x = rng.uniform() - 0.5;
  f[3] = kZeroMassPotential;
  cuda.set_potentials(f, g);
  cuda.download_potentials(f_back, g_back);
  EXPECT_EQ(f_back, f);
  EXPECT_EQ(g_back, g);
}

// A CudaSinkhorn or CudaSparseSinkhorn on a borrowed stream whose owner destroys the stream first
// is still safe to destroy (its destructor waits for the device, not for the dead stream).
TEST(CudaSinkhorn, SolversOnABorrowedStreamOutliveTheStreamsOwner) {
  GW_REQUIRE_GPU();
  Rng rng(64);
  const Problem p = test::random_problem(rng, 10, 12);
  std::optional<CudaStream> owner = CudaStream::create(0);
  const CudaStream borrowed = CudaStream::borrow(owner->get(), 0);
  auto dense = std::make_unique<CudaSinkhorn>(borrowed);
  dense->upload_cost(p.cost(Precision::kF64));
  std::vector<double> f(p.n), g(p.k), f_back(p.n), g_back(p.k);
  for (double& x : f) x = rng.uniform() - 0.5;
  for (double& x : g) x = rng.uniform() - 0.5;
  dense->set_potentials(f, g);
  dense->download_potentials(f_back, g_back);
  EXPECT_EQ(f_back, f);
  auto sparse = std::make_unique<CudaSparseSinkhorn>(borrowed);
  owner.reset();
  dense.reset();
  sparse.reset();
  CudaSinkhorn fresh(0);  // the device is still usable
  fresh.upload_cost(p.cost(Precision::kF64));
  fresh.set_potentials(f, g);
  fresh.download_potentials(f_back, g_back);
  EXPECT_EQ(g_back, g);
}

// The GW loop's use: one reserve, then per outer iteration a new cost in device memory, a warm
// start from the previous potentials, a smaller epsilon, and the plan materialized on the device.
TEST(CudaSinkhorn, DeviceCostsChangeEachOuterIterationWithWarmStarts) {
  GW_REQUIRE_GPU();
#if GW_HAS_CUDA
  Rng rng(64);
  const Index n = 301, k = 257;
  CudaSinkhorn cuda(0);
  cuda.reserve(n, k, /*reserve_cost=*/false);
  // Both arrays copy on the solver's stream, so the uploads and the plan download are ordered
  // with its kernels.
  DeviceArray<float> cost(static_cast<std::size_t>(n) * k, cuda.stream());
  DeviceArray<float> plan(static_cast<std::size_t>(n) * k, cuda.stream());
  std::vector<double> f(n, 0.0), g(k, 0.0);
  double epsilon = 2e-2;
  for (int outer = 0; outer < 4; ++outer, epsilon *= 0.5) {
    SCOPED_TRACE("outer iteration " + std::to_string(outer));
    const Problem p = test::random_problem(rng, n, k);
    cost.upload(p.c32);
    cuda.use_device_cost(CostView(cost.data(), n, k));
    cuda.set_marginals(p.a, p.b);
    if (outer == 0) cuda.reset_potentials();
    cuda.download_potentials(f, g);  // the warm start both solvers begin from
    SinkhornOptions options;
    options.max_iterations = 100;
    options.tolerance = 5e-4;
    options.precision = Precision::kF64;
    expect_cuda_matches_reference(cuda, p, epsilon, options, f, g);

    cuda.plan_to_device(epsilon, PlanView(plan.data(), n, k), Precision::kF64);
    const std::vector<float> from_device = plan.download();  // after plan_to_device's kernel
    cuda.download_potentials(f, g);
    const std::vector<double> expected = test::reference_plan(p, f, g, epsilon);
    for (std::size_t at = 0; at < expected.size(); ++at) {
      ASSERT_NEAR(from_device[at], expected[at], 1e-6 * expected[at] + 1e-30) << "entry " << at;
    }
  }
#endif
}

TEST(CudaSinkhorn, HostPlanMatchesReferenceAndHasTheMarginals) {
  GW_REQUIRE_GPU();
  Rng rng(65);
  const Problem p = test::random_problem(rng, 70, 90);
  CudaSinkhorn cuda(0);
  cuda.upload_cost(p.cost(Precision::kF64));
  cuda.set_marginals(p.a, p.b);
  SinkhornOptions options;
  options.precision = Precision::kF64;
  options.max_iterations = 5000;
  options.tolerance = 1e-9;
  const SinkhornResult result = cuda.solve(1e-2, options);
  ASSERT_TRUE(result.converged()) << result.message;
  std::vector<double> f(p.n), g(p.k);
  cuda.download_potentials(f, g);
  const Offset stride = p.k + 5;
  std::vector<double> plan(static_cast<std::size_t>(p.n) * stride, -1.0);
  cuda.plan_to_host(1e-2, PlanView(plan.data(), p.n, p.k, stride), Precision::kF64);
  const std::vector<double> expected = test::reference_plan(p, f, g, 1e-2);
  std::vector<double> dense(expected.size());
  for (Index i = 0; i < p.n; ++i) {
    for (Index j = 0; j < stride; ++j) {
      const double t = plan[static_cast<std::size_t>(i) * stride + j];
      if (j >= p.k) {
        EXPECT_EQ(t, -1.0) << "padding written at " << i << ", " << j;
        continue;
      }
      dense[static_cast<std::size_t>(i) * p.k + j] = t;
      EXPECT_NEAR(t, expected[static_cast<std::size_t>(i) * p.k + j], 1e-12);
    }
  }
  EXPECT_LE(test::row_sum_error(dense, p.n, p.k, p.a), 1.01e-9);
  EXPECT_LE(test::column_sum_error(dense, p.n, p.k, p.b), 1e-9);
}

// The plan kernel's grid is capped at 65,535 blocks in y (one row per block, grid-stride over the
// rest): 70,000 rows make the stride loop run, so rows past the cap must be written too.
TEST(CudaSinkhorn, PlanRowsBeyondTheGridLimitMatchReference) {
  GW_REQUIRE_GPU();
  Rng rng(67);
  const Problem p = test::random_problem(rng, 70000, 5);
  CudaSinkhorn cuda(0);
  cuda.upload_cost(p.cost(Precision::kF64));
  cuda.set_marginals(p.a, p.b);
  SinkhornOptions options;
  options.precision = Precision::kF64;
  options.max_iterations = 5;
  options.tolerance = 0.0;
  const double epsilon = 0.05;
  cuda.solve(epsilon, options);
  std::vector<double> f(p.n), g(p.k);
  cuda.download_potentials(f, g);
  std::vector<double> plan(static_cast<std::size_t>(p.n) * p.k, -1.0);
  cuda.plan_to_host(epsilon, PlanView(plan.data(), p.n, p.k), Precision::kF64);
  const std::vector<double> expected = test::reference_plan(p, f, g, epsilon);
  for (std::size_t at = 0; at < expected.size(); ++at) {
    ASSERT_NEAR(plan[at], expected[at], 1e-12 + 1e-9 * expected[at]) << "entry " << at;
  }
}

// The column pass visits 256-row tiles with a grid stride over at most 65,535 tiles: above
// 16.7 M rows every tile must still contribute to the column log-sum-exps, so the column
// potentials (k = 2: 134 MB of float cost) must match the reference after a few iterations.
TEST(CudaSinkhorn, ColumnTilesBeyondTheGridLimitMatchReference) {
  GW_REQUIRE_GPU();
  Rng rng(68);
  const Index n = 65535 * 256 + 4097;
  const Problem p = test::random_problem(rng, n, 2);
  CudaSinkhorn cuda(0);
  cuda.upload_cost(p.cost(Precision::kF32));
  cuda.set_marginals(p.a, p.b);
  cuda.reset_potentials();
  SinkhornOptions options;
  options.precision = Precision::kF64;
  options.max_iterations = 3;
  options.tolerance = 0.0;
  expect_cuda_matches_reference(
      cuda, p, 0.1, options, std::vector<double>(p.n), std::vector<double>(p.k));
}

TEST(CudaSinkhorn, ZeroMassEntriesGiveExactZeros) {
  GW_REQUIRE_GPU();
  Rng rng(66);
  Problem p = test::random_problem(rng, 30, 40);
  for (Index i : {0, 7, 29}) p.a[i] = 0.0;
  for (Index j : {3, 39}) p.b[j] = 0.0;
  double mass_a = 0.0, mass_b = 0.0;
  for (double x : p.a) mass_a += x;
  for (double x : p.b) mass_b += x;
  for (double& x : p.b) x *= mass_a / mass_b;
  CudaSinkhorn cuda(0);
  cuda.upload_cost(p.cost(Precision::kF32));
  cuda.set_marginals(p.a, p.b);
  for (Precision precision : {Precision::kF32, Precision::kF64}) {
    SinkhornOptions options;
    options.precision = precision;
    options.max_iterations = 40;
    options.tolerance = 0.0;
    cuda.reset_potentials();
    expect_cuda_matches_reference(
        cuda, p, 1e-3, options, std::vector<double>(p.n), std::vector<double>(p.k));
    std::vector<double> f(p.n), g(p.k);
    cuda.download_potentials(f, g);
    for (Index i : {0, 7, 29}) EXPECT_EQ(f[i], kZeroMassPotential);
    for (Index j : {3, 39}) EXPECT_EQ(g[j], kZeroMassPotential);
    std::vector<float> plan(static_cast<std::size_t>(p.n) * p.k);
    cuda.plan_to_host(1e-3, PlanView(plan.data(), p.n, p.k), precision);
    for (Index i = 0; i < p.n; ++i) {
      for (Index j = 0; j < p.k; ++j) {
        const float t = plan[static_cast<std::size_t>(i) * p.k + j];
        ASSERT_TRUE(std::isfinite(t));
        if (p.a[i] == 0.0 || p.b[j] == 0.0) {
          EXPECT_EQ(t, 0.0f) << i << ", " << j;
        }
      }
    }
  }
}

template <typename Fn>
ErrorCode error_code_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no gw::Error thrown";
  return ErrorCode::kInternal;
}

TEST(CudaSinkhorn, RejectsMisuseAndBadData) {
  GW_REQUIRE_GPU();
  Rng rng(67);
  Problem p = test::random_problem(rng, 5, 6);
  CudaSinkhorn cuda(0);
  EXPECT_EQ(error_code_of([&] { cuda.solve(0.1); }), ErrorCode::kInvalidArgument);  // no cost
  cuda.upload_cost(p.cost(Precision::kF32));
  EXPECT_EQ(error_code_of([&] { cuda.solve(0.1); }), ErrorCode::kInvalidArgument);  // no marginals
  EXPECT_EQ(error_code_of([&] { cuda.set_marginals(p.b, p.a); }), ErrorCode::kInvalidArgument);
  cuda.set_marginals(p.a, p.b);
  EXPECT_EQ(error_code_of([&] { cuda.solve(-1.0); }), ErrorCode::kInvalidArgument);
  // Host memory is not a device cost.
  EXPECT_EQ(error_code_of([&] { cuda.use_device_cost(p.cost(Precision::kF32)); }),
            ErrorCode::kInvalidArgument);
  std::vector<float> plan(4);
  EXPECT_EQ(error_code_of([&] { cuda.plan_to_host(0.1, PlanView(plan.data(), 2, 2)); }),
            ErrorCode::kInvalidArgument);

  Problem nan_cost = p;
  nan_cost.set_cost(8, std::nan(""));
  cuda.upload_cost(nan_cost.cost(Precision::kF32));
  cuda.set_marginals(p.a, p.b);
  EXPECT_EQ(error_code_of([&] { cuda.solve(0.1); }), ErrorCode::kBadData);
}

}  // namespace
}  // namespace gw
