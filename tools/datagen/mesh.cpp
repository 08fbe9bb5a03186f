#include "datagen/mesh.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <span>
#include <utility>

#include "core/error.h"
#include "core/rng.h"
#include "datagen/mesh_impl.h"

namespace gw::datagen {
namespace {

constexpr std::array<std::pair<MeshKind, std::string_view>, 9> kNames = {{
    {MeshKind::kHead, "head"},
    {MeshKind::kBunny, "bunny"},
    {MeshKind::kTeapot, "teapot"},
    {MeshKind::kCactus, "cactus"},
    {MeshKind::kQuadruped, "quadruped"},
    {MeshKind::kBird, "bird"},
    {MeshKind::kHand, "hand"},
    {MeshKind::kHuman, "human"},
    {MeshKind::kLizard, "lizard"},
}};

// The search stops once the count is this close to the request (relative); it accepts anything
// within kMeshVertexTolerance after kMaxSearchSteps.
constexpr double kSearchGoal = 0.02;
constexpr int kMaxSearchSteps = 12;
constexpr double kCalibrationVertices = 2000.0;
// Welding radius as a fraction of the grid step: merges the near-coincident vertices marching
// tetrahedra puts on edges that meet at a grid point close to the surface (the slivers), without
// closing features a step wide.
constexpr double kWeldFraction = 0.2;
// Parts are made at least this many grid steps thick (radius): a tube of radius sqrt(3) / 2 steps
// contains a grid point in every cube along its axis, so it neither vanishes nor breaks into
// pieces; thinner legs, ears and fingers would at a few hundred vertices.
constexpr double kMinRadiusSteps = 0.9;

}  // namespace

std::vector<MeshKind> mesh_kinds() {
  std::vector<MeshKind> kinds;
  for (const auto& [kind, name] : kNames) kinds.push_back(kind);
  return kinds;
}

std::string_view to_string(MeshKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<MeshKind> mesh_kind_from_string(std::string_view name) {
  for (const auto& [kind, n] : kNames) {
    if (n == name) return kind;
  }
  return std::nullopt;
}

std::string_view mesh_kind_list() {
  return "head, bunny, teapot, cactus, quadruped, bird, hand, human, lizard";
}

double bounding_box_diagonal(const Mesh& mesh) {
  if (mesh.n == 0) return 0.0;
  std::array<double, 3> lo{}, hi{};
  for (int c = 0; c < 3; ++c) lo[c] = hi[c] = mesh.vertices[c];
  for (Index i = 0; i < mesh.n; ++i) {
    for (int c = 0; c < 3; ++c) {
      const double v = mesh.vertices[3 * static_cast<std::size_t>(i) + c];
      lo[c] = std::min(lo[c], v);
      hi[c] = std::max(hi[c], v);
    }
  }
  return std::hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
}

// The vertex count of a surface triangulated with grid step h behaves like area / h^2 once h is
// below the size of the thinnest part, so the search steps on log(count) against log(h): first
// with slope -2, then by secant through the last two points (slope kept in [-3, -1], since thin
// parts appearing or vanishing make the count jump).
Mesh generate_mesh(MeshKind kind, Index target_vertices, std::uint64_t seed) {
  GW_CHECK(target_vertices >= kMinMeshVertices && target_vertices <= kMaxMeshVertices,
           "mesh: the vertex count must be in [" << kMinMeshVertices << ", " << kMaxMeshVertices
                                                 << "], got " << target_vertices);
  Rng rng(seed, 1);
  mesh_detail::Vec3 stretch{}, offset_fraction{};
  for (double& s : stretch) s = 0.95 + 0.1 * rng.uniform();
  for (double& o : offset_fraction) o = rng.uniform();
  const mesh_detail::Model model = mesh_detail::stretched(mesh_detail::model_of(kind), stretch);

  const auto [lo, hi] = model.bounds();
  const double diagonal = std::hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
  const double target = static_cast<double>(target_vertices);
  auto triangulate = [&](double step) {
    const mesh_detail::Vec3 offset{
        offset_fraction[0] * step, offset_fraction[1] * step, offset_fraction[2] * step};
    const mesh_detail::Model thick = mesh_detail::thickened(model, kMinRadiusSteps * step);
    return mesh_detail::weld_and_extract(mesh_detail::polygonize(thick, step, offset),
                                         kWeldFraction * step);
  };

  // A start from the bounding box (about 2 diagonal^2 of surface, 1.5 vertices per step^2), aimed
  // at no more than kCalibrationVertices: the first, cheap triangulation calibrates the count law
  // and the next one lands near the request.
  double step = diagonal * std::sqrt(1.5 * 2.0 / std::min(target, kCalibrationVertices));
  double previous_step = 0.0, previous_count = 0.0;
  Mesh best;
  double best_error = 1e300;
  for (int iteration = 0; iteration < kMaxSearchSteps; ++iteration) {
    Mesh mesh = triangulate(step);
    const double count = std::max<double>(mesh.n, 1.0);
    const double error = std::abs(count - target) / target;
    if (error < best_error) {
      best_error = error;
      best = std::move(mesh);
    }
    if (best_error <= kSearchGoal) break;
    double slope = -2.0;
    if (previous_count > 0.0 && previous_step != step && previous_count != count) {
      slope =
          (std::log(count) - std::log(previous_count)) / (std::log(step) - std::log(previous_step));
      slope = std::clamp(slope, -3.0, -1.0);
    }
    previous_step = step;
    previous_count = count;
    step = std::exp(std::log(step) + (std::log(target) - std::log(count)) / slope);
  }
  GW_CHECK_CODE(best_error <= kMeshVertexTolerance,
                ErrorCode::kInternal,
                "mesh: no grid step gave " << target_vertices << " vertices for " << to_string(kind)
                                           << " (closest: " << best.n << ")");
  return best;
}

PermutedMesh jitter_and_permute(const Mesh& source, double jitter, std::uint64_t seed) {
  GW_CHECK(std::isfinite(jitter) && jitter >= 0.0,
           "mesh: jitter must be finite and >= 0, got " << jitter);
  Rng rng(seed, 2);
  const double sigma = jitter * bounding_box_diagonal(source);
  const std::size_t n = static_cast<std::size_t>(source.n);
  std::vector<double> moved(source.vertices);
  for (double& v : moved) v += sigma * rng.normal();
  PermutedMesh out;
  out.truth.resize(n);
  std::iota(out.truth.begin(), out.truth.end(), Index{0});
  rng.shuffle(std::span<Index>(out.truth));

  Mesh& target = out.mesh;
  target.n = source.n;
  target.vertices.resize(3 * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (int c = 0; c < 3; ++c) target.vertices[3 * out.truth[i] + c] = moved[3 * i + c];
  }
  std::vector<std::pair<Index, Index>> edges;
  edges.reserve(source.edge_src.size());
  for (std::size_t e = 0; e < source.edge_src.size(); ++e) {
    const Index u = out.truth[source.edge_src[e]], v = out.truth[source.edge_dst[e]];
    edges.emplace_back(std::min(u, v), std::max(u, v));
  }
  std::sort(edges.begin(), edges.end());
  for (const auto& [u, v] : edges) {
    target.edge_src.push_back(u);
    target.edge_dst.push_back(v);
    const double* a = &target.vertices[3 * static_cast<std::size_t>(u)];
    const double* b = &target.vertices[3 * static_cast<std::size_t>(v)];
    target.edge_length.push_back(std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]));
  }
  return out;
}

}  // namespace gw::datagen
