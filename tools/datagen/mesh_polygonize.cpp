// The implicit models' fields and their triangulation (mesh_impl.h): marching tetrahedra on a
// regular grid, then welding and the largest connected component.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <unordered_map>

#include "core/error.h"
#include "datagen/mesh_impl.h"

namespace gw::datagen::mesh_detail {
namespace {

double dot(const Vec3& u, const Vec3& v) { return u[0] * v[0] + u[1] * v[1] + u[2] * v[2]; }
Vec3 sub(const Vec3& u, const Vec3& v) { return {u[0] - v[0], u[1] - v[1], u[2] - v[2]}; }
double norm(const Vec3& u) { return std::sqrt(dot(u, u)); }

// q = frame^T p: the coordinates of model vector p in the part's local axes.
Vec3 to_local(const std::array<double, 9>& frame, const Vec3& p) {
  return {frame[0] * p[0] + frame[3] * p[1] + frame[6] * p[2],
          frame[1] * p[0] + frame[4] * p[1] + frame[7] * p[2],
          frame[2] * p[0] + frame[5] * p[1] + frame[8] * p[2]};
}

// The first-order distance to an ellipsoid: f / |grad f| for f = k0 (k0 - 1) with k0 = |q / r|,
// i.e. k0 (k0 - 1) / |q / r^2|; exact on a sphere, and of the right sign everywhere.
double ellipsoid_field(const Primitive& e, const Vec3& p) {
  const Vec3 q = to_local(e.frame, sub(p, e.a));
  const Vec3 s{q[0] / e.radii[0], q[1] / e.radii[1], q[2] / e.radii[2]};
  const Vec3 g{s[0] / e.radii[0], s[1] / e.radii[1], s[2] / e.radii[2]};
  const double k0 = norm(s), k1 = norm(g);
  if (k1 == 0.0) return -std::min({e.radii[0], e.radii[1], e.radii[2]});
  return k0 * (k0 - 1.0) / k1;
}

// Distance to the segment minus the radius interpolated at the closest point: exact for equal
// radii, close enough for the gentle tapers of the models (the field only has to cross zero at the
// intended surface and grow about like a distance).
double capsule_field(const Primitive& c, const Vec3& p) {
  const Vec3 ab = sub(c.b, c.a), ap = sub(p, c.a);
  const double len2 = dot(ab, ab);
  const double t = len2 > 0.0 ? std::clamp(dot(ap, ab) / len2, 0.0, 1.0) : 0.0;
  const Vec3 closest{c.a[0] + t * ab[0], c.a[1] + t * ab[1], c.a[2] + t * ab[2]};
  return norm(sub(p, closest)) - (c.ra + t * (c.rb - c.ra));
}

double torus_field(const Primitive& t, const Vec3& p) {
  const Vec3 q = to_local(t.frame, sub(p, t.a));
  const double radial = std::hypot(q[0], q[1]) - t.ra;
  return std::hypot(radial, q[2]) - t.rb;
}

double part_field(const Primitive& part, const Vec3& p) {
  switch (part.type) {
    case Primitive::Type::kEllipsoid:
      return ellipsoid_field(part, p);
    case Primitive::Type::kCapsule:
      return capsule_field(part, p);
    case Primitive::Type::kTorus:
      return torus_field(part, p);
  }
  return 0.0;
}

// Polynomial smooth minimum: equal to min(a, b) when they differ by more than k, otherwise lowered
// by at most k / 4, so two parts meet in a fillet of about radius k instead of a crease.
double smooth_min(double a, double b, double k) {
  if (k <= 0.0) return std::min(a, b);
  const double h = std::max(k - std::abs(a - b), 0.0) / k;
  return std::min(a, b) - h * h * k * 0.25;
}

// Union-find with path halving.
struct DisjointSets {
  std::vector<Index> parent;
  explicit DisjointSets(Index n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  Index find(Index x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  bool unite(Index x, Index y) {
    x = find(x);
    y = find(y);
    if (x == y) return false;
    parent[std::max(x, y)] = std::min(x, y);
    return true;
  }
};

// The cubes' six tetrahedra (Kuhn's subdivision): for each order (a, b, c) of the axes, the path
// 0 -> e_a -> e_a + e_b -> e_a + e_b + e_c along the cube's edges. Corners are 3-bit numbers (bit
// 0: +x, bit 1: +y, bit 2: +z). Every edge of a tetrahedron joins a corner to one that is larger
// in every coordinate, so an edge is named by its lower grid point and a direction in 1..7, and the
// face diagonals of neighbouring cubes coincide.
constexpr std::array<std::array<int, 4>, 6> kTetrahedra = {
    {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7}, {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}}};

class Polygonizer {
 public:
  Polygonizer(const Model& model, double step, const Vec3& offset) : step_(step) {
    const auto [lo, hi] = model.bounds();
    for (int c = 0; c < 3; ++c) {
      origin_[c] = lo[c] - 2.0 * step + offset[c] - step;
      dims_[c] = static_cast<std::int64_t>(std::ceil((hi[c] - origin_[c]) / step)) + 3;
    }
    GW_CHECK(dims_[0] * dims_[1] * dims_[2] <= (std::int64_t{1} << 31),
             "mesh: a grid of " << dims_[0] << " x " << dims_[1] << " x " << dims_[2]
                                << " points is too large; ask for fewer vertices");
    values_.resize(static_cast<std::size_t>(dims_[0] * dims_[1] * dims_[2]));
    for (std::int64_t k = 0; k < dims_[2]; ++k) {
      for (std::int64_t j = 0; j < dims_[1]; ++j) {
        for (std::int64_t i = 0; i < dims_[0]; ++i) {
          values_[static_cast<std::size_t>(index(i, j, k))] = model.field(point(i, j, k));
        }
      }
    }
  }

