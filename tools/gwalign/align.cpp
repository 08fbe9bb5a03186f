// `gwalign align SOURCE TARGET -o OUT.h5`: reads two geometries from HDF5 / h5ad files, maps the
// flags onto gw::Options (solver_flags.h), runs gw::solve and writes the plan, the matching and
// the report (or, with --explain, prints the strategy gw::solve would run and stops). A thin
// client: the algorithm and every choice of how to solve are the library's; this file reads,
// validates and writes.
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
#include "io/atomic_text_file.h"
#include "progress_display.h"
#include "interrupt.h"
#include "solver_flags.h"
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
  default                    /points if the file has it, else the only obsm entry, else (no
                             obsm entry) the only obsp entry if it is a CSR graph

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
  return r.strategy.support != Support::kSparse && r.options.plan_format == PlanFormat::kDense;
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

// The flags of `gwalign align` besides the solver's (solver_flags.h) and the joint embedding's.
void add_align_options(cxxopts::Options& cli) {
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
      ("explain", "read the inputs, print how they would be solved (the strategy: support, "
                  "solver, backend, precision, each with its reason, and every candidate's "
                  "predicted time and memory) and exit without solving or writing; -o is not "
                  "needed")
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
}

std::string flag_or(const cxxopts::ParseResult& flags, const char* name, const std::string& fallback) {
  return flags.count(name) ? flags[name].as<std::string>() : fallback;
}

// Every file the run reads (SOURCE, TARGET and the files that FILE:/path specs name), so that no
// output replaces one; then the output paths checked against them (nothing is read yet).
std::vector<InputFile> check_output_paths(const cxxopts::ParseResult& flags, const RunInfo& run) {
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
  if (flags.count("explain")) return inputs;  // nothing will be written
  // --write-into-source -o SOURCE updates SOURCE in place (through a temporary copy): the one
  // output allowed to be an input.
  std::vector<InputFile> guarded = inputs;
  if (flags.count("write-into-source") && io::same_file(run.output, run.source)) {
    std::erase_if(guarded,
                  [&](const InputFile& input) { return io::same_file(input.path, run.source); });
  }
  check_output_path(run.output,
                    "-o",
                    guarded,
                    " (or --write-into-source -o SOURCE to add the results to SOURCE itself)");
  const std::string report_path = flag_or(flags, "report", "");
  if (flags.count("report") && report_path != "-") {
    check_output_path(report_path, "--report", inputs);
    // Two outputs at one path: the later rename would replace the other output.
    GW_CHECK(!io::same_file(report_path, run.output),
             "--report '" << report_path << "' is also the output -o '" << run.output
                          << "'; give the report its own file, e.g. --report run.json");
  }
  return inputs;
}

// What the run reads: both sides (or node counts and vectors only, for plain OT on features) and
// the feature cost, as the problem gw::solve takes.
struct AlignInputs {
  Problem problem;
  Side source, target;
};

// The node vectors of a side without geometry (--fused-weight 1): weights and ground truth.
void load_side_vectors(const cxxopts::ParseResult& flags,
                       Side& side,
                       const std::string& file,
                       const char* role,
                       const std::string& truth) {
  const std::string weights = flag_or(flags, (std::string(role) + "-weights").c_str(), "");
  if (!weights.empty()) {
    side.weights = read_node_vector(file, weights, side.n, "--" + std::string(role) + "-weights");
  }
  side.truth_spec = truth.empty() ? default_truth(file) : truth;
  if (!side.truth_spec.empty()) {
    side.truth = read_node_vector(file, side.truth_spec, side.n, "ground truth");
  }
}

