// `gwalign align --joint-embedding DIM`: the embeddings written beside the plan (plain HDF5 and
// --write-into-source), their quality on the bundled spiral pair, and the usage errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "core/rng.h"
#include "io/hdf5.h"
#include "test_util.h"

namespace gw::cli::test {
namespace {

namespace fs = std::filesystem;
using gw::test::ScratchDir;

// Partner / random-pair distance ratio with the spiral as anchor (tests/embedding: 0.074).
constexpr double kMaxRatioSpiralAnchor = 0.12;

std::vector<std::string> spiral_args(const std::string& out, std::vector<std::string> extra) {
  std::vector<std::string> args = {"align",
                                   data_file("spiral_400.h5"),
                                   data_file("swissroll_500.h5"),
                                   "-o",
                                   out,
                                   "--knn",
                                   "5",
                                   "--eps",
                                   "0.005",
                                   "--M",
                                   "80",
                                   "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliJointEmbedding, WritesBothSidesAndSameAnglePointsLandTogether) {
  ScratchDir dir;
  const std::string out = dir.file("plan.h5");
  const RunResult run = gwalign(
      spiral_args(out, {"--joint-embedding", "10", "--embedding-anchor", "source"}), dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("joint embedding: 10 dimensions, anchor source"), std::string::npos)
      << run.out;
  const io::Reader reader(out);
  const io::Array<double> zs = reader.read_array<double>("/joint_embedding/source", 2);
  const io::Array<double> zt = reader.read_array<double>("/joint_embedding/target", 2);
  ASSERT_EQ(zs.shape, (std::vector<std::int64_t>{400, 10}));
  ASSERT_EQ(zt.shape, (std::vector<std::int64_t>{500, 10}));
  const std::vector<double> ts =
      io::Reader(data_file("spiral_400.h5")).read_array<double>("/angles", 1).data;
  const std::vector<double> tt =
      io::Reader(data_file("swissroll_500.h5")).read_array<double>("/angles", 1).data;
  auto distance = [&](std::size_t i, std::size_t j) {
    double s = 0.0;
    for (std::size_t c = 0; c < 10; ++c)
      s += std::pow(zs.data[i * 10 + c] - zt.data[j * 10 + c], 2);
    return std::sqrt(s);
  };
  Rng rng(3);
  double partner = 0.0, random = 0.0;
  for (std::size_t i = 0; i < 400; ++i) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < 500; ++j) {
      if (std::abs(tt[j] - ts[i]) < std::abs(tt[best] - ts[i])) best = j;
    }
    partner += distance(i, best);
    random += distance(i, rng.uniform_index(500));
  }
  EXPECT_LT(partner / random, kMaxRatioSpiralAnchor)
      << "partner " << partner / 400 << ", random " << random / 400;
  // The spiral is 2-D: two principal components, then zero columns.
  for (std::size_t i = 0; i < 400; ++i) EXPECT_EQ(zs.data[i * 10 + 5], 0.0);
}

TEST(CliJointEmbedding, WriteIntoSourceAddsObsmXGwJoint) {
  ScratchDir dir;
  const std::string out = dir.file("aligned.h5ad");
  const RunResult run = gwalign({"align",
                                 data_file("tiny_source.h5ad"),
                                 data_file("tiny_target.h5ad"),
                                 "--rep",
                                 "obsm:X_pca",
                                 "--write-into-source",
                                 "-o",
                                 out,
                                 "--joint-embedding",
                                 "3",
                                 "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const io::Array<double> z = io::Reader(out).read_array<double>("/obsm/X_gw_joint", 2);
  ASSERT_EQ(z.shape, (std::vector<std::int64_t>{400, 3}));
  EXPECT_TRUE(std::all_of(z.data.begin(), z.data.end(), [](double v) { return std::isfinite(v); }));
  EXPECT_GT(*std::max_element(z.data.begin(), z.data.end()), 0.0);
}

// Bad values: one line on stderr naming the flag, exit 64, nothing written.
TEST(CliJointEmbedding, BadValuesAreUsageErrorsAndWriteNothing) {
  ScratchDir dir;
  const fs::path out_dir = dir.path() / "out";
  fs::create_directories(out_dir);
  const std::string out = (out_dir / "plan.h5").string();
  struct Case {
    std::vector<std::string> extra;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {{"--joint-embedding", "0"}, "--joint-embedding 0"},
      {{"--joint-embedding", "ten"}, "--joint-embedding 'ten'"},
      {{"--joint-embedding", "4", "--embedding-lambda", "x"}, "--embedding-lambda 'x'"},
      {{"--joint-embedding", "4", "--embedding-lambda", "-1"}, "--embedding-lambda"},
      {{"--joint-embedding", "4", "--embedding-anchor", "middle"}, "--embedding-anchor 'middle'"},
      {{"--embedding-lambda", "2"}, "used only with --joint-embedding"},
  };
  for (const Case& c : cases) {
    const RunResult run = gwalign(spiral_args(out, c.extra), dir.path());
    EXPECT_EQ(run.status, 64) << c.fragment << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_NE(run.err.find(c.fragment), std::string::npos) << run.err;
    EXPECT_TRUE(fs::is_empty(out_dir)) << c.fragment << ": something was written";
  }
  // A graph geometry has no coordinates for the anchor's PCA.
  const RunResult graph = gwalign({"align",
                                   data_file("tiny_source.h5ad"),
                                   data_file("tiny_target.h5ad"),
                                   "--rep",
                                   "obsp:distances",
                                   "-o",
                                   out,
                                   "--joint-embedding",
                                   "3"},
                                  dir.path());
  EXPECT_EQ(graph.status, 64) << graph.err;
  EXPECT_NE(graph.err.find("needs point coordinates on both sides"), std::string::npos)
      << graph.err;
  EXPECT_TRUE(fs::is_empty(out_dir));
}

}  // namespace
}  // namespace gw::cli::test
