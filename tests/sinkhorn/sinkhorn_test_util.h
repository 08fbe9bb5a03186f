// Random Sinkhorn problems and comparison helpers shared by test_sinkhorn and test_sinkhorn_cuda.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/types.h"
#include "sinkhorn/sinkhorn.h"
#include "sinkhorn/sinkhorn_reference.h"

namespace gw::test {

// Which marginal constraints are relaxed.
enum class Mode { kBalanced, kSemiRelaxed, kUnbalanced };

inline const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::kBalanced:
      return "balanced";
    case Mode::kSemiRelaxed:
      return "semirelaxed";
    case Mode::kUnbalanced:
      return "unbalanced";
  }
  return "?";
}

inline void set_mode(Mode mode, SinkhornOptions& options) {
  const double inf = std::numeric_limits<double>::infinity();
  options.rho_a = mode == Mode::kUnbalanced ? 0.5 : inf;
  options.rho_b = mode == Mode::kBalanced ? inf : 0.2;
}

// A dense problem: cost uniform in [0, scale) (stored as float and as double, same values), random
// positive marginals normalized to mass 1 (b to `mass_b`).
struct Problem {
  Index n = 0;
  Index k = 0;
  std::vector<float> c32;
  std::vector<double> c64;
  std::vector<double> a;
  std::vector<double> b;

  CostView cost(Precision type) const {
    return type == Precision::kF32 ? CostView(c32.data(), n, k) : CostView(c64.data(), n, k);
  }
  void set_cost(std::size_t at, double value) {
    c32[at] = static_cast<float>(value);
    c64[at] = static_cast<double>(c32[at]);
  }
};

inline std::vector<double> random_marginal(Rng& rng, Index size, double mass = 1.0) {
  std::vector<double> m(size);
  double total = 0.0;
  for (double& x : m) {
    x = 0.5 + rng.uniform();
    total += x;
  }
  for (double& x : m) x *= mass / total;
  return m;
}

inline Problem random_problem(Rng& rng, Index n, Index k, double scale = 1.0) {
  Problem p;
  p.n = n;
  p.k = k;
  p.c32.resize(static_cast<std::size_t>(n) * k);
  p.c64.resize(p.c32.size());
  // The double cost holds exactly the float values, so both cost types describe one problem.
  for (std::size_t i = 0; i < p.c32.size(); ++i) p.set_cost(i, scale * rng.uniform());
  p.a = random_marginal(rng, n);
  p.b = random_marginal(rng, k);
  return p;
}

// The plan of potentials (f, g), computed by the reference in double.
inline std::vector<double> reference_plan(const Problem& p,
                                          const std::vector<double>& f,
                                          const std::vector<double>& g,
                                          double epsilon) {
  std::vector<double> plan(static_cast<std::size_t>(p.n) * p.k);
  sinkhorn_plan_reference(p.cost(Precision::kF64), f, g, epsilon, plan);
  return plan;
}

inline double l1_distance(const std::vector<double>& x, const std::vector<double>& y) {
  double d = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) d += std::abs(x[i] - y[i]);
  return d;
}

inline bool all_finite(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
}

// L1 error of the row / column sums of a dense n x k plan against targets.
inline double row_sum_error(const std::vector<double>& plan,
                            Index n,
                            Index k,
                            const std::vector<double>& a) {
  double error = 0.0;
  for (Index i = 0; i < n; ++i) {
    double s = 0.0;
    for (Index j = 0; j < k; ++j) s += plan[static_cast<std::size_t>(i) * k + j];
    error += std::abs(s - a[i]);
  }
  return error;
}

inline double column_sum_error(const std::vector<double>& plan,
                               Index n,
                               Index k,
                               const std::vector<double>& b) {
  double error = 0.0;
  for (Index j = 0; j < k; ++j) {
    double s = 0.0;
    for (Index i = 0; i < n; ++i) s += plan[static_cast<std::size_t>(i) * k + j];
    error += std::abs(s - b[j]);
  }
  return error;
}

}  // namespace gw::test
