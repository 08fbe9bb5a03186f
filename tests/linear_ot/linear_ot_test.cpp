// Exact linear OT (linear_ot/transport_simplex.h): TransportSimplex against enumeration and
// against LEMON's network simplex (linear_ot/linear_ot_reference.h), cold, warm and crash-started,
// with dual certificates of optimality; and the LEMON oracle itself against enumeration.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "linear_ot/linear_ot_impl.h"
#include "linear_ot/linear_ot_reference.h"
#include "linear_ot/transport_simplex.h"
#include "solver/gw_oracles.h"

namespace gw {
namespace {

// Sums of a few hundred products of values in [0, 2]: a few ulps of the result each.
constexpr double kSumTolerance = 1e-12;

using test::best_assignment;
using test::random_metric;

void expect_feasible(const LinearOtPlan& plan,
                     const std::vector<double>& p,
                     const std::vector<double>& q,
                     const std::vector<double>& cost,
                     Index k) {
  std::vector<double> r(p.size(), 0.0), c(q.size(), 0.0);
  double total = 0.0;
  for (std::size_t e = 0; e < plan.values.size(); ++e) {
    EXPECT_GT(plan.values[e], 0.0);
    r[plan.rows[e]] += plan.values[e];
    c[plan.cols[e]] += plan.values[e];
    total += plan.values[e] * cost[plan.rows[e] * k + plan.cols[e]];
  }
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(r[i], p[i], kSumTolerance);
  for (std::size_t j = 0; j < q.size(); ++j) EXPECT_NEAR(c[j], q[j], kSumTolerance);
  EXPECT_NEAR(total, plan.cost, kSumTolerance);
  EXPECT_LE(plan.values.size(), p.size() + q.size() - 1);  // a basic solution
}

TEST(LinearOt, MatchesAssignmentByEnumerationIncludingTiesAndZeroMasses) {
  Rng rng(13);
  const Index n = 6;
  for (int trial = 0; trial < 30; ++trial) {
    // Zero-mass row/column in every third trial: a 7 x 7 problem whose 6 x 6 active block is an
    // assignment problem.
    const bool zero_mass = trial % 3 == 2;
    const Index rows_n = zero_mass ? n + 1 : n;
    std::vector<double> cost(static_cast<std::size_t>(rows_n) * rows_n);
    for (double& c : cost) {
      // Odd trials: costs in {0, 1, 2}, many ties and degenerate optima.
      c = trial % 2 == 1 ? std::floor(rng.uniform() * 3.0) : rng.uniform();
    }
    std::vector<double> p(rows_n, 1.0 / n), q(rows_n, 1.0 / n);
    std::vector<Index> active(rows_n);
    std::iota(active.begin(), active.end(), 0);
    if (zero_mass) {
      const Index zr = trial % rows_n, zc = (trial * 5) % rows_n;
      p[zr] = 0.0;
      q[zc] = 0.0;
      active.erase(active.begin() + zr);
      // Make the zero-mass column unattractive to nobody: give it the cheapest costs, which a
      // solver that ignored its zero mass would use.
      for (Index i = 0; i < rows_n; ++i) cost[i * rows_n + zc] = -1.0;
      std::vector<double> reduced;
      std::vector<Index> keep_cols;
      for (Index j = 0; j < rows_n; ++j)
        if (j != zc) keep_cols.push_back(j);
      reduced.resize(static_cast<std::size_t>(rows_n) * n);
      for (Index i = 0; i < rows_n; ++i)
        for (Index c = 0; c < n; ++c) reduced[i * n + c] = cost[i * rows_n + keep_cols[c]];
      const double expected = best_assignment(reduced, active, n);
      for (int candidates : {1, 8}) {
        LinearOtHints hints;
        hints.candidates = candidates;
        const LinearOtPlan plan =
            solve_linear_ot(std::span<const double>(cost), rows_n, rows_n, p, q, hints);
        EXPECT_NEAR(plan.cost, expected, kSumTolerance) << "trial " << trial;
        expect_feasible(plan, p, q, cost, rows_n);
      }
      continue;
    }
    const double expected = best_assignment(cost, active, n);
    // candidates = 1 starts from a tiny restricted problem: the pricing rounds must find the rest.
    for (int candidates : {1, 8}) {
      LinearOtHints hints;
      hints.candidates = candidates;
      const LinearOtPlan plan = solve_linear_ot(std::span<const double>(cost), n, n, p, q, hints);
      EXPECT_NEAR(plan.cost, expected, kSumTolerance) << "trial " << trial;
      expect_feasible(plan, p, q, cost, n);
      const std::vector<float> cost32(cost.begin(), cost.end());
      const LinearOtPlan plan32 =
          solve_linear_ot(std::span<const float>(cost32), n, n, p, q, hints);
      double expected32 = 0.0;  // the float costs are the same small integers / close values
      for (std::size_t e = 0; e < plan32.values.size(); ++e)
        expected32 += plan32.values[e] * cost[plan32.rows[e] * n + plan32.cols[e]];
      EXPECT_NEAR(expected32, expected, 1e-6) << "float32 cost, trial " << trial;
    }
  }
}

TEST(LinearOt, NonUniformMassesMatchTheDenseProblem) {
  Rng rng(14);
  const Index n = 9, k = 12;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> cost(static_cast<std::size_t>(n) * k);
    for (double& c : cost) c = rng.uniform();
    std::vector<double> p(n), q(k);
    double ps = 0.0, qs = 0.0;
    for (double& x : p) ps += (x = rng.uniform() + 0.1);
    for (double& x : q) qs += (x = rng.uniform() + 0.1);
    for (double& x : p) x /= ps;
    for (double& x : q) x /= qs;
    // The restricted start with one candidate per row against every arc from the start (the
    // candidates cover all columns, so the first restricted problem is the dense one).
    LinearOtHints narrow, dense;
    narrow.candidates = 1;
    dense.candidates = k;
    const LinearOtPlan a = solve_linear_ot(std::span<const double>(cost), n, k, p, q, narrow);
    const LinearOtPlan b = solve_linear_ot(std::span<const double>(cost), n, k, p, q, dense);
    EXPECT_NEAR(a.cost, b.cost, 1e-9) << "trial " << trial;  // 2^-50 mass scaling per entry
    expect_feasible(a, p, q, cost, k);
  }
}

// The 8 x 9 linearized cost (uniform masses, 8 candidates per row) on which the network simplex,
// then run on double costs, cycled through degenerate pivots for ever (found by the solve fuzzer,
// tests/fuzz/regressions/solve/network_simplex_cycles_on_double_costs): near-ties a few ulps apart
// made rounded potentials flip reduced-cost signs. It must finish, and with an optimal vertex:
// row potentials u_i = max_j (v_j - C_ij) from the returned column potentials v make every reduced
// cost C_ij + u_i - v_j >= 0, so zero reduced cost on every plan entry certifies optimality.
TEST(LinearOt, NearTiedCostsThatCycledOnDoublesGiveACertifiedOptimum) {
  const Index n = 8, k = 9;
  const std::vector<double> cost = {
      0x1.7217236d6a9f5p-3, 0x1.8842dff49d2c9p+0, 0x1.8842dff49d2c9p+0, 0x1.729847ac91ce2p-3,
      0x1.8842dff49d2c9p+0, 0x1.85f66d2208db8p+0, 0x1.8842dff49d2c9p+0, 0x1.8842dff49d2c9p+0,
      0x1.8842dff49d2c9p+0, 0x1.c961c220cb807p-2, 0x1.25fc1ac716f06p+0, 0x1.25fbfa86d6b02p+0,
      0x1.c9e53203effcp-2,  0x1.25fbfa86d6b02p+0, 0x1.24282e3c94165p+0, 0x1.25fbfa86d6b02p+0,
      0x1.25fbfa86d6b02p+0, 0x1.25fbfa86d6b02p+0, 0x1.5c5ff9d47ce73p+0, 0x1.1c8f9d9e22c99p-2,
      0x1.1c90c7f0751bep-2, 0x1.5cc967dcd81e2p+0, 0x1.1c8b0c8509b07p-2, 0x1.1a969648e52cbp-2,
      0x1.1c8d6129ae551p-2, 0x1.1c8c0676fba26p-2, 0x1.1c8d30c94df4bp-2, 0x1.5c5ff3c870db2p+0,
      0x1.1c8f856df2996p-2, 0x1.1c90afc044ebbp-2, 0x1.5cc961d0cc121p+0, 0x1.1c8af454d9804p-2,
      0x1.1a967e18b4fc8p-2, 0x1.1c8d48f97e24ep-2, 0x1.1c8e734bd0774p-2, 0x1.1c8f9d9e22c99p-2,
      0x1.fad3143621f7ep-1, 0x1.2f5de45ae4e8bp-2, 0x1.2f56fe9d272afp-2, 0x1.fb88011028ba6p-1,
      0x1.2f595341cbcf9p-2, 0x1.2c331ad22058ep-2, 0x1.2f5ba7e670744p-2, 0x1.2f5624eb75794p-2,
      0x1.2f5624eb75794p-2, 0x1.a5a4e0949159ap-2, 0x1.6a056d4e0c37fp+0, 0x1.6a056d4e0c37fp+0,
      0x1.a5f1bec3e90bbp-2, 0x1.6a056d4e0c37fp+0, 0x1.67f7a12ff7a17p+0, 0x1.6a056d4e0c37fp+0,
      0x1.6a056d4e0c37fp+0, 0x1.6a056d4e0c38p+0,  0x1.5c5ee9b65ec91p+0, 0x1.1c8a32d357fecp-2,
      0x1.1c8a32d357fecp-2, 0x1.5cc77800fc424p+0, 0x1.1c8a32d357fecp-2, 0x1.1a949244e128bp-2,
      0x1.1c8a32d357fecp-2, 0x1.1c8a32d357fecp-2, 0x1.1c8a32d357fecp-2, 0x1.5c5ee9b65ec91p+0,
      0x1.1c8a32d357fecp-2, 0x1.1c8a32d357fecp-2, 0x1.5cc77800fc424p+0, 0x1.1c8a32d357fecp-2,
      0x1.1a949244e128bp-2, 0x1.1c8a32d357fecp-2, 0x1.1c8a32d357fecp-2, 0x1.1c8a32d357fecp-2,
  };
  const std::vector<double> p(n, 1.0 / n), q(k, 1.0 / k);
  LinearOtHints hints;
  hints.candidates = 8;
  // A cycling solver would hang the suite: give it a minute, then fail the process.
  auto pending = std::async(std::launch::async, [&] {
    return solve_linear_ot(std::span<const double>(cost), n, k, p, q, hints);
  });
  if (pending.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "solve_linear_ot did not finish in 60 s (cycling network simplex)\n");
    std::_Exit(1);
  }
  const LinearOtPlan plan = pending.get();
  expect_feasible(plan, p, q, cost, k);
  ASSERT_EQ(plan.column_potentials.size(), static_cast<std::size_t>(k));
  const double scale = *std::max_element(cost.begin(), cost.end());
  std::vector<double> u(n, -std::numeric_limits<double>::infinity());
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < k; ++j)
      u[i] = std::max(u[i], plan.column_potentials[j] - cost[i * k + j]);
  for (std::size_t e = 0; e < plan.values.size(); ++e) {
    const Index i = plan.rows[e], j = plan.cols[e];
    EXPECT_NEAR(cost[i * k + j] + u[i] - plan.column_potentials[j], 0.0, 1e-11 * scale)
        << "plan entry (" << i << ", " << j << ") has a positive reduced cost: not optimal";
  }
}

