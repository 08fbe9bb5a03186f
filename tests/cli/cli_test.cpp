// End-to-end tests of the gwalign binary: alignment of the bundled files (quality, plan mass,
// matching), flag -> Options mapping, progress, `generate`, `--help` / `--version`, and the table
// of bad inputs with their exit codes and messages (never an output file left behind).
#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli_test_util.h"
#include "core/config.h"
#include "core/isa.h"
#include "core/rng.h"
#include "datagen/spiral.h"
#include "io/h5ad.h"
#include "io/hdf5.h"
#include "solver/options.h"
#include "test_util.h"

namespace gw::cli::test {
namespace {

namespace fs = std::filesystem;
using gw::test::ScratchDir;

// The benchmark's quality bar (bench/README.md): |Spearman rho| >= 0.998 on the spiral pair.
constexpr double kMinAbsRho = 0.998;
// The plan of a balanced problem has mass 1 up to Sinkhorn's marginal tolerance (5e-4 L1) and
// the slack's 1e-10 share.
constexpr double kMassTolerance = 1e-3;

const std::string kSpiral = data_file("spiral_400.h5");
const std::string kRoll = data_file("swissroll_500.h5");

// `gwalign align SPIRAL ROLL -o OUT` with the benchmark's settings (bench/README.md: kNN graphs
// with k = 5, epsilon = 0.005, M = 80), then `extra`.
std::vector<std::string> spiral_align(const std::string& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "align", kSpiral, kRoll, "-o", out, "--knn", "5", "--eps", "0.005", "--M", "80"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

struct Plan {
  io::CsrArray<double> csr;
  std::vector<std::int32_t> matching;
};

Plan read_plan(const std::string& path) {
  const io::Reader reader(path);
  Plan plan;
  plan.csr = reader.read_csr<double>("/plan");
  plan.matching = reader.read_array<std::int32_t>("/matching", 1).data;
  return plan;
}

TEST(CliAlign, BundledSpiralToSwissRollReachesBenchmarkQuality) {
  ScratchDir dir;
  const std::string out = dir.file("plan.h5");
  const std::string json = dir.file("run.json");
  const RunResult run = gwalign(spiral_align(out, {"--report", json}), dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("|rho| = "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("iterations "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("seconds "), std::string::npos) << run.out;

  const std::string report = read_text(json);
  EXPECT_GE(json_number(report, "abs_rho"), kMinAbsRho) << report.substr(0, 2000);
  EXPECT_NEAR(json_number(report, "plan_mass"), 1.0, kMassTolerance);
  EXPECT_GT(json_number(report, "iterations"), 0.0);
  EXPECT_EQ(json_string(report, "truth"), "/angles vs /angles");

  // The plan as written: top-10 CSR rows whose largest entry is the matched column.
  const Plan plan = read_plan(out);
  ASSERT_EQ(plan.csr.rows, 400);
  ASSERT_EQ(plan.csr.cols, 500);
  ASSERT_EQ(plan.matching.size(), 400u);
  const int top_k = Options{}.top_k;
  double kept = 0.0;
  for (std::int64_t i = 0; i < plan.csr.rows; ++i) {
    ASSERT_EQ(plan.csr.indptr[i + 1] - plan.csr.indptr[i], top_k) << "row " << i;
    Offset best = plan.csr.indptr[i];
    for (Offset p = plan.csr.indptr[i]; p < plan.csr.indptr[i + 1]; ++p) {
      ASSERT_GE(plan.csr.data[p], 0.0);
      if (plan.csr.data[p] > plan.csr.data[best]) best = p;
      kept += plan.csr.data[p];
    }
    EXPECT_EQ(plan.csr.indices[best], plan.matching[i]) << "row " << i;
  }
  // The top 10 of 500 entries per row hold part of the mass, far more than a uniform plan's 2%.
  EXPECT_LE(kept, 1.0 + kMassTolerance);
  EXPECT_GT(kept, 0.2);

  // The report's scalars are attributes of / as well.
  const io::Reader reader(out);
  EXPECT_NEAR(reader.read_attribute<double>("/", "plan_mass").data.at(0), 1.0, kMassTolerance);
  EXPECT_GE(reader.read_attribute<double>("/", "abs_rho").data.at(0), kMinAbsRho);
  EXPECT_EQ(reader.read_string_attribute("/", "version"), GW_VERSION_STRING);
  EXPECT_EQ(reader.read_string("/report").substr(0, 1), "{");
}

TEST(CliAlign, DensePlanRowsArgmaxIsTheMatchingAndSameSeedGivesSamePlan) {
  ScratchDir dir;
  std::vector<std::vector<double>> plans;
  for (const char* name : {"a.h5", "b.h5"}) {
    const std::string out = dir.file(name);
    const RunResult run = gwalign(
        spiral_align(out, {"--dense", "--seed", "7", "--threads", "2", "--quiet"}), dir.path());
    ASSERT_EQ(run.status, 0) << run.err;
    EXPECT_TRUE(run.err.empty()) << "--quiet printed: " << run.err;
    const io::Reader reader(out);
    const io::Array<double> plan = reader.read_array<double>("/plan", 2);
    ASSERT_EQ(plan.shape, (std::vector<std::int64_t>{400, 500}));
    const auto matching = reader.read_array<std::int32_t>("/matching", 1).data;
    double mass = 0.0;
    for (std::int64_t i = 0; i < 400; ++i) {
      const double* row = plan.data.data() + i * 500;
      const auto best = std::max_element(row, row + 500) - row;
      EXPECT_EQ(best, matching[i]) << "row " << i;
      mass += std::accumulate(row, row + 500, 0.0);
    }
    EXPECT_NEAR(mass, 1.0, kMassTolerance);
    EXPECT_NEAR(reader.read_attribute<double>("/", "plan_mass").data.at(0), mass, 1e-9);
    plans.push_back(plan.data);
  }
  EXPECT_EQ(plans[0], plans[1]) << "same seed, same threads: the plan must be bitwise the same";
}

// Every solver flag reaches gw::Options: the report echoes the options of the run.
TEST(CliAlign, FlagsMapOntoOptions) {
  ScratchDir dir;
  const std::string out = dir.file("plan.h5");
  const RunResult run =
      gwalign({"align",    kSpiral,     kRoll,  "-o",           out,       "--report",
               "-",        "--M",       "33",   "--eps",        "0.004",   "--eps-final",
               "0.002",    "--alpha",   "0.8",  "--max-iter",   "40",      "--min-iter",
               "10",       "--tol",     "1e-6", "--knn",        "7",       "--mode",
               "dijkstra", "--seed",    "5",    "--init",       "product", "--precision",
               "f64",      "--top-k",   "3",    "--lambda-ema", "0.25",    "--rho-a",
               "2.5",      "--threads", "1",    "--quiet"},
              dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string& json = run.out;
  EXPECT_EQ(json_number(json, "num_anchors"), 33);
  EXPECT_EQ(json_number(json, "epsilon"), 0.004);
  EXPECT_EQ(json_number(json, "epsilon_final"), 0.002);
  EXPECT_EQ(json_number(json, "momentum"), 0.8);
  EXPECT_EQ(json_number(json, "max_iterations"), 40);
  EXPECT_EQ(json_number(json, "min_iterations"), 10);
  EXPECT_EQ(json_number(json, "tolerance"), 1e-6);
  EXPECT_EQ(json_number(json, "knn"), 7);
  EXPECT_EQ(json_string(json, "distance_mode"), "dijkstra");
  EXPECT_EQ(json_string(json, "source_distances"), "dijkstra");
  EXPECT_EQ(json_number(json, "seed"), 5);
  EXPECT_EQ(json_string(json, "initial_plan"), "product");
  EXPECT_EQ(json_string(json, "precision"), "f64");
  EXPECT_EQ(json_number(json, "top_k"), 3);
  EXPECT_EQ(json_number(json, "lambda_ema"), 0.25);
  EXPECT_EQ(json_number(json, "rho_a"), 2.5);
  EXPECT_TRUE(std::isnan(json_number(json, "rho_b"))) << "rho_b = +inf is written as null";
  EXPECT_EQ(json_number(json, "threads"), 1);
  EXPECT_LE(json_number(json, "iterations"), 40);
  const Plan plan = read_plan(out);
  EXPECT_EQ(plan.csr.nnz(), 400 * 3);
}

// GWALIGN_ISA forces the kernels' instruction-set target; the report and --version say which ran.
TEST(CliAlign, ForcedInstructionSetTargetRunsAndIsReported) {
  ScratchDir dir;
  const std::string out = dir.file("plan.h5");
  ::setenv("GWALIGN_ISA", "baseline", 1);
  const RunResult run =
      gwalign({"align", kSpiral, kRoll, "-o", out, "--report", "-", "--max-iter", "20", "--quiet"},
              dir.path());
  const RunResult version = gwalign({"--version"}, dir.path());
  ::unsetenv("GWALIGN_ISA");
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(json_string(run.out, "isa"), "baseline");
  ASSERT_EQ(version.status, 0) << version.err;
  EXPECT_NE(version.out.find("cpu kernels run: baseline"), std::string::npos) << version.out;
  EXPECT_NE(version.out.find("forced by GWALIGN_ISA"), std::string::npos) << version.out;
  // Unforced: the best target the CPU supports, named in the report.
  const RunResult best =
      gwalign({"align", kSpiral, kRoll, "-o", out, "--report", "-", "--max-iter", "20", "--quiet"},
              dir.path());
  ASSERT_EQ(best.status, 0) << best.err;
  EXPECT_EQ(json_string(best.out, "isa"), to_string(best_isa()));
}

// The CLI re-executes itself with glibc's huge-page malloc tunable where the kernel and glibc
// offer it (tools/gwalign/huge_pages.h); GWALIGN_HUGE_PAGES=0 and a user's own GLIBC_TUNABLES
// setting of the tunable keep 4 KiB pages; --version says which.
TEST(CliVersion, HugePagesAreOnWhereTheSystemOffersThemAndOffWhenAsked) {
  ScratchDir dir;
  bool offered = false;
  {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    int major = 0, minor = 0;
    offered = in && std::getline(in, line) &&
              (line.find("[always]") != std::string::npos ||
               line.find("[madvise]") != std::string::npos) &&
              std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 &&
              (major > 2 || (major == 2 && minor >= 35));
  }
  const char* saved = std::getenv("GLIBC_TUNABLES");
  const std::string previous = saved != nullptr ? saved : "";
  ::unsetenv("GLIBC_TUNABLES");
  const RunResult standard = gwalign({"--version"}, dir.path());
  ::setenv("GWALIGN_HUGE_PAGES", "0", 1);
  const RunResult refused = gwalign({"--version"}, dir.path());
  ::unsetenv("GWALIGN_HUGE_PAGES");
  ::setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0", 1);
  const RunResult user = gwalign({"--version"}, dir.path());
  if (saved != nullptr) {
    ::setenv("GLIBC_TUNABLES", previous.c_str(), 1);
  } else {
    ::unsetenv("GLIBC_TUNABLES");
  }
  const std::string on = "malloc: transparent huge pages";
  const std::string off = "malloc: 4 KiB pages";
  ASSERT_EQ(standard.status, 0) << standard.err;
  EXPECT_NE(standard.out.find(offered ? on : off), std::string::npos) << standard.out;
  ASSERT_EQ(refused.status, 0) << refused.err;
  EXPECT_NE(refused.out.find(off), std::string::npos) << refused.out;
  ASSERT_EQ(user.status, 0) << user.err;
  EXPECT_NE(user.out.find(off), std::string::npos) << user.out;
}

// A CPU run of a CUDA-enabled build never maps cuBLAS (it is loaded with dlopen by the first CUDA
// solve, solver/cuda/cublas_library.h): the dynamic loader's own log (LD_DEBUG=libs, on stderr)
// lists every shared object it loads, dlopen'ed ones included.
TEST(CliAlign, CpuRunOfACudaBuildNeverLoadsCublas) {
  if (!GW_HAS_CUDA) GTEST_SKIP() << "built without CUDA: cuBLAS is never involved";
  ScratchDir dir;
  const RunResult run = run_program("/usr/bin/env",
                                    {"LD_DEBUG=libs",
                                     "OMP_WAIT_POLICY=passive",
                                     GW_CLI_BINARY,
                                     "align",
                                     kSpiral,
                                     kRoll,
                                     "-o",
                                     dir.file("plan.h5"),
                                     "--max-iter",
                                     "20",
                                     "--quiet"},
                                    dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  // The loader's log is there (the CUDA runtime itself is still linked), and cuBLAS is not in it.
  EXPECT_NE(run.err.find("libcudart"), std::string::npos) << run.err.substr(0, 2000);
  const std::size_t cublas = run.err.find("libcublas");
  EXPECT_EQ(cublas, std::string::npos) << run.err.substr(cublas < 300 ? 0 : cublas - 300, 600);
}

// --help shows the library's defaults (taken from gw::Options{}, not restated in the CLI).
TEST(CliAlign, HelpShowsLibraryDefaults) {
  ScratchDir dir;
  const RunResult run = gwalign({"align", "--help"}, dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const Options defaults;
  auto default_of = [&](const std::string& flag) {
    const std::regex line("--" + flag + " arg[\\s\\S]*?\\(default: ([^)]*)\\)");
    std::smatch match;
    return std::regex_search(run.out, match, line) ? match[1].str() : std::string("<missing>");
  };
  EXPECT_EQ(default_of("max-iter"), std::to_string(defaults.max_iterations));
  EXPECT_EQ(default_of("top-k"), std::to_string(defaults.top_k));
  EXPECT_EQ(default_of("knn"), std::to_string(defaults.knn));
  EXPECT_EQ(std::stod(default_of("eps")), defaults.epsilon);
  EXPECT_EQ(std::stod(default_of("alpha")), defaults.momentum);
  EXPECT_EQ(std::stod(default_of("tol")), defaults.tolerance);
  EXPECT_NE(run.out.find("Examples:"), std::string::npos);
  // Every option group is listed (two were once missing from a hand-kept list), with a flag of
  // each of those two.
  for (const char* group : {"Solver choice and exact gradient",
                            "Plan support and memory",
                            "Joint embedding",
                            "Problem variants"}) {
    EXPECT_NE(run.out.find(std::string(" ") + group + " options:"), std::string::npos) << group;
  }
  EXPECT_NE(default_of("exact-method"), "<missing>");
  EXPECT_NE(default_of("support"), "<missing>");
}

TEST(CliAlign, LogEveryPrintsLinesWhenStderrIsNotATerminal) {
  ScratchDir dir;
  const RunResult run =
      gwalign(spiral_align(dir.file("p.h5"),
                           {"--log-every", "10", "--min-iter", "30", "--solver", "sampled"}),
              dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const std::regex line("gwalign: iteration [0-9]+/[0-9]+ cost [^\n]* elapsed [^\n]* s\n");
  const auto count = std::distance(std::sregex_iterator(run.err.begin(), run.err.end(), line),
                                   std::sregex_iterator());
  EXPECT_GE(count, 3) << run.err;
  EXPECT_EQ(run.err.find('\r'), std::string::npos) << "no terminal line without a terminal";

  const RunResult silent = gwalign(spiral_align(dir.file("q.h5")), dir.path());
  ASSERT_EQ(silent.status, 0) << silent.err;
  EXPECT_TRUE(silent.err.empty()) << silent.err;
}

// On a terminal (a pseudo-terminal from util-linux's `script`), progress is one line rewritten
// in place with \r, cleared before the summary; --quiet prints none.
TEST(CliAlign, ProgressOnATerminalIsOneUpdatingLine) {
  if (!fs::exists("/usr/bin/script")) GTEST_SKIP() << "/usr/bin/script (bsdutils) not installed";
  ScratchDir dir;
  std::string command = quote(GW_CLI_BINARY);
  for (const auto& arg : spiral_align(dir.file("p.h5"), {"--max-iter", "60", "--min-iter", "60"})) {
    command += ' ';
    command += quote(arg);
  }
  ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  const RunResult run = run_program("/usr/bin/script", {"-qec", command, "/dev/null"}, dir.path());
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  const std::string& tty = run.out;  // the terminal's output: stdout and stderr together
  const std::regex update("\r\x1b\\[Kgwalign: iteration [0-9]+/60  cost [^\r\n]* eta <= ");
  const auto updates =
      std::distance(std::sregex_iterator(tty.begin(), tty.end(), update), std::sregex_iterator());
  EXPECT_GE(updates, 5) << tty;
  // Every progress update rewrites the same line: none ends with a newline.
  EXPECT_FALSE(std::regex_search(tty, std::regex("eta <= [0-9.]+ s\r?\n"))) << tty;
  const auto summary = tty.find("source  ");
  ASSERT_NE(summary, std::string::npos) << tty;
  EXPECT_EQ(tty.substr(summary - 4, 4), "\r\x1b[K") << "the line is cleared before the summary";

  std::string quiet = command + " --quiet";
  const RunResult silent = run_program("/usr/bin/script", {"-qec", quiet, "/dev/null"}, dir.path());
  ASSERT_EQ(silent.status, 0) << silent.out;
  EXPECT_EQ(silent.out.find("gwalign: iteration"), std::string::npos) << silent.out;
}

// The obsp graph path: a scanpy-style directed kNN distance graph (CSR), symmetrized.
TEST(CliAlign, AnndataObspGraph) {
  ScratchDir dir;
  const std::string json = dir.file("run.json");
  const RunResult run = gwalign({"align",
                                 data_file("tiny_source.h5ad"),
                                 data_file("tiny_target.h5ad"),
                                 "--rep",
                                 "obsp:distances",
                                 "-o",
                                 dir.file("plan.h5"),
                                 "--report",
                                 json,
                                 "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string report = read_text(json);
  // Far from 0 (no alignment); the 10-NN graphs of 400 / 480 noisy cells give ~0.99.
  EXPECT_GE(json_number(report, "abs_rho"), 0.98) << report.substr(0, 1500);
  EXPECT_EQ(json_string(report, "truth"), "obs:angle vs obs:angle");
  EXPECT_NE(json_string(report, "source_geometry").find("graph, 400 nodes"), std::string::npos);
  EXPECT_EQ(json_string(report, "source_distances"), "precomputed");
}

// --as-distances: a dense distance matrix and a CSR one (every off-diagonal pair stored) of a
// shuffled copy of the same random cloud; GW must recover the shuffle.
TEST(CliAlign, DistanceMatricesDenseAndCsrRecoverAPermutation) {
  ScratchDir dir;
  constexpr Index n = 80;
  Rng rng(31);
  const std::vector<double> points = gw::test::random_points(rng, n, 3);
  std::vector<Index> perm(n);  // target node j is source node perm[j]
  std::iota(perm.begin(), perm.end(), 0);
  rng.shuffle(std::span<Index>(perm));
  auto distance = [&](Index a, Index b) {
    double s = 0.0;
    for (int c = 0; c < 3; ++c) s += std::pow(points[a * 3 + c] - points[b * 3 + c], 2);
    return static_cast<float>(std::sqrt(s));
  };
  std::vector<float> dense(n * n);
  io::CsrArray<float> csr;
  csr.rows = csr.cols = n;
  csr.indptr.push_back(0);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j) {
      dense[i * n + j] = distance(i, j);
      if (i != j) {
        csr.indices.push_back(j);
        csr.data.push_back(distance(perm[i], perm[j]));
      }
    }
    csr.indptr.push_back(static_cast<Offset>(csr.indices.size()));
  }
  {
    io::Writer w(dir.file("d.h5"));
    const std::int64_t shape[] = {n, n};
    w.write_array<float>("/dist", std::span<const float>(dense), shape);
    w.write_csr<float>("/dist_csr", csr);
    w.commit();
  }
  const std::string out = dir.file("plan.h5");
  const RunResult run = gwalign({"align",
                                 dir.file("d.h5"),
                                 dir.file("d.h5"),
                                 "--source-rep",
                                 "/dist",
                                 "--target-rep",
                                 "/dist_csr",
                                 "--as-distances",
                                 "-o",
                                 out,
                                 "--report",
                                 "-",
                                 "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(json_string(run.out, "source_distances"), "dense");
  EXPECT_EQ(json_string(run.out, "target_distances"), "dense");
  const Plan plan = read_plan(out);
  int correct = 0;
  for (Index i = 0; i < n; ++i) correct += perm[plan.matching[i]] == i;
  // Entropic blur can swap a few near neighbours; a wrong basin would get almost none right.
  EXPECT_GE(correct, 0.9 * n) << correct << " of " << n;
}

// --source-weights obs:COL sets the source marginal: the plan's row sums follow the column.
TEST(CliAlign, ObsWeightsAreTheSourceMarginal) {
  ScratchDir dir;
  const RunResult run = gwalign({"align",
                                 data_file("tiny_source.h5ad"),
                                 data_file("tiny_target.h5ad"),
                                 "--rep",
                                 "obsm:X_pca",
                                 "--source-weights",
                                 "obs:weight",
                                 "--dense",
                                 "-o",
                                 dir.file("plan.h5"),
                                 "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const io::H5adReader source(data_file("tiny_source.h5ad"));
  const std::vector<double> weights = source.read_obs_column("weight");
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  const io::Reader reader(dir.file("plan.h5"));
  const io::Array<double> plan = reader.read_array<double>("/plan", 2);
  ASSERT_EQ(plan.shape, (std::vector<std::int64_t>{400, 480}));
  double l1 = 0.0, l1_uniform = 0.0;
  for (int i = 0; i < 400; ++i) {
    const double row = std::accumulate(&plan.data[i * 480], &plan.data[i * 480] + 480, 0.0);
    l1 += std::abs(row - weights[i] / total);
    l1_uniform += std::abs(row - 1.0 / 400);
  }
  // The plan is put on the transport polytope (Options::round_marginals), so its row marginals are
  // the weights up to rounding; the weights (1 + U(0, 1)) are 0.17 away from uniform in L1.
  constexpr double kRowMarginalTolerance = 0.05;
  EXPECT_LT(l1, kRowMarginalTolerance);
  EXPECT_GT(l1_uniform, 2 * kRowMarginalTolerance);
}

TEST(CliAlign, FusedWeightWithFeatures) {
  ScratchDir dir;
  const RunResult run = gwalign({"align",
                                 data_file("tiny_source.h5ad"),
                                 data_file("tiny_target.h5ad"),
                                 "--rep",
                                 "obsm:X_pca",
                                 "--knn",
                                 "10",
                                 "--features",
                                 "obsm:X_pca",
                                 "--fused-weight",
                                 "0.2",
                                 "-o",
                                 dir.file("plan.h5"),
                                 "--report",
                                 "-",
                                 "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(json_number(run.out, "fused_weight"), 0.2);
  // Plain OT on the feature cost (no geometry) runs too.
  const RunResult ot = gwalign({"align",
                                data_file("tiny_source.h5ad"),
                                data_file("tiny_target.h5ad"),
                                "--features",
                                "obsm:X_pca",
                                "--fused-weight",
                                "1",
                                "-o",
                                dir.file("ot.h5"),
                                "--quiet"},
                               dir.path());
  ASSERT_EQ(ot.status, 0) << ot.err;
  EXPECT_EQ(read_plan(dir.file("ot.h5")).matching.size(), 400u);
}

// ------------------------------------------------------------------------------------ generate

TEST(CliGenerate, WritesTheDatagenPointsAndAngles) {
  ScratchDir dir;
  const std::string out = dir.file("s.h5");
  const RunResult run =
      gwalign({"generate", "swissroll", "--n", "60", "--seed", "3", "-o", out}, dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const datagen::PointSet expected = datagen::swiss_roll(60, 3);
  const io::Reader reader(out);
  const io::Array<double> points = reader.read_array<double>("/points", 2);
  EXPECT_EQ(points.shape, (std::vector<std::int64_t>{60, 3}));
  EXPECT_EQ(points.data, expected.points);
  EXPECT_EQ(reader.read_array<double>("/angles", 1).data, expected.angles);
  EXPECT_EQ(reader.read_string_attribute("/", "kind"), "swissroll");

  const std::string h5ad = dir.file("s.h5ad");
  ASSERT_EQ(
      gwalign({"generate", "spiral", "--n", "50", "--seed", "4", "-o", h5ad}, dir.path()).status,
      0);
  const io::H5adReader adata(h5ad);
  EXPECT_TRUE(adata.is_anndata());
  EXPECT_EQ(adata.n_obs(), 50);
  const datagen::PointSet spiral = datagen::spiral(50, 4);
  EXPECT_EQ(adata.read_obsm<double>("X_spatial").data, spiral.points);
  EXPECT_EQ(adata.read_obs_column("angle"), spiral.angles);
}

// data/spiral_400.h5 and data/swissroll_500.h5 are exactly what data/README.md says made them.
TEST(CliGenerate, BundledFilesAreReproducible) {
  const io::Reader spiral(kSpiral), roll(kRoll);
  EXPECT_EQ(spiral.read_array<double>("/points").data, datagen::spiral(400, 0).points);
  EXPECT_EQ(spiral.read_array<double>("/angles").data, datagen::spiral(400, 0).angles);
  EXPECT_EQ(roll.read_array<double>("/points").data, datagen::swiss_roll(500, 0).points);
  EXPECT_EQ(roll.read_array<double>("/angles").data, datagen::swiss_roll(500, 0).angles);
}

TEST(CliGenerate, AlignsGeneratedAnndataByDefaultRep) {
  ScratchDir dir;
  ASSERT_EQ(gwalign({"generate", "spiral", "--n", "300", "--seed", "1", "-o", dir.file("a.h5ad")},
                    dir.path())
                .status,
            0);
  ASSERT_EQ(
      gwalign({"generate", "swissroll", "--n", "350", "--seed", "1", "-o", dir.file("b.h5ad")},
              dir.path())
          .status,
      0);
  const RunResult run = gwalign(
      {"align", dir.file("a.h5ad"), dir.file("b.h5ad"), "--knn", "5", "-o", dir.file("p.h5")},
      dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("obsm:X_spatial"), std::string::npos) << run.out;
  const std::regex rho("\\|rho\\| = ([0-9.]+)");
  std::smatch found;
  ASSERT_TRUE(std::regex_search(run.out, found, rho)) << run.out;
  EXPECT_GE(std::stod(found[1].str()), 0.99);
}

// ------------------------------------------------------------------------- help and version

std::vector<std::string> listed_names(const std::string& usage, const std::string& header) {
  std::vector<std::string> names;
  const auto start = usage.find(header);
  if (start == std::string::npos) return names;
  std::istringstream lines(usage.substr(start + header.size()));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ' || line[2] == '-') {
      if (!names.empty()) break;
      continue;
    }
    names.push_back(line.substr(2, line.find(' ', 2) - 2));
  }
  return names;
}

TEST(CliHelp, EverySubcommandHasHelpAndVersionWorks) {
  ScratchDir dir;
  const RunResult usage = gwalign({"--help"}, dir.path());
  ASSERT_EQ(usage.status, 0);
  const std::vector<std::string> commands = listed_names(usage.out, "Commands:\n");
  for (const char* expected : {"align", "bench", "generate", "info"}) {
    EXPECT_NE(std::find(commands.begin(), commands.end(), expected), commands.end())
        << expected << " missing from:\n"
        << usage.out;
  }
  for (const auto& command : commands) {
    const RunResult help = gwalign({command, "--help"}, dir.path());
    EXPECT_EQ(help.status, 0) << command << ": " << help.err;
    EXPECT_NE(help.out.find("gwalign " + command), std::string::npos) << help.out;
    if (command != "bench") {  // `bench --help` lists the benchmarks; each has its own example
      EXPECT_NE(help.out.find("Example"), std::string::npos) << command << " --help has no example";
    }
  }
  const RunResult benches = gwalign({"bench", "--help"}, dir.path());
  ASSERT_EQ(benches.status, 0);
  const std::vector<std::string> names = listed_names(benches.out, "Benchmarks:\n");
  EXPECT_NE(std::find(names.begin(), names.end(), "spiral"), names.end()) << benches.out;
  for (const auto& bench : names) {
    const RunResult help = gwalign({"bench", bench, "--help"}, dir.path());
    EXPECT_EQ(help.status, 0) << "bench " << bench << ": " << help.err;
    EXPECT_NE(help.out.find("Example"), std::string::npos) << "bench " << bench << " --help";
  }
  const RunResult version = gwalign({"--version"}, dir.path());
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.out.find(std::string("gwalign ") + GW_VERSION_STRING), std::string::npos)
      << version.out;
}

// `gwalign masks` inputs: `types` edge types ("t0", "t1", ...) of `edges` random edges each over
// 1000 genes, and `samples` perturbation sets of 3 random genes each.
void write_masks_inputs(const std::string& graph,
                        const std::string& perts,
                        int types,
                        std::int64_t edges,
                        std::int64_t samples) {
  constexpr std::int64_t kGenes = 1000;
  Rng rng(7);
  {
    io::Writer out(graph);
    out.ensure_group("/edge_types");
    out.set_attribute<std::int64_t>("/edge_types", "num_nodes", kGenes);
    std::vector<std::int32_t> index(static_cast<std::size_t>(2 * edges));
    const std::int64_t shape[] = {2, edges};
    for (int t = 0; t < types; ++t) {
      for (auto& gene : index) gene = static_cast<std::int32_t>(rng.uniform_index(kGenes));
      out.write_array<std::int32_t>(
          "/edge_types/t" + std::to_string(t), std::span<const std::int32_t>(index), shape);
    }
    out.commit();
  }
  io::Writer out(perts);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(3 * samples));
  for (auto& gene : ids) gene = static_cast<std::int32_t>(rng.uniform_index(kGenes));
  std::vector<std::int64_t> ptr;
  for (std::int64_t b = 0; b <= samples; ++b) ptr.push_back(3 * b);
  const std::int64_t ids_shape[] = {3 * samples};
  const std::int64_t ptr_shape[] = {samples + 1};
  out.write_array<std::int32_t>("/ids", std::span<const std::int32_t>(ids), ids_shape);
  out.write_array<std::int64_t>("/ptr", std::span<const std::int64_t>(ptr), ptr_shape);
  out.commit();
}

// ------------------------------------------------------------------------------- bad inputs

// Fixtures for the bad-input table, written with gw::io next to the scratch output directory.
class BadInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(out_dir());
    Rng rng(2026);
    {
      io::Writer w(file("rank3.h5"));
      std::vector<double> values(40);
      for (double& v : values) v = rng.uniform();
      const std::int64_t shape[] = {10, 2, 2};
      w.write_array<double>("/points", std::span<const double>(values), shape);
      w.commit();
    }
    {
      io::Writer w(file("nan.h5"));
      std::vector<double> points = datagen::spiral(50, 1).points;
      points[2 * 17 + 1] = std::numeric_limits<double>::quiet_NaN();
      const std::int64_t shape[] = {50, 2};
      w.write_array<double>("/points", std::span<const double>(points), shape);
      w.commit();
    }
    {
      // A ring graph of 30 nodes with one negative edge length, under /obsp/ like an h5ad graph.
      io::CsrArray<float> ring;
      ring.rows = ring.cols = 30;
      ring.indptr.push_back(0);
      for (Index i = 0; i < 30; ++i) {
        ring.indices.push_back((i + 1) % 30);
        ring.data.push_back(i == 12 ? -0.5f : 0.1f + rng.uniform_float());
        ring.indptr.push_back(static_cast<Offset>(ring.indices.size()));
      }
      io::Writer w(file("graph.h5"));
      w.write_csr<float>("/obsp/ring", ring);
      w.commit();
    }
    {
      io::Writer w(file("dist.h5"));
      std::vector<float> values(30 * 20);
      for (float& v : values) v = rng.uniform_float();
      const std::int64_t shape[] = {30, 20};
      w.write_array<float>("/dist", std::span<const float>(values), shape);
      w.commit();
    }
    {
      io::Writer w(file("cost.h5"));
      std::vector<double> values(400 * 499);
      for (double& v : values) v = rng.uniform();
      const std::int64_t shape[] = {400, 499};
      w.write_array<double>("/cost", std::span<const double>(values), shape);
      w.commit();
    }
  }

  std::string file(const std::string& name) const { return dir_.file(name); }
  fs::path out_dir() const { return dir_.path() / "out"; }
  std::string out() const { return (out_dir() / "plan.h5").string(); }

  // Runs gwalign and checks the exit status, a one-line message with every fragment, and that
  // nothing (not even a temporary) was left in `check_dir`.
  void expect_failure(const std::vector<std::string>& args,
                      int status,
                      const std::vector<std::string>& fragments,
                      const fs::path& check_dir,
                      const std::vector<std::string>& expected_entries = {}) {
    expect_failed_run(gwalign(args, dir_.path()), status, fragments, check_dir, expected_entries);
  }

  // The checks of expect_failure on a run started another way (under `timeout`, a shell's ulimit).
  void expect_failed_run(const RunResult& run,
                         int status,
                         const std::vector<std::string>& fragments,
                         const fs::path& check_dir,
                         const std::vector<std::string>& expected_entries = {}) {
    EXPECT_EQ(run.status, status) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << "not one line: " << run.err;
    EXPECT_EQ(run.err.rfind("gwalign: ", 0), 0u) << run.err;
    for (const auto& fragment : fragments) {
      EXPECT_NE(run.err.find(fragment), std::string::npos)
          << "message lacks '" << fragment << "': " << run.err;
    }
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_EQ(directory_entries(check_dir), expected_entries) << "left behind in " << check_dir;
  }

  ScratchDir dir_;
};

TEST_F(BadInputs, MissingFile) {
  expect_failure(
      {"align", file("nope.h5"), kRoll, "-o", out()}, 66, {"nope.h5", "does not exist"}, out_dir());
}

TEST_F(BadInputs, UnknownInstructionSetTargetInTheEnvironment) {
  ::setenv("GWALIGN_ISA", "avx1024", 1);
  expect_failure({"align", kSpiral, kRoll, "-o", out()},
                 64,
                 {"GWALIGN_ISA=avx1024", "baseline, avx2, avx512"},
                 out_dir());
  ::unsetenv("GWALIGN_ISA");
}

TEST_F(BadInputs, MissingDataset) {
  expect_failure({"align", kSpiral, kRoll, "--source-rep", "/nothing", "-o", out()},
                 66,
                 {"/nothing", "spiral_400.h5"},
                 out_dir());
}

TEST_F(BadInputs, WrongRank) {
  expect_failure({"align", file("rank3.h5"), kRoll, "-o", out()},
                 65,
                 {"/points", "rank3.h5", "rank 3"},
                 out_dir());
}

TEST_F(BadInputs, NanInPoints) {
  expect_failure({"align", file("nan.h5"), kRoll, "-o", out()},
                 65,
                 {"/points", "nan.h5", "non-finite", "impute"},
                 out_dir());
}

TEST_F(BadInputs, NegativeEdgeWeight) {
  expect_failure({"align", file("graph.h5"), kRoll, "--source-rep", "/obsp/ring", "-o", out()},
                 65,
                 {"/obsp/ring", "graph.h5", "-0.5", "non-negative"},
                 out_dir());
}

TEST_F(BadInputs, NonSquareDistanceMatrix) {
  expect_failure(
      {"align", file("dist.h5"), file("dist.h5"), "--rep", "/dist", "--as-distances", "-o", out()},
      65,
      {"/dist", "dist.h5", "30 x 20", "square"},
      out_dir());
}

TEST_F(BadInputs, MismatchedFeatureCostShape) {
  expect_failure({"align",
                  kSpiral,
                  kRoll,
                  "--fused-weight",
                  "0.5",
                  "--feature-cost",
                  file("cost.h5") + ":/cost",
                  "-o",
                  out()},
                 65,
                 {"/cost", "cost.h5", "400 x 499", "400 x 500"},
                 out_dir());
}

TEST_F(BadInputs, UnknownOption) {
  expect_failure({"align", kSpiral, kRoll, "--frobnicate", "-o", out()},
                 64,
                 {"frobnicate", "--help"},
                 out_dir());
}

// No option silently does nothing: a flag that another flag (or the input) makes inert is a usage
// error naming both, before any file is read or written.
TEST_F(BadInputs, FlagsMadeInertByAnotherFlagAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
      {{"--top-k", "5", "--dense"}, {"--top-k", "--dense"}},
      {{"--device", "1"}, {"--device", "--backend cpu"}},
      {{"--multiscale-size", "100"}, {"--multiscale-size", "--multiscale"}},
      {{"--loss-anchors", "64", "--no-loss"}, {"--loss-anchors", "--no-loss"}},
      {{"--restart-iter", "5"}, {"--restart-iter", "--restarts"}},
      {{"--restarts", "3", "--restart-iter", "40", "--max-iter", "40"},
       {"restart_iterations", "max_iterations"}},
      {{"--partial-mass", "100", "--no-slack"}, {"partial_mass", "slack"}},
      {{"--plateau-patience", "9", "--plateau-improvement", "0"}, {"--plateau-patience"}},
      {{"--polish-iter", "0", "--polish-sinkhorn-tol", "1e-8"}, {"--polish-sinkhorn-tol"}},
      {{"--mode", "precomputed", "--landmarks", "20"}, {"--landmarks", "--mode precomputed"}},
      {{"--mode", "landmark", "--dijkstra-cache-mb", "64"}, {"--dijkstra-cache-mb"}},
      {{"--mode", "dijkstra", "--precomputed-max-nodes", "10"}, {"--precomputed-max-nodes"}},
  };
  for (const auto& [flags, fragments] : cases) {
    std::vector<std::string> args = {"align", kSpiral, kRoll, "-o", out()};
    args.insert(args.end(), flags.begin(), flags.end());
    SCOPED_TRACE(flags.front());
    expect_failure(args, 64, fragments, out_dir());
  }
}

TEST_F(BadInputs, GeometryFlagsWithGivenDistancesAreUsageErrors) {
  {
    io::Writer w(file("square.h5"));
    std::vector<float> values(25 * 25);
    for (int i = 0; i < 25; ++i)
      for (int j = 0; j < 25; ++j) values[i * 25 + j] = static_cast<float>(std::abs(i - j));
    const std::int64_t shape[] = {25, 25};
    w.write_array<float>("/d", std::span<const float>(values), shape);
    w.commit();
  }
  const std::vector<std::string> base = {
      "align", file("square.h5"), file("square.h5"), "--rep", "/d", "--as-distances", "-o", out()};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_failure(with({"--knn", "5"}), 64, {"--knn", "distances"}, out_dir());
  expect_failure(with({"--mode", "landmark"}), 64, {"--mode", "distances are given"}, out_dir());
  // Without those flags the same inputs align.
  EXPECT_EQ(gwalign(with({"--max-iter", "20", "--quiet"}), dir_.path()).status, 0);
}

TEST(CliAlign, MultiscaleOnInputsTooSmallForItWarnsAndRuns) {
  ScratchDir dir;
  const RunResult run = gwalign(
      spiral_align(dir.file("p.h5"),
                   {"--multiscale", "--multiscale-size", "300", "--max-iter", "20", "--quiet"}),
      dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("warning: --multiscale had no effect"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("600"), std::string::npos) << run.err;
  const RunResult used = gwalign(
      spiral_align(dir.file("q.h5"),
                   {"--multiscale", "--multiscale-size", "100", "--max-iter", "20", "--quiet"}),
      dir.path());
  ASSERT_EQ(used.status, 0) << used.err;
  EXPECT_EQ(used.err.find("warning"), std::string::npos) << used.err;
}

TEST_F(BadInputs, OutputPathThatIsADirectory) {
  fs::create_directories(out_dir() / "plan.h5");
  expect_failure({"align", kSpiral, kRoll, "-o", out()},
                 73,
                 {"plan.h5", "it is a directory"},
                 out_dir(),
                 {"plan.h5"});
  // Spelled with a trailing '/', the same path is the same error (io::Writer alone would call it
  // a usage error, 64).
  expect_failure({"align", kSpiral, kRoll, "-o", out() + "/"},
                 73,
                 {"plan.h5/", "it is a directory"},
                 out_dir(),
                 {"plan.h5"});
  expect_failure({"generate", "spiral", "--n", "20", "-o", out() + "/"},
                 73,
                 {"plan.h5/", "it is a directory"},
                 out_dir(),
                 {"plan.h5"});
  EXPECT_TRUE(fs::is_empty(out_dir() / "plan.h5"));
}

TEST_F(BadInputs, OutputThatIsAnInputIsRefusedAndTheInputSurvives) {
  const std::string source = file("source.h5");
  fs::copy_file(kSpiral, source);
  const auto before = fs::file_size(source);
  expect_failure({"align", source, kRoll, "-o", source}, 64, {"is an input file"}, out_dir());
  // The same file through another spelling of its path.
  expect_failure({"align", source, kRoll, "-o", (dir_.path() / "." / "source.h5").string()},
                 64,
                 {"is an input file"},
                 out_dir());
  EXPECT_EQ(fs::file_size(source), before);
  EXPECT_EQ(gwalign({"info", source}, dir_.path()).status, 0) << "the input must still be HDF5";
}

// Every file a spec names is an input too: -o naming one is refused before anything is read, and
// the file keeps its bytes.
TEST_F(BadInputs, OutputThatIsAFileNamedByASpecIsRefused) {
  const std::string extra = file("extra.h5");
  fs::copy_file(kSpiral, extra);  // has /points and /angles
  const std::string before = read_text(extra);
  const std::vector<std::pair<std::string, std::string>> specs = {
      {"--rep", extra + ":/points"},
      {"--source-rep", extra + ":/points"},
      {"--target-rep", extra + ":/points"},
      {"--source-weights", extra + ":/angles"},
      {"--target-weights", extra + ":/angles"},
      {"--truth", extra + ":/angles"},
      {"--features", extra + ":/points"},
      {"--source-features", extra + ":/points"},
      {"--target-features", extra + ":/points"},
      {"--feature-cost", extra + ":/points"},
  };
  for (const auto& [flag, spec] : specs) {
    SCOPED_TRACE(flag);
    expect_failure({"align", kSpiral, kRoll, flag, spec, "--fused-weight", "0.5", "-o", extra},
                   64,
                   {"-o", "is an input file", flag},
                   out_dir());
    // The same file under another spelling of its path, as the report.
    expect_failure({"align",
                    kSpiral,
                    kRoll,
                    flag,
                    spec,
                    "--fused-weight",
                    "0.5",
                    "-o",
                    out(),
                    "--report",
                    (dir_.path() / "." / "extra.h5").string()},
                   64,
                   {"--report", "is an input file", flag},
                   out_dir());
  }
  EXPECT_TRUE(read_text(extra) == before) << "the input was changed";
}

// --report may not replace an input or the output: usage errors (64) before any work, the input
// keeps its bytes and nothing appears in the output directory.
TEST_F(BadInputs, ReportThatIsAnInputOrTheOutputIsRefused) {
  const std::string source = file("source.h5");
  fs::copy_file(kSpiral, source);
  const std::string before = read_text(source);
  expect_failure({"align", source, kRoll, "-o", out(), "--report", source},
                 64,
                 {"--report", "is an input file", "SOURCE"},
                 out_dir());
  expect_failure({"align", source, kRoll, "-o", out(), "--report", kRoll},
                 64,
                 {"--report", "is an input file", "TARGET"},
                 out_dir());
  EXPECT_TRUE(read_text(source) == before) << "the input was changed";
  // The output does not exist yet: the paths themselves are compared.
  expect_failure({"align", kSpiral, kRoll, "-o", out(), "--report", out()},
                 64,
                 {"--report", "also the output -o"},
                 out_dir());
  expect_failure({"align",
                  kSpiral,
                  kRoll,
                  "-o",
                  out(),
                  "--report",
                  (out_dir() / ".." / "out" / "plan.h5").string()},
                 64,
                 {"--report", "also the output -o"},
                 out_dir());
}

// A report that cannot be written leaves the previous output in place: every output is written
// before the first is renamed. Here stdout is full (--report -), then the report's path becomes a
// directory while the solve runs (the temporaries exist; the report's rename would fail).
TEST_F(BadInputs, FailedReportKeepsThePreviousOutput) {
  const auto write_previous = [&] {
    std::ofstream previous(out());
    previous << "previous output";
  };
  write_previous();
  const std::string command = "exec " + quote(GW_CLI_BINARY) + " align " + quote(kSpiral) + " " +
                              quote(kRoll) + " -o " + quote(out()) +
                              " --knn 5 --max-iter 20 --quiet --report - >/dev/full";
  ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  expect_failed_run(run_program("/bin/sh", {"-c", command}, dir_.path()),
                    74,
                    {"report", "stdout", "No space left on device"},
                    out_dir(),
                    {"plan.h5"});
  EXPECT_TRUE(read_text(out()) == "previous output") << "the previous output was replaced";

  const fs::path report = out_dir() / "run.json";
  BackgroundRun run({"align",
                     kSpiral,
                     kRoll,
                     "-o",
                     out(),
                     "--report",
                     report.string(),
                     "--max-iter",
                     "1000",
                     "--min-iter",
                     "1000",
                     "--tol",
                     "0",
                     "--quiet"},
                    dir_.path());
  ASSERT_TRUE(wait_for_entry(out_dir(), ".run.json.tmp-", run)) << run.wait().err;
  fs::create_directory(report);
  expect_failed_run(
      run.wait(), 73, {"run.json", "it is a directory"}, out_dir(), {"plan.h5", "run.json"});
  EXPECT_TRUE(read_text(out()) == "previous output") << "the previous output was replaced";
  EXPECT_TRUE(fs::is_empty(report));
}

// A temporary left by a killed run whose pid this run has again (a container's entry point is
// always pid 1) does not block it: the old names (<pid>-0, -1, ...) are taken before gwalign
// starts, the run succeeds, and the stale files are left alone.
TEST_F(BadInputs, StaleTemporariesOfTheSamePidDoNotBlockARun) {
  BackgroundRun run(
      spiral_align(out(),
                   {"--max-iter", "20", "--quiet", "--report", (out_dir() / "run.json").string()}),
      dir_.path(),
      /*held=*/true);
  ASSERT_GT(run.pid(), 0);
  std::vector<std::string> stale;
  for (const char* name : {".run.json.tmp-", ".plan.h5.tmp-"}) {
    for (int counter = 0; counter < 4; ++counter) {
      stale.push_back(name + std::to_string(run.pid()) + "-" + std::to_string(counter));
      std::ofstream(out_dir() / stale.back()) << "stale";
    }
  }
  const RunResult result = run.wait();
  ASSERT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(json_string(read_text((out_dir() / "run.json").string()), "output"), out());
  EXPECT_EQ(read_plan(out()).matching.size(), 400u);
  std::vector<std::string> expected = stale;
  expected.push_back("plan.h5");
  expected.push_back("run.json");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(directory_entries(out_dir()), expected);
  for (const auto& name : stale) EXPECT_EQ(read_text((out_dir() / name).string()), "stale");
}

TEST_F(BadInputs, NanAndInfInDistanceMatrices) {
  auto write_square = [&](const std::string& name, float bad) {
    io::Writer w(file(name));
    std::vector<float> values(25 * 25);
    for (int i = 0; i < 25; ++i)
      for (int j = 0; j < 25; ++j) values[i * 25 + j] = static_cast<float>(std::abs(i - j));
    values[3 * 25 + 7] = values[7 * 25 + 3] = bad;
    const std::int64_t shape[] = {25, 25};
    w.write_array<float>("/d", std::span<const float>(values), shape);
    w.commit();
  };
  write_square("nan_d.h5", std::numeric_limits<float>::quiet_NaN());
  write_square("neg_d.h5", -std::numeric_limits<float>::infinity());
  for (const char* name : {"nan_d.h5", "neg_d.h5"}) {
    SCOPED_TRACE(name);
    expect_failure({"align", file(name), file(name), "--rep", "/d", "--as-distances", "-o", out()},
                   65,
                   {name, "/d", "D[3][7]", ">= 0 or +inf"},
                   out_dir());
  }
}

// A feature cost of 1e300 is finite in float64 but overflows the float32 cost: bad data, exit 65,
// nothing written. (A solve that ends non-finite now also exits 65 and writes nothing, align.cpp;
// no CLI input found so far reaches that path, this one is stopped earlier by Sinkhorn's check.)
TEST_F(BadInputs, FeatureCostOverflowingFloat32IsBadDataAndWritesNothing) {
  {
    io::Writer w(file("huge_cost.h5"));
    const std::vector<double> values(400 * 500, 1e300);
    const std::int64_t shape[] = {400, 500};
    w.write_array<double>("/cost", std::span<const double>(values), shape);
    w.commit();
  }
  expect_failure({"align",
                  kSpiral,
                  kRoll,
                  "--knn",
                  "5",
                  "--fused-weight",
                  "0.5",
                  "--feature-cost",
                  file("huge_cost.h5") + ":/cost",
                  "--max-iter",
                  "20",
                  "--solver",
                  "sampled",  // the sampled path's float32 Sinkhorn is what overflows
                  "--quiet",
                  "-o",
                  out()},
                 65,
                 {"sinkhorn", "no finite-cost entry"},
                 out_dir());
}

TEST_F(BadInputs, NegativeMarginalWeight) {
  {
    io::Writer w(file("weights.h5"));
    std::vector<double> weights(400, 1.0);
    weights[9] = -1.0;
    const std::int64_t shape[] = {400};
    w.write_array<double>("/w", std::span<const double>(weights), shape);
    w.commit();
  }
  expect_failure(
      {"align", kSpiral, kRoll, "--source-weights", file("weights.h5") + ":/w", "-o", out()},
      65,
      {"weights.h5", "weight 9 is -1"},
      out_dir());
}

TEST_F(BadInputs, OutputDirectoryMissing) {
  const fs::path missing = out_dir() / "no" / "such";
  expect_failure({"align", kSpiral, kRoll, "-o", (missing / "plan.h5").string()},
                 73,
                 {"plan.h5", "does not exist"},
                 out_dir());
}

TEST_F(BadInputs, OutputDirectoryNotWritable) {
  const fs::path locked = out_dir() / "locked";
  if (::geteuid() == 0) {
    // Root writes through permission bits, so a directory that cannot hold files stands in: a
    // path whose parent is a regular file.
    { std::ofstream(locked.string()) << "a file, not a directory\n"; }
    expect_failure({"align", kSpiral, kRoll, "-o", (locked / "plan.h5").string()},
                   73,
                   {"plan.h5", "not a directory"},
                   out_dir(),
                   {"locked"});
    fs::remove(locked);
  } else {
    fs::create_directories(locked);
    fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    expect_failure({"align",
                    kSpiral,
                    kRoll,
                    "-o",
                    (locked / "plan.h5").string(),
                    "--report",
                    (locked / "run.json").string()},
                   73,
                   {"plan.h5", "cannot write in directory"},
                   locked);
    fs::permissions(locked, fs::perms::owner_all);
  }
  // The report file's directory is checked before solving as well.
  expect_failure({"align",
                  kSpiral,
                  kRoll,
                  "-o",
                  out(),
                  "--report",
                  (out_dir() / "missing" / "run.json").string()},
                 73,
                 {"run.json"},
                 out_dir());
}

// Blosc (HDF5 filter 32001, written by PyTables: data/make_filter_fixtures.py) is not decoded.
TEST_F(BadInputs, BloscCompressedDatasetIsRejected) {
  expect_failure({"align", data_file("spiral_400_blosc.h5"), kRoll, "-o", out()},
                 65,
                 {"/points", "spiral_400_blosc.h5", "blosc"},
                 out_dir());
}

// LZF (h5py's filter 32000) is decoded by gw::io itself (anndata's own legacy archives use it),
// so the LZF copy of the spiral must align exactly like the original.
TEST_F(BadInputs, LzfCompressedDatasetIsReadCorrectly) {
  const RunResult lzf = gwalign(
      {"align", data_file("spiral_400_lzf.h5"), kRoll, "-o", out(), "--knn", "5", "--threads", "2"},
      dir_.path());
  ASSERT_EQ(lzf.status, 0) << lzf.err;
  const std::string plain = (out_dir() / "plain.h5").string();
  const RunResult run =
      gwalign({"align", kSpiral, kRoll, "-o", plain, "--knn", "5", "--threads", "2"}, dir_.path());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(read_plan(out()).matching, read_plan(plain).matching);
  EXPECT_EQ(read_plan(out()).csr.data, read_plan(plain).csr.data);
}

// A memory budget too small for either plan support: one line naming the sizes and the flag,
// exit 65, nothing written.
TEST_F(BadInputs, MemoryLimitTooSmallForEitherSupportFailsBeforeWriting) {
  expect_failure({"align", kSpiral, kRoll, "-o", out(), "--memory-limit", "64K"},
                 65,
                 {"400 x 500", "--memory-limit", "sparse"},
                 out_dir());
}

TEST_F(BadInputs, SupportFlagsThatDoNothingAreUsageErrors) {
  expect_failure(
      {"align", kSpiral, kRoll, "-o", out(), "--support", "dense", "--support-size", "8"},
      64,
      {"--support-size", "--support dense"},
      out_dir());
  expect_failure({"align", kSpiral, kRoll, "-o", out(), "--support", "sparse", "--dense"},
                 64,
                 {"--dense", "--support sparse"},
                 out_dir());
}

TEST_F(BadInputs, UnknownSupportNameIsAUsageError) {
  expect_failure({"align", kSpiral, kRoll, "-o", out(), "--support", "diagonal"},
                 64,
                 {"--support", "diagonal"},
                 out_dir());
}

// A long solve (the bundled pair with no stopping rule but the iteration limit) interrupted by
// SIGINT or SIGTERM after 2 s: it stops at its next progress check, writes nothing, and exits
// 128 + signal (130, 143). `timeout --preserve-status` sends the signal and returns gwalign's
// status; without --foreground it signals gwalign and then its process group, so the one event
// arrives twice, which must not count as the user's insisting second Ctrl-C (that kill left a
// temporary).
TEST_F(BadInputs, SigintOrSigtermDuringTheSolveExitsWithTheSignalAndWritesNothing) {
  for (const auto& [signal, status] : {std::pair<std::string, int>{"INT", 130}, {"TERM", 143}}) {
    SCOPED_TRACE("SIG" + signal);
    ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
    const RunResult run = run_program("/usr/bin/timeout",
                                      {"--preserve-status",
                                       "-s",
                                       signal,
                                       "2",
                                       GW_CLI_BINARY,
                                       "align",
                                       kSpiral,
                                       kRoll,
                                       "-o",
                                       out(),
                                       "--max-iter",
                                       "1000000",
                                       "--min-iter",
                                       "1000000",
                                       "--tol",
                                       "0",
                                       // the dense loop honours --min-iter (the sparse fine
                                       // level stops after its own short tests)
                                       "--support",
                                       "dense"},
                                      dir_.path());
    expect_failed_run(
        run, status, {"interrupted", "SIG" + signal, "nothing was written"}, out_dir());
  }
}

// A full disk, simulated by a file-size limit (ulimit -f, in KiB) far below the dense plan's 1.6
// MB: the write fails with a one-line I/O error naming the cause and the remedy (exit 74), the
// previous output is untouched and no temporary is left (SIGXFSZ is ignored, so the write returns
// EFBIG instead of killing gwalign).
TEST_F(BadInputs, FileSizeLimitFailsTheWriteAndKeepsThePreviousOutput) {
  {
    std::ofstream previous(out());
    previous << "previous output";
  }
  const std::string command = "ulimit -f 256; exec " + quote(GW_CLI_BINARY) + " align " +
                              quote(kSpiral) + " " + quote(kRoll) + " -o " + quote(out()) +
                              " --dense";
  ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  const RunResult run = run_program("/bin/sh", {"-c", command}, dir_.path());
  expect_failed_run(
      run, 74, {"plan.h5", "File too large", "free disk space"}, out_dir(), {"plan.h5"});
  EXPECT_EQ(read_text(out()), "previous output");
}

// Every command that writes a file treats a file size limit (ulimit -f, KiB) below its output's
// size like align does: a write error (exit 74) naming the file, the temporary removed, the
// previous file kept. Without SIGXFSZ ignored the kernel kills the command mid-write and its
// temporary stays behind.
TEST_F(BadInputs, FileSizeLimitInEveryWritingCommandIsAnIoErrorWithoutTemporaries) {
  const std::string graph = file("masks_graph.h5");
  const std::string perts = file("masks_perts.h5");
  write_masks_inputs(graph, perts, 2, 50000, 16);  // dense masks: 2 x 16 x 50000 bytes
  const std::vector<std::vector<std::string>> commands = {
      {"masks", graph, perts, "--dense"},
      {"generate", "spiral", "--n", "50000"},
      {"generate", "swissroll", "--n", "50000", "--format", "h5ad"},
      {"generate", "shapes", "--classes", "20", "--per-class", "20"},
      {"bench", "knn", "--n", "50000", "--reps", "1", "--save"},
      {"bench",
       "apsp",
       "--n",
       "2000",
       "--k",
       "10",
       "--reps",
       "1",
       "--sample-rows",
       "200",
       "--save"},
      {"bench",
       "sinkhorn",
       "--n",
       "400",
       "--k",
       "500",
       "--iters",
       "5",
       "--reps",
       "1",
       "--save-problem"},
  };
  ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  for (std::vector<std::string> args : commands) {
    SCOPED_TRACE(args[0] + " " + args[1]);
    if (args[0] != "bench") args.push_back("-o");
    args.push_back(out());
    {
      std::ofstream previous(out());
      previous << "previous output";
    }
    std::string command = "ulimit -f 256; exec " + quote(GW_CLI_BINARY);
    for (const auto& arg : args) {
      command += ' ';  // appended apart: GCC 12 warns (-Wrestrict) on " " + std::string
      command += quote(arg);
    }
    const RunResult run = run_program("/bin/sh", {"-c", command}, dir_.path());
    expect_failed_run(run, 74, {"plan.h5"}, out_dir(), {"plan.h5"});
    EXPECT_TRUE(read_text(out()) == "previous output") << "the previous output was replaced";
  }
}

// SIGINT while `gwalign masks` writes (its temporary exists): it stops before the next edge type,
// removes the temporary and exits 130, as align does. Eight types of dense masks (8 x 48 MB) keep
// it writing long after its temporary appears.
TEST_F(BadInputs, SigintWhileMasksWritesExitsWithTheSignalAndLeavesNoTemporary) {
  const std::string graph = file("masks_graph.h5");
  const std::string perts = file("masks_perts.h5");
  write_masks_inputs(graph, perts, 8, 400000, 120);
  BackgroundRun run({"masks", graph, perts, "--dense", "--threads", "1", "-o", out()}, dir_.path());
  ASSERT_TRUE(wait_for_entry(out_dir(), ".plan.h5.tmp-", run))
      << "no temporary output seen: " << run.wait().err;
  ::kill(run.pid(), SIGINT);
  expect_failed_run(run.wait(), 130, {"interrupted", "SIGINT", "nothing was written"}, out_dir());
}

TEST(CliAlign, SolverFlagsMapOntoOptionsAndTheReportRecordsTheChoice) {
  ScratchDir dir;
  const std::string out = dir.file("plan.h5");
  const RunResult run = gwalign({"align", kSpiral,
                                 kRoll,   "-o",
                                 out,     "--report",
                                 "-",     "--knn",
                                 "5",     "--solver",
                                 "exact", "--exact-method",
                                 "cg",    "--exact-max-iter",
                                 "30",    "--exact-tol",
                                 "1e-8",  "--starts",
                                 "2",     "--start-budget",
                                 "100",   "--threads",
                                 "1",     "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const std::string& json = run.out;
  EXPECT_EQ(json_string(json, "solver"), "exact");
  EXPECT_EQ(json_string(json, "solver_reason"), "requested (solver = exact)");
  EXPECT_EQ(json_string(json, "exact_method"), "cg");
  EXPECT_EQ(json_number(json, "exact_max_iterations"), 30);
  EXPECT_EQ(json_number(json, "exact_tolerance"), 1e-8);
  EXPECT_EQ(json_number(json, "start_time_budget"), 100);
  EXPECT_NE(json.find("\"product\""), std::string::npos) << "the second start is missing";
  EXPECT_GE(json_number(json, "abs_rho"), 0.998);
  // auto below its threshold runs exact, above it sampled; the reason gives the numbers.
  const RunResult small = gwalign({"align",
                                   kSpiral,
                                   kRoll,
                                   "-o",
                                   dir.file("a.h5"),
                                   "--report",
                                   "-",
                                   "--knn",
                                   "5",
                                   "--threads",
                                   "1",
                                   "--quiet"},
                                  dir.path());
  ASSERT_EQ(small.status, 0) << small.err;
  EXPECT_EQ(json_string(small.out, "solver"), "exact");
  EXPECT_NE(json_string(small.out, "solver_reason").find("<= exact_max_work"), std::string::npos);
  const RunResult large = gwalign({"align",
                                   kSpiral,
                                   kRoll,
                                   "-o",
                                   dir.file("b.h5"),
                                   "--report",
                                   "-",
                                   "--knn",
                                   "5",
                                   "--exact-max-work",
                                   "1e6",
                                   "--threads",
                                   "1",
                                   "--quiet"},
                                  dir.path());
  ASSERT_EQ(large.status, 0) << large.err;
  EXPECT_EQ(json_string(large.out, "solver"), "sampled");
  EXPECT_NE(json_string(large.out, "solver_reason").find("> exact_max_work"), std::string::npos);
  // A sampled-loop flag given with --solver auto asks for the sampled loop.
  const RunResult tuned = gwalign({"align",
                                   kSpiral,
                                   kRoll,
                                   "-o",
                                   dir.file("c.h5"),
                                   "--report",
                                   "-",
                                   "--knn",
                                   "5",
                                   "--max-iter",
                                   "40",
                                   "--threads",
                                   "1",
                                   "--quiet"},
                                  dir.path());
  ASSERT_EQ(tuned.status, 0) << tuned.err;
  EXPECT_EQ(json_string(tuned.out, "solver"), "sampled");
  EXPECT_NE(json_string(tuned.out, "solver_reason").find("max_iterations"), std::string::npos);
}

TEST_F(BadInputs, UnknownSolverOrMethodAndInertExactFlagsAreUsageErrors) {
  expect_failure({"align", kSpiral, kRoll, "-o", out(), "--solver", "fastest"},
                 64,
                 {"--solver", "fastest"},
                 out_dir());
  expect_failure({"align", kSpiral, kRoll, "-o", out(), "--exact-method", "simplex"},
                 64,
                 {"--exact-method", "simplex"},
                 out_dir());
  expect_failure({"align", kSpiral, kRoll, "-o", out(), "--solver", "sampled", "--starts", "2"},
                 64,
                 {"--starts", "--solver sampled"},
                 out_dir());
  expect_failure(
      {"align", kSpiral, kRoll, "-o", out(), "--solver", "exact", "--exact-max-work", "1e9"},
      64,
      {"--exact-max-work", "--solver auto"},
      out_dir());
  expect_failure({"align", kSpiral, kRoll, "-o", out(), "--solver", "exact", "--rho-a", "1"},
                 65,
                 {"solver = exact does not support", "--solver sampled"},
                 out_dir());
  // Each exact method's own settings: --mirror-iter is mirror descent's (the default hybrid's
  // basin is --hybrid-mirror-iter), --hybrid-mirror-iter the hybrid's, and cg runs no mirror step.
  expect_failure({"align", kSpiral, kRoll, "-o", out(), "--mirror-iter", "5"},
                 64,
                 {"--mirror-iter", "--exact-method mirror", "--hybrid-mirror-iter"},
                 out_dir());
  expect_failure({"align",
                  kSpiral,
                  kRoll,
                  "-o",
                  out(),
                  "--exact-method",
                  "mirror",
                  "--hybrid-mirror-iter",
                  "1"},
                 64,
                 {"--hybrid-mirror-iter", "--exact-method hybrid"},
                 out_dir());
  expect_failure(
      {"align", kSpiral, kRoll, "-o", out(), "--exact-method", "cg", "--mirror-eps", "0.01"},
      64,
      {"--mirror-eps", "--exact-method cg"},
      out_dir());
}

}  // namespace
}  // namespace gw::cli::test
