// The synthetic tissue's dissociated atlas (tools/datagen/tissue.h): its size, that its cells come
// from the whole volume with valid labels, that asking for it leaves the sections unchanged (the
// benchmarks' sections stay reproducible), and that its counts follow its own library size; and
// the layers' drift with depth (layer_drift).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "datagen/tissue.h"

namespace gw::datagen {
namespace {

double mean_counts_per_cell(const TissueSection& s) {
  const double total = std::accumulate(s.counts.begin(), s.counts.end(), 0.0);
  return total / static_cast<double>(s.n);
}

TEST(TissueAtlas, DrawsTheRequestedCellsFromTheWholeVolumeWithValidLabels) {
  TissueOptions o;
  o.cells = 300;
  o.atlas_cells = 2000;
  o.seed = 5;
  const Tissue t = generate_tissue(o);
  const TissueSection& a = t.atlas;
  ASSERT_EQ(a.n, 2000);
  EXPECT_TRUE(a.observed.empty());
  ASSERT_EQ(a.truth.size(), 3u * 2000u);
  ASSERT_EQ(a.domain.size(), 2000u);
  ASSERT_EQ(a.cell_type.size(), 2000u);
  ASSERT_EQ(a.row_offsets.size(), 2001u);
  std::vector<int> domains(o.domains, 0);
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (Index i = 0; i < a.n; ++i) {
    for (int c = 0; c < 3; ++c) {
      lo[c] = std::min(lo[c], a.truth[3 * i + c]);
      hi[c] = std::max(hi[c], a.truth[3 * i + c]);
    }
    ASSERT_GE(a.domain[i], 0);
    ASSERT_LT(a.domain[i], o.domains);
    ASSERT_GE(a.cell_type[i], 0);
    ASSERT_LT(a.cell_type[i], o.cell_types);
    ++domains[a.domain[i]];
  }
  // Uniform over the box: 2,000 draws span at least 95% of each side (a draw confined to one
  // section's plane or window would not), and every layer is sampled.
  const double side[3] = {o.width, o.height, o.depth};
  for (int c = 0; c < 3; ++c) {
    EXPECT_GE(lo[c], 0.0);
    EXPECT_LE(hi[c], side[c]);
    EXPECT_GT(hi[c] - lo[c], 0.95 * side[c]) << "axis " << c;
  }
  for (int d = 0; d < o.domains; ++d) EXPECT_GT(domains[d], 0) << "layer " << d;
}

TEST(TissueAtlas, LeavesTheSectionsUnchanged) {
  TissueOptions o;
  o.sections = 2;
  o.cells = 400;
  o.seed = 11;
  const Tissue without = generate_tissue(o);
  o.atlas_cells = 500;
  const Tissue with = generate_tissue(o);
  EXPECT_EQ(without.atlas.n, 0);
  ASSERT_EQ(with.sections.size(), without.sections.size());
  for (std::size_t s = 0; s < with.sections.size(); ++s) {
    EXPECT_EQ(with.sections[s].observed, without.sections[s].observed) << "section " << s;
    EXPECT_EQ(with.sections[s].counts, without.sections[s].counts) << "section " << s;
    EXPECT_EQ(with.sections[s].cell_type, without.sections[s].cell_type) << "section " << s;
  }
}

TEST(TissueAtlas, CountsScaleWithTheAtlasLibrarySize) {
  TissueOptions o;
  o.cells = 1500;
  o.atlas_cells = 1500;
  o.library_size = 1000.0;
  o.atlas_library_size = 3000.0;
  o.dropout = 0.0;
  const Tissue t = generate_tissue(o);
  // Same cell model, three times the depth: the mean counts per cell are 3x the section's within
  // sampling noise (per-cell size factors are log-normal, sigma 0.3, over 1,500 cells each; the
  // two samples' type mixes differ slightly, the atlas covering the whole tissue).
  EXPECT_NEAR(mean_counts_per_cell(t.atlas) / mean_counts_per_cell(t.sections[0]), 3.0, 0.3);
}

TEST(TissueAtlas, RejectsANegativeSizeOrLibrary) {
  TissueOptions o;
  o.atlas_cells = -1;
  EXPECT_THROW(generate_tissue(o), Error);
  o.atlas_cells = 10;
  o.atlas_library_size = 0.0;
  EXPECT_THROW(generate_tissue(o), Error);
}

// Share of `moving`'s cells whose domain equals that of the cell of `fixed` nearest to it in the
// tissue's (x, y) (brute force; sections of a stack overlap, cells outside `fixed`'s window --
// farther than `radius` from any of its cells -- are skipped).
double adjacent_domain_agreement(const TissueSection& fixed, const TissueSection& moving, double radius) {
  Index agree = 0, compared = 0;
  for (Index j = 0; j < moving.n; ++j) {
    double best = std::numeric_limits<double>::infinity();
    Index nearest = -1;
    for (Index i = 0; i < fixed.n; ++i) {
      const double dx = fixed.truth[3 * i] - moving.truth[3 * j], dy = fixed.truth[3 * i + 1] - moving.truth[3 * j + 1];
      const double d2 = dx * dx + dy * dy;
      if (d2 < best) {
        best = d2;
        nearest = i;
      }
    }
    if (best > radius * radius) continue;
    ++compared;
    agree += fixed.domain[nearest] == moving.domain[j] ? 1 : 0;
  }
  return compared > 0 ? static_cast<double>(agree) / static_cast<double>(compared) : 0.0;
}

// Five sections, 70% overlap: with layer_drift = 0 the layers are the same at every depth, so a
// cell's nearest neighbour in the adjacent section (1.5 spacings or so away) shares its domain
// except near a boundary (measured here 0.98-0.99); with the default drift the boundaries of the
// outer pairs move ~39 units between sections and 11-13% of the cells land in another layer than
// their neighbour (measured here 0.868 and 0.894).
TEST(TissueLayers, DriftZeroKeepsAdjacentSectionsLayersInRegisterAndTheDefaultMovesThem) {
  TissueOptions o;
  o.sections = 5;
  o.cells = 2000;
  o.overlap = 0.7;
  o.genes = 20;
  o.seed = 3;
  const Tissue moving_layers = generate_tissue(o);
  o.layer_drift = 0.0;
  const Tissue still_layers = generate_tissue(o);
  for (int s = 1; s < o.sections; ++s) {
    const double still = adjacent_domain_agreement(still_layers.sections[s - 1], still_layers.sections[s], 20.0);
    EXPECT_GE(still, 0.96) << "sections " << s - 1 << "-" << s;
    if (s == 1 || s == 4) {
      const double drifting =
          adjacent_domain_agreement(moving_layers.sections[s - 1], moving_layers.sections[s], 20.0);
      EXPECT_LE(drifting, 0.93) << "sections " << s - 1 << "-" << s;
    }
  }
}

TEST(TissueLayers, RejectsANegativeDrift) {
  TissueOptions o;
  o.layer_drift = -0.1;
  EXPECT_THROW(generate_tissue(o), Error);
}

}  // namespace
}  // namespace gw::datagen