// Subnormal costs (max|C| ~ 1e-316, found by the solve fuzzer: tests/fuzz/regressions/solve/
// network_simplex_subnormal_costs_overflow): the integer costs must come out the same as for the
// same problem at unit scale, not as C / quantum with an underflowed quantum (which overflowed
// int64 inside the simplex). The plans must be identical; the costs scale.
TEST(LinearOt, SubnormalCostsGiveThePlanOfTheSameProblemAtUnitScale) {
  Rng rng(15);
  const Index n = 5, k = 6;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> cost(static_cast<std::size_t>(n) * k), tiny(cost.size());
    const double factor = trial % 2 == 0 ? 1e-310 : 4e-320;
    for (std::size_t e = 0; e < cost.size(); ++e) {
      cost[e] = 0.25 + std::floor(rng.uniform() * 64.0) / 64.0;  // exact in a subnormal's bits
      tiny[e] = cost[e] * factor;
    }
    const std::vector<double> p(n, 1.0 / n), q(k, 1.0 / k);
    const LinearOtPlan unit = solve_linear_ot(std::span<const double>(cost), n, k, p, q);
    const LinearOtPlan small = solve_linear_ot(std::span<const double>(tiny), n, k, p, q);
    expect_feasible(small, p, q, tiny, k);
    EXPECT_EQ(small.rows, unit.rows) << "trial " << trial;
    EXPECT_EQ(small.cols, unit.cols) << "trial " << trial;
    EXPECT_EQ(small.values, unit.values) << "trial " << trial;
  }
}

