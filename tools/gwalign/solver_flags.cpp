// The solver flags and their mapping onto gw::Options (solver_flags.h).
#include "solver_flags.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "core/error.h"

namespace gw::cli {

std::string format_number(double value) {
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return ec == std::errc() ? std::string(buffer, end) : std::to_string(value);
}

namespace {

template <typename T>
std::shared_ptr<cxxopts::Value> with_default(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return cxxopts::value<T>()->default_value(format_number(value));
  } else {
    return cxxopts::value<T>()->default_value(std::to_string(value));
  }
}

// A Setting's flag has the type of its value.
template <typename T>
std::shared_ptr<cxxopts::Value> with_default(Setting<T> setting) {
  return with_default(setting.value());
}

// A KL penalty: a positive number or "inf" (hard constraint). cxxopts reads doubles with
// operator>>, which rejects "inf", so these flags are parsed here.
double parse_penalty(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  GW_CHECK(!text.empty() && end == text.c_str() + text.size() && errno == 0,
           "--" << flag << " must be a number or 'inf', got '" << text << "'");
  return value;
}

}  // namespace

void add_solver_options(cxxopts::Options& options) {
  const Options d;  // the library's defaults, shown by --help
  const std::string mode_default =
      d.distance_mode ? std::string(to_string(*d.distance_mode)) : std::string("auto");
  // clang-format off
  options.add_options("Geometry and distances")
      ("mode", "distances on graphs and point clouds: auto | precomputed | dijkstra | landmark "
               "(auto: precomputed up to --precomputed-max-nodes nodes, landmark above)",
       cxxopts::value<std::string>()->default_value(mode_default))
      ("precomputed-max-nodes", "largest side that --mode auto precomputes",
       with_default<Index>(d.auto_precomputed_max_nodes))
      ("knn", "neighbours per point of the kNN graph built from a point cloud",
       with_default(d.knn))
      ("landmarks", "landmarks for --mode landmark", with_default(d.num_landmarks))
      ("dijkstra-cache-mb", "Dijkstra row cache in MiB for --mode dijkstra (0: provider default)",
       with_default<std::int64_t>(static_cast<std::int64_t>(d.dijkstra_cache_bytes >> 20)));
  options.add_options("Solver")
      ("M", "anchor pairs sampled per iteration", with_default(d.num_anchors))
      ("eps", "initial entropic regularization epsilon", with_default(d.epsilon))
      ("eps-final", "final epsilon of the geometric decay (negative: max(eps/10, min(5e-4, eps)))",
       with_default(d.epsilon_final))
      ("eps-decay-iter", "iterations over which epsilon decays",
       with_default(d.epsilon_decay_iterations))
      ("alpha", "momentum: T <- (1 - alpha) T + alpha T_new", with_default(d.momentum))
      ("max-iter", "iteration limit", with_default(d.max_iterations))
      ("min-iter", "iterations before any stopping test", with_default(d.min_iterations))
      ("tol", "stop when ||T_t - T_{t-1}||_F < tol", with_default(d.tolerance))
      ("check-every", "iterations between host checks (stopping tests, progress)",
       with_default(d.check_every))
      ("plateau-improvement", "relative cost improvement that resets the plateau test (0: off)",
       with_default(d.plateau_improvement))
      ("plateau-patience", "iterations without improvement before stopping (negative: "
                           "max(min-iter / 2, 20))",
       with_default(d.plateau_patience))
      ("sinkhorn-max-iter", "inner Sinkhorn iterations per outer iteration",
       with_default(d.sinkhorn_max_iterations))
      ("sinkhorn-tol", "inner Sinkhorn tolerance (L1 marginal error)",
       with_default(d.sinkhorn_tolerance))
      ("lambda-ema", "EMA weight beta of the sampled cost across iterations, in [0, 1)",
       with_default(d.lambda_ema))
      ("warmup-iter", "first iterations that draw --warmup-anchors pairs (0: no warm-up)",
       with_default(d.warmup_iterations))
      ("warmup-anchors", "anchor pairs of the warm-up and polishing iterations (0: automatic, "
                         "40 M capped by an 8 GFLOP cost per iteration)",
       with_default(d.warmup_anchors))
      ("polish-iter", "final iterations with warm-up anchors and tight inner solves",
       with_default(d.polish_iterations))
      ("polish-sinkhorn-max-iter", "inner Sinkhorn iterations of a polishing iteration",
       with_default(d.polish_sinkhorn_iterations))
      ("polish-sinkhorn-tol", "inner Sinkhorn tolerance of a polishing iteration",
       with_default(d.polish_sinkhorn_tolerance))
      ("restarts", "probe runs of --restart-iter iterations; the lowest-loss one continues "
                   "(1: none)",
       with_default(d.restarts))
      ("restart-iter", "iterations of one restart probe", with_default(d.restart_iterations))
      ("no-round", "return the loop's plan as is, without putting it on the transport polytope")
      ("init", "starting plan: product | profiles",
       cxxopts::value<std::string>()->default_value(std::string(to_string(d.initial_plan))))
      ("multiscale", "start from a coarse alignment of farthest-point subsamples")
      ("multiscale-size", "nodes per side of the coarse problem",
       with_default<Index>(d.multiscale_size));
  options.add_options("Problem variants")
      ("fused-weight", "fused GW weight in [0, 1]: (1 - w) GW cost + w feature cost; needs "
                       "--features or --feature-cost",
       with_default(d.fused_weight))
      ("rho-a", "KL penalty on the source marginal (inf: hard; finite: semi-relaxed/unbalanced)",
       cxxopts::value<std::string>()->default_value(format_number(d.rho_a)))
      ("rho-b", "KL penalty on the target marginal",
       cxxopts::value<std::string>()->default_value(format_number(d.rho_b)))
      ("partial-mass", "partial transport: move this many points' worth of mass (e.g. min(n, k))",
       cxxopts::value<double>())
      ("no-slack", "drop the slack row/column that balances n != k")
      ("slack-shared", "the slack's shared mass in points (default min(n, k))",
       cxxopts::value<double>());
  options.add_options("Execution and output")
      ("backend", "cpu | cuda",
       cxxopts::value<std::string>()->default_value(std::string(to_string(d.backend))))
      ("device", "CUDA device ordinal", with_default(d.device))
      ("precision", "f32 (mixed, float64 reductions) | f64",
       cxxopts::value<std::string>()->default_value(std::string(to_string(d.precision))))
      ("threads", "CPU threads (0: all)", with_default(d.threads))
      ("seed", "random seed (same seed, backend and threads: the same plan)",
       with_default<std::uint64_t>(d.seed))
      ("top-k", "plan entries kept per row in the CSR output", with_default(d.top_k))
      ("dense", "write the dense n x k plan instead of the top-k CSR")
      ("no-loss", "skip the true GW loss of the final plan")
      ("loss-anchors", "anchor pairs of the Monte Carlo GW loss estimate",
       with_default(d.loss_anchors));
  options.add_options("Plan support and memory")
      ("support", "plan support: auto | dense | sparse (auto: of those that fit --memory-limit, "
                  "the faster by the strategy's cost model; --dense and features the sparse "
                  "path lacks keep the dense plan; --explain prints the choice)",
       cxxopts::value<std::string>()->default_value(std::string(to_string(d.support))))
      ("memory-limit", "memory budget in bytes, suffixes K, M, G, T allowed (0: 60% of physical "
                       "memory); a problem whose chosen path exceeds it fails before allocating",
       cxxopts::value<std::string>()->default_value("0"))
      ("support-size", "candidate targets per source node with --support sparse",
       with_default(d.support_size))
      ("support-cells", "cells per side of the sparse path's coarse alignment (0: automatic)",
       with_default<Index>(d.support_cells))
      ("support-regrow-every", "iterations between re-growths of the sparse support (0: never)",
       with_default(d.support_regrow_every))
      ("support-feature-candidates", "fused GW with --features on the sparse support: each target "
                                     "node also joins this many nearby source nodes' supports, the "
                                     "closest in feature space (0: off)",
       with_default(d.support_feature_candidates));
  options.add_options("Solver choice and exact gradient")
      ("solver", "auto | sampled | exact (auto: exact when n^2 k + n k^2 <= --exact-max-work "
                 "and the problem is one it takes, sampled otherwise; a flag of the sampled loop "
                 "(--M, --eps, --max-iter, ...) asks for sampled, one of the exact solver "
                 "(--exact-tol, --starts, ...) for exact; --explain prints the choice)",
       cxxopts::value<std::string>()->default_value(std::string(to_string(d.solver))))
      ("exact-max-work", "largest n^2 k + n k^2 for which --solver auto picks exact",
       with_default(d.exact_max_work))
      ("exact-method", "hybrid | cg | mirror (hybrid: mirror descent, or the sampled loop on "
                       "large problems, to reach the basin, then conditional gradient)",
       cxxopts::value<std::string>()->default_value(std::string(to_string(d.exact_method))))
      ("exact-max-iter", "conditional-gradient iterations per start",
       with_default(d.exact_max_iterations))
      ("exact-tol", "stop conditional gradient when the Frank-Wolfe gap or the objective's "
                    "decrease is below this fraction of the objective",
       with_default(d.exact_tolerance))
      ("mirror-iter", "exact mirror-descent iterations (--exact-method mirror)",
       with_default(d.mirror_iterations))
      ("hybrid-mirror-iter", "mirror-descent steps of --exact-method hybrid's basin phase on "
                             "problems small enough for it (0: none)",
       with_default(d.hybrid_mirror_iterations))
      ("mirror-eps", "first epsilon of the mirror-descent schedule", with_default(d.mirror_epsilon))
      ("mirror-eps-final", "last epsilon of the mirror-descent schedule",
       with_default(d.mirror_epsilon_final))
      ("no-orientation-starts", "skip the exact solver's orientation check (the spectral "
                                "starts of both handednesses after the other starts)")
      ("starts", "starts of the exact solver (profiles, product, profile-vertex); the lowest "
                 "objective is kept", with_default(d.starts))
      ("start-budget", "seconds within which further starts may begin (predicted from the "
                       "size, not measured: n k (n + k) / 4e9 s per start)",
       with_default(d.start_time_budget));
  // clang-format on
}