AlignInputs load_inputs(const cxxopts::ParseResult& flags, const Options& options, RunInfo& run) {
  const std::string rep = flag_or(flags, "rep", "");
  const std::string truth = flag_or(flags, "truth", "");
  const std::string features = flag_or(flags, "features", "");
  const std::string source_features = flag_or(flags, "source-features", features);
  const std::string target_features = flag_or(flags, "target-features", features);
  const std::string feature_cost = flag_or(flags, "feature-cost", "");
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
  // With fused_weight = 1 the problem is plain OT on the feature cost: no geometry.
  const bool need_geometry = options.fused_weight < 1.0;
  AlignInputs in;
  if (need_geometry) {
    SideRequest request{"source",
                        run.source,
                        flag_or(flags, "source-rep", rep),
                        flags.count("as-distances") > 0,
                        flag_or(flags, "source-weights", ""),
                        truth,
                        options.threads};
    in.source = load_side(request);
    request.role = "target";
    request.file = run.target;
    request.rep = flag_or(flags, "target-rep", rep);
    request.weights = flag_or(flags, "target-weights", "");
    in.target = load_side(request);
    in.problem.source = std::move(in.source.geometry);
    in.problem.target = std::move(in.target.geometry);
  }
  if (has_features) {
    std::optional<Index> n, k;
    if (need_geometry) n = in.source.n, k = in.target.n;
    FeaturePair pair =
        load_features(run.source, source_features, run.target, target_features, n, k);
    in.problem.source_features = std::move(pair.source);
    in.problem.target_features = std::move(pair.target);
  } else if (!feature_cost.empty()) {
    GW_CHECK(need_geometry,
             "--fused-weight 1 with --feature-cost: give --features instead (the node counts "
             "come from them), or a --fused-weight below 1");
    in.problem.feature_cost = load_feature_cost(run.source, feature_cost, in.source.n, in.target.n);
  }
  if (!need_geometry) {
    in.source.n = has_features ? in.problem.source_features->rows : in.problem.feature_cost->rows;
    in.target.n = has_features ? in.problem.target_features->rows : in.problem.feature_cost->cols;
    in.problem.source = Geometry::nodes_only(in.source.n);
    in.problem.target = Geometry::nodes_only(in.target.n);
    in.source.description = in.target.description = "features only";
    load_side_vectors(flags, in.source, run.source, "source", truth);
    load_side_vectors(flags, in.target, run.target, "target", truth);
  }
  in.problem.source_weights = in.source.weights;
  in.problem.target_weights = in.target.weights;
  check_geometry_flags(flags, in.problem.source.kind(), in.problem.target.kind());
  run.source_rep = need_geometry ? in.source.rep : "";
  run.target_rep = need_geometry ? in.target.rep : "";
  run.source_description = in.source.description;
  run.target_description = in.target.description;
  return in;
}

// The outputs, opened before solving so that an unwritable destination fails in a second, not
// after the solve; each writes to a temporary file that only commit() renames into place.
struct AlignOutputs {
  std::optional<io::Writer> plain;
  std::optional<io::H5adWriter> h5ad;
  std::optional<io::AtomicTextFile> report;
};

void open_outputs(const cxxopts::ParseResult& flags,
                  const RunInfo& run,
                  Index source_n,
                  AlignOutputs& out) {
  if (flags.count("write-into-source")) {
    out.h5ad.emplace(io::H5adWriter::copy_of(run.source, run.output));
    GW_CHECK_CODE(out.h5ad->n_obs() == source_n,
                  ErrorCode::kBadData,
                  "--write-into-source: '" << run.source << "' has n_obs = " << out.h5ad->n_obs()
                                           << " but the source geometry '" << run.source_rep
                                           << "' has " << source_n
                                           << " nodes; use a geometry with one row per cell");
  } else {
    out.plain.emplace(run.output);
  }
  if (flags.count("report")) out.report.emplace(flags["report"].as<std::string>());
}

// Every output is written (the report also fsynced, or printed for "-") before the first rename,
// so a failed write (a full disk, a closed stdout) leaves OUT and the report as they were.
// Writer::commit() closes, fsyncs and renames in one step, so OUT's rename precedes the report's:
// a failure between them (the report's rename itself failing, e.g. its directory made read-only
// during the run) would leave OUT new and the report old; write() has already ruled out the
// failure a user can cause there (a directory made at the report's path).
void write_outputs(AlignOutputs& out,
                   const Result& result,
                   const RunInfo& run,
                   const std::optional<JointEmbeddingResult>& joint) {
  if (out.h5ad) {
    write_into_source(*out.h5ad, result, run);
    if (joint) {
      const EmbeddingMatrix& z = joint->dataset("source").embedding;
      io::Array<double> a;
      a.data = z.values;
      a.shape = {z.rows, z.cols};
      out.h5ad->put_obsm("X_gw_joint", a);
    }
  } else {
    write_plain(*out.plain, result, run);
    if (joint) {
      for (const char* side : {"source", "target"}) {
        const EmbeddingMatrix& z = joint->dataset(side).embedding;
        const std::int64_t shape[] = {z.rows, z.cols};
        out.plain->write_array<double>(
            std::string("/joint_embedding/") + side, std::span<const double>(z.values), shape);
      }
    }
  }
  if (out.report) out.report->write(report_json(result, run));
  throw_if_interrupted();
  if (out.h5ad) {
    out.h5ad->commit();
  } else {
    out.plain->commit();
  }
  if (out.report) out.report->commit();
}

