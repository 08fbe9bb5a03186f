#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "datagen/spiral.h"
#include "distances/precomputed.h"
#include "isa_test_util.h"
#include "sampling/sampling.h"
#include "sinkhorn/sinkhorn.h"
#include "solver/gw_oracles.h"
#include "solver/metrics.h"
#include "solver/solve.h"
#include "solver/solver_impl.h"

namespace gw {
namespace {

template <typename Fn>
void expect_error(Fn&& fn, ErrorCode code, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

using test::random_metric;
using test::random_plan;

// gw_loss runs its two products through the dispatched GEMM: checked on every target, with sizes
// past Eigen's register blocks (odd sizes leave partial tiles).
TEST(GwLoss, FormulaEqualsTheQuadrupleSum) {
  test::for_each_isa([](Isa) {
    Rng rng(1);
    for (auto [n, k] : {std::pair<Index, Index>{1, 1}, {5, 7}, {12, 9}, {20, 20}, {37, 29}}) {
      auto dx = random_metric(rng, n), dy = random_metric(rng, k);
      // Asymmetric matrices (the formula does not need symmetry): a transposed operand fails.
      for (double& v : dx) v += 0.3 * rng.uniform();
      for (double& v : dy) v += 0.3 * rng.uniform();
      const auto t = random_plan(rng, n, k);
      const double want = test::gw_loss_by_definition(dx, dy, t, n, k);
      constexpr double kRelTol = 1e-12;  // two summation orders of O(n^2 k^2) double terms
      EXPECT_NEAR(gw_loss(dx, dy, t, n, k), want, kRelTol * std::max(1.0, std::abs(want)))
          << n << " x " << k;
    }
  });
}

// The estimate from the same anchor pairs, by plain loops: sum_ab T_ab (DX(a, i_p) - DY(b, j_p))^2
// per anchor p, averaged. The estimate computes it as r.dx^2 + c.dy^2 - 2 dx.(T dy) with a
// dispatched GEMM and multithreaded plan sums; the pairs come from the same uniforms (the row
// draw here uses the sampler's own sequential row masses).
TEST(GwLoss, SampledEstimateEqualsThePlainSumOverItsAnchorPairs) {
  test::for_each_isa([](Isa) {
    Rng rng(5);
    for (auto [n, k, m] : {std::tuple<Index, Index, int>{1, 1, 3}, {23, 31, 17}, {70, 45, 40}}) {
      const auto dx = random_metric(rng, n), dy = random_metric(rng, k);
      const auto t = random_plan(rng, n, k);
      auto px = make_dense_provider(std::vector<float>(dx.begin(), dx.end()), n);
      auto py = make_dense_provider(std::vector<float>(dy.begin(), dy.end()), k);
      const double sx = 1.7, sy = 2.3;  // given scales: the blocks are divided by them
      const LossEstimate got = estimate_gw_loss(*px, *py, t, n, k, m, 11, sx, sy);
      Rng draw(11, 2);
      const std::vector<double> uniforms = draw_sampling_uniforms(draw, m);
      const AnchorPairs pairs = sample_anchor_pairs(t.data(), n, k, k, {}, uniforms);
      std::vector<double> per(m, 0.0);
      double mass = 0.0;
      for (double v : t) mass += v;
      for (int p = 0; p < m; ++p) {
        for (Index a = 0; a < n; ++a) {
          for (Index b = 0; b < k; ++b) {
            const double x = static_cast<float>(dx[a * n + pairs.rows[p]]) / sx;
            const double y = static_cast<float>(dy[b * k + pairs.cols[p]]) / sy;
            per[p] += t[a * k + b] * (x - y) * (x - y);
          }
        }
      }
      double mean = 0.0;
      for (double v : per) mean += v / m;
      // Pairs are drawn from T / mass, so the estimate of the loss is mass * the mean.
      EXPECT_NEAR(got.value, mass * mean, 1e-12 * std::max(1.0, mean)) << n << " x " << k;
    }
  });
}

// The multithreaded plan sums against plain loops, on sizes across their row and column blocks
// (256 rows, 4096 columns), and bit for bit the same with 1 and 2 threads.
TEST(PlanSums, RowAndColumnSumsEqualPlainLoopsAndIgnoreTheThreadCount) {
  Rng rng(8);
  for (auto [n, k] : {std::pair<Index, Index>{1, 1}, {3, 5000}, {257, 9}, {600, 4100}}) {
    std::vector<double> t(static_cast<std::size_t>(n) * k);
    for (double& v : t) v = rng.uniform() < 0.2 ? 0.0 : rng.uniform();
    std::vector<double> rows(n), cols(k), rows1(n), cols1(k);
    std::vector<long double> want_rows(n, 0.0L), want_cols(k, 0.0L);
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < k; ++j) {
        want_rows[i] += t[i * k + j];
        want_cols[j] += t[i * k + j];
      }
    }
    {
      ScopedThreads two(2);
      detail::plan_row_sums(t.data(), n, k, rows);
      detail::plan_column_sums(t.data(), n, k, cols);
    }
    {
      ScopedThreads one(1);
      detail::plan_row_sums(t.data(), n, k, rows1);
      detail::plan_column_sums(t.data(), n, k, cols1);
    }
    // Sums of <= 5000 terms in [0, 1): |error| <= terms * 2^-53 * sum, far below 1e-12 relative.
    for (Index i = 0; i < n; ++i) {
      ASSERT_NEAR(rows[i], static_cast<double>(want_rows[i]), 1e-12 * (1.0 + want_rows[i])) << i;
    }
    for (Index j = 0; j < k; ++j) {
      ASSERT_NEAR(cols[j], static_cast<double>(want_cols[j]), 1e-12 * (1.0 + want_cols[j])) << j;
    }
    EXPECT_EQ(rows, rows1) << n << " x " << k;
    EXPECT_EQ(cols, cols1) << n << " x " << k;
  }
}

TEST(GwLoss, SampledEstimateConvergesToTheExactLossAsAnchorsGrow) {
  Rng rng(2);
  const Index n = 40, k = 35;
  auto dx = random_metric(rng, n), dy = random_metric(rng, k);
  const auto t = random_plan(rng, n, k);
  const double max_x = *std::max_element(dx.begin(), dx.end());
  const double max_y = *std::max_element(dy.begin(), dy.end());
  std::vector<double> nx(dx), ny(dy);
  for (double& v : nx) v /= max_x;
  for (double& v : ny) v /= max_y;
  const double exact = gw_loss(nx, ny, t, n, k);
  auto px = make_dense_provider(std::vector<float>(dx.begin(), dx.end()), n);
  auto py = make_dense_provider(std::vector<float>(dy.begin(), dy.end()), k);
  auto mean_abs_error = [&](int anchors) {
    double total = 0.0;
    for (std::uint64_t seed = 0; seed < 20; ++seed) {
      const LossEstimate e = estimate_gw_loss(*px, *py, t, n, k, anchors, seed, max_x, max_y);
      total += std::abs(e.value - exact);
    }
    return total / 20.0;
  };
  const double coarse = mean_abs_error(16);
  const double fine = mean_abs_error(4096);
  EXPECT_LT(fine, coarse / 4.0) << "error should fall like 1/sqrt(M): 16 -> 4096 anchors";
  const LossEstimate big = estimate_gw_loss(*px, *py, t, n, k, 8192, 7, max_x, max_y);
  // float32 distances: the estimate's own bias is ~1e-7 relative, far below its standard error.
  EXPECT_NEAR(big.value, exact, 5.0 * big.standard_error + 1e-6 * exact);
}

// ---------------------------------------------------------------------------------------------

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

// The reference table's settings (bench/README.md, spiral), on the dense plan.
Options spiral_options(DistanceMode mode) {
  Options o;
  o.solver = SolverKind::kSampled;  // these tests are about the sampled loop on the dense plan
  o.support = Support::kDense;
  o.knn = 5;
  o.epsilon = 0.005;
  o.num_anchors = 80;
  o.max_iterations = 300;
  o.distance_mode = mode;
  return o;
}

constexpr double kMinAbsRho = 0.998;  // the quality bar of the issue at every scale

TEST(Spiral, Aligns400x500InEveryDistanceMode) {
  const SpiralCase c = spiral_problem(400, 500, 1);
  for (DistanceMode mode :
       {DistanceMode::kPrecomputed, DistanceMode::kDijkstra, DistanceMode::kLandmark}) {
    const Result r = solve(c.problem, spiral_options(mode));
    EXPECT_TRUE(r.ok()) << r.message;
    EXPECT_GE(abs_rho(c, r), kMinAbsRho) << to_string(mode) << ": " << r.brief_report();
    EXPECT_NEAR(r.plan_mass, 1.0, 1e-4) << to_string(mode);
    EXPECT_EQ(r.source_distances, to_string(mode));
    EXPECT_TRUE(std::isfinite(r.gw_loss));
    EXPECT_EQ(r.plan.size(), 400u * 500u);
    // The plan's row marginal is p = 1/n up to the inner Sinkhorn tolerance.
    double worst = 0.0;
    for (Index i = 0; i < 400; ++i) {
      double row = 0.0;
      for (Index j = 0; j < 500; ++j) row += r.plan[i * 500 + j];
      worst = std::max(worst, std::abs(row - 1.0 / 400));
    }
    EXPECT_LT(worst, 0.5 / 400) << to_string(mode);
  }
}

TEST(Spiral, RoundedPlanHasExactMarginalsAndMovesLittle) {
  const SpiralCase c = spiral_problem(300, 350, 2);
  Options o = spiral_options(DistanceMode::kLandmark);
  o.max_iterations = 60;
  const Result rounded = solve(c.problem, o);
  o.round_marginals = false;
  const Result raw = solve(c.problem, o);  // same seed: the same loop, only the rounding differs
  const Index n = 300, k = 350;
  auto marginal_errors = [&](const std::vector<double>& t) {
    std::vector<double> col(k, 0.0);
    double row_error = 0.0, col_error = 0.0;
    for (Index i = 0; i < n; ++i) {
      double row = 0.0;
      for (Index j = 0; j < k; ++j) {
        row += t[i * k + j];
        col[j] += t[i * k + j];
      }
      row_error += std::abs(row - 1.0 / n);
    }
    for (Index j = 0; j < k; ++j) col_error += std::abs(col[j] - 1.0 / k);
    return std::make_pair(row_error, col_error);
  };
  const auto [row_error, col_error] = marginal_errors(rounded.plan);
  EXPECT_LT(row_error, 1e-12);  // exact up to double rounding of n k additions
  EXPECT_LT(col_error, 1e-12);
  const auto [raw_row, raw_col] = marginal_errors(raw.plan);
  double moved = 0.0;
  for (std::size_t p = 0; p < raw.plan.size(); ++p) {
    EXPECT_GE(rounded.plan[p], 0.0);
    moved += std::abs(rounded.plan[p] - raw.plan[p]);
  }
  // Altschuler, Weed & Rigollet (2017), Lemma 7: |T' - T|_1 <= 2 (|r - p|_1 + |c - q|_1).
  EXPECT_LE(moved, 2.0 * (raw_row + raw_col) + 1e-12);
  EXPECT_EQ(rounded.matching.size(), raw.matching.size());
}

TEST(Spiral, Aligns2000x2500WithLandmarks) {
  const SpiralCase c = spiral_problem(2000, 2500, 1);
  const Result r = solve(c.problem, spiral_options(DistanceMode::kLandmark));
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_GE(abs_rho(c, r), kMinAbsRho) << r.brief_report();
  EXPECT_NEAR(r.plan_mass, 1.0, 1e-4);
}

TEST(Spiral, SameSeedThreadsAndTargetGiveTheBitwiseSamePlanOnEveryTarget) {
  // Large enough (400 x 500) that every parallel pass splits its rows over several threads.
  const SpiralCase c = spiral_problem(400, 500, 3);
  Options o = spiral_options(DistanceMode::kLandmark);
  o.max_iterations = 40;
  o.min_iterations = 40;
  test::for_each_isa(
      [&](Isa isa) {
        o.seed = 11;
        const Result a = solve(c.problem, o);
        const Result b = solve(c.problem, o);
        EXPECT_EQ(a.isa, to_string(isa));
        ASSERT_EQ(a.plan.size(), b.plan.size());
        EXPECT_TRUE(a.plan == b.plan)
            << "same seed, threads and target must reproduce the plan bitwise";
        EXPECT_EQ(a.log.size(), b.log.size());
        o.seed = 12;
        const Result other = solve(c.problem, o);
        EXPECT_FALSE(a.plan == other.plan) << "a different seed must draw different anchors";
      });
}

TEST(Spiral, EveryTargetAligns400x500WithLandmarks) {
  // The dispatched kernels (Sinkhorn rows, cost GEMM) of each target run the whole loop.
  const SpiralCase c = spiral_problem(400, 500, 1);
  test::for_each_isa([&](Isa) {
    const Result r = solve(c.problem, spiral_options(DistanceMode::kLandmark));
    EXPECT_TRUE(r.ok()) << r.message;
    EXPECT_GE(abs_rho(c, r), kMinAbsRho) << r.brief_report();
    EXPECT_NEAR(r.plan_mass, 1.0, 1e-4);
  });
}

TEST(Spiral, TopKOutputKeepsTheLargestEntries) {
  const SpiralCase c = spiral_problem(150, 160, 4);
  Options o = spiral_options(DistanceMode::kPrecomputed);
  o.max_iterations = 60;
  const Result dense = solve(c.problem, o);
  o.plan_format = PlanFormat::kTopK;
  o.top_k = 4;
  const Result sparse = solve(c.problem, o);
  EXPECT_TRUE(sparse.plan.empty());
  ASSERT_EQ(sparse.plan_topk.row_offsets.size(), 151u);
  EXPECT_EQ(sparse.matching, dense.matching);  // same seed: same run, different output form
  for (Index i = 0; i < 150; ++i) {
    std::vector<double> row(dense.plan.begin() + i * 160, dense.plan.begin() + (i + 1) * 160);
    std::vector<double> sorted = row;
    std::sort(sorted.rbegin(), sorted.rend());
    for (Offset p = sparse.plan_topk.row_offsets[i]; p < sparse.plan_topk.row_offsets[i + 1]; ++p) {
      const Index j = sparse.plan_topk.col_indices[p];
      EXPECT_EQ(sparse.plan_topk.values[p], row[j]);
      EXPECT_GE(row[j], sorted[3]);
    }
  }
}

TEST(Spiral, MultiscaleWarmStartRunsAndKeepsQuality) {
  const SpiralCase c = spiral_problem(1200, 1300, 5);
  Options o = spiral_options(DistanceMode::kLandmark);
  o.multiscale = true;
  o.multiscale_size = 300;
  const Result r = solve(c.problem, o);
  EXPECT_TRUE(r.multiscale_used);
  EXPECT_EQ(r.multiscale_size, 300);
  EXPECT_GT(r.multiscale_iterations, 0);
  EXPECT_GE(abs_rho(c, r), kMinAbsRho) << r.brief_report();
}

// Found by the options fuzz harness (tests/fuzz/regressions/options/many_anchors_overflows_int):
// 40 M and the affordable count of a tiny problem (4e9 at n = k = 1) exceed int; the automatic
// count was converted to int without a cap (undefined behaviour). It saturates at INT_MAX now.
TEST(Schedule, ManyAnchorsSaturatesInsteadOfOverflowingInt) {
  Options o;
  o.num_anchors = std::numeric_limits<int>::max() / 2;
  EXPECT_EQ(o.many_anchors(1, 1), std::numeric_limits<int>::max());
  o.num_anchors = 100'000'000;
  EXPECT_EQ(o.many_anchors(1, 1), std::numeric_limits<int>::max());
  EXPECT_EQ(o.many_anchors(0, 5), std::numeric_limits<int>::max());  // empty side: no GEMM cost
  o.num_anchors = 50;
  EXPECT_EQ(o.many_anchors(1, 1), 2000);
}

TEST(Schedule, WarmupAndPolishDrawManyAnchorsThenM) {
  Options o;
  o.num_anchors = 50;
  o.warmup_iterations = 2;
  EXPECT_EQ(o.many_anchors(400, 500), 2000);    // 40 M: 2 n k m = 0.8 GFLOP, under the cap
  EXPECT_EQ(o.many_anchors(2000, 2500), 800);   // capped at 8 GFLOP per iteration
  EXPECT_EQ(o.many_anchors(20000, 25000), 50);  // never fewer than M
  EXPECT_EQ(o.anchors_at(0, 400, 500), 2000);
  EXPECT_EQ(o.anchors_at(1, 400, 500), 2000);
  EXPECT_EQ(o.anchors_at(2, 400, 500), 50);
  o.warmup_anchors = 300;
  EXPECT_EQ(o.anchors_at(0, 400, 500), 300);
  EXPECT_EQ(o.max_anchors(400, 500), 300);
  o.warmup_iterations = 0;
  o.polish_iterations = 0;
  EXPECT_EQ(o.max_anchors(400, 500), 50);
}

TEST(Schedule, PolishingIterationsSolveTheirInnerProblemsTighter) {
  const SpiralCase c = spiral_problem(200, 250, 7);
  Options o = spiral_options(DistanceMode::kLandmark);
  o.polish_iterations = 3;
  const Result r = solve(c.problem, o);
  ASSERT_GE(r.log.size(), 4u);
  for (std::size_t t = 0; t + 3 < r.log.size(); ++t) {
    EXPECT_LE(r.log[t].sinkhorn_iterations, o.sinkhorn_max_iterations) << "iteration " << t;
  }
  int polished = 0;
  for (std::size_t t = r.log.size() - 3; t < r.log.size(); ++t) {
    polished += r.log[t].sinkhorn_iterations > o.sinkhorn_max_iterations;
  }
  EXPECT_GE(polished, 1) << "the last iterations must run tight inner solves";
  EXPECT_GT(r.timings.get("polish_sinkhorn"), 0.0);
}

TEST(Schedule, RestartProbesRankTheirPlansByLossAndTheBestContinues) {
  const SpiralCase c = spiral_problem(250, 300, 8);
  Options o = spiral_options(DistanceMode::kPrecomputed);
  o.restarts = 3;
  o.restart_iterations = 10;
  const Result r = solve(c.problem, o);
  ASSERT_EQ(r.restart_losses.size(), 3u);
  ASSERT_GE(r.restart_chosen, 0);
  const auto best = std::min_element(r.restart_losses.begin(), r.restart_losses.end());
  EXPECT_EQ(r.restart_chosen, best - r.restart_losses.begin());
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_GT(r.log.front().iteration, o.restart_iterations) << "the main run continues the probe";
  EXPECT_GE(abs_rho(c, r), kMinAbsRho);
  EXPECT_GT(r.timings.get("probe_sinkhorn"), 0.0);
  o.restarts = 1;
  const Result single = solve(c.problem, o);
  EXPECT_TRUE(single.restart_losses.empty());
  EXPECT_EQ(single.log.front().iteration, 1);
}

// ---------------------------------------------------------------------------------------------
// Problem variants on a small fused / plain OT problem.

struct OtCase {
  Index n = 30, k = 40;
  DenseMatrix<double> cost;
  Problem problem;
};

OtCase ot_case(std::uint64_t seed) {
  OtCase c;
  Rng rng(seed);
  std::vector<double> values(static_cast<std::size_t>(c.n) * c.k);
  for (double& v : values) v = rng.uniform();
  c.cost = DenseMatrix<double>(c.n, c.k, values);
  c.problem.source = Geometry::nodes_only(c.n);
  c.problem.target = Geometry::nodes_only(c.k);
  c.problem.feature_cost = c.cost;
  return c;
}

TEST(Variants, FusedWeightOneEqualsPlainSinkhornOnTheFeatureCost) {
  const OtCase c = ot_case(1);
  Options o;
  o.solver = SolverKind::kSampled;  // the sampled path's plain entropic OT
  o.fused_weight = 1.0;
  o.slack = false;
  o.epsilon = 0.05;
  o.precision = Precision::kF64;
  o.round_marginals = false;  // compare the Sinkhorn plan itself
  const Result r = solve(c.problem, o);
  ASSERT_TRUE(r.ok()) << r.message;
  std::vector<double> a(c.n, 1.0 / c.n), b(c.k, 1.0 / c.k), f(c.n, 0.0), g(c.k, 0.0);
  SinkhornOptions so;
  so.precision = Precision::kF64;
  so.max_iterations = o.polish_sinkhorn_iterations;  // plain OT is solved to the polish tolerance
  so.tolerance = o.polish_sinkhorn_tolerance;
  so.check_every = o.sinkhorn_check_every;
  const CostView view(c.cost.values.data(), c.n, c.k);
  sinkhorn(view, a, b, o.epsilon, f, g, so);
  std::vector<double> plan(static_cast<std::size_t>(c.n) * c.k);
  sinkhorn_plan(view, f, g, o.epsilon, PlanView(plan.data(), c.n, c.k), so);
  ASSERT_EQ(r.plan.size(), plan.size());
  for (std::size_t p = 0; p < plan.size(); ++p) {
    EXPECT_NEAR(r.plan[p], plan[p], 1e-12) << p;  // the same computation, float64
  }
}

TEST(Variants, PlainOtReportsConvergedOnlyWhenSinkhornReachedItsTolerance) {
  const OtCase c = ot_case(1);
  Options o;
  o.solver = SolverKind::kSampled;  // the sampled path's plain entropic OT
  o.fused_weight = 1.0;
  o.epsilon = 0.05;
  o.precision = Precision::kF64;
  const Result converged = solve(c.problem, o);
  EXPECT_EQ(converged.termination, Termination::kConverged) << converged.message;
  EXPECT_NE(converged.message.find("converged"), std::string::npos) << converged.message;
  o.polish_sinkhorn_iterations = 1;  // one iteration cannot reach 1e-6 from zero potentials
  o.polish_sinkhorn_tolerance = 1e-12;
  const Result cut = solve(c.problem, o);
  EXPECT_EQ(cut.termination, Termination::kMaxIterations) << cut.message;
  EXPECT_TRUE(cut.ok());  // a usable plan, honestly labelled
}

TEST(Variants, SemiRelaxedLeavesTheTargetMarginalFree) {
  OtCase c = ot_case(2);
  // Make the first five target columns much cheaper: a free target marginal piles mass there.
  for (Index i = 0; i < c.n; ++i)
    for (Index j = 0; j < 5; ++j) c.cost.values[i * c.k + j] *= 0.1;
  c.problem.feature_cost = c.cost;
  Options o;
  o.fused_weight = 1.0;
  o.slack = false;
  o.epsilon = 0.05;
  o.rho_b = 0.05;
  o.sinkhorn_max_iterations = 2000;
  o.sinkhorn_tolerance = 1e-7;
  o.precision = Precision::kF64;
  const Result r = solve(c.problem, o);
  std::vector<double> rows(c.n, 0.0), cols(c.k, 0.0);
  for (Index i = 0; i < c.n; ++i)
    for (Index j = 0; j < c.k; ++j) {
      rows[i] += r.plan[i * c.k + j];
      cols[j] += r.plan[i * c.k + j];
    }
  double row_error = 0.0, col_deviation = 0.0, cheap_mass = 0.0;
  for (Index i = 0; i < c.n; ++i) row_error += std::abs(rows[i] - 1.0 / c.n);
  for (Index j = 0; j < c.k; ++j) col_deviation += std::abs(cols[j] - 1.0 / c.k);
  for (Index j = 0; j < 5; ++j) cheap_mass += cols[j];
  EXPECT_LT(row_error, 1e-5) << "the source marginal stays a hard constraint";
  EXPECT_GT(col_deviation, 0.2) << "the target marginal must move";
  EXPECT_GT(cheap_mass, 2.0 * 5.0 / c.k) << "mass should flow to the cheap columns";
}

TEST(Variants, PartialTransportMovesTheRequestedMass) {
  const OtCase c = ot_case(3);
  for (double points : {10.0, 24.0, 40.0}) {
    Options o;
    o.fused_weight = 1.0;
    o.epsilon = 0.02;
    o.partial_mass = points;
    o.sinkhorn_max_iterations = 3000;
    o.sinkhorn_tolerance = 1e-7;
    o.precision = Precision::kF64;
    const Result r = solve(c.problem, o);
    const double want = points / std::max(c.n, c.k);
    EXPECT_NEAR(r.plan_mass, want, 1e-4) << "partial_mass " << points;
  }
  // The same through the GW loop on a small spiral.
  SpiralCase s = spiral_problem(120, 150, 6);
  Options o = spiral_options(DistanceMode::kPrecomputed);
  o.max_iterations = 80;
  o.partial_mass = 90.0;
  const Result r = solve(s.problem, o);
  EXPECT_NEAR(r.plan_mass, 90.0 / 150.0, 0.01);
}

TEST(Variants, DefaultSlackStillMovesAllTheMass) {
  const OtCase c = ot_case(4);
  Options o;
  o.fused_weight = 1.0;
  o.epsilon = 0.05;
  const Result r = solve(c.problem, o);
  EXPECT_NEAR(r.plan_mass, 1.0, 1e-4);
}

TEST(Variants, SlackSharedBelowMinNKStillMovesAllTheMassAndBeyondMaxIsAnError) {
  const OtCase c = ot_case(4);
  Options o;
  o.solver = SolverKind::kSampled;  // the sampled path's plain entropic OT
  o.fused_weight = 1.0;
  o.epsilon = 0.05;
  o.slack_shared = 5.0;  // the slack marginals hold 1 - 5 / max(n, k) each
  const Result r = solve(c.problem, o);
  EXPECT_NEAR(r.plan_mass, 1.0, 1e-4);
  o.slack_shared = static_cast<double>(std::max(c.n, c.k)) + 1.0;
  expect_error([&] { solve(c.problem, o); }, ErrorCode::kInvalidArgument, "slack_shared");
}

TEST(Variants, MultiscaleScalesPartialMassToTheCoarseProblem) {
  // partial_mass (90 points of 150) exceeds the 30-node coarse level; it must keep its fraction
  // there instead of failing the coarse solve.
  SpiralCase s = spiral_problem(120, 150, 6);
  Options o = spiral_options(DistanceMode::kPrecomputed);
  o.max_iterations = 80;
  o.partial_mass = 90.0;
  o.multiscale = true;
  o.multiscale_size = 30;
  const Result r = solve(s.problem, o);
  EXPECT_TRUE(r.multiscale_used);
  EXPECT_NEAR(r.plan_mass, 90.0 / 150.0, 0.01);
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(Errors, InvalidOptionsNameTheField) {
  const SpiralCase c = spiral_problem(50, 60, 1);
  auto with = [&](auto change, const std::string& field) {
    Options o;
    change(o);
    std::string why;
    EXPECT_FALSE(o.is_valid(&why)) << field;
    EXPECT_NE(why.find(field), std::string::npos) << why;
    expect_error([&] { solve(c.problem, o); }, ErrorCode::kInvalidArgument, field);
  };
  with([](Options& o) { o.num_anchors = 0; }, "num_anchors");
  with([](Options& o) { o.epsilon = -1; }, "epsilon");
  with([](Options& o) { o.epsilon = std::numeric_limits<double>::quiet_NaN(); }, "epsilon");
  with([](Options& o) { o.momentum = 0; }, "momentum");
  with([](Options& o) { o.max_iterations = 0; }, "max_iterations");
  with([](Options& o) { o.fused_weight = 1.5; }, "fused_weight");
  with([](Options& o) { o.rho_b = -2; }, "rho_b");
  with([](Options& o) { o.lambda_ema = 1.0; }, "lambda_ema");
  with([](Options& o) { o.partial_mass = 0.0; }, "partial_mass");
  with([](Options& o) { o.slack_shared = 0.0; }, "slack_shared");
  with([](Options& o) { o.top_k = 0; }, "top_k");
  with([](Options& o) { o.threads = -1; }, "threads");
  with([](Options& o) { o.hybrid_mirror_iterations = -1; }, "hybrid_mirror_iterations");
  with([](Options& o) { o.support_feature_candidates = -1; }, "support_feature_candidates");
  EXPECT_TRUE(Options().is_valid());
}

TEST(Errors, OptionsThatAnotherOptionMakesInertAreRejected) {
  const SpiralCase c = spiral_problem(50, 60, 1);
  auto rejected = [&](auto change, const std::string& field) {
    Options o;
    change(o);
    std::string why;
    EXPECT_FALSE(o.is_valid(&why)) << field;
    EXPECT_NE(why.find(field), std::string::npos) << why;
    expect_error([&] { solve(c.problem, o); }, ErrorCode::kInvalidArgument, field);
  };
  rejected(
      [](Options& o) {
        o.restarts = 3;
        o.restart_iterations = o.max_iterations;
      },
      "restart_iterations");
  rejected(
      [](Options& o) {
        o.partial_mass = 20.0;
        o.slack = false;
      },
      "slack = false");
  rejected([](Options& o) { o.device = 1; }, "device");
  // The same fields alone, or in combinations where they act, are fine.
  Options o;
  o.restarts = 3;
  o.restart_iterations = 10;
  EXPECT_TRUE(o.is_valid());
  o.restart_iterations = o.max_iterations;
  o.restarts = 1;
  EXPECT_TRUE(o.is_valid());  // restart_iterations is inert only when probing is asked for
  o.partial_mass = 20.0;
  EXPECT_TRUE(o.is_valid());
  o.partial_mass.reset();
  o.slack = false;
  EXPECT_TRUE(o.is_valid());
}

TEST(Errors, MismatchedShapesAndMissingInputs) {
  SpiralCase c = spiral_problem(50, 60, 1);
  Options o;
  o.max_iterations = 5;
  Problem p = c.problem;
  p.source_weights = std::vector<double>(49, 1.0);
  expect_error([&] { solve(p, o); }, ErrorCode::kInvalidArgument, "source weights have 49");
  p = c.problem;
  p.target_weights = std::vector<double>(60, 1.0);
  p.target_weights[3] = -1.0;
  expect_error([&] { solve(p, o); }, ErrorCode::kBadData, "target weight 3");
  p = c.problem;
  p.feature_cost = DenseMatrix<double>(60, 50, std::vector<double>(3000, 0.5));
  Options fused = o;
  fused.fused_weight = 0.5;
  expect_error([&] { solve(p, fused); }, ErrorCode::kInvalidArgument, "feature cost is 60 x 50");
  p = c.problem;
  expect_error([&] { solve(p, fused); }, ErrorCode::kInvalidArgument, "needs a feature cost");
  p = c.problem;
  p.initial_plan = DenseMatrix<double>(50, 61, std::vector<double>(50 * 61, 1.0));
  expect_error([&] { solve(p, o); }, ErrorCode::kInvalidArgument, "initial plan is 50 x 61");
  p = c.problem;
  p.source = Geometry::nodes_only(50);
  expect_error([&] { solve(p, o); }, ErrorCode::kInvalidArgument, "source has no geometry");
  expect_error([&] { Geometry::from_points(std::vector<double>(5), 3, 2); },
               ErrorCode::kInvalidArgument,
               "5 coordinates");
  p = c.problem;
  std::vector<double> bad_points = c.source.points;
  bad_points[7] = std::numeric_limits<double>::quiet_NaN();
  p.source = Geometry::from_points(bad_points, 50, 2);
  expect_error([&] { solve(p, o); }, ErrorCode::kBadData, "non-finite");
}

TEST(Errors, CudaBackendWithoutCudaOrDeviceIsAnError) {
  if (GW_HAS_CUDA && cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  const SpiralCase c = spiral_problem(50, 60, 1);
  Options o;
  o.backend = Backend::kCuda;
  try {
    solve(c.problem, o);
    FAIL() << "backend cuda must not fall back silently";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), GW_HAS_CUDA ? ErrorCode::kInvalidArgument : ErrorCode::kNotCompiled);
  }
}

// ---------------------------------------------------------------------------------------------
// Metrics

TEST(Metrics, SpearmanWithTiesMatchesHandComputedValues) {
  const std::vector<double> x = {1, 2, 3, 4, 5};
  const std::vector<double> up = {2, 4, 6, 8, 10}, down = {5, 4, 3, 2, 1};
  EXPECT_DOUBLE_EQ(spearman(x, up), 1.0);
  EXPECT_DOUBLE_EQ(spearman(x, down), -1.0);
  // Ties get average ranks: y ranks (1, 2.5, 2.5, 4, 5) against (1..5).
  const std::vector<double> tied = {1, 2, 2, 3, 4};
  const double mean = 3.0;
  const std::vector<double> ry = {1, 2.5, 2.5, 4, 5};
  double sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < 5; ++i) {
    sxy += (i + 1 - mean) * (ry[i] - mean);
    sxx += (i + 1 - mean) * (i + 1 - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  EXPECT_NEAR(spearman(x, tied), sxy / std::sqrt(sxx * syy), 1e-15);
  const std::vector<double> constant = {1, 1, 1, 1, 1};
  EXPECT_TRUE(std::isnan(spearman(x, constant)));
}

TEST(Metrics, MatchingCorrectnessAndLabelTransfer) {
  const std::vector<double> plan = {0.1,
                                    0.3,
                                    0.3,  //
                                    0.5,
                                    0.0,
                                    0.1};
  const auto match = argmax_matching(plan, 2, 3);
  EXPECT_EQ(match, (std::vector<Index>{1, 0}));  // tie in row 0 goes to the smaller column
  const std::vector<Index> truth = {1, 2};
  EXPECT_DOUBLE_EQ(node_correctness(match, truth), 0.5);
  const std::vector<Index> partial_truth = {1, -1};
  EXPECT_DOUBLE_EQ(node_correctness(match, partial_truth), 1.0);
  const std::vector<int> src_labels = {7, 8}, tgt_labels = {8, 7, 9};
  EXPECT_DOUBLE_EQ(label_transfer_accuracy(match, src_labels, tgt_labels), 1.0);
}

}  // namespace
}  // namespace gw
