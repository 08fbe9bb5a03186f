// The sparse path's starting support (levels 2 and 3, sparse_impl.h): the coarse alignment of the
// cells by a sub-solve, and each source node's candidate targets lifted from it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>

#include <omp.h>

#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "solver/solver_impl.h"
#include "solver/sparse/sparse_impl.h"

namespace gw::detail {

namespace {

// Share of a source cell's coarse-plan mass whose target cells enter its nodes' supports.
constexpr double kCoarseMassShare = 0.95;
// Provider output per quantization block.
constexpr std::size_t kQuantizeBlockBytes = std::size_t{64} << 20;

}  // namespace

// Row i's candidate list -> CSR, then every column no row reaches is attached to `cover_row(j)`
// (so the balanced Sinkhorn problem is feasible). `lists` is n x width, unused slots -1; values
// (same layout) are the starting plan entries.
SupportPlan build_support(Index n,
                          Index k,
                          int width,
                          const std::vector<Index>& lists,
                          const std::vector<double>& values,
                          const std::function<Index(Index)>& cover_row,
                          std::vector<std::pair<Index, Index>> additional) {
  std::vector<char> reached(k, 0);
  for (Index c : lists)
    if (c >= 0) reached[c] = 1;
  for (const auto& entry : additional) reached[entry.second] = 1;
  std::vector<std::pair<Index, Index>> extra = std::move(additional);  // (row, column), grouped by row below
  for (Index j = 0; j < k; ++j)
    if (!reached[j]) extra.emplace_back(cover_row(j), j);
  std::sort(extra.begin(), extra.end());
  SupportPlan s;
  s.n = n;
  s.k = k;
  s.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (Index i = 0; i < n; ++i) {
    Offset count = 0;
    for (int t = 0; t < width; ++t) count += lists[static_cast<std::size_t>(i) * width + t] >= 0;
    s.offsets[i + 1] = count;
  }
  for (const auto& [i, j] : extra) ++s.offsets[i + 1];
  for (Index i = 0; i < n; ++i) s.offsets[i + 1] += s.offsets[i];
  s.cols.resize(s.offsets[n]);
  s.values.resize(s.offsets[n]);
  // Rows are filled independently (each owns its range of the arrays); a row's extras are the
  // run of `extra` (sorted by row) that starts at its lower bound.
#pragma omp parallel
  {
    std::vector<std::pair<Index, double>> row;
#pragma omp for schedule(dynamic, 1024)
    for (Index i = 0; i < n; ++i) {
      row.clear();
      for (int t = 0; t < width; ++t) {
        const std::size_t at = static_cast<std::size_t>(i) * width + t;
        if (lists[at] >= 0) row.emplace_back(lists[at], values[at]);
      }
      auto e = std::lower_bound(extra.begin(), extra.end(), std::make_pair(i, Index{-1}));
      for (; e != extra.end() && e->first == i; ++e) row.emplace_back(e->second, 0.0);
      std::sort(row.begin(), row.end());
      Offset at = s.offsets[i];
      for (const auto& [j, v] : row) {
        s.cols[at] = j;
        s.values[at] = v;
        ++at;
      }
    }
  }
  s.transpose = transpose_support(s.view());
  return s;
}

namespace {

// The fused feature cost between cells, in the fine problem's units: the fine cost's mass-weighted
// mean over each pair of cells. From a dense feature cost directly; from features without the
// n x k values, as |mean f_a - mean g_b|^2 + var f_a + var g_b over the fine scale (the mean of
// |f_i - g_j|^2 over the pairs, for independent draws from the two cells). Unset without either.
std::optional<DenseMatrix<double>> coarse_feature_cost(const PreparedProblem& pb,
                                                       const Quantization& src,
                                                       const Quantization& tgt,
                                                       const std::vector<double>& pc,
                                                       const std::vector<double>& qc) {
  const Index cells = src.cells, n = pb.n, k = pb.k;
  std::vector<double> cost(static_cast<std::size_t>(cells) * cells, 0.0);
  if (pb.source_features != nullptr) {
    const std::int64_t d = pb.source_features->cols;
    // Each cell's mass-weighted mean feature and total variance (sum over the d dimensions).
    auto moments = [&](const DenseMatrix<double>& x, const std::vector<Index>& cell,
                       const std::vector<double>& w, const std::vector<double>& mass,
                       std::vector<double>& mean, std::vector<double>& variance) {
      mean.assign(static_cast<std::size_t>(cells) * d, 0.0);
      variance.assign(cells, 0.0);
      for (Index i = 0; i < x.rows; ++i) {
        const double share = mass[cell[i]] > 0.0 ? w[i] / mass[cell[i]] : 0.0;
        for (std::int64_t c = 0; c < d; ++c) mean[cell[i] * d + c] += share * x.values[i * d + c];
      }
      for (Index i = 0; i < x.rows; ++i) {
        const double share = mass[cell[i]] > 0.0 ? w[i] / mass[cell[i]] : 0.0;
        for (std::int64_t c = 0; c < d; ++c) {
          const double diff = x.values[i * d + c] - mean[cell[i] * d + c];
          variance[cell[i]] += share * diff * diff;
        }
      }
    };
    std::vector<double> f, fv, g, gv;
    moments(*pb.source_features, src.cell, pb.p, pc, f, fv);
    moments(*pb.target_features, tgt.cell, pb.q, qc, g, gv);
    const double scale = pb.feature_scale > 0.0 ? pb.feature_scale : 1.0;
    for (Index a = 0; a < cells; ++a)
      for (Index b = 0; b < cells; ++b) {
        double sum = fv[a] + gv[b];
        for (std::int64_t c = 0; c < d; ++c) {
          const double diff = f[a * d + c] - g[b * d + c];
          sum += diff * diff;
        }
        cost[static_cast<std::size_t>(a) * cells + b] = sum / scale;
      }
  } else if (pb.feature_cost != nullptr) {
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < k; ++j)
        cost[static_cast<std::size_t>(src.cell[i]) * cells + tgt.cell[j]] +=
            pb.p[i] * pb.q[j] * (*pb.feature_cost)(i, j);
    for (Index a = 0; a < cells; ++a)
      for (Index b = 0; b < cells; ++b)
        if (pc[a] > 0.0 && qc[b] > 0.0) cost[static_cast<std::size_t>(a) * cells + b] /= pc[a] * qc[b];
  } else {
    return std::nullopt;
  }
  return DenseMatrix<double>(cells, cells, std::move(cost));
}

// (2) The coarse alignment: a sub-solve of the cells' pick-to-pick distances with the cells'
// masses as marginals (and the cells' feature cost when the problem is fused), under the coarse
// level's strategy (coarse_level_strategy); from `initial_plan` (cells x cells) when not empty.
Result align_cells(const PreparedProblem& pb,
                   const Options& options,
                   const Quantization& src,
                   const Quantization& tgt,
                   const std::vector<double>& pc,
                   const std::vector<double>& qc,
                   std::vector<double> initial_plan) {
  const Index cells = src.cells;
  Problem problem;
  if (!initial_plan.empty()) {
    problem.initial_plan = DenseMatrix<double>(cells, cells, std::move(initial_plan));
  }
  if (options.fused_weight > 0.0) problem.feature_cost = coarse_feature_cost(pb, src, tgt, pc, qc);
  problem.source = Geometry::from_distances(DenseMatrix<float>(cells, cells, src.distances));
  problem.target = Geometry::from_distances(DenseMatrix<float>(cells, cells, tgt.distances));
  problem.source_weights = pc;
  problem.target_weights = qc;
  Options coarse_options = options;
  coarse_options.support = Support::kDense;
  coarse_options.support_feature_candidates = 0;  // a dense coarse plan (with a dense feature cost)
  coarse_options.compute_gw_loss = options.restarts > 1;  // probes rank by loss
  coarse_options.plan_format = PlanFormat::kDense;
  coarse_options.multiscale = false;
  // The caller's progress callback sees the coarse level as level 1 of 2.
  coarse_options.progress = nullptr;
  if (options.progress) {
    coarse_options.progress = [&options](const Progress& p) {
      Progress at = p;
      at.level = 1;
      at.levels = 2;
      return options.progress(at);
    };
  }
  coarse_options.num_anchors = std::min<int>(options.num_anchors, static_cast<int>(cells));
  // The coarse plan only seeds the fine level: the exact solver stops at float32's noise floor
  // (no float64 finish, which took 0.8 s of the 2,000-cell coarse solve of the 100,000 x
  // 100,000 spiral on 2 cores and moves the seed only in its last digits).
  coarse_options.exact_tolerance = std::max(options.exact_tolerance.value(), kExactFloat32Tolerance);
  const Strategy strategy = coarse_level_strategy(problem, coarse_options);
  Result coarse = solve_with(problem, coarse_options, strategy);
  GW_CHECK_CODE(coarse.termination != Termination::kNonFinite,
                ErrorCode::kInternal,
                "the coarse " << cells << " x " << cells
                              << " alignment of the sparse path failed: " << coarse.message);
  return coarse;
}

// (3) The starting support from the coarse plan (cells x cells, consumed).
SparseStart lift_coarse_plan(PreparedProblem& pb,
                             const Options& options,
                             Quantization src,
                             Quantization tgt,
                             const std::vector<double>& pc,
                             std::vector<double> coarse_plan,
                             Result& result) {
  const Index n = pb.n, k = pb.k, cells = src.cells;
  // (3) the starting support. Source cell a spreads its row of the coarse plan over the target
  // cells that hold kCoarseMassShare of it (heaviest first, at most support_size cells), and each
  // of its nodes gives cell b a number of slots proportional to Tc(a, b): s_ab of its
  // support_size candidates. The nodes of cell a take consecutive runs of s_ab members of b
  // (cyclically, by their rank in a), so the members of b are covered evenly and the support
  // holds the lifted coarse plan's structure: T0_ij = Tc(a, b) (p_i / pc_a) / s_ab on those
  // slots has (nearly) the target marginals, which keeps the balanced problem on the support
  // feasible.
  Rng rng(options.seed, /*stream=*/7);
  const CellIndex target_index = index_cells(tgt, k, rng);
  const CellIndex source_index = index_cells(src, n, rng);
  const int width = options.support_size;
  SupportPlan support;
  std::vector<Index> backbone;
  {
    ScopedPhase phase(result.timings, "support");
    std::vector<std::vector<std::pair<Index, int>>> slots(cells);
#pragma omp parallel for schedule(dynamic, 16)
    for (Index a = 0; a < cells; ++a) {
      const double* row = &coarse_plan[static_cast<std::size_t>(a) * cells];
      std::vector<Index> order(cells);
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](Index x, Index y) {
        return row[x] > row[y] || (row[x] == row[y] && x < y);
      });
      const double total = std::accumulate(row, row + cells, 0.0);
      double taken = 0.0;
      int count = 0;
      while (count < std::min<Index>(cells, width) &&
             (count == 0 || taken < kCoarseMassShare * total)) {
        taken += row[order[count++]];
      }
      // Largest-remainder apportionment of the width over the taken cells, at least one slot each.
      std::vector<std::pair<Index, int>> out;
      std::vector<std::pair<double, int>> remainders;
      int used = 0;
      for (int t = 0; t < count; ++t) {
        const double exact = taken > 0.0 ? width * row[order[t]] / taken : 0.0;
        const int whole = std::max(1, static_cast<int>(exact));
        out.emplace_back(order[t], whole);
        used += whole;
        remainders.emplace_back(exact - whole, t);
      }
      std::sort(remainders.begin(), remainders.end(), std::greater<>());
      for (std::size_t t = 0; used < width && t < remainders.size(); ++t, ++used) {
        ++out[remainders[t].second].second;
      }
      slots[a] = std::move(out);
    }
    std::vector<Index> rank(n);
    for (Index a = 0; a < cells; ++a)
      for (Offset t = source_index.offsets[a]; t < source_index.offsets[a + 1]; ++t)
        rank[source_index.members[t]] = static_cast<Index>(t - source_index.offsets[a]);
    std::vector<Index> lists(static_cast<std::size_t>(n) * width, -1);
    std::vector<double> values(lists.size(), 0.0);
#pragma omp parallel for schedule(dynamic, 256)
    for (Index i = 0; i < n; ++i) {
      const Index a = src.cell[i];
      Index* row = &lists[static_cast<std::size_t>(i) * width];
      double* vals = &values[static_cast<std::size_t>(i) * width];
      int count = 0;
      for (const auto& [b, share] : slots[a]) {
        const Offset begin = target_index.offsets[b];
        const Offset size = target_index.offsets[b + 1] - begin;
        const int take = static_cast<int>(std::min<Offset>({share, size, width - count}));
        if (take <= 0) continue;
        const double lift = coarse_plan[static_cast<std::size_t>(a) * cells + b] *
                            (pc[a] > 0.0 ? pb.p[i] / pc[a] : 0.0) / take;
        const Offset start = (static_cast<Offset>(rank[i]) * share) % size;
        for (int t = 0; t < take; ++t) {
          row[count] = target_index.members[begin + (start + t) % size];
          vals[count++] = lift;
        }
      }
    }
    // An uncovered target joins a row of the source cell that couples most to its cell.
    std::vector<Index> best_source_cell(cells, 0);
    for (Index b = 0; b < cells; ++b) {
      double best = -1.0;
      for (Index a = 0; a < cells; ++a) {
        const double t = coarse_plan[static_cast<std::size_t>(a) * cells + b];
        if (t > best) {
          best = t;
          best_source_cell[b] = a;
        }
      }
    }
    auto cover = [&](Index j) {
      const Index a = best_source_cell[tgt.cell[j]];
      const Offset size = source_index.offsets[a + 1] - source_index.offsets[a];
      if (size == 0) return static_cast<Index>((static_cast<Offset>(j) * n) / k);
      return source_index.members[source_index.offsets[a] + j % size];
    };
    const int backbone_width = width / kBackboneStride;
    backbone.assign(static_cast<std::size_t>(n) * backbone_width, -1);
    for (Index i = 0; i < n; ++i)
      for (int t = 0; t < backbone_width; ++t)
        backbone[static_cast<std::size_t>(i) * backbone_width + t] =
            lists[static_cast<std::size_t>(i) * width + t * kBackboneStride];
    support = build_support(n, k, width, lists, values, cover);
  }

  SparseStart start;
  start.support = std::move(support);
  start.backbone = std::move(backbone);
  start.target_cells = std::move(tgt);
  start.target_index = target_index;
  return start;
}

}  // namespace

