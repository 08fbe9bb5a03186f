// The surface-mesh generator (tools/datagen/mesh.h): valid connected meshes of the requested size
// for every kind, the jitter-and-permute protocol, and the property the benchmark relies on -- the
// true map of a jittered, permuted copy has a clearly lower GW loss than the best mirror map.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "datagen/mesh.h"
#include "distances/shortest_paths.h"
#include "graph/builder.h"
#include "graph/components.h"

namespace gw::datagen {
namespace {

using Vec3 = std::array<double, 3>;

Vec3 vertex(const Mesh& mesh, Index i) {
  const double* p = &mesh.vertices[3 * static_cast<std::size_t>(i)];
  return {p[0], p[1], p[2]};
}

double squared_distance(const Vec3& a, const Vec3& b) {
  return (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
         (a[2] - b[2]) * (a[2] - b[2]);
}

double distance(const Vec3& a, const Vec3& b) { return std::sqrt(squared_distance(a, b)); }

CsrGraph graph_of(const Mesh& mesh) {
  const std::vector<float> lengths(mesh.edge_length.begin(), mesh.edge_length.end());
  BuildOptions options;
  options.symmetrize = true;
  return build_csr(mesh.n, {mesh.edge_src, mesh.edge_dst, lengths}, options);
}

// The n x n shortest-path distances of the mesh graph, divided by their mean.
std::vector<double> normalized_geodesics(const Mesh& mesh) {
  const std::vector<float> d = all_pairs_shortest_paths(graph_of(mesh), /*threads=*/1);
  std::vector<double> out(d.begin(), d.end());
  const double mean =
      std::accumulate(out.begin(), out.end(), 0.0) / static_cast<double>(out.size());
  for (double& v : out) v /= mean;
  return out;
}

// sum_ij (dx_ij - dy_m(i)m(j))^2 / n^2 for a map m from the source's vertices to the target's.
double gw_loss(const std::vector<double>& dx,
               const std::vector<double>& dy,
               const std::vector<Index>& map) {
  const std::size_t n = map.size();
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double* row_y = &dy[static_cast<std::size_t>(map[i]) * n];
    for (std::size_t j = 0; j < n; ++j) {
      const double diff = dx[i * n + j] - row_y[map[j]];
      sum += diff * diff;
    }
  }
  return sum / static_cast<double>(n * n);
}

// The mirror map of a shape through the plane with unit normal `normal` through `centre`: each
// vertex x_i is reflected to x_i - 2 ((x_i - centre) . normal) normal, and mapped to the source
// vertex nearest to its reflection (brute force). For a shape symmetric about that plane this is
// the symmetry; for ours it sends the left ear to wherever the right ear is, and so on.
std::vector<Index> mirror_map(const Mesh& mesh, const Vec3& normal, const Vec3& centre) {
  std::vector<Index> map(mesh.n);
  for (Index i = 0; i < mesh.n; ++i) {
    const Vec3 x = vertex(mesh, i);
    const double side = (x[0] - centre[0]) * normal[0] + (x[1] - centre[1]) * normal[1] +
                        (x[2] - centre[2]) * normal[2];
    const Vec3 reflected{
        x[0] - 2 * side * normal[0], x[1] - 2 * side * normal[1], x[2] - 2 * side * normal[2]};
    double best = std::numeric_limits<double>::infinity();
    for (Index j = 0; j < mesh.n; ++j) {
      const double d = squared_distance(reflected, vertex(mesh, j));
      if (d < best) {
        best = d;
        map[i] = j;
      }
    }
  }
  return map;
}

// The candidate normals of the symmetry plane: the coordinate axes (the models' left-right axis is
// x), the principal axes of the vertices, and 200 directions spread evenly over a hemisphere (a
// Fibonacci lattice: 3 degrees apart on average), so the best plane is found whatever its tilt.
std::vector<Vec3> candidate_normals(const Mesh& mesh, const Vec3& centre) {
  std::vector<Vec3> normals = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  std::array<double, 9> cov{};
  for (Index i = 0; i < mesh.n; ++i) {
    const Vec3 x = vertex(mesh, i);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) cov[r * 3 + c] += (x[r] - centre[r]) * (x[c] - centre[c]);
    }
  }
  // Principal axes by power iteration with deflation (the covariance is symmetric, 3 x 3).
  for (int axis = 0; axis < 3; ++axis) {
    Vec3 v{1.0, 0.7, 0.3};
    double lambda = 0.0;
    for (int it = 0; it < 200; ++it) {
      Vec3 w{};
      for (int r = 0; r < 3; ++r) {
        for (int c = 0; c < 3; ++c) w[r] += cov[r * 3 + c] * v[c];
      }
      lambda = std::hypot(w[0], w[1], w[2]);
      if (lambda == 0.0) break;
      for (int r = 0; r < 3; ++r) v[r] = w[r] / lambda;
    }
    normals.push_back(v);
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) cov[r * 3 + c] -= lambda * v[r] * v[c];
    }
  }
  constexpr int kLattice = 200;
  const double golden = std::numbers::pi * (3.0 - std::sqrt(5.0));
  for (int k = 0; k < kLattice; ++k) {
    const double z = 1.0 - (k + 0.5) / kLattice;  // upper hemisphere: n and -n are one plane
    const double r = std::sqrt(1.0 - z * z);
    normals.push_back({r * std::cos(golden * k), r * std::sin(golden * k), z});
  }
  return normals;
}

