#include "spatial/grid2d.h"

namespace gw::spatial {

Grid2d::Grid2d(const std::vector<double>& points) : points_(points) {
  const std::size_t n = points.size() / 2;
  lo_[0] = lo_[1] = std::numeric_limits<double>::infinity();
  double hi[2] = {-lo_[0], -lo_[1]};
  for (std::size_t i = 0; i < n; ++i) {
    for (int a = 0; a < 2; ++a) {
      lo_[a] = std::min(lo_[a], points[2 * i + a]);
      hi[a] = std::max(hi[a], points[2 * i + a]);
    }
  }
  if (n == 0) lo_[0] = lo_[1] = hi[0] = hi[1] = 0.0;
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

std::size_t Grid2d::bucket(double x, double y) const {
  const long gx = clampi(static_cast<long>((x - lo_[0]) / cell_), dims_[0]);
  const long gy = clampi(static_cast<long>((y - lo_[1]) / cell_), dims_[1]);
  return static_cast<std::size_t>(gx * dims_[1] + gy);
}

double Grid2d::nearest(double x, double y, std::size_t skip) const {
  if (order_.empty()) return std::numeric_limits<double>::infinity();
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

std::size_t Grid2d::nearest_within(double x, double y, double radius) const {
  std::size_t best = SIZE_MAX;
  double best_dist = std::numeric_limits<double>::infinity();
  for_each_within(x, y, radius, [&](std::size_t i, double dist) {
    if (dist < best_dist) {
      best_dist = dist;
      best = i;
    }
  });
  return best;
}

double median_spacing(const std::vector<double>& points, const Grid2d& grid) {
  const std::size_t n = points.size() / 2;
  const std::size_t stride = std::max<std::size_t>(1, n / 2000);
  std::vector<double> d;
  for (std::size_t i = 0; i < n; i += stride) d.push_back(grid.nearest(points[2 * i], points[2 * i + 1], i));
  if (d.empty()) return 0.0;
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

}  // namespace gw::spatial
