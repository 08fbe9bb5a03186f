// choose_strategy: the rules of strategy.h and the cost model behind rule 4.
//
// The cost model predicts the seconds of each candidate from the shapes and options alone, as
// work units times a rate measured on the spiral benchmark (bench/RESULTS.md, "The dispatcher's
// cost model", which has the measurements and the command that refits them):
//   exact          starts x n k (n + k) multiply-adds of the dense gradient per conditional-
//                  gradient run, at kExactWorkPerSecond (the three-start solve of 400 x 500 to
//                  1,000 x 1,250, and the one-start solve of 2,000 x 2,500);
//   sampled dense  I_dense iterations over the n k plan: per entry and iteration the cost GEMM
//                  (2 M flops), the inner Sinkhorn iterations and the momentum step, then the
//                  loss estimate's n k loss_anchors product;
//   sampled sparse the coarse cells x cells solve (itself priced by this model), then I_sparse
//                  iterations over the support's n support_size entries, each entry costing its
//                  cost row (M anchors gathered), the inner Sinkhorn iterations and the momentum.
// Only the ratio of two predictions decides, so the rates need to be right in proportion, not in
// absolute terms on every machine. CUDA rates come from the H100/H200 runs of the same benchmark.
#include "solver/strategy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "core/error.h"
#include "core/json.h"
#include "solver/solve.h"
#include "solver/solver_impl.h"
#include "solver/sparse/sparse_impl.h"

