// Helpers shared by the test binaries: seeded random inputs and scratch directories.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/types.h"
#include "graph/builder.h"

namespace gw::test {

// n x d row-major points, uniform in [0, scale)^d.
inline std::vector<double> random_points(Rng& rng, Index n, int d, double scale = 1.0) {
  std::vector<double> points(static_cast<std::size_t>(n) * d);
  for (double& x : points) x = scale * rng.uniform();
  return points;
}

// m random directed edges over n nodes (self loops and parallel edges possible), weights in
// [lo, hi) (unweighted when `weighted` is false).
inline EdgeList random_edges(
    Rng& rng, Index n, Offset m, bool weighted = true, float lo = 0.0f, float hi = 1.0f) {
  EdgeList edges;
  edges.src.resize(m);
  edges.dst.resize(m);
  if (weighted) edges.weights.resize(m);
  for (Offset e = 0; e < m; ++e) {
    edges.src[e] = static_cast<Index>(rng.uniform_index(n));
    edges.dst[e] = static_cast<Index>(rng.uniform_index(n));
    if (weighted) edges.weights[e] = lo + (hi - lo) * rng.uniform_float();
  }
  return edges;
}

// A fresh, empty directory under the system temp dir, removed when the object goes away.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "gwalign-test";
    if (info != nullptr) name += std::string("-") + info->test_suite_name() + "-" + info->name();
    path_ = std::filesystem::temp_directory_path() /
            (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  static int& counter() {
    static int value = 0;
    return value;
  }
  std::filesystem::path path_;
};

}  // namespace gw::test
