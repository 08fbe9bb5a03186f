// TransportSimplex (transport_simplex.h): a primal network simplex for the transport problem whose basis
// survives from one cost to the next.
//
// Why our own simplex next to LEMON's: conditional gradient solves a sequence of transport
// problems with the same marginals and slowly changing costs. A spanning-tree basis and its flows
// depend only on the marginals, so the last optimal tree is a feasible (and usually nearly
// optimal) start for the next cost; LEMON's NetworkSimplex has no way to take one and restarts
// from artificial arcs every time (solve_linear_ot works around it with restricted arc sets).
//
// The network: row nodes 0 .. nr-1 (supplies), column nodes nr .. nr+nc-1 (demands), a root
// nr+nc, the nr x nc transport arcs row -> column (uncapacitated), and one artificial arc per node
// (row -> root, root -> column) of cost `artificial`, larger than any transport cost. The first
// basis is the artificial star, which is strongly feasible (every arc carries positive flow).
// Every non-root node stores the tree arc to its parent: the arc (transport id r * nc + c, or -1
// for the artificial arc, whose other end is always the root: the root is never inside a pivot's
// stem), whether it points up (node -> parent), and its flow. Arcs outside the tree carry no flow.
//
// The tree's shape is a preorder array: order[] lists the nodes so that every subtree is one
// contiguous range, order[pos[v]] = v and size[v] is the size of v's subtree, so "x is an ancestor
// of y" is one range test and a subtree is a slice. A pivot re-hangs the subtree below the leaving
// arc: it rebuilds that slice's order for the new root from at most two pieces per stem node,
// moves the slice next to its new parent (a memmove of the nodes in between) and rewrites pos[] of
// the nodes that moved; the potential shift is a loop over the slice. Apart from the walks up the
// cycle's two paths, every step is a loop over contiguous memory with independent iterations. The
// child lists this replaced walked the moved subtree by pointer chasing at ~30 cycles per node (a
// branch mispredicted per leaf): on the 100-200 point pairs of `gwalign pairwise`, where a pivot
// moves ~90 of ~280 nodes, the pivots were a fifth of the run (bench/RESULTS.md, issue 14).
//
// Potentials: reduced cost of u -> v is c + pi_u - pi_v, zero on tree arcs, pi_root = 0. A pivot
// shifts the potentials of the moved subtree by one constant (the entering arc's reduced cost).
// Everything is int64: costs are round(C / max|C| x 2^40) (linear_ot_impl.h), |pi| <= artificial
// + nodes x 2^40 < 2^62 for at most 2^20 nodes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <utility>

#include "core/error.h"
#include "linear_ot/transport_simplex.h"
#include "linear_ot/linear_ot_impl.h"
#include "linear_ot/simplex_kernels_impl.h"

namespace gw {

namespace {
constexpr int kMaxNodes = 1 << 20;
constexpr std::int64_t kArtificialArc = -1;
}  // namespace

struct TransportSimplex::State {
  Index n = 0, k = 0;
  detail::IntegerMarginals m;
  int nr = 0, nc = 0, root = 0;
  std::vector<int> parent, order, pos, size;
  std::vector<std::int64_t> arc, flow, pi;
  std::vector<char> up;
  std::vector<std::int64_t> cost;  // nr x nc integer costs of the current solve
  std::int64_t artificial = 0;
  std::int64_t cursor = 0;  // where the next block search starts
  std::int64_t pivots = 0;
  bool has_basis = false;
  std::vector<int> path_u, path_v, slice;     // pivot scratch
  std::vector<int> row_start, fill_at, used;  // scratch of the plan's arcs in row order

  std::int64_t arc_cost(int v) const {
    return arc[v] == kArtificialArc ? artificial : cost[arc[v]];
  }

  // x is y or one of its ancestors.
  bool contains(int x, int y) const {
    return static_cast<unsigned>(pos[y] - pos[x]) < static_cast<unsigned>(size[x]);
  }

