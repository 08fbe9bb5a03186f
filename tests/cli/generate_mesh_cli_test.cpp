// `gwalign generate mesh`: the files hold exactly the library's mesh, its jittered and permuted
// copy and the true map; `gwalign align` reads them with its defaults; bad requests write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "datagen/mesh.h"
#include "io/h5ad.h"
#include "io/hdf5.h"
#include "test_util.h"

namespace gw::cli::test {
namespace {

namespace fs = std::filesystem;
using gw::test::ScratchDir;

// The undirected edges (u < v) and lengths of an obsp CSR graph, in (u, v) order; fails the test
// unless every edge is stored in both directions with the same length.
struct Edges {
  std::vector<Index> src, dst;
  std::vector<double> length;
};
Edges undirected_edges(const io::CsrArray<double>& csr) {
  Edges edges;
  for (std::int64_t i = 0; i < csr.rows; ++i) {
    for (Offset p = csr.indptr[i]; p < csr.indptr[i + 1]; ++p) {
      const Index j = csr.indices[p];
      const auto row_j = csr.indices.begin() + csr.indptr[j];
      const auto end_j = csr.indices.begin() + csr.indptr[j + 1];
      const auto back = std::find(row_j, end_j, static_cast<Index>(i));
      EXPECT_NE(back, end_j) << "edge " << i << "-" << j << " stored in one direction only";
      if (back != end_j) {
        EXPECT_EQ(csr.data[back - csr.indices.begin()], csr.data[p]);
      }
      if (i < j) {
        edges.src.push_back(static_cast<Index>(i));
        edges.dst.push_back(j);
        edges.length.push_back(csr.data[p]);
      }
    }
  }
  return edges;
}

TEST(CliGenerateMesh, FilesHoldTheLibrarysMeshItsPermutedCopyAndTheTruth) {
  ScratchDir dir;
  const fs::path out = dir.path() / "bunny";
  const RunResult run = gwalign({"generate",
                                 "mesh",
                                 "--shape",
                                 "bunny",
                                 "--vertices",
                                 "400",
                                 "--seed",
                                 "5",
                                 "--jitter",
                                 "0.02",
                                 "--out-dir",
                                 out.string()},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const datagen::Mesh mesh = datagen::generate_mesh(datagen::MeshKind::kBunny, 400, 5);
  const datagen::PermutedMesh copy = datagen::jitter_and_permute(mesh, 0.02, 5);

  const io::H5adReader source((out / "source.h5ad").string());
  const io::H5adReader target((out / "target.h5ad").string());
  ASSERT_EQ(source.n_obs(), mesh.n);
  ASSERT_EQ(target.n_obs(), mesh.n);
  EXPECT_EQ(std::get<io::Array<double>>(source.read_x<double>()).data, mesh.vertices);
  EXPECT_EQ(std::get<io::Array<double>>(target.read_x<double>()).data, copy.mesh.vertices);
  EXPECT_EQ(source.obsm_keys(), std::vector<std::string>{});
  EXPECT_EQ(source.obsp_keys(), std::vector<std::string>{"mesh"});

  const Edges source_edges =
      undirected_edges(std::get<io::CsrArray<double>>(source.read_obsp<double>("mesh")));
  EXPECT_EQ(source_edges.src, mesh.edge_src);
  EXPECT_EQ(source_edges.dst, mesh.edge_dst);
  EXPECT_EQ(source_edges.length, mesh.edge_length);
  const Edges target_edges =
      undirected_edges(std::get<io::CsrArray<double>>(target.read_obsp<double>("mesh")));
  EXPECT_EQ(target_edges.src, copy.mesh.edge_src);
  EXPECT_EQ(target_edges.length, copy.mesh.edge_length);

  const io::Reader truth_file((out / "truth.h5").string());
  const io::Array<std::int32_t> truth = truth_file.read_array<std::int32_t>("/truth", 1);
  EXPECT_EQ(std::vector<Index>(truth.data.begin(), truth.data.end()), copy.truth);
  std::vector<Index> sorted = copy.truth;
  std::sort(sorted.begin(), sorted.end());
  std::vector<Index> identity(mesh.n);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_EQ(sorted, identity) << "truth is not a permutation";
  EXPECT_EQ(source.file().read_string("/uns/generator/shape"), "bunny");
}

// With no flags besides the files, align takes each file's only obsp graph (its edge lengths) as
// the geometry, and writes a matching of every source vertex.
TEST(CliGenerateMesh, AlignReadsTheMeshGraphsWithItsDefaults) {
  ScratchDir dir;
  const fs::path out = dir.path() / "teapot";
  ASSERT_EQ(
      gwalign(
          {"generate", "mesh", "--shape", "teapot", "--vertices", "300", "--out-dir", out.string()},
          dir.path())
          .status,
      0);
  const datagen::Mesh mesh = datagen::generate_mesh(datagen::MeshKind::kTeapot, 300, 0);
  const std::string plan = dir.file("plan.h5");
  const RunResult run = gwalign({"align",
                                 (out / "source.h5ad").string(),
                                 (out / "target.h5ad").string(),
                                 "-o",
                                 plan,
                                 "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string graph = "obsp:mesh: graph, " + std::to_string(mesh.n) + " nodes, " +
                            std::to_string(mesh.num_edges()) + " undirected edges";
  EXPECT_NE(run.out.find("source.h5ad " + graph), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("target.h5ad " + graph), std::string::npos) << run.out;
  EXPECT_EQ(io::Reader(plan).read_array<std::int32_t>("/matching", 1).data.size(),
            static_cast<std::size_t>(mesh.n));
}

// A bad request is a one-line usage error (64) naming the fix, or 73 for a folder that cannot be
// one; the output folder is neither created nor touched.
TEST(CliGenerateMesh, BadRequestsAreOneLineErrorsAndWriteNothing) {
  ScratchDir dir;
  const fs::path out = dir.path() / "out";
  const std::string kinds = "head, bunny, teapot, cactus, quadruped, bird, hand, human, lizard";
  struct Case {
    std::vector<std::string> args;
    int status;
    std::vector<std::string> fragments;
  };
  const std::string file = dir.file("a_file");
  { std::ofstream(file) << "x"; }
  const std::vector<Case> cases = {
      {{"--shape", "dragon", "--vertices", "1000", "--out-dir", out.string()},
       64,
       {"--shape 'dragon'", kinds}},
      {{"--shape", "head", "--vertices", "100", "--out-dir", out.string()},
       64,
       {"--vertices must be in [300, 100000], got 100", kinds}},
      {{"--shape", "head", "--vertices", "200000", "--out-dir", out.string()}, 64, {"200000"}},
      {{"--shape", "head", "--vertices", "1000"}, 64, {"--out-dir DIR", kinds}},
      {{"--shape", "head", "--vertices", "1000", "--jitter", "-0.5", "--out-dir", out.string()},
       64,
       {"--jitter"}},
      {{"--shape", "head", "--vertices", "1000", "--n", "5", "--out-dir", out.string()},
       64,
       {"--n is not a flag of 'generate mesh'"}},
      {{"--shape", "head", "--vertices", "1000", "--out-dir", file},
       73,
       {"a_file", "not a folder"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"generate", "mesh"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    SCOPED_TRACE(args[3] + " " + args[5]);
    const RunResult run = gwalign(args, dir.path());
    EXPECT_EQ(run.status, c.status) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << "not one line: " << run.err;
    for (const auto& fragment : c.fragments) {
      EXPECT_NE(run.err.find(fragment), std::string::npos) << run.err;
    }
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_FALSE(fs::exists(out)) << "the output folder was created";
  }
  EXPECT_EQ(read_text(file), "x");
  // The mesh flags on another kind are refused rather than ignored.
  const RunResult spiral = gwalign(
      {"generate", "spiral", "--n", "50", "--vertices", "500", "-o", dir.file("s.h5")}, dir.path());
  EXPECT_EQ(spiral.status, 64);
  EXPECT_NE(spiral.err.find("--vertices is for 'generate mesh' only"), std::string::npos)
      << spiral.err;
  EXPECT_FALSE(fs::exists(dir.file("s.h5")));
}

}  // namespace
}  // namespace gw::cli::test
