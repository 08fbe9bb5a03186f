// The sparse-support solve path (Options::support = kSparse), internal to the solver module.
//
// Levels: (1) each side is quantized into cells: `cells` nodes are picked (seeded, uniformly at
// random without replacement) and every node joins its nearest pick, from provider queries in
// blocks of picks; (2) the cells are aligned by the dense loop on the pick-to-pick distances with
// cell masses as marginals, and again from each orientation candidate of the cells' spectral
// embeddings whose map disagrees with that plan (handedness.cpp; the disagreeing plans become
// further starts, judged by kStartProbeIterations fine iterations each, sparse_solve.cpp, and
// lifted one at a time);
// (3) each source node gets up to support_size candidate targets,
// members of the target cells its cell couples to most, and every target is covered by at least
// one source node; (4) the sampled GW iterations (run_gw_iterations, the same driver as the dense
// loops) run on that CSR support, and every support_regrow_every iterations each row's support is
// rebuilt from its heaviest current entries, a fixed backbone of its starting support (which
// keeps every target cell reached in proportion to the coarse plan, so the balanced problem stays
// nearly feasible), and members of its best match's cell and that cell's nearest cells, so a
// wrong coarse match can move. This fine level continues the coarse level's annealing instead of
// repeating it: it runs at epsilon_final, its stopping tests apply after 10 iterations with a
// plateau patience of one re-growth period (at least 5), and its polishing solves take at most 20
// inner iterations (step 5 fixes the rows); (5) the plan is pruned to support_size entries per
// row, scaled to the marginals on that support (Sinkhorn-Knopp on the entries, ending on a row
// pass: rows exact, columns off by what the pruned support cannot carry, reported as
// column_marginal_error), and the GW loss is estimated from anchor pairs drawn from it, in blocks
// of anchors.
// No buffer holds n x k entries: memory is O(n support_size + (n + k) M + cells^2).
//
// Backends (Options::backend): levels (1) - (3) and (5), the sampling of anchor pairs and the
// re-growth run on the host for both. The per-iteration work on the support -- the cost on the
// support from the anchor blocks, the Sinkhorn solves and the momentum step, every one O(nnz) or
// O(nnz M) -- goes through a SupportKernels object: CpuSupportKernels (sparse_loop.cpp: OpenMP,
// sparse_sinkhorn) or the CUDA one (cuda/sparse_loop_cuda.cpp: gw::CudaSparseSinkhorn), so the
// loop logic exists once. On CUDA the support, its transpose, the costs, the plan and the
// potentials live on the device; the host downloads the per-row stats (24 n bytes) and the
// sampled rows' plan values (8 bytes per entry of M rows) every iteration and all plan values
// (8 nnz bytes) when it re-grows, and uploads the anchor blocks every iteration and the support
// after each re-growth. The coarse level (2) is a dense
// solve with the same options, so it runs on the same backend.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/rng.h"
#include "core/types.h"
#include "sinkhorn/sparse_sinkhorn.h"
#include "solver/options.h"
#include "solver/result.h"
#include "solver/sampled/sampled_impl.h"
#include "solver/solver_impl.h"
#include "solver/strategy.h"

