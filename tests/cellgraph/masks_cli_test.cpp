// `gwalign masks` end to end: HDF5 inputs written here, the CLI run as a process, its output
// compared with the library's masks (cellgraph/edge_masks.h).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cellgraph/edge_masks.h"
#include "core/rng.h"
#include "io/hdf5.h"
#include "test_util.h"

#ifndef GW_GWALIGN_BINARY
#error "GW_GWALIGN_BINARY must name the gwalign executable"
#endif

namespace gw {
namespace {

int run(const std::string& arguments) {
  const std::string command = std::string(GW_GWALIGN_BINARY) + " " + arguments + " 2>/dev/null";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Three edge types over 30 genes: "a" as an edge_index dataset, "b" as a group holding one, "c"
// as a CSR group; and a batch of 6 samples (one empty, one with a repeated id).
struct Files {
  test::ScratchDir dir;
  std::string graph = dir.file("graph.h5");
  std::string perts = dir.file("perts.h5");
  std::string out = dir.file("masks.h5");
  EdgeList a, b;
  CsrGraph c;
  std::vector<Index> ids = {3, 7, 7, 0, 29, 12, 5, 6, 8};
  std::vector<Offset> ptr = {0, 1, 3, 3, 5, 6, 9};

  Files() {
    Rng rng(21);
    a = test::random_edges(rng, 30, 80, false);
    b = test::random_edges(rng, 30, 45, false);
    c = build_csr(30, test::random_edges(rng, 30, 60, false).view());
    io::Writer graph_file(graph);
    graph_file.ensure_group("/edge_types");
    graph_file.set_attribute<std::int64_t>("/edge_types", "num_nodes", 30);
    write_edge_index(graph_file, "/edge_types/a", a);
    graph_file.ensure_group("/edge_types/b");
    write_edge_index(graph_file, "/edge_types/b/edge_index", b);
    io::CsrArray<float> csr;
    csr.rows = csr.cols = 30;
    csr.indptr = c.row_offsets();
    csr.indices = c.col_indices();
    csr.data.assign(c.num_edges(), 1.0f);
    graph_file.write_csr("/edge_types/c", csr);
    graph_file.commit();
    write_perts(ids, ptr);
  }

  static void write_edge_index(io::Writer& file, const std::string& path, const EdgeList& edges) {
    std::vector<std::int32_t> data(edges.src.begin(), edges.src.end());
    data.insert(data.end(), edges.dst.begin(), edges.dst.end());
    const std::int64_t shape[] = {2, edges.size()};
    file.write_array<std::int32_t>(path, data, shape);
  }

  void write_perts(const std::vector<Index>& i, const std::vector<Offset>& p) const {
    io::Writer file(perts);
    const std::int64_t ids_shape[] = {static_cast<std::int64_t>(i.size())};
    const std::int64_t ptr_shape[] = {static_cast<std::int64_t>(p.size())};
    file.write_array<std::int32_t>("/ids", i, ids_shape);
    file.write_array<std::int64_t>("/ptr", p, ptr_shape);
    file.commit();
  }

  EdgeMasker masker() const {
    EdgeMasker m(30);
    m.add_type("a", a.view());
    m.add_type("b", b.view());
    m.add_type("c", c.view());
    return m;
  }
};

TEST(MasksCli, RemovalListsEqualTheLibrary) {
  const Files files;
  ASSERT_EQ(run("masks " + files.graph + " " + files.perts + " -o " + files.out), 0);
  const EdgeMasker masker = files.masker();
  const std::vector<RemovedEdges> expected =
      masker.removed_edges(PerturbationBatch{files.ids, files.ptr});
  const io::Reader out(files.out);
  EXPECT_EQ(out.read_attribute<std::int64_t>("/", "num_samples").data[0], 6);
  EXPECT_EQ(out.read_string_attribute("/", "form"), "removed");
  for (int t = 0; t < 3; ++t) {
    const std::string group = "/edge_types/" + masker.name(t);
    EXPECT_EQ(out.read_attribute<std::int64_t>(group, "num_edges").data[0], masker.num_edges(t));
    EXPECT_EQ(out.read_array<std::int64_t>(group + "/removed", 1).data, expected[t].positions) << t;
    EXPECT_EQ(out.read_array<std::int64_t>(group + "/removed_ptr", 1).data, expected[t].ptr) << t;
  }
}

TEST(MasksCli, DenseMasksEqualTheLibrary) {
  const Files files;
  ASSERT_EQ(run("masks " + files.graph + " " + files.perts + " -o " + files.out + " --dense"), 0);
  const EdgeMasker masker = files.masker();
  const io::Reader out(files.out);
  for (int t = 0; t < 3; ++t) {
    const io::Array<std::uint8_t> keep =
        out.read_array<std::uint8_t>("/edge_types/" + masker.name(t) + "/keep", 2);
    EXPECT_EQ(keep.shape, (std::vector<std::int64_t>{6, masker.num_edges(t)}));
    EXPECT_EQ(keep.data, masker.keep_mask(t, PerturbationBatch{files.ids, files.ptr})) << t;
  }
}

TEST(MasksCli, BadIdsFailWithoutWritingAnything) {
  const Files files;
  files.write_perts({3, 30, -1}, {0, 2, 3});
  EXPECT_EQ(run("masks " + files.graph + " " + files.perts + " -o " + files.out),
            65);  // EX_DATAERR
  EXPECT_FALSE(std::filesystem::exists(files.out));
  files.write_perts({3, 4}, {0, 3});
  EXPECT_EQ(run("masks " + files.graph + " " + files.perts + " -o " + files.out), 64);  // EX_USAGE
  EXPECT_FALSE(std::filesystem::exists(files.out));
  EXPECT_EQ(run("masks " + files.graph + ":/nowhere " + files.perts + " -o " + files.out), 66);
}

// -o naming an input (under any spelling of its path) would replace it: a usage error before
// anything is read, and the input keeps its bytes.
TEST(MasksCli, OutputThatIsAnInputIsRefused) {
  const Files files;
  const auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string graph = bytes(files.graph);
  const std::string perts = bytes(files.perts);
  EXPECT_EQ(run("masks " + files.graph + " " + files.perts + " -o " + files.graph), 64);
  const std::string perts_again = (files.dir.path() / "." / "perts.h5").string();
  EXPECT_EQ(run("masks " + files.graph + " " + files.perts + " -o " + perts_again), 64);
  EXPECT_TRUE(bytes(files.graph) == graph) << "GRAPH was changed";
  EXPECT_TRUE(bytes(files.perts) == perts) << "PERTS was changed";
  const auto entries = std::distance(std::filesystem::directory_iterator(files.dir.path()),
                                     std::filesystem::directory_iterator());
  EXPECT_EQ(entries, 2) << "a temporary or an output was left beside the inputs";
}

}  // namespace
}  // namespace gw