Vec3 centroid(const Mesh& mesh) {
  Vec3 c{};
  for (Index i = 0; i < mesh.n; ++i) {
    for (int k = 0; k < 3; ++k) c[k] += mesh.vertices[3 * static_cast<std::size_t>(i) + k];
  }
  for (double& v : c) v /= mesh.n;
  return c;
}

TEST(MeshKinds, NamesRoundTripAndUnknownNamesAreRejected) {
  ASSERT_EQ(mesh_kinds().size(), 9u);
  for (MeshKind kind : mesh_kinds()) {
    EXPECT_EQ(mesh_kind_from_string(to_string(kind)), kind);
    EXPECT_NE(std::string(mesh_kind_list()).find(to_string(kind)), std::string::npos);
  }
  EXPECT_FALSE(mesh_kind_from_string("dragon").has_value());
}

// Every kind at two sizes: the vertex count within the tolerance, edges as documented (in range,
// src < dst, sorted without repeats, lengths positive and equal to the distance of their ends),
// one connected component, no two vertices at the same place, and a closed surface (every vertex
// on at least three edges, Euler's count of edges).
TEST(MeshGenerator, EveryKindAtTwoSizesIsAConnectedMeshOfTheRequestedSize) {
  for (MeshKind kind : mesh_kinds()) {
    for (Index request : {600, 3000}) {
      SCOPED_TRACE(std::string(to_string(kind)) + " " + std::to_string(request));
      const Mesh mesh = generate_mesh(kind, request, 0);
      EXPECT_LE(std::abs(mesh.n - request), kMeshVertexTolerance * request) << mesh.n;
      ASSERT_EQ(mesh.vertices.size(), 3 * static_cast<std::size_t>(mesh.n));
      ASSERT_EQ(mesh.edge_dst.size(), mesh.edge_src.size());
      ASSERT_EQ(mesh.edge_length.size(), mesh.edge_src.size());
      std::vector<int> degree(mesh.n, 0);
      for (Offset e = 0; e < mesh.num_edges(); ++e) {
        const Index u = mesh.edge_src[e], v = mesh.edge_dst[e];
        ASSERT_TRUE(u >= 0 && u < v && v < mesh.n) << "edge " << e << ": " << u << "-" << v;
        if (e > 0) {
          const bool increasing =
              mesh.edge_src[e - 1] < u || (mesh.edge_src[e - 1] == u && mesh.edge_dst[e - 1] < v);
          ASSERT_TRUE(increasing) << "edges not sorted or repeated at " << e;
        }
        const double expected = distance(vertex(mesh, u), vertex(mesh, v));
        EXPECT_GT(mesh.edge_length[e], 0.0);
        EXPECT_NEAR(mesh.edge_length[e], expected, 1e-12 * expected);
        ++degree[u];
        ++degree[v];
      }
      EXPECT_GE(*std::min_element(degree.begin(), degree.end()), 3);
      // A closed triangulated surface of genus g has E = 3 V - 6 + 6 g edges (g = 1 for the
      // teapot's handle); welding leaves a few non-manifold spots at coarse grids.
      EXPECT_LE(std::abs(mesh.num_edges() - 3 * static_cast<Offset>(mesh.n)), 12);
      EXPECT_EQ(connected_components(graph_of(mesh)).count, 1);

      double closest = std::numeric_limits<double>::infinity();
      for (Index i = 0; i < mesh.n; ++i) {
        for (Index j = i + 1; j < mesh.n; ++j) {
          closest = std::min(closest, squared_distance(vertex(mesh, i), vertex(mesh, j)));
        }
      }
      const double mean_edge =
          std::accumulate(mesh.edge_length.begin(), mesh.edge_length.end(), 0.0) /
          static_cast<double>(mesh.num_edges());
      // Welding merges vertices closer than a fifth of the grid step (a mean edge is about one
      // step); the closest pair left is a sizeable fraction of an edge.
      EXPECT_GT(std::sqrt(closest), 0.02 * mean_edge);
    }
  }
}

