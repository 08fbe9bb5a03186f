// Pieces shared by the Sinkhorn implementations (reference, fused CPU, CUDA orchestration):
// argument validation, the potential conventions, the damping factors, the residual measured at
// checks, and the check schedule. Private to the module (not installed).
#pragma once

#include <cmath>
#include <limits>
#include <span>
#include <string>

#include "sinkhorn/sinkhorn.h"

namespace gw::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Balanced problems need sum(a) == sum(b); this much relative mismatch is accepted (marginals
// normalized in float32 differ by ~1e-7 relative).
inline constexpr double kMassMismatchTolerance = 1e-5;

// Throws gw::Error (kInvalidArgument for shapes/options, kBadData for marginal or potential
// values) unless the problem is well formed. `who` prefixes messages ("sinkhorn").
void validate_problem(const char* who,
                      const CostView& cost,
                      std::span<const double> a,
                      std::span<const double> b,
                      double epsilon,
                      std::span<const double> f,
                      std::span<const double> g,
                      const SinkhornOptions& options);

// Shape / option checks for sinkhorn_plan().
void validate_plan(const char* who,
                   const CostView& cost,
                   std::span<const double> f,
                   std::span<const double> g,
                   double epsilon,
                   const PlanView& plan,
                   const SinkhornOptions& options);

// Checks a potential vector given on input: no NaN, no +inf (kBadData).
void check_potentials(const char* who, std::span<const double> values, const char* name);

// The pieces validate_problem is made of, for callers that receive the inputs separately (the
// CUDA class). All throw gw::Error.
void check_options(const char* who, const SinkhornOptions& options);
void check_cost_shape(const char* who, const CostView& cost);
void check_epsilon(const char* who, double epsilon);
// Checks a marginal's values (finite, >= 0, positive sum; kBadData) and returns its sum.
double checked_mass(const char* who, std::span<const double> m, const char* name);
// Balanced problems (both rho infinite) need equal masses (kInvalidArgument).
void check_balance(const char* who, double mass_a, double mass_b, const SinkhornOptions& options);

// Potential (cost units) -> scaled potential f / epsilon, with the zero-mass stand-in (and -inf)
// mapped to -inf.
inline double to_scaled(double potential, double epsilon) {
  return potential <= 0.5 * kZeroMassPotential ? -kInf : potential / epsilon;
}

// Scaled potential -> potential (cost units); -inf becomes kZeroMassPotential.
inline double from_scaled(double scaled, double epsilon) {
  return scaled == -kInf ? kZeroMassPotential : scaled * epsilon;
}

// Damping factor tau = rho / (rho + epsilon) (1 for rho = +inf).
inline double damping(double rho, double epsilon) {
  return std::isinf(rho) ? 1.0 : rho / (rho + epsilon);
}

// The scaled potential after a row (or column) update, given the mass m of the row and
// lse = LSE_j((g_j - C_ij) / epsilon): tau * (log m - lse); -inf for zero mass.
inline double updated_potential(double mass, double lse, double tau) {
  return mass > 0.0 ? tau * (std::log(mass) - lse) : -kInf;
}

// One row's term of the residual reported as SinkhornResult::marginal_error:
// |row_mass - a_i exp(-f_i / rho_a)| where f_i = epsilon * scaled_f (the fixed point of the
// unbalanced row update; a_i itself in the balanced case).
inline double row_residual(
    double row_mass, double mass, double scaled_f, double epsilon, double rho) {
  if (mass == 0.0) return row_mass;  // the plan row should be empty
  const double target = std::isinf(rho) ? mass : mass * std::exp(-scaled_f * epsilon / rho);
  return std::abs(row_mass - target);
}

// Iteration t (0-based count of updates applied so far) measures the residual when it is a
// multiple of check_every or the last one.
inline bool is_check_iteration(int t, const SinkhornOptions& options) {
  return t % options.check_every == 0 || t >= options.max_iterations;
}

// Running log-sum-exp with an online maximum: value() = log(sum_t exp(y_t)). -inf terms are
// ignored; an empty sum is -inf. NaN terms make value() NaN.
struct OnlineLse {
  double max = -kInf;
  double sum = 0.0;

  void add(double y) {
    if (y == -kInf) return;
    if (y > max) {
      sum = sum * std::exp(max - y) + 1.0;
      max = y;
    } else if (y <= max) {
      sum += std::exp(y - max);
    } else {  // NaN
      sum = std::numeric_limits<double>::quiet_NaN();
    }
  }
  void merge(const OnlineLse& other) {
    if (other.max == -kInf) {
      if (std::isnan(other.sum)) sum = other.sum;
      return;
    }
    if (max == -kInf) {
      const double keep_nan = sum;
      *this = other;
      if (std::isnan(keep_nan)) sum = keep_nan;
      return;
    }
    const double m = std::max(max, other.max);
    sum = sum * std::exp(max - m) + other.sum * std::exp(other.max - m);
    max = m;
  }
  double value() const {
    return max == -kInf ? (std::isnan(sum) ? sum : -kInf) : max + std::log(sum);
  }
};

// Fills the result for a stop at iteration t with residual `error`. Returns true when the solver
// must stop now (converged, out of iterations, or non-finite residual).
bool finish_check(int t, double error, const SinkhornOptions& options, SinkhornResult& result);

}  // namespace gw::detail
