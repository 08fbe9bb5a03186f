// Synthetic benchmark data: the spiral -> swiss roll task of the reference solver
// (bench/README.md, spiral).
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"

namespace gw::datagen {

// n points, row-major n x dimension, with the ground-truth angle of each point.
struct PointSet {
  Index n = 0;
  int dimension = 0;
  std::vector<double> points;
  std::vector<double> angles;
};

// Source: n points in 2-D on a noisy spiral. With r_i = linspace(0.3, 1.0, n) and
// theta_i = linspace(0, 9, n): x = (r + e0) cos(theta), y = (r + e1) sin(theta), e ~ N(0, noise^2)
// (noise 0.05 in the benchmark). Seeded by gw::Rng(seed, stream 1).
PointSet spiral(Index n, std::uint64_t seed, double noise = 0.05);

// Target: k points in 3-D, the same spiral with its own noise rolled up as a swiss roll:
// coordinates (x, h, y) with height h ~ U(0, 1). Seeded by gw::Rng(seed, stream 2).
PointSet swiss_roll(Index k, std::uint64_t seed, double noise = 0.05);

}  // namespace gw::datagen
