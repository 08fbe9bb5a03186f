#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "isa_test_util.h"
#include "sinkhorn/cuda_sinkhorn.h"
#include "sinkhorn/fast_exp_impl.h"
#include "sinkhorn/sinkhorn.h"
#include "sinkhorn/sinkhorn_reference.h"
#include "sinkhorn_test_util.h"

namespace gw {
namespace {

using test::Mode;
using test::Problem;

constexpr double kInf = std::numeric_limits<double>::infinity();

// fast_exp / fast_exp2 against std::exp / std::exp2, in units in the last place of the result: a
// degree-5 polynomial with 0.8 ulp fit error plus ~8 float roundings (float); Taylor to degree 13
// plus roundings (double).
constexpr double kFastExpFloatUlps = 4.0;
constexpr double kFastExpDoubleUlps = 4.0;

// Fused kF64 vs reference, after identical iteration schedules: only fast_exp's few ulps and the
// summation order differ, so potentials agree to ~1e-12 of epsilon (measured); 1e-9 leaves room
// for longer runs and other compilers.
constexpr double kF64PotentialTolerance = 1e-9;  // |f - f_ref| / epsilon
constexpr double kF64PlanTolerance = 1e-9;       // L1(plan - plan_ref) / mass
// kF32 forms (f + g - C) / epsilon in float: each exponent carries ~2^-24 (1 + max|C| / epsilon)
// absolute error (sinkhorn.h). The plans' relative L1 distance stays within 4 such units
// (measured: up to 0.2 units).
constexpr double kF32PlanUnits = 4.0;

double f32_plan_tolerance(double epsilon, double max_cost = 1.0) {
  return kF32PlanUnits * std::ldexp(1.0, -24) * (1.0 + max_cost / epsilon);
}

double ulps_apart(double x, double reference, double ulp_of_one) {
  const double ulp = ulp_of_one * std::ldexp(1.0, std::ilogb(reference));
  return std::abs(x - reference) / ulp;
}

TEST(FastExp, DoubleIsWithinFewUlpsOfStdExp) {
  Rng rng(12);
  double worst = 0.0;
  for (int t = 0; t < 200000; ++t) {
    const double x = -708.0 + 1416.0 * rng.uniform();
    worst = std::max(worst, ulps_apart(detail::fast_exp(x), std::exp(x), 0x1p-52));
  }
  for (double x = -1.0; x <= 1.0; x += 1.0 / 4096) {
    worst = std::max(worst, ulps_apart(detail::fast_exp(x), std::exp(x), 0x1p-52));
  }
  EXPECT_LE(worst, kFastExpDoubleUlps);
  EXPECT_EQ(detail::fast_exp(0.0), 1.0);
}

TEST(FastExp, UnderflowsToZeroSaturatesAndPropagatesNaN) {
  EXPECT_EQ(detail::fast_exp(-kInf), 0.0);
  EXPECT_EQ(detail::fast_exp(-800.0), 0.0);
  EXPECT_TRUE(std::isfinite(detail::fast_exp(kInf)));
  EXPECT_GT(detail::fast_exp(1000.0), 1e307);
  EXPECT_TRUE(std::isnan(detail::fast_exp(std::numeric_limits<double>::quiet_NaN())));
}

TEST(FastExp, Exp2IsWithinFewUlpsOfStdExp2) {
  Rng rng(13);
  double worst_f = 0.0, worst_d = 0.0;
  for (int t = 0; t < 200000; ++t) {
    const float y = static_cast<float>(-125.0 + 252.0 * rng.uniform());
    worst_f = std::max(
        worst_f, ulps_apart(detail::fast_exp2(y), std::exp2(static_cast<double>(y)), 0x1p-23));
    const double yd = -1021.0 + 2043.0 * rng.uniform();
    worst_d = std::max(worst_d, ulps_apart(detail::fast_exp2(yd), std::exp2(yd), 0x1p-52));
  }
  EXPECT_LE(worst_f, kFastExpFloatUlps);
  EXPECT_LE(worst_d, kFastExpDoubleUlps);
  EXPECT_EQ(detail::fast_exp2(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(detail::fast_exp2(-kInf), 0.0);
  EXPECT_TRUE(std::isnan(detail::fast_exp2(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_GT(detail::fast_exp2(1000.0f), 1e38f);
}

// The streaming row kernel as this file's target compiles it (AVX-512 when it has it) and the
// portable loop, on every remainder length: out_j = 2^(c_j * scale + w_j + shift) and the returned
// sum.
template <typename T>
void check_exp2_row(double (*kernel)(const T*, const T*, T, T, std::int64_t, T*), double ulp) {
  Rng rng(14);
  for (std::int64_t k : {1, 7, 8, 15, 16, 17, 1023, 1024, 1025, 3001}) {
    std::vector<T> c(k), w(k), out(k + 1, T(-1));
    for (std::int64_t j = 0; j < k; ++j) {
      c[j] = static_cast<T>(rng.uniform());
      w[j] = static_cast<T>(-60.0 + 120.0 * rng.uniform());
    }
    const T scale = static_cast<T>(-3.0), shift = static_cast<T>(2.5);
    const double sum = kernel(c.data(), w.data(), shift, scale, k, out.data());
    double expected_sum = 0.0, worst = 0.0;
    for (std::int64_t j = 0; j < k; ++j) {
      // The kernel rounds the exponent in T exactly like this expression (a hardware fma where this
      // file's target has one, else a multiply and an add, as the kernel does; then the add).
      const T y = static_cast<T>(GW_SINKHORN_FMA(c[j], scale, w[j])) + shift;
      const double exact = std::exp2(static_cast<double>(y));
      worst = std::max(worst, ulps_apart(out[j], exact, ulp));
      expected_sum += exact;
    }
    EXPECT_LE(worst, kFastExpFloatUlps) << "k = " << k;
    EXPECT_NEAR(sum, expected_sum, 1e-6 * expected_sum) << "k = " << k;
    EXPECT_EQ(out[k], T(-1)) << "wrote past the end, k = " << k;
  }
  // -inf gives 0, NaN propagates into the value and the sum.
  std::vector<T> c{T(0), T(0)}, w{-std::numeric_limits<T>::infinity(), T(1)}, out(2);
  EXPECT_EQ(kernel(c.data(), w.data(), T(0), T(1), 2, out.data()), 2.0);
  EXPECT_EQ(out[0], T(0));
  w[1] = std::numeric_limits<T>::quiet_NaN();
  EXPECT_TRUE(std::isnan(kernel(c.data(), w.data(), T(0), T(1), 2, out.data())));
}

TEST(FastExp, RowKernelMatchesStdExp2) {
  check_exp2_row<float>(&detail::exp2_row<float, float>, 0x1p-23);
  check_exp2_row<double>(&detail::exp2_row<double, double>, 0x1p-52);
  check_exp2_row<float>(&detail::exp2_row_generic<float, float>, 0x1p-23);
  check_exp2_row<double>(&detail::exp2_row_generic<double, double>, 0x1p-52);
  // The copies compiled for each run-time target (AVX-512 included) are checked on every target
  // the CPU supports in sinkhorn_isa_test.cpp.
}

// --- the reference against an independent oracle --------------------------------------------

// Textbook Sinkhorn in the scaling domain (K = exp(-C / eps), u <- (a / K v)^tau_a,
// v <- (b / K^T u)^tau_b), usable at large epsilon where nothing underflows.
void scaling_sinkhorn(const Problem& p,
                      double epsilon,
                      const SinkhornOptions& options,
                      int iterations,
                      std::vector<double>& f,
                      std::vector<double>& g) {
  const double tau_a = std::isinf(options.rho_a) ? 1.0 : options.rho_a / (options.rho_a + epsilon);
  const double tau_b = std::isinf(options.rho_b) ? 1.0 : options.rho_b / (options.rho_b + epsilon);
  std::vector<double> u(p.n, 1.0), v(p.k, 1.0);
  auto kernel = [&](Index i, Index j) {
    return std::exp(-p.c64[static_cast<std::size_t>(i) * p.k + j] / epsilon);
  };
  for (int t = 0; t < iterations; ++t) {
    for (Index i = 0; i < p.n; ++i) {
      double s = 0.0;
      for (Index j = 0; j < p.k; ++j) s += kernel(i, j) * v[j];
      u[i] = std::pow(p.a[i] / s, tau_a);
    }
    for (Index j = 0; j < p.k; ++j) {
      double s = 0.0;
      for (Index i = 0; i < p.n; ++i) s += kernel(i, j) * u[i];
      v[j] = std::pow(p.b[j] / s, tau_b);
    }
  }
  f.resize(p.n);
  g.resize(p.k);
  for (Index i = 0; i < p.n; ++i) f[i] = epsilon * std::log(u[i]);
  for (Index j = 0; j < p.k; ++j) g[j] = epsilon * std::log(v[j]);
}

TEST(SinkhornReference, MatchesScalingDomainSinkhornAtLargeEpsilon) {
  Rng rng(21);
  for (Mode mode : {Mode::kBalanced, Mode::kSemiRelaxed, Mode::kUnbalanced}) {
    const Problem p = test::random_problem(rng, 13, 19);
    const double epsilon = 0.3;
    SinkhornOptions options;
    options.max_iterations = 25;
    options.tolerance = 0.0;
    test::set_mode(mode, options);
    std::vector<double> f(p.n, 0.0), g(p.k, 0.0), f_scaling, g_scaling;
    const SinkhornResult result =
        sinkhorn_reference(p.cost(Precision::kF64), p.a, p.b, epsilon, f, g, options);
    EXPECT_EQ(result.iterations, 25);
    scaling_sinkhorn(p, epsilon, options, 25, f_scaling, g_scaling);
    for (Index i = 0; i < p.n; ++i) EXPECT_NEAR(f[i], f_scaling[i], 1e-12) << test::mode_name(mode);
    for (Index j = 0; j < p.k; ++j) EXPECT_NEAR(g[j], g_scaling[j], 1e-12) << test::mode_name(mode);
  }
}

// --- fused CPU against the reference ---------------------------------------------------------

struct Shape {
  Index n;
  Index k;
};

class FusedVsReference : public ::testing::TestWithParam<std::tuple<Shape, Precision, Mode>> {};

TEST_P(FusedVsReference, FusedMatchesReferenceOnEveryTarget) {
  const auto [shape, precision, mode] = GetParam();
  test::for_each_isa([&, shape = shape, precision = precision, mode = mode](Isa) {
    Rng rng(1000 + shape.n * 7 + shape.k, static_cast<std::uint64_t>(mode));
    for (double epsilon : {1.0, 0.1, 1e-2, 1e-3, 1e-4}) {
      SCOPED_TRACE("epsilon = " + std::to_string(epsilon));
      const Problem p = test::random_problem(rng, shape.n, shape.k);
      SinkhornOptions options;
      options.max_iterations = 60;
      options.tolerance = 0.0;  // identical schedules: 60 updates each
      options.precision = precision;
      test::set_mode(mode, options);
      std::vector<double> f_ref(p.n, 0.0), g_ref(p.k, 0.0), f(p.n, 0.0), g(p.k, 0.0);
      const SinkhornResult ref =
          sinkhorn_reference(p.cost(Precision::kF64), p.a, p.b, epsilon, f_ref, g_ref, options);
      const SinkhornResult fused = sinkhorn(p.cost(precision), p.a, p.b, epsilon, f, g, options);
      ASSERT_TRUE(test::all_finite(f) && test::all_finite(g));
      EXPECT_EQ(fused.iterations, ref.iterations);
      EXPECT_EQ(fused.termination, SinkhornTermination::kMaxIterations) << fused.message;

      const std::vector<double> plan_ref = test::reference_plan(p, f_ref, g_ref, epsilon);
      const std::vector<double> plan = test::reference_plan(p, f, g, epsilon);
      double mass = 0.0;
      for (double x : plan_ref) mass += x;
      const double plan_distance = test::l1_distance(plan, plan_ref) / mass;
      if (precision == Precision::kF64) {
        for (Index i = 0; i < p.n; ++i) {
          EXPECT_NEAR(f[i] / epsilon, f_ref[i] / epsilon, kF64PotentialTolerance) << "row " << i;
        }
        for (Index j = 0; j < p.k; ++j) {
          EXPECT_NEAR(g[j] / epsilon, g_ref[j] / epsilon, kF64PotentialTolerance) << "column " << j;
        }
        EXPECT_LE(plan_distance, kF64PlanTolerance);
        EXPECT_NEAR(fused.marginal_error, ref.marginal_error, 1e-9 * (1.0 + ref.marginal_error));
      } else {
        EXPECT_LE(plan_distance, f32_plan_tolerance(epsilon));
        EXPECT_NEAR(fused.marginal_error, ref.marginal_error, 10 * f32_plan_tolerance(epsilon));
      }
    }
  });
}

std::string shape_name(const ::testing::TestParamInfo<FusedVsReference::ParamType>& info) {
  const auto [shape, precision, mode] = info.param;
  return std::to_string(shape.n) + "x" + std::to_string(shape.k) + "_" +
         std::string(to_string(precision)) + "_" + test::mode_name(mode);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes,
    FusedVsReference,
    ::testing::Combine(
        ::testing::Values(
            Shape{1, 37}, Shape{29, 1}, Shape{17, 23}, Shape{64, 48}, Shape{3, 200}, Shape{101, 7}),
        ::testing::Values(Precision::kF32, Precision::kF64),
        ::testing::Values(Mode::kBalanced, Mode::kSemiRelaxed, Mode::kUnbalanced)),
    shape_name);

// Runs the reference and the fused solver from the same starting potentials and compares plans.
void expect_fused_matches_reference(const Problem& p,
                                    double epsilon,
                                    SinkhornOptions options,
                                    std::vector<double> f0,
                                    std::vector<double> g0,
                                    Precision cost_type = Precision::kF32,
                                    double max_cost = 1.0) {
  std::vector<double> f_ref = f0, g_ref = g0, f = f0, g = g0;
  const SinkhornResult ref =
      sinkhorn_reference(p.cost(Precision::kF64), p.a, p.b, epsilon, f_ref, g_ref, options);
  const SinkhornResult fused = sinkhorn(p.cost(cost_type), p.a, p.b, epsilon, f, g, options);
  ASSERT_TRUE(test::all_finite(f) && test::all_finite(g));
  ASSERT_FALSE(std::isnan(fused.marginal_error));
  const std::vector<double> plan_ref = test::reference_plan(p, f_ref, g_ref, epsilon);
  const std::vector<double> plan = test::reference_plan(p, f, g, epsilon);
  ASSERT_TRUE(test::all_finite(plan));
  double mass = 0.0;
  for (double x : plan_ref) mass += x;
  const double tolerance = options.precision == Precision::kF64
                               ? kF64PlanTolerance
                               : f32_plan_tolerance(epsilon, max_cost);
  EXPECT_LE(test::l1_distance(plan, plan_ref) / mass, tolerance);
  if (options.precision == Precision::kF64) {
    EXPECT_EQ(fused.iterations, ref.iterations);
  }
}

TEST(SinkhornCpu, FusedAgreesWithReferenceAtEpsilon1e4WithoutNaNOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(31);
    const Problem p = test::random_problem(rng, 200, 300);
    for (Precision precision : {Precision::kF32, Precision::kF64}) {
      SinkhornOptions options;
      options.precision = precision;
      options.max_iterations = 300;
      options.tolerance = 1e-3;
      expect_fused_matches_reference(
          p, 1e-4, options, std::vector<double>(p.n), std::vector<double>(p.k));
    }
  });
}

TEST(SinkhornCpu, CostTypeAndComputePrecisionMayDiffer) {
  Rng rng(32);
  const Problem p = test::random_problem(rng, 37, 41);
  for (Precision cost_type : {Precision::kF32, Precision::kF64}) {
    for (Precision precision : {Precision::kF32, Precision::kF64}) {
      SinkhornOptions options;
      options.precision = precision;
      options.max_iterations = 40;
      options.tolerance = 0.0;
      expect_fused_matches_reference(
          p, 1e-2, options, std::vector<double>(p.n), std::vector<double>(p.k), cost_type);
    }
  }
}

// Every row's sum underflows on the cold start (all costs >= 0.5, epsilon = 1e-3: e^-500), and one
// column costs 1 against every row while the others cost <= 0.1, so its sum underflows after each
// row update: the exact row and column fallbacks carry the solve.
TEST(SinkhornCpu, UnderflowingRowsAndColumnsFallBackToExactLogSumExpOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(33);
    Problem p = test::random_problem(rng, 45, 52);
    for (std::size_t at = 0; at < p.c32.size(); ++at) p.set_cost(at, 0.5 + 0.1 * rng.uniform());
    for (Index i = 0; i < p.n; ++i) p.set_cost(static_cast<std::size_t>(i) * p.k + 7, 1.5);
    for (Precision precision : {Precision::kF32, Precision::kF64}) {
      SinkhornOptions options;
      options.precision = precision;
      options.max_iterations = 50;
      options.tolerance = 0.0;
      expect_fused_matches_reference(p,
                                     1e-3,
                                     options,
                                     std::vector<double>(p.n),
                                     std::vector<double>(p.k),
                                     Precision::kF32,
                                     1.5);
    }
  });
}

// A warm start on a cost shifted down by 0.3 makes the exponents ~3000 at epsilon = 1e-4: the row
// sums overflow and must be redone with a max shift.
TEST(SinkhornCpu, WarmStartOnLowerCostDoesNotOverflow) {
  Rng rng(34);
  Problem p = test::random_problem(rng, 60, 70);
  for (std::size_t at = 0; at < p.c32.size(); ++at) p.set_cost(at, 0.3 + 0.7 * rng.uniform());
  for (Precision precision : {Precision::kF32, Precision::kF64}) {
    SinkhornOptions options;
    options.precision = precision;
    options.max_iterations = 200;
    std::vector<double> f(p.n, 0.0), g(p.k, 0.0);
    sinkhorn(p.cost(Precision::kF32), p.a, p.b, 1e-4, f, g, options);
    Problem shifted = p;
    for (std::size_t at = 0; at < p.c32.size(); ++at) shifted.set_cost(at, p.c64[at] - 0.3);
    options.max_iterations = 30;
    options.tolerance = 0.0;
    expect_fused_matches_reference(shifted, 1e-4, options, f, g);
  }
}

// +inf marks a forbidden pair: its plan entry is exactly 0 and the solve matches the reference,
// which skips such terms.
TEST(SinkhornCpu, InfiniteCostsAreForbiddenPairs) {
  Rng rng(37);
  Problem p = test::random_problem(rng, 33, 47);
  for (std::size_t at = 0; at < p.c32.size(); at += 7) p.set_cost(at, kInf);
  for (Precision precision : {Precision::kF32, Precision::kF64}) {
    SinkhornOptions options;
    options.precision = precision;
    options.max_iterations = 40;
    options.tolerance = 0.0;
    expect_fused_matches_reference(
        p, 1e-2, options, std::vector<double>(p.n), std::vector<double>(p.k));
    std::vector<double> f(p.n, 0.0), g(p.k, 0.0);
    sinkhorn(p.cost(Precision::kF32), p.a, p.b, 1e-2, f, g, options);
    std::vector<float> plan(p.c32.size());
    sinkhorn_plan(p.cost(Precision::kF32), f, g, 1e-2, PlanView(plan.data(), p.n, p.k), options);
    for (std::size_t at = 0; at < plan.size(); ++at) {
      ASSERT_TRUE(std::isfinite(plan[at])) << at;
      if (at % 7 == 0) {
        EXPECT_EQ(plan[at], 0.0f) << at;
      }
    }
  }
}

TEST(SinkhornCpu, RowStrideIsHonouredAndPaddingNeverRead) {
  Rng rng(35);
  const Problem p = test::random_problem(rng, 23, 31);
  const Offset stride = 40;
  std::vector<float> padded(static_cast<std::size_t>(p.n) * stride,
                            std::numeric_limits<float>::quiet_NaN());
  for (Index i = 0; i < p.n; ++i) {
    for (Index j = 0; j < p.k; ++j)
      padded[i * stride + j] = p.c32[static_cast<std::size_t>(i) * p.k + j];
  }
  SinkhornOptions options;
  options.max_iterations = 30;
  options.tolerance = 0.0;
  std::vector<double> f(p.n, 0.0), g(p.k, 0.0), f_dense(p.n, 0.0), g_dense(p.k, 0.0);
  sinkhorn(CostView(padded.data(), p.n, p.k, stride), p.a, p.b, 0.05, f, g, options);
  sinkhorn(p.cost(Precision::kF32), p.a, p.b, 0.05, f_dense, g_dense, options);
  EXPECT_EQ(f, f_dense);
  EXPECT_EQ(g, g_dense);

  std::vector<float> plan_padded(static_cast<std::size_t>(p.n) * stride, -1.0f);
  std::vector<float> plan(static_cast<std::size_t>(p.n) * p.k);
  sinkhorn_plan(CostView(padded.data(), p.n, p.k, stride),
                f,
                g,
                0.05,
                PlanView(plan_padded.data(), p.n, p.k, stride));
  sinkhorn_plan(p.cost(Precision::kF32), f, g, 0.05, PlanView(plan.data(), p.n, p.k));
  for (Index i = 0; i < p.n; ++i) {
    for (Index j = 0; j < stride; ++j) {
      if (j < p.k) {
        EXPECT_EQ(plan_padded[i * stride + j], plan[static_cast<std::size_t>(i) * p.k + j]);
      } else {
        EXPECT_EQ(plan_padded[i * stride + j], -1.0f) << "padding written at " << i << ", " << j;
      }
    }
  }
}

TEST(SinkhornCpu, ThreadCountsAgree) {
  Rng rng(36);
  // Large enough that three threads get their minimum share of entries each.
  const Problem p = test::random_problem(rng, 397, 501);
  SinkhornOptions options;
  options.precision = Precision::kF64;
  options.max_iterations = 20;
  options.tolerance = 0.0;
  std::vector<double> f1(p.n, 0.0), g1(p.k, 0.0), f2(p.n, 0.0), g2(p.k, 0.0);
  options.threads = 1;
  const SinkhornResult one = sinkhorn(p.cost(Precision::kF64), p.a, p.b, 0.01, f1, g1, options);
  options.threads = 3;
  const SinkhornResult three = sinkhorn(p.cost(Precision::kF64), p.a, p.b, 0.01, f2, g2, options);
  EXPECT_EQ(one.threads, 1);
  EXPECT_EQ(three.threads, 3);
  options.threads = 0;
  const Problem small = test::random_problem(rng, 20, 30);
  std::vector<double> fs(small.n, 0.0), gs(small.k, 0.0);
  EXPECT_EQ(sinkhorn(small.cost(Precision::kF64), small.a, small.b, 0.01, fs, gs, options).threads,
            1);
  for (Index i = 0; i < p.n; ++i) EXPECT_NEAR(f1[i], f2[i], 1e-12);
  for (Index j = 0; j < p.k; ++j) EXPECT_NEAR(g1[j], g2[j], 1e-12);
}

// --- convergence reporting, warm start, plan -------------------------------------------------

// The reported residual, recomputed from the plan of the returned potentials.
double residual_of(const Problem& p,
                   const std::vector<double>& f,
                   const std::vector<double>& g,
                   double epsilon,
                   double rho_a) {
  const std::vector<double> plan = test::reference_plan(p, f, g, epsilon);
  double error = 0.0;
  for (Index i = 0; i < p.n; ++i) {
    double s = 0.0;
    for (Index j = 0; j < p.k; ++j) s += plan[static_cast<std::size_t>(i) * p.k + j];
    const double target = std::isinf(rho_a) ? p.a[i] : p.a[i] * std::exp(-f[i] / rho_a);
    error += std::abs(s - target);
  }
  return error;
}

TEST(SinkhornCpu, ReportedMarginalErrorIsThatOfTheReturnedPotentials) {
  Rng rng(41);
  const Problem p = test::random_problem(rng, 40, 50);
  for (Mode mode : {Mode::kBalanced, Mode::kUnbalanced}) {
    for (int max_iterations : {0, 7, 30}) {
      SinkhornOptions options;
      options.precision = Precision::kF64;
      options.max_iterations = max_iterations;
      options.tolerance = 1e-12;
      test::set_mode(mode, options);
      std::vector<double> f(p.n, 0.0), g(p.k, 0.0);
      const SinkhornResult result =
          sinkhorn(p.cost(Precision::kF64), p.a, p.b, 0.02, f, g, options);
      EXPECT_EQ(result.termination, SinkhornTermination::kMaxIterations);
      EXPECT_EQ(result.iterations, max_iterations);
      EXPECT_NEAR(result.marginal_error,
                  residual_of(p, f, g, 0.02, options.rho_a),
                  1e-12 + 1e-9 * result.marginal_error);
    }
  }
}

TEST(SinkhornCpu, ConvergesAndStopsAtACheckIteration) {
  Rng rng(42);
  const Problem p = test::random_problem(rng, 40, 50);
  SinkhornOptions options;
  options.precision = Precision::kF64;
  options.max_iterations = 1000;
  options.tolerance = 1e-6;
  options.check_every = 7;
  std::vector<double> f(p.n, 0.0), g(p.k, 0.0);
  const SinkhornResult result = sinkhorn(p.cost(Precision::kF64), p.a, p.b, 0.05, f, g, options);
  EXPECT_TRUE(result.converged()) << result.message;
  EXPECT_EQ(result.iterations % 7, 0);
  EXPECT_GT(result.iterations, 0);
  EXPECT_LE(result.marginal_error, 1e-6);
  EXPECT_NEAR(result.marginal_error, residual_of(p, f, g, 0.05, kInf), 1e-12);
  EXPECT_EQ(to_string(result.termination), "converged");
}

TEST(SinkhornCpu, WarmStartFromConvergedPotentialsTakesAtMostTwoIterations) {
  Rng rng(43);
  const Problem p = test::random_problem(rng, 120, 90);
  for (Precision precision : {Precision::kF32, Precision::kF64}) {
    SinkhornOptions options;
    options.precision = precision;
    options.max_iterations = 2000;
    options.tolerance = 5e-4;
    std::vector<double> f(p.n, 0.0), g(p.k, 0.0);
    const SinkhornResult cold = sinkhorn(p.cost(Precision::kF32), p.a, p.b, 1e-3, f, g, options);
    ASSERT_TRUE(cold.converged()) << cold.message;
    ASSERT_GT(cold.iterations, 2);
    const SinkhornResult warm = sinkhorn(p.cost(Precision::kF32), p.a, p.b, 1e-3, f, g, options);
    EXPECT_TRUE(warm.converged()) << warm.message;
    EXPECT_LE(warm.iterations, 2);
  }
}

TEST(SinkhornCpu, WarmStartOnPerturbedCostBeatsColdStart) {
  Rng rng(44);
  Problem p = test::random_problem(rng, 150, 130);
  SinkhornOptions options;
  options.max_iterations = 2000;
  options.tolerance = 5e-4;
  options.check_every = 5;
  std::vector<double> f(p.n, 0.0), g(p.k, 0.0);
  ASSERT_TRUE(sinkhorn(p.cost(Precision::kF32), p.a, p.b, 2e-3, f, g, options).converged());
  for (std::size_t at = 0; at < p.c32.size(); ++at)
    p.set_cost(at, p.c64[at] + 1e-3 * rng.uniform());
  std::vector<double> f_cold(p.n, 0.0), g_cold(p.k, 0.0);
  const SinkhornResult warm = sinkhorn(p.cost(Precision::kF32), p.a, p.b, 2e-3, f, g, options);
  const SinkhornResult cold =
      sinkhorn(p.cost(Precision::kF32), p.a, p.b, 2e-3, f_cold, g_cold, options);
  ASSERT_TRUE(warm.converged() && cold.converged());
  EXPECT_LT(warm.iterations * 2, cold.iterations);
}

TEST(SinkhornCpu, MaterializedPlanHasTheMarginalsOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(45);
    const Problem p = test::random_problem(rng, 70, 90);
    // kF64: converged to 1e-9; kF32 at epsilon = 1e-2: to 1e-5 (the plan is written in float, whose
    // rounding adds ~1e-7 per row sum).
    const struct {
      Precision precision;
      double tolerance;
    } cases[] = {{Precision::kF64, 1e-9}, {Precision::kF32, 1e-5}};
    for (const auto& c : cases) {
      SinkhornOptions options;
      options.precision = c.precision;
      options.max_iterations = 5000;
      options.tolerance = c.tolerance;
      std::vector<double> f(p.n, 0.0), g(p.k, 0.0);
      const SinkhornResult result = sinkhorn(p.cost(c.precision), p.a, p.b, 1e-2, f, g, options);
      ASSERT_TRUE(result.converged()) << result.message;
      std::vector<double> plan64(static_cast<std::size_t>(p.n) * p.k);
      std::vector<float> plan32(plan64.size());
      sinkhorn_plan(p.cost(c.precision), f, g, 1e-2, PlanView(plan64.data(), p.n, p.k), options);
      sinkhorn_plan(p.cost(c.precision), f, g, 1e-2, PlanView(plan32.data(), p.n, p.k), options);
      EXPECT_LE(test::row_sum_error(plan64, p.n, p.k, p.a), 1.01 * c.tolerance + 1e-12);
      // Column sums are exact after the last column update, up to rounding.
      EXPECT_LE(test::column_sum_error(plan64, p.n, p.k, p.b), c.tolerance);
      const std::vector<double> widened(plan32.begin(), plan32.end());
      EXPECT_LE(test::row_sum_error(widened, p.n, p.k, p.a), c.tolerance + 1e-6);
      EXPECT_LE(test::column_sum_error(widened, p.n, p.k, p.b), c.tolerance + 1e-6);
    }
  });
}

TEST(SinkhornCpu, ZeroMassEntriesGiveExactZerosAndNoNaNOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(46);
    Problem p = test::random_problem(rng, 30, 40);
    for (Index i : {0, 7, 29}) p.a[i] = 0.0;
    for (Index j : {3, 39}) p.b[j] = 0.0;
    double mass_a = 0.0, mass_b = 0.0;
    for (double x : p.a) mass_a += x;
    for (double x : p.b) mass_b += x;
    for (double& x : p.b) x *= mass_a / mass_b;
    for (Precision precision : {Precision::kF32, Precision::kF64}) {
      for (double epsilon : {1e-1, 1e-4}) {
        SinkhornOptions options;
        options.precision = precision;
        options.max_iterations = 40;
        options.tolerance = 0.0;
        std::vector<double> f(p.n, 0.0), g(p.k, 0.0);
        expect_fused_matches_reference(p, epsilon, options, f, g);
        sinkhorn(p.cost(Precision::kF32), p.a, p.b, epsilon, f, g, options);
        for (Index i : {0, 7, 29}) EXPECT_EQ(f[i], kZeroMassPotential);
        for (Index j : {3, 39}) EXPECT_EQ(g[j], kZeroMassPotential);
        std::vector<float> plan(static_cast<std::size_t>(p.n) * p.k);
        sinkhorn_plan(
            p.cost(Precision::kF32), f, g, epsilon, PlanView(plan.data(), p.n, p.k), options);
        for (Index i = 0; i < p.n; ++i) {
          for (Index j = 0; j < p.k; ++j) {
            const float t = plan[static_cast<std::size_t>(i) * p.k + j];
            ASSERT_TRUE(std::isfinite(t));
            if (p.a[i] == 0.0 || p.b[j] == 0.0) {
              EXPECT_EQ(t, 0.0f) << i << ", " << j;
            }
          }
        }
        // Warm start from those potentials after the masses become positive again.
        Problem refilled = p;
        refilled.a = test::random_marginal(rng, p.n);
        refilled.b = test::random_marginal(rng, p.k);
        expect_fused_matches_reference(refilled, epsilon, options, f, g);
      }
    }
  });
}

