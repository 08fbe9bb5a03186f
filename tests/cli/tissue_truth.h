// Ground truth of `gwalign generate tissue` sections for the CLI tests: a section's true positions
// carried into another section's observed frame (the frame `gwalign slices` registers into), and
// the registration error of aligned coordinates against them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "io/h5ad.h"

namespace gw::cli::test {

struct Truth {
  std::vector<double> observed_frame;  // n x 2: true x, y carried by section 0's motion
  std::vector<std::int32_t> domain;
  double diameter = 0.0;
};

inline double uns_scalar(const io::H5adReader& f, const std::string& key) {
  return f.file().read_array<double>("/uns/generator/" + key).data.at(0);
}

// Section `moving`'s true positions in section `fixed`'s observed frame (the frame slices keeps).
inline Truth truth_in_frame(const std::string& fixed_path, const std::string& moving_path) {
  const io::H5adReader fixed(fixed_path), moving(moving_path);
  const double angle = uns_scalar(fixed, "angle");
  const auto centre = fixed.file().read_array<double>("/uns/generator/centre").data;
  const auto shift = fixed.file().read_array<double>("/uns/generator/translation").data;
  const auto xyz = moving.read_obsm<double>("spatial_true").data;
  Truth t;
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  for (std::size_t i = 0; i < xyz.size() / 3; ++i) {
    const double dx = xyz[3 * i] - centre[0], dy = xyz[3 * i + 1] - centre[1];
    t.observed_frame.push_back(std::cos(angle) * dx - std::sin(angle) * dy + centre[0] + shift[0]);
    t.observed_frame.push_back(std::sin(angle) * dx + std::cos(angle) * dy + centre[1] + shift[1]);
    for (int a = 0; a < 2; ++a) {
      lo[a] = std::min(lo[a], xyz[3 * i + a]);
      hi[a] = std::max(hi[a], xyz[3 * i + a]);
    }
  }
  t.diameter = std::hypot(hi[0] - lo[0], hi[1] - lo[1]);
  t.domain = moving.read_obs_categorical("domain").codes;
  return t;
}

inline double registration_error(const std::vector<double>& aligned_xyz, const Truth& t) {
  double sum = 0.0;
  const std::size_t n = aligned_xyz.size() / 3;
  for (std::size_t i = 0; i < n; ++i) {
    sum += std::hypot(aligned_xyz[3 * i] - t.observed_frame[2 * i],
                      aligned_xyz[3 * i + 1] - t.observed_frame[2 * i + 1]);
  }
  return sum / static_cast<double>(n) / t.diameter;
}

}  // namespace gw::cli::test
