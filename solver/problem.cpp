#include "solver/problem.h"

#include "core/error.h"

namespace gw {

Geometry Geometry::from_points(std::vector<double> points, Index n, int d) {
  GW_CHECK(n >= 1, "a point cloud needs at least one point, got n = " << n);
  GW_CHECK(d >= 1, "point dimension must be >= 1, got " << d);
  GW_CHECK(
      points.size() == static_cast<std::size_t>(n) * d,
      "point cloud: " << points.size() << " coordinates for " << n << " points of dimension " << d);
  Geometry g;
  g.kind_ = Kind::kPoints;
  g.n_ = n;
  g.points_ = std::move(points);
  g.dimension_ = d;
  return g;
}

Geometry Geometry::from_graph(CsrGraph graph) {
  GW_CHECK(graph.num_nodes() >= 1, "a graph geometry needs at least one node");
  Geometry g;
  g.kind_ = Kind::kGraph;
  g.n_ = graph.num_nodes();
  g.graph_ = std::move(graph);
  return g;
}

Geometry Geometry::from_distances(DenseMatrix<float> distances) {
  GW_CHECK(distances.rows >= 1 && distances.rows == distances.cols,
           "a distance matrix must be square and non-empty, got " << distances.rows << " x "
                                                                  << distances.cols);
  GW_CHECK(distances.values.size() == static_cast<std::size_t>(distances.rows) * distances.cols,
           "distance matrix: " << distances.values.size() << " values for " << distances.rows
                               << " x " << distances.cols);
  Geometry g;
  g.kind_ = Kind::kDistances;
  g.n_ = distances.rows;
  g.distances_ = std::move(distances);
  return g;
}

Geometry Geometry::from_provider(std::shared_ptr<const DistanceProvider> provider) {
  GW_CHECK(provider != nullptr, "distance provider is null");
  GW_CHECK(provider->num_nodes() >= 1, "distance provider has no nodes");
  Geometry g;
  g.kind_ = Kind::kProvider;
  g.n_ = provider->num_nodes();
  g.provider_ = std::move(provider);
  return g;
}

Geometry Geometry::nodes_only(Index n) {
  GW_CHECK(n >= 1, "node count must be >= 1, got " << n);
  Geometry g;
  g.kind_ = Kind::kNodes;
  g.n_ = n;
  return g;
}

}  // namespace gw
