// Plain oracles shared by the solver tests: random metric matrices, random plans and the GW loss
// by its definition. Header-only test code (never part of a library).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

#include "core/rng.h"
#include "core/types.h"

namespace gw::test {

// Random symmetric distance matrix (n x n, row-major) with zero diagonal: Euclidean distances of n
// uniform random points in [0, 1)^d, so it is a genuine metric.
inline std::vector<double> random_metric(Rng& rng, Index n, int d = 3) {
  std::vector<double> pts(static_cast<std::size_t>(n) * d);
  for (double& x : pts) x = rng.uniform();
  std::vector<double> m(static_cast<std::size_t>(n) * n);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j) {
      double s = 0.0;
      for (int t = 0; t < d; ++t) {
        s += (pts[i * d + t] - pts[j * d + t]) * (pts[i * d + t] - pts[j * d + t]);
      }
      m[i * n + j] = std::sqrt(s);
    }
  }
  return m;
}

// Random positive plan (n x k, row-major) of total mass 1 (not on any marginal polytope).
inline std::vector<double> random_plan(Rng& rng, Index n, Index k) {
  std::vector<double> t(static_cast<std::size_t>(n) * k);
  double total = 0.0;
  for (double& x : t) total += (x = rng.uniform());
  for (double& x : t) x /= total;
  return t;
}

// L(T) by its definition, sum_{i,j,a,b} (dx_ia - dy_jb)^2 T_ij T_ab: a quadruple loop, the oracle
// for gw::gw_loss and the exact solver's objective.
inline double gw_loss_by_definition(const std::vector<double>& dx,
                                    const std::vector<double>& dy,
                                    const std::vector<double>& t,
                                    Index n,
                                    Index k) {
  double sum = 0.0;
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < k; ++j)
      for (Index a = 0; a < n; ++a)
        for (Index b = 0; b < k; ++b) {
          const double diff = dx[i * n + a] - dy[j * k + b];
          sum += diff * diff * t[i * k + j] * t[a * k + b];
        }
  return sum;
}

// min over permutations of sum_i cost(i, perm(i)) / n, by enumeration.
inline double best_assignment(const std::vector<double>& cost, const std::vector<Index>& rows, Index k) {
  std::vector<Index> cols(rows.size());
  std::iota(cols.begin(), cols.end(), 0);
  double best = std::numeric_limits<double>::infinity();
  do {
    double total = 0.0;
    for (std::size_t r = 0; r < rows.size(); ++r) total += cost[rows[r] * k + cols[r]];
    best = std::min(best, total);
  } while (std::next_permutation(cols.begin(), cols.end()));
  return best / static_cast<double>(rows.size());
}

}  // namespace gw::test
