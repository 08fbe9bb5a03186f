// How gw::solve solves a problem: the one place that decides it (docs/architecture.md, "The
// dispatcher").
//
//   gw::Strategy s = gw::choose_strategy(problem, options);   // nothing is built or solved
//   std::puts(s.explain().c_str());                           // the choice and every reason
//   gw::Result r = gw::solve(problem, options);                // r.strategy is the same choice
//
// A strategy is the full choice of a solve: the plan's support (dense n x k or a sparse CSR
// support), the solver (the sampled loop or the exact-gradient solver, and the exact solver's
// method), the backend, the arithmetic precision, the threads, and how the final plan's GW loss is
// computed -- each with the reason it was made. Every front end (the C++ API, `gwalign align` and
// its --explain, `gwalign pairwise`, the Python module and its gwalign.explain) calls
// choose_strategy and nothing else decides; gw::solve executes what it returns.
//
// The rules, in order (each reason string names the rule that fired):
//   1. What the caller fixed: Options::support, Options::solver, Options::backend as given; an
//      explicit Options::plan_format = kDense needs the dense support.
//   2. What a feature needs: the sparse path has no partial transport, Lambda-EMA, dense initial
//      plan, restart probes or multiscale warm start, and needs geometry on both sides; the exact
//      solver runs on the CPU, on balanced problems, without the sampled loop's features
//      (multiscale, restarts > 1, slack_shared). A setting that only one solver reads, when given,
//      asks for that solver (Options: Setting<T>); settings of both solvers together are an error.
//   3. Memory: a candidate whose estimated peak (estimate_memory) exceeds the budget is out.
//   4. Cost: under solver = auto the exact solver runs while its gradient's work n k (n + k) is
//      at most Options::exact_max_work (it reaches lower losses than the sampled loop and, up to
//      that size, in less time); otherwise the sampled loop runs on the support with the lower
//      predicted time (Candidate::seconds: a cost model calibrated on the spiral benchmark,
//      strategy.cpp), so a dense plan is kept only where it is faster or needed.
// Misuse (a given setting the chosen or requested solver cannot honour, invalid options) throws
// gw::Error naming the field and the fix; choose_strategy never allocates more than O(1).
// Thread-safe (a pure function of its arguments and the machine's memory size).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "solver/options.h"
#include "solver/problem.h"