// Zero reduced cost on every plan entry under row duals u_i = max_j (v_j - C_ij) built from the
// returned column duals v (which make every reduced cost C_ij + u_i - v_j >= 0) certifies that
// the plan is optimal. Rows or columns of zero mass are skipped (the solvers leave them out).
void expect_certified(const LinearOtPlan& plan,
                      const std::vector<double>& p,
                      const std::vector<double>& q,
                      const std::vector<double>& cost,
                      double tolerance) {
  const Index n = static_cast<Index>(p.size()), k = static_cast<Index>(q.size());
  ASSERT_EQ(plan.column_potentials.size(), static_cast<std::size_t>(k));
  std::vector<double> u(n, -std::numeric_limits<double>::infinity());
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < k; ++j)
      if (q[j] > 0.0) u[i] = std::max(u[i], plan.column_potentials[j] - cost[i * k + j]);
  for (std::size_t e = 0; e < plan.values.size(); ++e) {
    const Index i = plan.rows[e], j = plan.cols[e];
    EXPECT_NEAR(cost[i * k + j] + u[i] - plan.column_potentials[j], 0.0, tolerance)
        << "plan entry (" << i << ", " << j << ") has a positive reduced cost: not optimal";
  }
}

// A random transport problem for the TransportSimplex tests: kind 0 uniform masses and uniform
// costs, 1 costs in {0, 1, 2} (ties, degenerate pivots), 2 random masses with some zeros.
struct TransportCase {
  Index n, k;
  std::vector<double> cost, p, q;
};
TransportCase random_transport(Rng& rng, int kind, double max_side = 30.0) {
  TransportCase t;
  t.n = 1 + static_cast<Index>(rng.uniform() * max_side);
  t.k = 1 + static_cast<Index>(rng.uniform() * max_side);
  t.cost.resize(static_cast<std::size_t>(t.n) * t.k);
  for (double& c : t.cost) c = kind == 1 ? std::floor(rng.uniform() * 3.0) : rng.uniform() - 0.3;
  t.p.assign(t.n, 1.0 / t.n);
  t.q.assign(t.k, 1.0 / t.k);
  if (kind == 2) {
    double ps = 0.0, qs = 0.0;
    for (double& x : t.p) ps += (x = rng.uniform() < 0.2 ? 0.0 : rng.uniform());
    for (double& x : t.q) qs += (x = rng.uniform() < 0.2 ? 0.0 : rng.uniform());
    t.p[0] += 0.5;  // a positive total on both sides
    t.q[t.k - 1] += 0.5;
    ps += 0.5;
    qs += 0.5;
    for (double& x : t.p) x /= ps;
    for (double& x : t.q) x /= qs;
  }
  return t;
}