namespace gw::detail {

// One side's quantization.
struct Quantization {
  Index cells = 0;
  std::vector<Index> picks;      // cells node ids (the cell centres)
  std::vector<Index> cell;       // n: each node's cell (its nearest pick)
  std::vector<float> distances;  // cells x cells, symmetric, zero diagonal (pick to pick)
};
// CSR plan on the support, with its transpose for the column pass of Sinkhorn.
struct SupportPlan {
  Index n = 0, k = 0;
  std::vector<Offset> offsets;
  std::vector<Index> cols;
  std::vector<double> values;
  SupportTranspose transpose;
  SparseSupportView view() const { return {n, k, offsets, cols}; }
  Offset nnz() const { return static_cast<Offset>(cols.size()); }
};

// The sparse loop's arithmetic on its support, one implementation per backend. The loop
// (SparseLoop in sparse_loop.cpp) owns the support and its plan values on the host, and calls:
// set_support at the start and after each re-growth (the potentials carry over: they are per
// node), build_cost / sinkhorn / plan_momentum once per iteration, plan_rows for the rows it
// samples, and sync_plan before it reads all of support.values (re-growth, the end). Not
// thread-safe; one loop, one object.
class SupportKernels {
 public:
  virtual ~SupportKernels() = default;
  // A new support with its starting plan values. The reference stays valid until the next call.
  virtual void set_support(SupportPlan& support) = 0;
  // Lambda on the support from the host anchor blocks dx (n x m) and dy (k x m), max-normalized
  // distances, with the fused blend when Options::fused_weight > 0 and a feature cost is given.
  virtual void build_cost(std::span<const float> dx, std::span<const float> dy, int m) = 0;
  // Sinkhorn on the support from the previous potentials (sparse_sinkhorn's contract).
  virtual SinkhornResult sinkhorn(double epsilon, const SinkhornOptions& options) = 0;
  // The momentum step on the plan values (sparse_plan_momentum's contract); stats on the host.
  virtual void plan_momentum(double epsilon, double alpha, std::span<PlanBlendStats> stats) = 0;
  // The current plan values of rows[0], rows[1], ... (repeats allowed) concatenated, each row's
  // entries in CSR order, into `values` (resized), for the anchor sampling.
  virtual void plan_rows(const SupportPlan& support,
                         std::span<const Index> rows,
                         std::vector<double>& values) = 0;
  // Makes support.values the current plan (a no-op where the plan lives in them already).
  virtual void sync_plan(SupportPlan& support) = 0;
  // Frees the per-iteration buffers (after the loop).
  virtual void release() = 0;
};

// Cells of the target a re-grown row draws from: its best match's cell and the nearest ones.
inline constexpr int kNeighbourCells = 6;
// Options::support_feature_candidates: source nodes looked at per target node.
inline constexpr std::size_t kFeaturePoolMax = 256;
// Every kBackboneStride-th entry of a row's starting support stays in it at every re-growth.
inline constexpr int kBackboneStride = 4;

// Cells as CSR (members of each cell, shuffled so that a prefix is a random subset), and each
// cell's nearest cells by pick distance.
struct CellIndex {
  std::vector<Offset> offsets;
  std::vector<Index> members;
  std::vector<Index> neighbours;  // cells x kNeighbourCells (the cell itself first), -1 padded
};
CellIndex index_cells(const Quantization& q, Index n, Rng& rng);

// Row i's candidate list -> CSR, then every column no row reaches is attached to `cover_row(j)`
// (so the balanced Sinkhorn problem is feasible). `lists` is n x width, unused slots -1; values
// (same layout) are the starting plan entries (support.cpp).
SupportPlan build_support(Index n,
                          Index k,
                          int width,
                          const std::vector<Index>& lists,
                          const std::vector<double>& values,
                          const std::function<Index(Index)>& cover_row,
                          std::vector<std::pair<Index, Index>> additional = {});

// The starting support of the sparse path and what its re-growth needs (the target side's cells).
struct SparseStart {
  SupportPlan support;
  std::vector<Index> backbone;
  Quantization target_cells;
  CellIndex target_index;
};

template <typename S>
class ExactGw;
template <typename S>
class SpectralStarts;

// The coarse level's orientation candidates (handedness.cpp): both sides' cells embedded by
// classical MDS (the exact solver's SpectralStarts on the max-normalized pick-to-pick distances),
// the best map between the embeddings and the best one of the other handedness. O(cells^2) memory.
class CoarseOrientation {
 public:
  CoarseOrientation(const Quantization& src,
                    const Quantization& tgt,
                    const std::vector<double>& pc,
                    const std::vector<double>& qc,
                    const Options& options);
  ~CoarseOrientation();
  // Whether the embeddings tell the handedness: the other handedness's best map has at least
  // 1.25x the best map's objective.
  bool clear() const;
  // The share of cell mass on which two coarse plans' argmax matchings agree (within 5% of the
  // target's diameter), and whether that makes them the same candidate (at least half).
  double agreement(const std::vector<double>& a, const std::vector<double>& b) const;
  bool same(const std::vector<double>& a, const std::vector<double>& b) const;
  // Entropic start plans (cells x cells) of the candidates whose maps disagree with `kept` (a
  // coarse plan); none where the handedness is not clear.
  std::vector<std::vector<double>> starts_against(const std::vector<double>& kept) const;

