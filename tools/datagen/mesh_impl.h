// Internals of the mesh generator (mesh.h): the implicit models of the kinds and the polygonizer.
// Not installed; included by mesh*.cpp and nothing else.
#pragma once

#include <array>
#include <vector>

#include "core/types.h"
#include "datagen/mesh.h"

namespace gw::datagen::mesh_detail {

using Vec3 = std::array<double, 3>;

// One part of a model. Its field is negative inside, positive outside and about the Euclidean
// distance to the part's surface near it (exactly for spheres, capsules and tori; a first-order
// approximation for ellipsoids), which is what the smooth union and the grid interpolation need.
struct Primitive {
  enum class Type { kEllipsoid, kCapsule, kTorus };
  Type type = Type::kEllipsoid;
  // kEllipsoid: centre a, semi-axes radii along the columns of `frame`.
  // kCapsule: the segment a-b, radius ra at a growing linearly to rb at b.
  // kTorus: centre a, axis frame column 2, major radius ra, minor radius rb.
  Vec3 a{}, b{}, radii{};
  double ra = 0.0, rb = 0.0;
  std::array<double, 9> frame{1, 0, 0, 0, 1, 0, 0, 0, 1};  // row-major rotation, model <- local
  // Blend radius of the smooth union with the parts before it (0: a plain union).
  double blend = 0.0;
};

// A kind as a list of parts: field(p) = smooth union of the parts' fields, in list order.
struct Model {
  std::vector<Primitive> parts;

  double field(const Vec3& p) const;
  // An axis-aligned box that contains the surface: {min corner, max corner}.
  std::array<Vec3, 2> bounds() const;
};

// The parts of `kind`, in model units, before the seed's stretch (mesh_kinds.cpp).
Model model_of(MeshKind kind);

// Each coordinate of every part multiplied by `stretch` (radii too, per axis for ellipsoids whose
// frame is the identity and by the geometric mean otherwise).
Model stretched(const Model& model, const Vec3& stretch);

// Every radius below `min_radius` raised to it (ellipsoid semi-axes, capsule radii, torus minor
// radius), so that no part is thinner than the grid can resolve.
Model thickened(const Model& model, double min_radius);

// A triangle soup on shared vertices, before welding.
struct RawMesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<Index, 3>> triangles;
};

// Marching tetrahedra of model.field over the grid with step `step` whose points are
// lower + offset + step * (i, j, k), covering model.bounds() with a margin of two steps. A vertex
// is placed on every tetrahedron edge whose ends have fields of opposite sign (inside: < 0), by
// linear interpolation, once per edge (shared by the tetrahedra around it).
RawMesh polygonize(const Model& model, double step, const Vec3& offset);

// Welds the vertices closer than `radius` (each cluster of the "closer than radius" relation
// becomes one vertex at its mean), drops the triangles that collapse and the flaps (vertices left
// with two neighbours), keeps the largest connected component and returns the edges of its
// triangles (Mesh's conventions).
Mesh weld_and_extract(const RawMesh& raw, double radius);

}  // namespace gw::datagen::mesh_detail
