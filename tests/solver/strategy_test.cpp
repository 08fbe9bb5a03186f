// The dispatcher (solver/strategy.h): every rule of choose_strategy on both sides of its
// threshold, each with the reason it reports, the given/unset semantics of Setting<T>, and that
// gw::solve runs exactly what choose_strategy returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "solver/inputs.h"
#include "solver/solve.h"
#include "solver/solver_impl.h"
#include "solver/sparse/sparse_impl.h"
#include "solver/strategy.h"

namespace gw {
namespace {

// n points in the plane (2-D, uniform): a side whose strategy depends only on its size. Nothing
// is solved on the large ones.
Geometry points(Index n, std::uint64_t seed = 1) {
  Rng rng(seed);
  std::vector<double> xs(static_cast<std::size_t>(n) * 2);
  for (double& x : xs) x = rng.uniform();
  return Geometry::from_points(std::move(xs), n, 2);
}

Problem problem_of(Index n, Index k) {
  Problem p;
  p.source = points(n, 1);
  p.target = points(k, 2);
  return p;
}

// Dense distance matrices of random points (solvable quickly).
Problem small_distances(Index n, Index k) {
  Rng rng(7);
  auto side = [&](Index m) {
    std::vector<double> xs(static_cast<std::size_t>(m) * 2);
    for (double& x : xs) x = rng.uniform();
    DenseMatrix<float> d(m, m, std::vector<float>(static_cast<std::size_t>(m) * m));
    for (Index i = 0; i < m; ++i)
      for (Index j = 0; j < m; ++j) {
        const double dx = xs[2 * i] - xs[2 * j], dy = xs[2 * i + 1] - xs[2 * j + 1];
        d.values[static_cast<std::size_t>(i) * m + j] = static_cast<float>(std::sqrt(dx * dx + dy * dy));
      }
    return Geometry::from_distances(std::move(d));
  };
  Problem p;
  p.source = side(n);
  p.target = side(k);
  return p;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const Candidate& candidate(const Strategy& s, const std::string& name) {
  for (const Candidate& c : s.candidates)
    if (c.name == name) return c;
  throw std::runtime_error("no candidate " + name);
}

TEST(Setting, AssignmentMarksGivenDeclarationDefaultAndSetDefaultDoNot) {
  Options o;
  EXPECT_FALSE(o.num_anchors.given());
  EXPECT_TRUE(o.given_sampled_settings().empty());
  EXPECT_TRUE(o.given_exact_settings().empty());
  o.num_anchors.set_default(80);
  EXPECT_EQ(o.num_anchors, 80);
  EXPECT_FALSE(o.num_anchors.given());
  o.num_anchors = 50;  // the library's default value, but asked for
  EXPECT_TRUE(o.num_anchors.given());
  o.exact_tolerance = 1e-6;
  EXPECT_EQ(o.given_sampled_settings(), std::vector<std::string_view>{"num_anchors"});
  EXPECT_EQ(o.given_exact_settings(), std::vector<std::string_view>{"exact_tolerance"});
  const Options copy = o;  // a copy keeps the marks
  EXPECT_TRUE(copy.num_anchors.given());
  o.forget_given();
  EXPECT_TRUE(o.given_sampled_settings().empty());
  EXPECT_TRUE(o.given_exact_settings().empty());
  EXPECT_EQ(o.num_anchors, 50);
  EXPECT_DOUBLE_EQ(o.exact_tolerance, 1e-6);
}

TEST(Strategy, AutoRunsExactUpToExactMaxWorkAndSampledAbove) {
  const Problem p = problem_of(20, 30);
  const double work = exact_iteration_work(20, 30);
  Options o;
  o.exact_max_work = work;
  Strategy s = choose_strategy(p, o);
  EXPECT_EQ(s.solver, SolverKind::kExact) << s.solver_reason;
  EXPECT_TRUE(contains(s.solver_reason, "<= exact_max_work")) << s.solver_reason;
  EXPECT_EQ(s.support, Support::kDense);
  EXPECT_TRUE(contains(s.support_reason, "exact solver")) << s.support_reason;
  o.exact_max_work = work - 1.0;
  s = choose_strategy(p, o);
  EXPECT_EQ(s.solver, SolverKind::kSampled) << s.solver_reason;
  EXPECT_TRUE(contains(s.solver_reason, "> exact_max_work")) << s.solver_reason;
}

TEST(Strategy, WhatTheExactSolverCannotTakeGoesToTheSampledLoopWithThatReason) {
  const Problem p = problem_of(20, 30);
  struct Case {
    const char* reason;
    void (*set)(Options&);
  };
  const Case cases[] = {
      {"unbalanced", [](Options& o) { o.rho_a = 1.0; }},
      {"partial", [](Options& o) { o.partial_mass = 10.0; }},
      {"backend cuda", [](Options& o) { o.backend = Backend::kCuda; }},
      {"support = sparse", [](Options& o) { o.support = Support::kSparse; }},
      {"slack_shared", [](Options& o) { o.slack_shared = 5.0; }},
  };
  for (const Case& c : cases) {
    Options o;
    c.set(o);
    const Strategy s = choose_strategy(p, o);  // no device is touched
    EXPECT_EQ(s.solver, SolverKind::kSampled) << c.reason;
    EXPECT_TRUE(contains(s.solver_reason, c.reason)) << c.reason << ": " << s.solver_reason;
    EXPECT_FALSE(candidate(s, "exact").possible) << c.reason;
  }
}

TEST(Strategy, AGivenSettingOfOneSolverRequestsIt) {
  const Problem small = problem_of(20, 30);
  Options o;
  o.num_anchors = 80;
  Strategy s = choose_strategy(small, o);
  EXPECT_EQ(s.solver, SolverKind::kSampled);
  EXPECT_TRUE(contains(s.solver_reason, "num_anchors")) << s.solver_reason;
  // The same value left at its default (not given) keeps auto's choice.
  Options unset;
  unset.num_anchors.set_default(80);
  EXPECT_EQ(choose_strategy(small, unset).solver, SolverKind::kExact);
  // An exact-solver setting asks for the exact solver even beyond exact_max_work.
  const Problem larger = problem_of(900, 1000);
  Options exact;
  exact.exact_tolerance = 1e-6;
  exact.exact_max_work = 1.0;
  s = choose_strategy(larger, exact);
  EXPECT_EQ(s.solver, SolverKind::kExact);
  EXPECT_TRUE(contains(s.solver_reason, "exact_tolerance")) << s.solver_reason;
}

// support_feature_candidates ranks candidates by per-node features: without them (no feature term,
// or a dense n x k feature cost) it would do nothing, so the strategy refuses it, naming it.
TEST(Strategy, FeatureCandidatesWithoutPerNodeFeaturesAreRefused) {
  Problem p = problem_of(300, 300);
  Options o;
  o.support_feature_candidates = 4;
  try {
    choose_strategy(p, o);
    ADD_FAILURE() << "accepted without a feature term";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(contains(e.what(), "support_feature_candidates")) << e.what();
  }
  o.fused_weight = 0.5;
  p.feature_cost = DenseMatrix<double>(300, 300, std::vector<double>(300 * 300, 1.0));
  EXPECT_THROW(choose_strategy(p, o), Error);  // a dense feature cost has no per-node features
  p.feature_cost.reset();
  p.source_features = DenseMatrix<double>(300, 3, std::vector<double>(900, 0.5));
  p.target_features = DenseMatrix<double>(300, 3, std::vector<double>(900, 0.25));
  EXPECT_NO_THROW(choose_strategy(p, o));
}

TEST(Strategy, ConflictingRequestsAreErrorsNamingTheSettings) {
  const Problem p = problem_of(20, 30);
  auto expect_error = [&](const Options& o, ErrorCode code, const std::string& part) {
    try {
      choose_strategy(p, o);
      ADD_FAILURE() << "accepted: " << part;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_TRUE(contains(e.what(), part)) << e.what();
    }
  };
  Options both;
  both.num_anchors = 80;
  both.starts = 2;
  expect_error(both, ErrorCode::kInvalidArgument, "num_anchors");
  expect_error(both, ErrorCode::kInvalidArgument, "starts");
  Options sampled_with_exact;
  sampled_with_exact.solver = SolverKind::kSampled;
  sampled_with_exact.exact_tolerance = 1e-6;
  expect_error(sampled_with_exact, ErrorCode::kInvalidArgument, "exact_tolerance");
  Options exact_with_sampled;
  exact_with_sampled.solver = SolverKind::kExact;
  exact_with_sampled.epsilon = 0.01;
  expect_error(exact_with_sampled, ErrorCode::kInvalidArgument, "epsilon");
  Options exact_unbalanced;
  exact_unbalanced.exact_tolerance = 1e-6;
  exact_unbalanced.rho_b = 0.5;
  expect_error(exact_unbalanced, ErrorCode::kUnsupported, "unbalanced");
  Options requested;
  requested.solver = SolverKind::kExact;
  requested.backend = Backend::kCuda;
  expect_error(requested, ErrorCode::kUnsupported, "--solver sampled");
  Options sparse_partial;
  sparse_partial.support = Support::kSparse;
  sparse_partial.partial_mass = 10.0;
  expect_error(sparse_partial, ErrorCode::kInvalidArgument, "partial_mass");
}

TEST(Strategy, FeaturesTheSparsePathLacksKeepTheDensePlan) {
  const Problem large = problem_of(20000, 25000);
  Options base;
  base.num_anchors = 80;  // the sampled loop
  ASSERT_EQ(choose_strategy(large, base).support, Support::kSparse);
  struct Case {
    const char* reason;
    void (*set)(Options&);
  };
  const Case cases[] = {
      {"plan_format = dense", [](Options& o) { o.plan_format = PlanFormat::kDense; }},
      {"partial_mass", [](Options& o) { o.partial_mass = 100.0; }},
      {"lambda_ema", [](Options& o) { o.lambda_ema = 0.5; }},
      {"multiscale", [](Options& o) { o.multiscale = true; }},
  };
  for (const Case& c : cases) {
    Options o = base;
    o.memory_limit = std::size_t{1} << 40;  // room for the dense plan
    c.set(o);
    const Strategy s = choose_strategy(large, o);
    EXPECT_EQ(s.support, Support::kDense) << c.reason;
    EXPECT_TRUE(contains(s.support_reason, c.reason)) << c.reason << ": " << s.support_reason;
  }
  // The library's own default plan_format (dense, not given) does not hold the support dense.
  Options unset = base;
  unset.memory_limit = std::size_t{1} << 40;
  EXPECT_FALSE(unset.plan_format.given());
  EXPECT_EQ(choose_strategy(large, unset).support, Support::kSparse);
}

TEST(Strategy, AutoSupportIsTheCandidateThatIsPredictedFaster) {
  Options o;
  o.num_anchors = 50;  // the sampled loop at every size
  o.memory_limit = std::size_t{1} << 40;
  bool saw_dense = false, saw_sparse = false;
  for (Index n : {100, 200, 400, 800, 1600, 3200, 6400, 12800}) {
    const Strategy s = choose_strategy(problem_of(n, n + n / 4), o);
    const Candidate& dense = candidate(s, "sampled dense");
    const Candidate& sparse = candidate(s, "sampled sparse");
    ASSERT_TRUE(dense.possible && sparse.possible) << n;
    // A dense run predicted within a second stays dense; beyond, the faster prediction wins.
    const Support faster = dense.seconds > 1.0 && sparse.seconds < dense.seconds
                               ? Support::kSparse
                               : Support::kDense;
    EXPECT_EQ(s.support, faster) << n << ": " << s.support_reason;
    EXPECT_TRUE(contains(s.support_reason, "cost model")) << s.support_reason;
    (faster == Support::kDense ? saw_dense : saw_sparse) = true;
    // Predictions grow with the size.
    EXPECT_GT(dense.seconds, 0.0);
    EXPECT_GT(sparse.seconds, 0.0);
  }
  // The range crosses the model's threshold: small problems dense, large ones sparse.
  EXPECT_TRUE(saw_dense);
  EXPECT_TRUE(saw_sparse);
}

TEST(Strategy, AutoSupportFollowsTheMemoryBudgetBeforeTheCostModel) {
  const Problem p = problem_of(2000, 2500);
  Options o;
  o.num_anchors = 50;
  const MemoryEstimate e = estimate_memory(p, o);
  ASSERT_LT(e.sparse, e.dense);
  // Dense is kept only within half the budget under auto.
  o.memory_limit = 2 * e.dense - 1;
  Strategy s = choose_strategy(p, o);
  EXPECT_EQ(s.support, Support::kSparse);
  EXPECT_TRUE(contains(s.support_reason, "memory limit")) << s.support_reason;
  EXPECT_EQ(s.memory_limit_bytes, o.memory_limit);
  EXPECT_EQ(s.estimated_peak_bytes, e.sparse);
  // An explicit dense support may use the whole budget...
  o.support = Support::kDense;
  o.memory_limit = e.dense;
  EXPECT_EQ(choose_strategy(p, o).support, Support::kDense);
  // ...but not more: a one-line error before anything is allocated.
  o.memory_limit = e.dense - 1;
  try {
    choose_strategy(p, o);
    ADD_FAILURE() << "the dense path was accepted beyond the budget";
  } catch (const Error& e2) {
    EXPECT_EQ(e2.code(), ErrorCode::kBadData);
    EXPECT_TRUE(contains(e2.what(), "--support sparse")) << e2.what();
  }
}

TEST(Strategy, ExactPrecisionAndThreadsFollowTheProblemSize) {
  Options o;
  Strategy tiny = choose_strategy(problem_of(50, 60), o);  // work 3.3e5 <= 1e6 and <= 1e7
  ASSERT_EQ(tiny.solver, SolverKind::kExact);
  EXPECT_EQ(tiny.precision, Precision::kF64);
  EXPECT_EQ(tiny.threads, 1);
  Strategy mid = choose_strategy(problem_of(150, 200), o);  // work 1.05e7: two of each
  ASSERT_EQ(mid.solver, SolverKind::kExact);
  EXPECT_EQ(mid.precision, Precision::kF32);
  EXPECT_EQ(mid.threads, 0);
  o.precision = Precision::kF64;
  EXPECT_EQ(choose_strategy(problem_of(150, 200), o).precision, Precision::kF64);
  // The sampled loop computes in the precision asked for.
  Options sampled;
  sampled.num_anchors = 50;
  EXPECT_EQ(choose_strategy(problem_of(50, 60), sampled).precision, Precision::kF32);
}

TEST(Strategy, LossIsExactWhereTheMatricesAreAtHandAndEstimatedElsewhere) {
  Options o;
  EXPECT_TRUE(choose_strategy(small_distances(20, 30), o).loss_exact);  // exact solver
  Options sampled;
  sampled.num_anchors = 20;
  sampled.memory_limit = std::size_t{1} << 40;
  Strategy s = choose_strategy(small_distances(20, 30), sampled);
  EXPECT_EQ(s.support, Support::kDense);
  EXPECT_TRUE(s.loss_exact) << s.loss_reason;  // full matrices, small work
  sampled.exact_loss_max_work = 1.0;
  EXPECT_FALSE(choose_strategy(small_distances(20, 30), sampled).loss_exact);
  sampled.exact_loss_max_work = 2e9;
  sampled.distance_mode = DistanceMode::kLandmark;
  EXPECT_FALSE(choose_strategy(problem_of(200, 300), sampled).loss_exact);  // landmark rows
  Options off;
  off.compute_gw_loss = false;
  EXPECT_FALSE(choose_strategy(small_distances(20, 30), off).loss_computed);
}

TEST(Strategy, SolveRunsTheStrategyItReports) {
  const Problem p = small_distances(40, 50);
  for (int variant = 0; variant < 3; ++variant) {
    Options o;
    if (variant == 1) o.num_anchors = 30;                                   // sampled dense
    if (variant == 2) o.support = Support::kSparse, o.support_size = 8;    // sampled sparse
    o.max_iterations.set_default(30);
    const Strategy chosen = choose_strategy(p, o);
    const Result r = solve(p, o);
    EXPECT_EQ(r.strategy.to_json(), chosen.to_json()) << variant;
    EXPECT_EQ(r.strategy.solver, variant == 0 ? SolverKind::kExact : SolverKind::kSampled);
    EXPECT_EQ(r.strategy.support, variant == 2 ? Support::kSparse : Support::kDense);
    // The exact solver's starts, or the sparse path's coarse plan(s); none for the dense loop.
    EXPECT_EQ(!r.starts.empty(), variant != 1);
    if (variant == 2 && !r.starts.empty()) {
      EXPECT_EQ(r.starts[0].name, "coarse");
    }
    EXPECT_EQ(r.plan_topk.values.empty(), variant != 2);  // the sparse path returns CSR
  }
}

TEST(Strategy, CoarseLevelOnCudaRunsExactlyOnTheCpuWhenTheCpuWouldSolveItExactly) {
  const Problem coarse = problem_of(60, 60);
  Options o;
  o.backend = Backend::kCuda;
  o.support = Support::kDense;
  o.num_anchors = 80;  // the caller's request for the whole solve: dropped for the coarse level
  const Strategy s = detail::coarse_level_strategy(coarse, o);
  EXPECT_EQ(o.backend, Backend::kCpu);
  EXPECT_EQ(s.backend, Backend::kCpu);
  EXPECT_EQ(s.solver, SolverKind::kExact);
  EXPECT_TRUE(contains(s.backend_reason, "coarse level")) << s.backend_reason;
  EXPECT_FALSE(o.num_anchors.given());
  // A coarse problem too large for the exact solver stays on the device.
  Options big;
  big.backend = Backend::kCuda;
  big.support = Support::kDense;
  big.exact_max_work = 1.0;
  const Strategy sampled = detail::coarse_level_strategy(coarse, big);
  EXPECT_EQ(big.backend, Backend::kCuda);
  EXPECT_EQ(sampled.solver, SolverKind::kSampled);
}

TEST(Strategy, ExplainNamesEveryChoiceAndCandidate) {
  Options o;
  const std::string text = choose_strategy(problem_of(300, 400), o).explain();
  for (const char* part : {"solver", "support", "backend", "precision", "threads", "loss", "memory",
                           "exact", "sampled dense", "sampled sparse"}) {
    EXPECT_TRUE(contains(text, part)) << part << "\n" << text;
  }
}

// Features whose pairwise squared distances reach their maximum in various places: a cloud, a
// cloud with far outliers on either side, duplicated rows (ties), one dimension.
std::vector<double> random_features(Rng& rng, Index n, int d, bool outliers) {
  std::vector<double> f(static_cast<std::size_t>(n) * d);
  for (double& x : f) x = rng.uniform() - 0.5;
  if (outliers) {
    for (int t = 0; t < 3; ++t) {
      const Index i = static_cast<Index>(rng.uniform() * n);
      for (int c = 0; c < d; ++c) f[static_cast<std::size_t>(i) * d + c] *= 8.0;
    }
  }
  if (n > 2) std::copy(f.begin(), f.begin() + d, f.begin() + d);  // a duplicated row
  return f;
}

// The oracle of feature_cost_scale: every pair, the same expanded form, plain loops.
double max_pair_cost(const std::vector<double>& f, Index n, const std::vector<double>& g, Index k,
                     int d) {
  double expected = 0.0;
  for (Index i = 0; i < n; ++i) {
    double fn = 0.0;
    for (int c = 0; c < d; ++c) fn += f[i * d + c] * f[i * d + c];
    for (Index j = 0; j < k; ++j) {
      double gn = 0.0;
      for (int c = 0; c < d; ++c) gn += g[j * d + c] * g[j * d + c];
      expected = std::max(expected, feature_sq_distance(&f[i * d], fn, &g[j * d], gn, d));
    }
  }
  return expected;
}

TEST(FeatureCost, ScaleEqualsTheMaximumOfTheDenseCostExactly) {
  Rng rng(40);
  for (int trial = 0; trial < 30; ++trial) {
    const Index n = 1 + static_cast<Index>(rng.uniform() * 120);
    const Index k = 1 + static_cast<Index>(rng.uniform() * 120);
    const int d = 1 + static_cast<int>(rng.uniform() * 12);
    const std::vector<double> f = random_features(rng, n, d, trial % 2 == 0);
    const std::vector<double> g = random_features(rng, k, d, trial % 3 == 0);
    EXPECT_EQ(feature_cost_scale(f, n, g, k, d), max_pair_cost(f, n, g, k, d)) << "trial " << trial;
  }
}

TEST(FeatureCost, ScaleWithBallPruningEqualsTheMaximumOnLargeGaussianFeatures) {
  // More targets than the 128 balls, in 30 dimensions with decaying variances (like PCA scores),
  // some rows far from the origin: the pruned search must still return the exact maximum.
  Rng rng(41);
  for (int trial = 0; trial < 3; ++trial) {
    const Index n = 1500 + 300 * trial, k = 1200 + 500 * trial;
    const int d = 30;
    std::vector<double> f(static_cast<std::size_t>(n) * d), g(static_cast<std::size_t>(k) * d);
    for (std::size_t e = 0; e < f.size(); ++e) f[e] = rng.normal() * 4.0 / (1 + static_cast<int>(e % d)) + 3.0 * trial;
    for (std::size_t e = 0; e < g.size(); ++e) g[e] = rng.normal() * 4.0 / (1 + static_cast<int>(e % d));
    EXPECT_EQ(feature_cost_scale(f, n, g, k, d), max_pair_cost(f, n, g, k, d)) << "trial " << trial;
  }
}

// Past its pair budget the search returns the largest value among the rows it scanned: never above
// the exact maximum, and (rows visited by decreasing bound) within a few percent of it on these
// Gaussian features; a budget that covers every pair gives the exact maximum.
TEST(FeatureCost, ScaleUnderAPairBudgetIsALowerBoundNearTheMaximum) {
  Rng rng(42);
  const Index n = 2000, k = 1800;
  const int d = 30;
  std::vector<double> f(static_cast<std::size_t>(n) * d), g(static_cast<std::size_t>(k) * d);
  for (std::size_t e = 0; e < f.size(); ++e) f[e] = rng.normal() * 4.0 / (1 + static_cast<int>(e % d));
  for (std::size_t e = 0; e < g.size(); ++e) g[e] = rng.normal() * 4.0 / (1 + static_cast<int>(e % d));
  const double exact = max_pair_cost(f, n, g, k, d);
  EXPECT_EQ(feature_cost_scale(f, n, g, k, d, std::int64_t{n} * k), exact);
  for (std::int64_t budget : {std::int64_t{1}, std::int64_t{20000}, std::int64_t{200000}}) {
    const double bounded = feature_cost_scale(f, n, g, k, d, budget);
    EXPECT_LE(bounded, exact) << budget;
    EXPECT_GE(bounded, 0.9 * exact) << budget;
  }
  EXPECT_EQ(feature_cost_scale(f, n, g, k, d), exact);
}

// A fused problem given by features solves as the same problem given by the cost matrix built
// from them: bit for bit on the dense paths (which build that matrix); on the sparse support
// (which evaluates only its entries, and gives its coarse level the cells' mean cost, computed
// from the features' cell moments instead of the matrix: the same in exact arithmetic) with the
// same matching on nearly every row and the same loss to rounding.
TEST(FeatureCost, FeaturesGiveTheSamePlanAsTheirCostMatrixOnEveryPath) {
  Rng rng(41);
  const Index n = 60, k = 70;
  const int d = 5;
  const std::vector<double> f = random_features(rng, n, d, true);
  const std::vector<double> g = random_features(rng, k, d, false);
  Problem by_cost = small_distances(n, k);
  by_cost.feature_cost = feature_cost_from_features(f, n, g, k, d);
  Problem by_features = small_distances(n, k);
  by_features.source_features = DenseMatrix<double>(n, d, f);
  by_features.target_features = DenseMatrix<double>(k, d, g);
  for (int variant = 0; variant < 3; ++variant) {
    Options o;
    o.fused_weight = 0.4;
    if (variant == 1) o.num_anchors = 30;
    if (variant == 2) o.support = Support::kSparse, o.support_size = 16;
    o.max_iterations.set_default(40);
    o.threads = 1;
    const Result a = solve(by_cost, o);
    const Result b = solve(by_features, o);
    EXPECT_EQ(a.strategy.support, b.strategy.support) << variant;
    if (variant < 2) {
      EXPECT_EQ(a.matching, b.matching) << variant;
      EXPECT_EQ(a.plan, b.plan) << variant;
      EXPECT_EQ(a.gw_loss, b.gw_loss) << variant;
      continue;
    }
    int same = 0;
    for (Index i = 0; i < n; ++i) same += a.matching[i] == b.matching[i];
    EXPECT_GE(same, 0.95 * n);
    EXPECT_NEAR(a.gw_loss, b.gw_loss, 1e-9 + 1e-3 * a.gw_loss);
  }
}

TEST(FeatureCost, AFusedProblemTooLargeForTheDensePathGoesSparseOrFailsNamingTheFeatureCost) {
  // 200,000 x 180,000 cells with 10 features each: the dense feature cost alone is 268 GiB.
  Problem p = problem_of(200000, 180000);
  Rng rng(42);
  p.source_features = DenseMatrix<double>(200000, 10, random_features(rng, 200000, 10, false));
  p.target_features = DenseMatrix<double>(180000, 10, random_features(rng, 180000, 10, false));
  Options o;
  o.fused_weight = 0.9;
  o.memory_limit = std::size_t{8} << 30;
  const Strategy s = choose_strategy(p, o);
  EXPECT_EQ(s.support, Support::kSparse) << s.support_reason;
  EXPECT_LE(s.estimated_peak_bytes, o.memory_limit);
  o.support = Support::kDense;
  try {
    choose_strategy(p, o);
    ADD_FAILURE() << "the dense path was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kBadData);
    EXPECT_TRUE(contains(e.what(), "feature cost")) << e.what();
    EXPECT_TRUE(contains(e.what(), "268")) << e.what();
    EXPECT_TRUE(contains(e.what(), "--support sparse")) << e.what();
  }
}

}  // namespace
}  // namespace gw