  // order, pos and size from parent (any tree over all nodes, rooted at root): a depth-first walk
  // over child lists built here.
  void build_order() {
    const int nodes = nr + nc + 1;
    std::vector<int> first(nodes + 1, 0), children(nodes);
    for (int v = 0; v < nodes; ++v) {
      if (v != root) ++first[parent[v] + 1];
    }
    for (int v = 0; v < nodes; ++v) first[v + 1] += first[v];
    std::vector<int> fill(first.begin(), first.end() - 1);
    for (int v = 0; v < nodes; ++v) {
      if (v != root) children[fill[parent[v]]++] = v;
    }
    order.clear();
    order.reserve(nodes);
    std::vector<int> stack{root};
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      order.push_back(v);
      for (int i = first[v + 1] - 1; i >= first[v]; --i) stack.push_back(children[i]);
    }
    GW_CHECK_CODE(static_cast<int>(order.size()) == nodes,
                  ErrorCode::kInternal,
                  "transport simplex: the basis is not a spanning tree");
    pos.assign(nodes, 0);
    size.assign(nodes, 1);
    for (int i = 0; i < nodes; ++i) pos[order[i]] = i;
    for (int i = nodes - 1; i > 0; --i) size[parent[order[i]]] += size[order[i]];
  }

  // The tree arrays agree with each other: order[] is a permutation starting at the root, pos[]
  // its inverse, every node inside its parent's range, size[] the subtree sizes. O(nodes); run
  // after every solve (against the n k work of a solve it is free), so a pivot that broke the
  // structure fails loudly in every test instead of returning a wrong vertex later.
  void verify_tree() {
    const int nodes = nr + nc + 1;
    bool ok = static_cast<int>(order.size()) == nodes && order[0] == root;
    std::vector<int> counted(nodes, 1);
    for (int i = nodes - 1; ok && i > 0; --i) {
      const int w = order[i];
      ok = w >= 0 && w < nodes && w != root && pos[w] == i && parent[w] >= 0 &&
           parent[w] < nodes && parent[w] != w && contains(parent[w], w) && counted[w] == size[w];
      if (ok) counted[parent[w]] += counted[w];
    }
    ok = ok && counted[root] == nodes && size[root] == nodes;
    GW_CHECK_CODE(ok, ErrorCode::kInternal, "transport simplex: the basis tree is inconsistent");
  }

  // The artificial star: the strongly feasible basis the first solve starts from.
  void star() {
    const int nodes = nr + nc + 1;
    parent.assign(nodes, root);
    parent[root] = -1;
    arc.assign(nodes, kArtificialArc);
    flow.assign(nodes, 0);
    pi.assign(nodes, 0);
    up.assign(nodes, 0);
    for (int v = 0; v < nr + nc; ++v) {
      up[v] = v < nr ? 1 : 0;
      flow[v] = v < nr ? m.supply[v] : m.demand[v - nr];
    }
    build_order();
    cursor = 0;
    has_basis = true;
  }