TEST(TransportSimplex, MatchesAssignmentByEnumerationIncludingTies) {
  Rng rng(16);
  const Index n = 6;
  std::vector<Index> rows(n);
  std::iota(rows.begin(), rows.end(), 0);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<double> cost(static_cast<std::size_t>(n) * n);
    for (double& c : cost) c = trial % 2 == 1 ? std::floor(rng.uniform() * 3.0) : rng.uniform();
    const std::vector<double> p(n, 1.0 / n);
    TransportSimplex simplex(p, p);
    const LinearOtPlan plan = simplex.solve(std::span<const double>(cost));
    EXPECT_NEAR(plan.cost, best_assignment(cost, rows, n), kSumTolerance) << "trial " << trial;
    expect_feasible(plan, p, p, cost, n);
    expect_certified(plan, p, p, cost, 1e-11);
  }
}

// Against LEMON's network simplex (solve_linear_ot) on 300 random problems of three kinds, each
// solved cold by a fresh object and warm by one object that solved the previous problems of the
// same marginals with other costs: the same optimal cost, a feasible basic plan, and a dual
// certificate. A wrong leaving-arc rule, potential update or tree relink fails these (or hangs).
// Up to 30 x 30 the pricing block (at least 1,024 arcs) covers every arc (Dantzig's rule); the
// larger problems, up to 120 x 120, price over several blocks and wrap around the arc list.
TEST(TransportSimplex, ColdAndWarmSolvesMatchLemonIncludingTiesAndZeroMasses) {
  Rng rng(17);
  for (int trial = 0; trial < 360; ++trial) {
    const int kind = trial % 3;
    TransportCase t = random_transport(rng, kind, trial < 300 ? 30.0 : 120.0);
    const std::span<const double> cost(t.cost);
    const LinearOtPlan reference = solve_linear_ot(cost, t.n, t.k, t.p, t.q);
    TransportSimplex cold(t.p, t.q);
    const LinearOtPlan a = cold.solve(cost);
    // Warm: three unrelated costs first, then this one.
    TransportSimplex warm(t.p, t.q);
    for (int other = 0; other < 3; ++other) {
      std::vector<double> c(t.cost.size());
      for (double& x : c) x = kind == 1 ? std::floor(rng.uniform() * 3.0) : rng.uniform();
      warm.solve(std::span<const double>(c));
    }
    const LinearOtPlan b = warm.solve(cost);
    for (const LinearOtPlan* plan : {&a, &b}) {
      EXPECT_NEAR(plan->cost, reference.cost, 1e-12) << "trial " << trial << " kind " << kind;
      expect_feasible(*plan, t.p, t.q, t.cost, t.k);
      expect_certified(*plan, t.p, t.q, t.cost, 1e-11);
    }
  }
}

