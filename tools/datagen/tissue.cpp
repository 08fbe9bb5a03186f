#include "datagen/tissue.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/rng.h"

namespace gw::datagen {
namespace {

constexpr double kTwoPi = 6.28318530717958647692;

// Marsaglia & Tsang (2000) for shape >= 1; shape < 1 by Gamma(shape + 1) U^(1 / shape).
double gamma_sample(Rng& rng, double shape, double scale) {
  if (shape < 1.0) {
    const double u = std::max(rng.uniform(), 1e-300);
    return gamma_sample(rng, shape + 1.0, scale) * std::pow(u, 1.0 / shape);
  }
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = rng.normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = rng.uniform();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * scale;
    if (std::log(std::max(u, 1e-300)) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v * scale;
  }
}

// Inversion by sequential search, in chunks of mean <= 30 so exp(-mean) never underflows
// (a Poisson of mean a + b is the sum of independent ones of means a and b).
std::int64_t poisson_sample(Rng& rng, double mean) {
  std::int64_t total = 0;
  while (mean > 0.0) {
    const double part = std::min(mean, 30.0);
    mean -= part;
    const double limit = std::exp(-part);
    double product = rng.uniform();
    while (product > limit) {
      ++total;
      product *= rng.uniform();
    }
  }
  return total;
}

struct Model {
  std::vector<double> boundary_frequency, boundary_phase;
  std::vector<double> domain_type_cdf;  // domains x cell_types
  std::vector<double> profile;          // cell_types x genes, each row sums to 1
};

Model build_model(const TissueOptions& o) {
  Rng rng(o.seed, /*stream=*/1);
  Model m;
  for (int b = 0; b + 1 < o.domains; ++b) {
    m.boundary_frequency.push_back(1.0 + rng.uniform());
    m.boundary_phase.push_back(kTwoPi * rng.uniform());
  }
  for (int dom = 0; dom < o.domains; ++dom) {
    std::vector<double> w(o.cell_types, 1.0 / o.cell_types);
    const int first = static_cast<int>(rng.uniform_index(o.cell_types));
    int second = static_cast<int>(rng.uniform_index(o.cell_types - 1));
    if (second >= first) ++second;
    w[first] = 6.0;
    w[second] = 3.0;
    double sum = 0.0;
    for (double v : w) sum += v;
    double acc = 0.0;
    for (double v : w) m.domain_type_cdf.push_back(acc += v / sum);
  }
  std::vector<double> baseline(o.genes);
  for (double& v : baseline) v = std::exp(rng.normal());
  for (int t = 0; t < o.cell_types; ++t) {
    std::vector<double> row = baseline;
    for (double& v : row) {
      if (rng.uniform() < 0.12) v *= 8.0;
    }
    double sum = 0.0;
    for (double v : row) sum += v;
    for (double v : row) m.profile.push_back(v / sum);
  }
  return m;
}

// Layers are concentric arcs around a centre below and left of the tissue (as cortical layers
// curve around the ventricle): no mirror or rotation of a section maps the layers onto themselves,
// so the alignment's ground truth is unique.
int domain_of(const TissueOptions& o, const Model& m, double x, double y, double z) {
  const double cx = -0.6 * o.width, cy = -0.5 * o.height;
  const double r_min = std::hypot(0.0 - cx, 0.0 - cy);
  const double r_max = std::hypot(o.width - cx, o.height - cy);
  const double thickness = (r_max - r_min) / o.domains;
  const double a = o.boundary_amplitude * thickness;
  const double r = std::hypot(x - cx, y - cy);
  int domain = 0;
  for (int b = 0; b + 1 < o.domains; ++b) {
    const double boundary = r_min + thickness * (b + 1) +
                            a * std::sin(kTwoPi * x / o.width * m.boundary_frequency[b] + m.boundary_phase[b]) +
                            o.layer_drift * a * std::cos(kTwoPi * z / o.depth);
    if (r > boundary) domain = b + 1;
  }
  return domain;
}

// One cell at (x, y, z): its domain, a cell type from the domain's proportions and its counts
// (library size `library`), appended to `sec`'s domain, cell_type and CSR rows.
void draw_cell(const TissueOptions& o, const Model& m, Rng& rng, double library, double x, double y, double z,
               TissueSection& sec) {
  const int dom = domain_of(o, m, x, y, z);
  sec.domain.push_back(dom);
  const double u = rng.uniform();
  const double* cdf = &m.domain_type_cdf[static_cast<std::size_t>(dom) * o.cell_types];
  int type = 0;
  while (type + 1 < o.cell_types && u > cdf[type]) ++type;
  sec.cell_type.push_back(type);
  const double size_factor = std::exp(0.3 * rng.normal());
  const double* profile = &m.profile[static_cast<std::size_t>(type) * o.genes];
  for (int g = 0; g < o.genes; ++g) {
    const double mean = library * size_factor * profile[g];
    const std::int64_t count = poisson_sample(rng, gamma_sample(rng, o.dispersion, mean / o.dispersion));
    if (count == 0 || rng.uniform() < o.dropout) continue;
    sec.genes.push_back(g);
    sec.counts.push_back(static_cast<float>(count));
  }
}

// The dissociated atlas: cells drawn uniformly from the whole tissue volume (no section, no
// observed coordinates), sequenced at atlas_library_size.
TissueSection draw_atlas(const TissueOptions& o, const Model& m) {
  Rng rng(o.seed, /*stream=*/2);
  TissueSection atlas;
  atlas.n = o.atlas_cells;
  atlas.row_offsets.push_back(0);
  for (Index i = 0; i < atlas.n; ++i) {
    const double x = o.width * rng.uniform();
    const double y = o.height * rng.uniform();
    const double z = o.depth * rng.uniform();
    atlas.truth.insert(atlas.truth.end(), {x, y, z});
    draw_cell(o, m, rng, o.atlas_library_size, x, y, z, atlas);
    atlas.row_offsets.push_back(static_cast<std::int64_t>(atlas.genes.size()));
  }
  return atlas;
}

TissueSection cut_section(const TissueOptions& o, const Model& m, int s) {
  Rng rng(o.seed, /*stream=*/100 + static_cast<std::uint64_t>(s));
  TissueSection sec;
  sec.z = o.depth * (s + 0.5) / o.sections;
  const double w = o.window_width * o.width;
  const double step = (1.0 - o.overlap) * w;
  const double span = w + step * (o.sections - 1);
  const double x0 = 0.5 * (o.width - span) + step * s;
  const double density = 1.0 + o.density_jitter * (2.0 * rng.uniform() - 1.0);
  sec.n = std::max<Index>(1, static_cast<Index>(std::lround(o.cells * density)));
  sec.angle = o.max_rotation * (2.0 * rng.uniform() - 1.0);
  sec.translation[0] = o.max_translation * (2.0 * rng.uniform() - 1.0);
  sec.translation[1] = o.max_translation * (2.0 * rng.uniform() - 1.0);
  sec.centre[0] = x0 + 0.5 * w;
  sec.centre[1] = 0.5 * o.height;
  const double c = std::cos(sec.angle), sn = std::sin(sec.angle);
  sec.row_offsets.push_back(0);
  for (Index i = 0; i < sec.n; ++i) {
    const double x = x0 + w * rng.uniform();
    const double y = o.height * rng.uniform();
    sec.truth.insert(sec.truth.end(), {x, y, sec.z});
    const double dx = x - sec.centre[0], dy = y - sec.centre[1];
    sec.observed.push_back(c * dx - sn * dy + sec.centre[0] + sec.translation[0]);
    sec.observed.push_back(sn * dx + c * dy + sec.centre[1] + sec.translation[1]);
    draw_cell(o, m, rng, o.library_size, x, y, sec.z, sec);
    sec.row_offsets.push_back(static_cast<std::int64_t>(sec.genes.size()));
  }
  return sec;
}

}  // namespace

Tissue generate_tissue(const TissueOptions& o) {
  GW_CHECK(o.sections >= 1, "tissue: sections must be >= 1, got " << o.sections);
  GW_CHECK(o.cells >= 10, "tissue: cells per section must be >= 10, got " << o.cells);
  GW_CHECK(o.genes >= 10, "tissue: genes must be >= 10, got " << o.genes);
  GW_CHECK(o.cell_types >= 2, "tissue: cell types must be >= 2, got " << o.cell_types);
  GW_CHECK(o.domains >= 1, "tissue: domains must be >= 1, got " << o.domains);
  GW_CHECK(o.window_width > 0.0 && o.window_width <= 1.0,
           "tissue: window width must be in (0, 1], got " << o.window_width);
  GW_CHECK(o.overlap > 0.0 && o.overlap <= 1.0, "tissue: overlap must be in (0, 1], got " << o.overlap);
  GW_CHECK(o.dropout >= 0.0 && o.dropout < 1.0, "tissue: dropout must be in [0, 1), got " << o.dropout);
  GW_CHECK(o.density_jitter >= 0.0 && o.density_jitter < 1.0,
           "tissue: density jitter must be in [0, 1), got " << o.density_jitter);
  GW_CHECK(o.atlas_cells >= 0, "tissue: atlas cells must be >= 0, got " << o.atlas_cells);
  GW_CHECK(o.atlas_library_size > 0.0, "tissue: atlas library size must be > 0, got " << o.atlas_library_size);
  GW_CHECK(std::isfinite(o.layer_drift) && o.layer_drift >= 0.0,
           "tissue: layer drift must be >= 0, got " << o.layer_drift);
  GW_CHECK(o.dispersion > 0.0, "tissue: dispersion must be > 0, got " << o.dispersion);
  const Model model = build_model(o);
  Tissue tissue;
  for (int g = 0; g < o.genes; ++g) tissue.gene_names.push_back("gene" + std::to_string(g));
  for (int t = 0; t < o.cell_types; ++t) tissue.cell_type_names.push_back("type" + std::to_string(t));
  for (int d = 0; d < o.domains; ++d) tissue.domain_names.push_back("layer" + std::to_string(d + 1));
  for (int s = 0; s < o.sections; ++s) tissue.sections.push_back(cut_section(o, model, s));
  if (o.atlas_cells > 0) tissue.atlas = draw_atlas(o, model);
  return tissue;
}

}  // namespace gw::datagen