  // A basis from a plan's largest entries (the "crash" start): each row's kCrashCandidates
  // largest entries, largest first, then north-west corner over what is left, each time moving
  // min(remaining supply, remaining demand). Every assignment exhausts its row or its column, so
  // the arcs form a forest (a cycle would need an arc added after one of its ends was exhausted);
  // each tree of it hangs from the root by a zero-flow row -> root artificial arc, and every
  // transport arc carries positive flow. Strongly feasible: the arcs without flow point up, so
  // every node can send flow to the root along its tree path (a zero-flow arc pointing down,
  // root -> column, could not).
  template <typename PlanT>
  void crash(std::span<const PlanT> plan) {
    constexpr int kCrashCandidates = 4;
    const int per_row = std::min(kCrashCandidates, nc);
    std::vector<std::pair<double, std::int64_t>> candidates;
    candidates.reserve(static_cast<std::size_t>(nr) * per_row);
    for (int r = 0; r < nr; ++r) {
      // The row's per_row largest entries in one pass (insertion into a short sorted list; ties
      // keep the lower column), NaN and infinities counting as -1.
      double top[kCrashCandidates];
      int at[kCrashCandidates];
      int held = 0;
      const PlanT* src = plan.data() + static_cast<std::size_t>(m.rows[r]) * k;
      for (int c = 0; c < nc; ++c) {
        double value = static_cast<double>(src[m.cols[c]]);
        if (!std::isfinite(value)) value = -1.0;
        if (held == per_row && !(value > top[held - 1])) continue;
        int e = held < per_row ? held++ : held - 1;
        for (; e > 0 && value > top[e - 1]; --e) {
          top[e] = top[e - 1];
          at[e] = at[e - 1];
        }
        top[e] = value;
        at[e] = c;
      }
      for (int e = 0; e < held; ++e) {
        candidates.emplace_back(top[e], static_cast<std::int64_t>(r) * nc + at[e]);
      }
    }
    std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    std::vector<std::int64_t> supply = m.supply, demand = m.demand;
    std::vector<std::int64_t> arcs, flows;
    auto assign = [&](int r, int c) {
      const std::int64_t x = std::min(supply[r], demand[c]);
      supply[r] -= x;
      demand[c] -= x;
      arcs.push_back(static_cast<std::int64_t>(r) * nc + c);
      flows.push_back(x);
    };
    for (const auto& [value, a] : candidates) {
      const int r = static_cast<int>(a / nc), c = static_cast<int>(a % nc);
      if (supply[r] > 0 && demand[c] > 0) assign(r, c);
    }
    for (int r = 0, c = 0; r < nr && c < nc;) {
      if (supply[r] == 0) {
        ++r;
      } else if (demand[c] == 0) {
        ++c;
      } else {
        assign(r, c);
      }
    }
    // Adjacency of the forest, then each tree from one of its rows down (every tree has one: every
    // active column received mass).
    const int nodes = nr + nc + 1;
    std::vector<int> degree(nodes + 1, 0);
    for (std::int64_t a : arcs) {
      ++degree[a / nc + 1];
      ++degree[nr + a % nc + 1];
    }
    for (int v = 0; v < nodes; ++v) degree[v + 1] += degree[v];
    std::vector<int> incident(degree[nodes]);
    std::vector<int> fill(degree.begin(), degree.end() - 1);
    for (int e = 0; e < static_cast<int>(arcs.size()); ++e) {
      incident[fill[arcs[e] / nc]++] = e;
      incident[fill[nr + arcs[e] % nc]++] = e;
    }
    parent.assign(nodes, -1);
    arc.assign(nodes, kArtificialArc);
    flow.assign(nodes, 0);
    pi.assign(nodes, 0);
    up.assign(nodes, 0);
    std::vector<char> seen(nodes, 0);
    std::vector<int> queue;
    for (int top = 0; top < nr; ++top) {
      if (seen[top]) continue;
      seen[top] = 1;
      parent[top] = root;  // artificial row -> root, flow 0, pointing up
      up[top] = 1;
      queue.assign(1, top);
      for (std::size_t at = 0; at < queue.size(); ++at) {
        const int v = queue[at];
        for (int i = degree[v]; i < degree[v + 1]; ++i) {
          const int e = incident[i];
          const int r = static_cast<int>(arcs[e] / nc), c = nr + static_cast<int>(arcs[e] % nc);
          const int w = v == r ? c : r;
          if (seen[w]) continue;
          seen[w] = 1;
          parent[w] = v;
          arc[w] = arcs[e];
          flow[w] = flows[e];
          up[w] = w == r ? 1 : 0;  // row -> column: up when the row is the child
          queue.push_back(w);
        }
      }
    }
    GW_CHECK_CODE(std::count(seen.begin(), seen.begin() + nr + nc, 1) == nr + nc,
                  ErrorCode::kInternal,
                  "transport simplex: the crash basis left a node outside the tree");
    build_order();
    cursor = 0;
    has_basis = true;
  }

