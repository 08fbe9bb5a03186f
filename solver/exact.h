// Building blocks of the exact-gradient GW solver (Options::solver = kExact, see options.h): the
// square-loss GW gradient on dense distance matrices, the exact line search of the conditional-
// gradient step, and exact linear optimal transport by network simplex (LEMON's NetworkSimplex, and
// TransportSimplex, ours, which warm-starts from its previous basis).
// gw::solve runs them; they are public so that callers and tests can use them directly.
//
// Conventions shared by every function here: distance matrices are dense, row-major, symmetric
// (dx n x n, dy k x k), used as given (no normalization); plans and costs are n x k row-major;
// marginals p (n) and q (k) are non-negative. The square-loss GW objective of a plan T is
//     L(T) = sum_{i,j,k,l} (dx_ik - dy_jl)^2 T_ij T_kl
// and the fused objective with feature cost C (n x k) and weight w in [0, 1] is
//     F(T) = (1 - w) L(T) + w <C, T>.
// All functions are reentrant and allocate their own workspace; they use the calling thread's
// OpenMP thread count for the GEMMs (none when it is 1).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/types.h"
#include "solver/problem.h"

namespace gw {

// dL/dT at `plan`: G_ij = 2 [ (dx^2 r)_i + (dy^2 c)_j - 2 (dx T dy)_ij ], r and c the plan's own
// row and column sums, dx^2 the entrywise square (Peyre, Cuturi & Solomon 2016, Prop. 1; valid for
// symmetric dx, dy). Two GEMMs, O(n^2 k + n k^2). Writes n x k values into `gradient`.
void gw_gradient(std::span<const double> dx,
                 std::span<const double> dy,
                 std::span<const double> plan,
                 Index n,
                 Index k,
                 std::span<double> gradient);

// The step of a conditional-gradient iteration: the alpha in [0, 1] minimizing
// F(T + alpha (S - T)) for a plan T and a vertex S with the same marginals (the square loss makes
// F quadratic in alpha: F(T) + a alpha + b alpha^2, both coefficients from one dx D dy product,
// D = S - T). `feature_cost` may be empty when fused_weight == 0. Ties go to the larger step.
double gw_line_search(std::span<const double> dx,
                      std::span<const double> dy,
                      std::span<const double> plan,
                      std::span<const double> vertex,
                      Index n,
                      Index k,
                      std::span<const double> feature_cost = {},
                      double fused_weight = 0.0);

// Optional inputs of solve_linear_ot that speed it up without changing its result.
struct LinearOtHints {
  // Candidate arcs per row and per column of the first restricted problem, and arcs added per row
  // in each pricing round.
  int candidates = 8;
  // Pairs that join the first restricted problem (e.g. the support of the previous solution).
  std::span<const Index> rows;
  std::span<const Index> cols;
  // Column duals of a previous, similar problem (k entries): the rows' candidates are then their
  // cheapest arcs in reduced cost c_ij - hint_j instead of in c_ij.
  std::span<const double> column_hint;
};

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

// Exact linear OT by LEMON's NetworkSimplex (block-search pivoting). The masses are scaled to
// 64-bit integers (exactly when both sides are uniform and lcm(n', k') <= 2^50, n', k' the
// positive-mass counts; otherwise to a total of 2^50, an error of at most 2^-50 per entry), and
// the costs to integers in units of max|C| / 2^40 (on double costs the simplex can cycle through
// degenerate pivots on near-ties; the vertex is optimal for C within 2^-40 max|C| per unit of
// mass; `cost` is <C, T> in the given costs). Zero-mass rows and columns are left out. Instead of the dense n k arcs, the
// solver starts from a restricted problem: each row's and each column's `candidates` cheapest
// arcs, the hinted pairs, and a north-west-corner basis that makes it feasible; then it prices
// every arc with the duals (reduced cost c_ij + pi_i - pi_j) and adds each row's most negative
// ones until none is below -1e-12 max|C| (the dense problem's optimality condition), or solves the
// dense problem after 12 rounds. p and q must have equal positive sums (relative 1e-9;
// kInvalidArgument otherwise). Single-threaded.
LinearOtPlan solve_linear_ot(std::span<const double> cost,
                             Index n,
                             Index k,
                             std::span<const double> p,
                             std::span<const double> q,
                             const LinearOtHints& hints = {});
// The same for a float32 cost (the exact solver's kF32 path).
LinearOtPlan solve_linear_ot(std::span<const float> cost,
                             Index n,
                             Index k,
                             std::span<const double> p,
                             std::span<const double> q,
                             const LinearOtHints& hints = {});

// Exact linear OT between fixed marginals p and q for a sequence of costs (the conditional-gradient
// vertices of one problem): a primal network simplex on the complete bipartite graph that keeps
// its spanning-tree basis from one solve() to the next. A basis depends only on the marginals, so
// the previous optimum is a feasible start for the next cost, and a cost that changed little needs
// few pivots (LEMON's NetworkSimplex behind solve_linear_ot always starts from scratch). Same
// result contract as solve_linear_ot: integer masses and costs as described there (the vertex is
// optimal for C within 2^-40 max|C| per unit of mass; `cost` is <C, T> in the given costs), zero-
// mass rows and columns left out, an optimal basic plan with at most n + k - 1 entries sorted by
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

// One space's exact distance profiles for Problem::source_profiles / target_profiles: the
// provider's dense max-normalized (symmetrized) distance matrix and the weights normalized to mass
// 1 (empty: uniform), exactly as the exact solver builds them in float64, then
// distance_quantile_profiles with `quantiles` (pass Options::profile_quantiles). O(n^2) memory
// (the dense matrix, freed on return) and O(n^2 log n) time, rows over the calling thread's OpenMP
// threads. kInvalidArgument on quantiles <= 0 or weights of the wrong length, kBadData on bad
// weights.
SpaceProfiles exact_distance_profiles(const DistanceProvider& provider,
                                      const std::vector<double>& weights,
                                      int quantiles);

// The distance profiles behind the exact solver's "profiles" and "profile-vertex" starts
// (Options::profile_anchors): for each row i of a dense n x n distance matrix d (row-major), the
// quantiles of the distribution that puts mass weights[l] on d_il, at the levels (q + 1/2) / Q of
// the total weight, q < Q = quantiles. The quantile at a level is the smallest d_il whose
// cumulative weight, entries taken in increasing order of distance, reaches the level. Weights are
// non-negative with a positive sum. Returns n x Q values, row-major. O(n^2 log n), rows split over
// the calling thread's OpenMP threads.
std::vector<double> distance_quantile_profiles(std::span<const double> d,
                                               Index n,
                                               std::span<const double> weights,
                                               int quantiles);

}  // namespace gw