 private:
  Index cells_ = 0;
  double ratio_ = 0.0;
  std::unique_ptr<PreparedProblem> pb_;
  std::unique_ptr<Options> options_;
  std::unique_ptr<ExactGw<double>> gw_;
  std::unique_ptr<SpectralStarts<double>> spectral_;
};

// Levels (1) and (2) (support.cpp): each side's cells and the coarse plans between them. The
// first plan is the coarse solve's. Where the cells' embeddings tell the handedness
// (CoarseOrientation::clear) and a candidate's map disagrees with that plan, the coarse problem is
// solved again from the candidate, and each resulting plan that still disagrees with the earlier
// ones is kept too (at most two more; run_sparse_solve judges them at the fine level).
// Result::starts lists the coarse solves ("coarse", "coarse-spectral-N") with their coarse loss.
struct CoarseLevel {
  Quantization source, target;
  std::vector<double> source_mass;         // cells: each source cell's mass
  std::vector<std::vector<double>> plans;  // cells x cells each
};
CoarseLevel coarse_level(PreparedProblem& pb, const Options& options, Result& result);
// Level (3): the starting support lifted from level.plans[which]. With `last` the level's
// quantization and that plan move into the start (the level is spent); otherwise they are copied
// (O(n + k + cells^2)), so that the starts can be lifted one at a time and only one support is
// held at once.
SparseStart lift_coarse_level(PreparedProblem& pb,
                              const Options& options,
                              CoarseLevel& level,
                              std::size_t which,
                              bool last,
                              Result& result);
// The full support instead (support_size >= k): every row holds all k columns, with the dense
// loop's starting plan, and nothing to quantize or re-grow.
SparseStart full_start(PreparedProblem& pb, const Options& options, Result& result);

// The fused feature cost on the support's entries (nnz values, CSR order): the dense feature
// cost's entries, or |f_i - g_j|^2 / feature_scale from the features (no n x k values); empty
// when the problem has neither. O(nnz) or O(nnz d) time, OpenMP over rows.
std::vector<double> support_feature_cost(const PreparedProblem& pb, const SupportPlan& support);

// Level (4): the sampled GW iterations on the support from `start` (sparse_loop.cpp), with the
// options of the fine level. Returns the support with its final plan values, its buffers freed;
// fills the loop fields of the result (termination, iterations, log, timings, regrowths).
SupportPlan run_support_iterations(const PreparedProblem& pb,
                                   const Options& fine,
                                   SparseStart start,
                                   Result& result);

// The CUDA implementation on Options::device (cuda/sparse_loop_cuda.cpp). Throws kNotCompiled
// without CUDA, kInvalidArgument without a device.
std::unique_ptr<SupportKernels> make_cuda_support_kernels(const PreparedProblem& problem,
                                                          const Options& options);

// `cells` picks from Rng(seed, stream), assignment by blocks of at most block_bytes of provider
// output. Unreachable pairs count as infinitely far; a node no pick reaches joins cell 0.
Quantization quantize(const DistanceProvider& provider,
                      Index cells,
                      std::uint64_t seed,
                      std::uint64_t stream,
                      std::size_t block_bytes);

// The sparse path from a prepared problem to a finished Result (plan_topk, matching, masses,
// marginal errors, loss estimate, timings, log). Throws kInvalidArgument for options it does not
// support (partial_mass, lambda_ema, a given dense initial plan).
void run_sparse_solve(PreparedProblem& problem, const Options& options, Result& result);

// The strategy of the coarse level's dense solve, for `options` (the coarse level's own: support
// dense, their given marks dropped here). choose_strategy's, except on CUDA: a coarse problem the
// CPU would solve exactly runs there, since the sampled entropic loop on the device is faster per
// coarse solve (0.6 s against 3.3 s at 2,000 cells, 16 cores, H200) but its blurrier coarse plan
// costs the fine level twice the iterations and 8x the column marginal error (bench/RESULTS.md,
// "GPU"), so the whole solve is slower and worse. `options.backend` is set to the chosen one.
Strategy coarse_level_strategy(const Problem& coarse, Options& options);

// Cells per side that the sparse path uses for an n x k problem (Options::support_cells resolved).
Index resolved_support_cells(Index n, Index k, const Options& options);

}  // namespace gw::detail
