// Shared by the "options" and "solve" fuzz harnesses (options_fuzz.cpp, solve_fuzz.cpp): one input
// format, so one seed corpus serves both. An input is: every gw::Options field (take_options), two
// problem sizes for the schedule checks, a gate byte (kept for the format; the solve harness
// ignores it), then a tiny problem (solve_tiny).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "fuzz_input.h"
#include "solver/options.h"
#include "solver/problem.h"
#include "solver/solve.h"

namespace gw::fuzz {

inline void require(bool condition) {
  if (!condition) std::abort();
}

inline gw::Options take_options(FuzzInput& in) {
  gw::Options o;
  o.num_anchors = in.take_int();
  o.warmup_iterations = in.take_int();
  o.warmup_anchors = in.take_int();
  o.lambda_ema = in.take_double();
  o.epsilon = in.take_double();
  o.epsilon_final = in.take_double();
  o.epsilon_decay_iterations = in.take_int();
  o.momentum = in.take_double();
  o.max_iterations = in.take_int();
  o.min_iterations = in.take_int();
  o.tolerance = in.take_double();
  o.check_every = in.take_int();
  o.plateau_ema_weight = in.take_double();
  o.plateau_improvement = in.take_double();
  o.plateau_patience = in.take_int();
  o.sinkhorn_max_iterations = in.take_int();
  o.sinkhorn_tolerance = in.take_double();
  o.sinkhorn_check_every = in.take_int();
  o.polish_iterations = in.take_int();
  o.polish_sinkhorn_iterations = in.take_int();
  o.polish_sinkhorn_tolerance = in.take_double();
  if (in.take_bool()) o.distance_mode = static_cast<gw::DistanceMode>(in.take_in(0, 2));
  o.auto_precomputed_max_nodes = in.take_int();
  o.knn = in.take_int();
  o.num_landmarks = in.take_int();
  o.fused_weight = in.take_double();
  o.rho_a = in.take_double();
  o.rho_b = in.take_double();
  o.slack = in.take_bool();
  if (in.take_bool()) o.partial_mass = in.take_double();
  o.initial_plan = in.take_bool() ? gw::InitialPlan::kProduct : gw::InitialPlan::kDistanceProfiles;
  o.profile_anchors = in.take_int();
  o.profile_quantiles = in.take_int();
  o.profile_epsilon = in.take_double();
  o.profile_sinkhorn_iterations = in.take_int();
  o.restarts = in.take_int();
  o.restart_iterations = in.take_int();
  o.multiscale = in.take_bool();
  o.multiscale_size = in.take_int();
  o.precision = in.take_bool() ? gw::Precision::kF64 : gw::Precision::kF32;
  o.threads = in.take_int();
  o.device = in.take_int();
  o.seed = in.take<std::uint64_t>();
  o.round_marginals = in.take_bool();
  o.plan_format = in.take_bool() ? gw::PlanFormat::kTopK : gw::PlanFormat::kDense;
  o.top_k = in.take_int();
  o.compute_gw_loss = in.take_bool();
  o.exact_loss_max_work = in.take_double();
  o.loss_anchors = in.take_int();
  // Every Setting<T> above was assigned, so all of them read as given, which asks for both solvers
  // at once (an error of choose_strategy). The fuzzer starts from none given and then marks one of
  // each solver's settings given or not (read last, so earlier inputs decode as before).
  o.forget_given();
  if (in.take_bool()) o.num_anchors = o.num_anchors.value();
  if (in.take_bool()) o.exact_tolerance = o.exact_tolerance.value();
  return o;
}

// Caps that keep a tiny solve fast without leaving the ranges is_valid accepts.
inline void cap_for_solve(gw::Options& o) {
  // Caps keep a setting's given mark as it was (set_default), so capping makes no request.
  auto cap = [](auto& v, int hi) {
    if constexpr (requires { v.set_default(hi); }) {
      v.set_default(std::min<int>(v, hi));
    } else {
      v = std::min(v, hi);
    }
  };
  cap(o.num_anchors, 16);
  cap(o.warmup_iterations, 3);
  cap(o.warmup_anchors, 64);
  cap(o.max_iterations, 25);
  cap(o.min_iterations, 25);
  cap(o.epsilon_decay_iterations, 25);
  cap(o.sinkhorn_max_iterations, 20);
  cap(o.polish_iterations, 3);
  cap(o.polish_sinkhorn_iterations, 20);
  cap(o.profile_anchors, 32);
  cap(o.profile_quantiles, 16);
  cap(o.profile_sinkhorn_iterations, 10);
  cap(o.restarts, 3);
  cap(o.restart_iterations, 10);
  cap(o.num_landmarks, 8);
  cap(o.knn, 8);
  cap(o.top_k, 16);
  cap(o.loss_anchors, 32);
  o.multiscale_size.set_default(std::min<gw::Index>(o.multiscale_size, 8));
  o.threads = std::min(o.threads, 2);
  o.backend = gw::Backend::kCpu;
}

// Reads the options and the two sizes; checks is_valid and, for valid options, the derived
// schedules. Returns whether the options are valid.
inline bool validate_options(FuzzInput& in, gw::Options& options) {
  options = take_options(in);
  std::string why;
  const bool valid = options.is_valid(&why);
  require(valid == why.empty());
  if (!valid) return false;

  const auto n = static_cast<gw::Index>(in.take_in(0, 1 << 20));
  const auto k = static_cast<gw::Index>(in.take_in(0, 1 << 20));
  const int many = options.many_anchors(n, k);
  require(many >= options.num_anchors);
  require(options.max_anchors(n, k) >= options.num_anchors);
  for (int t : {0, 1, options.warmup_iterations.value(), options.max_iterations - 1}) {
    require(options.anchors_at(t, n, k) >= 1);
  }
  require(options.resolved_plateau_patience() >= 0);
  const double eps_final = options.resolved_epsilon_final();
  require(std::isfinite(eps_final) && eps_final > 0.0);
  return true;
}

// Runs gw::solve on a tiny problem read from the rest of the input (2..9 points a side in 2-D,
// iteration counts and sample sizes capped so one execution stays in milliseconds): valid options
// must give a Result or a gw::Error, never a crash.
inline void solve_tiny(FuzzInput& in, gw::Options options) {
  cap_for_solve(options);
  if (!options.is_valid()) return;  // the caps can cross a cross-field rule (restarts)
  const auto ns = static_cast<gw::Index>(in.take_in(2, 9));
  const auto ks = static_cast<gw::Index>(in.take_in(2, 9));
  std::vector<double> xs(static_cast<std::size_t>(ns) * 2), ys(static_cast<std::size_t>(ks) * 2);
  for (double& x : xs) x = static_cast<double>(in.take<std::uint8_t>()) / 16.0;
  for (double& y : ys) y = static_cast<double>(in.take<std::uint8_t>()) / 16.0;
  gw::Problem problem;
  problem.source = gw::Geometry::from_points(xs, ns, 2);
  problem.target = gw::Geometry::from_points(ys, ks, 2);
  if (options.fused_weight > 0.0) {
    gw::DenseMatrix<double> cost;
    cost.rows = ns;
    cost.cols = ks;
    cost.values.resize(static_cast<std::size_t>(ns) * ks);
    for (double& c : cost.values) c = static_cast<double>(in.take<std::uint8_t>()) / 255.0;
    problem.feature_cost = std::move(cost);
  }
  try {
    const gw::Result result = gw::solve(problem, options);
    (void)result.brief_report();
  } catch (const gw::Error&) {
    // Bad data (coincident points, a disconnected kNN graph the stitcher cannot fix) is an answer.
  }
}

}  // namespace gw::fuzz
