// align_sections on generated tissue sections that share only part of their area (the
// generator's 70% window overlap), against the generator's ground truth: the registration error
// of the pattern search, the plan fit's error it replaces, and the partial plan's mass on cells
// outside the true overlap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/rng.h"
#include "datagen/tissue.h"
#include "spatial/expression.h"
#include "spatial/search.h"
#include "spatial/slices.h"

namespace gw::spatial {
namespace {

// On these sections (2,000 cells before the density factor, seed 0) the search's error is 0.012
// of the diameter (0.025 with unmatched_cost 1); 0.012-0.029 on seeds 0-2 through the CLI,
// 0.006-0.054 per pair on five-section stacks at 3,000 cells (where the generator's layers also move between sections; two sections
// sit at z = depth / 4 and 3 depth / 4, where the drift term is the same). The bound leaves room
// for that spread, not for the plan fit's error.
constexpr double kSearchErrorBound = 0.08;
// The plan fit's error at 70% overlap is 0.16-0.20 (window onto window): twice the bound above.
constexpr double kPlanFitErrorAtLeast = 0.14;
// Mass of the partial plan on cells outside the true overlap (either end outside), as a fraction
// of the plan's mass: 0.13 measured. Leaks: the registration's 0.025 (32 units, 4% of the
// window's width at each edge), the coordinate term's radius (3 spacings), and the partial mass
// itself (0.7 x the larger section, more than the smaller one's overlap holds when the densities
// differ). A balanced plan puts 0.27-0.31 of its mass on either side's outside cells.
constexpr double kOutsideMassTolerance = 0.2;

struct Stack {
  datagen::Tissue tissue;
  std::vector<SectionData> sections;
};

Stack make_stack(Index cells, std::uint64_t seed) {
  datagen::TissueOptions t;
  t.sections = 2;
  t.cells = cells;
  t.overlap = 0.7;
  t.seed = seed;
  Stack s;
  s.tissue = datagen::generate_tissue(t);
  std::vector<ExpressionBlock> blocks;
  const Index genes = static_cast<Index>(s.tissue.gene_names.size());
  for (const datagen::TissueSection& section : s.tissue.sections) {
    ExpressionBlock b;
    b.rows = section.n;
    b.genes = genes;
    b.values.assign(static_cast<std::size_t>(section.n) * genes, 0.0f);
    for (Index i = 0; i < section.n; ++i)
      for (std::int64_t e = section.row_offsets[i]; e < section.row_offsets[i + 1]; ++e)
        b.values[static_cast<std::size_t>(i) * genes + section.genes[e]] = section.counts[e];
    blocks.push_back(std::move(b));
  }
  ExpressionFeatures features = expression_features(blocks);
  for (std::size_t k = 0; k < s.tissue.sections.size(); ++k) {
    SectionData d;
    d.name = "section_" + std::to_string(k);
    d.n = s.tissue.sections[k].n;
    d.coordinates = s.tissue.sections[k].observed;
    d.features = std::move(features.features[k]);
    s.sections.push_back(std::move(d));
  }
  return s;
}

// Mean distance of section 1's registered cells from their true positions carried into section
// 0's observed frame (the frame align_sections keeps), over section 1's true diameter.
double registration_error(const Stack& s, const SlicesResult& r) {
  const datagen::TissueSection& a = s.tissue.sections[0];
  const datagen::TissueSection& b = s.tissue.sections[1];
  const double c = std::cos(a.angle), sn = std::sin(a.angle);
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300}, sum = 0.0;
  for (Index j = 0; j < b.n; ++j) {
    const double u = b.truth[3 * j] - a.centre[0], v = b.truth[3 * j + 1] - a.centre[1];
    const double x = c * u - sn * v + a.centre[0] + a.translation[0];
    const double y = sn * u + c * v + a.centre[1] + a.translation[1];
    sum += std::hypot(r.aligned[1][3 * j] - x, r.aligned[1][3 * j + 1] - y);
    for (int k = 0; k < 2; ++k) {
      lo[k] = std::min(lo[k], b.truth[3 * j + k]);
      hi[k] = std::max(hi[k], b.truth[3 * j + k]);
    }
  }
  return sum / b.n / std::hypot(hi[0] - lo[0], hi[1] - lo[1]);
}

// Whether each cell of `s` lies inside the other section's window (true x within its range).
std::vector<bool> inside(const datagen::TissueSection& s, const datagen::TissueSection& other) {
  double lo = 1e300, hi = -1e300;
  for (Index i = 0; i < other.n; ++i) {
    lo = std::min(lo, other.truth[3 * i]);
    hi = std::max(hi, other.truth[3 * i]);
  }
  std::vector<bool> in(s.n);
  for (Index i = 0; i < s.n; ++i) in[i] = s.truth[3 * i] >= lo && s.truth[3 * i] <= hi;
  return in;
}

SlicesResult align(const Stack& s, RegistrationMode mode, std::optional<double> overlap) {
  SlicesOptions o;
  o.solver.fused_weight = 0.9;
  o.solver.distance_mode = DistanceMode::kLandmark;
  o.solver.seed = 1;
  o.overlap = overlap;
  o.registration_mode = mode;
  return align_sections(s.sections, o);
}

TEST(SlicesPartialOverlap, SearchRegistersWithinBoundAndMassOutsideTheOverlapStaysUntransported) {
  const Stack s = make_stack(2000, 0);
  const SlicesResult r = align(s, RegistrationMode::kAuto, 0.7);
  ASSERT_TRUE(r.pairs[0].searched);
  EXPECT_LE(registration_error(s, r), kSearchErrorBound);
  const PlanView plan = plan_of(r.pairs[0].result);
  const std::vector<bool> rows_in = inside(s.tissue.sections[0], s.tissue.sections[1]);
  const std::vector<bool> cols_in = inside(s.tissue.sections[1], s.tissue.sections[0]);
  double mass = 0.0, outside = 0.0;
  for (Index i = 0; i < plan.rows(); ++i) {
    plan.for_each_in_row(i, [&](Index j, double p) {
      mass += p;
      if (!rows_in[i] || !cols_in[j]) outside += p;
    });
  }
  // The partial plan moves the stated mass (overlap x the larger section), nearly all inside.
  EXPECT_NEAR(mass, 0.7, 0.01);
  EXPECT_LE(outside / mass, kOutsideMassTolerance);
}

// The generator's true motion of section 1 into section 0's observed frame: observed_s =
// R_s (truth - c_s) + c_s + t_s, so x_0 = R_0 R_1^T (x_1 - c_1 - t_1) + R_0 (c_1 - c_0) + c_0 + t_0.
RigidTransform true_motion(const datagen::TissueSection& a, const datagen::TissueSection& b) {
  const double d = a.angle - b.angle, ca = std::cos(a.angle), sa = std::sin(a.angle);
  const double cb = std::cos(b.angle), sb = std::sin(b.angle);
  RigidTransform m = RigidTransform::identity(2);
  m.rotation = {std::cos(d), -std::sin(d), std::sin(d), std::cos(d)};
  // u = R_1^T (-c_1 - t_1) + c_1 - c_0, then R_0 u + c_0 + t_0.
  const double px = -b.centre[0] - b.translation[0], py = -b.centre[1] - b.translation[1];
  const double ux = cb * px + sb * py + b.centre[0] - a.centre[0];
  const double uy = -sb * px + cb * py + b.centre[1] - a.centre[1];
  m.translation = {ca * ux - sa * uy + a.centre[0] + a.translation[0], sa * ux + ca * uy + a.centre[1] + a.translation[1]};
  return m;
}

// The search's translation at the true rotation, over three draws of two sections sharing 70%:
// the mean offset of section 1's cells from their truth along the slide (the tissue's +x, the way
// section 1's window lies from section 0's; negative: back toward more overlap). With a cell
// outside the overlap scored at the truncation (unmatched_cost = 1) a nearly-right match along a
// layer outscores it and the search slides back: -20.9 units measured (spacing ~10); the
// default's 0.7 halves that (-11.2; the rest is not understood). Asserted: the slide at 1, and
// the default's at most 70% of it.
TEST(SearchRegistration, UnmatchedCostBelowTheTruncationHalvesTheSlideTowardMoreOverlap) {
  double slide[2] = {0.0, 0.0};
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const Stack s = make_stack(2000, seed);
    const datagen::TissueSection& a = s.tissue.sections[0];
    const datagen::TissueSection& b = s.tissue.sections[1];
    const RigidTransform truth = true_motion(a, b);
    const std::vector<double> at_truth = truth.apply(b.observed);
    for (int variant = 0; variant < 2; ++variant) {
      SearchOptions options;
      if (variant == 1) options.unmatched_cost = 1.0;
      const SearchResult r = search_registration(a.observed, s.sections[0].features, b.observed,
                                                 s.sections[1].features, truth, options);
      const std::vector<double> placed = r.transform.apply(b.observed);
      double along = 0.0;  // the tissue's +x in section 0's observed frame: R_0 (1, 0)
      for (Index j = 0; j < b.n; ++j)
        along += (placed[2 * j] - at_truth[2 * j]) * std::cos(a.angle) +
                 (placed[2 * j + 1] - at_truth[2 * j + 1]) * std::sin(a.angle);
      slide[variant] += along / b.n / 3.0;
    }
  }
  EXPECT_LE(slide[1], -14.0) << "unmatched_cost 1: mean slide " << slide[1] << " units";
  EXPECT_GE(slide[0], 0.7 * slide[1]) << "default: mean slide " << slide[0] << " units (1: " << slide[1] << ")";
}

