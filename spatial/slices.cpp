#include "spatial/slices.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "core/error.h"
#include "graph/knn.h"
#include "solver/solve.h"
#include "solver/strategy.h"
#include "spatial/grid2d.h"
#include "spatial/plan_view.h"
#include "spatial/search.h"

namespace gw::spatial {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Fraction of `a`'s points within `radius` of some point of `b`.
double covered_fraction(const std::vector<double>& a, const Grid2d& b, double radius) {
  const std::size_t n = a.size() / 2;
  std::size_t covered = 0;
  for (std::size_t i = 0; i < n; ++i) covered += b.nearest(a[2 * i], a[2 * i + 1]) <= radius ? 1 : 0;
  return static_cast<double>(covered) / static_cast<double>(std::max<std::size_t>(n, 1));
}

Problem pair_problem(const SectionData& fixed, const SectionData& moving, const Options& options) {
  Problem problem;
  problem.source = Geometry::from_points(fixed.coordinates, fixed.n, fixed.dimension);
  problem.target = Geometry::from_points(moving.coordinates, moving.n, moving.dimension);
  if (options.fused_weight > 0.0) {
    problem.source_features = fixed.features;
    problem.target_features = moving.features;
  }
  return problem;
}

Options pair_options(const SectionData& fixed, const SectionData& moving, const Options& options,
                     std::optional<double> overlap) {
  Options o = options;
  if (overlap && *overlap < 1.0) o.partial_mass = *overlap * static_cast<double>(std::max(fixed.n, moving.n));
  return o;
}

Result solve_pair(const SectionData& fixed, const SectionData& moving, const Options& options,
                  std::optional<double> overlap) {
  try {
    return solve(pair_problem(fixed, moving, options), pair_options(fixed, moving, options, overlap));
  } catch (const Error& e) {
    throw Error(e.code(), "aligning '" + fixed.name + "' and '" + moving.name + "': " + e.what());
  }
}

// A partial overlap runs on the dense plan only (the dispatcher's rule): a pair too large for it
// fails here, before any solve, rather than after the balanced solves the search and the overlap
// estimate run first (minutes at 10^5 cells). An estimated overlap is checked at half the mass
// (any partial mass takes the same path).
void check_partial_pairs(const std::vector<SectionData>& sections, const std::vector<std::pair<int, int>>& order,
                         const SlicesOptions& options) {
  const bool partial = (options.overlap && *options.overlap < 1.0) || options.estimate_overlap;
  if (!partial) return;
  const double overlap = options.estimate_overlap ? 0.5 : *options.overlap;
  for (const auto& [f, m] : order) {
    const SectionData& fixed = sections[f];
    const SectionData& moving = sections[m];
    try {
      choose_strategy(pair_problem(fixed, moving, options.solver),
                      pair_options(fixed, moving, options.solver, overlap));
    } catch (const Error& e) {
      throw Error(e.code(), "sections '" + fixed.name + "' and '" + moving.name +
                                "' cannot be aligned with a partial overlap (checked before any solve): " + e.what());
    }
  }
}

// Features for a refinement round: each cell's expression features followed by its registered
// coordinates times `coordinate_scale`.
DenseMatrix<double> with_coordinates(const SectionData& s, const std::vector<double>& registered,
                                     double coordinate_scale) {
  const Index f = s.features.cols;
  DenseMatrix<double> out(s.n, f + 2, std::vector<double>(static_cast<std::size_t>(s.n) * (f + 2)));
  for (Index i = 0; i < s.n; ++i) {
    double* row = &out.values[static_cast<std::size_t>(i) * (f + 2)];
    for (Index c = 0; c < f; ++c) row[c] = s.features(i, c);
    row[f] = registered[2 * static_cast<std::size_t>(i)] * coordinate_scale;
    row[f + 1] = registered[2 * static_cast<std::size_t>(i) + 1] * coordinate_scale;
  }
  return out;
}

// sum P_ij |R y_j + t - x_i|^2 of `reg`'s motion, into reg.residual / rms_residual / mass.
void set_residual(const PlanView& plan, const std::vector<double>& source, const std::vector<double>& target,
                  Registration& reg) {
  const std::vector<double> moved = reg.transform.apply(target);
  double residual = 0.0, mass = 0.0;
  for (Index i = 0; i < plan.rows(); ++i) {
    plan.for_each_in_row(i, [&](Index j, double p) {
      if (p <= 0.0) return;
      const double dx = moved[2 * static_cast<std::size_t>(j)] - source[2 * static_cast<std::size_t>(i)];
      const double dy = moved[2 * static_cast<std::size_t>(j) + 1] - source[2 * static_cast<std::size_t>(i) + 1];
      residual += p * (dx * dx + dy * dy);
      mass += p;
    });
  }
  reg.residual = residual;
  reg.mass = mass;
  reg.rms_residual = mass > 0.0 ? std::sqrt(residual / mass) : 0.0;
}

bool search_active(const SlicesOptions& o) {
  if (o.registration_mode == RegistrationMode::kPlan || o.solver.fused_weight <= 0.0) return false;
  if (o.registration_mode == RegistrationMode::kSearch) return true;
  return o.estimate_overlap || (o.overlap && *o.overlap < 1.0);
}

// The pattern-search registration of `moving` onto `fixed` (given in the common frame by
// `fixed_xy`): the balanced fused plan (kept in pair.result) gives the rough rotation, a
// balanced plan on the geometry alone the rotation of the shape (a fused plan between sections
// that share part of their area is pulled off it by the expression of the non-shared cells;
// the geometric plan is pulled only along the shape's own symmetries -- the direction of the
// overlap's offset, and a half turn for a centrally symmetric outline, resolved by the fused
// plan's rotation), and search_registration the position from the expression.
void search_pair(const SectionData& fixed, const SectionData& moving, const std::vector<double>& fixed_xy,
                 const SlicesOptions& options, PairAlignment& pair) {
  pair.result = solve_pair(fixed, moving, options.solver, std::nullopt);
  Options geometric = options.solver;
  geometric.fused_weight = 0.0;
  geometric.support_feature_candidates = 0;
  const Result shape = solve_pair(fixed, moving, geometric, std::nullopt);
  const auto reg_start = std::chrono::steady_clock::now();
  const Registration fused = register_sections(plan_of(pair.result), fixed_xy, moving.coordinates, 2,
                                               options.registration);
  Registration start = register_sections(plan_of(shape), fixed_xy, moving.coordinates, 2, options.registration);
  // The geometric plan fixes the outline's rotation up to its symmetries: for a centrally
  // symmetric outline (a rectangular field of view) the half turn fits as well. Both are searched
  // and the better expression score kept (the fused plan's rotation, pulled by the non-shared
  // cells, does not reliably tell them apart).
  const std::vector<double> moved = start.transform.apply(moving.coordinates);
  double c[2] = {0.0, 0.0};
  for (std::size_t v = 0; v < moved.size(); v += 2) {
    c[0] += moved[v] * 2.0 / static_cast<double>(moved.size());
    c[1] += moved[v + 1] * 2.0 / static_cast<double>(moved.size());
  }
  RigidTransform half = RigidTransform::identity(2);
  half.rotation = {-1.0, 0.0, 0.0, -1.0};
  half.translation = {2.0 * c[0], 2.0 * c[1]};
  pair.search = search_registration(fixed_xy, fixed.features, moving.coordinates, moving.features, start.transform,
                                    options.search_options);
  const SearchResult turned = search_registration(fixed_xy, fixed.features, moving.coordinates, moving.features,
                                                  half.compose(start.transform), options.search_options);
  if (turned.score < pair.search.score) pair.search = turned;
  pair.searched = true;
  pair.registration = fused;
  pair.registration.transform = pair.search.transform;
  set_residual(plan_of(pair.result), fixed_xy, moving.coordinates, pair.registration);
  pair.register_seconds += seconds_since(reg_start);
}

}  // namespace