std::size_t parse_byte_size(const std::string& text, std::string_view flag) {
  std::size_t used = 0;
  double value = 0.0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  double unit = 1.0;
  const std::string suffix = text.substr(std::min(used, text.size()));
  if (suffix == "K" || suffix == "k") {
    unit = 1024.0;
  } else if (suffix == "M" || suffix == "m") {
    unit = 1048576.0;
  } else if (suffix == "G" || suffix == "g") {
    unit = 1073741824.0;
  } else if (suffix == "T" || suffix == "t") {
    unit = 1099511627776.0;
  } else if (!suffix.empty()) {
    used = 0;
  }
  GW_CHECK(used > 0 && std::isfinite(value) && value >= 0.0,
           flag << " must be a byte count such as 2000000000, 512M or 16G (0: default), got '"
                << text << "'");
  return static_cast<std::size_t>(value * unit);
}

// A flag that is given sets its Setting<T> field, which marks it given; one left out leaves the
// library's default unmarked (choose_strategy reads given settings as requests).
template <typename T>
void set_if_given(const cxxopts::ParseResult& flags, const char* flag, Setting<T>& field) {
  if (flags.count(flag)) field = flags[flag].as<T>();
}

Options solver_options_from_flags(const cxxopts::ParseResult& flags) {
  Options o;
  const std::string mode = flags["mode"].as<std::string>();
  if (mode == "auto") {
    o.distance_mode.reset();
  } else {
    const auto parsed = distance_mode_from_string(mode);
    GW_CHECK(parsed,
             "--mode must be auto, precomputed, dijkstra or landmark, got '" << mode << "'");
    o.distance_mode = *parsed;
  }
  o.auto_precomputed_max_nodes = flags["precomputed-max-nodes"].as<Index>();
  o.knn = flags["knn"].as<int>();
  o.num_landmarks = flags["landmarks"].as<int>();
  const auto cache_mb = flags["dijkstra-cache-mb"].as<std::int64_t>();
  GW_CHECK(cache_mb >= 0, "--dijkstra-cache-mb must be >= 0, got " << cache_mb);
  o.dijkstra_cache_bytes = static_cast<std::size_t>(cache_mb) << 20;

  set_if_given(flags, "M", o.num_anchors);
  set_if_given(flags, "eps", o.epsilon);
  set_if_given(flags, "eps-final", o.epsilon_final);
  set_if_given(flags, "eps-decay-iter", o.epsilon_decay_iterations);
  set_if_given(flags, "alpha", o.momentum);
  set_if_given(flags, "max-iter", o.max_iterations);
  set_if_given(flags, "min-iter", o.min_iterations);
  set_if_given(flags, "tol", o.tolerance);
  set_if_given(flags, "check-every", o.check_every);
  set_if_given(flags, "plateau-improvement", o.plateau_improvement);
  set_if_given(flags, "plateau-patience", o.plateau_patience);
  set_if_given(flags, "sinkhorn-max-iter", o.sinkhorn_max_iterations);
  set_if_given(flags, "sinkhorn-tol", o.sinkhorn_tolerance);
  set_if_given(flags, "lambda-ema", o.lambda_ema);
  set_if_given(flags, "warmup-iter", o.warmup_iterations);
  set_if_given(flags, "warmup-anchors", o.warmup_anchors);
  set_if_given(flags, "polish-iter", o.polish_iterations);
  set_if_given(flags, "polish-sinkhorn-max-iter", o.polish_sinkhorn_iterations);
  set_if_given(flags, "polish-sinkhorn-tol", o.polish_sinkhorn_tolerance);
  set_if_given(flags, "restarts", o.restarts);
  set_if_given(flags, "restart-iter", o.restart_iterations);
  o.round_marginals = flags.count("no-round") == 0;
  const std::string init = flags["init"].as<std::string>();
  const auto initial_plan = initial_plan_from_string(init);
  GW_CHECK(initial_plan, "--init must be product or profiles, got '" << init << "'");
  o.initial_plan = *initial_plan;
  if (flags.count("multiscale")) o.multiscale = true;
  set_if_given(flags, "multiscale-size", o.multiscale_size);

  o.fused_weight = flags["fused-weight"].as<double>();
  o.rho_a = parse_penalty("rho-a", flags["rho-a"].as<std::string>());
  o.rho_b = parse_penalty("rho-b", flags["rho-b"].as<std::string>());
  if (flags.count("partial-mass")) o.partial_mass = flags["partial-mass"].as<double>();
  o.slack = flags.count("no-slack") == 0;
  if (flags.count("slack-shared")) o.slack_shared = flags["slack-shared"].as<double>();

  const std::string backend = flags["backend"].as<std::string>();
  const auto parsed_backend = backend_from_string(backend);
  GW_CHECK(parsed_backend, "--backend must be cpu or cuda, got '" << backend << "'");
  o.backend = *parsed_backend;
  o.device = flags["device"].as<int>();
  const std::string precision = flags["precision"].as<std::string>();
  const auto parsed_precision = precision_from_string(precision);
  GW_CHECK(parsed_precision, "--precision must be f32 or f64, got '" << precision << "'");
  o.precision = *parsed_precision;
  o.threads = flags["threads"].as<int>();
  o.seed = flags["seed"].as<std::uint64_t>();
  o.top_k = flags["top-k"].as<int>();
  // The CLI writes the top-k CSR plan unless --dense asks for the dense one (which the strategy
  // then keeps on the dense support).
  if (flags.count("dense")) {
    o.plan_format = PlanFormat::kDense;
  } else {
    o.plan_format.set_default(PlanFormat::kTopK);
  }
  o.compute_gw_loss = flags.count("no-loss") == 0;
  o.loss_anchors = flags["loss-anchors"].as<int>();
  const std::string support = flags["support"].as<std::string>();
  const auto parsed_support = support_from_string(support);
  GW_CHECK(parsed_support, "--support must be auto, dense or sparse, got '" << support << "'");
  o.support = *parsed_support;
  o.memory_limit = parse_byte_size(flags["memory-limit"].as<std::string>(), "--memory-limit");
  o.support_size = flags["support-size"].as<int>();
  o.support_cells = flags["support-cells"].as<Index>();
  o.support_regrow_every = flags["support-regrow-every"].as<int>();
  o.support_feature_candidates = flags["support-feature-candidates"].as<int>();

  const std::string solver = flags["solver"].as<std::string>();
  const auto parsed_solver = solver_kind_from_string(solver);
  GW_CHECK(parsed_solver, "--solver must be auto, sampled or exact, got '" << solver << "'");
  o.solver = *parsed_solver;
  o.exact_max_work = flags["exact-max-work"].as<double>();
  if (flags.count("exact-method")) {
    const std::string method = flags["exact-method"].as<std::string>();
    const auto parsed_method = exact_method_from_string(method);
    GW_CHECK(parsed_method, "--exact-method must be hybrid, cg or mirror, got '" << method << "'");
    o.exact_method = *parsed_method;
  }
  set_if_given(flags, "exact-max-iter", o.exact_max_iterations);
  set_if_given(flags, "exact-tol", o.exact_tolerance);
  set_if_given(flags, "mirror-iter", o.mirror_iterations);
  set_if_given(flags, "hybrid-mirror-iter", o.hybrid_mirror_iterations);
  set_if_given(flags, "mirror-eps", o.mirror_epsilon);
  set_if_given(flags, "mirror-eps-final", o.mirror_epsilon_final);
  set_if_given(flags, "starts", o.starts);
  if (flags.count("no-orientation-starts")) o.orientation_starts = false;
  set_if_given(flags, "start-budget", o.start_time_budget);
  check_inert_flags(flags, o);
  std::string why;
  GW_CHECK(o.is_valid(&why), "invalid option: " << why << " (see --help)");
  return o;
}

