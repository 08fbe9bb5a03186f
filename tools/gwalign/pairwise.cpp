// `gwalign pairwise COLLECTION -o OUT.h5`: GW distances between every pair of spaces of a
// collection (pairwise/run.h), on the threads of one process or, under mpirun, on every rank.
#include <unistd.h>

#include <cxxopts.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include "cli_util.h"
#include "io/atomic_text_file.h"
#include "solver_flags.h"
#include "command.h"
#include "core/error.h"
#include "core/json.h"
#include "pairwise/collection.h"
#include "pairwise/mpi.h"
#include "pairwise/pair_solve.h"
#include "pairwise/run.h"

namespace gw::cli {
namespace {

constexpr const char* kPairwiseHelp = R"(
Input: one HDF5 file with /spaces/<i>/points (n x d), /spaces/<i>/graph (CSR group) or
/spaces/<i>/distances (n x n) for i = 0 .. N-1, optional /spaces/<i>/weights and /labels
('gwalign generate shapes' writes one). Points become their Euclidean distance matrix (or kNN-graph
shortest paths with --points knn-geodesic); graphs their shortest paths; every space's distances
are divided by their maximum, so the distances compare shapes, not sizes.

Output (-o): /distances (N x N GW loss, the objective), /gw_distance (0.5 sqrt of it, as CAJAL
reports), /stderr, /status (0 pending, 1 done, 2 abnormal solver end, 3 pruned by --nearest),
/seconds, /lower_bound (with --nearest); attribute complete = 1 once every pair is done. The file
is rewritten atomically every --checkpoint-seconds, so it is always readable; after a kill, run the
same command with --resume to compute only the missing pairs.

MPI: 'mpirun -np R gwalign pairwise ...' shares the pairs among the ranks (rank 0 writes the
output); every rank uses --threads threads. Without --nearest the matrix is the same bit for bit
for any number of ranks and threads (each pair has its own seed and runs on one thread).

--nearest K: pairs whose lower bound exceeds both spaces' K-th smallest exact distance found so
far are skipped (status 3). Which pairs those are depends on the order results arrive in (threads,
ranks), so /status and the NaN entries can differ between runs; every computed entry is the value
a run without --nearest writes, and each space's K nearest neighbours are the same. Pairs whose
loss is only estimated (/stderr > 0) are never skipped. Each MPI rank prunes from the pairs it
solved itself, so R ranks skip fewer pairs than one process with as many threads.

Examples:
  gwalign generate shapes --classes 5 --per-class 20 --seed 0 -o shapes.h5
  gwalign pairwise shapes.h5 -o dist.h5 --threads 2 --json report.json
  mpirun -np 2 gwalign pairwise shapes.h5 -o dist.h5 --threads 1
  gwalign pairwise shapes.h5 -o knn.h5 --nearest 5
)";

std::string format_seconds(double s) {
  char text[32];
  if (!std::isfinite(s)) return "?";
  if (s < 120) {
    std::snprintf(text, sizeof text, "%.0fs", s);
  } else if (s < 7200) {
    std::snprintf(text, sizeof text, "%.0fm%02.0fs", std::floor(s / 60), std::fmod(s, 60));
  } else {
    std::snprintf(text, sizeof text, "%.1fh", s / 3600);
  }
  return text;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(at));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (at - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

std::string report_json(const pairwise::RunSummary& s,
                        const std::string& collection,
                        const std::string& output,
                        const pairwise::RunOptions& options) {
  JsonWriter json(true);
  json.begin_object()
      .member("command", "pairwise")
      .member("collection", collection)
      .member("output", output)
      .member("spaces", static_cast<std::int64_t>(s.spaces))
      .member("pairs_total", s.pairs_total)
      .member("pairs_computed", s.pairs_computed)
      .member("pairs_resumed", s.pairs_resumed)
      .member("pairs_pruned", s.pairs_pruned)
      .member("pairs_abnormal", s.pairs_abnormal)
      .member("complete", s.complete)
      .member("ranks", s.ranks)
      .member("threads_per_rank", s.threads)
      .member("nearest", options.nearest)
      .member("seed", options.seed)
      .member("solver", to_string(options.solver.solver))
      .member("checkpoints", s.checkpoints)
      .member("checkpoint_write_seconds", s.checkpoint_write_seconds)
      .member("seconds", s.seconds)
      .member("pairs_per_second",
              s.seconds > 0 ? static_cast<double>(s.pairs_computed) / s.seconds : 0.0);
  double total = 0.0;
  for (double v : s.pair_seconds) total += v;
  json.key("pair_seconds")
      .begin_object()
      .member("count", static_cast<std::int64_t>(s.pair_seconds.size()))
      .member("sum", total)
      .member("mean", s.pair_seconds.empty() ? 0.0 : total / s.pair_seconds.size())
      .member("min", percentile(s.pair_seconds, 0.0))
      .member("p10", percentile(s.pair_seconds, 0.1))
      .member("p50", percentile(s.pair_seconds, 0.5))
      .member("p90", percentile(s.pair_seconds, 0.9))
      .member("p99", percentile(s.pair_seconds, 0.99))
      .member("max", percentile(s.pair_seconds, 1.0))
      .end_object();
  std::vector<double> iterations(s.pair_iterations.begin(), s.pair_iterations.end());
  json.key("pair_iterations")
      .begin_object()
      .member("p50", percentile(iterations, 0.5))
      .member("p90", percentile(iterations, 0.9))
      .member("max", percentile(iterations, 1.0))
      .end_object();
  json.end_object();
  return json.str() + "\n";
}

cxxopts::Options pairwise_flags(const char* program, const Options& defaults) {
  cxxopts::Options cli(program, "GW distances between every pair of spaces of a collection.");
  // clang-format off
  cli.add_options()
      ("collection", "collection file (HDF5, /spaces/<i>/...)", cxxopts::value<std::string>())
      ("o,output", "output file (.h5)", cxxopts::value<std::string>())
      ("threads", "threads per process, one pair each (0: all cores)",
       cxxopts::value<int>()->default_value("0"))
      ("resume", "continue the run recorded in the output (same collection and flags)")
      ("nearest", "only what each space's K nearest neighbours need (lower-bound pruning; 0: "
       "all pairs)", cxxopts::value<int>()->default_value("0"))
      ("quiet", "no progress on stderr")
      ("json", "write a JSON report (per-pair cost distribution) to this file ('-': stdout)",
       cxxopts::value<std::string>())
      ("seed", "base seed; pair (i, j) uses a seed derived from it and (i, j)",
       cxxopts::value<std::uint64_t>()->default_value("0"))
      ("checkpoint-seconds", "seconds between checkpoints of the output",
       cxxopts::value<double>()->default_value("10"))
      ("points", "point-cloud spaces as: euclidean (distance matrix, as CAJAL) | knn-geodesic "
       "(kNN-graph shortest paths, as gwalign align)",
       cxxopts::value<std::string>()->default_value("euclidean"))
      ("knn", "neighbours per point with --points knn-geodesic",
       cxxopts::value<int>()->default_value(std::to_string(defaults.knn)))
      ("solver", "per-pair solver: auto | sampled | exact (auto: the exact-gradient solver "
       "where gw::solve's strategy picks it, i.e. spaces of up to a few thousand nodes, from "
       "one start, the distance-profile plan; a sampled-loop flag below makes auto sampled)",
       cxxopts::value<std::string>()->default_value("auto"))
      ("exact-tol", "exact solver: stop conditional gradient when the objective's relative "
       "decrease or Frank-Wolfe gap falls below this (below 5e-7 a float32 solve finishes in "
       "float64)", cxxopts::value<double>()->default_value(format_number(defaults.exact_tolerance)))
      ("M", "anchor pairs per iteration (sampled solver)",
       cxxopts::value<int>()->default_value(std::to_string(defaults.num_anchors)))
      ("eps", "initial entropic regularization (sampled solver; the final one is the smaller "
       "of it and " + format_number(defaults.epsilon_final) + ")",
       cxxopts::value<double>()->default_value(format_number(defaults.epsilon)))
      ("max-iter", "outer iteration limit per pair (sampled solver)",
       cxxopts::value<int>()->default_value(std::to_string(defaults.max_iterations)))
      ("min-iter", "iterations before a pair may stop (sampled solver)",
       cxxopts::value<int>()->default_value(std::to_string(defaults.min_iterations)))
      ("h,help", "print this help");
  // clang-format on
  cli.parse_positional({"collection"});
  cli.positional_help("COLLECTION -o OUT.h5");
  return cli;
}

// The per-pair solver options of the flags (on top of the pairwise defaults), with the flags of
// one solver rejected when another is asked for: usage errors here, before any pair runs (the
// strategy of each pair would reject them too, naming the fields).
Options pair_solver_options(const cxxopts::ParseResult& flags,
                            const Options& defaults,
                            const std::string& metric) {
  Options solver = defaults;
  GW_CHECK(!flags.count("knn") || metric == "knn-geodesic",
           "--knn applies only with --points knn-geodesic (Euclidean distances use no graph)");
  solver.knn = flags["knn"].as<int>();
  // A flag that is given sets its field (and marks it given: gw::Options, Setting<T>); the
  // strategy then runs the solver that reads it.
  if (flags.count("M")) solver.num_anchors = flags["M"].as<int>();
  if (flags.count("eps")) {
    solver.epsilon = flags["eps"].as<double>();
    // The schedule decays from epsilon to epsilon_final: an --eps below the default final value
    // would otherwise make epsilon rise during the solve.
    solver.epsilon_final.set_default(
        std::min(defaults.epsilon_final.value(), solver.epsilon.value()));
  }
  if (flags.count("max-iter")) solver.max_iterations = flags["max-iter"].as<int>();
  if (flags.count("min-iter")) solver.min_iterations = flags["min-iter"].as<int>();
  if (flags.count("exact-tol")) solver.exact_tolerance = flags["exact-tol"].as<double>();
  const std::string kind = flags["solver"].as<std::string>();
  const auto parsed_kind = solver_kind_from_string(kind);
  GW_CHECK(parsed_kind, "--solver must be auto, sampled or exact, got '" << kind << "'");
  solver.solver = *parsed_kind;
  for (const char* flag : {"M", "eps", "max-iter", "min-iter"}) {
    GW_CHECK(flags.count(flag) == 0 || solver.solver != SolverKind::kExact,
             "--" << flag
                  << " is a setting of the sampled solver and does nothing with --solver "
                     "exact; drop it or use --solver sampled");
    GW_CHECK(flags.count(flag) == 0 || flags.count("exact-tol") == 0,
             "--exact-tol (the exact solver's) and --" << flag
                 << " (the sampled solver's) ask for different solvers; drop one of them");
  }
  GW_CHECK(!flags.count("exact-tol") || solver.solver != SolverKind::kSampled,
           "--exact-tol is a setting of the exact solver and does nothing with the sampled one; "
           "drop it or use --solver exact or auto");
  std::string why;
  GW_CHECK(solver.is_valid(&why), why);
  return solver;
}

pairwise::RunOptions run_options_from_flags(const cxxopts::ParseResult& flags,
                                            const Options& defaults) {
  pairwise::RunOptions options;
  const std::string metric = flags["points"].as<std::string>();
  GW_CHECK(metric == "euclidean" || metric == "knn-geodesic",
           "--points must be euclidean or knn-geodesic, got '" << metric << "'");
  options.point_metric = metric == "euclidean" ? pairwise::PointMetric::kEuclidean
                                               : pairwise::PointMetric::kKnnGeodesic;
  options.solver = pair_solver_options(flags, defaults, metric);
  options.threads = flags["threads"].as<int>();
  GW_CHECK(options.threads >= 0, "--threads must be >= 0, got " << options.threads);
  options.resume = flags.count("resume") > 0;
  options.nearest = flags["nearest"].as<int>();
  GW_CHECK(options.nearest >= 0, "--nearest must be >= 0, got " << options.nearest);
  options.seed = flags["seed"].as<std::uint64_t>();
  options.checkpoint_seconds = flags["checkpoint-seconds"].as<double>();
  options.output = flags["output"].as<std::string>();
  if (const char* hook = std::getenv("GWALIGN_PAIRWISE_ABORT_AFTER")) {
    options.abort_after = std::atoll(hook);
  }
  return options;
}

// One progress line per call: rewritten in place on a terminal, one line each otherwise.
std::function<void(const pairwise::RunProgress&)> progress_printer(bool tty) {
  return [tty](const pairwise::RunProgress& p) {
    const double rate = p.elapsed_seconds > 0 ? p.done_this_run / p.elapsed_seconds : 0.0;
    const double eta = rate > 0 ? (p.total - p.done) / rate : std::nan("");
    char line[160];
    std::snprintf(line,
                  sizeof line,
                  "pairwise: %lld / %lld pairs (%.1f%%), %.1f pairs/s, ETA %s",
                  static_cast<long long>(p.done),
                  static_cast<long long>(p.total),
                  100.0 * p.done / std::max<std::int64_t>(p.total, 1),
                  rate,
                  format_seconds(eta).c_str());
    std::cerr << (tty ? "\r" : "") << line << (tty ? "\033[K" : "\n") << std::flush;
  };
}

// The closing line on stderr (replacing the progress line on a terminal).
void print_summary_line(const pairwise::RunSummary& summary, bool tty) {
  std::cerr << (tty ? "\r\033[K" : "") << "pairwise: " << summary.pairs_computed
            << " pairs solved in " << format_seconds(summary.seconds) << " (" << summary.ranks
            << " rank(s) x " << summary.threads << " thread(s))";
  if (summary.pairs_resumed > 0) std::cerr << ", " << summary.pairs_resumed << " resumed";
  if (summary.pairs_pruned > 0) std::cerr << ", " << summary.pairs_pruned << " pruned";
  if (summary.pairs_abnormal > 0) {
    std::cerr << ", " << summary.pairs_abnormal << " ended abnormally (status 2)";
  }
  std::cerr << "\n";
}

// The command on one rank (every rank runs it; rank 0 prints and writes the reports).
int run_pairwise_on_rank(int argc, char** argv, pairwise::MpiSession& mpi) {
  const bool root = mpi.rank() == 0;
  const Options defaults = pairwise::default_pair_options();
  cxxopts::Options cli = pairwise_flags(argv[0], defaults);
  const auto flags = cli.parse(argc, argv);
  if (flags.count("help")) {
    if (root) {
      std::cout << cli.help() << kPairwiseHelp << "\nThis build "
                << (pairwise::mpi_compiled() ? "has" : "does not have") << " MPI.\n";
    }
    return 0;
  }
  GW_CHECK(flags.unmatched().empty(),
           "unexpected argument '" << flags.unmatched().front()
                                   << "'; usage: gwalign pairwise COLLECTION -o OUT.h5");
  GW_CHECK(flags.count("collection"), "give the collection: gwalign pairwise COLLECTION -o OUT.h5");
  GW_CHECK(flags.count("output"), "give the output file with -o OUT.h5");
  pairwise::RunOptions options = run_options_from_flags(flags, defaults);
  const bool quiet = flags.count("quiet") > 0;
  // The report's directory is checked before any work (io::AtomicTextFile creates its temporary).
  std::optional<io::AtomicTextFile> report;
  if (root && flags.count("json")) report.emplace(flags["json"].as<std::string>());

  const std::string path = flags["collection"].as<std::string>();
  const pairwise::Collection collection = pairwise::read_collection(path);
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (!quiet && root) options.progress = progress_printer(tty);
  const pairwise::RunSummary summary = pairwise::run_pairwise(collection, options, mpi.transport());
  if (!root) return 0;
  if (!quiet) print_summary_line(summary, tty);
  if (report) report->commit(report_json(summary, path, options.output, options));
  std::cout << "wrote " << options.output << ": " << summary.spaces << " x " << summary.spaces
            << " GW distances" << (summary.complete ? " (complete)" : " (incomplete)") << "\n";
  return 0;
}

int run_pairwise_command(int argc, char** argv) {
  pairwise::MpiSession mpi(nullptr, nullptr);
  const bool root = mpi.rank() == 0;
  try {
    return run_pairwise_on_rank(argc, argv, mpi);
  } catch (const Error& e) {
    if (mpi.size() > 1) {
      std::cerr << "gwalign: error (rank " << mpi.rank() << "): " << e.what() << "\n";
      mpi.abort_all(exit_code(e.code()));
    }
    throw;
  } catch (const cxxopts::exceptions::exception& e) {
    if (mpi.size() > 1 && !root) return 64;
    throw;
  }
}

}  // namespace

GW_CLI_COMMAND("pairwise",
               "GW distances between every pair of spaces of a collection (OpenMP, MPI)",
               run_pairwise_command);

}  // namespace gw::cli
