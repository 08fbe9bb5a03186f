// CudaAnchorSampler against the CPU sampler (ctest label "gpu"). Every test that needs a device
// skips when none is visible; the last test checks the error without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/config.h"
#include "core/context.h"
#include "core/cuda_stream.h"
#include "core/device_array.h"
#include "core/error.h"
#include "core/rng.h"
#include "sampling/cuda_sampling.h"
#include "sampling/sampling.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gw {
namespace {

#define GW_REQUIRE_GPU()                                                       \
  do {                                                                         \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device is visible"; \
  } while (0)

// The CPU and CUDA samplers sum the same numbers in different orders (sequential vs. block-wise):
// a draw may differ only where its target lies within this relative distance of a boundary
// between two rows (or columns), i.e. within a few roundings of double sums of <= 10^7 terms.
constexpr long double kBoundaryTolerance = 1e-12L;

// A random n x k plan with row stride `stride`: every fifth row (from row 3) and ~30% of the
// entries are exactly zero, every other row has mass; the padding columns hold 9 so that reading
// them would show up as mass.
template <typename T>
std::vector<T> random_plan(Rng& rng, Index n, Index k, Offset stride) {
  std::vector<T> plan(static_cast<std::size_t>(n) * stride, T(9));
  for (Index i = 0; i < n; ++i) {
    const bool empty_row = i % 5 == 3;
    T* row = plan.data() + static_cast<std::size_t>(i) * stride;
    bool any = false;
    for (Index j = 0; j < k; ++j) {
      const bool zero = empty_row || rng.uniform() < 0.3;
      row[j] = zero ? T(0) : static_cast<T>(rng.uniform());
      any = any || row[j] > T(0);
    }
    if (!empty_row && !any) row[i % k] = T(0.5);
  }
  return plan;
}

template <typename T>
std::vector<double> row_sums(const std::vector<T>& plan, Index n, Index k, Offset stride) {
  std::vector<double> sums(n, 0.0);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < k; ++j) sums[i] += static_cast<double>(plan[i * stride + j]);
  return sums;
}

#if GW_HAS_CUDA
// A device copy of a host vector, complete when this returns (DeviceArray::upload waits for its
// copy), so kernels on any stream see it.
template <typename T>
DeviceArray<T> to_device(const std::vector<T>& host) {
  static const CudaStream stream = CudaStream::create(0);
  return DeviceArray<T>(std::span<const T>(host), stream);
}

template <typename T>
void expect_frequencies_match_the_plan() {
  Rng rng(10);
  const Index n = 7, k = 6;
  const Offset stride = k + 3;
  const std::vector<T> plan = random_plan<T>(rng, n, k, stride);
  double total = 0.0;
  for (double r : row_sums(plan, n, k, stride)) total += r;
  const DeviceArray<T> device_plan = to_device<T>(plan);
  constexpr int kDraws = 200000;
  Rng draw(99);
  const std::vector<double> uniforms = draw_sampling_uniforms(draw, kDraws);
  CudaAnchorSampler sampler(0);
  const AnchorPairs pairs = sampler.sample(device_plan.data(), n, k, stride, nullptr, uniforms);
  ASSERT_EQ(pairs.size(), kDraws);
  std::vector<int> counts(static_cast<std::size_t>(n) * k, 0);
  for (int s = 0; s < kDraws; ++s) {
    ASSERT_TRUE(pairs.rows[s] >= 0 && pairs.rows[s] < n && pairs.cols[s] >= 0 && pairs.cols[s] < k)
        << "draw " << s << " is (" << pairs.rows[s] << ", " << pairs.cols[s] << ")";
    ++counts[pairs.rows[s] * k + pairs.cols[s]];
  }
  double chi2 = 0.0;
  int cells = 0;
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < k; ++j) {
      const double value = static_cast<double>(plan[i * stride + j]);
      const int count = counts[i * k + j];
      if (value == 0.0) {
        EXPECT_EQ(count, 0) << "a zero entry was sampled at (" << i << ", " << j << ")";
        continue;
      }
      const double expected = kDraws * value / total;
      chi2 += (count - expected) * (count - expected) / expected;
      ++cells;
    }
  }
  // Chi-square with (cells - 1) degrees of freedom: mean cells - 1, sd sqrt(2 (cells - 1)); a
  // 6-sigma bound keeps the test stable while catching any bias in row or column choice.
  const double dof = cells - 1;
  EXPECT_LT(chi2, dof + 6.0 * std::sqrt(2.0 * dof)) << "cells " << cells;
}

