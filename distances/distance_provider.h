// Distance providers: shortest-path distances from every node of a graph to a few anchor nodes.
//
// The sampled GW loop asks, every iteration, for D = dist(all nodes, anchors) with a fresh set of
// M anchors (M = 50..100) on each side. Providers answer that question in different ways
// (docs/architecture.md section 1):
//   precomputed  all-pairs shortest paths once (O(n^2) float32 memory), then row lookups;
//                or a user-given dense distance matrix
//   dijkstra     Dijkstra from each requested anchor, with a bounded cache of distance rows
//   landmark     farthest-point landmarks; distances approximated in landmark space
//
// Output layout everywhere: an n x m float32 block, row-major, out[i * m + a] = distance from node
// i to anchors[a] (m = anchors.size()). Unreachable pairs are +inf; clamp_and_normalize() turns
// them into finite values as the GW loop needs.
//
// Direction: for a directed graph, "the distance from node i to anchor a" is the length of the
// shortest path a -> i (one Dijkstra from the anchor gives a whole column of the block). For an
// undirected graph, and for a symmetric dense matrix, the two readings agree.
//
// The providers: precomputed.h (precomputed, dense), dijkstra_provider.h, landmark.h;
// providers.h builds one from a DistanceMode.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/types.h"

namespace gw {

// Counters a provider keeps for reports. The cache counters are zero for providers without a
// cache; shortest_path_runs includes the runs made while building the provider (n for
// precomputed, d for landmark, 0 for a dense matrix).
struct DistanceStats {
  std::int64_t requests = 0;            // calls to distances_to
  std::int64_t anchors = 0;             // anchors requested in total (with repeats)
  std::int64_t shortest_path_runs = 0;  // single-source shortest-path computations performed
  std::int64_t cache_hits = 0;          // anchor rows served from a cache
  std::int64_t cache_misses = 0;        // anchor rows that had to be computed
};

// Lock-free counters behind DistanceProvider::stats(), for provider implementations (relaxed
// atomics: each counter is exact, a snapshot taken during concurrent queries may mix requests).
struct DistanceCounters {
  std::atomic<std::int64_t> requests{0};
  std::atomic<std::int64_t> anchors{0};
  std::atomic<std::int64_t> shortest_path_runs{0};
  std::atomic<std::int64_t> cache_hits{0};
  std::atomic<std::int64_t> cache_misses{0};

  void count_request(std::size_t num_anchors) {
    requests.fetch_add(1, std::memory_order_relaxed);
    anchors.fetch_add(static_cast<std::int64_t>(num_anchors), std::memory_order_relaxed);
  }
  DistanceStats snapshot() const {
    DistanceStats stats;
    stats.requests = requests.load(std::memory_order_relaxed);
    stats.anchors = anchors.load(std::memory_order_relaxed);
    stats.shortest_path_runs = shortest_path_runs.load(std::memory_order_relaxed);
    stats.cache_hits = cache_hits.load(std::memory_order_relaxed);
    stats.cache_misses = cache_misses.load(std::memory_order_relaxed);
    return stats;
  }
};

class DistanceProvider {
 public:
  virtual ~DistanceProvider() = default;

  // "precomputed", "dense", "dijkstra", "landmark".
  virtual std::string_view name() const = 0;

  // Number of nodes n of the underlying graph / matrix.
  virtual Index num_nodes() const = 0;

  // Fills `out` (n x m, row-major, m = anchors.size()) with the distance from every node to each
  // anchor; +inf where unreachable. Anchors may repeat. Throws gw::Error(kInvalidArgument) naming
  // the first anchor outside [0, n), and when out.size() != n * m.
  // Thread-safe: may be called concurrently from several threads.
  virtual void distances_to(std::span<const Index> anchors, std::span<float> out) const = 0;

  // Bytes of memory the provider holds (matrices, caches, coordinates), for reports and for the
  // solver's memory estimate.
  virtual std::size_t memory_bytes() const = 0;

  // Counters since construction.
  virtual DistanceStats stats() const { return {}; }

  // True when the provider holds the full n x n matrix in memory, so that reading every row is a
  // copy rather than n shortest-path runs (the solver then computes the exact GW loss).
  virtual bool holds_full_matrix() const { return false; }
};

// How the solver builds a provider from a graph.
enum class DistanceMode { kPrecomputed, kDijkstra, kLandmark };

// "precomputed" / "dijkstra" / "landmark".
std::string_view to_string(DistanceMode mode);
// Inverse of to_string; std::nullopt for an unknown name.
std::optional<DistanceMode> distance_mode_from_string(std::string_view name);

// Post-processing shared by every provider's output (docs/architecture.md): every +inf entry of
// the block becomes 1.5 x the largest finite entry; then, if `normalize`, the block is divided by
// its maximum so the largest entry is 1 (a block whose maximum is 0 is left as is). A block with
// no finite positive entry has its infinities set to 1. Returns the divisor used (1 when not
// normalizing). NaN entries throw kBadData. O(size), OpenMP.
// (Also kBadData: a -inf entry. Finite negative entries are left alone; no provider makes them.)
double clamp_and_normalize(std::span<float> block, bool normalize);

}  // namespace gw