  // Potentials of every node from the root down (preorder: each parent before its children).
  void potentials() {
    pi[root] = 0;
    for (std::size_t i = 1; i < order.size(); ++i) {
      const int w = order[i];
      const std::int64_t c = arc_cost(w);
      pi[w] = up[w] ? pi[parent[w]] - c : pi[parent[w]] + c;
    }
  }

  // Block search: the most negative reduced cost within the first block (of `block` arcs from
  // the cursor, wrapping) that has one; -1 when no arc has a negative reduced cost.
  // The row scans' minimum goes through the dispatched kernel (simplex_isa.cpp); the index of
  // the block's minimum is searched for once, in the row segment that first reached it, after the
  // block (searching each row that improved the block's best was ~4% of a 150-node pair in
  // `gwalign pairwise`, as much as the kernel's scans: bench/RESULTS.md, issue 14).
  std::int64_t entering(std::int64_t block, std::int64_t& reduced) {
    const detail::ReducedCostMinFn reduced_cost_min = detail::simplex_kernels().reduced_cost_min;
    const std::int64_t total = static_cast<std::int64_t>(nr) * nc;
    const std::int64_t* pi_col = pi.data() + nr;
    std::int64_t best_rc = 0, seen = 0, in_block = 0;
    int best_r = -1, best_c = 0, best_len = 0;  // the row segment holding the first minimum
    int r = static_cast<int>(cursor / nc), c = static_cast<int>(cursor % nc);
    while (seen < total) {
      const int len = static_cast<int>(std::min<std::int64_t>(nc - c, block - in_block));
      const std::int64_t* row = cost.data() + static_cast<std::int64_t>(r) * nc;
      const std::int64_t low = reduced_cost_min(row + c, pi[r], pi_col + c, len);
      if (low < best_rc) {
        best_rc = low;
        best_r = r;
        best_c = c;
        best_len = len;
      }
      seen += len;
      in_block += len;
      c += len;
      if (c == nc) {
        c = 0;
        r = r + 1 == nr ? 0 : r + 1;
      }
      if (in_block == block) {
        if (best_r >= 0) break;
        in_block = 0;
      }
    }
    cursor = static_cast<std::int64_t>(r) * nc + c;
    reduced = best_rc;
    if (best_r < 0) return -1;
    const std::int64_t* row = cost.data() + static_cast<std::int64_t>(best_r) * nc;
    for (int j = best_c; j < best_c + best_len; ++j) {
      if (row[j] + pi[best_r] - pi_col[j] == best_rc) {
        return static_cast<std::int64_t>(best_r) * nc + j;
      }
    }
    GW_CHECK_CODE(false,
                  ErrorCode::kInternal,
                  "transport simplex: the pricing minimum " << best_rc << " is not in row "
                                                            << best_r);
    return -1;
  }