// --- misuse and bad data ---------------------------------------------------------------------

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

TEST(SinkhornCpu, RejectsMisuseAndBadData) {
  Rng rng(51);
  Problem p = test::random_problem(rng, 5, 6);
  std::vector<double> f(p.n, 0.0), g(p.k, 0.0), short_f(p.n - 1, 0.0);
  const CostView cost = p.cost(Precision::kF32);
  auto solve = [&](const SinkhornOptions& options) {
    sinkhorn(cost, p.a, p.b, 0.1, f, g, options);
  };

  EXPECT_EQ(error_code_of([&] { sinkhorn(cost, p.a, p.b, 0.1, short_f, g); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_code_of([&] { sinkhorn(cost, p.b, p.a, 0.1, f, g); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_code_of([&] { sinkhorn(cost, p.a, p.b, 0.0, f, g); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_code_of([&] { sinkhorn(CostView(p.c32.data(), 5, 6, 3), p.a, p.b, 0.1, f, g); }),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(error_code_of([&] { sinkhorn(CostView(), p.a, p.b, 0.1, f, g); }),
            ErrorCode::kInvalidArgument);
  SinkhornOptions bad;
  bad.check_every = 0;
  EXPECT_EQ(error_code_of([&] { solve(bad); }), ErrorCode::kInvalidArgument);
  bad = {};
  bad.rho_a = -1.0;
  EXPECT_EQ(error_code_of([&] { solve(bad); }), ErrorCode::kInvalidArgument);
  bad = {};
  bad.max_iterations = -1;
  std::string why;
  EXPECT_FALSE(bad.is_valid(&why));
  EXPECT_NE(why.find("max_iterations"), std::string::npos) << why;

  Problem unequal = p;
  unequal.b[0] += 0.1;
  EXPECT_EQ(error_code_of([&] { sinkhorn(cost, unequal.a, unequal.b, 0.1, f, g); }),
            ErrorCode::kInvalidArgument);
  SinkhornOptions relaxed;
  relaxed.rho_b = 1.0;
  EXPECT_NO_THROW(sinkhorn(cost, unequal.a, unequal.b, 0.1, f, g, relaxed));

  Problem negative = p;
  negative.a[2] = -0.1;
  EXPECT_EQ(error_code_of([&] { sinkhorn(cost, negative.a, p.b, 0.1, f, g); }),
            ErrorCode::kBadData);
  std::vector<double> nan_f(p.n, 0.0);
  nan_f[1] = std::nan("");
  EXPECT_EQ(error_code_of([&] { sinkhorn(cost, p.a, p.b, 0.1, nan_f, g); }), ErrorCode::kBadData);

  Problem nan_cost = p;
  nan_cost.set_cost(8, std::nan(""));
  std::vector<double> f0(p.n, 0.0), g0(p.k, 0.0);
  for (Precision precision : {Precision::kF32, Precision::kF64}) {
    SinkhornOptions options;
    options.precision = precision;
    EXPECT_EQ(error_code_of([&] {
                sinkhorn(nan_cost.cost(Precision::kF32), p.a, p.b, 0.1, f0, g0, options);
              }),
              ErrorCode::kBadData);
  }
  EXPECT_EQ(error_code_of(
                [&] { sinkhorn_reference(nan_cost.cost(Precision::kF64), p.a, p.b, 0.1, f0, g0); }),
            ErrorCode::kBadData);

  std::vector<float> plan(4);
  EXPECT_EQ(error_code_of([&] { sinkhorn_plan(cost, f, g, 0.1, PlanView(plan.data(), 2, 2)); }),
            ErrorCode::kInvalidArgument);
}

TEST(CudaSinkhorn, ReportsAMissingBackend) {
#if GW_HAS_CUDA
  if (cuda_device_count() > 0)
    GTEST_SKIP() << "a CUDA device is present; test_sinkhorn_cuda covers it";
  EXPECT_EQ(error_code_of([] { CudaSinkhorn sinkhorn(0); }), ErrorCode::kInvalidArgument);
#else
  EXPECT_EQ(error_code_of([] { CudaSinkhorn sinkhorn(0); }), ErrorCode::kNotCompiled);
#endif
}

}  // namespace
}  // namespace gw