// The use it is built for: a sequence of slowly changing costs (C + s E, s growing) on the same
// marginals. Warm solves must give the cold optimum each time, and, starting next to it, need
// fewer pivots in total than cold solves (a warm start that silently restarted would not).
TEST(TransportSimplex, WarmStartsOnSlowlyChangingCostsGiveTheColdOptimumInFewerPivots) {
  Rng rng(18);
  const Index n = 40, k = 50;
  std::vector<double> base(static_cast<std::size_t>(n) * k), drift(base.size());
  for (double& x : base) x = rng.uniform();
  for (double& x : drift) x = rng.uniform() - 0.5;
  const std::vector<double> p(n, 1.0 / n), q(k, 1.0 / k);
  TransportSimplex warm(p, q);
  std::int64_t warm_pivots = 0, cold_pivots = 0;
  for (int step = 0; step < 10; ++step) {
    std::vector<double> cost(base.size());
    for (std::size_t e = 0; e < cost.size(); ++e) cost[e] = base[e] + 0.02 * step * drift[e];
    const LinearOtPlan w = warm.solve(std::span<const double>(cost));
    warm_pivots += step > 0 ? warm.pivots() : 0;
    TransportSimplex cold(p, q);
    const LinearOtPlan c = cold.solve(std::span<const double>(cost));
    cold_pivots += step > 0 ? cold.pivots() : 0;
    EXPECT_NEAR(w.cost, c.cost, 1e-12) << "step " << step;
    expect_feasible(w, p, q, cost, k);
    expect_certified(w, p, q, cost, 1e-11);
  }
  EXPECT_LT(warm_pivots, cold_pivots);
}

