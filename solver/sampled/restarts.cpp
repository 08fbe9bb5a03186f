// Restart probes (Options::restarts): the first restart_iterations iterations once per probe, each
// under its own anchor stream, scored by GW loss; the best probe's plan and potentials continue.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/timer.h"
#include "solver/sampled/sampled_impl.h"

namespace gw::detail {

void run_restart_probes(PreparedProblem& pb, const Options& options, Result& result) {
  // The starting plan is kept in float32 between probes (a start needs no more), so that the
  // probes' peak memory stays within three plans plus this copy and the best probe's plan.
  const std::vector<float> start(pb.initial_plan.begin(), pb.initial_plan.end());
  std::vector<float> best_plan;
  std::vector<double> best_f, best_g;
  double best_loss = std::numeric_limits<double>::infinity();
  for (int r = 0; r < options.restarts; ++r) {
    PreparedProblem probe = pb;
    probe.initial_plan.assign(start.begin(), start.end());
    probe.window = {0,
                    options.restart_iterations,
                    /*stream=*/100 + static_cast<std::uint64_t>(r),
                    /*stopping=*/false};
    Result probe_result;
    std::vector<double> probe_plan;
    run_loop(probe, options, probe_plan, probe_result);
    for (const auto& [phase, seconds] : probe_result.timings.entries()) {
      result.timings.add("probe_" + phase, seconds);
    }
    result.backend = probe_result.backend;
    result.threads = probe_result.threads;
    if (probe_result.termination == Termination::kNonFinite) {
      result.restart_losses.push_back(std::numeric_limits<double>::quiet_NaN());
      continue;
    }
    Result scored;
    {
      ScopedPhase phase(result.timings, "probe_loss");
      compute_loss(pb, probe_plan, plan_sums(probe_plan, pb.n, pb.k), options, scored);
    }
    result.restart_losses.push_back(scored.gw_loss);
    if (scored.gw_loss < best_loss) {
      best_loss = scored.gw_loss;
      result.restart_chosen = r;
      best_plan.assign(probe_plan.begin(), probe_plan.end());
      best_f = std::move(probe.potential_f);
      best_g = std::move(probe.potential_g);
    }
  }
  if (result.restart_chosen >= 0) {
    pb.initial_plan.assign(best_plan.begin(), best_plan.end());
    pb.potential_f = std::move(best_f);
    pb.potential_g = std::move(best_g);
    pb.window.first_iteration = options.restart_iterations;
  }
}

}  // namespace gw::detail