  void pivot(std::int64_t a, std::int64_t reduced) {
    const int u = static_cast<int>(a / nc), v = nr + static_cast<int>(a % nc);  // flow u -> v
    // The cycle's two paths, u and v up to (without) their join, walked once each and kept: the
    // leaving-arc search, the flow change, the stem and the subtree sizes then loop over these
    // arrays instead of chasing parent[] again (a path is ~30 nodes on the 100-200-node pairs of
    // `gwalign pairwise`, where the walks were a large part of a pivot).
    path_u.clear();
    int join = u;
    while (!contains(join, v)) {
      path_u.push_back(join);
      join = parent[join];
    }
    path_v.clear();
    for (int w = v; w != join; w = parent[w]) path_v.push_back(w);
    // Leaving arc: the last blocking arc of the cycle join -> .. -> u -> v -> .. -> join. Flow
    // falls on u's side on arcs pointing up, on v's side on arcs pointing down.
    std::int64_t delta = std::numeric_limits<std::int64_t>::max();
    int out_at = -1;  // index of the leaving arc's node in its side's path
    bool on_u_side = false;
    for (int i = 0; i < static_cast<int>(path_u.size()); ++i) {
      const int w = path_u[i];
      if (up[w] && flow[w] < delta) {
        delta = flow[w];
        out_at = i;
        on_u_side = true;
      }
    }
    for (int i = 0; i < static_cast<int>(path_v.size()); ++i) {
      const int w = path_v[i];
      if (!up[w] && flow[w] <= delta) {
        delta = flow[w];
        out_at = i;
        on_u_side = false;
      }
    }
    GW_CHECK_CODE(out_at >= 0,
                  ErrorCode::kInternal,
                  "transport simplex: a pivot cycle without a blocking arc");
    if (delta > 0) {
      for (const int w : path_u) flow[w] += up[w] ? -delta : delta;
      for (const int w : path_v) flow[w] += up[w] ? delta : -delta;
    }
    // The subtree below the leaving arc (old root `out`, `moved` nodes) holds x_in; it hangs from
    // y_in through the entering arc, its stem x_in = s_0, s_1 = parent(s_0), .., s_m = out
    // (path[0 .. out_at] of x_in's side) reversed. Its preorder for the new root: for each s_i,
    // s_i and its old subtree without s_{i-1}'s, i.e. the old slices [pos s_i, pos s_{i-1}) and
    // [end s_{i-1}, end s_i).
    const std::vector<int>& x_path = on_u_side ? path_u : path_v;
    const std::vector<int>& y_path = on_u_side ? path_v : path_u;
    const std::span<const int> stem(x_path.data(), static_cast<std::size_t>(out_at) + 1);
    const int out = stem.back();
    const int x_in = on_u_side ? u : v, y_in = on_u_side ? v : u;
    const int moved = size[out], from = pos[out];
    slice.resize(moved);
    int filled = 0;
    // Most pieces are a few nodes: a plain loop instead of a library copy call per piece.
    const auto append = [&](int begin, int end) {
      for (int i = begin; i < end; ++i) slice[filled++] = order[i];
    };
    append(pos[x_in], pos[x_in] + size[x_in]);
    for (std::size_t i = 1; i < stem.size(); ++i) {
      const int w = stem[i], below = stem[i - 1];
      const int end_below = pos[below] + size[below];
      append(pos[w], pos[below]);
      append(end_below, pos[w] + size[w]);
    }
    // New sizes along the stem: s_i's subtree is the slice from its piece on.
    {
      int offset = 0, below_old = 0;
      for (const int w : stem) {
        const int old = size[w];
        size[w] = moved - offset;
        offset += old - below_old;
        below_old = old;
      }
    }
    // Reverse the stem's arcs (parents, arc ids, directions, flows).
    {
      int new_parent = y_in;
      std::int64_t new_arc = a, new_flow = delta;
      char new_up = on_u_side ? 1 : 0;
      for (const int node : stem) {
        const std::int64_t old_arc = arc[node], old_flow = flow[node];
        const char old_up = up[node];
        parent[node] = new_parent;
        arc[node] = new_arc;
        up[node] = new_up;
        flow[node] = new_flow;
        new_parent = node;
        new_arc = old_arc;
        new_up = static_cast<char>(!old_up);
        new_flow = old_flow;
      }
    }
    // The old ancestors below the join (x_in's path above `out`) lose the slice, the new ones
    // (y_in's path) gain it; the join and above hold it before and after.
    for (std::size_t i = static_cast<std::size_t>(out_at) + 1; i < x_path.size(); ++i) {
      size[x_path[i]] -= moved;
    }
    for (const int w : y_path) size[w] += moved;
    // Move the slice to just after y_in (its first child); the nodes in between shift by `moved`.
    const int at = pos[y_in];
    int first, last;  // the range of order[] whose nodes changed place
    if (at < from) {
      std::copy_backward(order.begin() + at + 1, order.begin() + from, order.begin() + from + moved);
      std::copy(slice.begin(), slice.end(), order.begin() + at + 1);
      first = at + 1;
      last = from + moved;
    } else {
      std::copy(order.begin() + from + moved, order.begin() + at + 1, order.begin() + from);
      std::copy(slice.begin(), slice.end(), order.begin() + at + 1 - moved);
      first = from;
      last = at + 1;
    }
    for (int i = first; i < last; ++i) pos[order[i]] = i;
    const std::int64_t shift = on_u_side ? -reduced : reduced;
    const int begin = pos[x_in];
    for (int i = begin; i < begin + moved; ++i) pi[order[i]] += shift;
    ++pivots;
  }

