// Exact linear OT by LEMON's network simplex on a restricted arc set with pricing (exact.h).
#include <lemon/network_simplex.h>
#include <lemon/static_graph.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>

#include "core/error.h"
#include "solver/exact.h"

namespace gw {

namespace {

constexpr std::int64_t kMassTotal = std::int64_t{1} << 50;
constexpr int kMaxPricingRounds = 12;
// The network simplex runs on integer costs, round(C / max|C| x 2^kCostBits), i.e. in units of
// quantum = max|C| / 2^kCostBits. On double costs LEMON's potentials, updated incrementally pivot
// after pivot, drift by rounding until an arc's reduced cost changes sign back and forth and the
// degenerate pivots cycle for ever (found by the solve fuzzer on an 8 x 9 problem); in integers every pivot is exact and the
// strongly feasible tree rule guarantees termination. The vertex is optimal for the rounded costs,
// i.e. within n_arcs_in_plan x quantum / 2 of the optimum for C, and its potentials leave every
// reduced cost of C above -quantum / 2. 2^40 keeps |potentials| <= nodes x 2^40 far below int64's
// range (LEMON's artificial arcs cost 2^62).
constexpr int kCostBits = 40;
// Reduced costs above -kPricingTolerance * max|C| count as optimal. It must exceed the rounding
// of the integer costs (2^-41 < 1e-12); a reduced cost that small changes the objective by less
// than the rounding of <C, T>.
constexpr double kPricingTolerance = 1e-12;
static_assert(kPricingTolerance > 0.5 / static_cast<double>(std::int64_t{1} << kCostBits));

using Graph = lemon::StaticDigraph;
using Simplex = lemon::NetworkSimplex<Graph, std::int64_t, std::int64_t>;

// Integer masses of the positive entries of `mass` (indices `active`), summing to `total`.
std::vector<std::int64_t> integer_masses(std::span<const double> mass,
                                         const std::vector<Index>& active,
                                         double sum,
                                         std::int64_t total) {
  std::vector<std::int64_t> out(active.size());
  std::int64_t used = 0;
  std::size_t largest = 0;
  for (std::size_t a = 0; a < active.size(); ++a) {
    const double m = mass[active[a]];
    out[a] = static_cast<std::int64_t>(std::floor(m / sum * static_cast<double>(total)));
    used += out[a];
    if (m > mass[active[largest]]) largest = a;
  }
  out[largest] += total - used;  // the rounding remainder (< active.size() units) on the largest
  return out;
}

bool all_equal(std::span<const double> mass, const std::vector<Index>& active) {
  for (Index i : active) {
    if (std::abs(mass[i] - mass[active[0]]) > 1e-12 * mass[active[0]]) return false;
  }
  return true;
}

template <typename CostT>
LinearOtPlan solve_impl(std::span<const CostT> cost,
                        Index n,
                        Index k,
                        std::span<const double> p,
                        std::span<const double> q,
                        const LinearOtHints& hints) {
  const int candidates = hints.candidates;
  const std::span<const Index> extra_rows = hints.rows, extra_cols = hints.cols;
  GW_CHECK(cost.size() == static_cast<std::size_t>(n) * k,
           "solve_linear_ot: cost has " << cost.size() << " entries for " << n << " x " << k);
  GW_CHECK(p.size() == static_cast<std::size_t>(n) && q.size() == static_cast<std::size_t>(k),
           "solve_linear_ot: marginals have " << p.size() << " and " << q.size() << " entries for "
                                              << n << " x " << k);
  GW_CHECK(extra_rows.size() == extra_cols.size(),
           "solve_linear_ot: hint rows and cols differ in length");
  GW_CHECK(hints.column_hint.empty() || hints.column_hint.size() == static_cast<std::size_t>(k),
           "solve_linear_ot: column_hint has " << hints.column_hint.size() << " entries for " << k
                                               << " columns");
  std::vector<Index> rows, cols;
  double p_sum = 0.0, q_sum = 0.0;
  for (Index i = 0; i < n; ++i) {
    GW_CHECK(std::isfinite(p[i]) && p[i] >= 0.0, "solve_linear_ot: p[" << i << "] = " << p[i]);
    if (p[i] > 0.0) rows.push_back(i);
    p_sum += p[i];
  }
  for (Index j = 0; j < k; ++j) {
    GW_CHECK(std::isfinite(q[j]) && q[j] >= 0.0, "solve_linear_ot: q[" << j << "] = " << q[j]);
    if (q[j] > 0.0) cols.push_back(j);
    q_sum += q[j];
  }
  GW_CHECK(p_sum > 0.0 && std::abs(p_sum - q_sum) <= 1e-9 * p_sum,
           "solve_linear_ot: marginal sums differ (" << p_sum << " vs " << q_sum << ")");
  const Index nr = static_cast<Index>(rows.size()), nc = static_cast<Index>(cols.size());

  // Integer supplies: exact for uniform masses (the common case), else scaled to 2^50.
  std::vector<std::int64_t> supply, demand;
  std::int64_t total = kMassTotal;
  const std::int64_t lcm = std::lcm<std::int64_t>(nr, nc);
  if (all_equal(p, rows) && all_equal(q, cols) && lcm <= kMassTotal) {
    total = lcm;
    supply.assign(nr, lcm / nr);
    demand.assign(nc, lcm / nc);
  } else {
    supply = integer_masses(p, rows, p_sum, total);
    demand = integer_masses(q, cols, q_sum, total);
  }
  const double unit = p_sum / static_cast<double>(total);

  std::vector<Index> col_slot(k, -1);
  for (Index c = 0; c < nc; ++c) col_slot[cols[c]] = c;
  std::vector<Index> row_slot(n, -1);
  for (Index r = 0; r < nr; ++r) row_slot[rows[r]] = r;

  double cost_scale = 0.0;
  for (Index r = 0; r < nr; ++r) {
    const CostT* row = cost.data() + static_cast<std::size_t>(rows[r]) * k;
    for (Index c = 0; c < nc; ++c) {
      const double v = static_cast<double>(row[cols[c]]);
      GW_CHECK(std::isfinite(v),
               "solve_linear_ot: cost entry (" << rows[r] << ", " << cols[c] << ") is " << v);
      cost_scale = std::max(cost_scale, std::abs(v));
    }
  }
  const double tolerance = kPricingTolerance * std::max(cost_scale, 1e-300);
  // Integer cost = round(C / max|C| * 2^kCostBits): dividing by max|C| first keeps the ratio in
  // [-1, 1] however small max|C| is (C / quantum would overflow when the quantum underflows).
  const double units = static_cast<double>(std::int64_t{1} << kCostBits);
  auto integer_cost = [&](double c) -> std::int64_t {
    return cost_scale > 0.0 ? std::llround(c / cost_scale * units) : 0;
  };

  // Arcs per compact row (compact column ids), kept sorted and unique.
  std::vector<std::vector<Index>> arcs(nr);
  const int per_row = std::max(1, std::min<int>(candidates, nc));
  {
    // Each row's and each column's cheapest arcs (in reduced cost under the hinted column duals).
    std::vector<double> shift(nc, 0.0);
    if (!hints.column_hint.empty()) {
      for (Index c = 0; c < nc; ++c) shift[c] = hints.column_hint[cols[c]];
    }
    const int per_col = std::max(1, std::min<int>(candidates, nr));
    std::vector<std::vector<std::pair<double, Index>>> col_best(nc);
    std::vector<std::pair<double, Index>> order(nc);
    for (Index r = 0; r < nr; ++r) {
      const CostT* row = cost.data() + static_cast<std::size_t>(rows[r]) * k;
      for (Index c = 0; c < nc; ++c) {
        const double value = static_cast<double>(row[cols[c]]);
        order[c] = {value - shift[c], c};
        // A column keeps its per_col cheapest rows in a small max-heap.
        auto& best = col_best[c];
        if (static_cast<int>(best.size()) < per_col) {
          best.emplace_back(value, r);
          std::push_heap(best.begin(), best.end());
        } else if (value < best.front().first) {
          std::pop_heap(best.begin(), best.end());
          best.back() = {value, r};
          std::push_heap(best.begin(), best.end());
        }
      }
      std::nth_element(order.begin(), order.begin() + (per_row - 1), order.end());
      arcs[r].reserve(static_cast<std::size_t>(per_row) * 3);
      for (int e = 0; e < per_row; ++e) arcs[r].push_back(order[e].second);
    }
    for (Index c = 0; c < nc; ++c) {
      for (const auto& [value, r] : col_best[c]) arcs[r].push_back(c);
    }
  }
  for (std::size_t e = 0; e < extra_rows.size(); ++e) {
    GW_CHECK(extra_rows[e] >= 0 && extra_rows[e] < n && extra_cols[e] >= 0 && extra_cols[e] < k,
             "solve_linear_ot: extra pair (" << extra_rows[e] << ", " << extra_cols[e]
                                             << ") is outside " << n << " x " << k);
    const Index r = row_slot[extra_rows[e]], c = col_slot[extra_cols[e]];
    if (r >= 0 && c >= 0) arcs[r].push_back(c);
  }
  {
    // North-west corner: a feasible basis, so the restricted problem always has a solution.
    Index r = 0, c = 0;
    std::int64_t left_r = supply[0], left_c = demand[0];
    while (r < nr && c < nc) {
      arcs[r].push_back(c);
      const std::int64_t moved = std::min(left_r, left_c);
      left_r -= moved;
      left_c -= moved;
      if (left_r == 0 && r + 1 < nr) {
        left_r = supply[++r];
      } else if (left_c == 0 && c + 1 < nc) {
        left_c = demand[++c];
      } else if (left_r == 0 || left_c == 0) {
        break;
      }
    }
  }

  LinearOtPlan out;
  std::vector<std::pair<int, int>> arc_list;
  std::vector<double> potential(static_cast<std::size_t>(nr) + nc);
  bool dense = false;
  for (int round = 0;; ++round) {
    arc_list.clear();
    for (Index r = 0; r < nr; ++r) {
      std::vector<Index>& list = arcs[r];
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
      for (Index c : list) arc_list.emplace_back(r, nr + c);
    }
    Graph graph;
    graph.build(nr + nc, arc_list.begin(), arc_list.end());
    Graph::ArcMap<std::int64_t> arc_cost(graph);
    Graph::NodeMap<std::int64_t> node_supply(graph);
    for (std::size_t a = 0; a < arc_list.size(); ++a) {
      const auto [r, c] = arc_list[a];
      arc_cost[graph.arc(static_cast<int>(a))] = integer_cost(
          static_cast<double>(cost[static_cast<std::size_t>(rows[r]) * k + cols[c - nr]]));
    }
    for (Index r = 0; r < nr; ++r) node_supply[graph.node(r)] = supply[r];
    for (Index c = 0; c < nc; ++c) node_supply[graph.node(nr + c)] = -demand[c];
    Simplex simplex(graph);
    simplex.costMap(arc_cost).supplyMap(node_supply);
    const Simplex::ProblemType status = simplex.run(Simplex::BLOCK_SEARCH);
    GW_CHECK_CODE(status == Simplex::OPTIMAL,
                  ErrorCode::kInternal,
                  "network simplex found no optimal solution of a feasible transport problem");
    out.rounds = round + 1;
    out.arcs = static_cast<Offset>(arc_list.size());
    out.rows.clear();
    out.cols.clear();
    out.values.clear();
    out.cost = 0.0;
    for (std::size_t a = 0; a < arc_list.size(); ++a) {
      const std::int64_t flow = simplex.flow(graph.arc(static_cast<int>(a)));
      if (flow <= 0) continue;
      const Index i = rows[arc_list[a].first], j = cols[arc_list[a].second - nr];
      const double value = static_cast<double>(flow) * unit;
      out.rows.push_back(i);
      out.cols.push_back(j);
      out.values.push_back(value);
      out.cost += value * static_cast<double>(cost[static_cast<std::size_t>(i) * k + j]);
    }
    for (int v = 0; v < nr + nc; ++v) {
      potential[v] = static_cast<double>(simplex.potential(graph.node(v))) / units * cost_scale;
    }
    if (dense) break;

    // Pricing: every arc's reduced cost; each row keeps its `per_row` most negative ones.
    bool improved = false;
    std::vector<std::pair<double, Index>> negative;
    for (Index r = 0; r < nr; ++r) {
      const CostT* row = cost.data() + static_cast<std::size_t>(rows[r]) * k;
      negative.clear();
      const double pi_r = potential[r];
      for (Index c = 0; c < nc; ++c) {
        const double reduced = static_cast<double>(row[cols[c]]) + pi_r - potential[nr + c];
        if (reduced < -tolerance) negative.emplace_back(reduced, c);
      }
      if (negative.empty()) continue;
      improved = true;
      const std::size_t keep = std::min<std::size_t>(negative.size(), per_row);
      std::nth_element(negative.begin(), negative.begin() + (keep - 1), negative.end());
      for (std::size_t e = 0; e < keep; ++e) arcs[r].push_back(negative[e].second);
    }
    if (!improved) break;
    if (round + 1 >= kMaxPricingRounds) {
      dense = true;  // pricing is slow to close the gap: the full problem settles it
      for (Index r = 0; r < nr; ++r) {
        arcs[r].resize(nc);
        std::iota(arcs[r].begin(), arcs[r].end(), 0);
      }
    }
  }
  out.column_potentials.assign(k, 0.0);
  for (Index c = 0; c < nc; ++c) out.column_potentials[cols[c]] = potential[nr + c];
  return out;
}

}  // namespace

LinearOtPlan solve_linear_ot(std::span<const double> cost,
                             Index n,
                             Index k,
                             std::span<const double> p,
                             std::span<const double> q,
                             const LinearOtHints& hints) {
  return solve_impl(cost, n, k, p, q, hints);
}

LinearOtPlan solve_linear_ot(std::span<const float> cost,
                             Index n,
                             Index k,
                             std::span<const double> p,
                             std::span<const double> q,
                             const LinearOtHints& hints) {
  return solve_impl(cost, n, k, p, q, hints);
}

}  // namespace gw
