// `gwalign generate shapes` and `gwalign pairwise` through the built binary: outputs, reports,
// exit codes, the kill-and-resume hook, and MPI ranks against one process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"
#include "io/hdf5.h"

namespace gw::cli::test {
namespace {

using gw::test::ScratchDir;

std::vector<double> matrix(const std::string& path, const char* name = "/distances") {
  return io::Reader(path).read_array<double>(name, 2).data;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

std::string shapes(const ScratchDir& dir,
                   int classes = 2,
                   int per_class = 3,
                   const std::string& seed = "2",
                   const std::string& min_points = "30",
                   const std::string& name = "shapes.h5") {
  const std::string path = dir.file(name);
  const RunResult r = gwalign({"generate",
                               "shapes",
                               "--classes",
                               std::to_string(classes),
                               "--per-class",
                               std::to_string(per_class),
                               "--seed",
                               seed,
                               "--min-points",
                               min_points,
                               "--max-points",
                               "50",
                               "-o",
                               path},
                              dir.path());
  EXPECT_EQ(r.status, 0) << r.err;
  return path;
}

TEST(PairwiseCli, GeneratedShapesGetACompleteMatrixAndAReport) {
  ScratchDir dir;
  const std::string input = shapes(dir);
  const io::Reader collection(input);
  EXPECT_EQ(collection.list("/spaces").size(), 6u);
  EXPECT_EQ(collection.read_array<std::int64_t>("/labels", 1).data,
            (std::vector<std::int64_t>{0, 0, 0, 1, 1, 1}));
  const std::string out = dir.file("d.h5"), report = dir.file("r.json");
  const RunResult r =
      gwalign({"pairwise", input, "-o", out, "--threads", "2", "--json", report}, dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("15 pairs solved"), std::string::npos) << r.err;
  const auto json = parse_json(read_text(report));
  EXPECT_EQ(json["pairs_computed"], 15);
  EXPECT_EQ(json["complete"], true);
  EXPECT_EQ(json["pair_seconds"]["count"], 15);
  EXPECT_GT(json["pair_seconds"]["p90"].get<double>(), 0.0);
  EXPECT_EQ(io::Reader(out).read_attribute<std::int64_t>("/", "complete").data[0], 1);
}

TEST(PairwiseCli, KilledRunResumedWithTheSameCommandEqualsAnUninterruptedRun) {
  ScratchDir dir;
  const std::string input = shapes(dir);
  const std::string full = dir.file("full.h5"), killed = dir.file("killed.h5");
  ASSERT_EQ(gwalign({"pairwise", input, "-o", full, "--quiet"}, dir.path()).status, 0);
  const std::vector<std::string> args = {"pairwise",
                                         input,
                                         "-o",
                                         killed,
                                         "--threads",
                                         "1",
                                         "--checkpoint-seconds",
                                         "1e-6",
                                         "--quiet",
                                         "--resume"};
  ::setenv("GWALIGN_PAIRWISE_ABORT_AFTER", "8", 1);
  const RunResult aborted = gwalign(args, dir.path());
  ::unsetenv("GWALIGN_PAIRWISE_ABORT_AFTER");
  EXPECT_EQ(aborted.status, 137);
  EXPECT_EQ(io::Reader(killed).read_attribute<std::int64_t>("/", "pairs_done").data[0], 7);
  const std::string report = dir.file("resume.json");
  std::vector<std::string> resume = args;
  resume.insert(resume.end(), {"--json", report});
  const RunResult resumed = gwalign(resume, dir.path());
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  const auto json = parse_json(read_text(report));
  EXPECT_EQ(json["pairs_resumed"], 7);
  EXPECT_EQ(json["pairs_computed"], 8);
  EXPECT_TRUE(bitwise_equal(matrix(full), matrix(killed)));
}

// Two collections of 50-point shapes with different seeds: the same sizes, other points. The
// resume of the first run's output on the second must not mix their pairs.
TEST(PairwiseCli, KilledRunResumedOnAnotherCollectionOfTheSameSizesIsRefused) {
  ScratchDir dir;
  const std::string first = shapes(dir, 2, 3, "2", "50", "first.h5");
  const std::string second = shapes(dir, 2, 3, "3", "50", "second.h5");
  const std::string out = dir.file("out.h5");
  auto args = [&](const std::string& input) {
    return std::vector<std::string>{"pairwise",
                                    input,
                                    "-o",
                                    out,
                                    "--threads",
                                    "1",
                                    "--checkpoint-seconds",
                                    "1e-6",
                                    "--quiet",
                                    "--resume"};
  };
  ::setenv("GWALIGN_PAIRWISE_ABORT_AFTER", "4", 1);
  const RunResult killed = gwalign(args(first), dir.path());
  ::unsetenv("GWALIGN_PAIRWISE_ABORT_AFTER");
  ASSERT_EQ(killed.status, 137) << killed.err;
  const RunResult other = gwalign(args(second), dir.path());
  EXPECT_EQ(other.status, 64) << other.err;
  EXPECT_NE(other.err.find("different run"), std::string::npos) << other.err;
  EXPECT_EQ(io::Reader(out).read_attribute<std::int64_t>("/", "pairs_done").data[0], 3);
  EXPECT_EQ(gwalign(args(first), dir.path()).status, 0);
}

TEST(PairwiseCli, AnOutputDirectoryThatDoesNotExistFailsBeforeAnyPairIsSolved) {
  ScratchDir dir;
  const std::string input = shapes(dir);
  const std::string out = dir.file("nodir/x.h5");
  const RunResult r = gwalign({"pairwise", input, "-o", out, "--quiet", "--json", "-"}, dir.path());
  EXPECT_EQ(r.status, 73) << r.err;
  EXPECT_NE(r.err.find(out), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("pair ("), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");  // no report: the run never started
}

// The settings attribute records the solver options the command built.
double setting(const std::string& output, const std::string& name) {
  const std::string settings = io::Reader(output).read_string_attribute("/", "settings");
  const std::size_t at = settings.find(" " + name + "=");
  EXPECT_NE(at, std::string::npos) << settings;
  return std::stod(settings.substr(at + name.size() + 2));
}

TEST(PairwiseCli, EpsBelowTheDefaultFinalEpsilonNeverMakesEpsilonRise) {
  ScratchDir dir;
  const std::string input = shapes(dir, 1, 2);
  for (const char* eps : {"5e-4", "0.01"}) {
    const std::string out = dir.file(std::string("eps") + eps + ".h5");
    const RunResult r = gwalign(
        {"pairwise", input, "-o", out, "--eps", eps, "--max-iter", "5", "--quiet"}, dir.path());
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(setting(out, "eps"), std::stod(eps));
    EXPECT_LE(setting(out, "eps_final"), setting(out, "eps")) << "--eps " << eps;
    EXPECT_EQ(setting(out, "eps_final"), std::min(1e-3, std::stod(eps)));
  }
}

TEST(PairwiseCli, ABuildWithoutMpiRefusesEveryLauncherTheMpiBuildJoins) {
  if (GW_TEST_HAS_MPI) GTEST_SKIP() << "this build has MPI: a launcher variable makes it join";
  ScratchDir dir;
  const std::string input = shapes(dir, 1, 2);
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    ::setenv(name, "2", 1);
    const RunResult r =
        gwalign({"pairwise", input, "-o", dir.file(std::string(name) + ".h5")}, dir.path());
    ::unsetenv(name);
    EXPECT_EQ(r.status, 69) << name << ": " << r.err;
    EXPECT_NE(r.err.find("without MPI"), std::string::npos) << r.err;
  }
}

// mpirun arguments for `gwalign pairwise INPUT -o OUTPUT --threads 1 --quiet EXTRA...` on two
// ranks.
std::vector<std::string> mpirun_pairwise(const std::string& input,
                                         const std::string& output,
                                         const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--allow-run-as-root",
                                   "--oversubscribe",
                                   "-np",
                                   "2",
                                   GW_CLI_BINARY,
                                   "pairwise",
                                   input,
                                   "-o",
                                   output,
                                   "--threads",
                                   "1",
                                   "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(PairwiseCli, MpirunTwoRanksEqualsOneProcessBitForBit) {
  if (!GW_TEST_HAS_MPI || std::strlen(GW_MPIRUN) == 0) {
    GTEST_SKIP() << "this build has no MPI (GWALIGN_MPI) or mpirun is missing";
  }
  ScratchDir dir;
  const std::string input = shapes(dir, 3, 3);
  const std::string one = dir.file("one.h5"), two = dir.file("two.h5");
  ASSERT_EQ(gwalign({"pairwise", input, "-o", one, "--threads", "1", "--quiet"}, dir.path()).status,
            0);
  ::setenv("OMP_WAIT_POLICY", "passive", 0);
  const std::string report = dir.file("two.json");
  const RunResult r =
      run_program(GW_MPIRUN, mpirun_pairwise(input, two, {"--json", report}), dir.path());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(parse_json(read_text(report))["ranks"], 2);
  EXPECT_TRUE(bitwise_equal(matrix(one), matrix(two)));
  EXPECT_TRUE(bitwise_equal(matrix(one, "/stderr"), matrix(two, "/stderr")));
}

TEST(PairwiseCli, MpiRunKilledInOneRankResumesToTheSameMatrix) {
  if (!GW_TEST_HAS_MPI || std::strlen(GW_MPIRUN) == 0) {
    GTEST_SKIP() << "this build has no MPI (GWALIGN_MPI) or mpirun is missing";
  }
  ScratchDir dir;
  const std::string input = shapes(dir, 3, 3);
  const std::string one = dir.file("one.h5"), two = dir.file("two.h5");
  ASSERT_EQ(gwalign({"pairwise", input, "-o", one, "--threads", "1", "--quiet"}, dir.path()).status,
            0);
  ::setenv("OMP_WAIT_POLICY", "passive", 0);
  const std::vector<std::string> args =
      mpirun_pairwise(input, two, {"--checkpoint-seconds", "1e-6", "--resume"});
  // Every rank carries the hook; the first to solve 6 pairs ends itself as kill -9 would, and
  // mpirun takes the other rank down.
  ::setenv("GWALIGN_PAIRWISE_ABORT_AFTER", "6", 1);
  const RunResult killed = run_program(GW_MPIRUN, args, dir.path());
  ::unsetenv("GWALIGN_PAIRWISE_ABORT_AFTER");
  EXPECT_NE(killed.status, 0);
  ASSERT_TRUE(std::filesystem::exists(two)) << killed.err;
  const io::Reader checkpoint(two);
  EXPECT_EQ(checkpoint.read_attribute<std::int64_t>("/", "complete").data[0], 0);
  EXPECT_LT(checkpoint.read_attribute<std::int64_t>("/", "pairs_done").data[0], 36);
  const RunResult resumed = run_program(GW_MPIRUN, args, dir.path());
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(io::Reader(two).read_attribute<std::int64_t>("/", "complete").data[0], 1);
  EXPECT_TRUE(bitwise_equal(matrix(one), matrix(two)));
}

// --solver picks the per-pair solver and the report says which; a sampled-loop flag makes auto
// sampled (it would do nothing under the exact solver) and is a usage error with --solver exact.
TEST(PairwiseCli, SolverFlagChoosesThePerPairSolverAndNoSolverSettingGoesInert) {
  ScratchDir dir;
  const std::string input = shapes(dir, 1, 3);
  auto run = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"pairwise",
                                     input,
                                     "-o",
                                     dir.file(name + ".h5"),
                                     "--quiet",
                                     "--json",
                                     dir.file(name + ".json")};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = gwalign(args, dir.path());
    EXPECT_EQ(r.status, 0) << r.err;
    return parse_json(read_text(dir.file(name + ".json")));
  };
  EXPECT_EQ(run("auto", {})["solver"], "auto");
  EXPECT_EQ(run("exact", {"--solver", "exact"})["solver"], "exact");
  EXPECT_EQ(run("sampled", {"--solver", "sampled"})["solver"], "sampled");
  // A sampled-loop flag under auto asks each pair's strategy for the sampled loop: the same
  // matrix as --solver sampled with that flag (the report keeps the requested "auto").
  EXPECT_EQ(run("auto_m", {"-M", "30"})["solver"], "auto");
  run("sampled_m", {"--solver", "sampled", "-M", "30"});
  EXPECT_TRUE(bitwise_equal(matrix(dir.file("auto_m.h5")), matrix(dir.file("sampled_m.h5"))));
  // The two solvers reach different plans: the matrices differ.
  EXPECT_FALSE(bitwise_equal(matrix(dir.file("exact.h5")), matrix(dir.file("sampled.h5"))));
  // auto on these 30-50-point spaces runs the exact solver: the same matrix as --solver exact.
  EXPECT_TRUE(bitwise_equal(matrix(dir.file("auto.h5")), matrix(dir.file("exact.h5"))));
  const RunResult bad =
      gwalign({"pairwise", input, "-o", dir.file("bad.h5"), "--solver", "exact", "--eps", "0.01"},
              dir.path());
  EXPECT_EQ(bad.status, 64) << bad.err;
  EXPECT_NE(bad.err.find("--eps"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("--solver sampled"), std::string::npos) << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad.h5")));
  const RunResult unknown =
      gwalign({"pairwise", input, "-o", dir.file("bad.h5"), "--solver", "fast"}, dir.path());
  EXPECT_EQ(unknown.status, 64) << unknown.err;
  // --exact-tol reaches the exact solver (conditional gradient stopped at a 50% decrease ends
  // elsewhere: another matrix) and is a usage error with the sampled one.
  EXPECT_EQ(run("exact_loose", {"--solver", "exact", "--exact-tol", "0.5"})["solver"], "exact");
  EXPECT_FALSE(bitwise_equal(matrix(dir.file("exact.h5")), matrix(dir.file("exact_loose.h5"))));
  const RunResult inert = gwalign(
      {"pairwise", input, "-o", dir.file("bad.h5"), "--solver", "sampled", "--exact-tol", "1e-6"},
      dir.path());
  EXPECT_EQ(inert.status, 64) << inert.err;
  EXPECT_NE(inert.err.find("--exact-tol"), std::string::npos) << inert.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad.h5")));
}

TEST(PairwiseCli, BadCollectionsExitWithSysexitsCodesAndWriteNothing) {
  ScratchDir dir;
  const std::string out = dir.file("out.h5");
  RunResult r = gwalign({"pairwise", dir.file("missing.h5"), "-o", out}, dir.path());
  EXPECT_EQ(r.status, 66) << r.err;
  {
    io::Writer file(dir.file("nospaces.h5"));
    const std::vector<double> x(4, 1.0);
    const std::int64_t shape[2] = {2, 2};
    file.write_array<double>("/X", std::span<const double>(x), shape);
    file.commit();
  }
  r = gwalign({"pairwise", dir.file("nospaces.h5"), "-o", out}, dir.path());
  EXPECT_EQ(r.status, 66) << r.err;
  EXPECT_NE(r.err.find("/spaces"), std::string::npos) << r.err;
  {
    io::Writer file(dir.file("one.h5"));
    const std::vector<double> x = {0, 0, 1, 0, 0, 1};
    const std::int64_t shape[2] = {3, 2};
    file.write_array<double>("/spaces/0/points", std::span<const double>(x), shape);
    file.commit();
  }
  r = gwalign({"pairwise", dir.file("one.h5"), "-o", out}, dir.path());
  EXPECT_EQ(r.status, 65) << r.err;
  EXPECT_NE(r.err.find("at least 2"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  // An existing output is never overwritten without --resume.
  const std::string input = shapes(dir, 1, 2);
  ASSERT_EQ(gwalign({"pairwise", input, "-o", out, "--quiet"}, dir.path()).status, 0);
  r = gwalign({"pairwise", input, "-o", out, "--quiet"}, dir.path());
  EXPECT_EQ(r.status, 73) << r.err;
  EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gw::cli::test