// Compares the CUDA draws with the CPU sampler's on the same uniforms; a differing draw must be a
// boundary case (see kBoundaryTolerance).
template <typename T>
void expect_agreement_with_cpu(Index n, Index k, int m, bool give_row_mass, std::uint64_t seed) {
  Rng rng(seed);
  const Offset stride = k + 1;
  const std::vector<T> plan = random_plan<T>(rng, n, k, stride);
  const std::vector<double> masses = row_sums(plan, n, k, stride);
  const std::vector<double> uniforms = draw_sampling_uniforms(rng, m);
  const std::vector<double> no_masses;
  const AnchorPairs cpu = sample_anchor_pairs<T>(
      plan.data(), n, k, stride, give_row_mass ? masses : no_masses, uniforms);

  const DeviceArray<T> device_plan = to_device<T>(plan);
  const DeviceArray<double> device_masses = to_device<double>(masses);
  CudaAnchorSampler sampler(0);
  sampler.reserve(n, m);
  const AnchorPairs gpu = sampler.sample(
      device_plan.data(), n, k, stride, give_row_mass ? device_masses.data() : nullptr, uniforms);
  ASSERT_EQ(gpu.size(), m);

  std::vector<long double> cumulative(n);
  long double total = 0.0L;
  for (Index i = 0; i < n; ++i) cumulative[i] = (total += masses[i]);
  int differing = 0;
  for (int s = 0; s < m; ++s) {
    ASSERT_TRUE(gpu.rows[s] >= 0 && gpu.rows[s] < n) << "draw " << s;
    ASSERT_TRUE(gpu.cols[s] >= 0 && gpu.cols[s] < k) << "draw " << s;
    EXPECT_GT(plan[gpu.rows[s] * stride + gpu.cols[s]], T(0)) << "draw " << s << " has no mass";
    if (gpu.rows[s] != cpu.rows[s]) {
      ++differing;
      const Index lo = std::min(gpu.rows[s], cpu.rows[s]);
      const long double target = uniforms[s] * total;
      EXPECT_LE(std::abs(target - cumulative[lo]), kBoundaryTolerance * total)
          << "draw " << s << ": rows " << gpu.rows[s] << " (CUDA) vs " << cpu.rows[s] << " (CPU)";
      continue;
    }
    if (gpu.cols[s] != cpu.cols[s]) {
      ++differing;
      const Index i = gpu.rows[s];
      const Index lo = std::min(gpu.cols[s], cpu.cols[s]);
      long double running = 0.0L, at_lo = 0.0L;
      for (Index j = 0; j < k; ++j) {
        running += static_cast<long double>(plan[i * stride + j]);
        if (j == lo) at_lo = running;
      }
      const long double target = uniforms[m + s] * running;
      EXPECT_LE(std::abs(target - at_lo), kBoundaryTolerance * running)
          << "draw " << s << " (row " << i << "): columns " << gpu.cols[s] << " (CUDA) vs "
          << cpu.cols[s] << " (CPU)";
    }
  }
  EXPECT_LE(differing, m / 1000) << "too many draws differ from the CPU sampler";
}
#endif  // GW_HAS_CUDA

TEST(CudaSampling, FrequenciesMatchThePlan) {
  GW_REQUIRE_GPU();
#if GW_HAS_CUDA
  expect_frequencies_match_the_plan<double>();
  expect_frequencies_match_the_plan<float>();
#endif
}

// Shapes cover one and several tiles of the row scan (4096 rows) and of the column scan (1024).
class CudaSamplingVsCpu
    : public ::testing::TestWithParam<std::tuple<std::pair<Index, Index>, Precision, bool>> {};

TEST_P(CudaSamplingVsCpu, AgreesOnTheSameUniforms) {
  GW_REQUIRE_GPU();
#if GW_HAS_CUDA
  const auto [shape, precision, give_row_mass] = GetParam();
  const auto [n, k] = shape;
  const int m = 5000;
  if (precision == Precision::kF32) {
    expect_agreement_with_cpu<float>(n, k, m, give_row_mass, 21 + n);
  } else {
    expect_agreement_with_cpu<double>(n, k, m, give_row_mass, 21 + n);
  }
#endif
}

std::string param_name(const std::tuple<std::pair<Index, Index>, Precision, bool>& param) {
  const auto& [shape, precision, given] = param;
  return std::to_string(shape.first) + "x" + std::to_string(shape.second) + "_" +
         std::string(to_string(precision)) + (given ? "_given_masses" : "_computed_masses");
}