namespace gw {

namespace {

// Auto keeps the dense support only when its estimate takes at most this share of the budget
// (the rest is headroom for the allocator and the caller's own data).
constexpr double kDenseComfort = 0.5;
// Auto keeps a dense plan whose whole sampled run is predicted at no more than this many seconds
// even where the sparse support is predicted faster: the saving is a fraction of a second, and the
// dense plan is the loop's own (every pair may carry mass, the plan a caller of a small problem
// expects), where the sparse support restricts each row to support_size candidates.
constexpr double kSmallDenseSeconds = 1.0;

// ------------------------------------------------------------------------------- cost model
// Rates of the calibration machine (2 cores); see the file comment.
struct Rates {
  double exact_work_per_second;  // n k (n + k) multiply-adds per second, one start
  double dense_entry_seconds;    // per plan entry and iteration, besides the GEMM and Sinkhorn
  double sinkhorn_entry_seconds; // per entry and inner Sinkhorn iteration (dense)
  double gemm_flops_per_second;  // the cost and loss GEMMs
  double sparse_entry_seconds;   // per support entry and iteration, besides cost and Sinkhorn
  double sparse_sinkhorn_seconds;  // per support entry and inner Sinkhorn iteration
  double sparse_anchor_seconds;    // per support entry and anchor (the gathered cost row)
  double sparse_fixed_seconds;     // quantization, support building, output and loss, per node
};
// CPU: fitted to one-thread CPU times of `gwalign bench spiral` (dense, sparse and exact from 400 x
// 500 to 20,000 x 25,000; bench/RESULTS.md, "The dispatcher's cost model") and scaled to two
// threads: the dense loop ~2.5e-9 s per plan entry and iteration at M = 50 (GEMMs at ~1.5e11
// flop/s), the sparse loop ~5e-8 s per support entry and iteration, the exact solver ~5e9
// multiply-adds per second.
// CUDA: from the H100/H200 runs of the same benchmark (the dense device loop 0.17 s for 133
// iterations of 4,000 x 5,000; the sparse kernels ~1.2 s at 10^6 x 10^6).
constexpr Rates kCpuRates{5e9, 0.6e-9, 0.4e-9, 1.5e11, 1.5e-8, 5e-9, 4e-10, 3e-6};
constexpr Rates kCudaRates{0.0, 1.5e-11, 1e-11, 5e13, 3e-10, 1e-10, 1e-11, 3e-7};

// Iterations a sampled run is predicted to take: the epsilon decay, two plateau patiences and the
// polishing (the spiral benchmark's runs stop at 130-165 at the defaults), within max_iterations.
double dense_iterations(const Options& o) {
  const double typical = std::min<double>(o.epsilon_decay_iterations, o.max_iterations) +
                         2.0 * o.resolved_plateau_patience() + o.polish_iterations;
  return std::clamp(typical, static_cast<double>(std::min<int>(o.min_iterations, o.max_iterations)),
                    static_cast<double>(o.max_iterations));
}
// The sparse fine level starts at epsilon_final with short stopping tests (sparse_impl.h): it ends
// after 13-55 iterations on the spiral benchmark.
double sparse_iterations(const Options& o) {
  return std::min<double>(40.0 + o.polish_iterations, o.max_iterations);
}

double exact_seconds(double n, double k, const Options& o, const Rates& r) {
  const double work = n * k * (n + k);
  // Starts beyond the first run only while they fit the start budget (solver/exact/exact.cpp).
  const double one = work / r.exact_work_per_second;
  const double starts =
      std::max(1.0, std::min<double>(o.starts, std::floor(o.start_time_budget / std::max(one, 1e-12))));
  return starts * one;
}

// The anchors of a warm-up or polishing iteration (Options::many_anchors), as a double.
double many_anchors(double n, double k, const Options& o) {
  return o.many_anchors(static_cast<Index>(std::min(n, 2e9)), static_cast<Index>(std::min(k, 2e9)));
}

double dense_seconds(double n, double k, const Options& o, const Rates& r) {
  const double entries = n * k;
  const double sinkhorn = r.sinkhorn_entry_seconds, gemm = 2.0 / r.gemm_flops_per_second;
  const double per_iteration =
      entries * (r.dense_entry_seconds + sinkhorn * o.sinkhorn_max_iterations + gemm * o.num_anchors);
  // Warm-up and polishing iterations draw many anchors; the polishing ones also solve their inner
  // problems tightly (counted at half their iteration limit: they stop on the tolerance first).
  const double many = many_anchors(n, k, o);
  const double special = entries * ((o.warmup_iterations + o.polish_iterations) * gemm * many +
                                    o.polish_iterations * sinkhorn * 0.5 * o.polish_sinkhorn_iterations);
  const double loss = o.compute_gw_loss ? entries * gemm * o.loss_anchors : 0.0;
  return dense_iterations(o) * per_iteration + special + loss;
}

double sparse_seconds(double n, double k, const Options& o, const Rates& r, Index cells) {
  const double entries = n * std::min<double>(o.support_size, k) + k;
  const double per_iteration =
      entries * (r.sparse_entry_seconds + r.sparse_sinkhorn_seconds * o.sinkhorn_max_iterations +
                 r.sparse_anchor_seconds * o.num_anchors);
  // The fine level's polishing iterations: many anchors, at most 20 inner iterations each.
  const double polish =
      o.polish_iterations * entries *
      (r.sparse_anchor_seconds * many_anchors(n, k, o) + r.sparse_sinkhorn_seconds * 20.0);
  const double c = static_cast<double>(cells);
  // The coarse level: exact on the CPU up to exact_max_work, the sampled dense loop otherwise.
  const double coarse = c * c * (2.0 * c) <= o.exact_max_work
                            ? exact_seconds(c, c, o, kCpuRates)
                            : dense_seconds(c, c, o, r);
  return coarse + sparse_iterations(o) * per_iteration + polish + r.sparse_fixed_seconds * (n + k);
}

// ------------------------------------------------------------------------------- the rules
std::string human_bytes(double bytes) {
  char text[32];
  if (bytes >= 1073741824.0) {
    std::snprintf(text, sizeof(text), "%.2f GiB", bytes / 1073741824.0);
  } else {
    std::snprintf(text, sizeof(text), "%.1f MiB", bytes / 1048576.0);
  }
  return text;
}

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), s < 10.0 ? "%.2g s" : "%.0f s", s);
  return text;
}

bool balanced(const Options& o) {
  return std::isinf(o.rho_a) && std::isinf(o.rho_b) && !o.partial_mass;
}

// Whether a side's distances will be a full matrix (the loss is then exact when affordable).
bool holds_full_matrix(const Geometry& g, const Options& o) {
  switch (g.kind()) {
    case Geometry::Kind::kDistances:
      return true;
    case Geometry::Kind::kProvider:
      return g.provider() && g.provider()->holds_full_matrix();
    case Geometry::Kind::kPoints:
    case Geometry::Kind::kGraph:
      return o.distance_mode.value_or(g.num_nodes() <= o.auto_precomputed_max_nodes
                                          ? DistanceMode::kPrecomputed
                                          : DistanceMode::kLandmark) == DistanceMode::kPrecomputed;
    case Geometry::Kind::kNodes:
    case Geometry::Kind::kNone:
      break;
  }
  return false;
}

