#include "spatial/mapping.h"

#include "core/error.h"
#include "solver/solve.h"

namespace gw::spatial {

Result map_atlas(const AtlasData& atlas, const SectionData& section, const Options& options) {
  const Index n = atlas.geometry.rows;
  GW_CHECK(n >= 1 && atlas.geometry.cols >= 1,
           "atlas '" << atlas.name << "': its representation is " << n << " x " << atlas.geometry.cols);
  GW_CHECK(atlas.features.rows == n, "atlas '" << atlas.name << "': " << atlas.features.rows
                                               << " rows of features for " << n << " cells");
  GW_CHECK(section.dimension == 2 && section.coordinates.size() == static_cast<std::size_t>(section.n) * 2,
           "section '" << section.name << "': expected n x 2 coordinates, got " << section.coordinates.size()
                       << " values for " << section.n << " cells of dimension " << section.dimension);
  GW_CHECK(section.features.rows == section.n && section.features.cols == atlas.features.cols,
           "section '" << section.name << "': features are " << section.features.rows << " x "
                       << section.features.cols << ", expected " << section.n << " x " << atlas.features.cols
                       << " (the atlas's width)");
  Problem problem;
  problem.source = Geometry::from_points(atlas.geometry.values, n, static_cast<int>(atlas.geometry.cols));
  problem.target = Geometry::from_points(section.coordinates, section.n, 2);
  if (options.fused_weight > 0.0) {
    problem.source_features = atlas.features;
    problem.target_features = section.features;
  }
  try {
    return solve(problem, options);
  } catch (const Error& e) {
    throw Error(e.code(), "mapping atlas '" + atlas.name + "' onto '" + section.name + "': " + e.what());
  }
}

}  // namespace gw::spatial
