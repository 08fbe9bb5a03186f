// Exact linear OT by LEMON's network simplex on a restricted arc set with pricing
// (linear_ot_reference.h): the oracle TransportSimplex is tested against. Test support only: it
// has a static library of its own (linear_ot/CMakeLists.txt), so the installed library does not
// need LEMON.
#include <lemon/network_simplex.h>
#include <lemon/static_graph.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>

#include "core/error.h"
#include "linear_ot/linear_ot_impl.h"
#include "linear_ot/linear_ot_reference.h"

namespace gw {

namespace {

constexpr int kMaxPricingRounds = 12;
// Reduced costs above -kPricingTolerance * max|C| count as optimal. It must exceed the rounding
// of the integer costs (2^-41 < 1e-12); a reduced cost that small changes the objective by less
// than the rounding of <C, T>. kCostBits = 40 keeps |potentials| <= nodes x 2^40 far below int64's
// range (LEMON's artificial arcs cost 2^62).
constexpr double kPricingTolerance = 1e-12;
static_assert(kPricingTolerance > 0.5 / static_cast<double>(std::int64_t{1} << detail::kCostBits));

using Graph = lemon::StaticDigraph;
using Simplex = lemon::NetworkSimplex<Graph, std::int64_t, std::int64_t>;

// The rows and columns with mass (integer_marginals leaves the others out) in compact ids:
// compact row r is row rows[r] of the n x k cost, compact column c is column cols[c].
template <typename CostT>
struct CompactProblem {
  std::span<const CostT> cost;
  Index k;
  const detail::IntegerMarginals& marginals;
  Index nr, nc;
  double cost_scale;  // max |C| over the compact block

