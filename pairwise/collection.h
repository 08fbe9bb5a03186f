// A collection of metric spaces for all-pairs GW distances, stored in one HDF5 file:
//
//   /spaces/<i>/            i = 0 .. N-1 (every index present, nothing else in /spaces)
//       points     n_i x d float (any numeric dtype) -> Euclidean distances (or kNN-graph shortest
//                  paths, see PointMetric in pair_solve.h)
//     or graph     a CSR group (data / indices / indptr + shape [n_i, n_i]) of edge lengths
//     or distances n_i x n_i dense distance matrix (symmetric, zero diagonal, >= 0)
//       weights    optional, n_i non-negative numbers with a positive sum (default uniform)
//   /labels        optional, N integers (class labels, for nearest-neighbour accuracy)
//
// Exactly one of points / graph / distances per space. Errors name the file and the dataset and
// say what to fix: a missing file, /spaces group or space -> ErrorCode::kNotFound (exit 66);
// wrong shapes, non-finite values, an extra or non-numeric name in /spaces -> kBadData (exit 65).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/types.h"
#include "solver/problem.h"

namespace gw::pairwise {

struct Space {
  Geometry geometry;
  std::vector<double> weights;  // empty: uniform
  std::string description;      // "/spaces/3: 150 x 3 points (kNN graph)"
};

struct Collection {
  std::string path;
  std::vector<Space> spaces;
  std::vector<std::int64_t> labels;  // empty, or one per space

  Index size() const { return static_cast<Index>(spaces.size()); }
};

// Reads and validates every space (O(total size); the whole collection is held in memory).
// Throws gw::Error as described above.
Collection read_collection(const std::string& path);

// A point cloud to write: n x d, row-major.
struct PointCloud {
  Index n = 0;
  int d = 0;
  std::vector<double> points;
};

// Writes point clouds as /spaces/<i>/points (float64), `labels` (empty or one per cloud) as
// /labels, and string attributes on the root; atomically (io::Writer: a temporary file renamed
// onto `path`). kCannotCreate when the directory is not writable.
void write_point_collection(const std::string& path,
                            std::span<const PointCloud> clouds,
                            std::span<const std::int64_t> labels,
                            const std::vector<std::pair<std::string, std::string>>& attributes);

}  // namespace gw::pairwise
