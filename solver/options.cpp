#include "solver/options.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

namespace gw {

std::string_view to_string(PlanFormat format) {
  switch (format) {
    case PlanFormat::kDense:
      return "dense";
    case PlanFormat::kTopK:
      return "topk";
  }
  return "unknown";
}

std::optional<PlanFormat> plan_format_from_string(std::string_view name) {
  if (name == "dense") return PlanFormat::kDense;
  if (name == "topk" || name == "top-k") return PlanFormat::kTopK;
  return std::nullopt;
}

std::string_view to_string(Support support) {
  switch (support) {
    case Support::kAuto:
      return "auto";
    case Support::kDense:
      return "dense";
    case Support::kSparse:
      return "sparse";
  }
  return "unknown";
}

std::optional<Support> support_from_string(std::string_view name) {
  if (name == "auto") return Support::kAuto;
  if (name == "dense") return Support::kDense;
  if (name == "sparse") return Support::kSparse;
  return std::nullopt;
}

std::string_view to_string(SolverKind solver) {
  switch (solver) {
    case SolverKind::kAuto:
      return "auto";
    case SolverKind::kSampled:
      return "sampled";
    case SolverKind::kExact:
      return "exact";
  }
  return "unknown";
}

std::optional<SolverKind> solver_kind_from_string(std::string_view name) {
  if (name == "auto") return SolverKind::kAuto;
  if (name == "sampled") return SolverKind::kSampled;
  if (name == "exact") return SolverKind::kExact;
  return std::nullopt;
}

std::string_view to_string(ExactMethod method) {
  switch (method) {
    case ExactMethod::kHybrid:
      return "hybrid";
    case ExactMethod::kConditionalGradient:
      return "cg";
    case ExactMethod::kMirrorDescent:
      return "mirror";
  }
  return "unknown";
}

std::optional<ExactMethod> exact_method_from_string(std::string_view name) {
  if (name == "hybrid") return ExactMethod::kHybrid;
  if (name == "cg") return ExactMethod::kConditionalGradient;
  if (name == "mirror") return ExactMethod::kMirrorDescent;
  return std::nullopt;
}

std::string_view to_string(InitialPlan init) {
  switch (init) {
    case InitialPlan::kProduct:
      return "product";
    case InitialPlan::kDistanceProfiles:
      return "profiles";
  }
  return "unknown";
}

std::optional<InitialPlan> initial_plan_from_string(std::string_view name) {
  if (name == "product") return InitialPlan::kProduct;
  if (name == "profiles") return InitialPlan::kDistanceProfiles;
  return std::nullopt;
}

double Options::resolved_epsilon_final() const {
  if (epsilon_final >= 0.0) return epsilon_final;
  return std::max(epsilon / 10.0, std::min(5e-4, epsilon.value()));
}

int Options::many_anchors(Index n, Index k) const {
  if (warmup_anchors > 0) return std::max(num_anchors.value(), warmup_anchors.value());
  // 40 M, but at most kWarmupFlops of GEMM work per such iteration (2 n k m flops): large problems
  // get fewer extra anchors (their starts are already well oriented by the profiles).
  constexpr double kWarmupFlops = 8e9;
  const double affordable = kWarmupFlops / (2.0 * static_cast<double>(n) * static_cast<double>(k));
  // Capped at INT_MAX before the conversion: 40 M, or the affordable count of a tiny problem
  // (4e9 at n = k = 1), can exceed int (found by the options fuzz harness).
  const double automatic = std::min(
      {40.0 * num_anchors, affordable, static_cast<double>(std::numeric_limits<int>::max())});
  return std::max(num_anchors.value(), static_cast<int>(automatic));
}

int Options::anchors_at(int t, Index n, Index k) const {
  return t < warmup_iterations ? many_anchors(n, k) : num_anchors.value();
}

int Options::max_anchors(Index n, Index k) const {
  return warmup_iterations > 0 || polish_iterations > 0 ? many_anchors(n, k) : num_anchors.value();
}

int Options::resolved_plateau_patience() const {
  return plateau_patience >= 0 ? plateau_patience.value() : std::max(min_iterations / 2, 20);
}

// The Setting<T> fields of each solver, in declaration order (options.h).
#define GW_SAMPLED_SETTINGS(X) \
  X(num_anchors) \
  X(warmup_iterations) \
  X(warmup_anchors) \
  X(lambda_ema) \
  X(epsilon) \
  X(epsilon_final) \
  X(epsilon_decay_iterations) \
  X(momentum) \
  X(max_iterations) \
  X(min_iterations) \
  X(tolerance) \
  X(check_every) \
  X(plateau_ema_weight) \
  X(plateau_improvement) \
  X(plateau_patience) \
  X(sinkhorn_max_iterations) \
  X(sinkhorn_tolerance) \
  X(sinkhorn_check_every) \
  X(polish_iterations) \
  X(polish_sinkhorn_iterations) \
  X(polish_sinkhorn_tolerance) \
  X(restarts) \
  X(restart_iterations) \
  X(multiscale) \
  X(multiscale_size)
#define GW_EXACT_SETTINGS(X) \
  X(exact_method) \
  X(exact_max_iterations) \
  X(exact_tolerance) \
  X(mirror_iterations) \
  X(mirror_epsilon) \
  X(mirror_epsilon_final) \
  X(mirror_sinkhorn_iterations) \
  X(hybrid_sampled_work) \
  X(hybrid_mirror_iterations) \
  X(hybrid_basin_iterations) \
  X(orientation_starts) \
  X(starts) \
  X(start_time_budget) \
  X(start_probe_iterations)

#define GW_IF_GIVEN(field) \
  if (field.given()) names.emplace_back(#field);
#define GW_FORGET(field) field.forget_given();

std::vector<std::string_view> Options::given_sampled_settings() const {
  std::vector<std::string_view> names;
  GW_SAMPLED_SETTINGS(GW_IF_GIVEN)
  return names;
}

std::vector<std::string_view> Options::given_exact_settings() const {
  std::vector<std::string_view> names;
  GW_EXACT_SETTINGS(GW_IF_GIVEN)
  return names;
}

void Options::forget_given() {
  GW_SAMPLED_SETTINGS(GW_FORGET)
  GW_EXACT_SETTINGS(GW_FORGET)
  plan_format.forget_given();
}

#undef GW_FORGET
#undef GW_IF_GIVEN
#undef GW_EXACT_SETTINGS
#undef GW_SAMPLED_SETTINGS

bool Options::is_valid(std::string* why) const {
  std::ostringstream problem;
  auto positive = [](double x) { return std::isfinite(x) && x > 0.0; };
  if (num_anchors < 1) {
    problem << "num_anchors (M) must be >= 1, got " << num_anchors;
  } else if (warmup_iterations < 0) {
    problem << "warmup_iterations must be >= 0, got " << warmup_iterations;
  } else if (warmup_anchors < 0) {
    problem << "warmup_anchors must be >= 0 (0 = automatic), got " << warmup_anchors;
  } else if (!(lambda_ema >= 0.0 && lambda_ema < 1.0)) {
    problem << "lambda_ema must be in [0, 1), got " << lambda_ema;
  } else if (!positive(epsilon)) {
    problem << "epsilon must be finite and > 0, got " << epsilon;
  } else if (!(epsilon_final < 0.0 || positive(epsilon_final))) {
    problem << "epsilon_final must be > 0 (or negative for the default schedule), got "
            << epsilon_final;
  } else if (epsilon_decay_iterations < 1) {
    problem << "epsilon_decay_iterations must be >= 1, got " << epsilon_decay_iterations;
  } else if (!(momentum > 0.0 && momentum <= 1.0)) {
    problem << "momentum (alpha) must be in (0, 1], got " << momentum;
  } else if (max_iterations < 1) {
    problem << "max_iterations must be >= 1, got " << max_iterations;
  } else if (min_iterations < 0) {
    problem << "min_iterations must be >= 0, got " << min_iterations;
  } else if (!(tolerance >= 0.0)) {
    problem << "tolerance must be >= 0, got " << tolerance;
  } else if (check_every < 1) {
    problem << "check_every must be >= 1, got " << check_every;
  } else if (!(plateau_ema_weight > 0.0 && plateau_ema_weight <= 1.0)) {
    problem << "plateau_ema_weight must be in (0, 1], got " << plateau_ema_weight;
  } else if (!(plateau_improvement >= 0.0 && plateau_improvement < 1.0)) {
    problem << "plateau_improvement must be in [0, 1), got " << plateau_improvement;
  } else if (sinkhorn_max_iterations < 1) {
    problem << "sinkhorn_max_iterations must be >= 1, got " << sinkhorn_max_iterations;
  } else if (!(sinkhorn_tolerance >= 0.0)) {
    problem << "sinkhorn_tolerance must be >= 0, got " << sinkhorn_tolerance;
  } else if (sinkhorn_check_every < 1) {
    problem << "sinkhorn_check_every must be >= 1, got " << sinkhorn_check_every;
  } else if (polish_iterations < 0) {
    problem << "polish_iterations must be >= 0, got " << polish_iterations;
  } else if (polish_sinkhorn_iterations < 1) {
    problem << "polish_sinkhorn_iterations must be >= 1, got " << polish_sinkhorn_iterations;
  } else if (!(polish_sinkhorn_tolerance >= 0.0)) {
    problem << "polish_sinkhorn_tolerance must be >= 0, got " << polish_sinkhorn_tolerance;
  } else if (auto_precomputed_max_nodes < 0) {
    problem << "auto_precomputed_max_nodes must be >= 0, got " << auto_precomputed_max_nodes;
  } else if (knn < 1) {
    problem << "knn must be >= 1, got " << knn;
  } else if (num_landmarks < 1) {
    problem << "num_landmarks must be >= 1, got " << num_landmarks;
  } else if (!(fused_weight >= 0.0 && fused_weight <= 1.0)) {
    problem << "fused_weight must be in [0, 1], got " << fused_weight;
  } else if (!(rho_a > 0.0)) {
    problem << "rho_a must be > 0 (+inf for a hard constraint), got " << rho_a;
  } else if (!(rho_b > 0.0)) {
    problem << "rho_b must be > 0 (+inf for a hard constraint), got " << rho_b;
  } else if (partial_mass && !positive(*partial_mass)) {
    problem << "partial_mass must be > 0, got " << *partial_mass;
  } else if (slack_shared && !positive(*slack_shared)) {
    problem << "slack_shared must be > 0, got " << *slack_shared;
  } else if (profile_anchors < 1) {
    problem << "profile_anchors must be >= 1, got " << profile_anchors;
  } else if (profile_quantiles < 1) {
    problem << "profile_quantiles must be >= 1, got " << profile_quantiles;
  } else if (!positive(profile_epsilon)) {
    problem << "profile_epsilon must be finite and > 0, got " << profile_epsilon;
  } else if (profile_sinkhorn_iterations < 1) {
    problem << "profile_sinkhorn_iterations must be >= 1, got " << profile_sinkhorn_iterations;
  } else if (restarts < 1) {
    problem << "restarts must be >= 1 (1 = no probing), got " << restarts;
  } else if (restart_iterations < 1) {
    problem << "restart_iterations must be >= 1, got " << restart_iterations;
  } else if (multiscale && multiscale_size < 2) {
    problem << "multiscale_size must be >= 2, got " << multiscale_size;
  } else if (threads < 0) {
    problem << "threads must be >= 0 (0 = all), got " << threads;
  } else if (device < 0) {
    problem << "device must be >= 0, got " << device;
  } else if (top_k < 1) {
    problem << "top_k must be >= 1, got " << top_k;
  } else if (support_size < 1) {
    problem << "support_size must be >= 1, got " << support_size;
  } else if (support_cells < 0 || support_cells == 1) {
    problem << "support_cells must be 0 (automatic) or >= 2, got " << support_cells;
  } else if (support_regrow_every < 0) {
    problem << "support_regrow_every must be >= 0 (0 = never), got " << support_regrow_every;
  } else if (support_feature_candidates < 0) {
    problem << "support_feature_candidates must be >= 0 (0 = off), got " << support_feature_candidates;

  } else if (loss_anchors < 1) {
    problem << "loss_anchors must be >= 1, got " << loss_anchors;
  } else if (!(exact_loss_max_work >= 0.0)) {
    problem << "exact_loss_max_work must be >= 0, got " << exact_loss_max_work;
    // Combinations in which a field would silently do nothing.
  } else if (restarts > 1 && restart_iterations >= max_iterations) {
    problem << "restarts = " << restarts << " probes of restart_iterations = " << restart_iterations
            << " iterations need restart_iterations < max_iterations = " << max_iterations
            << " (otherwise no probe would run); lower restart_iterations or set restarts = 1";
  } else if (partial_mass && !slack) {
    problem << "partial_mass is transported through the slack row and column, so slack = false "
               "contradicts it; keep slack on (the default) or unset partial_mass";
  } else if (backend == Backend::kCpu && device != 0) {
    problem << "device = " << device
            << " selects a CUDA device, which backend cpu does not use; set backend cuda or "
               "leave device at 0";
  } else if (!(exact_max_work >= 0.0)) {
    problem << "exact_max_work must be >= 0, got " << exact_max_work;
  } else if (exact_max_iterations < 1) {
    problem << "exact_max_iterations must be >= 1, got " << exact_max_iterations;
  } else if (!(exact_tolerance >= 0.0)) {
    problem << "exact_tolerance must be >= 0, got " << exact_tolerance;
  } else if (mirror_iterations < 0 ||
             (mirror_iterations == 0 && exact_method == ExactMethod::kMirrorDescent)) {
    problem << "mirror_iterations must be >= 0 (>= 1 for exact_method mirror), got "
            << mirror_iterations;
  } else if (!positive(mirror_epsilon) || !positive(mirror_epsilon_final)) {
    problem << "mirror_epsilon and mirror_epsilon_final must be > 0, got " << mirror_epsilon
            << " and " << mirror_epsilon_final;
  } else if (mirror_sinkhorn_iterations < 1) {
    problem << "mirror_sinkhorn_iterations must be >= 1, got " << mirror_sinkhorn_iterations;
  } else if (!(hybrid_sampled_work >= 0.0)) {
    problem << "hybrid_sampled_work must be >= 0, got " << hybrid_sampled_work;
  } else if (hybrid_mirror_iterations < 0) {
    problem << "hybrid_mirror_iterations must be >= 0, got " << hybrid_mirror_iterations;
  } else if (hybrid_basin_iterations < 1) {
    problem << "hybrid_basin_iterations must be >= 1, got " << hybrid_basin_iterations;
  } else if (starts < 1) {
    problem << "starts must be >= 1, got " << starts;
  } else if (start_probe_iterations < 0) {
    problem << "start_probe_iterations must be >= 0, got " << start_probe_iterations;
  } else if (!(start_time_budget >= 0.0)) {
    problem << "start_time_budget must be >= 0 seconds, got " << start_time_budget;
  }
  const std::string text = problem.str();
  if (why != nullptr) *why = text;
  return text.empty();
}

}  // namespace gw