// crash(plan) replaces the basis by one built from a plan's largest entries. Whatever the plan (a
// random one, all zeros, one with NaNs, the optimum itself), the basis must be feasible and
// strongly feasible: the solve from it gives LEMON's optimal cost, a feasible plan and a dual
// certificate on the three kinds of random problems (ties and zero masses included). A basis
// that broke a marginal fails feasibility; one that was not strongly feasible can cycle (hang).
TEST(TransportSimplex, CrashBasesFromAnyPlanGiveLemonsOptimum) {
  Rng rng(41);
  for (int trial = 0; trial < 300; ++trial) {
    const int kind = trial % 3;
    TransportCase t = random_transport(rng, kind);
    const std::span<const double> cost(t.cost);
    const LinearOtPlan reference = solve_linear_ot(cost, t.n, t.k, t.p, t.q);
    std::vector<double> plan(t.cost.size(), 0.0);
    switch ((trial / 3) % 4) {
      case 0:
        for (double& x : plan) x = rng.uniform();
        break;
      case 1:
        break;  // all zeros: the north-west corner alone
      case 2:
        for (double& x : plan) x = rng.uniform() < 0.1 ? std::nan("") : rng.uniform();
        break;
      default:
        for (std::size_t e = 0; e < reference.values.size(); ++e)
          plan[static_cast<std::size_t>(reference.rows[e]) * t.k + reference.cols[e]] +=
              reference.values[e];
    }
    TransportSimplex simplex(t.p, t.q);
    EXPECT_FALSE(simplex.has_basis());
    simplex.crash(std::span<const double>(plan));
    EXPECT_TRUE(simplex.has_basis());
    const LinearOtPlan a = simplex.solve(cost);
    EXPECT_NEAR(a.cost, reference.cost, 1e-12) << "trial " << trial << " kind " << kind;
    expect_feasible(a, t.p, t.q, t.cost, t.k);
    expect_certified(a, t.p, t.q, t.cost, 1e-11);
    // The float overload builds the same kind of basis.
    std::vector<float> plan32(plan.begin(), plan.end());
    TransportSimplex other(t.p, t.q);
    other.crash(std::span<const float>(plan32));
    EXPECT_NEAR(other.solve(cost).cost, reference.cost, 1e-12) << "trial " << trial;
  }
  TransportSimplex simplex(std::vector<double>{0.5, 0.5}, std::vector<double>{1.0});
  EXPECT_THROW(simplex.crash(std::span<const double>(std::vector<double>(3, 0.0))), Error);
}

// What crash is for: the first solve of a sequence, given a plan near its optimum (here the
// optimum of a slightly different cost, as conditional gradient's plan is near the next vertex).
// It must take at most two thirds of the artificial start's pivots (measured: about half, 2,475
// against 4,732 over these ten solves) and half of the north-west corner's (7,781), which is what
// a crash that ignored the plan would build. (Even the optimum itself as the plan needs 2,254:
// largest-first greedy moves min(supply, demand), not the plan's own amounts, and its forest is
// joined through artificial arcs.)
TEST(TransportSimplex, CrashFromANearbyPlanNeedsFewerPivotsThanTheArtificialStartOrTheCorner) {
  Rng rng(42);
  const Index n = 60, k = 70;
  const std::vector<double> p(n, 1.0 / n), q(k, 1.0 / k);
  std::int64_t crash_pivots = 0, cold_pivots = 0, corner_pivots = 0;
  for (int trial = 0; trial < 10; ++trial) {
    std::vector<double> cost(static_cast<std::size_t>(n) * k), nearby(cost.size());
    for (std::size_t e = 0; e < cost.size(); ++e) {
      cost[e] = rng.uniform();
      nearby[e] = cost[e] + 0.01 * (rng.uniform() - 0.5);
    }
    const LinearOtPlan near_optimum = solve_linear_ot(std::span<const double>(nearby), n, k, p, q);
    std::vector<double> plan(cost.size(), 0.0);
    for (std::size_t e = 0; e < near_optimum.values.size(); ++e)
      plan[static_cast<std::size_t>(near_optimum.rows[e]) * k + near_optimum.cols[e]] +=
          near_optimum.values[e];
    TransportSimplex crashed(p, q), cold(p, q), corner(p, q);
    crashed.crash(std::span<const double>(plan));
    corner.crash(std::span<const double>(std::vector<double>(cost.size(), 0.0)));
    const LinearOtPlan a = crashed.solve(std::span<const double>(cost));
    const LinearOtPlan b = cold.solve(std::span<const double>(cost));
    const LinearOtPlan c = corner.solve(std::span<const double>(cost));
    EXPECT_NEAR(a.cost, b.cost, 1e-12);
    EXPECT_NEAR(c.cost, b.cost, 1e-12);
    crash_pivots += crashed.pivots();
    cold_pivots += cold.pivots();
    corner_pivots += corner.pivots();
  }
  std::printf("pivots over 10 solves: crash %lld, artificial start %lld, north-west corner %lld\n",
              static_cast<long long>(crash_pivots),
              static_cast<long long>(cold_pivots),
              static_cast<long long>(corner_pivots));
  EXPECT_LT(crash_pivots * 3, cold_pivots * 2)
      << "cold " << cold_pivots << ", corner " << corner_pivots;
  EXPECT_LT(crash_pivots * 2, corner_pivots) << "cold " << cold_pivots;
}

