#include "graph/components.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "graph/builder.h"

namespace gw {

namespace {

Index find_root(std::vector<Index>& parent, Index x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];  // path halving
    x = parent[x];
  }
  return x;
}

template <typename T>
StitchResult stitch_impl(const CsrGraphView& graph, std::span<const T> points, int d) {
  const Index n = graph.num_nodes;
  GW_CHECK(d >= 1, "stitch_components: dimension must be >= 1, got " << d);
  GW_CHECK(points.size() == static_cast<std::size_t>(n) * d,
           "stitch_components: " << points.size() << " coordinates for " << n
                                 << " nodes of dimension " << d);
  Components comps = connected_components(graph);
  if (comps.count <= 1) return {CsrGraph::copy_of(graph), {}};

  // Members of each component, so a merged component's nodes are found without a scan.
  std::vector<Offset> member_offsets(comps.count + 1, 0);
  for (Index i = 0; i < n; ++i) ++member_offsets[comps.labels[i] + 1];
  for (Index c = 0; c < comps.count; ++c) member_offsets[c + 1] += member_offsets[c];
  std::vector<Index> members(n);
  {
    std::vector<Offset> cursor(member_offsets.begin(), member_offsets.end() - 1);
    for (Index i = 0; i < n; ++i) members[cursor[comps.labels[i]]++] = i;
  }

  auto squared_distance = [&](Index a, Index b) {
    double sum = 0.0;
    for (int t = 0; t < d; ++t) {
      const double diff = static_cast<double>(points[static_cast<std::size_t>(a) * d + t]) -
                          static_cast<double>(points[static_cast<std::size_t>(b) * d + t]);
      sum += diff * diff;
    }
    return sum;
  };

  // best[v], best_src[v]: the closest node of the grown component A to v (v outside A).
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<char> in_main(n, 0);
  std::vector<double> best(n, kInf);
  std::vector<Index> best_src(n, -1);
  auto absorb = [&](Index component) {
    const Offset begin = member_offsets[component];
    const Offset end = member_offsets[component + 1];
    for (Offset p = begin; p < end; ++p) in_main[members[p]] = 1;
      // Inside nodes in ascending order and strict improvement: ties keep the smallest source.
#pragma omp parallel for schedule(static)
    for (Index v = 0; v < n; ++v) {
      if (in_main[v]) continue;
      double best_v = best[v];
      Index src_v = best_src[v];
      for (Offset p = begin; p < end; ++p) {
        const Index a = members[p];
        const double dist = squared_distance(a, v);
        if (dist < best_v || (dist == best_v && a < src_v)) {
          best_v = dist;
          src_v = a;
        }
      }
      best[v] = best_v;
      best_src[v] = src_v;
    }
  };

  StitchResult result;
  absorb(comps.labels[0]);
  for (Index step = 1; step < comps.count; ++step) {
    Index target = -1;
    for (Index v = 0; v < n; ++v) {
      if (!in_main[v] && (target < 0 || best[v] < best[target])) target = v;
    }
    GW_ASSERT(target >= 0 && best_src[target] >= 0);
    result.bridges.push_back(
        {best_src[target], target, static_cast<float>(std::sqrt(best[target]))});
    absorb(comps.labels[target]);
  }

  // Rebuild with the bridges in both directions (columns stay sorted).
  EdgeList edges = to_edge_list(graph);
  const bool weighted = graph.has_weights();
  for (const Bridge& bridge : result.bridges) {
    edges.src.push_back(bridge.source);
    edges.dst.push_back(bridge.target);
    edges.src.push_back(bridge.target);
    edges.dst.push_back(bridge.source);
    if (weighted) {
      edges.weights.push_back(bridge.length);
      edges.weights.push_back(bridge.length);
    }
  }
  result.graph = build_csr(n, edges.view());
  return result;
}

}  // namespace

Components connected_components(const CsrGraphView& graph) {
  const Index n = graph.num_nodes;
  std::vector<Index> parent(n);
  for (Index i = 0; i < n; ++i) parent[i] = i;
  for (Index i = 0; i < n; ++i) {
    for (Index j : graph.neighbors(i)) {
      Index a = find_root(parent, i);
      Index b = find_root(parent, j);
      if (a == b) continue;
      // Union by index keeps every root the smallest node of its set.
      if (a < b) {
        parent[b] = a;
      } else {
        parent[a] = b;
      }
    }
  }
  Components comps;
  comps.labels.assign(n, -1);
  for (Index i = 0; i < n; ++i) {
    const Index root = find_root(parent, i);
    if (root == i) {
      comps.labels[i] = comps.count++;
      comps.sizes.push_back(0);
    } else {
      comps.labels[i] = comps.labels[root];  // root < i, already labelled
    }
    ++comps.sizes[comps.labels[i]];
  }
  return comps;
}

StitchResult stitch_components(const CsrGraphView& graph, std::span<const double> points, int d) {
  return stitch_impl(graph, points, d);
}

StitchResult stitch_components(const CsrGraphView& graph, std::span<const float> points, int d) {
  return stitch_impl(graph, points, d);
}

}  // namespace gw