void check_inert_flags(const cxxopts::ParseResult& flags, const Options& o) {
  auto given = [&](const char* flag) { return flags.count(flag) > 0; };
  // `flag` is given but `reason` makes it do nothing: a usage error naming both and the fix.
  auto reject_if = [&](bool inert, const char* flag, const std::string& reason) {
    GW_CHECK(!(inert && given(flag)), "--" << flag << " has no effect " << reason);
  };
  reject_if(o.plan_format == PlanFormat::kDense,
            "top-k",
            "with --dense (the dense plan keeps every entry); drop one of them");
  reject_if(o.backend == Backend::kCpu,
            "device",
            "with --backend cpu; add --backend cuda or drop --device");
  reject_if(!o.multiscale, "multiscale-size", "without --multiscale; add --multiscale or drop it");
  reject_if(!o.compute_gw_loss, "loss-anchors", "with --no-loss; drop one of them");
  reject_if(o.restarts <= 1, "restart-iter", "without --restarts > 1; add --restarts N or drop it");
  reject_if(o.plateau_improvement == 0.0,
            "plateau-patience",
            "with --plateau-improvement 0 (the plateau test is off)");
  reject_if(o.polish_iterations == 0, "polish-sinkhorn-max-iter", "with --polish-iter 0");
  reject_if(o.polish_iterations == 0, "polish-sinkhorn-tol", "with --polish-iter 0");
  reject_if(o.warmup_iterations == 0 && o.polish_iterations == 0,
            "warmup-anchors",
            "with --warmup-iter 0 and --polish-iter 0 (no iteration draws them)");
  // The sparse path returns its own CSR plan and has its own coarse level; its settings do nothing
  // on the dense path.
  const bool sparse_only = o.support == Support::kSparse;
  reject_if(sparse_only, "dense", "with --support sparse (the plan is CSR); drop one of them");
  reject_if(sparse_only,
            "top-k",
            "with --support sparse (rows keep up to --support-size entries); use --support-size");
  reject_if(sparse_only,
            "multiscale",
            "with --support sparse (it aligns coarse cells first anyway); drop --multiscale");
  for (const char* flag : {"support-size", "support-cells", "support-regrow-every"}) {
    reject_if(o.support == Support::kDense, flag, "with --support dense; drop one of them");
  }
  // The exact solver's settings do nothing when the sampled solver is requested, and the
  // threshold only tunes --solver auto.
  for (const char* flag : {"exact-method",
                           "exact-max-iter",
                           "exact-tol",
                           "mirror-iter",
                           "hybrid-mirror-iter",
                           "mirror-eps",
                           "mirror-eps-final",
                           "starts",
                           "start-budget",
                           "no-orientation-starts"}) {
    reject_if(o.solver == SolverKind::kSampled, flag, "with --solver sampled; drop one of them");
  }
  // Each exact method reads its own settings: --mirror-iter only mirror descent's run,
  // --hybrid-mirror-iter only the hybrid's basin, the mirror epsilons only those two.
  reject_if(o.exact_method != ExactMethod::kMirrorDescent,
            "mirror-iter",
            "without --exact-method mirror (the hybrid's basin steps are --hybrid-mirror-iter)");
  reject_if(o.exact_method != ExactMethod::kHybrid,
            "hybrid-mirror-iter",
            "without --exact-method hybrid (--mirror-iter sets --exact-method mirror's steps)");
  for (const char* flag : {"mirror-eps", "mirror-eps-final"}) {
    reject_if(o.exact_method == ExactMethod::kConditionalGradient,
              flag,
              "with --exact-method cg (no mirror-descent step runs)");
  }
  reject_if(o.solver != SolverKind::kAuto,
            "exact-max-work",
            "without --solver auto (it sets auto's threshold)");
  // With an explicit --mode, the settings of the other modes and of auto do nothing.
  if (o.distance_mode) {
    const std::string mode(to_string(*o.distance_mode));
    reject_if(true, "precomputed-max-nodes", "with --mode " + mode + " (it tunes --mode auto)");
    reject_if(*o.distance_mode != DistanceMode::kLandmark,
              "landmarks",
              "with --mode " + mode + " (it sets --mode landmark)");
    reject_if(*o.distance_mode != DistanceMode::kDijkstra,
              "dijkstra-cache-mb",
              "with --mode " + mode + " (it sets --mode dijkstra)");
  }
}

