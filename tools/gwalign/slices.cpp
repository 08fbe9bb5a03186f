// `gwalign slices S1.h5ad S2.h5ad ... --out-dir DIR`: serial tissue sections aligned into one
// frame (spatial/slices.h), with annotations carried across (spatial/transfer.h). The command
// reads the sections, builds the expression features, calls spatial::align_sections and writes
// every output or none.
#include <cmath>
#include <cxxopts.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli_util.h"
#include "command.h"
#include "core/error.h"
#include "core/json.h"
#include "interrupt.h"
#include "io/atomic_text_file.h"
#include "io/h5ad.h"
#include "io/matrix_market.h"
#include "output_set.h"
#include "slices_io.h"
#include "solver_flags.h"

namespace gw::cli {
namespace {

constexpr const char* kSlicesHelp = R"(
Each section is an .h5ad file with the coordinates in obsm['spatial'] (--spatial-key) and counts
in X. For each pair (consecutive sections, or each section and --reference), fused GW aligns the
sections' in-plane geometries (kNN-graph distances of the coordinates: all pairs for small
sections, landmarks for large ones) with an expression cost on the genes all sections share
(log1p of normalized counts, a joint PCA; --expression cosine compares the PCA profiles by
angle). The plan registers the moving section onto the fixed one (weighted Procrustes: rotation
and translation, no reflection unless --allow-reflection); the first section (or the reference)
sets the frame and section s gets z = s x --z-spacing. --refine N rounds (default 0) then solve each
pair again with the registered coordinates beside the expression features and register again
(an ICP through the solver), which sharpens what GW leaves blurred along the layers.

Outputs in --out-dir (all or none):
  <name>.h5ad                a copy of each section with obsm['spatial_aligned'] (n x 3: x, y, z)
                             and, with --transfer, obs KEY_transferred (+ _confidence)
  plan_<a>_<b>.mtx           the plan of sections a (rows) and b (columns), Matrix Market
  report_<a>_<b>.json        fused loss, registration residual, overlap mass, timings, the solve

--overlap F moves only the fraction F of each section's mass (partial transport, PASTE2's s);
--overlap auto estimates F per pair from a balanced alignment (the fraction of cells within twice
the typical spacing of the other registered section). Partial transport runs on the dense plan.

--registration auto|plan|search: how each pair is registered. plan: the Procrustes fit of the
fused plan. search: a balanced fused plan (rough rotation), a balanced plan on the geometry alone
(the outline's rotation), then a search over positions within +-F x the fixed section's diameter
(--search-extent F, default 0.4) scored by agreement of the cells' neighbourhood expression (a
truncated cost: cells outside the overlap do not pull), and a trimmed ICP; both half turns of
the outline are searched; with a partial
overlap the plan is solved once more in the registered frame, so its mass stays on the overlap.
auto (default): search when --overlap is below 1 or auto, plan otherwise. A fused plan between
sections that share only part of their area maps window onto window: at 70% overlap its fit is
0.16-0.20 of the diameter off, the search's 0.025-0.07 (generated tissue, 2,000-3,000 cells).

Examples:
  gwalign slices a.h5ad b.h5ad --out-dir aligned/ --transfer celltype
  gwalign slices s0.h5ad s1.h5ad s2.h5ad --overlap 0.7 --reference 1 --out-dir stack/
)";

struct Section {
  std::string path;
  std::unique_ptr<io::H5adReader> file;
  std::string out_path;
};

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

