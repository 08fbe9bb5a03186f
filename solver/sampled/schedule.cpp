// The schedules both loops share: epsilon_t, the slack layout of the augmented Sinkhorn problem
// and the stopping rule (sampled_impl.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "solver/sampled/sampled_impl.h"

namespace gw::detail {

double epsilon_at(const Options& options, int iteration) {
  const double start = options.epsilon;
  const double end = options.resolved_epsilon_final();
  const int horizon = std::min(options.epsilon_decay_iterations, options.max_iterations);
  if (horizon <= 1) return start;
  const double fraction = static_cast<double>(iteration) / (horizon - 1);
  return start * std::pow(end / start, std::min(1.0, fraction));
}

SlackLayout slack_layout(Index n, Index k, const Options& options) {
  SlackLayout slack;
  const double larger = static_cast<double>(std::max(n, k));
  if (options.partial_mass) {
    slack.enabled = true;
    slack.exact_partial = true;
    slack.mass = *options.partial_mass / larger;
    GW_CHECK(slack.mass <= 1.0 + 1e-12,
             "partial_mass " << *options.partial_mass << " moves " << slack.mass
                             << " of the mass, more than the marginals hold (at most max(n, k) = "
                             << larger << " points)");
    slack.mass = std::min(slack.mass, 1.0);
  } else if (options.slack) {
    slack.enabled = true;
    const double shared = options.slack_shared.value_or(static_cast<double>(std::min(n, k)));
    GW_CHECK(shared <= larger,
             "slack_shared " << shared << " is more than max(n, k) = " << larger << " points");
    slack.mass = shared / larger;
  } else {
    return slack;
  }
  // Marginals are normalized to mass 1 per side: |p| = |q| = 1.
  slack.row_mass = std::max(1.0 - slack.mass, 1e-10);
  slack.col_mass = std::max(1.0 - slack.mass, 1e-10);
  return slack;
}

StoppingRule::StoppingRule(const Options& options) : options_(options) {}

std::optional<Termination> StoppingRule::update(int iteration,
                                                double cost,
                                                double error,
                                                bool check) {
  const double w = options_.plateau_ema_weight;
  ema_ = started_ ? w * cost + (1.0 - w) * ema_ : cost;
  if (!started_ || ema_ < best_ * (1.0 - options_.plateau_improvement)) {
    best_ = ema_;
    best_iteration_ = iteration;
  }
  started_ = true;
  if (!check || iteration < options_.min_iterations) return std::nullopt;
  if (error < options_.tolerance) {
    message_ = "converged: ||T_t - T_{t-1}||_F = " + std::to_string(error) + " < tolerance " +
               std::to_string(options_.tolerance) + " at iteration " + std::to_string(iteration);
    return Termination::kConverged;
  }
  const int patience = options_.resolved_plateau_patience();
  if (options_.plateau_improvement > 0.0 && iteration - best_iteration_ >= patience) {
    message_ = "cost plateau: the smoothed cost has not improved by " +
               std::to_string(100.0 * options_.plateau_improvement) + "% for " +
               std::to_string(iteration - best_iteration_) + " iterations (best at iteration " +
               std::to_string(best_iteration_) + ")";
    return Termination::kPlateau;
  }
  return std::nullopt;
}

}  // namespace gw::detail