void print_summary(const Result& result,
                   const RunInfo& run,
                   const AlignInputs& in,
                   const AlignOutputs& out,
                   const std::optional<JointEmbeddingResult>& joint,
                   const std::optional<EmbeddingRequest>& embedding) {
  auto print_side = [&](const char* role, const std::string& file, const std::string& rep,
                        const std::string& description) {
    std::printf("%s  %s%s%s: %s\n", role, file.c_str(), rep.empty() ? "" : " ", rep.c_str(),
                description.c_str());
  };
  print_side("source", run.source, run.source_rep, in.source.description);
  print_side("target", run.target, run.target_rep, in.target.description);
  std::printf("%s\n", result.brief_report().c_str());
  if (run.abs_rho) {
    std::printf("|rho| = %.4f  (Spearman, ground truth %s)\n", *run.abs_rho, run.truth.c_str());
  }
  std::printf("iterations %d, seconds %.3f, termination: %s\n",
              result.iterations,
              result.total_seconds,
              result.message.c_str());
  std::printf("solver %s, support %s (%lld entries), memory estimate %.1f MiB of a %.1f MiB budget"
              " (--explain says why)\n",
              std::string(to_string(result.strategy.solver)).c_str(),
              std::string(to_string(result.strategy.support)).c_str(),
              static_cast<long long>(result.support_nnz),
              result.strategy.estimated_peak_bytes / 1048576.0,
              result.strategy.memory_limit_bytes / 1048576.0);
  if (!std::isnan(result.row_marginal_error)) {
    std::printf("marginal errors (L1): rows %.3g, columns %.3g\n",
                result.row_marginal_error,
                result.column_marginal_error);
  }
  const std::string plan_kind =
      dense_plan(result) ? std::string("dense")
      : result.strategy.support == Support::kSparse
          ? "sparse CSR (<= " + std::to_string(result.options.support_size) + " per row)"
          : "top-" + std::to_string(result.options.top_k) + " CSR";
  std::printf("wrote %s (%s plan, matching, report)%s%s\n",
              run.output.c_str(),
              plan_kind.c_str(),
              out.report ? ", report " : "",
              out.report ? out.report->path().c_str() : "");
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
}

int run_align(int argc, char** argv) {
  cxxopts::Options cli(argv[0],
                       "Align SOURCE to TARGET by Gromov-Wasserstein optimal transport and write "
                       "the plan, the matching and a report.");
  add_align_options(cli);
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
  const bool explain = flags.count("explain") > 0;
  GW_CHECK(explain || flags.count("output"), "give the output file with -o OUT.h5 (see --help)");

  Options options = solver_options_from_flags(flags);
  const std::optional<EmbeddingRequest> embedding = embedding_request_from_flags(flags);
  // An unavailable backend fails here, before any file is read or created.
  if (!explain) require_backend(options.backend, options.device);
  // SIGINT / SIGTERM stop the solve at its next progress check; nothing is written (interrupt.h).
  const InterruptScope interrupts;
  ProgressDisplay progress(flags.count("quiet") > 0 || explain, flags["log-every"].as<int>());
  options.progress = progress.callback();

  RunInfo run;
  run.source = flags["source"].as<std::string>();
  run.target = flags["target"].as<std::string>();
  run.output = flag_or(flags, "output", "");
  check_output_paths(flags, run);
  progress.status("reading inputs");
  AlignInputs in = load_inputs(flags, options, run);
  if (embedding) check_embedding_geometry(in.problem);
  if (explain) {
    std::printf("%s", choose_strategy(in.problem, options).explain().c_str());
    return 0;
  }
  AlignOutputs out;
  open_outputs(flags, run, in.source.n, out);

  progress.status("solving (kNN graphs and distances first)");
  const Result result = solve(in.problem, options);
  progress.finish();
  if (options.multiscale && !result.multiscale_used) {
    // Not an error: the run is the same as without the flag, and scripts over many sizes pass it.
    std::cerr << "gwalign: warning: --multiscale had no effect: a coarse level needs both sides "
                 "larger than 2 x --multiscale-size = "
              << 2 * options.multiscale_size << " nodes (n = " << result.n << ", k = " << result.k
              << ")\n";
  }
  if (!in.source.truth.empty() && !in.target.truth.empty()) {
    std::vector<double> matched(result.matching.size());
    for (std::size_t i = 0; i < matched.size(); ++i) matched[i] = in.target.truth[result.matching[i]];
    run.abs_rho = std::abs(spearman(in.source.truth, matched));
    run.truth = in.source.truth_spec + " vs " + in.target.truth_spec;
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
  if (embedding) joint = embed_sides(*embedding, in.problem, result, options.knn);
  write_outputs(out, result, run, joint);
  print_summary(result, run, in, out, joint, embedding);
  return 0;
}

}  // namespace

GW_CLI_COMMAND("align",
               "align SOURCE to TARGET (h5ad / HDF5) and write the plan, matching and report",
               run_align);

}  // namespace gw::cli