  RawMesh run() {
    for (std::int64_t k = 0; k + 1 < dims_[2]; ++k) {
      for (std::int64_t j = 0; j + 1 < dims_[1]; ++j) {
        for (std::int64_t i = 0; i + 1 < dims_[0]; ++i) cube(i, j, k);
      }
    }
    return std::move(mesh_);
  }

 private:
  std::int64_t index(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return i + dims_[0] * (j + dims_[1] * k);
  }
  Vec3 point(std::int64_t i, std::int64_t j, std::int64_t k) const {
    return {origin_[0] + step_ * static_cast<double>(i),
            origin_[1] + step_ * static_cast<double>(j),
            origin_[2] + step_ * static_cast<double>(k)};
  }
  bool inside(std::int64_t g) const { return values_[static_cast<std::size_t>(g)] < 0.0; }

  void cube(std::int64_t i, std::int64_t j, std::int64_t k) {
    std::array<std::int64_t, 8> corner{};
    int inside_count = 0;
    for (int c = 0; c < 8; ++c) {
      corner[c] = index(i + (c & 1), j + ((c >> 1) & 1), k + ((c >> 2) & 1));
      inside_count += inside(corner[c]) ? 1 : 0;
    }
    if (inside_count == 0 || inside_count == 8) return;
    for (const auto& tet : kTetrahedra) tetrahedron(corner, tet);
  }

  // The vertex on the edge from cube corner `lo` to corner `hi` (hi >= lo in every coordinate).
  Index edge_vertex(const std::array<std::int64_t, 8>& corner, int lo, int hi) {
    const std::int64_t key = corner[lo] * 8 + (hi - lo);
    const auto [it, added] = edge_vertices_.try_emplace(key, 0);
    if (!added) return it->second;
    const double f0 = values_[static_cast<std::size_t>(corner[lo])];
    const double f1 = values_[static_cast<std::size_t>(corner[hi])];
    const double t = f0 / (f0 - f1);
    const std::int64_t g = corner[lo];
    const Vec3 p = point(g % dims_[0], (g / dims_[0]) % dims_[1], g / (dims_[0] * dims_[1]));
    const int d = hi - lo;
    mesh_.vertices.push_back({p[0] + t * step_ * (d & 1),
                              p[1] + t * step_ * ((d >> 1) & 1),
                              p[2] + t * step_ * ((d >> 2) & 1)});
    it->second = static_cast<Index>(mesh_.vertices.size() - 1);
    return it->second;
  }

  // Corners of a tetrahedron come in increasing order, so for two of them the one listed first is
  // the lower end of their edge.
  void tetrahedron(const std::array<std::int64_t, 8>& corner, const std::array<int, 4>& tet) {
    std::array<int, 4> in{}, out{};
    int n_in = 0, n_out = 0;
    for (int v : tet) (inside(corner[v]) ? in[n_in++] : out[n_out++]) = v;
    if (n_in == 0 || n_out == 0) return;
    auto vertex = [&](int u, int v) {
      return u < v ? edge_vertex(corner, u, v) : edge_vertex(corner, v, u);
    };
    if (n_in == 1 || n_out == 1) {
      const int lone = n_in == 1 ? in[0] : out[0];
      const std::array<int, 4>& rest = n_in == 1 ? out : in;
      mesh_.triangles.push_back(
          {vertex(lone, rest[0]), vertex(lone, rest[1]), vertex(lone, rest[2])});
      return;
    }
    // Two in (a, b), two out (c, d): the quad ac, ad, bd, bc, cut along ac-bd.
    const Index ac = vertex(in[0], out[0]), ad = vertex(in[0], out[1]);
    const Index bd = vertex(in[1], out[1]), bc = vertex(in[1], out[0]);
    mesh_.triangles.push_back({ac, ad, bd});
    mesh_.triangles.push_back({ac, bd, bc});
  }