  template <typename CostT>
  LinearOtPlan run(std::span<const CostT> full) {
    GW_CHECK(
        full.size() == static_cast<std::size_t>(n) * k,
        "TransportSimplex::solve: cost has " << full.size() << " entries for " << n << " x " << k);
    const detail::SimplexKernels& kernels = detail::simplex_kernels();
    const bool all_active = nr == n && nc == k;
    // Every row and column active (the usual case): the dispatched max; a non-finite entry (-1)
    // goes through active_cost_scale, which names it.
    double scale = all_active ? kernels.abs_max<CostT>()(full.data(), std::ssize(full)) : -1.0;
    if (scale < 0.0) {
      scale = detail::active_cost_scale(full, k, m.rows, m.cols, "TransportSimplex::solve");
    }
    cost.resize(static_cast<std::size_t>(nr) * nc);
    if (all_active && scale >= 0x1p-960) {
      constexpr double kUnits = static_cast<double>(std::int64_t{1} << detail::kCostBits);
      kernels.to_integer<CostT>()(full.data(), cost.data(), std::ssize(cost), kUnits / scale);
    } else if (all_active) {
      detail::integer_costs(full.data(), cost.data(), cost.size(), scale);
    } else {
      std::vector<CostT> row(nc);
      for (int r = 0; r < nr; ++r) {
        const CostT* src = full.data() + static_cast<std::size_t>(m.rows[r]) * k;
        for (int c = 0; c < nc; ++c) row[c] = src[m.cols[c]];
        detail::integer_costs(
            row.data(), cost.data() + static_cast<std::size_t>(r) * nc, nc, scale);
      }
    }
    // |integer cost| <= 2^kCostBits.
    const std::int64_t largest = scale > 0.0 ? std::int64_t{1} << detail::kCostBits : 0;
    // Larger than any path of transport arcs, so an optimal basis carries no artificial flow.
    artificial = static_cast<std::int64_t>(nr + nc + 1) * (largest + 1);
    if (!has_basis) star();
    potentials();
    pivots = 0;
    const std::int64_t total = static_cast<std::int64_t>(nr) * nc;
    // Block pricing over max(sqrt(arcs), 1024) arcs: the vectorized reduced-cost minimum makes a
    // longer block cheap next to a pivot, and on small problems (160 x 123: sqrt = 140) the longer
    // block picks better entering arcs: 52% fewer pivots on the 40-space pairwise collection,
    // 10% less time; neutral at 400 x 500; at 2,000 x 2,500 four times sqrt was 10-20% slower
    // (bench/RESULTS.md, issue 14).
    const std::int64_t block = std::min<std::int64_t>(
        total, std::max<std::int64_t>(1024, static_cast<std::int64_t>(std::sqrt(total))));
    std::int64_t reduced = 0;
    for (std::int64_t a = entering(block, reduced); a >= 0; a = entering(block, reduced)) {
      pivot(a, reduced);
    }
    verify_tree();

    LinearOtPlan out;
    out.rounds = 1;
    out.arcs = total;
    // The basis arcs with flow in arc (row-major) order: bucketed by row, each row's few arcs
    // then sorted by column (a comparison sort of all of them was ~1% of a 150-node pair).
    row_start.assign(static_cast<std::size_t>(nr) + 1, 0);
    for (int v = 0; v < nr + nc; ++v) {
      if (arc[v] == kArtificialArc) {
        GW_CHECK_CODE(flow[v] == 0,
                      ErrorCode::kInternal,
                      "transport simplex: an optimal basis routes mass through the root");
      } else if (flow[v] > 0) {
        ++row_start[arc[v] / nc + 1];
      }
    }
    for (int r = 0; r < nr; ++r) row_start[r + 1] += row_start[r];
    used.resize(static_cast<std::size_t>(row_start[nr]));
    fill_at.assign(row_start.begin(), row_start.end() - 1);
    for (int v = 0; v < nr + nc; ++v) {
      if (arc[v] != kArtificialArc && flow[v] > 0) used[fill_at[arc[v] / nc]++] = v;
    }
    for (int r = 0; r < nr; ++r) {
      std::sort(used.begin() + row_start[r], used.begin() + row_start[r + 1],
                [&](int x, int y) { return arc[x] < arc[y]; });
    }
    for (int v : used) {
      const Index i = m.rows[arc[v] / nc], j = m.cols[arc[v] % nc];
      const double value = static_cast<double>(flow[v]) * m.unit;
      out.rows.push_back(i);
      out.cols.push_back(j);
      out.values.push_back(value);
      out.cost += value * static_cast<double>(full[static_cast<std::size_t>(i) * k + j]);
    }
    // Column duals relative to the first column's (exact in int64; the artificial offset cancels).
    out.column_potentials.assign(k, 0.0);
    for (int c = 0; c < nc; ++c) {
      out.column_potentials[m.cols[c]] = detail::cost_from_integer(pi[nr + c] - pi[nr], scale);
    }
    return out;
  }
};

