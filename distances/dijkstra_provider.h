// On-the-fly distances: one Dijkstra per requested anchor, with a bounded cache of distance rows.
//
// The sampled GW loop draws anchors in proportion to the plan's mass, so high-mass nodes come back
// again and again; their rows are served from the cache. A row is the n float32 distances from an
// anchor (see shortest_paths.h for direction and rounding); out[i * m + k] = row(anchors[k])[i].
//
// Cache: at most `capacity` rows of 4n bytes each, allocated as they are first needed.
// Replacement: least recently used among the rows the current requests are not using. A request
// pins the rows it reads, so eviction never drops a row a request still needs; when a request
// needs more distinct rows than the cache can lend it, the extra rows are computed into scratch
// memory of that request (4n bytes each, freed when it returns) and not cached. Anchors repeated
// within one request are computed once.
//
// Memory: the graph copy (8(n + 1) + 8E bytes) + the cache (4n x rows in use, at most
// 4n x capacity) + per request 4n x (uncached rows).
//
// Thread-safety: distances_to may be called concurrently. Cache bookkeeping is under a mutex;
// the Dijkstra runs and the copy into `out` happen outside it. Two concurrent requests that both
// miss the same anchor may both compute it (only one caches it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/types.h"
#include "distances/distance_provider.h"
#include "graph/csr_graph.h"

namespace gw {

struct DijkstraOptions {
  // Cache capacity in rows. std::nullopt (default): as many rows as fit in cache_memory_bytes,
  // at most n. 0 disables the cache (every anchor is a fresh Dijkstra run).
  std::optional<Index> cache_rows;
  // Memory budget of the default capacity (default 512 MiB: 1,342 rows for n = 100,000; all
  // rows, i.e. the full distance matrix, for n <= 11,585).
  std::size_t cache_memory_bytes = std::size_t{512} << 20;
  // CPU threads for the Dijkstra runs of one request (parallel over anchors) and for filling the
  // output (0 = all available).
  int threads = 0;
};

class DijkstraProvider final : public DistanceProvider {
 public:
  // Copies and validates the graph (kBadData for a malformed graph or a negative / non-finite
  // weight); kInvalidArgument for a negative cache_rows.
  DijkstraProvider(const CsrGraphView& graph, const DijkstraOptions& options = {});
  ~DijkstraProvider() override;

  std::string_view name() const override { return "dijkstra"; }
  Index num_nodes() const override { return graph_.num_nodes(); }
  void distances_to(std::span<const Index> anchors, std::span<float> out) const override;
  std::size_t memory_bytes() const override;
  // requests, anchors (with repeats), shortest_path_runs (= cache_misses + rows computed for
  // requests that found another request computing them), and, counted once per distinct anchor of
  // a request, cache_hits and cache_misses.
  DistanceStats stats() const override { return counters_.snapshot(); }

  // Cache capacity in rows (the resolved DijkstraOptions::cache_rows).
  Index cache_capacity() const { return capacity_; }
  // Rows currently held in the cache.
  Index cached_rows() const;

 private:
  struct Slot {
    Index anchor = -1;             // node whose row this is; -1 for an empty slot
    std::unique_ptr<float[]> row;  // n floats, allocated on first use
    int pins = 0;                  // requests currently reading or writing the row
    bool ready = false;            // the row holds the finished distances of `anchor`
    std::uint64_t last_used = 0;   // LRU clock value of the last request that used it
  };

  CsrGraph graph_;
  Index capacity_ = 0;
  int threads_ = 0;

  mutable std::mutex mutex_;  // guards slots_, where_, clock_, allocated_rows_
  mutable std::vector<Slot> slots_;
  mutable std::unordered_map<Index, std::size_t> where_;  // anchor -> slot of a cached row
  mutable std::uint64_t clock_ = 0;
  mutable std::size_t allocated_rows_ = 0;
  mutable DistanceCounters counters_;
};

// Convenience factory (the graph is copied; the caller's view may go away).
std::unique_ptr<DijkstraProvider> make_dijkstra_provider(const CsrGraphView& graph,
                                                         const DijkstraOptions& options = {});

}  // namespace gw