namespace gw {

// The peak memory of gw::solve, estimated from the shapes and options alone (nothing is built),
// in bytes. `inputs`: the distance providers and their construction (a kNN graph for points;
// 4 n^2 for a precomputed or dense matrix; 8 n d + 12 n for landmarks; the row cache for
// Dijkstra; memory_bytes() of a given provider). `dense`: inputs + the dense loop's n x k buffers
// at their peak (three float32 plans' worth, 12 n k bytes, or 16 n k in float64, as measured in
// bench/RESULTS.md) or the loss estimate beside the float64 plan, whichever is larger. `sparse`:
// inputs + the support (about 40 bytes per entry at a re-growth, n support_size + k entries), the
// anchor blocks ((n + k) M 4 bytes), per-node arrays and the coarse cells x cells problem.
// Allocations the caller holds (the points themselves, the Problem) are not counted; with
// Problem::source_features / target_features the dense paths also hold the n x k feature cost
// they build (8 n k bytes) and the sparse support its entries' (8 bytes each).
// These are host memory (with backend = cuda the sparse path keeps its support on the host too).
// Device memory is not part of the estimate or of `limit`: the dense CUDA loop needs about 3 n k
// elements of its precision (solver/sampled/cuda/gw_loop_cuda.cpp), the sparse one nnz x (4 column + 4
// cost + 8 plan + 12 transpose + 4 column-ordered cost [+ 8 feature cost when fused]) bytes plus
// (n + k) M 4 bytes for the anchor blocks and ~64 (n + k) bytes of per-node arrays
// (sinkhorn/cuda_sparse_sinkhorn.h); each checks the device's free memory before it allocates
// and throws kUnsupported with the numbers when it does not fit.
// `exact`: inputs + the exact solver's dense distance matrices (12 (n^2 + k^2) bytes, float32 and
// a float64 copy at the finish) and its n x k plans and products (64 n k bytes with three starts).
// `limit` is Options::memory_limit resolved (0: 60% of physical_memory_bytes()); choose_strategy
// keeps a path whose estimate exceeds it out (auto: the dense support beyond half of it).
struct MemoryEstimate {
  std::size_t inputs = 0;
  std::size_t dense = 0;
  std::size_t sparse = 0;
  std::size_t exact = 0;
  std::size_t limit = 0;
};
MemoryEstimate estimate_memory(const Problem& problem, const Options& options);

// One way to solve the problem, priced.
struct Candidate {
  std::string name;       // "exact", "sampled dense", "sampled sparse"
  bool possible = false;  // allowed by the options and the problem (rules 1-3)
  std::string why_not;    // the first rule that rules it out (empty when possible)
  double seconds = 0.0;   // predicted time of the whole solve on the calibration machine
  std::size_t bytes = 0;  // predicted peak host memory
};

struct Strategy {
  Support support = Support::kDense;  // kDense or kSparse, never kAuto
  std::string support_reason;
  SolverKind solver = SolverKind::kSampled;  // kSampled or kExact, never kAuto
  std::string solver_reason;
  ExactMethod exact_method = ExactMethod::kHybrid;  // meaningful when solver == kExact
  Backend backend = Backend::kCpu;
  std::string backend_reason;
  // The precision the chosen path computes in. The exact solver: float64 for tiny problems
  // (n k (n + k) <= kExactDoubleWork) or precision f64, else float32 products with a float64
  // finish; the loops: Options::precision.
  Precision precision = Precision::kF32;
  std::string precision_reason;
  // Threads the solve runs on (0: Options::threads, all when that is 0); the exact solver runs
  // tiny problems (n k (n + k) <= kExactSingleThreadWork) on one thread.
  int threads = 0;
  std::string threads_reason;
  // Whether the final plan's GW loss is computed exactly or estimated (Options::compute_gw_loss,
  // exact_loss_max_work), or not at all.
  bool loss_computed = true;
  bool loss_exact = false;
  std::string loss_reason;
  // The memory estimate of the chosen support, and the budget it was held to, in bytes.
  std::size_t estimated_peak_bytes = 0;
  std::size_t memory_limit_bytes = 0;
  // Every candidate considered, with its prediction (rule 4).
  std::vector<Candidate> candidates;

  // Several lines: the choice, its reasons and the candidates' predictions (`gwalign align
  // --explain`, gwalign.explain).
  std::string explain() const;
  // One JSON object (the report's "strategy").
  std::string to_json() const;
};

// The strategy of gw::solve(problem, options). Throws gw::Error (kInvalidArgument) for invalid
// options, a requested solver or support the problem or the other options rule out, or settings of
// both solvers given together; kBadData when no candidate fits the memory budget (the message
// names the sizes, the estimates and the flags that help).
Strategy choose_strategy(const Problem& problem, const Options& options);

// Work of one dense GW gradient, n^2 k + n k^2 multiply-adds (Options::exact_max_work).
inline double exact_iteration_work(Index n, Index k) {
  return static_cast<double>(n) * k * (static_cast<double>(n) + k);
}
// Up to this work (about 80 x 80) the exact solver computes in float64 whatever
// Options::precision says: its iterations cost microseconds there. Above it, float32 products
// then the float64 finish (Options::exact_tolerance) give the same losses faster: at 400 x 500
// (spiral) 0.064 s instead of 0.073-0.082 s, loss 4e-7 relative higher (bench/RESULTS.md,
// "Calibrated constants").
inline constexpr double kExactDoubleWork = 1e6;
// Up to this work the exact solver runs on one thread whatever Options::threads says: on the
// spiral benchmark (2 quiet cores) two threads are faster from 200 x 250 (work 2.25e7) on
// (bench/RESULTS.md, "Calibrated constants").
inline constexpr double kExactSingleThreadWork = 1e7;

}  // namespace gw