// The first reason the exact solver cannot run (empty: none).
std::string exact_blocker(const Options& o) {
  if (!balanced(o)) return "an unbalanced, semi-relaxed or partial problem (rho_a, rho_b, partial_mass)";
  if (o.backend != Backend::kCpu) return "backend cuda (the exact solver runs on the CPU)";
  if (o.support == Support::kSparse) return "support = sparse (the exact solver needs the dense plan)";
  if (o.multiscale) return "multiscale (a sampled-loop warm start)";
  if (o.restarts > 1) return "restart probes (restarts > 1, the sampled loop's)";
  if (o.slack_shared) return "slack_shared (the sampled loop's slack)";
  return "";
}

// The first reason the sparse support cannot run (empty: none).
std::string sparse_blocker(const Problem& problem, const Options& o) {
  if (o.fused_weight >= 1.0) return "fused_weight = 1 (plain OT on a dense feature cost)";
  if (o.partial_mass) return "partial_mass (the sparse path has no partial transport)";
  if (o.lambda_ema > 0.0) return "lambda_ema (the sparse path keeps no cost EMA)";
  if (problem.initial_plan) return "a dense initial plan (Problem::initial_plan is n x k)";
  if (o.multiscale) return "multiscale (the dense loop's warm start; the sparse path has its own)";
  if (o.plan_format.given() && o.plan_format == PlanFormat::kDense)
    return "plan_format = dense (a dense plan was asked for)";
  return "";
}

