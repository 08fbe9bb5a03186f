// Exact linear optimal transport by a network simplex that keeps its basis between solves: the
// vertex oracle of the exact GW solver's conditional gradient (solver/exact/), usable on its own.
//
// Problem: min <C, T> over {T >= 0 : T 1 = p, T^T 1 = q}, C n x k row-major (float32 or float64),
// p (n) and q (k) non-negative with equal positive sums. The optimum is returned as a sparse basic
// plan. The tested reference is LEMON's NetworkSimplex (linear_ot_reference.h, test support only).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/types.h"

namespace gw {

// An optimal plan of min <C, T> over {T >= 0 : T 1 = p, T^T 1 = q} as a sparse list of its
// nonzero entries (a basic solution: at most n + k - 1 of them).
struct LinearOtPlan {
  std::vector<Index> rows;
  std::vector<Index> cols;
  std::vector<double> values;
  double cost = 0.0;  // <C, T>, summed in double: +-inf only if it overflows (|C| near DBL_MAX)
  int rounds = 0;     // network-simplex solves (restricted problem, then after pricing)
  Offset arcs = 0;    // arcs of the last restricted problem
  // The optimal duals of the columns (k entries; 0 for zero-mass columns), up to a common shift:
  // a good `column_hint` for the next problem when the cost changes little.
  std::vector<double> column_potentials;
};

// Exact linear OT between fixed marginals p and q for a sequence of costs (the conditional-gradient
// vertices of one problem): a primal network simplex on the complete bipartite graph that keeps
// its spanning-tree basis from one solve() to the next. A basis depends only on the marginals, so
// the previous optimum is a feasible start for the next cost, and a cost that changed little needs
// few pivots (LEMON's NetworkSimplex, the reference, always starts from scratch). The masses are
// scaled to 64-bit integers (exactly when both sides are uniform and lcm(n', k') <= 2^50, n', k'
// the positive-mass counts; otherwise to a total of 2^50, an error of at most 2^-50 per entry),
// and the costs to integers in units of max|C| / 2^40 (on floating-point costs a simplex can cycle
// through degenerate pivots on near-ties), so the vertex is optimal for C within 2^-40 max|C| per
// unit of mass; `cost` is <C, T> in the given costs. Zero-mass rows and columns are left out; the
// result is an optimal basic plan with at most n + k - 1 entries sorted by
// (row, column), column_potentials with the same convention. Anti-cycling: Cunningham's strongly
// feasible trees (the leaving arc is the last blocking one around the cycle from its apex), so
// every solve terminates; pricing is block search over the arcs in row-major order, blocks of
// max(sqrt(n k), 1024) arcs. The basis tree is a preorder array: a pivot costs its cycle's length,
// the size of the subtree it moves and the number of nodes between that subtree's old and new
// place (at most n + k, moved by memmove), and every solve ends with an O(n + k) consistency check
// of the tree (kInternal if it failed). Memory: n k int64 costs plus O(n + k). Not thread-safe (one object per thread); solve() may be
// called any number of times with costs of the constructor's n x k shape.
class TransportSimplex {
 public:
  // p (n) and q (k): non-negative with equal positive sums (relative 1e-9); kInvalidArgument
  // otherwise. At most 2^20 positive-mass rows plus columns (the int64 potentials' range).
  TransportSimplex(std::span<const double> p, std::span<const double> q);
  ~TransportSimplex();
  TransportSimplex(TransportSimplex&&) noexcept;
  TransportSimplex& operator=(TransportSimplex&&) noexcept;

  // min <C, T> for the n x k row-major cost (finite; kInvalidArgument otherwise), starting from
  // the basis of the previous call (the first call starts from artificial arcs).
  LinearOtPlan solve(std::span<const double> cost);
  LinearOtPlan solve(std::span<const float> cost);
  // Replaces the basis by one built from the largest entries of `plan` (n x k row-major, any
  // non-negative values: an entropic plan near this problem's optimum, say): each row's 4 largest
  // entries, largest first, then north-west corner, each moving as much mass as its row and column
  // have left (a basic feasible plan), the trees of that forest hung from the root by zero-flow
  // artificial arcs pointing to it (strongly feasible). For the first solve() of a sequence whose optimum is
  // near `plan`: fewer pivots than the artificial start. O(n k) plus a sort of 4 n entries.
  void crash(std::span<const double> plan);
  void crash(std::span<const float> plan);
  // Forgets the basis: the next solve() starts cold.
  void reset();
  // Whether a basis is held (a solve() or crash() happened since construction or reset()).
  bool has_basis() const;

  Index n() const;
  Index k() const;
  // Pivots of the last solve() (degenerate ones included).
  std::int64_t pivots() const;

 private:
  template <typename PlanT>
  void crash_plan(std::span<const PlanT> plan);
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gw
