// Synthetic shape classes for `gwalign pairwise` tests and benchmarks: C base shapes, each a
// closed curve in 3-D made from a few random Fourier modes, and P copies per class that are
// resampled (each copy draws its own 100-200 points along the curve), rotated (a uniformly random
// 3-D rotation) and noised (isotropic Gaussian noise).
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"

namespace gw::datagen {

struct ShapesOptions {
  int classes = 5;
  int per_class = 10;
  // Points per copy, drawn uniformly in [min_points, max_points].
  Index min_points = 100;
  Index max_points = 200;
  // Standard deviation of the noise added to every coordinate, relative to the shape's mean
  // radius (about 1).
  double noise = 0.03;
  std::uint64_t seed = 0;
};

// One copy: n x 3 points, row-major, and its class.
struct ShapeCopy {
  Index n = 0;
  std::vector<double> points;
  int label = 0;
};

// classes x per_class copies, class-major (copy c * per_class + r is copy r of class c). The base
// shape of class c is (s r(t) cos t, r(t) sin t, z(t)) with r(t) = max(0.2, 1 + sum_{m=1..4}
// a_m cos(m t + phi_m)), z(t) = sum_{m=1..3} b_m sin(m t + psi_m) and a stretch s in [1, 2.5],
// with coefficients drawn from gw::Rng(seed, stream c).
// A copy draws curve parameters t uniformly (sorted, so the curve is covered in order), its
// rotation and its noise from gw::Rng(seed, stream 1000 + copy index). Same options: the same
// copies (reproducible per platform, see gw::Rng::normal).
std::vector<ShapeCopy> shape_classes(const ShapesOptions& options);

}  // namespace gw::datagen