// (1) quantization, (2) the coarse alignment and its orientation candidates.
CoarseLevel coarse_level(PreparedProblem& pb, const Options& options, Result& result) {
  const Index n = pb.n, k = pb.k;
  const Index cells = resolved_support_cells(n, k, options);
  Quantization src, tgt;
  {
    ScopedPhase phase(result.timings, "quantize");
    src = quantize(*pb.source, cells, options.seed, /*stream=*/5, kQuantizeBlockBytes);
    tgt = quantize(*pb.target, cells, options.seed, /*stream=*/6, kQuantizeBlockBytes);
  }
  std::vector<double> pc(cells, 0.0), qc(cells, 0.0);
  for (Index i = 0; i < n; ++i) pc[src.cell[i]] += pb.p[i];
  for (Index j = 0; j < k; ++j) qc[tgt.cell[j]] += pb.q[j];
  Result coarse;
  {
    ScopedPhase phase(result.timings, "coarse");
    coarse = align_cells(pb, options, src, tgt, pc, qc, {});
  }
  result.multiscale_used = true;
  result.multiscale_size = cells;
  result.multiscale_iterations = coarse.iterations;
  result.multiscale_seconds = coarse.total_seconds;
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  result.starts.push_back(
      {"coarse", coarse.gw_loss, kNaN, coarse.iterations, coarse.total_seconds, kNaN, "", ""});

  // The orientation candidates (handedness.cpp says why): a coarse solve from each candidate
  // whose map disagrees with the kept coarse plan. Only with a coarse plan to argue with (at
  // least 8 cells; not with a fused feature cost, which tells left from right by itself).
  std::vector<std::vector<double>> plans;
  plans.push_back(std::move(coarse.plan));
  if (cells >= 8 && options.fused_weight == 0.0 && coarse.termination != Termination::kCancelled) {
    ScopedPhase phase(result.timings, "coarse_orientation");
    const CoarseOrientation orientation(src, tgt, pc, qc, options);
    int number = 0;
    for (std::vector<double>& initial : orientation.starts_against(plans.front())) {
      Result other = align_cells(pb, options, src, tgt, pc, qc, std::move(initial));
      result.multiscale_iterations += other.iterations;
      result.multiscale_seconds += other.total_seconds;
      StartRecord record{"coarse-spectral-" + std::to_string(++number), other.gw_loss, kNaN,
                         other.iterations, other.total_seconds, kNaN, "", ""};
      if (other.termination == Termination::kCancelled) {
        record.stopped = "cancelled";
        result.starts.push_back(std::move(record));
        break;
      }
      bool known = false;
      for (const std::vector<double>& plan : plans) {
        known = known || orientation.same(plan, other.plan);
      }
      if (known) {
        record.stopped = "its coarse plan agrees with an earlier one";
      } else {
        plans.push_back(std::move(other.plan));
      }
      result.starts.push_back(std::move(record));
    }
  }
  CoarseLevel level;
  level.source = std::move(src);
  level.target = std::move(tgt);
  level.source_mass = std::move(pc);
  level.plans = std::move(plans);
  return level;
}