TEST(MeshGenerator, SameArgumentsGiveTheSameMeshAndSeedsDiffer) {
  const Mesh a = generate_mesh(MeshKind::kLizard, 800, 3);
  const Mesh b = generate_mesh(MeshKind::kLizard, 800, 3);
  const Mesh c = generate_mesh(MeshKind::kLizard, 800, 4);
  EXPECT_EQ(a.vertices, b.vertices);
  EXPECT_EQ(a.edge_src, b.edge_src);
  EXPECT_EQ(a.edge_dst, b.edge_dst);
  EXPECT_NE(a.vertices, c.vertices);
}

TEST(MeshGenerator, RejectsVertexCountsOutsideTheRange) {
  EXPECT_THROW(generate_mesh(MeshKind::kHead, kMinMeshVertices - 1, 0), Error);
  EXPECT_THROW(generate_mesh(MeshKind::kHead, kMaxMeshVertices + 1, 0), Error);
}

// The target is the source moved by N(0, sigma^2) per coordinate, sigma = jitter x diagonal, and
// relabelled by the truth: the same edges, lengths recomputed. With 3 x 1,500 displacements the
// sample deviation is within 5% of sigma (the standard error is 1.1%), the mean within 4 standard
// errors of 0.
TEST(JitterAndPermute, TargetIsTheSourceMovedByTheStatedNoiseAndRelabelledByTheTruth) {
  const Mesh source = generate_mesh(MeshKind::kQuadruped, 1500, 1);
  const PermutedMesh copy = jitter_and_permute(source, 0.01, 7);
  const Mesh& target = copy.mesh;
  ASSERT_EQ(target.n, source.n);
  std::vector<Index> sorted = copy.truth;
  std::sort(sorted.begin(), sorted.end());
  for (Index i = 0; i < source.n; ++i) ASSERT_EQ(sorted[i], i) << "truth is not a permutation";

  const double sigma = 0.01 * bounding_box_diagonal(source);
  double sum = 0.0, sum2 = 0.0;
  for (Index i = 0; i < source.n; ++i) {
    const Vec3 x = vertex(source, i), y = vertex(target, copy.truth[i]);
    for (int c = 0; c < 3; ++c) {
      sum += y[c] - x[c];
      sum2 += (y[c] - x[c]) * (y[c] - x[c]);
    }
  }
  const double count = 3.0 * source.n;
  EXPECT_NEAR(std::sqrt(sum2 / count), sigma, 0.05 * sigma);
  EXPECT_NEAR(sum / count, 0.0, 4.0 * sigma / std::sqrt(count));

  std::vector<std::pair<Index, Index>> mapped;
  for (Offset e = 0; e < source.num_edges(); ++e) {
    const Index u = copy.truth[source.edge_src[e]], v = copy.truth[source.edge_dst[e]];
    mapped.emplace_back(std::min(u, v), std::max(u, v));
  }
  std::sort(mapped.begin(), mapped.end());
  ASSERT_EQ(target.num_edges(), source.num_edges());
  for (Offset e = 0; e < target.num_edges(); ++e) {
    EXPECT_EQ(target.edge_src[e], mapped[e].first);
    EXPECT_EQ(target.edge_dst[e], mapped[e].second);
    EXPECT_NEAR(target.edge_length[e],
                distance(vertex(target, target.edge_src[e]), vertex(target, target.edge_dst[e])),
                1e-12);
  }

  const PermutedMesh exact = jitter_and_permute(source, 0.0, 7);
  EXPECT_EQ(exact.truth, copy.truth);
  for (Index i = 0; i < source.n; ++i) {
    EXPECT_EQ(vertex(exact.mesh, exact.truth[i]), vertex(source, i));
  }
  EXPECT_THROW(jitter_and_permute(source, -0.1, 0), Error);
}