  const CostT* row(Index r) const {
    return cost.data() + static_cast<std::size_t>(marginals.rows[r]) * k;
  }
};

void check_inputs(std::size_t cost_size,
                  Index n,
                  Index k,
                  std::span<const double> p,
                  std::span<const double> q,
                  const LinearOtHints& hints) {
  GW_CHECK(cost_size == static_cast<std::size_t>(n) * k,
           "solve_linear_ot: cost has " << cost_size << " entries for " << n << " x " << k);
  GW_CHECK(p.size() == static_cast<std::size_t>(n) && q.size() == static_cast<std::size_t>(k),
           "solve_linear_ot: marginals have " << p.size() << " and " << q.size() << " entries for "
                                              << n << " x " << k);
  GW_CHECK(hints.rows.size() == hints.cols.size(),
           "solve_linear_ot: hint rows and cols differ in length");
  GW_CHECK(hints.column_hint.empty() || hints.column_hint.size() == static_cast<std::size_t>(k),
           "solve_linear_ot: column_hint has " << hints.column_hint.size() << " entries for " << k
                                               << " columns");
}

// The first restricted problem's arcs per compact row (compact column ids, unsorted, possibly
// repeated): each row's `per_row` cheapest arcs in reduced cost under the hinted column duals,
// and each column's cheapest `candidates` rows.
template <typename CostT>
std::vector<std::vector<Index>> cheapest_arcs(const CompactProblem<CostT>& problem,
                                              const LinearOtHints& hints,
                                              int per_row) {
  const Index nr = problem.nr, nc = problem.nc;
  const std::vector<Index>& cols = problem.marginals.cols;
  std::vector<std::vector<Index>> arcs(nr);
  std::vector<double> shift(nc, 0.0);
  if (!hints.column_hint.empty()) {
    for (Index c = 0; c < nc; ++c) shift[c] = hints.column_hint[cols[c]];
  }
  const int per_col = std::max(1, std::min<int>(hints.candidates, nr));
  std::vector<std::vector<std::pair<double, Index>>> col_best(nc);
  std::vector<std::pair<double, Index>> order(nc);
  for (Index r = 0; r < nr; ++r) {
    const CostT* row = problem.row(r);
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
  return arcs;
}

// The hinted pairs that fall on rows and columns with mass.
void add_hinted_arcs(const LinearOtHints& hints,
                     Index n,
                     Index k,
                     const detail::IntegerMarginals& marginals,
                     std::vector<std::vector<Index>>& arcs) {
  std::vector<Index> col_slot(k, -1);
  for (Index c = 0; c < static_cast<Index>(marginals.cols.size()); ++c) {
    col_slot[marginals.cols[c]] = c;
  }
  std::vector<Index> row_slot(n, -1);
  for (Index r = 0; r < static_cast<Index>(marginals.rows.size()); ++r) {
    row_slot[marginals.rows[r]] = r;
  }
  for (std::size_t e = 0; e < hints.rows.size(); ++e) {
    GW_CHECK(hints.rows[e] >= 0 && hints.rows[e] < n && hints.cols[e] >= 0 && hints.cols[e] < k,
             "solve_linear_ot: extra pair (" << hints.rows[e] << ", " << hints.cols[e]
                                             << ") is outside " << n << " x " << k);
    const Index r = row_slot[hints.rows[e]], c = col_slot[hints.cols[e]];
    if (r >= 0 && c >= 0) arcs[r].push_back(c);
  }
}

// The north-west corner's arcs: a feasible basis, so the restricted problem always has a solution.
void add_north_west_corner(const detail::IntegerMarginals& marginals,
                           std::vector<std::vector<Index>>& arcs) {
  const std::vector<std::int64_t>& supply = marginals.supply;
  const std::vector<std::int64_t>& demand = marginals.demand;
  const Index nr = static_cast<Index>(marginals.rows.size());
  const Index nc = static_cast<Index>(marginals.cols.size());
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

// Sorts and deduplicates each row's arcs; the arcs as (compact row, nr + compact column) pairs,
// LEMON's node ids of the bipartite graph.
std::vector<std::pair<int, int>> arc_list_of(std::vector<std::vector<Index>>& arcs, Index nr) {
  std::vector<std::pair<int, int>> arc_list;
  for (Index r = 0; r < nr; ++r) {
    std::vector<Index>& list = arcs[r];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (Index c : list) arc_list.emplace_back(r, nr + c);
  }
  return arc_list;
}

// Solves the restricted problem on `arcs` exactly: `out` gets its plan (original ids) and
// `potential` the node potentials (rows, then columns) in units of C.
template <typename CostT>
void solve_restricted(const CompactProblem<CostT>& problem,
                      std::vector<std::vector<Index>>& arcs,
                      LinearOtPlan& out,
                      std::vector<double>& potential) {
  const Index nr = problem.nr, nc = problem.nc, k = problem.k;
  const std::vector<Index>& rows = problem.marginals.rows;
  const std::vector<Index>& cols = problem.marginals.cols;
  const std::vector<std::pair<int, int>> arc_list = arc_list_of(arcs, nr);
  Graph graph;
  graph.build(nr + nc, arc_list.begin(), arc_list.end());
  Graph::ArcMap<std::int64_t> arc_cost(graph);
  Graph::NodeMap<std::int64_t> node_supply(graph);
  for (std::size_t a = 0; a < arc_list.size(); ++a) {
    const auto [r, c] = arc_list[a];
    arc_cost[graph.arc(static_cast<int>(a))] = detail::integer_cost(
        static_cast<double>(problem.cost[static_cast<std::size_t>(rows[r]) * k + cols[c - nr]]),
        problem.cost_scale);
  }
  for (Index r = 0; r < nr; ++r) node_supply[graph.node(r)] = problem.marginals.supply[r];
  for (Index c = 0; c < nc; ++c) node_supply[graph.node(nr + c)] = -problem.marginals.demand[c];
  Simplex simplex(graph);
  simplex.costMap(arc_cost).supplyMap(node_supply);
  const Simplex::ProblemType status = simplex.run(Simplex::BLOCK_SEARCH);
  GW_CHECK_CODE(status == Simplex::OPTIMAL,
                ErrorCode::kInternal,
                "network simplex found no optimal solution of a feasible transport problem");
  out.arcs = static_cast<Offset>(arc_list.size());
  out.rows.clear();
  out.cols.clear();
  out.values.clear();
  out.cost = 0.0;
  for (std::size_t a = 0; a < arc_list.size(); ++a) {
    const std::int64_t flow = simplex.flow(graph.arc(static_cast<int>(a)));
    if (flow <= 0) continue;
    const Index i = rows[arc_list[a].first], j = cols[arc_list[a].second - nr];
    const double value = static_cast<double>(flow) * problem.marginals.unit;
    out.rows.push_back(i);
    out.cols.push_back(j);
    out.values.push_back(value);
    out.cost += value * static_cast<double>(problem.cost[static_cast<std::size_t>(i) * k + j]);
  }
  for (int v = 0; v < nr + nc; ++v) {
    potential[v] = detail::cost_from_integer(simplex.potential(graph.node(v)), problem.cost_scale);
  }
}

// Pricing: every arc's reduced cost under `potential`; each row gains its `per_row` most negative
// ones (below -tolerance). False when there is none: the restricted optimum is the dense one.
template <typename CostT>
bool add_priced_arcs(const CompactProblem<CostT>& problem,
                     const std::vector<double>& potential,
                     double tolerance,
                     int per_row,
                     std::vector<std::vector<Index>>& arcs) {
  const Index nr = problem.nr, nc = problem.nc;
  const std::vector<Index>& cols = problem.marginals.cols;
  bool improved = false;
  std::vector<std::pair<double, Index>> negative;
  for (Index r = 0; r < nr; ++r) {
    const CostT* row = problem.row(r);
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
  return improved;
}

template <typename CostT>
LinearOtPlan solve_impl(std::span<const CostT> cost,
                        Index n,
                        Index k,
                        std::span<const double> p,
                        std::span<const double> q,
                        const LinearOtHints& hints) {
  check_inputs(cost.size(), n, k, p, q, hints);
  const detail::IntegerMarginals marginals = detail::integer_marginals(p, q, "solve_linear_ot");
  const CompactProblem<CostT> problem{
      cost,
      k,
      marginals,
      static_cast<Index>(marginals.rows.size()),
      static_cast<Index>(marginals.cols.size()),
      detail::active_cost_scale(cost, k, marginals.rows, marginals.cols, "solve_linear_ot")};
  const double tolerance = kPricingTolerance * std::max(problem.cost_scale, 1e-300);
  const int per_row = std::max(1, std::min<int>(hints.candidates, problem.nc));

  std::vector<std::vector<Index>> arcs = cheapest_arcs(problem, hints, per_row);
  add_hinted_arcs(hints, n, k, marginals, arcs);
  add_north_west_corner(marginals, arcs);

  LinearOtPlan out;
  std::vector<double> potential(static_cast<std::size_t>(problem.nr) + problem.nc);
  bool dense = false;
  for (int round = 0;; ++round) {
    solve_restricted(problem, arcs, out, potential);
    out.rounds = round + 1;
    if (dense) break;
    if (!add_priced_arcs(problem, potential, tolerance, per_row, arcs)) break;
    if (round + 1 >= kMaxPricingRounds) {
      dense = true;  // pricing is slow to close the gap: the full problem settles it
      for (Index r = 0; r < problem.nr; ++r) {
        arcs[r].resize(problem.nc);
        std::iota(arcs[r].begin(), arcs[r].end(), 0);
      }
    }
  }
  out.column_potentials.assign(k, 0.0);
  for (Index c = 0; c < problem.nc; ++c) {
    out.column_potentials[marginals.cols[c]] = potential[problem.nr + c];
  }
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