std::string join(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::string_view name : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

void choose_solver(const Problem& problem,
                   const Options& o,
                   const Candidate& exact,
                   Strategy& s) {
  const std::vector<std::string_view> sampled_given = o.given_sampled_settings();
  const std::vector<std::string_view> exact_given = o.given_exact_settings();
  GW_CHECK(sampled_given.empty() || exact_given.empty(),
           "settings of both solvers were given: " << join(sampled_given) << " (the sampled loop) and "
               << join(exact_given) << " (the exact solver); keep those of one solver");
  const double work = exact_iteration_work(problem.source.num_nodes(), problem.target.num_nodes());
  std::ostringstream why;
  switch (o.solver) {
    case SolverKind::kSampled:
      GW_CHECK(exact_given.empty(), "solver = sampled does not read " << join(exact_given)
                                        << " (settings of the exact solver); drop them or use "
                                           "solver exact or auto");
      s.solver = SolverKind::kSampled;
      s.solver_reason = "requested (solver = sampled)";
      return;
    case SolverKind::kExact:
      GW_CHECK(sampled_given.empty(), "solver = exact does not read " << join(sampled_given)
                                          << " (settings of the sampled loop); drop them or use "
                                             "solver sampled or auto");
      GW_CHECK_CODE(exact.possible, ErrorCode::kUnsupported,
                    "solver = exact does not support " << exact.why_not
                                                       << "; use solver sampled (--solver sampled)");
      s.solver = SolverKind::kExact;
      s.solver_reason = "requested (solver = exact)";
      return;
    case SolverKind::kAuto:
      break;
  }
  if (!exact_given.empty()) {
    GW_CHECK_CODE(exact.possible, ErrorCode::kUnsupported,
                  join(exact_given) << " (a setting of the exact solver) was given, but the exact "
                                       "solver cannot run: "
                                    << exact.why_not << "; drop it or change that");
    s.solver = SolverKind::kExact;
    s.solver_reason = "auto: exact because " + join(exact_given) +
                      (exact_given.size() > 1 ? " (settings of the exact solver) were given"
                                              : " (a setting of the exact solver) was given");
    return;
  }
  if (!sampled_given.empty()) {
    s.solver = SolverKind::kSampled;
    s.solver_reason = "auto: sampled because " + join(sampled_given) +
                      (sampled_given.size() > 1 ? " (settings of the sampled loop) were given"
                                                : " (a setting of the sampled loop) was given");
    return;
  }
  // The features the exact solver lacks first, then auto's threshold, then memory.
  const std::string blocker = exact_blocker(o);
  if (!blocker.empty()) {
    s.solver = SolverKind::kSampled;
    s.solver_reason = "auto: sampled for " + blocker;
    return;
  }
  const bool run_exact = work <= o.exact_max_work;
  why << "auto: n^2 k + n k^2 = " << work << (run_exact ? " <= " : " > ") << "exact_max_work "
      << o.exact_max_work;
  if (run_exact && !exact.possible) {
    s.solver = SolverKind::kSampled;
    s.solver_reason = why.str() + ", but the exact solver is ruled out: " + exact.why_not;
    return;
  }
  s.solver = run_exact ? SolverKind::kExact : SolverKind::kSampled;
  s.solver_reason = why.str();
}

[[noreturn]] void throw_no_room(const Problem& problem,
                                const Options& o,
                                const MemoryEstimate& e,
                                bool dense) {
  const std::string shape = std::to_string(problem.source.num_nodes()) + " x " +
                            std::to_string(problem.target.num_nodes());
  // The largest object of the dense path, named when it is the one that does not fit.
  const double nk = static_cast<double>(problem.source.num_nodes()) * problem.target.num_nodes();
  const std::string what =
      o.fused_weight > 0.0 && problem.source_features
          ? " (the n x k feature cost built from the features alone: " + human_bytes(8.0 * nk) + ")"
          : " (the n x k plan and cost: " +
                human_bytes((o.precision == Precision::kF64 ? 16.0 : 12.0) * nk) + ")";
  if (dense) {
    GW_THROW(ErrorCode::kBadData,
             "a " << shape << " problem needs about " << human_bytes(e.dense) << " on the dense path"
                  << what << ", more than the memory limit of " << human_bytes(e.limit)
                  << (o.support == Support::kDense ? "; use --support sparse (about " +
                                                         human_bytes(e.sparse) + ")"
                                                   : std::string("; drop what needs the dense plan"))
                  << " or raise --memory-limit");
  }
  GW_THROW(ErrorCode::kBadData,
           "a " << shape << " problem needs about " << human_bytes(e.sparse)
                << " on the sparse path (" << human_bytes(e.dense)
                << " dense), more than the memory limit of " << human_bytes(e.limit)
                << "; raise --memory-limit or lower --support-size");
}

void choose_support(const Problem& problem,
                    const Options& o,
                    const MemoryEstimate& memory,
                    const Candidate& dense,
                    const Candidate& sparse,
                    Strategy& s) {
  if (s.solver == SolverKind::kExact) {
    s.support = Support::kDense;
    s.support_reason = "the exact solver works on the dense plan";
    if (memory.exact > memory.limit) throw_no_room(problem, o, memory, true);
    return;
  }
  switch (o.support) {
    case Support::kDense:
      if (memory.dense > memory.limit) throw_no_room(problem, o, memory, true);
      s.support = Support::kDense;
      s.support_reason = "requested (support = dense)";
      return;
    case Support::kSparse: {
      const std::string blocker = sparse_blocker(problem, o);
      GW_CHECK(blocker.empty(), "support = sparse does not support " << blocker
                                    << "; use support dense or auto");
      if (memory.sparse > memory.limit) throw_no_room(problem, o, memory, false);
      s.support = Support::kSparse;
      s.support_reason = "requested (support = sparse)";
      return;
    }
    case Support::kAuto:
      break;
  }
  std::string needs_dense = sparse_blocker(problem, o);
  // Restart probes run on the dense loop (on an explicit sparse support, in its coarse level).
  if (needs_dense.empty() && o.restarts > 1) needs_dense = "restart probes (restarts > 1)";
  if (!needs_dense.empty()) {
    if (memory.dense > memory.limit) throw_no_room(problem, o, memory, true);
    s.support = Support::kDense;
    s.support_reason = "auto: dense for " + needs_dense;
    return;
  }
  if (!dense.possible && !sparse.possible) throw_no_room(problem, o, memory, false);
  if (!dense.possible) {
    s.support = Support::kSparse;
    s.support_reason = "auto: sparse because " + dense.why_not;
    return;
  }
  if (!sparse.possible) {
    s.support = Support::kDense;
    s.support_reason = "auto: dense because " + sparse.why_not;
    return;
  }
  const std::string predictions = " (sampled sparse " + seconds_text(sparse.seconds) +
                                  ", sampled dense " + seconds_text(dense.seconds) + ")";
  if (dense.seconds <= kSmallDenseSeconds) {
    s.support = Support::kDense;
    s.support_reason = "auto: dense, predicted at most 1 s by the cost model" + predictions;
    return;
  }
  const bool use_sparse = sparse.seconds < dense.seconds;
  s.support = use_sparse ? Support::kSparse : Support::kDense;
  s.support_reason = std::string("auto: ") + (use_sparse ? "sparse" : "dense") +
                     ", the faster by the cost model" + predictions;
}

void choose_numerics(const Problem& problem, const Options& o, Strategy& s) {
  const double work = exact_iteration_work(problem.source.num_nodes(), problem.target.num_nodes());
  s.precision = o.precision;
  s.threads = o.threads;
  if (s.solver == SolverKind::kExact) {
    s.exact_method = o.exact_method;
    if (o.precision == Precision::kF64) {
      s.precision_reason = "requested (precision = f64)";
    } else if (work <= kExactDoubleWork) {
      s.precision = Precision::kF64;
      s.precision_reason = "float64: n^2 k + n k^2 <= 1e6 (tiny problems gain nothing from float32)";
    } else {
      s.precision_reason = "float32 products, then a float64 finish (Options::exact_tolerance)";
    }
    if (work <= kExactSingleThreadWork) {
      s.threads = 1;
      s.threads_reason = "one thread: n^2 k + n k^2 <= 1e7 (GEMMs too short to share)";
    }
  } else {
    s.precision_reason = o.precision == Precision::kF32 ? "f32 (the default; float64 reductions)"
                                                        : "requested (precision = f64)";
  }
  if (s.threads_reason.empty()) {
    s.threads_reason = o.threads == 0 ? "all available (threads = 0)" : "requested";
  }
}

void choose_loss(const Problem& problem, const Options& o, Strategy& s) {
  s.loss_computed = o.compute_gw_loss && o.fused_weight < 1.0;
  if (!s.loss_computed) {
    s.loss_reason = o.compute_gw_loss ? "none: fused_weight = 1 (no geometry)" : "off (compute_gw_loss = false)";
    return;
  }
  const double n = problem.source.num_nodes(), k = problem.target.num_nodes();
  if (s.support == Support::kSparse) {
    s.loss_reason = "estimated from loss_anchors anchor pairs (the sparse plan's loss)";
  } else if (s.solver == SolverKind::kExact && s.exact_method != ExactMethod::kMirrorDescent) {
    s.loss_exact = true;
    s.loss_reason = "exact (conditional gradient keeps it)";
  } else if (n * k * (n + k) <= o.exact_loss_max_work && holds_full_matrix(problem.source, o) &&
             holds_full_matrix(problem.target, o)) {
    s.loss_exact = true;
    s.loss_reason = "exact from the full distance matrices (n k (n + k) <= exact_loss_max_work)";
  } else {
    s.loss_reason = "estimated from loss_anchors anchor pairs";
  }
}

}  // namespace

