// `gwalign generate tissue`: serial sections of a synthetic layered tissue (tools/datagen/tissue.h)
// as .h5ad files with their ground truth, for `gwalign slices` tests and benchmarks.
#include <cxxopts.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "core/config.h"
#include "core/error.h"
#include "datagen/tissue.h"
#include "generate_tissue.h"
#include "interrupt.h"
#include "io/h5ad.h"
#include "output_set.h"

namespace gw::cli {
namespace {

constexpr const char* kTissueHelp = R"(
Writes DIR/section_0.h5ad ... DIR/section_<N-1>.h5ad (all or none). Each holds
  X                     cells x genes counts (CSR float32; var names gene0, gene1, ...)
  obsm['spatial']       the observed 2-D coordinates (the true ones moved by the section's motion)
  obsm['spatial_true']  the true 3-D position (x, y, z) in the tissue
  obs['domain']         the layer (categorical layer1 .. layerD, from the bottom)
  obs['celltype']       the cell type (categorical type0 .. typeT-1)
  uns['generator']      kind, seed, section, angle (radians), translation, centre, z, options
With --atlas N also DIR/atlas.h5ad: a dissociated single-cell atlas of N cells drawn from the whole
tissue volume (the same genes, types and count model, library size --atlas-library-size), with X,
obs['celltype'], obs['domain'] and obsm['spatial_true'] (each cell's origin, for scoring only) but no
obsm['spatial']: the input of `gwalign map`.
The model (curved layer boundaries, per-domain type proportions, negative binomial counts with
dropout, sliding windows with partial overlap and density differences) is described in
tools/datagen/tissue.h.

Examples:
  gwalign generate tissue --sections 2 --n 4000 --seed 0 --out-dir tissue/
  gwalign generate tissue --sections 5 --overlap 0.7 --n 3000 --out-dir stack/
  gwalign generate tissue --sections 5 --overlap 0.7 --n 3000 --layer-drift 0 --out-dir still/
  gwalign generate tissue --sections 1 --n 3000 --atlas 5000 --out-dir mapping/
)";

// A file for `cells` (a section or the atlas): X, obsm['spatial_true'], obs domain and celltype;
// the caller adds the rest and registers the commit.
io::H5adWriter& write_cells(const datagen::Tissue& tissue, const datagen::TissueOptions& o,
                            const datagen::TissueSection& cells, const std::string& prefix,
                            const std::string& path, std::vector<io::H5adWriter>& writers) {
  std::vector<std::string> names;
  names.reserve(cells.n);
  for (Index i = 0; i < cells.n; ++i) names.push_back(prefix + std::to_string(i));
  writers.push_back(io::H5adWriter::create(path, cells.n, o.genes, std::move(names), tissue.gene_names));
  io::H5adWriter& out = writers.back();
  io::CsrArray<float> x;
  x.rows = cells.n;
  x.cols = o.genes;
  x.indptr.assign(cells.row_offsets.begin(), cells.row_offsets.end());
  x.indices.assign(cells.genes.begin(), cells.genes.end());
  x.data = cells.counts;
  out.set_x(x);
  out.put_obsm("spatial_true", io::Array<double>{cells.truth, {cells.n, 3}});
  out.put_obs_categorical("domain", io::Categorical{tissue.domain_names, cells.domain, true});
  out.put_obs_categorical("celltype", io::Categorical{tissue.cell_type_names, cells.cell_type, false});
  out.put_uns("generator/version", GW_VERSION_STRING);
  out.put_uns("generator/seed", static_cast<std::int64_t>(o.seed));
  out.put_uns("generator/dropout", o.dropout);
  out.put_uns("generator/layer_drift", o.layer_drift);
  return out;
}

void write_section(const datagen::Tissue& tissue, const datagen::TissueOptions& o, int s,
                   const std::string& path, OutputSet& outputs,
                   std::vector<io::H5adWriter>& writers) {
  const datagen::TissueSection& sec = tissue.sections[s];
  io::H5adWriter& out = write_cells(tissue, o, sec, "s" + std::to_string(s) + "c", path, writers);
  out.put_obsm("spatial", io::Array<double>{sec.observed, {sec.n, 2}});
  out.put_uns("generator/kind", "tissue");
  out.put_uns("generator/section", std::int64_t{s});
  out.put_uns("generator/sections", std::int64_t{o.sections});
  out.put_uns("generator/angle", sec.angle);
  out.put_uns_array("generator/translation", io::Array<double>{{sec.translation[0], sec.translation[1]}, {2}});
  out.put_uns_array("generator/centre", io::Array<double>{{sec.centre[0], sec.centre[1]}, {2}});
  out.put_uns("generator/z", sec.z);
  out.put_uns("generator/overlap", o.overlap);
  out.put_uns("generator/density_jitter", o.density_jitter);
  out.put_uns("generator/diameter", std::hypot(o.window_width * o.width, o.height));
  outputs.add(path, [&out] { out.commit(); });
}

void write_atlas(const datagen::Tissue& tissue, const datagen::TissueOptions& o, const std::string& path,
                 OutputSet& outputs, std::vector<io::H5adWriter>& writers) {
  io::H5adWriter& out = write_cells(tissue, o, tissue.atlas, "atlas", path, writers);
  out.put_uns("generator/kind", "tissue-atlas");
  out.put_uns("generator/library_size", o.atlas_library_size);
  outputs.add(path, [&out] { out.commit(); });
}

}  // namespace

int run_generate_tissue(int argc, char** argv) {
  cxxopts::Options cli("gwalign generate tissue",
                       "Serial sections of a synthetic layered tissue, with ground truth.");
  datagen::TissueOptions d;
  // clang-format off
  cli.add_options()
      ("sections", "number of sections", cxxopts::value<int>()->default_value("2"))
      ("n", "cells per section (before the density factor)", cxxopts::value<Index>()->default_value("4000"))
      ("genes", "genes", cxxopts::value<int>()->default_value("300"))
      ("cell-types", "cell types", cxxopts::value<int>()->default_value("8"))
      ("domains", "layers", cxxopts::value<int>()->default_value("5"))
      ("overlap", "fraction of a section's window shared with the next", cxxopts::value<double>()->default_value("0.9"))
      ("window", "fraction of the tissue width a section sees", cxxopts::value<double>()->default_value("0.8"))
      ("dropout", "probability a non-zero count is dropped", cxxopts::value<double>()->default_value("0.1"))
      ("density-jitter", "cell density varies by up to this fraction", cxxopts::value<double>()->default_value("0.1"))
      ("layer-drift", "the layers' radial motion with depth, x their wiggle's amplitude (0: the same layers in every section)", cxxopts::value<double>()->default_value("0.5"))
      ("max-rotation", "largest rotation, degrees", cxxopts::value<double>()->default_value("180"))
      ("max-translation", "largest shift per coordinate", cxxopts::value<double>()->default_value("500"))
      ("atlas", "also write a dissociated atlas of this many cells (atlas.h5ad)", cxxopts::value<Index>()->default_value("0"))
      ("atlas-library-size", "the atlas's mean counts per cell", cxxopts::value<double>()->default_value("3000"))
      ("seed", "random seed", cxxopts::value<std::uint64_t>()->default_value("0"))
      ("out-dir", "output directory (created if missing)", cxxopts::value<std::string>())
      ("h,help", "print this help");
  // clang-format on
  const auto flags = cli.parse(argc, argv);
  if (flags.count("help")) {
    std::cout << cli.help() << kTissueHelp;
    return 0;
  }
  GW_CHECK(flags.unmatched().empty() || flags.unmatched() == std::vector<std::string>{"tissue"},
           "unexpected argument '" << flags.unmatched().back()
                                   << "'; usage: gwalign generate tissue --out-dir DIR");
  GW_CHECK(flags.count("out-dir"), "give the output directory with --out-dir DIR");
  d.sections = flags["sections"].as<int>();
  d.cells = flags["n"].as<Index>();
  d.genes = flags["genes"].as<int>();
  d.cell_types = flags["cell-types"].as<int>();
  d.domains = flags["domains"].as<int>();
  d.overlap = flags["overlap"].as<double>();
  d.window_width = flags["window"].as<double>();
  d.dropout = flags["dropout"].as<double>();
  d.density_jitter = flags["density-jitter"].as<double>();
  d.layer_drift = flags["layer-drift"].as<double>();
  GW_CHECK(std::isfinite(d.layer_drift) && d.layer_drift >= 0.0,
           "--layer-drift must be >= 0 (0: the same layers at every depth), got " << d.layer_drift);
  d.max_rotation = flags["max-rotation"].as<double>() * 3.14159265358979323846 / 180.0;
  d.max_translation = flags["max-translation"].as<double>();
  d.seed = flags["seed"].as<std::uint64_t>();
  d.atlas_cells = flags["atlas"].as<Index>();
  d.atlas_library_size = flags["atlas-library-size"].as<double>();
  GW_CHECK(!flags.count("atlas-library-size") || d.atlas_cells > 0,
           "--atlas-library-size applies to the atlas; give --atlas N too");
  GW_CHECK(d.seed <= static_cast<std::uint64_t>(INT64_MAX), "--seed must fit in int64");
  const std::string dir = flags["out-dir"].as<std::string>();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  GW_CHECK_CODE(!ec && std::filesystem::is_directory(dir), ErrorCode::kCannotCreate,
                "--out-dir '" << dir << "' cannot be created: " << ec.message());

  const datagen::Tissue tissue = datagen::generate_tissue(d);
  const InterruptScope interrupts;
  OutputSet outputs;
  std::vector<io::H5adWriter> writers;
  writers.reserve(d.sections + 1);  // the commit closures hold references into it
  for (int s = 0; s < d.sections; ++s) {
    const std::string path = (std::filesystem::path(dir) / ("section_" + std::to_string(s) + ".h5ad")).string();
    write_section(tissue, d, s, path, outputs, writers);
  }
  if (d.atlas_cells > 0) write_atlas(tissue, d, (std::filesystem::path(dir) / "atlas.h5ad").string(), outputs, writers);
  throw_if_interrupted();
  outputs.commit_all();
  std::cout << "wrote " << d.sections << " sections to " << dir << ":";
  for (const auto& sec : tissue.sections) std::cout << " " << sec.n;
  std::cout << " cells, " << d.genes << " genes (seed " << d.seed << ")";
  if (d.atlas_cells > 0) std::cout << ", and an atlas of " << d.atlas_cells << " cells";
  std::cout << "\n";
  return 0;
}

}  // namespace gw::cli