std::string pair_report(const spatial::PairAlignment& p, const std::vector<Section>& s,
                        const std::string& plan_path, const std::vector<std::pair<std::string, Index>>& unreached) {
  JsonWriter json(true);
  json.begin_object();
  json.member("fixed", s[p.fixed].path).member("moving", s[p.moving].path);
  json.member("plan", plan_path);
  json.member("fused_weight", p.result.options.fused_weight);
  json.member("gw_loss", p.result.gw_loss);
  json.member("gw_loss_exact", p.result.gw_loss_exact);
  json.member("cost_estimate", p.result.gw_cost_estimate);
  json.member("registration_residual_rms", p.registration.rms_residual);
  json.member("registration_residual", p.registration.residual);
  json.member("rotation_degrees", p.registration.transform.angle() * 180.0 / 3.14159265358979323846);
  json.key("translation").begin_array();
  for (double t : p.registration.transform.translation) json.value(t);
  json.end_array();
  json.member("reflection", p.registration.transform.reflection);
  json.member("overlap", p.overlap);
  json.member("overlap_mass", p.overlap_mass);
  json.member("refinements", p.refinements);
  json.member("registration_method", p.searched ? "search" : "plan");
  if (p.searched) {
    json.member("search_candidates", p.search.candidates);
    json.member("search_icp_rounds", p.search.icp_rounds);
    json.member("search_matched_fraction", p.search.matched_fraction);
    json.member("search_score", p.search.score);
  }
  json.member("solve_seconds", p.solve_seconds);
  json.member("register_seconds", p.register_seconds);
  json.key("transfer_unreached").begin_object();
  for (const auto& [key, count] : unreached) json.member(key, static_cast<std::int64_t>(count));
  json.end_object();
  json.key("solve").raw(p.result.to_json(false));
  json.end_object();
  return json.str();
}

spatial::SlicesOptions slices_options(const cxxopts::ParseResult& flags, int sections) {
  spatial::SlicesOptions o;
  GW_CHECK(!flags.count("partial-mass"), "--partial-mass is set per pair by --overlap in gwalign slices");
  o.solver = solver_options_from_flags(flags);
  if (!flags.count("fused-weight")) o.solver.fused_weight = 0.9;  // PASTE's alpha = 0.1
  if (flags.count("overlap")) {
    const std::string text = flags["overlap"].as<std::string>();
    if (text == "auto") {
      o.estimate_overlap = true;
    } else {
      double f = 0.0;
      try {
        f = std::stod(text);
      } catch (const std::exception&) {
        GW_THROW(ErrorCode::kInvalidArgument, "--overlap must be a fraction in (0, 1] or auto, got '" << text << "'");
      }
      GW_CHECK(f > 0.0 && f <= 1.0, "--overlap must be a fraction in (0, 1] or auto, got " << text);
      o.overlap = f;
    }
  }
  if (flags.count("reference")) {
    o.reference = flags["reference"].as<int>();
    GW_CHECK(o.reference >= 0 && o.reference < sections,
             "--reference must be a section index in [0, " << sections << "), got " << o.reference);
  }
  o.z_spacing = flags["z-spacing"].as<double>();
  o.refine = flags["refine"].as<int>();
  GW_CHECK(o.refine >= 0, "--refine must be >= 0, got " << o.refine);
  // A section's in-plane distances: landmark distances on its kNN graph unless --mode says
  // otherwise (all-pairs shortest paths cost seconds at a few thousand cells and change nothing
  // here; the dispatcher would pick them up to auto_precomputed_max_nodes).
  if (!flags.count("mode")) o.solver.distance_mode = DistanceMode::kLandmark;
  o.registration.allow_reflection = flags.count("allow-reflection") > 0;
  const std::string mode = flags["registration"].as<std::string>();
  GW_CHECK(mode == "auto" || mode == "plan" || mode == "search",
           "--registration must be auto, plan or search, got '" << mode << "'");
  o.registration_mode = spatial::registration_mode_from_string(mode);
  GW_CHECK(o.registration_mode != spatial::RegistrationMode::kSearch || o.solver.fused_weight > 0.0,
           "--registration search needs the expression cost (--fused-weight > 0)");
  o.search_options.extent = flags["search-extent"].as<double>();
  GW_CHECK(std::isfinite(o.search_options.extent) && o.search_options.extent >= 0.0 && o.search_options.extent <= 2.0,
           "--search-extent must be a fraction of the diameter in [0, 2], got " << o.search_options.extent);
  return o;
}

