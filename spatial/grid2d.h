// A uniform bucket grid over 2-D points (cells of a section), for nearest-point and fixed-radius
// queries in O(1) expected time per query on evenly spread points: the bucket side is the mean
// cell spacing sqrt(bounding-box area / n), so a bucket holds about one point. Internal to the
// spatial module (slices.cpp, search.cpp); not installed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace gw::spatial {

class Grid2d {
 public:
  // `points` is n x 2 row-major and must outlive the grid.
  explicit Grid2d(const std::vector<double>& points);

  // Distance from (x, y) to the nearest point, skipping index `skip`; infinity for no points.
  double nearest(double x, double y, std::size_t skip = SIZE_MAX) const;
  // Index of the nearest point within `radius` of (x, y), or SIZE_MAX when there is none.
  std::size_t nearest_within(double x, double y, double radius) const;

  // Calls fn(index, distance) for every point within `radius` of (x, y).
  template <typename Fn>
  void for_each_within(double x, double y, double radius, Fn&& fn) const {
    const long x0 = clampi(static_cast<long>(std::floor((x - radius - lo_[0]) / cell_)), dims_[0]);
    const long x1 = clampi(static_cast<long>(std::floor((x + radius - lo_[0]) / cell_)), dims_[0]);
    const long y0 = clampi(static_cast<long>(std::floor((y - radius - lo_[1]) / cell_)), dims_[1]);
    const long y1 = clampi(static_cast<long>(std::floor((y + radius - lo_[1]) / cell_)), dims_[1]);
    for (long gx = x0; gx <= x1; ++gx) {
      for (long gy = y0; gy <= y1; ++gy) {
        const std::size_t b = static_cast<std::size_t>(gx * dims_[1] + gy);
        for (std::size_t p = start_[b]; p < start_[b + 1]; ++p) {
          const std::size_t i = order_[p];
          const double dist = std::hypot(points_[2 * i] - x, points_[2 * i + 1] - y);
          if (dist <= radius) fn(i, dist);
        }
      }
    }
  }

  std::size_t size() const { return order_.size(); }

 private:
  static long clampi(long v, long dim) { return std::clamp(v, 0L, dim - 1); }
  std::size_t bucket(double x, double y) const;

  const std::vector<double>& points_;
  double lo_[2] = {0.0, 0.0};
  double cell_ = 1.0;
  long dims_[2] = {1, 1};
  std::vector<std::size_t> start_;
  std::vector<std::size_t> order_;
};

// Median nearest-neighbour distance of `points` (from a sample of at most 2,000 of them).
double median_spacing(const std::vector<double>& points, const Grid2d& grid);

}  // namespace gw::spatial
