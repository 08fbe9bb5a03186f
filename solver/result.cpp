#include "solver/result.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/config.h"
#include "core/json.h"

namespace gw {

std::string_view to_string(Termination termination) {
  switch (termination) {
    case Termination::kNotRun:
      return "not run";
    case Termination::kConverged:
      return "converged";
    case Termination::kPlateau:
      return "plateau";
    case Termination::kMaxIterations:
      return "max iterations";
    case Termination::kCancelled:
      return "cancelled";
    case Termination::kNonFinite:
      return "non-finite";
  }
  return "unknown";
}

namespace {

std::string format(const char* fmt, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, value);
  return buf;
}

void write_options(JsonWriter& json, const Options& o) {
  json.begin_object()
      .member("num_anchors", o.num_anchors)
      .member("warmup_iterations", o.warmup_iterations)
      .member("warmup_anchors", o.warmup_anchors)
      .member("lambda_ema", o.lambda_ema)
      .member("epsilon", o.epsilon)
      .member("epsilon_final", o.resolved_epsilon_final())
      .member("epsilon_decay_iterations", o.epsilon_decay_iterations)
      .member("momentum", o.momentum)
      .member("max_iterations", o.max_iterations)
      .member("min_iterations", o.min_iterations)
      .member("tolerance", o.tolerance)
      .member("check_every", o.check_every)
      .member("plateau_ema_weight", o.plateau_ema_weight)
      .member("plateau_improvement", o.plateau_improvement)
      .member("plateau_patience", o.resolved_plateau_patience())
      .member("sinkhorn_max_iterations", o.sinkhorn_max_iterations)
      .member("sinkhorn_tolerance", o.sinkhorn_tolerance)
      .member("sinkhorn_check_every", o.sinkhorn_check_every)
      .member("polish_iterations", o.polish_iterations)
      .member("polish_sinkhorn_iterations", o.polish_sinkhorn_iterations)
      .member("polish_sinkhorn_tolerance", o.polish_sinkhorn_tolerance)
      .member("distance_mode", o.distance_mode ? std::string(to_string(*o.distance_mode)) : "auto")
      .member("knn", o.knn)
      .member("num_landmarks", o.num_landmarks)
      .member("fused_weight", o.fused_weight)
      .member("rho_a", o.rho_a)  // +inf is written as null
      .member("rho_b", o.rho_b)
      .member("slack", o.slack)
      .member("round_marginals", o.round_marginals)
      .member("restarts", o.restarts)
      .member("restart_iterations", o.restart_iterations)
      .member("initial_plan", to_string(o.initial_plan))
      .member("profile_anchors", o.profile_anchors)
      .member("profile_quantiles", o.profile_quantiles);
  json.key("partial_mass");
  if (o.partial_mass) {
    json.value(*o.partial_mass);
  } else {
    json.null();
  }
  json.key("slack_shared");
  if (o.slack_shared) {
    json.value(*o.slack_shared);
  } else {
    json.null();
  }
  json.member("multiscale", o.multiscale)
      .member("multiscale_size", static_cast<std::int64_t>(o.multiscale_size))
      .member("precision", to_string(o.precision))
      .member("backend", to_string(o.backend))
      .member("threads", o.threads)
      .member("seed", o.seed)
      .member("plan_format", to_string(o.plan_format))
      .member("top_k", o.top_k)
      .member("support", to_string(o.support))
      .member("memory_limit", static_cast<std::uint64_t>(o.memory_limit))
      .member("support_size", o.support_size)
      .member("support_cells", static_cast<std::int64_t>(o.support_cells))
      .member("support_regrow_every", o.support_regrow_every)
      .member("support_feature_candidates", o.support_feature_candidates)
      .member("solver", to_string(o.solver))
      .member("exact_max_work", o.exact_max_work)
      .member("exact_method", to_string(o.exact_method))
      .member("exact_max_iterations", o.exact_max_iterations)
      .member("exact_tolerance", o.exact_tolerance)
      .member("mirror_iterations", o.mirror_iterations)
      .member("mirror_epsilon", o.mirror_epsilon)
      .member("mirror_epsilon_final", o.mirror_epsilon_final)
      .member("mirror_sinkhorn_iterations", o.mirror_sinkhorn_iterations)
      .member("hybrid_sampled_work", o.hybrid_sampled_work)
      .member("hybrid_basin_iterations", o.hybrid_basin_iterations)
      .member("hybrid_mirror_iterations", o.hybrid_mirror_iterations)
      .member("starts", o.starts)
      .member("start_time_budget", o.start_time_budget)
      .member("start_probe_iterations", o.start_probe_iterations);
  // The settings the caller gave (Setting<T>), which choose_strategy reads as requests.
  json.key("given").begin_array();
  for (std::string_view name : o.given_sampled_settings()) json.value(name);
  for (std::string_view name : o.given_exact_settings()) json.value(name);
  if (o.plan_format.given()) json.value("plan_format");
  json.end_array()
      .end_object();
}

void write_stats(JsonWriter& json, const DistanceStats& s) {
  json.begin_object()
      .member("requests", s.requests)
      .member("anchors", s.anchors)
      .member("shortest_path_runs", s.shortest_path_runs)
      .member("cache_hits", s.cache_hits)
      .member("cache_misses", s.cache_misses)
      .end_object();
}

}  // namespace