void check_geometry_flags(const cxxopts::ParseResult& flags,
                          Geometry::Kind source,
                          Geometry::Kind target) {
  auto any = [&](Geometry::Kind kind) { return source == kind || target == kind; };
  const bool points = any(Geometry::Kind::kPoints);
  // Distances are computed (and --mode and its settings act) only for points and graphs.
  const bool computed = points || any(Geometry::Kind::kGraph);
  auto name = [](Geometry::Kind kind) {
    switch (kind) {
      case Geometry::Kind::kPoints:
        return "points";
      case Geometry::Kind::kGraph:
        return "a graph";
      case Geometry::Kind::kDistances:
      case Geometry::Kind::kProvider:
        return "distances";
      case Geometry::Kind::kNodes:
      case Geometry::Kind::kNone:
        break;
    }
    return "features only";
  };
  const std::string sides =
      std::string("(SOURCE is ") + name(source) + ", TARGET " + name(target) + ")";
  GW_CHECK(points || !flags.count("knn"),
           "--knn has no effect: it builds the kNN graph of a point cloud, and neither side is one "
               << sides << "; drop --knn");
  for (const char* flag : {"mode", "landmarks", "dijkstra-cache-mb", "precomputed-max-nodes"}) {
    GW_CHECK(computed || !flags.count(flag),
             "--" << flag << " has no effect: distances are given, not computed " << sides
                  << "; drop --" << flag);
  }
}

}  // namespace gw::cli
