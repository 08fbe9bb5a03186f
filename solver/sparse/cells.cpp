// The sparse path's cells (level 1, sparse_impl.h): each side quantized by random picks and
// nearest-pick assignment, the cells indexed for the support's construction and re-growth.
#include <algorithm>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "core/rng.h"
#include "solver/sparse/sparse_impl.h"

namespace gw::detail {

namespace {

constexpr Index kMaxAutoCells = 2000;

}  // namespace

Index resolved_support_cells(Index n, Index k, const Options& options) {
  const Index smaller = std::min(n, k);
  Index cells = options.support_cells;
  if (cells == 0) {
    cells = smaller / std::max(1, options.support_size / 2);
    cells = std::clamp<Index>(cells, 2, kMaxAutoCells);
  }
  return std::min(cells, smaller);
}

Quantization quantize(const DistanceProvider& provider,
                      Index cells,
                      std::uint64_t seed,
                      std::uint64_t stream,
                      std::size_t block_bytes) {
  const Index n = provider.num_nodes();
  GW_CHECK(cells >= 1 && cells <= n, "quantize: " << cells << " cells for " << n << " nodes");
  Quantization q;
  q.cells = cells;
  // Picks: the first `cells` entries of a seeded Fisher-Yates shuffle of the node ids.
  Rng rng(seed, stream);
  std::vector<Index> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  for (Index t = 0; t < cells; ++t) {
    const Index swap = t + static_cast<Index>(rng.uniform_index(static_cast<std::uint64_t>(n - t)));
    std::swap(ids[t], ids[swap]);
  }
  q.picks.assign(ids.begin(), ids.begin() + cells);
  std::vector<Index>().swap(ids);
  q.cell.assign(n, 0);
  std::vector<float> nearest(n, std::numeric_limits<float>::infinity());
  q.distances.assign(static_cast<std::size_t>(cells) * cells, 0.0f);
  const Index block =
      std::clamp<Index>(static_cast<Index>(block_bytes / (sizeof(float) * n)), 1, 256);
  std::vector<float> out;
  for (Index start = 0; start < cells; start += block) {
    const Index b = std::min(block, cells - start);
    out.resize(static_cast<std::size_t>(n) * b);
    provider.distances_to(std::span<const Index>(q.picks.data() + start, b), out);
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i) {
      const float* row = &out[static_cast<std::size_t>(i) * b];
      for (Index t = 0; t < b; ++t) {
        if (row[t] < nearest[i]) {
          nearest[i] = row[t];
          q.cell[i] = start + t;
        }
      }
    }
    for (Index a = 0; a < cells; ++a) {
      const float* row = &out[static_cast<std::size_t>(q.picks[a]) * b];
      for (Index t = 0; t < b; ++t)
        q.distances[static_cast<std::size_t>(a) * cells + start + t] = row[t];
    }
  }
  // A pick is always in its own cell (ties with another pick at distance 0 go to the lower id;
  // such a duplicate's cell is then empty and carries no mass).
  for (Index a = 0; a < cells; ++a) {
    for (Index b = a + 1; b < cells; ++b) {
      float& ab = q.distances[static_cast<std::size_t>(a) * cells + b];
      float& ba = q.distances[static_cast<std::size_t>(b) * cells + a];
      ab = ba = std::min(ab, ba);
    }
    q.distances[static_cast<std::size_t>(a) * cells + a] = 0.0f;
  }
  return q;
}

CellIndex index_cells(const Quantization& q, Index n, Rng& rng) {
  CellIndex index;
  index.offsets.assign(static_cast<std::size_t>(q.cells) + 1, 0);
  for (Index i = 0; i < n; ++i) ++index.offsets[q.cell[i] + 1];
  for (Index c = 0; c < q.cells; ++c) index.offsets[c + 1] += index.offsets[c];
  index.members.resize(n);
  std::vector<Offset> next(index.offsets.begin(), index.offsets.end() - 1);
  for (Index i = 0; i < n; ++i) index.members[next[q.cell[i]]++] = i;
  for (Index c = 0; c < q.cells; ++c) {
    rng.shuffle(std::span<Index>(index.members.data() + index.offsets[c],
                                 index.offsets[c + 1] - index.offsets[c]));
  }
  index.neighbours.assign(static_cast<std::size_t>(q.cells) * kNeighbourCells, -1);
#pragma omp parallel
  {
    std::vector<Index> order(q.cells);
#pragma omp for schedule(static)
    for (Index c = 0; c < q.cells; ++c) {
      std::iota(order.begin(), order.end(), 0);
      const float* d = &q.distances[static_cast<std::size_t>(c) * q.cells];
      const int count = std::min<Index>(kNeighbourCells, q.cells);
      std::partial_sort(order.begin(), order.begin() + count, order.end(), [&](Index a, Index b) {
        // The cell itself first (distance 0), then nearest, ties by id.
        const float da = a == c ? -1.0f : d[a], db = b == c ? -1.0f : d[b];
        return da < db || (da == db && a < b);
      });
      for (int t = 0; t < count; ++t)
        index.neighbours[static_cast<std::size_t>(c) * kNeighbourCells + t] = order[t];
    }
  }
  return index;
}

}  // namespace gw::detail
