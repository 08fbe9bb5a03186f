#include "datagen/shapes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/rng.h"

namespace gw::datagen {
namespace {

struct BaseShape {
  std::array<double, 4> a{}, phi{};
  std::array<double, 3> b{}, psi{};
  double stretch = 1.0;

  std::array<double, 3> at(double t) const {
    double r = 1.0, z = 0.0;
    for (int m = 0; m < 4; ++m) r += a[m] * std::cos((m + 1) * t + phi[m]);
    for (int m = 0; m < 3; ++m) z += b[m] * std::sin((m + 1) * t + psi[m]);
    r = std::max(r, 0.2);
    return {stretch * r * std::cos(t), r * std::sin(t), z};
  }
};

BaseShape base_shape(std::uint64_t seed, int c) {
  Rng rng(seed, static_cast<std::uint64_t>(c));
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  BaseShape shape;
  // Mode m gets amplitude up to 0.5 / m in the plane and 0.8 / m in height, and the curve is
  // stretched along x by up to 2.5: classes whose distance distributions differ clearly (with
  // smaller amplitudes, resampling and noise blurred the classes together for GW and POT alike).
  for (int m = 0; m < 4; ++m) {
    shape.a[m] = (2.0 * rng.uniform() - 1.0) * 0.5 / (m + 1);
    shape.phi[m] = kTwoPi * rng.uniform();
  }
  for (int m = 0; m < 3; ++m) {
    shape.b[m] = (2.0 * rng.uniform() - 1.0) * 0.8 / (m + 1);
    shape.psi[m] = kTwoPi * rng.uniform();
  }
  shape.stretch = 1.0 + 1.5 * rng.uniform();
  return shape;
}

// A uniformly random rotation from a random unit quaternion (normalized Gaussian 4-vector).
std::array<double, 9> random_rotation(Rng& rng) {
  double q[4], norm = 0.0;
  for (double& v : q) {
    v = rng.normal();
    norm += v * v;
  }
  norm = std::sqrt(norm);
  for (double& v : q) v /= norm;
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  return {1 - 2 * (y * y + z * z),
          2 * (x * y - w * z),
          2 * (x * z + w * y),
          2 * (x * y + w * z),
          1 - 2 * (x * x + z * z),
          2 * (y * z - w * x),
          2 * (x * z - w * y),
          2 * (y * z + w * x),
          1 - 2 * (x * x + y * y)};
}

}  // namespace

std::vector<ShapeCopy> shape_classes(const ShapesOptions& options) {
  GW_CHECK(options.classes >= 1, "shapes: classes must be >= 1, got " << options.classes);
  GW_CHECK(options.per_class >= 1, "shapes: per_class must be >= 1, got " << options.per_class);
  GW_CHECK(options.min_points >= 3 && options.max_points >= options.min_points,
           "shapes: need 3 <= min_points <= max_points, got " << options.min_points << " and "
                                                              << options.max_points);
  GW_CHECK(options.noise >= 0.0, "shapes: noise must be >= 0, got " << options.noise);
  constexpr double kTwoPi = 2.0 * std::numbers::pi;
  std::vector<ShapeCopy> copies;
  copies.reserve(static_cast<std::size_t>(options.classes) * options.per_class);
  for (int c = 0; c < options.classes; ++c) {
    const BaseShape shape = base_shape(options.seed, c);
    for (int r = 0; r < options.per_class; ++r) {
      const std::uint64_t index = static_cast<std::uint64_t>(c) * options.per_class + r;
      Rng rng(options.seed, 1000 + index);
      ShapeCopy copy;
      copy.label = c;
      copy.n = options.min_points + static_cast<Index>(rng.uniform_index(static_cast<std::uint64_t>(
                                        options.max_points - options.min_points + 1)));
      std::vector<double> t(copy.n);
      for (double& v : t) v = kTwoPi * rng.uniform();
      std::sort(t.begin(), t.end());
      const std::array<double, 9> rot = random_rotation(rng);
      copy.points.resize(static_cast<std::size_t>(copy.n) * 3);
      for (Index i = 0; i < copy.n; ++i) {
        const std::array<double, 3> p = shape.at(t[i]);
        for (int row = 0; row < 3; ++row) {
          const double rotated =
              rot[row * 3] * p[0] + rot[row * 3 + 1] * p[1] + rot[row * 3 + 2] * p[2];
          copy.points[static_cast<std::size_t>(i) * 3 + row] =
              rotated + options.noise * rng.normal();
        }
      }
      copies.push_back(std::move(copy));
    }
  }
  return copies;
}

}  // namespace gw::datagen