// Masses below the integer unit (2^-50 of the total) beside ordinary ones: each positive mass keeps
// at least one unit (rounded to zero, a column's starting artificial arc pointed away from the root
// with zero flow, so the tree was not strongly feasible), the units still sum to the same total on
// both sides, and both simplex codes give a feasible plan with a dual certificate and LEMON's cost.
TEST(TransportSimplex, MassesBelowTheIntegerUnitKeepAUnitAndACertifiedOptimum) {
  Rng rng(31);
  for (int trial = 0; trial < 40; ++trial) {
    const Index n = 2 + trial % 7, k = 3 + trial % 5;
    std::vector<double> p(n), q(k);
    double ps = 0.0, tiny = 0.0;
    for (double& x : p) ps += (x = 0.2 + rng.uniform());
    for (double& x : p) x /= ps;
    for (Index j = 0; j + 1 < k; ++j) tiny += (q[j] = 1e-17 * (1.0 + rng.uniform()));
    q[k - 1] = 1.0 - tiny;  // rounds to 1: the sums agree
    const detail::IntegerMarginals m = detail::integer_marginals(p, q, "test");
    ASSERT_EQ(m.cols.size(), static_cast<std::size_t>(k));
    for (std::int64_t d : m.demand) EXPECT_GE(d, 1) << "trial " << trial;
    EXPECT_EQ(std::accumulate(m.demand.begin(), m.demand.end(), std::int64_t{0}),
              std::accumulate(m.supply.begin(), m.supply.end(), std::int64_t{0}));
    std::vector<double> cost(static_cast<std::size_t>(n) * k);
    for (double& c : cost) c = trial % 2 ? std::floor(rng.uniform() * 3.0) : rng.uniform();
    const LinearOtPlan reference = solve_linear_ot(std::span<const double>(cost), n, k, p, q);
    const LinearOtPlan plan = TransportSimplex(p, q).solve(std::span<const double>(cost));
    EXPECT_NEAR(plan.cost, reference.cost, 1e-12) << "trial " << trial;
    expect_feasible(plan, p, q, cost, k);
    expect_certified(plan, p, q, cost, 1e-11);
  }
}

TEST(TransportSimplex, BadInputIsAnInvalidArgument) {
  const std::vector<double> p = {0.5, 0.5}, q = {0.3, 0.3};
  EXPECT_THROW(TransportSimplex(p, q), Error);  // sums differ
  const std::vector<double> r = {0.5, 0.5};
  TransportSimplex simplex(p, r);
  const std::vector<double> short_cost = {1.0, 2.0, 3.0};
  EXPECT_THROW(simplex.solve(std::span<const double>(short_cost)), Error);
  const std::vector<double> nan_cost = {1.0, std::nan(""), 3.0, 4.0};
  EXPECT_THROW(simplex.solve(std::span<const double>(nan_cost)), Error);
}


}  // namespace
}  // namespace gw
