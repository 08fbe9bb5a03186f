// A synthetic layered tissue and serial sections cut from it, for the spatial alignment tests and
// benchmarks (`gwalign generate tissue`, `gwalign slices`).
//
// The tissue fills the box [0, width] x [0, height] x [0, depth] (micrometre-like units). Its
// `domains` layers are concentric arcs around the point (-0.6 width, -0.5 height), below and left
// of the tissue (as cortical layers curve around a ventricle), so no rotation or mirror image of a
// section maps its layers onto themselves. With r the distance to that point and r_min, r_max its
// range over the box, boundary b lies at
//   r_b(x, z) = r_min + (b + 1) T + A sin(2 pi x / width * f_b + phi_b) + D A cos(2 pi z / depth)
// (T = (r_max - r_min) / domains, A = boundary_amplitude x T, D = layer_drift, f_b in [1, 2] and
// phi_b from the seed), so the layers move between sections. The drift term moves every boundary
// the same radial distance, which within a section's window is close to a translation of the
// layer pattern: with the default D = 0.5 the layers of adjacent sections of a five-section stack
// lie 24-39 units apart radially (0.02-0.03 of a section's diameter), and a registration from the
// tissue pattern alone -- even one that knows every cell's true domain -- lands that far from the
// true motion. D = 0 gives layers that do not change with depth (the pattern then pins the
// motion). Each domain has its own cell-type proportions: two of `cell_types` types dominate (weights 6 and 3), the others have
// weight 1 / cell_types, normalized. Each type has a mean expression profile over `genes` genes
// (a log-normal baseline shared by all types times a marker factor of 8 on about 12% of genes per
// type), and a cell's counts are negative binomial with mean library_size x profile / sum(profile)
// x (a per-cell size factor, log-normal with sigma 0.3) and dispersion r (variance mu + mu^2 / r),
// drawn as Poisson(Gamma(r, mu / r)); each non-zero count is then dropped (set to 0) with
// probability `dropout`.
//
// Section s lies in the plane z_s = depth (s + 0.5) / sections. Its field of view is a window of
// width window_width x width sliding along x so that consecutive windows overlap by `overlap` of
// their width (the windows are centred on the tissue). Cells are a uniform (Poisson) sample of the
// window with n x density_s cells, density_s drawn uniformly in [1 - density_jitter,
// 1 + density_jitter]. The observed coordinates are the true in-plane (x, y) moved by a rigid
// motion: a rotation by a uniform angle in [-max_rotation, max_rotation] radians about the
// window's centre and a translation of up to max_translation in each coordinate. The ground truth
// is kept: each cell's 3-D position, domain and cell type, and each section's motion.
//
// Reproducibility: gw::Rng (seed, stream 100 + s for section s, stream 1 for the tissue, stream 2
// for the atlas); same options, the same sections on a given platform (normal() is reproducible
// per platform).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.h"

namespace gw::datagen {

struct TissueOptions {
  int sections = 2;
  Index cells = 4000;  // n: cells per section before the density factor
  int genes = 300;
  int cell_types = 8;
  int domains = 5;
  double width = 1000.0;
  double height = 1000.0;
  double depth = 100.0;
  double window_width = 0.8;  // fraction of the tissue width each section sees
  double overlap = 0.9;       // fraction of a window shared with the next section's
  double boundary_amplitude = 0.25;
  double layer_drift = 0.5;  // D above: the boundaries' radial motion with depth, in units of A
  double density_jitter = 0.1;
  double max_rotation = 3.14159265358979323846;
  double max_translation = 500.0;
  double library_size = 1000.0;
  double dispersion = 2.0;
  double dropout = 0.1;
  // A dissociated single-cell atlas beside the sections (0: none): atlas_cells cells drawn
  // uniformly from the whole volume, the same types, domains and count model, at library size
  // atlas_library_size (a deeper platform than the sections', as scRNA-seq usually is).
  Index atlas_cells = 0;
  double atlas_library_size = 3000.0;
  std::uint64_t seed = 0;
};

// One section: n cells.
struct TissueSection {
  Index n = 0;
  std::vector<double> observed;      // n x 2, the coordinates a slide would give
  std::vector<double> truth;         // n x 3, the true position in the tissue
  std::vector<std::int32_t> domain;  // n, in [0, domains)
  std::vector<std::int32_t> cell_type;
  // n x genes counts, CSR (row_offsets n + 1, gene indices ascending, counts > 0).
  std::vector<std::int64_t> row_offsets;
  std::vector<std::int32_t> genes;
  std::vector<float> counts;
  // The motion: observed = R(angle) (truth_xy - centre) + centre + translation.
  double angle = 0.0;
  double translation[2] = {0.0, 0.0};
  double centre[2] = {0.0, 0.0};
  double z = 0.0;
};

struct Tissue {
  std::vector<TissueSection> sections;
  // The atlas (options.atlas_cells > 0): observed is empty, truth holds each cell's 3-D origin,
  // angle / translation / centre / z are zero.
  TissueSection atlas;
  std::vector<std::string> gene_names;       // "gene0", ...
  std::vector<std::string> cell_type_names;  // "type0", ...
  std::vector<std::string> domain_names;     // "layer1" (bottom), ...
};

// kInvalidArgument (naming the field) on options out of range: sections >= 1, cells >= 10,
// genes >= 10, cell_types >= 2, domains >= 1, window_width in (0, 1], overlap in (0, 1],
// dropout in [0, 1), density_jitter in [0, 1), layer_drift >= 0, dispersion > 0, atlas_cells >= 0,
// atlas_library_size > 0.
Tissue generate_tissue(const TissueOptions& options);

}  // namespace gw::datagen