TransportSimplex::TransportSimplex(std::span<const double> p, std::span<const double> q)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.n = static_cast<Index>(p.size());
  s.k = static_cast<Index>(q.size());
  s.m = detail::integer_marginals(p, q, "TransportSimplex");
  GW_CHECK(s.m.rows.size() + s.m.cols.size() <= static_cast<std::size_t>(kMaxNodes),
           "TransportSimplex: " << s.m.rows.size() << " + " << s.m.cols.size()
                                << " positive-mass rows and columns exceed " << kMaxNodes);
  s.nr = static_cast<int>(s.m.rows.size());
  s.nc = static_cast<int>(s.m.cols.size());
  s.root = s.nr + s.nc;
}

TransportSimplex::~TransportSimplex() = default;
TransportSimplex::TransportSimplex(TransportSimplex&&) noexcept = default;
TransportSimplex& TransportSimplex::operator=(TransportSimplex&&) noexcept = default;

template <typename PlanT>
void TransportSimplex::crash_plan(std::span<const PlanT> plan) {
  GW_CHECK(plan.size() == static_cast<std::size_t>(state_->n) * state_->k,
           "TransportSimplex::crash: plan has " << plan.size() << " entries for " << state_->n
                                                << " x " << state_->k);
  state_->crash(plan);
}

LinearOtPlan TransportSimplex::solve(std::span<const double> cost) { return state_->run(cost); }
LinearOtPlan TransportSimplex::solve(std::span<const float> cost) { return state_->run(cost); }
void TransportSimplex::crash(std::span<const double> plan) { crash_plan(plan); }
void TransportSimplex::crash(std::span<const float> plan) { crash_plan(plan); }
void TransportSimplex::reset() { state_->has_basis = false; }
bool TransportSimplex::has_basis() const { return state_->has_basis; }
Index TransportSimplex::n() const { return state_->n; }
Index TransportSimplex::k() const { return state_->k; }
std::int64_t TransportSimplex::pivots() const { return state_->pivots; }

}  // namespace gw
