#include "solver/report.h"

#include <cmath>
#include <limits>

#include "core/config.h"
#include "core/json.h"

namespace gw {

ReportScalars report_scalars(const Result& r, const RunInfo& run) {
  ReportScalars s;
  s.emplace_back("version", std::string(GW_VERSION_STRING));
  s.emplace_back("termination", std::string(to_string(r.termination)));
  s.emplace_back("message", r.message);
  s.emplace_back("iterations", std::int64_t{r.iterations});
  s.emplace_back("n", std::int64_t{r.n});
  s.emplace_back("k", std::int64_t{r.k});
  s.emplace_back("plan_mass", r.plan_mass);
  s.emplace_back("plan_format", std::string(to_string(r.options.plan_format)));
  s.emplace_back("top_k", std::int64_t{r.options.top_k});
  s.emplace_back("support", std::string(to_string(r.strategy.support)));
  s.emplace_back("support_nnz", static_cast<std::int64_t>(r.support_nnz));
  s.emplace_back("estimated_peak_bytes", static_cast<std::int64_t>(r.strategy.estimated_peak_bytes));
  s.emplace_back("memory_limit_bytes", static_cast<std::int64_t>(r.strategy.memory_limit_bytes));
  if (!std::isnan(r.row_marginal_error)) {
    s.emplace_back("row_marginal_error", r.row_marginal_error);
    s.emplace_back("column_marginal_error", r.column_marginal_error);
  }
  s.emplace_back("gw_cost_estimate", r.gw_cost_estimate);
  s.emplace_back("gw_loss", r.gw_loss);
  s.emplace_back("gw_loss_stderr", r.gw_loss_stderr);
  s.emplace_back("gw_loss_exact", r.gw_loss_exact);
  s.emplace_back("total_seconds", r.total_seconds);
  s.emplace_back("backend", std::string(to_string(r.backend)));
  s.emplace_back("threads", std::int64_t{r.threads});
  s.emplace_back("isa", r.isa);
  // HDF5 via gw::io has no unsigned 64-bit scalars; a seed beyond int64 is kept exactly as text.
  if (r.seed <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    s.emplace_back("seed", static_cast<std::int64_t>(r.seed));
  } else {
    s.emplace_back("seed", std::to_string(r.seed));
  }
  s.emplace_back("epsilon", r.options.epsilon);
  s.emplace_back("num_anchors", std::int64_t{r.options.num_anchors});
  s.emplace_back("max_iterations", std::int64_t{r.options.max_iterations});
  s.emplace_back("fused_weight", r.options.fused_weight);
  s.emplace_back("source", run.source);
  s.emplace_back("target", run.target);
  s.emplace_back("source_rep", run.source_rep);
  s.emplace_back("target_rep", run.target_rep);
  s.emplace_back("source_distances", r.source_distances);
  s.emplace_back("target_distances", r.target_distances);
  if (run.abs_rho) {
    s.emplace_back("abs_rho", *run.abs_rho);
    s.emplace_back("truth", run.truth);
  }
  return s;
}

std::string report_json(const Result& r, const RunInfo& run) {
  JsonWriter json(/*pretty=*/true);
  json.begin_object()
      .member("command", run.command)
      .member("version", GW_VERSION_STRING)
      .member("source", run.source)
      .member("target", run.target)
      .member("source_rep", run.source_rep)
      .member("target_rep", run.target_rep)
      .member("source_geometry", run.source_description)
      .member("target_geometry", run.target_description)
      .member("output", run.output)
      .member("iterations", r.iterations)
      .member("total_seconds", r.total_seconds);
  json.key("abs_rho");
  if (run.abs_rho) {
    json.value(*run.abs_rho);
  } else {
    json.null();
  }
  json.member("truth", run.truth);
  json.key("result").raw(r.to_json(/*pretty=*/true));
  json.end_object();
  return json.str();
}

}  // namespace gw
