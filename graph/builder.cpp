#include "graph/builder.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <span>

#include <omp.h>

#include "core/error.h"

namespace gw {

namespace {

void check_edges(Index num_nodes, const EdgeListView& edges) {
  GW_CHECK(num_nodes >= 0, "node count must be >= 0, got " << num_nodes);
  GW_CHECK(edges.src.size() == edges.dst.size(),
           "edge list: " << edges.src.size() << " sources but " << edges.dst.size() << " targets");
  GW_CHECK(
      edges.weights.empty() || edges.weights.size() == edges.src.size(),
      "edge list: " << edges.weights.size() << " weights for " << edges.src.size() << " edges");
  // Scan in parallel for the first bad edge (smallest index, so the message is deterministic).
  const Offset m = static_cast<Offset>(edges.src.size());
  const bool weighted = !edges.weights.empty();
  Offset first_bad = m;
#pragma omp parallel for reduction(min : first_bad) schedule(static)
  for (Offset e = 0; e < m; ++e) {
    const Index u = edges.src[e];
    const Index v = edges.dst[e];
    const bool bad_id = u < 0 || u >= num_nodes || v < 0 || v >= num_nodes;
    const bool bad_weight =
        weighted && !(edges.weights[e] >= 0.0f && std::isfinite(edges.weights[e]));
    if ((bad_id || bad_weight) && e < first_bad) first_bad = e;
  }
  if (first_bad == m) return;
  const Index u = edges.src[first_bad];
  const Index v = edges.dst[first_bad];
  if (u < 0 || u >= num_nodes || v < 0 || v >= num_nodes) {
    GW_THROW(ErrorCode::kBadData,
             "edge list: edge " << first_bad << " (" << u << " -> " << v
                                << ") has a node id outside [0, " << num_nodes << ")");
  }
  GW_THROW(ErrorCode::kBadData,
           "edge list: edge " << first_bad << " has weight " << edges.weights[first_bad]
                              << "; weights must be finite and non-negative");
}

// Writes one row's entries, given as sorted keys (column << 32 | position in the row), to
// cols/weights, merging parallel edges by `policy`; returns the kept count. Branch-free in the
// duplicate test: in symmetrized kNN graphs about half the entries are duplicates, at random.
template <DuplicatePolicy kPolicy>
Offset merge_row(std::span<const std::uint64_t> keys,
                 const float* row_weights,
                 Index* cols,
                 float* weights) {
  Offset out = 0;
  for (const std::uint64_t key : keys) {
    const Index col = static_cast<Index>(key >> 32);
    const float w = row_weights != nullptr ? row_weights[key & 0xffffffffu] : 1.0f;
    const bool duplicate = kPolicy != DuplicatePolicy::kKeepAll && out > 0 && cols[out - 1] == col;
    const Offset target = duplicate ? out - 1 : out;
    cols[target] = col;
    if (weights != nullptr) {
      float merged = w;
      if (kPolicy == DuplicatePolicy::kMin) merged = duplicate ? std::min(weights[target], w) : w;
      if (kPolicy == DuplicatePolicy::kMax) merged = duplicate ? std::max(weights[target], w) : w;
      if (kPolicy == DuplicatePolicy::kSum) merged = duplicate ? weights[target] + w : w;
      weights[target] = merged;
    }
    out += duplicate ? 0 : 1;
  }
  return out;
}

Offset merge_sorted_row(std::span<const std::uint64_t> keys,
                        const float* row_weights,
                        DuplicatePolicy policy,
                        Index* cols,
                        float* weights) {
  switch (policy) {
    case DuplicatePolicy::kKeepAll:
      return merge_row<DuplicatePolicy::kKeepAll>(keys, row_weights, cols, weights);
    case DuplicatePolicy::kMin:
      return merge_row<DuplicatePolicy::kMin>(keys, row_weights, cols, weights);
    case DuplicatePolicy::kMax:
      return merge_row<DuplicatePolicy::kMax>(keys, row_weights, cols, weights);
    case DuplicatePolicy::kSum:
      return merge_row<DuplicatePolicy::kSum>(keys, row_weights, cols, weights);
  }
  return 0;
}

}  // namespace

CsrGraph build_csr(Index num_nodes, const EdgeListView& edges, const BuildOptions& options) {
  check_edges(num_nodes, edges);
  const bool weighted = !edges.weights.empty();
  const bool drop_loops = options.self_loops == SelfLoopPolicy::kDrop;
  const bool symmetrize = options.symmetrize;
  DuplicatePolicy duplicates = options.duplicates;
  if (symmetrize && duplicates == DuplicatePolicy::kKeepAll) duplicates = DuplicatePolicy::kMax;
  const Offset input_edges = static_cast<Offset>(edges.src.size());
  const std::size_t n = static_cast<std::size_t>(num_nodes);

  // Counting sort by source row, parallel over contiguous chunks of the edge list: each chunk
  // counts its own rows, the prefix sums give every (chunk, row) its own cursor, and chunks then
  // place their edges without contention. Chunk c's entries precede chunk c+1's within a row, so
  // rows keep input order. The per-chunk histograms cost chunks * n counters; chunks are capped.
  const int chunks = static_cast<int>(std::clamp<Offset>(
      std::min<Offset>(omp_get_max_threads(), 8), 1, std::max<Offset>(1, input_edges / 65536)));
  std::vector<Offset> cursor(static_cast<std::size_t>(chunks) * n, 0);
  auto chunk_range = [&](int c) {
    return std::pair<Offset, Offset>(input_edges * c / chunks, input_edges * (c + 1) / chunks);
  };
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) {
    // data() + offset: with no nodes `cursor` is empty, and indexing it would be undefined.
    Offset* count = cursor.data() + static_cast<std::size_t>(c) * n;
    const auto [begin, end] = chunk_range(c);
    for (Offset e = begin; e < end; ++e) {
      const Index u = edges.src[e];
      const Index v = edges.dst[e];
      if (u == v && drop_loops) continue;
      ++count[u];
      if (symmetrize && u != v) ++count[v];
    }
  }
  std::vector<Offset> offsets(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    Offset running = offsets[i];
    for (int c = 0; c < chunks; ++c) {
      const Offset count = cursor[c * n + i];
      cursor[c * n + i] = running;
      running += count;
    }
    offsets[i + 1] = running;
  }
  const Offset total = offsets[n];
  // Placement scatters the reversed edges across rows: keep column and weight side by side so each
  // scattered write touches one cache line, then split them while sorting rows (sequential).
  struct Entry {
    Index col;
    float weight;
  };
  std::vector<Entry> entries(total);
#pragma omp parallel for num_threads(chunks) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) {
    Offset* next = cursor.data() + static_cast<std::size_t>(c) * n;
    const auto [begin, end] = chunk_range(c);
    for (Offset e = begin; e < end; ++e) {
      const Index u = edges.src[e];
      const Index v = edges.dst[e];
      if (u == v && drop_loops) continue;
      const float w = weighted ? edges.weights[e] : 1.0f;
      entries[next[u]++] = {v, w};
      if (symmetrize && u != v) entries[next[v]++] = {u, w};
    }
  }
  std::vector<Offset>().swap(cursor);

  // Sort each row by column and merge parallel edges into cols/weights at the row's start; rows
  // only shrink, so the kept length per row is recorded and the arrays compacted afterwards.
  std::vector<Index> cols(total);
  std::vector<float> weights(weighted ? total : 0);
  std::vector<Offset> kept(n, 0);