TEST(SlicesPartialOverlap, PlanFitAloneIsOffByTheNonSharedWidth) {
  const Stack s = make_stack(2000, 0);
  const SlicesResult r = align(s, RegistrationMode::kPlan, std::nullopt);
  ASSERT_FALSE(r.pairs[0].searched);
  EXPECT_GE(registration_error(s, r), kPlanFitErrorAtLeast);
}

}  // namespace
}  // namespace gw::spatial

namespace gw::spatial {
namespace {

// Points uniform in [0, w] x [0, h] with features that vary smoothly with position plus noise
// (a stand-in for tissue domains): f = (sin(x / 90), cos(y / 70), sin((x + y) / 120)) + noise.
void synthetic_tissue(Index n, double w, double h, std::uint64_t seed, std::vector<double>& xy,
                      DenseMatrix<double>& features) {
  Rng rng(seed);
  xy.resize(static_cast<std::size_t>(n) * 2);
  features = DenseMatrix<double>(n, 3, std::vector<double>(static_cast<std::size_t>(n) * 3));
  for (Index i = 0; i < n; ++i) {
    const double x = w * rng.uniform(), y = h * rng.uniform();
    xy[2 * i] = x;
    xy[2 * i + 1] = y;
    features.values[3 * i] = std::sin(x / 90.0) + 0.3 * rng.normal();
    features.values[3 * i + 1] = std::cos(y / 70.0) + 0.3 * rng.normal();
    features.values[3 * i + 2] = std::sin((x + y) / 120.0) + 0.3 * rng.normal();
  }
}

TEST(NicheFeatures, MatchPlainMeansOverTheRadius) {
  std::vector<double> xy;
  DenseMatrix<double> f;
  synthetic_tissue(700, 300.0, 200.0, 4, xy, f);
  const double radius = 17.0;
  const DenseMatrix<double> niche = niche_features(xy, f, radius);
  double worst = 0.0;
  for (Index i = 0; i < 700; ++i) {
    std::vector<double> sum(3, 0.0);
    int count = 0;
    for (Index j = 0; j < 700; ++j) {
      if (std::hypot(xy[2 * i] - xy[2 * j], xy[2 * i + 1] - xy[2 * j + 1]) > radius) continue;
      for (int c = 0; c < 3; ++c) sum[c] += f(j, c);
      ++count;
    }
    for (int c = 0; c < 3; ++c) worst = std::max(worst, std::abs(niche(i, c) - sum[c] / count));
  }
  // Same sums in a different order: rounding only.
  EXPECT_LE(worst, 1e-12);
}

// The moving section is the right 70% of a field, rotated and shifted; the fixed one the left 70%
// of the same field (40% of the width shared). From a start 60 units and 0 degrees off, the
// search must find the motion.
TEST(SearchRegistration, RecoversAShiftedPartialOverlapFromExpression) {
  std::vector<double> xy;
  DenseMatrix<double> f;
  synthetic_tissue(6000, 1000.0, 600.0, 8, xy, f);
  std::vector<double> fixed, moving_true;
  std::vector<double> fv, mv;
  for (Index i = 0; i < 6000; ++i) {
    const double x = xy[2 * i];
    if (x <= 700.0) {
      fixed.insert(fixed.end(), {x, xy[2 * i + 1]});
      for (int c = 0; c < 3; ++c) fv.push_back(f(i, c));
    }
    if (x >= 300.0) {
      moving_true.insert(moving_true.end(), {x, xy[2 * i + 1]});
      for (int c = 0; c < 3; ++c) mv.push_back(f(i, c));
    }
  }
  const Index n = static_cast<Index>(fixed.size() / 2), k = static_cast<Index>(moving_true.size() / 2);
  // The moving section's own coordinates: its true ones under the inverse of a known motion.
  RigidTransform truth = RigidTransform::identity(2);
  const double a = 0.6;
  truth.rotation = {std::cos(a), -std::sin(a), std::sin(a), std::cos(a)};
  truth.translation = {40.0, -25.0};
  std::vector<double> moving(moving_true.size());
  for (Index j = 0; j < k; ++j) {  // y = R^T (x - t)
    const double u = moving_true[2 * j] - 40.0, v = moving_true[2 * j + 1] + 25.0;
    moving[2 * j] = std::cos(a) * u + std::sin(a) * v;
    moving[2 * j + 1] = -std::sin(a) * u + std::cos(a) * v;
  }
  RigidTransform start = truth;
  start.translation = {40.0 + 60.0, -25.0 + 10.0};
  const SearchResult r = search_registration(fixed, DenseMatrix<double>(n, 3, fv), moving,
                                             DenseMatrix<double>(k, 3, mv), start);
  const std::vector<double> placed = r.transform.apply(moving);
  double error = 0.0;
  for (Index j = 0; j < k; ++j)
    error += std::hypot(placed[2 * j] - moving_true[2 * j], placed[2 * j + 1] - moving_true[2 * j + 1]);
  error /= static_cast<double>(k);
  // The field's spacing is about 10 units; the start's error 61. Measured: see the message.
  EXPECT_LE(error, 5.0) << "mean error " << error << " units, start 61";
  EXPECT_GT(r.candidates, 0);
  // 40% of the width is shared: about 4/7 of the moving cells can match.
  EXPECT_NEAR(r.matched_fraction, 4.0 / 7.0, 0.2);
}

}  // namespace
}  // namespace gw::spatial