  double step_;
  Vec3 origin_{};
  std::array<std::int64_t, 3> dims_{};
  std::vector<double> values_;
  std::unordered_map<std::int64_t, Index> edge_vertices_;
  RawMesh mesh_;
};

// Merges every pair of points closer than `radius` (transitively) into one point at the mean of
// its cluster; returns the new index of each point and the merged points. Pairs are found through
// a hash of cells of side `radius` (a pair closer than radius lies in neighbouring cells).
std::vector<Index> weld_points(std::vector<Vec3>& points, double radius) {
  const Index n = static_cast<Index>(points.size());
  auto cell = [radius](double x) { return static_cast<std::int64_t>(std::floor(x / radius)); };
  auto key = [](std::int64_t x, std::int64_t y, std::int64_t z) {
    constexpr std::int64_t kMask = (std::int64_t{1} << 21) - 1;
    return ((x & kMask) << 42) | ((y & kMask) << 21) | (z & kMask);
  };
  std::unordered_map<std::int64_t, std::vector<Index>> cells;
  for (Index v = 0; v < n; ++v) {
    const Vec3& p = points[v];
    cells[key(cell(p[0]), cell(p[1]), cell(p[2]))].push_back(v);
  }
  DisjointSets sets(n);
  const double r2 = radius * radius;
  for (Index v = 0; v < n; ++v) {
    const Vec3& p = points[v];
    const std::int64_t cx = cell(p[0]), cy = cell(p[1]), cz = cell(p[2]);
    for (std::int64_t dx = -1; dx <= 1; ++dx) {
      for (std::int64_t dy = -1; dy <= 1; ++dy) {
        for (std::int64_t dz = -1; dz <= 1; ++dz) {
          const auto found = cells.find(key(cx + dx, cy + dy, cz + dz));
          if (found == cells.end()) continue;
          for (Index w : found->second) {
            if (w > v && dot(sub(points[w], p), sub(points[w], p)) < r2) sets.unite(v, w);
          }
        }
      }
    }
  }
  std::vector<Index> new_index(n, -1);
  std::vector<Vec3> merged;
  std::vector<Index> count;
  for (Index v = 0; v < n; ++v) {
    const Index root = sets.find(v);
    if (new_index[root] < 0) {
      new_index[root] = static_cast<Index>(merged.size());
      merged.push_back({0.0, 0.0, 0.0});
      count.push_back(0);
    }
    new_index[v] = new_index[root];
    for (int c = 0; c < 3; ++c) merged[new_index[v]][c] += points[v][c];
    ++count[new_index[v]];
  }
  for (std::size_t m = 0; m < merged.size(); ++m) {
    for (int c = 0; c < 3; ++c) merged[m][c] /= count[m];
  }
  points = std::move(merged);
  return new_index;
}

// Welding leaves a few flaps: a vertex whose only triangles are copies of one triangle (v, a, b),
// so it has two neighbours. Such a vertex is on no shortest path between others (a-b is an edge
// and no longer than a-v-b), so dropping it (and then any neighbour it leaves with two) changes
// no distance and leaves every vertex on at least three edges, as on a closed surface.
void drop_flaps(Index n, std::vector<std::pair<Index, Index>>& edges) {
  std::vector<Index> degree(n, 0);
  for (const auto& [u, v] : edges) ++degree[u], ++degree[v];
  while (true) {
    auto flap = [&degree](Index v) { return degree[v] > 0 && degree[v] <= 2; };
    std::vector<std::pair<Index, Index>> kept;
    kept.reserve(edges.size());
    for (const auto& [u, v] : edges) {
      if (!flap(u) && !flap(v)) kept.push_back({u, v});
    }
    if (kept.size() == edges.size()) return;
    edges = std::move(kept);
    std::fill(degree.begin(), degree.end(), 0);
    for (const auto& [u, v] : edges) ++degree[u], ++degree[v];
  }
}

}  // namespace

double Model::field(const Vec3& p) const {
  double value = part_field(parts.front(), p);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    value = smooth_min(value, part_field(parts[i], p), parts[i].blend);
  }
  return value;
}

std::array<Vec3, 2> Model::bounds() const {
  constexpr double kHuge = 1e300;
  Vec3 lo{kHuge, kHuge, kHuge}, hi{-kHuge, -kHuge, -kHuge};
  auto include = [&](const Vec3& centre, const Vec3& half) {
    for (int c = 0; c < 3; ++c) {
      lo[c] = std::min(lo[c], centre[c] - half[c]);
      hi[c] = std::max(hi[c], centre[c] + half[c]);
    }
  };
  for (const Primitive& part : parts) {
    // A smooth union can bulge past its parts by blend / 4.
    const double pad = 0.25 * part.blend;
    switch (part.type) {
      case Primitive::Type::kEllipsoid: {
        Vec3 half{};
        for (int row = 0; row < 3; ++row) {
          double sum = 0.0;
          for (int col = 0; col < 3; ++col) {
            const double v = part.frame[row * 3 + col] * part.radii[col];
            sum += v * v;
          }
          half[row] = std::sqrt(sum) + pad;
        }
        include(part.a, half);
        break;
      }
      case Primitive::Type::kCapsule:
        include(part.a, {part.ra + pad, part.ra + pad, part.ra + pad});
        include(part.b, {part.rb + pad, part.rb + pad, part.rb + pad});
        break;
      case Primitive::Type::kTorus: {
        const double r = part.ra + part.rb + pad;
        include(part.a, {r, r, r});
        break;
      }
    }
  }
  return {lo, hi};
}

RawMesh polygonize(const Model& model, double step, const Vec3& offset) {
  GW_CHECK(!model.parts.empty() && step > 0.0, "mesh: polygonize needs parts and a step > 0");
  return Polygonizer(model, step, offset).run();
}

Mesh weld_and_extract(const RawMesh& raw, double radius) {
  std::vector<Vec3> points = raw.vertices;
  std::vector<std::array<Index, 3>> triangles = raw.triangles;
  // Cluster means can land closer than `radius` to a neighbouring cluster: weld until none does.
  for (int pass = 0; pass < 8; ++pass) {
    const std::size_t before = points.size();
    const std::vector<Index> new_index = weld_points(points, radius);
    std::vector<std::array<Index, 3>> kept;
    kept.reserve(triangles.size());
    for (const auto& t : triangles) {
      const std::array<Index, 3> m{new_index[t[0]], new_index[t[1]], new_index[t[2]]};
      if (m[0] != m[1] && m[1] != m[2] && m[0] != m[2]) kept.push_back(m);
    }
    triangles = std::move(kept);
    if (points.size() == before) break;
  }

  const Index n = static_cast<Index>(points.size());
  std::vector<std::pair<Index, Index>> edges;
  edges.reserve(triangles.size() * 3);
  for (const auto& t : triangles) {
    for (int e = 0; e < 3; ++e) {
      const Index u = t[e], v = t[(e + 1) % 3];
      edges.emplace_back(std::min(u, v), std::max(u, v));
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());

  drop_flaps(n, edges);

  DisjointSets sets(n);
  for (const auto& [u, v] : edges) sets.unite(u, v);
  std::vector<Index> size(n, 0);
  std::vector<bool> used(n, false);
  for (const auto& [u, v] : edges) used[u] = used[v] = true;
  for (Index v = 0; v < n; ++v) {
    if (used[v]) ++size[sets.find(v)];
  }
  const Index largest =
      static_cast<Index>(std::max_element(size.begin(), size.end()) - size.begin());

  Mesh mesh;
  std::vector<Index> relabel(n, -1);
  for (Index v = 0; v < n; ++v) {
    if (!used[v] || sets.find(v) != largest) continue;
    relabel[v] = mesh.n++;
    mesh.vertices.insert(mesh.vertices.end(), points[v].begin(), points[v].end());
  }
  for (const auto& [u, v] : edges) {
    if (relabel[u] < 0) continue;
    // Relabelling keeps the order of the old ids, so the pairs stay sorted with src < dst.
    mesh.edge_src.push_back(relabel[u]);
    mesh.edge_dst.push_back(relabel[v]);
    mesh.edge_length.push_back(norm(sub(points[u], points[v])));
  }
  return mesh;
}

}  // namespace gw::datagen::mesh_detail
