// `gwalign generate tissue`, `gwalign slices` and `gwalign transfer`: sections of the synthetic
// tissue registered and labelled against their ground truth, partial overlap, the plan and report
// files, and bad inputs (one-line errors naming file and key, nothing written).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "spatial_cli_util.h"
#include "core/rng.h"
#include "io/h5ad.h"
#include "io/hdf5.h"
#include "io/matrix_market.h"
#include "test_util.h"

namespace gw::cli::test {
namespace {

namespace fs = std::filesystem;
using gw::test::ScratchDir;

void generate(const ScratchDir& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"generate", "tissue", "--n", "2000", "--seed", "3", "--out-dir", dir.file("in")};
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult r = gwalign(args, dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
}

TEST(Slices, RegistersGeneratedSectionsAndTransfersDomainsAgainstGroundTruth) {
  ScratchDir dir;
  generate(dir, {"--sections", "3"});
  const std::vector<std::string> in = {dir.file("in/section_0.h5ad"), dir.file("in/section_1.h5ad"),
                                       dir.file("in/section_2.h5ad")};
  const RunResult r = gwalign({"slices", in[0], in[1], in[2], "--out-dir", dir.file("out"), "--transfer",
                               "domain,obsm:spatial_true", "--z-spacing", "10", "--seed", "1"},
                              dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  for (int s = 0; s < 3; ++s) {
    const io::H5adReader out(dir.file("out/section_" + std::to_string(s) + ".h5ad"));
    const io::Array<double> aligned = out.read_obsm<double>("spatial_aligned");
    ASSERT_EQ(aligned.cols(), 3);
    for (std::int64_t i = 0; i < aligned.rows(); ++i) EXPECT_EQ(aligned.data[3 * i + 2], 10.0 * s);
    const Truth truth = truth_in_frame(in[0], in[s]);
    // Registration within 15% of the section's diameter (measured at 2,000 cells, seed 3: 6.4%
    // for section 1, 12.7% for section 2, whose error adds to its predecessor's along the chain;
    // a wrong placement -- a mirrored or half-turned section -- is 40% and more). The first
    // section is the frame itself.
    EXPECT_LT(registration_error(aligned.data, truth), s == 0 ? 1e-9 : 0.15) << "section " << s;
    if (s == 0) continue;
    const io::Categorical labels = out.read_obs_categorical("domain_transferred");
    int correct = 0;
    for (std::size_t i = 0; i < labels.codes.size(); ++i) correct += labels.codes[i] == truth.domain[i];
    // Domain transfer from the previous section: measured 0.62 and 0.66 (5 domains; labels
    // carried by a plan unrelated to position score about 0.25).
    EXPECT_GT(correct / static_cast<double>(labels.codes.size()), 0.5) << "section " << s;
    EXPECT_EQ(out.read_obsm<double>("spatial_true_transferred").cols(), 3);
    EXPECT_EQ(out.read_obs_column("domain_transferred_confidence").size(), labels.codes.size());
  }
  const io::H5adReader s0(in[0]), s1(in[1]);
  const io::CsrArray<double> plan = io::read_matrix_market(dir.file("out/plan_0_1.mtx"));
  EXPECT_EQ(plan.rows, s0.n_obs());
  EXPECT_EQ(plan.cols, s1.n_obs());
  const std::string report = read_text(dir.file("out/report_1_2.json"));
  for (const char* key : {"gw_loss", "registration_residual_rms", "overlap_mass", "solve_seconds"}) {
    EXPECT_NE(report.find(std::string("\"") + key + "\""), std::string::npos) << key;
  }
  EXPECT_NEAR(json_number(report, "overlap_mass"), 1.0, 1e-6);
}

TEST(Slices, PartialOverlapMovesTheGivenMassAndLeavesCellsUnlabelled) {
  ScratchDir dir;
  generate(dir, {"--sections", "2", "--overlap", "0.6", "--max-rotation", "30"});
  const std::string a = dir.file("in/section_0.h5ad"), b = dir.file("in/section_1.h5ad");
  // --registration plan: the partial plan alone (auto would run the pattern search first; that
  // path is checked against the generator's truth in tests/spatial/stack_test.cpp).
  const RunResult r = gwalign({"slices", a, b, "--out-dir", dir.file("out"), "--overlap", "0.6",
                               "--transfer", "domain", "--registration", "plan"},
                              dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string report = read_text(dir.file("out/report_0_1.json"));
  EXPECT_NEAR(json_number(report, "overlap_mass"), 0.6, 1e-3);
  const io::CsrArray<double> plan = io::read_matrix_market(dir.file("out/plan_0_1.mtx"));
  double total = 0.0;
  for (double v : plan.data) total += v;
  // The plan moves exactly the requested mass, and the cells it leaves out are unlabelled. Where
  // the left-out mass sits is not asserted: measured, a third of the moved mass lands on B's cells
  // outside the true overlap (40% of B's cells are outside), so the partial plan does not yet find
  // the overlap on this data without the search (bench/RESULTS.md, tissue sections).
  EXPECT_NEAR(total, 0.6, 1e-3);
  const io::H5adReader out(dir.file("out/section_1.h5ad"));
  int unreached = 0;
  for (std::int32_t c : out.read_obs_categorical("domain_transferred").codes) unreached += c < 0;
  EXPECT_GT(unreached, 0);  // cells outside the overlap get no label
}

TEST(Slices, BadInputsFailWithOneLineNamingFileAndKeyAndWriteNothing) {
  ScratchDir dir;
  const std::vector<std::string> genes = {"g1", "g2", "g3"};
  write_section(dir.file("ok.h5ad"), genes, 2);
  write_section(dir.file("ok2.h5ad"), genes, 2);
  write_section(dir.file("nospatial.h5ad"), genes, 0);
  write_section(dir.file("other_genes.h5ad"), {"x1", "x2"}, 2);
  write_section(dir.file("three_d.h5ad"), genes, 3);
  const std::string out = dir.file("out");
  expect_one_line_error(gwalign({"slices", dir.file("ok.h5ad"), dir.file("nospatial.h5ad"), "--out-dir", out}, dir.path()),
                        66, {"nospatial.h5ad", "obsm['spatial']", "--spatial-key"}, out);
  expect_one_line_error(gwalign({"slices", dir.file("ok.h5ad"), dir.file("other_genes.h5ad"), "--out-dir", out}, dir.path()),
                        65, {"ok.h5ad", "other_genes.h5ad", "no gene"}, out);
  expect_one_line_error(gwalign({"slices", dir.file("ok.h5ad"), dir.file("three_d.h5ad"), "--out-dir", out}, dir.path()),
                        65, {"three_d.h5ad", "obsm['spatial']", "3 columns"}, out);
  expect_one_line_error(gwalign({"slices", dir.file("ok.h5ad"), dir.file("ok2.h5ad"), "--out-dir", out, "--transfer", "celltype"},
                                dir.path()),
                        66, {"ok.h5ad", "'celltype'"}, out);
  expect_one_line_error(gwalign({"slices", dir.file("ok.h5ad"), dir.file("ok2.h5ad"), "--out-dir", out, "--overlap", "1.5"}, dir.path()),
                        64, {"--overlap"}, out);
  const std::vector<std::string> pair = {"slices", dir.file("ok.h5ad"), dir.file("ok2.h5ad"), "--out-dir", out};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = pair;
    args.insert(args.end(), extra.begin(), extra.end());
    return gwalign(args, dir.path());
  };
  expect_one_line_error(with({"--registration", "icp"}), 64, {"--registration", "auto, plan or search", "'icp'"}, out);
  expect_one_line_error(with({"--search-extent", "-1"}), 64, {"--search-extent", "[0, 2]"}, out);
  expect_one_line_error(with({"--registration", "search", "--fused-weight", "0"}), 64,
                        {"--registration search", "--fused-weight"}, out);
}

// --layer-drift 0: the layers do not move with depth, recorded in uns['generator']; a negative
// drift is a usage error naming the flag, nothing written.
TEST(GenerateTissue, LayerDriftIsRecordedAndANegativeOneIsAOneLineUsageError) {
  ScratchDir dir;
  generate(dir, {"--sections", "3", "--n", "300", "--layer-drift", "0"});
  const io::Reader file(dir.file("in/section_2.h5ad"));
  const io::Array<double> drift = file.read_array<double>("/uns/generator/layer_drift");
  ASSERT_EQ(drift.data.size(), 1u);
  EXPECT_EQ(drift.data[0], 0.0);
  const std::string out = dir.file("bad");
  expect_one_line_error(gwalign({"generate", "tissue", "--layer-drift", "-1", "--out-dir", out}, dir.path()), 64,
                        {"--layer-drift", ">= 0"}, out);
}

TEST(Transfer, PushMatchesSlicesOwnTransferAndPullWritesTheSource) {
  ScratchDir dir;
  generate(dir, {"--sections", "2"});
  const std::string a = dir.file("in/section_0.h5ad"), b = dir.file("in/section_1.h5ad");
  ASSERT_EQ(gwalign({"slices", a, b, "--out-dir", dir.file("out"), "--transfer", "celltype"}, dir.path()).status, 0);
  const std::string plan = dir.file("out/plan_0_1.mtx");
  RunResult r = gwalign({"transfer", a, b, "--plan", plan, "--keys", "celltype,domain", "-o", dir.file("b.h5ad")}, dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const io::H5adReader pushed(dir.file("b.h5ad")), by_slices(dir.file("out/section_1.h5ad"));
  EXPECT_EQ(pushed.read_obs_categorical("celltype_transferred").codes,
            by_slices.read_obs_categorical("celltype_transferred").codes);
  EXPECT_EQ(pushed.n_obs(), io::H5adReader(b).n_obs());
  r = gwalign({"transfer", a, b, "--plan", plan, "--keys", "domain", "--direction", "pull", "-o", dir.file("a.h5ad")}, dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  const io::H5adReader pulled(dir.file("a.h5ad"));
  const auto labels = pulled.read_obs_categorical("domain_transferred").codes;
  const auto truth = pulled.read_obs_categorical("domain").codes;
  ASSERT_EQ(labels.size(), truth.size());
  int correct = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) correct += labels[i] == truth[i];
  EXPECT_GT(correct / static_cast<double>(labels.size()), 0.5);  // measured 0.67 (chance ~0.25)
  // A plan of the wrong shape for the files is refused before anything is written.
  r = gwalign({"transfer", b, a, "--plan", plan, "--keys", "domain", "-o", dir.file("c.h5ad")}, dir.path());
  EXPECT_EQ(r.status, 65) << r.err;
  EXPECT_NE(r.err.find("plan_0_1.mtx"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.file("c.h5ad")));
}

}  // namespace
}  // namespace gw::cli::test
