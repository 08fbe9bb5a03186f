// The sparse-support path from a prepared problem to a finished Result (sparse_impl.h has the
// levels): the fine level's options, the levels in order, then level (5): the plan pruned to
// support_size entries per row, scaled onto the marginals and its loss estimated with the steps
// every path shares (scale_csr_to_marginals, estimate_loss_in_blocks).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <omp.h>

#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "sampling/sampling.h"
#include "solver/solver_impl.h"
#include "solver/sparse/sparse_impl.h"

namespace gw::detail {

namespace {

// The fine level's stopping tests start after this many iterations, with at least this patience.
constexpr int kFineMinIterations = 10;
constexpr int kFinePatience = 5;
// Inner Sinkhorn iterations of the fine level's polishing iterations at most: the marginal
// scaling after the loop puts the rows on their marginals exactly, so the polishing solves need
// not (each of the 100 default iterations costs two exponentials per support entry).
constexpr int kFinePolishSinkhorn = 20;
// Marginal scaling of the returned plan: its tolerance and sweep limit.
constexpr double kScaleTolerance = 1e-9;
constexpr int kScaleSweeps = 200;

// The fine level continues where the coarse level's annealing ended: epsilon stays at
// epsilon_final (starting it at epsilon again would first blur the coarse plan's structure, then
// spend the whole decay re-sharpening it), and since it starts near its optimum its stopping tests
// apply early (kFineMinIterations) with a plateau patience of one re-growth period (at least
// kFinePatience iterations). A full support runs the dense loop's schedule as given.
Options fine_options(const Options& options, bool full_support) {
  Options fine = options;
  if (full_support) {
    fine.support_regrow_every = 0;  // the support is already everything
    return fine;
  }
  fine.epsilon = options.resolved_epsilon_final();
  fine.epsilon_final = fine.epsilon;
  fine.min_iterations = std::min<int>(options.min_iterations, kFineMinIterations);
  fine.plateau_patience = std::min(options.resolved_plateau_patience(),
                                   std::max(options.support_regrow_every, kFinePatience));
  fine.polish_sinkhorn_iterations =
      std::min<int>(options.polish_sinkhorn_iterations, kFinePolishSinkhorn);
  if (options.progress) {
    fine.progress = [&options](const Progress& p) {
      Progress at = p;
      at.level = 2;
      at.levels = 2;
      return options.progress(at);
    };
  }
  return fine;
}

// Fine iterations each coarse start runs before the starts are compared: one re-growth period
// and one more iteration (the sampled cost of the last ones decides).
constexpr int kStartProbeIterations = 6;

// With several coarse plans (the coarse solve's and its orientation candidates', coarse_level),
// each is lifted and runs kStartProbeIterations fine iterations, one at a time (one support held
// at once, as without candidates), and the one whose last sampled cost
// (Result::gw_cost_estimate) is lowest is chosen: a mirrored map's fine cost was 1.15-1.75x the
// true one's on the meshes of bench/peers/real_shapes.py, well above the estimate's noise. The
// chosen plan is lifted again and runs the whole fine level. The probes' costs go into the
// coarse records of Result::starts (objective), and Result::start_chosen names the chosen one.
std::size_t choose_start(PreparedProblem& pb,
                         const Options& options,
                         const Options& fine,
                         CoarseLevel& level,
                         Result& result) {
  if (level.plans.size() < 2) return 0;
  ScopedPhase phase(result.timings, "start_probes");
  Options probe = fine;
  probe.max_iterations = std::min<int>(fine.max_iterations, kStartProbeIterations);
  probe.min_iterations = probe.max_iterations;
  probe.polish_iterations = 0;
  probe.progress = nullptr;
  std::vector<std::size_t> records;  // the records of the plans that were kept, in order
  for (std::size_t r = 0; r < result.starts.size(); ++r)
    if (result.starts[r].stopped.empty()) records.push_back(r);
  GW_CHECK(records.size() == level.plans.size(),
           "sparse starts: " << records.size() << " records for " << level.plans.size()
                             << " coarse plans");
  std::size_t best = 0;
  double best_cost = std::numeric_limits<double>::infinity();
  for (std::size_t s = 0; s < level.plans.size(); ++s) {
    Stopwatch watch;
    Result scratch;
    SparseStart start = lift_coarse_level(pb, options, level, s, /*last=*/false, scratch);
    run_support_iterations(pb, probe, std::move(start), scratch);
    StartRecord& record = result.starts[records[s]];
    record.objective = scratch.gw_cost_estimate;
    record.seconds += watch.seconds();
    if (scratch.gw_cost_estimate < best_cost) {
      best_cost = scratch.gw_cost_estimate;
      best = s;
    }
  }
  result.start_chosen = static_cast<int>(records[best]);
  return best;
}

// The plan pruned to its `width` heaviest entries per row (ties by column; columns ascending
// within a row), so that the scaling works on the entries the caller gets back.
SupportPlan prune(const SupportPlan& plan, int width) {
  const Index n = plan.n;
  SupportPlan out;
  out.n = n;
  out.k = plan.k;
  out.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (Index i = 0; i < n; ++i)
    out.offsets[i + 1] =
        out.offsets[i] + std::min<Offset>(width, plan.offsets[i + 1] - plan.offsets[i]);
  out.cols.resize(out.offsets[n]);
  out.values.resize(out.offsets[n]);
#pragma omp parallel
  {
    std::vector<Offset> order;
#pragma omp for schedule(dynamic, 256)
    for (Index i = 0; i < n; ++i) {
      const Offset begin = plan.offsets[i], size = plan.offsets[i + 1] - begin;
      order.resize(size);
      std::iota(order.begin(), order.end(), begin);
      const Offset kept = std::min<Offset>(width, size);
      std::partial_sort(order.begin(), order.begin() + kept, order.end(), [&](Offset x, Offset y) {
        return plan.values[x] > plan.values[y] || (plan.values[x] == plan.values[y] && x < y);
      });
      std::sort(order.begin(), order.begin() + kept);
      for (Offset t = 0; t < kept; ++t) {
        out.cols[out.offsets[i] + t] = plan.cols[order[t]];
        out.values[out.offsets[i] + t] = plan.values[order[t]];
      }
    }
  }
  return out;
}

CsrPlan csr_of(SupportPlan& s) { return {s.n, s.k, s.offsets, s.cols, s.values}; }

// The returned plan's matching, mass and marginal errors into the result, and the plan itself
// into Result::plan_topk.
void finish_output(SupportPlan& out, const PreparedProblem& pb, Result& result) {
  const Index n = pb.n, k = pb.k;
  result.matching.assign(n, 0);
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    Offset best = -1;
    for (Offset e = out.offsets[i]; e < out.offsets[i + 1]; ++e)
      if (best < 0 || out.values[e] > out.values[best]) best = e;
    if (best >= 0) result.matching[i] = out.cols[best];
  }
  std::vector<double> col(k, 0.0);
  double row_error = 0.0, mass = 0.0;
  for (Index i = 0; i < n; ++i) {
    double row = 0.0;
    for (Offset e = out.offsets[i]; e < out.offsets[i + 1]; ++e) {
      row += out.values[e];
      col[out.cols[e]] += out.values[e];
    }
    row_error += std::abs(row - pb.p[i]);
    mass += row;
  }
  double col_error = 0.0;
  for (Index j = 0; j < k; ++j) col_error += std::abs(col[j] - pb.q[j]);
  result.plan_mass = mass;
  result.row_marginal_error = row_error;
  result.column_marginal_error = col_error;
  result.plan_topk.rows = n;
  result.plan_topk.cols = k;
  result.plan_topk.row_offsets = std::move(out.offsets);
  result.plan_topk.col_indices = std::move(out.cols);
  result.plan_topk.values = std::move(out.values);
}

// The loss of the returned CSR plan, with the estimator every path shares: pairs from the CSR
// sampler (the dense sampler's draws), T dy by the rows' entries.
LossEstimate support_loss(const PreparedProblem& pb, const CsrMatrix<double>& plan, int anchors,
                          std::uint64_t seed) {
  const Index n = plan.rows, k = plan.cols;
  std::vector<double> r(n, 0.0), c(k, 0.0);
  for (Index i = 0; i < n; ++i)
    for (Offset e = plan.row_offsets[i]; e < plan.row_offsets[i + 1]; ++e) {
      r[i] += plan.values[e];
      c[plan.col_indices[e]] += plan.values[e];
    }
  Rng rng(seed, /*stream=*/2);
  const std::vector<double> uniforms = draw_sampling_uniforms(rng, anchors);
  LossPlan lp;
  lp.n = n;
  lp.k = k;
  lp.rows = r;
  lp.cols = c;
  lp.pairs = sample_csr_anchor_pairs(plan.row_offsets, plan.col_indices, plan.values, r, uniforms);
  // A row's entries gather their columns' b contiguous distances (vectorized over the anchors).
  lp.times = [&](const double* dy, int b, double* out) {
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i) {
      double* o = out + static_cast<std::size_t>(i) * b;
      for (Offset e = plan.row_offsets[i]; e < plan.row_offsets[i + 1]; ++e) {
        const double* y = dy + static_cast<std::size_t>(plan.col_indices[e]) * b;
        const double w = plan.values[e];
#pragma omp simd
        for (int t = 0; t < b; ++t) o[t] += w * y[t];
      }
    }
  };
  return estimate_loss_in_blocks(*pb.source, *pb.target, lp, 0.0, 0.0);
}

}  // namespace

