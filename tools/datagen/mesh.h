// Procedural 3-D surface meshes of realistic, asymmetric shapes (a head, a bunny, a teapot, ...)
// for the real-shapes benchmark (bench/peers/real_shapes.py) and its tests: the source graph of a
// correspondence problem whose true map is known, and the protocol that makes its target (jitter
// every vertex, permute the vertices).
//
// How a mesh is made: each kind is an implicit surface, the zero set of a smooth union of
// ellipsoids, tapered capsules and tori (signed-distance-like fields blended by a polynomial smooth
// minimum), triangulated by marching tetrahedra on a regular grid (each cube split into six
// tetrahedra around its main diagonal, so neighbouring cubes share their face diagonals and the
// surface has no cracks). Every part is first made at least 0.9 grid steps thick, so that no leg or
// ear vanishes or breaks off at coarse grids (they get chunkier instead). Vertices closer than a
// fifth of the grid step are then welded (averaged) and degenerate triangles dropped, and the
// largest connected component is kept (in practice the whole surface). The grid step is
// searched (a few secant steps on log(vertices) against log(step)) until the vertex count is within
// kMeshVertexTolerance of the request.
//
// Frame and symmetry: every kind is modelled with y up and z forward (where it faces); the
// left-right axis is x. The parts that come in pairs (eyes, ears, limbs, wings) are placed about
// the plane x = 0, and each kind has asymmetric details that no plane maps onto themselves -- a
// turned head, limbs in different poses, a tail curling to one side, ears of different lengths, a
// spout curving to one side -- so the mirror map of a shape has a clearly higher GW loss than the
// identity (tests/datagen/mesh_test.cpp measures the factor). The shapes are about 2-4 units tall;
// the generator does not normalize their size.
//
// Thread-safety: pure functions of their arguments; safe to call concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace gw::datagen {

enum class MeshKind {
  kHead,       // a skull with a nose bent to one side, ears at different heights, a chin, a neck
               // tilted sideways and a ponytail on one side
  kBunny,      // a crouching body, head turned, one long upright ear and one short flopped one,
               // front paws one ahead of the other, hind feet, a tail
  kTeapot,     // body, spout on one side curving forward, handle with a thumb rest on the other,
               // lid with an off-centre knob, an emblem on the front
  kCactus,     // a trunk with three arms at different heights and azimuths
  kQuadruped,  // a dog: body, four legs in a walking pose, head turned, tail curled to one side
  kBird,       // a standing bird: one wing raised, the other folded, head and beak turned, one leg
               // lifted, a tail
  kHand,       // palm, forearm, four fingers of different lengths and curls, a thumb on one side
  kHuman,      // torso, head, one arm raised and one down, one leg stepping forward
  kLizard,     // a low body, sprawled legs in a walking pose, a tail curling to one side
};

// Every kind, in the order of the enum.
std::vector<MeshKind> mesh_kinds();
// "head", "bunny", "teapot", "cactus", "quadruped", "bird", "hand", "human", "lizard".
std::string_view to_string(MeshKind kind);
// Inverse of to_string; std::nullopt for an unknown name.
std::optional<MeshKind> mesh_kind_from_string(std::string_view name);
// "head, bunny, ..., lizard": the valid names, for error messages.
std::string_view mesh_kind_list();

// The vertex counts generate_mesh accepts, and how far the count it returns may be from the
// request (relative). Below a few hundred vertices the thinnest parts (legs, ears, fingers) are
// narrower than the grid step and the asymmetric details vanish.
constexpr Index kMinMeshVertices = 300;
constexpr Index kMaxMeshVertices = 100000;
constexpr double kMeshVertexTolerance = 0.10;

// A triangle mesh as a graph. Vertices: n x 3, row-major (vertices[3 * i + c]), in the model's
// units. Edges: the undirected edges of the triangles, each once with edge_src[e] < edge_dst[e],
// sorted by (src, dst); edge_length[e] is the Euclidean distance between its two vertices. The
// graph is connected, has no self-loops, no parallel edges and no two vertices at the same place.
struct Mesh {
  Index n = 0;
  std::vector<double> vertices;
  std::vector<Index> edge_src;
  std::vector<Index> edge_dst;
  std::vector<double> edge_length;

  Offset num_edges() const { return static_cast<Offset>(edge_src.size()); }
};

// The mesh of `kind` with about `target_vertices` vertices (within kMeshVertexTolerance of it).
// `seed` varies the instance: each axis of the model is stretched by a factor in [0.95, 1.05] and
// the grid is shifted by a random fraction of its step (gw::Rng(seed, stream 1)). Same arguments:
// the same mesh (reproducible per platform: the model uses std::sqrt / std::cos / std::sin). Time:
// O(grid points x parts) per search step; 1-3 s at 50,000 vertices and about 5 s at 100,000 (one
// core). kInvalidArgument (naming the range) for a count outside [kMinMeshVertices,
// kMaxMeshVertices]; kInternal if the search does not reach the tolerance (not seen: every kind at
// 300-700 vertices with seeds 0-4 and at 2,000-100,000 with seed 0 came within 6%).
Mesh generate_mesh(MeshKind kind, Index target_vertices, std::uint64_t seed);

// The target of a correspondence problem made from `source`, and the true map.
struct PermutedMesh {
  Mesh mesh;
  // truth[i] = the target vertex that source vertex i became (a permutation of 0..n-1).
  std::vector<Index> truth;
};

// The benchmark protocol: every source vertex is moved by independent N(0, sigma^2) noise in each
// coordinate, sigma = jitter x the diagonal of the source's bounding box, and the vertices are
// relabelled by a uniformly random permutation (Fisher-Yates). The target keeps the source's
// triangles (so its edges are the source's, relabelled, in sorted order again) with lengths
// recomputed from the moved vertices. Noise and permutation come from gw::Rng(seed, stream 2).
// jitter = 0 gives an exact, permuted copy. kInvalidArgument for jitter < 0 or not finite.
PermutedMesh jitter_and_permute(const Mesh& source, double jitter, std::uint64_t seed);

// The diagonal of the bounding box of a mesh's vertices.
double bounding_box_diagonal(const Mesh& mesh);

}  // namespace gw::datagen
