// `gwalign map ATLAS.h5ad SECTION.h5ad --out-dir DIR --transfer KEYS`: a dissociated single-cell
// atlas mapped onto a tissue section (spatial/mapping.h) and its annotations carried onto the
// section's cells. Reads both files, builds the shared-gene expression features, solves, writes
// every output or none.
#include <cxxopts.hpp>

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
#include "spatial/mapping.h"

namespace gw::cli {
namespace {

constexpr const char* kMapHelp = R"(
ATLAS is an .h5ad of dissociated cells (counts in X, annotations in obs; no coordinates needed),
SECTION an .h5ad with coordinates in obsm['spatial'] (--spatial-key) and counts in X. Fused GW
couples them: the atlas's geometry is its cells' distances in an expression space (the expression
features, or --atlas-rep obsm:KEY such as X_pca or X_scVI), the section's its in-plane distances,
and the linear term (weight --fused-weight, default 0.9) the expression cost on the genes both
files share (log1p of normalized counts, a joint PCA; --expression cosine compares PCA profiles
by angle; --features obsm:KEY uses a representation both files hold instead). The plan's rows
are the atlas's cells, its columns the section's. Defaults differ from `gwalign align` where
mapping needs it: the atlas's marginal is relaxed (--rho-a 0.1: an atlas holds the whole
tissue's cell-type proportions, a section a part of it) and the plan is dense up to 2.5e7
entries, 5,000 x 5,000 (--support sparse to override; the sparse support follows the section's
geometry, so each section cell also joins the supports of the 4 nearby atlas cells closest to it
in expression: --support-feature-candidates).

Outputs in --out-dir (all or none):
  <section name>.h5ad   a copy of SECTION with, for each --transfer KEY, obs KEY_transferred
                        (+ KEY_transferred_confidence for categories) pushed from the atlas
  plan.mtx              the plan, Matrix Market (rows: ATLAS's cells, columns: SECTION's)
  report.json           the solve (loss, strategy, timings) and the transfer's unreached counts
`gwalign transfer ATLAS SECTION --plan DIR/plan.mtx --direction pull` carries the section's
annotations (obsm:spatial, domains) back onto the atlas's cells.

Examples:
  gwalign map atlas.h5ad section.h5ad --out-dir mapped/ --transfer celltype
  gwalign map atlas.h5ad section.h5ad --atlas-rep obsm:X_pca --expression cosine --out-dir mapped/
)";

std::string map_report(const Result& result, const std::string& atlas, const std::string& section,
                       const std::string& atlas_rep, const std::vector<std::pair<std::string, Index>>& unreached) {
  JsonWriter json(true);
  json.begin_object();
  json.member("atlas", atlas).member("section", section).member("atlas_rep", atlas_rep);
  json.member("fused_weight", result.options.fused_weight);
  json.member("gw_loss", result.gw_loss);
  json.key("transfer_unreached").begin_object();
  for (const auto& [key, count] : unreached) json.member(key, static_cast<std::int64_t>(count));
  json.end_object();
  json.key("solve").raw(result.to_json(false));
  json.end_object();
  return json.str();
}

int run_map(int argc, char** argv) {
  cxxopts::Options cli(argv[0], "Map a dissociated single-cell atlas onto a tissue section and carry its labels.");
  // clang-format off
  cli.add_options()
      ("files", "ATLAS.h5ad SECTION.h5ad", cxxopts::value<std::vector<std::string>>())
      ("out-dir", "output directory (created if missing)", cxxopts::value<std::string>())
      ("transfer", "obs columns (or obsm:KEY) of the atlas to carry onto the section", cxxopts::value<std::string>())
      ("atlas-rep", "the atlas's geometry: obsm:KEY, or shared (the expression features themselves)", cxxopts::value<std::string>()->default_value("shared"))
      ("expression", "expression cost: pca (Euclidean on PCA scores) | cosine", cxxopts::value<std::string>()->default_value("pca"))
      ("pca-dims", "PCA components of the shared genes", cxxopts::value<int>()->default_value("30"))
      ("features", "obsm:KEY: a representation both files hold (e.g. a joint X_scVI) instead of the shared-gene PCA", cxxopts::value<std::string>())
      ("spatial-key", "obsm key of the section's coordinates", cxxopts::value<std::string>()->default_value("spatial"))
      ("h,help", "print this help");
  // clang-format on
  add_solver_options(cli);
  cli.parse_positional({"files"});
  cli.positional_help("ATLAS.h5ad SECTION.h5ad --out-dir DIR");
  const auto flags = cli.parse(argc, argv);
  if (flags.count("help")) {
    std::cout << cli.help() << kMapHelp;
    return 0;
  }
  GW_CHECK(flags.count("files") && flags["files"].as<std::vector<std::string>>().size() == 2,
           "give two files: gwalign map ATLAS.h5ad SECTION.h5ad --out-dir DIR");
  GW_CHECK(flags.count("out-dir"), "give the output directory with --out-dir DIR");
  GW_CHECK(!flags.count("partial-mass"), "--partial-mass is not supported by gwalign map (every atlas cell is mapped)");
  const auto files = flags["files"].as<std::vector<std::string>>();
  Options options = solver_options_from_flags(flags);
  if (!flags.count("fused-weight")) options.fused_weight = spatial::kMappingFusedWeight;
  if (!flags.count("rho-a")) options.rho_a = spatial::kMappingRhoA;
  if (!flags.count("support-feature-candidates")) options.support_feature_candidates = spatial::kMappingFeatureCandidates;
  GW_CHECK(options.fused_weight > 0.0 && options.fused_weight < 1.0,
           "--fused-weight must be in (0, 1) for gwalign map (the expression cost and the geometry both count), got "
               << options.fused_weight);
  if (!flags.count("mode")) options.distance_mode = DistanceMode::kLandmark;
  const std::string atlas_rep = flags["atlas-rep"].as<std::string>();
  GW_CHECK(atlas_rep == "shared" || (atlas_rep.rfind("obsm:", 0) == 0 && atlas_rep.size() > 5),
           "--atlas-rep must be 'shared' or obsm:KEY, got '" << atlas_rep << "'");
  const std::vector<TransferKey> keys = flags.count("transfer")
                                            ? parse_transfer_keys(flags["transfer"].as<std::string>(), "--transfer")
                                            : std::vector<TransferKey>{};
  const std::string dir = flags["out-dir"].as<std::string>();
  const std::string section_out =
      (std::filesystem::path(dir) / (std::filesystem::path(files[1]).stem().string() + ".h5ad")).string();
  const std::string plan_path = (std::filesystem::path(dir) / "plan.mtx").string();
  const std::string report_path = (std::filesystem::path(dir) / "report.json").string();
  const std::vector<InputFile> inputs = {{files[0], "ATLAS"}, {files[1], "SECTION"}};
  for (const std::string& out : {section_out, plan_path, report_path})
    check_output_path(out, "--out-dir", inputs, "; choose another --out-dir");

  const io::H5adReader atlas(files[0]);
  const io::H5adReader section(files[1]);
  for (const TransferKey& key : keys) check_transfer_key(atlas, key);
  spatial::SectionData s;
  s.name = files[1];
  s.n = static_cast<Index>(section.n_obs());
  s.coordinates = read_section_coordinates(section, flags["spatial-key"].as<std::string>(), &s.dimension);
  GW_CHECK_CODE(s.dimension == 2, ErrorCode::kBadData,
                "obsm['" << flags["spatial-key"].as<std::string>() << "'] in '" << files[1] << "' has "
                         << s.dimension << " columns; a section is mapped by its 2-D in-plane coordinates");
  spatial::AtlasData a;
  a.name = files[0];
  if (atlas_rep != "shared") a.geometry = read_obsm_matrix(atlas, atlas_rep.substr(5), static_cast<Index>(atlas.n_obs()));
  std::vector<DenseMatrix<double>> features = flags.count("features")
                                                 ? read_feature_representation({&atlas, &section},
                                                                               flags["features"].as<std::string>(), flags)
                                                 : shared_gene_features({&atlas, &section}, flags, "");
  a.features = std::move(features[0]);
  s.features = std::move(features[1]);
  if (atlas_rep == "shared") a.geometry = a.features;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  GW_CHECK_CODE(!ec && std::filesystem::is_directory(dir), ErrorCode::kCannotCreate,
                "--out-dir '" << dir << "' cannot be created: " << ec.message());

  if (!flags.count("support") && static_cast<double>(a.geometry.rows) * static_cast<double>(s.n) <=
                                      spatial::kMappingDenseMaxEntries) {
    options.support = Support::kDense;
  }
  const InterruptScope interrupts;
  const Result result = spatial::map_atlas(a, s, options);
  throw_if_interrupted();
  const spatial::PlanView plan = spatial::plan_of(result);
  io::H5adWriter writer = io::H5adWriter::copy_of(files[1], section_out);
  std::vector<std::pair<std::string, Index>> unreached;
  for (const TransferKey& key : keys) unreached.emplace_back(key.text, transfer_key(atlas, key, plan, {}, writer));
  io::AtomicTextFile plan_file(plan_path);
  plan_file.write(io::matrix_market_text(plan_csr(result), "gwalign map plan: rows " + files[0] + ", columns " + files[1]));
  io::AtomicTextFile report_file(report_path);
  report_file.write(map_report(result, files[0], files[1], atlas_rep, unreached));
  OutputSet outputs;
  outputs.add(section_out, [&writer] { writer.commit(); });
  outputs.add(plan_path, [&plan_file] { plan_file.commit(); });
  outputs.add(report_path, [&report_file] { report_file.commit(); });
  throw_if_interrupted();
  outputs.commit_all();
  std::cerr << "mapped " << a.geometry.rows << " atlas cells onto " << s.n << " section cells: gw loss "
            << result.gw_loss << ", " << result.total_seconds << " s (" << result.strategy.support_reason << ")\n";
  std::cout << "wrote " << section_out << ", " << plan_path << " and " << report_path << "\n";
  return 0;
}

}  // namespace

GW_CLI_COMMAND("map", "map a dissociated single-cell atlas (h5ad) onto a tissue section, transfer labels", run_map);

}  // namespace gw::cli