namespace gw::spatial {
namespace {

// A partial overlap runs on the dense plan only; sections whose dense plan exceeds the memory
// budget are refused before any solve (the balanced solves of the search and of the overlap
// estimate would otherwise run first), with a message naming both sections and the dispatcher's
// sizes. Random sections: nothing is solved, so no realistic tissue is needed.
TEST(SlicesPartialOverlap, TooLargeForTheDensePlanIsRefusedBeforeAnySolve) {
  Rng rng(21);
  std::vector<SectionData> sections(2);
  for (int s = 0; s < 2; ++s) {
    sections[s].name = "big_" + std::to_string(s);
    sections[s].n = 3000;
    sections[s].coordinates.resize(6000);
    for (double& v : sections[s].coordinates) v = 1000.0 * rng.uniform();
    sections[s].features = DenseMatrix<double>(3000, 4, std::vector<double>(12000));
    for (double& v : sections[s].features.values) v = rng.normal();
  }
  SlicesOptions options;
  options.solver.fused_weight = 0.9;
  // The 3,000 x 3,000 problem needs ~257 MiB dense, ~93 MiB on the sparse support.
  options.solver.memory_limit = std::size_t{128} << 20;
  for (const bool estimate : {false, true}) {
    options.estimate_overlap = estimate;
    options.overlap = estimate ? std::nullopt : std::optional<double>(0.7);
    int pairs_done = 0;
    try {
      align_sections(sections, options, [&](int, int) { return ++pairs_done > 0; });
      ADD_FAILURE() << "a partial overlap beyond the memory budget was accepted";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("'big_0' and 'big_1' cannot be aligned with a partial overlap (checked before any solve)"),
                std::string::npos)
          << what;
      EXPECT_EQ(pairs_done, 0);
    }
  }
  // Balanced sections of the same size take the sparse support under the same budget.
  options.estimate_overlap = false;
  options.overlap.reset();
  options.registration_mode = RegistrationMode::kPlan;
  EXPECT_NO_THROW(align_sections(sections, options));
}

}  // namespace
}  // namespace gw::spatial
