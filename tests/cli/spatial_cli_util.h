// Shared by the spatial CLI tests (slices, map): the ground truth of `gwalign generate tissue`
// sections -- a section's true positions carried into another section's observed frame (the frame
// `gwalign slices` registers into) and the registration error of aligned coordinates against them
// --, small hand-written sections for bad-input cases, and the one-line-error check.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "core/rng.h"
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

// A small section written with gw::io: 30 cells, the given genes (random counts), coordinates of
// `dims` columns (0: no obsm['spatial']) and, when rep_width > 0, obsm['rep'] of that width.
inline void write_section(const std::string& path, const std::vector<std::string>& genes, int dims,
                          int rep_width = 0) {
  const std::int64_t n = 30;
  io::H5adWriter out = io::H5adWriter::create(path, n, static_cast<std::int64_t>(genes.size()), {}, genes);
  Rng rng(9);
  std::vector<float> x(static_cast<std::size_t>(n) * genes.size());
  for (float& v : x) v = static_cast<float>(rng.uniform_index(5));
  out.set_x(io::Array<float>{x, {n, static_cast<std::int64_t>(genes.size())}});
  if (dims > 0) {
    std::vector<double> xy(static_cast<std::size_t>(n) * dims);
    for (double& v : xy) v = rng.uniform();
    out.put_obsm("spatial", io::Array<double>{xy, {n, dims}});
  }
  if (rep_width > 0) {
    std::vector<double> rep(static_cast<std::size_t>(n) * rep_width);
    for (double& v : rep) v = rng.uniform();
    out.put_obsm("rep", io::Array<double>{rep, {n, rep_width}});
  }
  out.commit();
}

// The command failed with `status` and one line of stderr holding every fragment, and nothing
// was written into out_dir.
inline void expect_one_line_error(const RunResult& r, int status, const std::vector<std::string>& fragments,
                                  const std::string& out_dir) {
  EXPECT_EQ(r.status, status) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const std::string& f : fragments) EXPECT_NE(r.err.find(f), std::string::npos) << r.err << " lacks " << f;
  EXPECT_TRUE(!std::filesystem::exists(out_dir) || std::filesystem::is_empty(out_dir))
      << "something was written to " << out_dir;
}

}  // namespace gw::cli::test