std::string Result::brief_report() const {
  std::ostringstream out;
  out << "gw: " << to_string(termination) << " after " << iterations << " iterations, " << n
      << " x " << k << ", cost " << format("%.6g", gw_cost_estimate);
  if (!std::isnan(gw_loss)) {
    out << ", loss " << format("%.6g", gw_loss);
    if (!gw_loss_exact) out << " +- " << format("%.2g", gw_loss_stderr);
  }
  out << ", mass " << format("%.6f", plan_mass) << ", " << format("%.3f", total_seconds) << " s ("
      << to_string(backend) << ", " << threads << " threads)";
  return out.str();
}

std::string Result::full_report() const {
  std::ostringstream out;
  out << brief_report() << "\n";
  out << "  message: " << message << "\n";
  out << "  distances: source " << source_distances << ", target " << target_distances << " ("
      << format("%.1f", distance_memory_bytes / 1048576.0) << " MiB)\n";
  out << "  options: M " << options.num_anchors << ", eps " << options.epsilon << " -> "
      << options.resolved_epsilon_final() << ", alpha " << options.momentum << ", max_iter "
      << options.max_iterations << ", precision " << to_string(options.precision) << ", seed "
      << seed << "\n";
  out << "  solver: " << to_string(strategy.solver) << " (" << strategy.solver_reason << ")";
  if (strategy.solver == SolverKind::kExact) out << ", method " << to_string(strategy.exact_method);
  out << "\n";
  if (!starts.empty()) {
    out << "  starts:";
    for (std::size_t s = 0; s < starts.size(); ++s) {
      if (!starts[s].skipped.empty()) {
        out << " " << starts[s].name << " skipped (" << starts[s].skipped << ");";
        continue;
      }
      out << " " << starts[s].name << " loss " << format("%.6g", starts[s].gw_loss) << " ("
          << starts[s].iterations << " it, " << format("%.3f", starts[s].seconds) << " s)"
          << (static_cast<int>(s) == start_chosen ? " [kept]" : "")
          << (starts[s].stopped.empty() ? "" : ", stopped: " + starts[s].stopped) << ";";
    }
    if (float64_finish_iterations > 0) {
      out << " float64 finish " << float64_finish_iterations << " it;";
    }
    out << "\n";
  }
  if (!restart_losses.empty()) {
    out << "  restarts: losses";
    for (double loss : restart_losses) out << " " << format("%.4g", loss);
    out << "; probe " << restart_chosen << " continued\n";
  }
  out << "  support: " << to_string(strategy.support) << " (" << strategy.support_reason << "), "
      << support_nnz << " entries";
  if (strategy.support == Support::kSparse) out << ", re-grown " << support_regrowths << " times";
  out << "; memory estimate " << format("%.1f", strategy.estimated_peak_bytes / 1048576.0)
      << " MiB of a " << format("%.1f", strategy.memory_limit_bytes / 1048576.0) << " MiB budget\n";
  if (!std::isnan(row_marginal_error)) {
    out << "  marginal errors (L1): rows " << format("%.3g", row_marginal_error) << ", columns "
        << format("%.3g", column_marginal_error) << "\n";
  }
  if (multiscale_used) {
    out << "  " << (strategy.support == Support::kSparse ? "coarse cells" : "multiscale") << ": " << multiscale_size << " nodes per side, " << multiscale_iterations
        << " iterations, " << format("%.3f", multiscale_seconds) << " s\n";
  }
  out << "  timings:";
  for (const auto& [phase, seconds] : timings.entries()) {
    out << " " << phase << " " << format("%.3f", seconds) << " s;";
  }
  out << "\n";
  return out.str();
}

