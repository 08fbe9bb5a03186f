#include "spatial/search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "core/error.h"
#include "spatial/grid2d.h"

namespace gw::spatial {
namespace {

double sq_distance(const DenseMatrix<double>& a, Index i, const DenseMatrix<double>& b, Index j) {
  const double* x = &a.values[static_cast<std::size_t>(i) * a.cols];
  const double* y = &b.values[static_cast<std::size_t>(j) * b.cols];
  double s = 0.0;
  for (Index c = 0; c < a.cols; ++c) s += (x[c] - y[c]) * (x[c] - y[c]);
  return s;
}

double diameter(const std::vector<double>& p) {
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  for (std::size_t i = 0; i < p.size() / 2; ++i) {
    for (int a = 0; a < 2; ++a) {
      lo[a] = std::min(lo[a], p[2 * i + a]);
      hi[a] = std::max(hi[a], p[2 * i + a]);
    }
  }
  return std::hypot(hi[0] - lo[0], hi[1] - lo[1]);
}

// A candidate motion applied after the plan's: rotate by `angle` about `centre`, then shift.
struct Candidate {
  double angle = 0.0;
  double dx = 0.0, dy = 0.0;
  double score = std::numeric_limits<double>::infinity();
};

// Everything the scoring of a candidate reads.
struct Scene {
  const std::vector<double>& fixed;
  const Grid2d& grid;
  const DenseMatrix<double>& fixed_niche;
  const std::vector<double>& moved;  // the moving cells after the plan's motion
  const DenseMatrix<double>& moving_niche;
  std::vector<Index> sample;
  double centre[2];
  double match_radius;
  double inv_scale;  // 1 / c
  double truncation;
  double unmatched;  // the cost of a cell with no fixed cell within match_radius
};

double score(const Scene& s, const Candidate& c) {
  const double cs = std::cos(c.angle), sn = std::sin(c.angle);
  double total = 0.0;
  for (const Index j : s.sample) {
    const double u = s.moved[2 * j] - s.centre[0], v = s.moved[2 * j + 1] - s.centre[1];
    const double x = s.centre[0] + cs * u - sn * v + c.dx;
    const double y = s.centre[1] + sn * u + cs * v + c.dy;
    const std::size_t i = s.grid.nearest_within(x, y, s.match_radius);
    total += i == SIZE_MAX ? s.unmatched
                           : std::min(1.0, sq_distance(s.moving_niche, j, s.fixed_niche, static_cast<Index>(i)) *
                                               s.inv_scale / s.truncation);
  }
  return total / static_cast<double>(s.sample.size());
}

// Scores angle x translation grids centred on each of `centres`; returns the `keep` best.
std::vector<Candidate> grid_search(const Scene& s, const std::vector<Candidate>& centres, int angle_steps,
                                   double angle_step, int shift_steps, double shift_step, std::size_t keep,
                                   int& scored) {
  std::vector<Candidate> all;
  for (const Candidate& c0 : centres) {
    for (int a = -angle_steps; a <= angle_steps; ++a)
      for (int ix = -shift_steps; ix <= shift_steps; ++ix)
        for (int iy = -shift_steps; iy <= shift_steps; ++iy)
          all.push_back({c0.angle + a * angle_step, c0.dx + ix * shift_step, c0.dy + iy * shift_step});
  }
  const long count = static_cast<long>(all.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (long c = 0; c < count; ++c) all[c].score = score(s, all[c]);
  scored += static_cast<int>(count);
  keep = std::min(keep, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<long>(keep), all.end(),
                    [](const Candidate& a, const Candidate& b) { return a.score < b.score; });
  all.resize(keep);
  return all;
}

// The rigid motion minimizing sum_m w_m |R y_m + t - x_m|^2 in 2-D (closed form: the angle of the
// weighted cross-covariance). Returns false when the weights sum to 0.
bool procrustes_2d(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w,
                   RigidTransform& out) {
  double mass = 0.0, xb[2] = {0, 0}, yb[2] = {0, 0};
  for (std::size_t m = 0; m < w.size(); ++m) {
    mass += w[m];
    for (int a = 0; a < 2; ++a) {
      xb[a] += w[m] * x[2 * m + a];
      yb[a] += w[m] * y[2 * m + a];
    }
  }
  if (!(mass > 0.0)) return false;
  for (int a = 0; a < 2; ++a) {
    xb[a] /= mass;
    yb[a] /= mass;
  }
  double dot = 0.0, cross = 0.0;
  for (std::size_t m = 0; m < w.size(); ++m) {
    const double yu = y[2 * m] - yb[0], yv = y[2 * m + 1] - yb[1];
    const double xu = x[2 * m] - xb[0], xv = x[2 * m + 1] - xb[1];
    dot += w[m] * (yu * xu + yv * xv);
    cross += w[m] * (yu * xv - yv * xu);
  }
  const double angle = std::atan2(cross, dot);
  const double cs = std::cos(angle), sn = std::sin(angle);
  out = RigidTransform::identity(2);
  out.rotation = {cs, -sn, sn, cs};
  out.translation = {xb[0] - (cs * yb[0] - sn * yb[1]), xb[1] - (sn * yb[0] + cs * yb[1])};
  return true;
}

// The plan's motion followed by a candidate's, as one transform of the raw moving coordinates.
RigidTransform compose_candidate(const RigidTransform& start, const Candidate& c, const double centre[2]) {
  const double cs = std::cos(c.angle), sn = std::sin(c.angle);
  RigidTransform step = RigidTransform::identity(2);
  step.rotation = {cs, -sn, sn, cs};
  step.translation = {centre[0] - (cs * centre[0] - sn * centre[1]) + c.dx,
                      centre[1] - (sn * centre[0] + cs * centre[1]) + c.dy};
  return step.compose(start);
}

}  // namespace

double mean_pair_sq_distance(const DenseMatrix<double>& a, const DenseMatrix<double>& b) {
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

DenseMatrix<double> niche_features(const std::vector<double>& points, const DenseMatrix<double>& features,
                                   double radius) {
  const Index n = static_cast<Index>(points.size() / 2);
  GW_CHECK(features.rows == n, "niche features: " << features.rows << " feature rows for " << n << " points");
  const Grid2d grid(points);
  const Index f = features.cols;
  DenseMatrix<double> out(n, f, std::vector<double>(static_cast<std::size_t>(n) * f, 0.0));
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) {
    double* row = &out.values[static_cast<std::size_t>(i) * f];
    int count = 0;
    grid.for_each_within(points[2 * i], points[2 * i + 1], radius, [&](std::size_t j, double) {
      const double* src = &features.values[j * f];
      for (Index c = 0; c < f; ++c) row[c] += src[c];
      ++count;
    });
    for (Index c = 0; c < f; ++c) row[c] /= std::max(count, 1);
  }
  return out;
}

SearchResult search_registration(const std::vector<double>& fixed, const DenseMatrix<double>& fixed_features,
                                 const std::vector<double>& moving, const DenseMatrix<double>& moving_features,
                                 const RigidTransform& start, const SearchOptions& options) {
  const Index n = static_cast<Index>(fixed.size() / 2), k = static_cast<Index>(moving.size() / 2);
  GW_CHECK(n > 0 && k > 0, "pattern search: a section has no cells");
  GW_CHECK(fixed_features.rows == n && moving_features.rows == k && fixed_features.cols == moving_features.cols,
           "pattern search: features are " << fixed_features.rows << " x " << fixed_features.cols << " and "
                                            << moving_features.rows << " x " << moving_features.cols << " for "
                                            << n << " and " << k << " cells");
  GW_CHECK(start.dimension == 2, "pattern search registers 2-D sections");
  const Grid2d grid(fixed);
  const double spacing = std::max(median_spacing(fixed, grid), 1e-12);
  const std::vector<double> moved = start.apply(moving);
  const DenseMatrix<double> fixed_niche = niche_features(fixed, fixed_features, options.niche_radius * spacing);
  const DenseMatrix<double> moving_niche = niche_features(moving, moving_features, options.niche_radius * spacing);
  const double c = mean_pair_sq_distance(fixed_niche, moving_niche);
  Scene scene{fixed,        grid, fixed_niche, moved, moving_niche, {}, {0.0, 0.0}, options.match_radius * spacing,
              c > 0.0 ? 1.0 / c : 0.0, options.truncation, options.unmatched_cost};
  for (Index j = 0; j < k; ++j) {
    scene.centre[0] += moved[2 * j] / k;
    scene.centre[1] += moved[2 * j + 1] / k;
  }
  // A stride sample with an irrational step covers the section evenly, reproducibly.
  const Index sample = std::min(k, std::max<Index>(options.sample, 1));
  for (Index s = 0; s < sample; ++s) {
    scene.sample.push_back(static_cast<Index>(std::fmod(s * 0.6180339887498949 * k, static_cast<double>(k))));
  }

  SearchResult out;
  Candidate best;
  best.score = score(scene, best);
  if (options.extent > 0.0) {
    // Two scales. Coarse: niche features over coarse_niche_radius spacings and the untruncated
    // cost, shifts every 5 spacings over the whole extent -- a smooth score whose optimum is in
    // the right basin (the fine niches' score, noisier, has spurious optima far off). Fine: the
    // niche_radius features and the truncated cost, shifts every 1.25 then 0.31 spacings within
    // two coarse steps of the 4 best coarse candidates. Rotations, when searched (max_angle > 0),
    // every 0.07, 0.0175 and 0.0044 rad.
    const DenseMatrix<double> fixed_coarse = niche_features(fixed, fixed_features, options.coarse_niche_radius * spacing);
    const DenseMatrix<double> moving_coarse =
        niche_features(moving, moving_features, options.coarse_niche_radius * spacing);
    const double c_coarse = mean_pair_sq_distance(fixed_coarse, moving_coarse);
    const Scene coarse{fixed,        grid, fixed_coarse, moved, moving_coarse, scene.sample, {scene.centre[0], scene.centre[1]},
                       scene.match_radius, c_coarse > 0.0 ? 1.0 / c_coarse : 0.0, /*truncation=*/1.0,
                       /*unmatched=*/1.0};
    const double shift_step = 5.0 * spacing, angle_step = 0.07;
    const int shift_steps = static_cast<int>(std::ceil(options.extent * diameter(fixed) / shift_step));
    const int angle_steps = static_cast<int>(std::ceil(options.max_angle / angle_step));
    const int fine_angles = angle_steps > 0 ? 2 : 0;
    std::vector<Candidate> level = grid_search(coarse, {Candidate{}}, angle_steps, angle_step, shift_steps,
                                               shift_step, 4, out.candidates);
    level = grid_search(scene, level, fine_angles, angle_step / 4, 8, shift_step / 4, 1, out.candidates);
    level = grid_search(scene, level, fine_angles, angle_step / 16, 4, shift_step / 16, 1, out.candidates);
    if (!level.empty() && level[0].score < best.score) best = level[0];
  }
  RigidTransform transform = compose_candidate(start, best, scene.centre);

  // Trimmed ICP from the searched motion (niche features are per cell and invariant under the
  // motion: computed once).
  const double radius = options.match_radius * spacing;
  std::vector<double> x(2 * static_cast<std::size_t>(k)), y(2 * static_cast<std::size_t>(k)), w(k);
  for (int round = 0; round < options.icp_rounds; ++round) {
    const std::vector<double> now = transform.apply(moving);
    Index matched = 0;
#pragma omp parallel for schedule(static) reduction(+ : matched)
    for (Index j = 0; j < k; ++j) {
      double best_cost = std::numeric_limits<double>::infinity(), best_feature = 1.0;
      std::size_t best_i = SIZE_MAX;
      grid.for_each_within(now[2 * j], now[2 * j + 1], radius, [&](std::size_t i, double dist) {
        const double feature = sq_distance(moving_niche, j, fixed_niche, static_cast<Index>(i)) * scene.inv_scale;
        const double cost = dist * dist / (radius * radius) + feature;
        if (cost < best_cost) {
          best_cost = cost;
          best_feature = feature;
          best_i = i;
        }
      });
      w[j] = 0.0;
      if (best_i != SIZE_MAX && best_feature < options.truncation) {
        const double u = best_feature / options.truncation;
        w[j] = (1.0 - u) * (1.0 - u);
        x[2 * j] = fixed[2 * best_i];
        x[2 * j + 1] = fixed[2 * best_i + 1];
        ++matched;
      }
      y[2 * j] = moving[2 * j];
      y[2 * j + 1] = moving[2 * j + 1];
    }
    out.matched_fraction = static_cast<double>(matched) / static_cast<double>(k);
    RigidTransform next;
    if (!procrustes_2d(x, y, w, next)) break;
    ++out.icp_rounds;
    // Converged when no cell moves more than 1e-3 spacings between rounds.
    double shift = 0.0;
    const std::vector<double> after = next.apply(moving);
    for (std::size_t v = 0; v < after.size(); v += 2)
      shift = std::max(shift, std::hypot(after[v] - now[v], after[v + 1] - now[v + 1]));
    transform = next;
    if (shift < 1e-3 * spacing) break;
  }
  out.transform = transform;
  const std::vector<double> final_moved = transform.apply(moving);
  const Scene last{fixed, grid, fixed_niche, final_moved, moving_niche, scene.sample, {0.0, 0.0},
                   scene.match_radius, scene.inv_scale, scene.truncation, scene.unmatched};
  out.score = score(last, Candidate{});
  return out;
}

}  // namespace gw::spatial