// Reads every section's coordinates and expression, checking them before anything is solved.
std::vector<spatial::SectionData> read_sections(std::vector<Section>& sections, const cxxopts::ParseResult& flags,
                                                double fused_weight) {
  const std::string key = flags["spatial-key"].as<std::string>();
  std::vector<spatial::SectionData> data(sections.size());
  for (std::size_t s = 0; s < sections.size(); ++s) {
    const io::H5adReader& file = *sections[s].file;
    data[s].name = sections[s].path;
    data[s].coordinates = read_section_coordinates(file, key, &data[s].dimension);
    data[s].n = static_cast<Index>(file.n_obs());
    GW_CHECK_CODE(data[s].dimension == data[0].dimension, ErrorCode::kBadData,
                  "obsm['" << key << "'] in '" << sections[s].path << "' has " << data[s].dimension
                           << " columns but in '" << sections[0].path << "' " << data[0].dimension
                           << "; all sections need the same coordinate dimension");
    GW_CHECK_CODE(data[s].dimension == 2, ErrorCode::kBadData,
                  "obsm['" << key << "'] in '" << sections[s].path << "' has " << data[s].dimension
                           << " columns; sections are aligned by their 2-D in-plane coordinates");
  }
  GW_CHECK(fused_weight > 0.0 || !flags.count("features"),
           "--features sets the expression cost, which --fused-weight 0 leaves out; drop one of them");
  if (fused_weight <= 0.0) return data;
  std::vector<const io::H5adReader*> files;
  for (const Section& s : sections) files.push_back(s.file.get());
  // --features obsm:KEY: every section's obsm[KEY]; otherwise the joint PCA of the shared genes.
  std::vector<DenseMatrix<double>> features =
      flags.count("features") ? read_feature_representation(files, flags["features"].as<std::string>(), flags)
                              : shared_gene_features(files, flags, " (or give --fused-weight 0)");
  for (std::size_t s = 0; s < sections.size(); ++s) data[s].features = std::move(features[s]);
  return data;
}