Strategy choose_strategy(const Problem& problem, const Options& options) {
  std::string why;
  GW_CHECK(options.is_valid(&why), "invalid options: " << why);
  GW_CHECK(options.support_feature_candidates == 0 ||
               (options.fused_weight > 0.0 && problem.source_features.has_value() &&
                problem.target_features.has_value()),
           "support_feature_candidates = " << options.support_feature_candidates
                                           << " ranks support candidates by per-node features, which this problem "
                                              "lacks (no fused_weight, or a dense feature cost only); give "
                                              "Problem::source/target_features (--features) with fused_weight > 0 "
                                              "or leave it at 0");
  const Options& o = options;
  const double n = problem.source.num_nodes(), k = problem.target.num_nodes();
  const MemoryEstimate memory = estimate_memory(problem, o);
  const Rates& rates = o.backend == Backend::kCuda ? kCudaRates : kCpuRates;
  const bool auto_support = o.support == Support::kAuto;
  const double dense_room = (auto_support ? kDenseComfort : 1.0) * static_cast<double>(memory.limit);

  Strategy s;
  s.backend = o.backend;
  s.backend_reason = o.backend == Backend::kCpu ? "cpu (Options::backend)" : "cuda (Options::backend)";
  s.memory_limit_bytes = memory.limit;

  Candidate exact{"exact", true, exact_blocker(o), 0.0, memory.exact};
  exact.possible = exact.why_not.empty();
  if (exact.possible && static_cast<double>(memory.exact) > dense_room) {
    exact.possible = false;
    exact.why_not = "its dense matrices (" + human_bytes(memory.exact) + ") exceed " +
                    (auto_support ? "half of " : "") + "the memory limit (" +
                    human_bytes(memory.limit) + ")";
  }
  exact.seconds = exact_seconds(n, k, o, kCpuRates);
  Candidate dense{"sampled dense", true, "", dense_seconds(n, k, o, rates), memory.dense};
  if (static_cast<double>(memory.dense) > dense_room) {
    dense.possible = false;
    dense.why_not = "the dense plan (" + human_bytes(memory.dense) + ") exceeds " +
                    (auto_support ? "half of " : "") + "the memory limit (" +
                    human_bytes(memory.limit) + ")";
  }
  const Index cells = detail::resolved_support_cells(std::max<Index>(1, problem.source.num_nodes()),
                                                     std::max<Index>(1, problem.target.num_nodes()), o);
  Candidate sparse{"sampled sparse", true, sparse_blocker(problem, o),
                   sparse_seconds(n, k, o, rates, cells), memory.sparse};
  sparse.possible = sparse.why_not.empty();
  if (sparse.possible && memory.sparse > memory.limit) {
    sparse.possible = false;
    sparse.why_not = "the sparse support (" + human_bytes(memory.sparse) + ") exceeds the memory limit";
  }

  choose_solver(problem, o, exact, s);
  choose_support(problem, o, memory, dense, sparse, s);
  choose_numerics(problem, o, s);
  choose_loss(problem, o, s);
  s.estimated_peak_bytes = s.solver == SolverKind::kExact    ? memory.exact
                           : s.support == Support::kSparse ? memory.sparse
                                                           : memory.dense;
  s.candidates = {std::move(exact), std::move(dense), std::move(sparse)};
  return s;
}

