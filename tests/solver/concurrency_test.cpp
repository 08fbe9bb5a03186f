// Concurrent gw::solve calls on separate problems (solve.h promises that independent calls may run
// on several threads at once). Each thread's result must be bitwise the result of the same call
// made alone: same seed and thread count give the same plan, so any difference is interference
// between calls (shared scratch, a process-wide thread count, a shared random stream).
// scripts/sanitize.sh tsan also runs it under ThreadSanitizer.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "datagen/spiral.h"
#include "solver/solve.h"

namespace gw {
namespace {

struct Case {
  datagen::PointSet source, target;
  Problem problem;
  Options options;
};

Case make_case(Index n, Index k, std::uint64_t seed, DistanceMode mode) {
  Case c{datagen::spiral(n, seed), datagen::swiss_roll(k, seed), {}, {}};
  c.problem.source = Geometry::from_points(c.source.points, n, 2);
  c.problem.target = Geometry::from_points(c.target.points, k, 3);
  c.options.knn = 5;
  c.options.epsilon = 0.005;
  c.options.num_anchors = 40;
  c.options.max_iterations = 25;
  c.options.min_iterations = 25;
  c.options.distance_mode = mode;
  c.options.seed = seed;
  c.options.threads = 2;  // each call runs its own OpenMP team
  return c;
}

TEST(ConcurrentSolve, SeparateProblemsOnSeparateThreadsMatchTheirSerialRuns) {
  std::vector<Case> cases;
  cases.push_back(make_case(90, 110, 1, DistanceMode::kPrecomputed));
  cases.push_back(make_case(100, 80, 2, DistanceMode::kLandmark));
  cases.push_back(make_case(70, 95, 3, DistanceMode::kDijkstra));
  cases[1].options.initial_plan = InitialPlan::kProduct;
  cases[2].options.restarts = 2;
  cases[2].options.restart_iterations = 5;

  std::vector<Result> serial;
  for (const Case& c : cases) serial.push_back(solve(c.problem, c.options));

  std::vector<Result> parallel(cases.size());
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    workers.emplace_back([&, i] { parallel[i] = solve(cases[i].problem, cases[i].options); });
  }
  for (auto& worker : workers) worker.join();

  for (std::size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(serial[i].ok()) << serial[i].message;
    EXPECT_EQ(parallel[i].termination, serial[i].termination) << "case " << i;
    EXPECT_EQ(parallel[i].iterations, serial[i].iterations) << "case " << i;
    EXPECT_TRUE(parallel[i].plan == serial[i].plan) << "case " << i << ": plans differ";
    EXPECT_EQ(parallel[i].matching, serial[i].matching) << "case " << i;
  }
}

TEST(ConcurrentSolve, OneProblemSharedByManyThreadsGivesTheSamePlanEverywhere) {
  // A Problem is read-only during solve, so several calls may share one (and its distances).
  const Case c = make_case(80, 90, 4, DistanceMode::kLandmark);
  const Result alone = solve(c.problem, c.options);
  std::vector<Result> results(3);
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < results.size(); ++i) {
    workers.emplace_back([&, i] { results[i] = solve(c.problem, c.options); });
  }
  for (auto& worker : workers) worker.join();
  for (const Result& r : results) EXPECT_TRUE(r.plan == alone.plan);
}

}  // namespace
}  // namespace gw
