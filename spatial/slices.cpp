#include "spatial/slices.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "graph/knn.h"
#include "solver/solve.h"
#include "spatial/plan_view.h"

namespace gw::spatial {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Nearest-point distances in 2-D from a uniform grid over `points` (cells about one point each):
// exact, O(1) expected per query for the evenly spread cells of a section.
class Grid2d {
 public:
  explicit Grid2d(const std::vector<double>& points) : points_(points) {
    const std::size_t n = points.size() / 2;
    lo_[0] = lo_[1] = std::numeric_limits<double>::infinity();
    double hi[2] = {-lo_[0], -lo_[1]};
    for (std::size_t i = 0; i < n; ++i) {
      for (int a = 0; a < 2; ++a) {
        lo_[a] = std::min(lo_[a], points[2 * i + a]);
        hi[a] = std::max(hi[a], points[2 * i + a]);
      }
    }
    const double area = std::max((hi[0] - lo_[0]) * (hi[1] - lo_[1]), 1e-300);
    cell_ = std::max(std::sqrt(area / static_cast<double>(std::max<std::size_t>(n, 1))), 1e-12);
    for (int a = 0; a < 2; ++a) dims_[a] = static_cast<long>((hi[a] - lo_[a]) / cell_) + 1;
    start_.assign(static_cast<std::size_t>(dims_[0] * dims_[1]) + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++start_[bucket(points[2 * i], points[2 * i + 1]) + 1];
    for (std::size_t b = 1; b < start_.size(); ++b) start_[b] += start_[b - 1];
    order_.resize(n);
    std::vector<std::size_t> fill(start_.begin(), start_.end() - 1);
    for (std::size_t i = 0; i < n; ++i) order_[fill[bucket(points[2 * i], points[2 * i + 1])]++] = i;
  }

  // Distance from (x, y) to the nearest point, skipping index `skip`.
  double nearest(double x, double y, std::size_t skip = SIZE_MAX) const {
    const long cx = clampi(static_cast<long>((x - lo_[0]) / cell_), dims_[0]);
    const long cy = clampi(static_cast<long>((y - lo_[1]) / cell_), dims_[1]);
    double best = std::numeric_limits<double>::infinity();
    for (long ring = 0; ring <= std::max(dims_[0], dims_[1]); ++ring) {
      for (long gx = cx - ring; gx <= cx + ring; ++gx) {
        for (long gy = cy - ring; gy <= cy + ring; ++gy) {
          if (std::max(std::abs(gx - cx), std::abs(gy - cy)) != ring) continue;
          if (gx < 0 || gy < 0 || gx >= dims_[0] || gy >= dims_[1]) continue;
          const std::size_t b = static_cast<std::size_t>(gx * dims_[1] + gy);
          for (std::size_t p = start_[b]; p < start_[b + 1]; ++p) {
            const std::size_t i = order_[p];
            if (i == skip) continue;
            best = std::min(best, std::hypot(points_[2 * i] - x, points_[2 * i + 1] - y));
          }
        }
      }
      // Every point outside the rings searched is at least ring x cell away from the query's cell.
      if (best <= ring * cell_) break;
    }
    return best;
  }

 private:
  static long clampi(long v, long dim) { return std::clamp(v, 0L, dim - 1); }
  std::size_t bucket(double x, double y) const {
    const long gx = clampi(static_cast<long>((x - lo_[0]) / cell_), dims_[0]);
    const long gy = clampi(static_cast<long>((y - lo_[1]) / cell_), dims_[1]);
    return static_cast<std::size_t>(gx * dims_[1] + gy);
  }
  const std::vector<double>& points_;
  double lo_[2];
  double cell_ = 1.0;
  long dims_[2] = {1, 1};
  std::vector<std::size_t> start_;
  std::vector<std::size_t> order_;
};

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Fraction of `a`'s points within `radius` of some point of `b`.
double covered_fraction(const std::vector<double>& a, const Grid2d& b, double radius) {
  const std::size_t n = a.size() / 2;
  std::size_t covered = 0;
  for (std::size_t i = 0; i < n; ++i) covered += b.nearest(a[2 * i], a[2 * i + 1]) <= radius ? 1 : 0;
  return static_cast<double>(covered) / static_cast<double>(std::max<std::size_t>(n, 1));
}

double spacing(const std::vector<double>& points, const Grid2d& grid) {
  const std::size_t n = points.size() / 2;
  // A sample of 2,000 points is plenty for a median.
  const std::size_t stride = std::max<std::size_t>(1, n / 2000);
  std::vector<double> d;
  for (std::size_t i = 0; i < n; i += stride) d.push_back(grid.nearest(points[2 * i], points[2 * i + 1], i));
  return median(std::move(d));
}

Result solve_pair(const SectionData& fixed, const SectionData& moving, const Options& options,
                  std::optional<double> overlap) {
  Problem problem;
  problem.source = Geometry::from_points(fixed.coordinates, fixed.n, fixed.dimension);
  problem.target = Geometry::from_points(moving.coordinates, moving.n, moving.dimension);
  Options o = options;
  if (o.fused_weight > 0.0) {
    problem.source_features = fixed.features;
    problem.target_features = moving.features;
  }
  if (overlap && *overlap < 1.0) {
    o.partial_mass = *overlap * static_cast<double>(std::max(fixed.n, moving.n));
  }
  try {
    return solve(problem, o);
  } catch (const Error& e) {
    throw Error(e.code(), "aligning '" + fixed.name + "' and '" + moving.name + "': " + e.what());
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

// Mean squared distance between two sections' expression features: 2 x the pooled variance
// about each side's mean plus the squared distance of the means (exact, O((n + k) f)).
double mean_feature_sq_distance(const DenseMatrix<double>& a, const DenseMatrix<double>& b) {
  const auto moments = [](const DenseMatrix<double>& m, std::vector<double>& mean) {
    mean.assign(m.cols, 0.0);
    for (Index i = 0; i < m.rows; ++i)
      for (Index c = 0; c < m.cols; ++c) mean[c] += m(i, c) / m.rows;
    double var = 0.0;
    for (Index i = 0; i < m.rows; ++i)
      for (Index c = 0; c < m.cols; ++c) var += (m(i, c) - mean[c]) * (m(i, c) - mean[c]) / m.rows;
    return var;
  };
  std::vector<double> ma, mb;
  const double va = moments(a, ma), vb = moments(b, mb);
  double shift = 0.0;
  for (std::size_t c = 0; c < ma.size(); ++c) shift += (ma[c] - mb[c]) * (ma[c] - mb[c]);
  return va + vb + shift;
}

}  // namespace

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
    std::optional<double> overlap = options.overlap;
    if (options.estimate_overlap) {
      const Result balanced = solve_pair(fixed, sections[m], options.solver, std::nullopt);
      const Registration r = register_sections(plan_of(balanced), registered[f], sections[m].coordinates, 2,
                                               options.registration);
      const std::vector<double> moved = r.transform.apply(sections[m].coordinates);
      const Grid2d fixed_grid(registered[f]);
      const Grid2d moved_grid(moved);
      const double radius = options.overlap_radius * spacing(registered[f], fixed_grid);
      overlap = std::min(covered_fraction(moved, fixed_grid, radius),
                         covered_fraction(registered[f], moved_grid, radius));
      overlap = std::clamp(*overlap, 0.05, 1.0);
    }
    pair.result = solve_pair(fixed, sections[m], options.solver, overlap);
    pair.overlap = overlap.value_or(1.0);
    auto reg_start = std::chrono::steady_clock::now();
    pair.registration = register_sections(plan_of(pair.result), registered[f], sections[m].coordinates, 2,
                                          options.registration);
    pair.register_seconds = seconds_since(reg_start);
    if (options.refine > 0) {
      const Grid2d fixed_grid(registered[f]);
      const double radius = options.refine_radius * spacing(registered[f], fixed_grid);
      const double expression_sq =
          options.solver.fused_weight > 0.0 ? mean_feature_sq_distance(fixed.features, sections[m].features) : 0.0;
      // Without expression features the coordinates alone make the cost (scale 1 / radius).
      const double scale = (expression_sq > 0.0 ? std::sqrt(expression_sq) : 1.0) / std::max(radius, 1e-300);
      Options refine_options = options.solver;
      if (refine_options.fused_weight <= 0.0) refine_options.fused_weight = 0.9;
      SectionData fixed_aug = fixed, moving_aug = sections[m];
      fixed_aug.features = with_coordinates(fixed, registered[f], scale);
      for (int round = 0; round < options.refine; ++round) {
        moving_aug.features =
            with_coordinates(sections[m], pair.registration.transform.apply(sections[m].coordinates), scale);
        pair.result = solve_pair(fixed_aug, moving_aug, refine_options, overlap);
        reg_start = std::chrono::steady_clock::now();
        pair.registration = register_sections(plan_of(pair.result), registered[f], sections[m].coordinates, 2,
                                              options.registration);
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