#pragma omp parallel
  {
    // Key = column << 32 | position in row: a total order, so the sort keeps kept parallel edges
    // in input order (stable) without std::stable_sort's per-call buffer.
    std::vector<std::uint64_t> keys;
    std::vector<float> row_weights;
#pragma omp for schedule(dynamic, 256)
    for (Index i = 0; i < num_nodes; ++i) {
      const Offset begin = offsets[i];
      const Offset length = offsets[i + 1] - begin;
      // data() + begin, not &entries[begin]: with no edges at all `entries` is empty and indexing
      // it is undefined (found by the graph fuzz harness).
      const Entry* row = entries.data() + begin;
      bool sorted = true;
      for (Offset p = 1; p < length; ++p) sorted = sorted && row[p - 1].col < row[p].col;
      if (sorted) {  // strictly increasing: nothing to sort or merge
        for (Offset p = 0; p < length; ++p) {
          cols[begin + p] = row[p].col;
          if (weighted) weights[begin + p] = row[p].weight;
        }
        kept[i] = length;
        continue;
      }
      keys.resize(length);
      row_weights.resize(length);
      for (Offset p = 0; p < length; ++p) {
        keys[p] = (static_cast<std::uint64_t>(row[p].col) << 32) | static_cast<std::uint32_t>(p);
        row_weights[p] = row[p].weight;
      }
      std::sort(keys.begin(), keys.end());
      kept[i] = merge_sorted_row(keys,
                                 weighted ? row_weights.data() : nullptr,
                                 duplicates,
                                 &cols[begin],
                                 weighted ? &weights[begin] : nullptr);
    }
  }
  std::vector<Entry>().swap(entries);

  std::vector<Offset> row_offsets(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) row_offsets[i + 1] = row_offsets[i] + kept[i];
  if (row_offsets[n] == total) {
    return CsrGraph(num_nodes, std::move(row_offsets), std::move(cols), std::move(weights));
  }
  std::vector<Index> packed_cols(row_offsets[n]);
  std::vector<float> packed_weights(weighted ? row_offsets[n] : 0);
#pragma omp parallel for schedule(dynamic, 1024)
  for (Index i = 0; i < num_nodes; ++i) {
    std::copy_n(cols.begin() + offsets[i], kept[i], packed_cols.begin() + row_offsets[i]);
    if (weighted) {
      std::copy_n(weights.begin() + offsets[i], kept[i], packed_weights.begin() + row_offsets[i]);
    }
  }
  return CsrGraph(
      num_nodes, std::move(row_offsets), std::move(packed_cols), std::move(packed_weights));
}

EdgeList to_edge_list(const CsrGraphView& graph) {
  EdgeList list;
  list.src.resize(graph.num_edges());
  list.dst.assign(graph.col_indices.begin(), graph.col_indices.end());
  list.weights.assign(graph.weights.begin(), graph.weights.end());
  for (Index i = 0; i < graph.num_nodes; ++i) {
    std::fill(
        list.src.begin() + graph.row_offsets[i], list.src.begin() + graph.row_offsets[i + 1], i);
  }
  return list;
}

}  // namespace gw
