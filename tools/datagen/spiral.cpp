#include "datagen/spiral.h"

#include <cmath>

#include "core/error.h"
#include "core/rng.h"

namespace gw::datagen {

namespace {
double linspace(double lo, double hi, Index i, Index count) {
  return count == 1 ? lo : lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(count - 1);
}
}  // namespace

PointSet spiral(Index n, std::uint64_t seed, double noise) {
  GW_CHECK(n >= 1, "spiral needs n >= 1, got " << n);
  Rng rng(seed, 1);
  PointSet set{n, 2, std::vector<double>(2 * static_cast<std::size_t>(n)), std::vector<double>(n)};
  for (Index i = 0; i < n; ++i) {
    const double r = linspace(0.3, 1.0, i, n);
    const double theta = linspace(0.0, 9.0, i, n);
    const double e0 = noise * rng.normal();
    const double e1 = noise * rng.normal();
    set.points[2 * i] = (r + e0) * std::cos(theta);
    set.points[2 * i + 1] = (r + e1) * std::sin(theta);
    set.angles[i] = theta;
  }
  return set;
}

PointSet swiss_roll(Index k, std::uint64_t seed, double noise) {
  GW_CHECK(k >= 1, "swiss roll needs k >= 1, got " << k);
  Rng rng(seed, 2);
  PointSet set{k, 3, std::vector<double>(3 * static_cast<std::size_t>(k)), std::vector<double>(k)};
  for (Index j = 0; j < k; ++j) {
    const double r = linspace(0.3, 1.0, j, k);
    const double theta = linspace(0.0, 9.0, j, k);
    const double e0 = noise * rng.normal();
    const double e1 = noise * rng.normal();
    const double h = rng.uniform();
    set.points[3 * j] = (r + e0) * std::cos(theta);
    set.points[3 * j + 1] = h;
    set.points[3 * j + 2] = (r + e1) * std::sin(theta);
    set.angles[j] = theta;
  }
  return set;
}

}  // namespace gw::datagen