// The benchmark's premise: the shapes are not symmetric, so the mirror map is not a second answer.
// On each kind at about 500 vertices with the protocol's 1% jitter, the true map's GW loss is
// compared with the lowest loss of the mirror maps through every candidate plane (mirror_map,
// candidate_normals) composed with the truth (source vertex i -> truth[mirror(i)]). Distances are
// divided by their mean: the GW loss depends on scale, and the jitter lengthens every geodesic of
// the target by a few percent, which would otherwise count against the true map. Measured at seed
// 0: the mirror is 4.7 (teapot, whose round body maps onto itself under any plane) to 8.9 times
// worse; at seeds 1-3 (500-600 vertices) 3.8 to 9.1 times, hence the factor asserted.
TEST(MeshAsymmetry, TrueMapHasAClearlyLowerGwLossThanTheBestMirrorMap) {
  constexpr double kMirrorFactor = 3.0;
  for (MeshKind kind : mesh_kinds()) {
    SCOPED_TRACE(to_string(kind));
    const Mesh source = generate_mesh(kind, 500, 0);
    const PermutedMesh copy = jitter_and_permute(source, 0.01, 0);
    const std::vector<double> dx = normalized_geodesics(source);
    const std::vector<double> dy = normalized_geodesics(copy.mesh);
    const double true_loss = gw_loss(dx, dy, copy.truth);

    const Vec3 centre = centroid(source);
    double mirror_loss = std::numeric_limits<double>::infinity();
    Vec3 best_normal{};
    for (const Vec3& normal : candidate_normals(source, centre)) {
      const std::vector<Index> mirror = mirror_map(source, normal, centre);
      std::vector<Index> to_target(source.n);
      for (Index i = 0; i < source.n; ++i) to_target[i] = copy.truth[mirror[i]];
      const double loss = gw_loss(dx, dy, to_target);
      if (loss < mirror_loss) {
        mirror_loss = loss;
        best_normal = normal;
      }
    }
    EXPECT_GT(mirror_loss, kMirrorFactor * true_loss)
        << "true map " << true_loss << ", best mirror " << mirror_loss << " (plane normal "
        << best_normal[0] << ", " << best_normal[1] << ", " << best_normal[2] << ")";
    RecordProperty(std::string(to_string(kind)) + "_mirror_over_true",
                   std::to_string(mirror_loss / true_loss));
  }
}

}  // namespace
}  // namespace gw::datagen