namespace detail {

Strategy coarse_level_strategy(const Problem& coarse, Options& options) {
  options.forget_given();
  if (options.backend == Backend::kCuda) {
    Options on_cpu = options;
    on_cpu.backend = Backend::kCpu;
    Strategy cpu = choose_strategy(coarse, on_cpu);
    if (cpu.solver == SolverKind::kExact) {
      options.backend = Backend::kCpu;
      cpu.backend_reason =
          "cpu: the sparse path's coarse level runs exactly on the CPU (the device's sampled "
          "coarse plan costs the fine level more)";
      return cpu;
    }
  }
  return choose_strategy(coarse, options);
}

}  // namespace detail

std::string Strategy::explain() const {
  std::ostringstream out;
  out << "solver     " << to_string(solver);
  if (solver == SolverKind::kExact) out << " (" << to_string(exact_method) << ")";
  out << ": " << solver_reason << "\n";
  out << "support    " << to_string(support) << ": " << support_reason << "\n";
  out << "backend    " << to_string(backend) << ": " << backend_reason << "\n";
  out << "precision  " << to_string(precision) << ": " << precision_reason << "\n";
  out << "threads    " << (threads == 0 ? std::string("all") : std::to_string(threads)) << ": "
      << threads_reason << "\n";
  out << "loss       " << loss_reason << "\n";
  out << "memory     about " << human_bytes(static_cast<double>(estimated_peak_bytes)) << " of "
      << human_bytes(static_cast<double>(memory_limit_bytes)) << "\n";
  out << "candidates (predicted on the calibration machine, 2 cores):\n";
  for (const Candidate& c : candidates) {
    char line[160];
    std::snprintf(line, sizeof(line), "  %-15s %10s %12s  ", c.name.c_str(),
                  seconds_text(c.seconds).c_str(), human_bytes(static_cast<double>(c.bytes)).c_str());
    out << line << (c.possible ? "possible" : "ruled out: " + c.why_not) << "\n";
  }
  return out.str();
}

std::string Strategy::to_json() const {
  JsonWriter json;
  json.begin_object()
      .member("solver", to_string(solver))
      .member("solver_reason", solver_reason)
      .member("exact_method", solver == SolverKind::kExact ? to_string(exact_method) : "")
      .member("support", to_string(support))
      .member("support_reason", support_reason)
      .member("backend", to_string(backend))
      .member("backend_reason", backend_reason)
      .member("precision", to_string(precision))
      .member("precision_reason", precision_reason)
      .member("threads", threads)
      .member("threads_reason", threads_reason)
      .member("loss_computed", loss_computed)
      .member("loss_exact", loss_exact)
      .member("loss_reason", loss_reason)
      .member("estimated_peak_bytes", static_cast<std::uint64_t>(estimated_peak_bytes))
      .member("memory_limit_bytes", static_cast<std::uint64_t>(memory_limit_bytes));
  json.key("candidates").begin_array();
  for (const Candidate& c : candidates) {
    json.begin_object()
        .member("name", c.name)
        .member("possible", c.possible)
        .member("why_not", c.why_not)
        .member("seconds", c.seconds)
        .member("bytes", static_cast<std::uint64_t>(c.bytes))
        .end_object();
  }
  json.end_array().end_object();
  return json.str();
}

}  // namespace gw