SparseStart lift_coarse_level(PreparedProblem& pb,
                              const Options& options,
                              CoarseLevel& level,
                              std::size_t which,
                              bool last,
                              Result& result) {
  GW_CHECK(which < level.plans.size(),
           "lift_coarse_level: plan " << which << " of " << level.plans.size());
  if (last) {
    return lift_coarse_plan(pb, options, std::move(level.source), std::move(level.target),
                            level.source_mass, std::move(level.plans[which]), result);
  }
  return lift_coarse_plan(pb, options, level.source, level.target, level.source_mass,
                          level.plans[which], result);
}

// The full support: every row holds all k columns, with the dense loop's starting plan.
SparseStart full_start(PreparedProblem& pb, const Options& options, Result& result) {
  const Index n = pb.n, k = pb.k;
  std::vector<double> initial;
  if (options.initial_plan == InitialPlan::kDistanceProfiles) {
    ScopedPhase phase(result.timings, "init");
    initial = distance_profile_plan(pb, options);
  } else {
    initial.resize(static_cast<std::size_t>(n) * k);
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < k; ++j)
        initial[static_cast<std::size_t>(i) * k + j] = pb.p[i] * pb.q[j];
  }
  std::vector<Index> lists(initial.size());
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < k; ++j) lists[static_cast<std::size_t>(i) * k + j] = j;
  SparseStart start;
  {
    ScopedPhase phase(result.timings, "support");
    start.support =
        build_support(n, k, static_cast<int>(k), lists, initial, [](Index) { return 0; });
  }
  return start;
}

}  // namespace gw::detail