void run_sparse_solve(PreparedProblem& pb, const Options& options, Result& result) {
  GW_CHECK(pb.source != nullptr,
           "support = sparse needs geometry on both sides (fused_weight = 1 is plain OT on a "
           "dense feature cost; use support = dense)");
  GW_CHECK(!options.partial_mass, "partial_mass is not supported with support = sparse");
  GW_CHECK(options.lambda_ema == 0.0, "lambda_ema is not supported with support = sparse");
  GW_CHECK(pb.initial_plan.empty(),
           "a dense initial plan cannot start the sparse path (it has n x k entries); leave "
           "Problem::initial_plan unset or use support = dense");
  result.backend = options.backend;
  result.threads = available_threads();
  set_flush_denormals_all_threads(result.threads);

  // (1) - (3), or the whole of n x k when support_size >= k: the dense loop's start and schedule
  // on a CSR support (nothing to quantize or re-grow; the sparse path then runs the dense loop's
  // algorithm, which the tests compare entry by entry).
  const int width = options.support_size;
  const bool full_support = width >= pb.k;
  const Options fine = fine_options(options, full_support);
  SparseStart start;
  if (full_support) {
    start = full_start(pb, options, result);
  } else {
    CoarseLevel level = coarse_level(pb, options, result);
    const std::size_t chosen = choose_start(pb, options, fine, level, result);
    start = lift_coarse_level(pb, options, level, chosen, /*last=*/true, result);
  }
  // (4) the sampled GW iterations on the support.
  SupportPlan plan = run_support_iterations(pb, fine, std::move(start), result);

  // (5) pruning, marginals, matching, loss.
  SupportPlan out;
  {
    ScopedPhase phase(result.timings, "output");
    out = prune(plan, width);
    result.support_nnz = plan.nnz();
    plan = SupportPlan{};
  }
  const bool balanced = std::isinf(options.rho_a) && std::isinf(options.rho_b);
  if (options.round_marginals && balanced && result.termination != Termination::kNonFinite) {
    ScopedPhase phase(result.timings, "round");
    scale_csr_to_marginals(csr_of(out), pb.p, pb.q, kScaleTolerance, kScaleSweeps);
  }
  {
    ScopedPhase phase(result.timings, "output");
    finish_output(out, pb, result);
  }
  if (options.compute_gw_loss && result.plan_mass > 0.0 && std::isfinite(result.plan_mass)) {
    ScopedPhase phase(result.timings, "loss");
    const LossEstimate estimate =
        support_loss(pb, result.plan_topk, options.loss_anchors, options.seed);
    result.gw_loss = estimate.value;
    result.gw_loss_stderr = estimate.standard_error;
    result.gw_loss_exact = false;
  }
}

}  // namespace gw::detail