int run_slices(int argc, char** argv) {
  cxxopts::Options cli(argv[0], "Align serial tissue sections into one frame and carry annotations across.");
  // clang-format off
  cli.add_options()
      ("sections", "section .h5ad files", cxxopts::value<std::vector<std::string>>())
      ("out-dir", "output directory (created if missing)", cxxopts::value<std::string>())
      ("expression", "expression cost: pca (Euclidean on PCA scores) | cosine", cxxopts::value<std::string>()->default_value("pca"))
      ("pca-dims", "PCA components of the shared genes", cxxopts::value<int>()->default_value("30"))
      ("features", "obsm:KEY: every section's own expression representation (e.g. a joint X_pca or X_scVI) instead of the shared-gene PCA", cxxopts::value<std::string>())
      ("overlap", "fraction of each section's mass in the overlap (0, 1], or auto", cxxopts::value<std::string>())
      ("reference", "align every section to this one (default: consecutive pairs)", cxxopts::value<int>())
      ("transfer", "obs columns (or obsm:KEY) to carry from each fixed section to the moving one", cxxopts::value<std::string>())
      ("spatial-key", "obsm key of the coordinates", cxxopts::value<std::string>()->default_value("spatial"))
      ("z-spacing", "z distance between consecutive sections", cxxopts::value<double>()->default_value("1"))
      ("allow-reflection", "let the registration mirror a section")
      ("registration", "auto | plan (Procrustes fit of the plan) | search (expression search; auto: with --overlap < 1)", cxxopts::value<std::string>()->default_value("auto"))
      ("search-extent", "--registration search: translations within +-F x the diameter (0: ICP only)", cxxopts::value<double>()->default_value("0.4"))
      ("refine", "refinement rounds: solve again with the registered coordinates as features", cxxopts::value<int>()->default_value("0"))
      ("h,help", "print this help");
  // clang-format on
  add_solver_options(cli);
  cli.parse_positional({"sections"});
  cli.positional_help("S1.h5ad S2.h5ad ... --out-dir DIR");
  const auto flags = cli.parse(argc, argv);
  if (flags.count("help")) {
    std::cout << cli.help() << kSlicesHelp;
    return 0;
  }
  GW_CHECK(flags.count("sections") && flags["sections"].as<std::vector<std::string>>().size() >= 2,
           "give at least two sections: gwalign slices S1.h5ad S2.h5ad ... --out-dir DIR");
  GW_CHECK(flags.count("out-dir"), "give the output directory with --out-dir DIR");
  const auto paths = flags["sections"].as<std::vector<std::string>>();
  spatial::SlicesOptions options = slices_options(flags, static_cast<int>(paths.size()));
  const std::vector<TransferKey> keys =
      flags.count("transfer") ? parse_transfer_keys(flags["transfer"].as<std::string>(), "--transfer")
                              : std::vector<TransferKey>{};
  const std::string dir = flags["out-dir"].as<std::string>();
  std::vector<Section> sections;
  std::vector<InputFile> inputs;
  for (const std::string& p : paths) inputs.push_back({p, "a section"});
  for (const std::string& p : paths) {
    Section s;
    s.path = p;
    s.out_path = (std::filesystem::path(dir) / (stem(p) + ".h5ad")).string();
    for (const Section& other : sections) {
      GW_CHECK(other.out_path != s.out_path, "sections '" << other.path << "' and '" << p
                                                          << "' would both be written to '" << s.out_path
                                                          << "'; rename one");
    }
    check_output_path(s.out_path, "--out-dir", inputs, "; choose another --out-dir");
    s.file = std::make_unique<io::H5adReader>(p);
    sections.push_back(std::move(s));
  }
  for (int s = 0; s < static_cast<int>(sections.size()); ++s) {
    const bool sends = options.reference < 0 ? s + 1 < static_cast<int>(sections.size()) : s == options.reference;
    if (sends)
      for (const TransferKey& key : keys) check_transfer_key(*sections[s].file, key);
  }
  const std::vector<spatial::SectionData> data = read_sections(sections, flags, options.solver.fused_weight);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  GW_CHECK_CODE(!ec && std::filesystem::is_directory(dir), ErrorCode::kCannotCreate,
                "--out-dir '" << dir << "' cannot be created: " << ec.message());

  const InterruptScope interrupts;
  const spatial::SlicesResult result = spatial::align_sections(data, options, [](int done, int total) {
    std::cerr << "aligned pair " << done << " of " << total << "\n";
    return interrupt_signal() == 0;
  });
  throw_if_interrupted();

  OutputSet outputs;
  std::vector<std::unique_ptr<io::H5adWriter>> writers;
  for (std::size_t s = 0; s < sections.size(); ++s) {
    writers.push_back(std::make_unique<io::H5adWriter>(io::H5adWriter::copy_of(sections[s].path, sections[s].out_path)));
    writers.back()->put_obsm("spatial_aligned", io::Array<double>{result.aligned[s], {data[s].n, 3}});
  }
  std::vector<std::unique_ptr<io::AtomicTextFile>> texts;
  for (const spatial::PairAlignment& p : result.pairs) {
    const std::string tag = std::to_string(p.fixed) + "_" + std::to_string(p.moving);
    const std::string plan_path = (std::filesystem::path(dir) / ("plan_" + tag + ".mtx")).string();
    const spatial::PlanView plan = spatial::plan_of(p.result);
    std::vector<std::pair<std::string, Index>> unreached;
    for (const TransferKey& key : keys) {
      unreached.emplace_back(key.text, transfer_key(*sections[p.fixed].file, key, plan, {}, *writers[p.moving]));
    }
    const io::CsrArray<double> csr = plan_csr(p.result);
    texts.push_back(std::make_unique<io::AtomicTextFile>(plan_path));
    texts.back()->write(io::matrix_market_text(csr, "gwalign slices plan: rows " + sections[p.fixed].path +
                                                        ", columns " + sections[p.moving].path));
    const std::string report_path = (std::filesystem::path(dir) / ("report_" + tag + ".json")).string();
    texts.push_back(std::make_unique<io::AtomicTextFile>(report_path));
    texts.back()->write(pair_report(p, sections, plan_path, unreached));
    std::cerr << "pair " << tag << ": gw loss " << p.result.gw_loss << ", residual rms "
              << p.registration.rms_residual << ", mass " << p.overlap_mass << ", "
              << p.solve_seconds << " s (" << p.result.strategy.support_reason << ")\n";
  }
  for (std::size_t s = 0; s < sections.size(); ++s) outputs.add(sections[s].out_path, [&, s] { writers[s]->commit(); });
  for (auto& t : texts) outputs.add(t->path(), [&t] { t->commit(); });
  throw_if_interrupted();
  outputs.commit_all();
  std::cout << "wrote " << sections.size() << " registered sections, " << result.pairs.size()
            << " plans and reports to " << dir << "\n";
  return 0;
}

}  // namespace

GW_CLI_COMMAND("slices", "align serial tissue sections (h5ad) into one 3-D frame, transfer labels", run_slices);

}  // namespace gw::cli