const char* to_string(RegistrationMode mode) {
  switch (mode) {
    case RegistrationMode::kAuto: return "auto";
    case RegistrationMode::kPlan: return "plan";
    case RegistrationMode::kSearch: return "search";
  }
  return "?";
}

RegistrationMode registration_mode_from_string(std::string_view text) {
  if (text == "auto") return RegistrationMode::kAuto;
  if (text == "plan") return RegistrationMode::kPlan;
  if (text == "search") return RegistrationMode::kSearch;
  GW_THROW(ErrorCode::kInvalidArgument, "registration must be auto, plan or search, got '" << text << "'");
}

PlanView plan_of(const Result& result) {
  if (!result.plan.empty()) return PlanView::dense(result.plan, result.n, result.k);
  return PlanView::csr(result.plan_topk);
}

SlicesResult align_sections(const std::vector<SectionData>& sections, const SlicesOptions& options,
                            const SlicesProgress& progress) {
  const int count = static_cast<int>(sections.size());
  GW_CHECK(count >= 2, "aligning sections needs at least 2, got " << count);
  GW_CHECK(options.reference >= -1 && options.reference < count,
           "reference section " << options.reference << " is out of range [0, " << count << ")");
  GW_CHECK(!options.overlap || (*options.overlap > 0.0 && *options.overlap <= 1.0),
           "overlap must be a mass fraction in (0, 1], got " << *options.overlap);
  GW_CHECK(options.registration_mode != RegistrationMode::kSearch || options.solver.fused_weight > 0.0,
           "registration = search needs expression features (fused_weight > 0)");
  for (const SectionData& s : sections) {
    GW_CHECK(s.dimension == 2, "section '" << s.name << "' has " << s.dimension
                                           << "-D coordinates; sections are aligned in 2-D");
    GW_CHECK(s.coordinates.size() == static_cast<std::size_t>(s.n) * 2,
             "section '" << s.name << "': " << s.coordinates.size() << " coordinates for " << s.n << " cells");
    if (options.solver.fused_weight > 0.0) {
      GW_CHECK(s.features.rows == s.n && s.features.cols == sections[0].features.cols,
               "section '" << s.name << "': features are " << s.features.rows << " x "
                           << s.features.cols << ", expected " << s.n << " x " << sections[0].features.cols);
    }
  }
  SlicesResult out;
  out.transforms.assign(count, RigidTransform::identity(2));
  std::vector<std::vector<double>> registered(count);
  std::vector<std::pair<int, int>> order;
  if (options.reference < 0) {
    for (int s = 1; s < count; ++s) order.emplace_back(s - 1, s);
  } else {
    for (int s = 0; s < count; ++s)
      if (s != options.reference) order.emplace_back(options.reference, s);
  }
  check_partial_pairs(sections, order, options);
  const int anchor = options.reference < 0 ? 0 : options.reference;
  registered[anchor] = sections[anchor].coordinates;
  for (const auto& [f, m] : order) {
    PairAlignment pair;
    pair.fixed = f;
    pair.moving = m;
    // The fixed side is given in the common frame: the plan is the same (distances are invariant
    // under the motion) and the registration then lands the moving section in that frame.
    const SectionData& fixed = sections[f];
    const auto start = std::chrono::steady_clock::now();
    const SectionData& moving = sections[m];
    std::optional<double> overlap = options.overlap;
    const bool search = search_active(options);
    if (search) {
      // Balanced fused plan (rough rotation), geometric plan (the shape's rotation), the
      // expression search for the position (search_pair); the partial plan, if any, afterwards.
      search_pair(fixed, moving, registered[f], options, pair);
    } else if (options.estimate_overlap) {
      pair.result = solve_pair(fixed, moving, options.solver, std::nullopt);
      pair.registration = register_sections(plan_of(pair.result), registered[f], moving.coordinates, 2,
                                            options.registration);
    }
    if (options.estimate_overlap) {
      // The registered sections' mutual coverage is the overlap.
      const std::vector<double> moved = pair.registration.transform.apply(moving.coordinates);
      const Grid2d fixed_grid(registered[f]);
      const Grid2d moved_grid(moved);
      const double radius = options.overlap_radius * median_spacing(registered[f], fixed_grid);
      overlap = std::min(covered_fraction(moved, fixed_grid, radius),
                         covered_fraction(registered[f], moved_grid, radius));
      overlap = std::clamp(*overlap, 0.05, 1.0);
    }
    pair.overlap = overlap.value_or(1.0);
    const bool partial = overlap && *overlap < 1.0;
    if (!search && (partial || !options.estimate_overlap)) {
      pair.result = solve_pair(fixed, moving, options.solver, overlap);
      const auto reg_start = std::chrono::steady_clock::now();
      pair.registration = register_sections(plan_of(pair.result), registered[f], moving.coordinates, 2,
                                            options.registration);
      pair.register_seconds += seconds_since(reg_start);
    }
    // With the search, a partial plan is solved once in the registered frame, so that its mass
    // stays on the overlap the search found; the rounds then only sharpen the plan (the search's
    // motion is kept). Without it, each round registers again from its plan.
    const int rounds = search && partial ? std::max(options.refine, 1) : options.refine;
    if (rounds > 0) {
      const Grid2d fixed_grid(registered[f]);
      const double radius = options.refine_radius * median_spacing(registered[f], fixed_grid);
      const double expression_sq =
          options.solver.fused_weight > 0.0 ? mean_pair_sq_distance(fixed.features, moving.features) : 0.0;
      // Without expression features the coordinates alone make the cost (scale 1 / radius).
      const double scale = (expression_sq > 0.0 ? std::sqrt(expression_sq) : 1.0) / std::max(radius, 1e-300);
      Options refine_options = options.solver;
      if (refine_options.fused_weight <= 0.0) refine_options.fused_weight = 0.9;
      SectionData fixed_aug = fixed, moving_aug = moving;
      fixed_aug.features = with_coordinates(fixed, registered[f], scale);
      for (int round = 0; round < rounds; ++round) {
        moving_aug.features =
            with_coordinates(moving, pair.registration.transform.apply(moving.coordinates), scale);
        pair.result = solve_pair(fixed_aug, moving_aug, refine_options, overlap);
        const auto reg_start = std::chrono::steady_clock::now();
        if (search) {
          set_residual(plan_of(pair.result), registered[f], moving.coordinates, pair.registration);
        } else {
          pair.registration = register_sections(plan_of(pair.result), registered[f], moving.coordinates, 2,
                                                options.registration);
        }
        pair.register_seconds += seconds_since(reg_start);
        ++pair.refinements;
      }
    }
    pair.solve_seconds = seconds_since(start) - pair.register_seconds;
    pair.overlap_mass = pair.result.plan_mass;
    out.transforms[m] = pair.registration.transform;
    registered[m] = pair.registration.transform.apply(sections[m].coordinates);
    out.pairs.push_back(std::move(pair));
    if (progress && !progress(static_cast<int>(out.pairs.size()), static_cast<int>(order.size()))) {
      return out;
    }
  }
  for (int s = 0; s < count; ++s) {
    std::vector<double> xyz;
    xyz.reserve(static_cast<std::size_t>(sections[s].n) * 3);
    for (Index i = 0; i < sections[s].n; ++i) {
      xyz.push_back(registered[s][2 * static_cast<std::size_t>(i)]);
      xyz.push_back(registered[s][2 * static_cast<std::size_t>(i) + 1]);
      xyz.push_back(s * options.z_spacing);
    }
    out.aligned.push_back(std::move(xyz));
  }
  return out;
}

}  // namespace gw::spatial
