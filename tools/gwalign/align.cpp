// `gwalign align SOURCE TARGET -o OUT.h5`: reads two geometries from HDF5 / h5ad files, maps the
// flags onto gw::Options (cli_util.h), runs gw::solve and writes the plan, the matching and the
// report. A thin client: the algorithm is the library's; this file reads, validates and writes.
#include <cxxopts.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "align_embedding.h"
#include "align_inputs.h"
#include "cli_util.h"
#include "command.h"
#include "core/config.h"
#include "core/context.h"
#include "core/error.h"
#include "core/json.h"
#include "io/h5ad.h"
#include "io/hdf5.h"
#include "solver/metrics.h"
#include "solver/report.h"
#include "solver/solve.h"

namespace gw::cli {
namespace {

constexpr const char* kAlignExamples = R"(Examples:
  # the bundled spiral -> swiss roll pair (geometry /points, ground truth /angles)
  gwalign align data/spiral_400.h5 data/swissroll_500.h5 -o plan.h5 --report run.json
  # two AnnData files by their PCA embeddings; results added to a copy of the source
  gwalign align a.h5ad b.h5ad --rep obsm:X_pca --write-into-source -o a_aligned.h5ad
  # scanpy kNN distance graphs (obsp CSR, weights = lengths), on-the-fly Dijkstra
  gwalign align a.h5ad b.h5ad --rep obsp:distances --mode dijkstra -o plan.h5
  # precomputed distance matrices from plain HDF5 files
  gwalign align x.h5 y.h5 --source-rep /dist --target-rep /dist --as-distances -o plan.h5
  # fused GW: spatial geometry plus expression features
  gwalign align a.h5ad b.h5ad --rep obsm:X_spatial --features obsm:X_pca --fused-weight 0.3 -o p.h5
  # both sides embedded in 10 shared dimensions (the target's PCA frame)
  gwalign align data/spiral_400.h5 data/swissroll_500.h5 -o plan.h5 --joint-embedding 10

Geometry specs (--rep, --source-rep, --target-rep; `gwalign info FILE` lists a file's):
  X, obsm:KEY, layers:KEY    n x d points -> kNN graph (--knn) -> shortest paths
  obsp:KEY                   a CSR graph (weights are lengths) -> shortest paths
  /path, FILE:/path          a dataset of the file (or of another file), read as points
  with --as-distances        the spec is an n x n distance matrix (dense, or CSR: missing =
                             unreachable), used as given
  default                    /points if the file has it, else the only obsm entry

Output (-o OUT.h5): /plan (CSR group data/indices/indptr + shape, top-k per row; or a dense
n x k dataset with --dense), /matching (int32, argmax of each plan row), /report (the JSON
report) and the report's scalars as attributes of /. With --write-into-source OUT is a copy
of SOURCE (h5ad) with obsm/gw_plan, obsm/gw_match and uns/gw added; anndata reads it.
--joint-embedding DIM adds /joint_embedding/source (n x DIM) and /joint_embedding/target
(k x DIM), float64; with --write-into-source the source's rows go to obsm/X_gw_joint.
Nothing is written at OUT or the --report file unless the whole run succeeds. Neither may be an
input file (SOURCE, TARGET, the FILE of a FILE:/path spec), except --write-into-source -o SOURCE.

Exit status: 0 ok, 64 usage, 65 bad data (also: the solve became non-finite; nothing is written),
66 missing input, 69 not compiled (e.g. --backend cuda without CUDA), 73 cannot create output,
74 I/O error.
)";

io::CsrArray<double> plan_csr(const Result& r) {
  io::CsrArray<double> csr;
  csr.rows = r.plan_topk.rows;
  csr.cols = r.plan_topk.cols;
  csr.indptr = r.plan_topk.row_offsets;
  csr.indices = r.plan_topk.col_indices;
  csr.data = r.plan_topk.values;
  return csr;
}

// The dense n x k plan is written only when the dense path ran with --dense; the sparse path
// always returns CSR (at most --support-size entries per row).
bool dense_plan(const Result& r) {
  return r.support != Support::kSparse && r.options.plan_format == PlanFormat::kDense;
}

io::Array<std::int32_t> matching_array(const Result& r) {
  io::Array<std::int32_t> a;
  a.data.assign(r.matching.begin(), r.matching.end());
  a.shape = {static_cast<std::int64_t>(r.matching.size())};
  return a;
}

void write_plain(io::Writer& out, const Result& r, const RunInfo& run) {
  if (dense_plan(r)) {
    const std::int64_t shape[] = {r.n, r.k};
    out.write_array<double>("/plan", std::span<const double>(r.plan), shape);
  } else {
    out.write_csr<double>("/plan", plan_csr(r));
    // The anndata encoding, so anndata.experimental.read_elem and h5ad tools recognize the group.
    out.set_attribute("/plan", "encoding-type", "csr_matrix");
    out.set_attribute("/plan", "encoding-version", "0.1.0");
  }
  out.write_array<std::int32_t>("/matching", matching_array(r));
  out.write_string("/report", report_json(r, run));
  for (const auto& [name, value] : report_scalars(r, run)) {
    std::visit([&, &name = name](const auto& v) { out.set_attribute("/", name, v); }, value);
  }
}

void write_into_source(io::H5adWriter& out, const Result& r, const RunInfo& run) {
  if (dense_plan(r)) {
    io::Array<double> plan;
    plan.data = r.plan;
    plan.shape = {r.n, r.k};
    out.put_obsm("gw_plan", plan);
  } else {
    out.put_obsm("gw_plan", plan_csr(r));
  }
  out.put_obsm("gw_match", matching_array(r));
  for (const auto& [name, value] : report_scalars(r, run)) {
    std::visit([&, &name = name](const auto& v) { out.put_uns("gw/" + name, v); }, value);
  }
  out.put_uns("gw/report_json", report_json(r, run));
}

int run_align(int argc, char** argv) {
  cxxopts::Options cli(argv[0],
                       "Align SOURCE to TARGET by sampled Gromov-Wasserstein optimal transport "
                       "and write the plan, the matching and a report.");
  // clang-format off
  cli.add_options()
      ("source", "SOURCE .h5ad / .h5", cxxopts::value<std::string>())
      ("target", "TARGET .h5ad / .h5", cxxopts::value<std::string>())
      ("o,output", "output file OUT.h5 (with --write-into-source: OUT.h5ad)",
       cxxopts::value<std::string>())
      ("report", "also write the full result as JSON to FILE ('-': stdout)",
       cxxopts::value<std::string>())
      ("write-into-source", "OUT is a copy of SOURCE (h5ad) with obsm/gw_plan, obsm/gw_match, "
                            "uns/gw added")
      ("quiet", "no progress display")
      ("log-every", "when stderr is not a terminal, a progress line every N iterations (0: none)",
       cxxopts::value<int>()->default_value("0"))
      ("h,help", "print this help");
  cli.add_options("Inputs")
      ("rep", "geometry spec of both sides (see below)", cxxopts::value<std::string>())
      ("source-rep", "geometry spec of SOURCE (overrides --rep)", cxxopts::value<std::string>())
      ("target-rep", "geometry spec of TARGET (overrides --rep)", cxxopts::value<std::string>())
      ("as-distances", "the geometry specs are n x n distance matrices (dense or CSR)")
      ("source-weights", "source marginal: obs:COL, /path or FILE:/path (default uniform)",
       cxxopts::value<std::string>())
      ("target-weights", "target marginal: obs:COL, /path or FILE:/path (default uniform)",
       cxxopts::value<std::string>())
      ("truth", "ground truth per node on both sides for |rho| (obs:COL or /path; default: "
                "/angles or obs:angle when both files have it)", cxxopts::value<std::string>())
      ("features", "feature matrix of both sides for --fused-weight, e.g. obsm:X_pca; cost = "
                   "squared Euclidean distance / its max", cxxopts::value<std::string>())
      ("source-features", "source feature matrix (overrides --features)",
       cxxopts::value<std::string>())
      ("target-features", "target feature matrix (overrides --features)",
       cxxopts::value<std::string>())
      ("feature-cost", "an n x k feature cost for --fused-weight: /path (in SOURCE) or "
                       "FILE:/path, used as given", cxxopts::value<std::string>());
  // clang-format on
  add_solver_options(cli);
  add_embedding_options(cli);
  cli.parse_positional({"source", "target"});
  cli.positional_help("SOURCE TARGET -o OUT.h5");
  cli.set_width(100);
  const auto flags = cli.parse(argc, argv);
  if (flags.count("help")) {
    // Every group, in the order they were added: a fixed list here once left two groups
    // ("Solver choice and exact gradient", "Plan support and memory") out of --help.
    std::cout << cli.help(cli.groups()) << "\n" << kAlignExamples;
    return 0;
  }
  GW_CHECK(flags.unmatched().empty(),
           "unexpected argument '" << flags.unmatched().front()
                                   << "'; usage: gwalign align SOURCE TARGET -o OUT.h5 [options]");
  GW_CHECK(
      flags.count("source") && flags.count("target"),
      "give SOURCE and TARGET files; usage: gwalign align SOURCE TARGET -o OUT.h5 (see --help)");
  GW_CHECK(flags.count("output"), "give the output file with -o OUT.h5 (see --help)");

  Options options = solver_options_from_flags(flags);
  const std::optional<EmbeddingRequest> embedding = embedding_request_from_flags(flags);
  // An unavailable backend fails here, before any file is read or created.
  require_backend(options.backend, options.device);
  // SIGINT / SIGTERM stop the solve at its next progress check; nothing is written (cli_util.h).
  const InterruptScope interrupts;
  ProgressDisplay progress(flags.count("quiet") > 0, flags["log-every"].as<int>());
  options.progress = progress.callback();

  RunInfo run;
  run.source = flags["source"].as<std::string>();
  run.target = flags["target"].as<std::string>();
  run.output = flags["output"].as<std::string>();
  const bool into_source = flags.count("write-into-source") > 0;
  auto flag_or = [&](const char* name, const std::string& fallback) {
    return flags.count(name) ? flags[name].as<std::string>() : fallback;
  };
  // Every file the run reads, so that no output replaces one: SOURCE and TARGET, and the files
  // that FILE:/path specs name (a matrix, weights or features kept beside the data).
  std::vector<InputFile> inputs = {{run.source, "SOURCE"}, {run.target, "TARGET"}};
  auto add_spec_file = [&](const char* flag, const std::string& side_file) {
    if (!flags.count(flag)) return;
    const std::string file = spec_file(side_file, flags[flag].as<std::string>());
    if (file != side_file) inputs.push_back({file, std::string("--") + flag});
  };
  for (const char* flag : {"rep", "truth", "features"}) {
    add_spec_file(flag, run.source);
    add_spec_file(flag, run.target);
  }
  for (const char* flag : {"source-rep", "source-weights", "source-features", "feature-cost"}) {
    add_spec_file(flag, run.source);
  }
  for (const char* flag : {"target-rep", "target-weights", "target-features"}) {
    add_spec_file(flag, run.target);
  }
  // --write-into-source -o SOURCE updates SOURCE in place (through a temporary copy): the one
  // output allowed to be an input.
  std::vector<InputFile> guarded = inputs;
  if (into_source && same_file(run.output, run.source)) {
    std::erase_if(guarded,
                  [&](const InputFile& input) { return same_file(input.path, run.source); });
  }
  check_output_path(run.output,
                    "-o",
                    guarded,
                    " (or --write-into-source -o SOURCE to add the results to SOURCE itself)");
  const bool has_report = flags.count("report") > 0;
  const std::string report_path = flag_or("report", "");
  if (has_report && report_path != "-") {
    check_output_path(report_path, "--report", inputs);
    // Two outputs at one path: the later rename would replace the other output.
    GW_CHECK(!same_file(report_path, run.output),
             "--report '" << report_path << "' is also the output -o '" << run.output
                          << "'; give the report its own file, e.g. --report run.json");
  }
  const std::string rep = flag_or("rep", "");
  const std::string truth = flag_or("truth", "");
  const std::string features = flag_or("features", "");
  const std::string source_features = flag_or("source-features", features);
  const std::string target_features = flag_or("target-features", features);
  const std::string feature_cost = flag_or("feature-cost", "");
  const bool has_features = !source_features.empty() || !target_features.empty();
  GW_CHECK(source_features.empty() == target_features.empty(),
           "give features for both sides (--features, or --source-features and "
           "--target-features)");
  GW_CHECK(!(has_features && !feature_cost.empty()),
           "give either --features or --feature-cost, not both");
  if (options.fused_weight > 0.0) {
    GW_CHECK(has_features || !feature_cost.empty(),
             "--fused-weight " << options.fused_weight
                               << " needs a feature cost: --features obsm:KEY (both sides) or "
                                  "--feature-cost FILE:/path (n x k)");
  } else {
    GW_CHECK(!has_features && feature_cost.empty(),
             "--features / --feature-cost are used only with --fused-weight > 0; set "
             "--fused-weight in (0, 1]");
  }

  // Inputs. With fused_weight = 1 the problem is plain OT on the feature cost: no geometry.
  progress.status("reading inputs");
  const bool need_geometry = options.fused_weight < 1.0;
  Problem problem;
  Side source, target;
  if (need_geometry) {
    SideRequest request{"source",
                        run.source,
                        flag_or("source-rep", rep),
                        flags.count("as-distances") > 0,
                        flag_or("source-weights", ""),
                        truth,
                        options.threads};
    source = load_side(request);
    request.role = "target";
    request.file = run.target;
    request.rep = flag_or("target-rep", rep);
    request.weights = flag_or("target-weights", "");
    target = load_side(request);
    problem.source = std::move(source.geometry);
    problem.target = std::move(target.geometry);
  }
  std::optional<Index> n, k;
  if (need_geometry) {
    n = source.n;
    k = target.n;
  }
  if (has_features) {
    problem.feature_cost =
        feature_cost_from_features(run.source, source_features, run.target, target_features, n, k);
  } else if (!feature_cost.empty()) {
    GW_CHECK(need_geometry,
             "--fused-weight 1 with --feature-cost: give --features instead (the node counts "
             "come from them), or a --fused-weight below 1");
    problem.feature_cost = load_feature_cost(run.source, feature_cost, *n, *k);
  }
  if (!need_geometry) {
    source.n = problem.feature_cost->rows;
    target.n = problem.feature_cost->cols;
    problem.source = Geometry::nodes_only(source.n);
    problem.target = Geometry::nodes_only(target.n);
    source.description = "features only";
    target.description = "features only";
    auto side_vectors = [&](Side& side, const std::string& file, const char* role) {
      const std::string weights = flag_or((std::string(role) + "-weights").c_str(), "");
      if (!weights.empty()) {
        side.weights =
            read_node_vector(file, weights, side.n, "--" + std::string(role) + "-weights");
      }
      side.truth_spec = truth.empty() ? default_truth(file) : truth;
      if (!side.truth_spec.empty()) {
        side.truth = read_node_vector(file, side.truth_spec, side.n, "ground truth");
      }
    };
    side_vectors(source, run.source, "source");
    side_vectors(target, run.target, "target");
  }
  problem.source_weights = source.weights;
  problem.target_weights = target.weights;
  check_geometry_flags(flags, problem.source.kind(), problem.target.kind());
  if (embedding) check_embedding_geometry(problem);
  run.source_rep = need_geometry ? source.rep : "";
  run.target_rep = need_geometry ? target.rep : "";
  run.source_description = source.description;
  run.target_description = target.description;

  // Outputs are opened before solving so that an unwritable destination fails in a second, not
  // after the solve; each writes to a temporary file that only commit() renames into place.
  std::optional<io::Writer> plain;
  std::optional<io::H5adWriter> h5ad;
  if (into_source) {
    h5ad.emplace(io::H5adWriter::copy_of(run.source, run.output));
    GW_CHECK_CODE(h5ad->n_obs() == source.n,
                  ErrorCode::kBadData,
                  "--write-into-source: '" << run.source << "' has n_obs = " << h5ad->n_obs()
                                           << " but the source geometry '" << run.source_rep
                                           << "' has " << source.n
                                           << " nodes; use a geometry with one row per cell");
  } else {
    plain.emplace(run.output);
  }
  std::optional<AtomicTextFile> report;
  if (has_report) report.emplace(report_path);

  progress.status("solving (kNN graphs and distances first)");
  const Result result = solve(problem, options);
  progress.finish();
  if (options.multiscale && !result.multiscale_used) {
    // Not an error: the run is the same as without the flag, and scripts over many sizes pass it.
    std::cerr << "gwalign: warning: --multiscale had no effect: a coarse level needs both sides "
                 "larger than 2 x --multiscale-size = "
              << 2 * options.multiscale_size << " nodes (n = " << result.n << ", k = " << result.k
              << ")\n";
  }

  if (!source.truth.empty() && !target.truth.empty()) {
    std::vector<double> matched(result.matching.size());
    for (std::size_t i = 0; i < matched.size(); ++i) matched[i] = target.truth[result.matching[i]];
    run.abs_rho = std::abs(spearman(source.truth, matched));
    run.truth = source.truth_spec + " vs " + target.truth_spec;
  }

  throw_if_interrupted();  // a cancelled solve is not a result: write nothing, exit 128 + signal

  // A non-finite solve has no plan worth keeping: nothing is written (the output temporaries are
  // removed as the error unwinds) and the exit status says so.
  GW_CHECK_CODE(result.termination != Termination::kNonFinite,
                ErrorCode::kBadData,
                "the solve became non-finite (" << result.message
                                                << "); nothing was written; try a larger --eps, "
                                                   "--precision f64, or check the inputs' scale");
  std::optional<JointEmbeddingResult> joint;
  if (embedding) joint = embed_sides(*embedding, problem, result, options.knn);
  if (h5ad) {
    write_into_source(*h5ad, result, run);
    if (joint) {
      const EmbeddingMatrix& z = joint->dataset("source").embedding;
      io::Array<double> a;
      a.data = z.values;
      a.shape = {z.rows, z.cols};
      h5ad->put_obsm("X_gw_joint", a);
    }
  } else {
    write_plain(*plain, result, run);
    if (joint) {
      for (const char* side : {"source", "target"}) {
        const EmbeddingMatrix& z = joint->dataset(side).embedding;
        const std::int64_t shape[] = {z.rows, z.cols};
        plain->write_array<double>(
            std::string("/joint_embedding/") + side, std::span<const double>(z.values), shape);
      }
    }
  }
  // Every output is written (the report also fsynced, or printed for "-") before the first rename,
  // so a failed write (a full disk, a closed stdout) leaves OUT and the report as they were.
  // Writer::commit() closes, fsyncs and renames in one step, so OUT's rename precedes the
  // report's: a failure between them (the report's rename itself failing, e.g. its directory made
  // read-only during the run) would leave OUT new and the report old; write() has already ruled
  // out the failure a user can cause there (a directory made at the report's path).
  if (report) report->write(report_json(result, run));
  throw_if_interrupted();
  if (h5ad) {
    h5ad->commit();
  } else {
    plain->commit();
  }
  if (report) report->commit();

  auto print_side = [](const char* role,
                       const std::string& file,
                       const std::string& rep,
                       const std::string& description) {
    std::printf("%s  %s%s%s: %s\n",
                role,
                file.c_str(),
                rep.empty() ? "" : " ",
                rep.c_str(),
                description.c_str());
  };
  print_side("source", run.source, run.source_rep, source.description);
  print_side("target", run.target, run.target_rep, target.description);
  std::printf("%s\n", result.brief_report().c_str());
  if (run.abs_rho) {
    std::printf("|rho| = %.4f  (Spearman, ground truth %s)\n", *run.abs_rho, run.truth.c_str());
  }
  std::printf("iterations %d, seconds %.3f, termination: %s\n",
              result.iterations,
              result.total_seconds,
              result.message.c_str());
  std::printf("support %s (%lld entries), memory estimate %.1f MiB of a %.1f MiB budget\n",
              std::string(to_string(result.support)).c_str(),
              static_cast<long long>(result.support_nnz),
              result.estimated_peak_bytes / 1048576.0,
              result.memory_limit_bytes / 1048576.0);
  if (!std::isnan(result.row_marginal_error)) {
    std::printf("marginal errors (L1): rows %.3g, columns %.3g\n",
                result.row_marginal_error,
                result.column_marginal_error);
  }
  const std::string plan_kind =
      dense_plan(result) ? std::string("dense")
      : result.support == Support::kSparse
          ? "sparse CSR (<= " + std::to_string(result.options.support_size) + " per row)"
          : "top-" + std::to_string(result.options.top_k) + " CSR";
  std::printf("wrote %s (%s plan, matching, report)%s%s\n",
              run.output.c_str(),
              plan_kind.c_str(),
              report ? ", report " : "",
              report ? report->path().c_str() : "");
  if (joint) {
    std::printf("joint embedding: %d dimensions, anchor %s (%d principal components), lambda %g\n",
                joint->dimension,
                embedding->anchor_is_source ? "source" : "target",
                joint->anchor_components,
                embedding->lambda);
  }
  if (!result.ok()) {
    std::fprintf(stderr,
                 "gwalign: warning: the solve ended with '%s': %s\n",
                 std::string(to_string(result.termination)).c_str(),
                 result.message.c_str());
  }
  return 0;
}

}  // namespace

GW_CLI_COMMAND("align",
               "align SOURCE to TARGET (h5ad / HDF5) and write the plan, matching and report",
               run_align);

}  // namespace gw::cli