INSTANTIATE_TEST_SUITE_P(Shapes,
                         CudaSamplingVsCpu,
                         ::testing::Combine(::testing::Values(std::pair<Index, Index>{1, 1},
                                                              std::pair<Index, Index>{300, 257},
                                                              std::pair<Index, Index>{9000, 2500}),
                                            ::testing::Values(Precision::kF32, Precision::kF64),
                                            ::testing::Bool()),
                         [](const auto& info) { return param_name(info.param); });

TEST(CudaSampling, SameUniformsGiveTheSamePairs) {
  GW_REQUIRE_GPU();
#if GW_HAS_CUDA
  Rng rng(4);
  const Index n = 5000, k = 1300;
  const std::vector<float> plan = random_plan<float>(rng, n, k, k);
  const DeviceArray<float> device_plan = to_device<float>(plan);
  const std::vector<double> uniforms = draw_sampling_uniforms(rng, 2000);
  CudaAnchorSampler a(0), b(0);
  const AnchorPairs first = a.sample(device_plan.data(), n, k, k, nullptr, uniforms);
  const AnchorPairs again = a.sample(device_plan.data(), n, k, k, nullptr, uniforms);
  const AnchorPairs other = b.sample(device_plan.data(), n, k, k, nullptr, uniforms);
  EXPECT_EQ(first.rows, again.rows);
  EXPECT_EQ(first.cols, again.cols);
  EXPECT_EQ(first.rows, other.rows);
  EXPECT_EQ(first.cols, other.cols);
  const std::vector<double> different = draw_sampling_uniforms(rng, 2000);
  const AnchorPairs moved = a.sample(device_plan.data(), n, k, k, nullptr, different);
  EXPECT_NE(first.rows, moved.rows);
#endif
}

TEST(CudaSampling, RejectsEmptyPlansAndMisuse) {
  GW_REQUIRE_GPU();
#if GW_HAS_CUDA
  auto expect_code = [](auto&& fn, ErrorCode code, const std::string& fragment) {
    try {
      fn();
      ADD_FAILURE() << "expected an error containing '" << fragment << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  CudaAnchorSampler sampler(0);
  Rng rng(1);
  const std::vector<double> uniforms = draw_sampling_uniforms(rng, 4);
  const std::vector<double> zeros(6, 0.0);
  const DeviceArray<double> device_zeros = to_device<double>(zeros);
  expect_code([&] { sampler.sample(device_zeros.data(), 2, 3, 3, nullptr, uniforms); },
              ErrorCode::kBadData,
              "zero mass");
  // Row masses that claim mass for a row whose entries are all zero.
  const std::vector<double> plan = {0, 0, 0, 1, 2, 3};
  const DeviceArray<double> device_plan = to_device<double>(plan);
  const DeviceArray<double> wrong_masses = to_device<double>(std::vector<double>{5.0, 0.0});
  expect_code([&] { sampler.sample(device_plan.data(), 2, 3, 3, wrong_masses.data(), uniforms); },
              ErrorCode::kBadData,
              "plan row 0");
  // Still usable after an error.
  const AnchorPairs pairs = sampler.sample(device_plan.data(), 2, 3, 3, nullptr, uniforms);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(pairs.rows[s], 1);
  expect_code([&] { sampler.sample(plan.data(), 2, 3, 3, nullptr, uniforms); },
              ErrorCode::kInvalidArgument,
              "not device memory");
  expect_code([&] { sampler.sample(device_plan.data(), 2, 3, 2, nullptr, uniforms); },
              ErrorCode::kInvalidArgument,
              "stride");
  const std::vector<double> odd = {0.5, 0.5, 0.5};
  expect_code([&] { sampler.sample(device_plan.data(), 2, 3, 3, nullptr, odd); },
              ErrorCode::kInvalidArgument,
              "2 uniforms per pair");
  expect_code([&] { CudaAnchorSampler bad(cuda_device_count()); },
              ErrorCode::kInvalidArgument,
              "does not exist");
#endif
}

TEST(CudaSampling, WithoutCudaOrADeviceTheConstructorThrows) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  try {
    CudaAnchorSampler sampler(0);
    FAIL() << "CudaAnchorSampler must not construct without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), GW_HAS_CUDA ? ErrorCode::kInvalidArgument : ErrorCode::kNotCompiled)
        << e.what();
  }
}

}  // namespace
}  // namespace gw