std::string Result::to_json(bool pretty) const {
  JsonWriter json(pretty);
  json.begin_object()
      .member("version", GW_VERSION_STRING)
      .member("termination", to_string(termination))
      .member("message", message)
      .member("iterations", iterations)
      .member("n", static_cast<std::int64_t>(n))
      .member("k", static_cast<std::int64_t>(k))
      .member("plan_mass", plan_mass)
      .member("gw_cost_estimate", gw_cost_estimate)
      .member("gw_loss", gw_loss)
      .member("gw_loss_stderr", gw_loss_stderr)
      .member("gw_loss_exact", gw_loss_exact)
      .member("total_seconds", total_seconds)
      .member("backend", to_string(backend))
      .member("threads", threads)
      .member("isa", isa)
      .member("seed", seed)
      .member("source_distances", source_distances)
      .member("target_distances", target_distances)
      .member("distance_memory_bytes", static_cast<std::uint64_t>(distance_memory_bytes))
      .member("support", to_string(strategy.support))
      .member("support_nnz", static_cast<std::int64_t>(support_nnz))
      .member("support_regrowths", support_regrowths)
      .member("estimated_peak_bytes", static_cast<std::uint64_t>(strategy.estimated_peak_bytes))
      .member("memory_limit_bytes", static_cast<std::uint64_t>(strategy.memory_limit_bytes))
      .member("row_marginal_error", row_marginal_error)
      .member("column_marginal_error", column_marginal_error);
  json.key("source_distance_stats");
  write_stats(json, source_distance_stats);
  json.key("target_distance_stats");
  write_stats(json, target_distance_stats);
  json.key("restarts").begin_object().member("chosen", restart_chosen).key("losses").begin_array();
  for (double loss : restart_losses) json.value(loss);
  json.end_array().end_object();
  json.member("solver", to_string(strategy.solver))
      .member("solver_reason", strategy.solver_reason)
      .member("exact_method",
              strategy.solver == SolverKind::kExact ? to_string(strategy.exact_method) : "")
      .member("start_chosen", start_chosen)
      .member("float64_finish_iterations", float64_finish_iterations);
  json.key("starts").begin_array();
  for (const StartRecord& s : starts) {
    json.begin_object()
        .member("name", s.name)
        .member("gw_loss", s.gw_loss)
        .member("objective", s.objective)
        .member("iterations", s.iterations)
        .member("seconds", s.seconds)
        .member("map_objective", s.map_objective)
        .member("skipped", s.skipped)
        .member("stopped", s.stopped)
        .end_object();
  }
  json.end_array();
  json.key("multiscale")
      .begin_object()
      .member("used", multiscale_used)
      .member("size", static_cast<std::int64_t>(multiscale_size))
      .member("iterations", multiscale_iterations)
      .member("seconds", multiscale_seconds)
      .end_object();
  json.key("timings").begin_object();
  for (const auto& [phase, seconds] : timings.entries()) json.member(phase, seconds);
  json.end_object();
  json.key("strategy").raw(strategy.to_json());
  json.key("options");
  write_options(json, options);
  json.key("log").begin_array();
  for (const IterationRecord& r : log) {
    json.begin_object()
        .member("iteration", r.iteration)
        .member("cost", r.cost)
        .member("error", r.error)
        .member("epsilon", r.epsilon)
        .member("sinkhorn_iterations", r.sinkhorn_iterations)
        .member("sinkhorn_error", r.sinkhorn_error)
        .member("seconds", r.seconds)
        .end_object();
  }
  json.end_array().end_object();
  return json.str();
}

}  // namespace gw
