#include "distances/dijkstra_provider.h"

#include <algorithm>

#include "core/context.h"
#include "core/error.h"
#include "distances/provider_util_impl.h"
#include "distances/shortest_paths_impl.h"

namespace gw {

DijkstraProvider::DijkstraProvider(const CsrGraphView& graph, const DijkstraOptions& options)
    : threads_(options.threads) {
  validate(graph, "graph");
  resolve_threads(options.threads);  // rejects a negative count now rather than at the first query
  graph_ = CsrGraph::copy_of(graph);
  const Index n = graph_.num_nodes();
  if (options.cache_rows) {
    GW_CHECK(*options.cache_rows >= 0,
             "DijkstraOptions::cache_rows must be >= 0 (0 disables the cache), got "
                 << *options.cache_rows);
    capacity_ = std::min(*options.cache_rows, n);
  } else if (n > 0) {
    const std::size_t row_bytes = static_cast<std::size_t>(n) * sizeof(float);
    capacity_ = static_cast<Index>(
        std::min<std::size_t>(static_cast<std::size_t>(n), options.cache_memory_bytes / row_bytes));
  }
  slots_.reserve(static_cast<std::size_t>(capacity_));
}

DijkstraProvider::~DijkstraProvider() = default;

Index DijkstraProvider::cached_rows() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Index count = 0;
  for (const Slot& slot : slots_) count += (slot.anchor >= 0 && slot.ready) ? 1 : 0;
  return count;
}

std::size_t DijkstraProvider::memory_bytes() const {
  std::size_t bytes = graph_.row_offsets().size() * sizeof(Offset) +
                      graph_.col_indices().size() * sizeof(Index) +
                      graph_.weights().size() * sizeof(float);
  std::lock_guard<std::mutex> lock(mutex_);
  bytes += allocated_rows_ * static_cast<std::size_t>(graph_.num_nodes()) * sizeof(float);
  bytes += slots_.capacity() * sizeof(Slot) + where_.size() * 2 * sizeof(std::size_t);
  return bytes;
}

void DijkstraProvider::distances_to(std::span<const Index> anchors, std::span<float> out) const {
  const Index n = graph_.num_nodes();
  detail::check_request(anchors, n, out);
  counters_.count_request(anchors.size());
  if (anchors.empty()) return;

  std::vector<Index> distinct(anchors.begin(), anchors.end());
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  const std::size_t num_distinct = distinct.size();

  std::vector<const float*> source(num_distinct, nullptr);  // row of each distinct anchor
  std::vector<Index> compute_anchor;                        // rows this request computes...
  std::vector<float*> compute_row;                          // ...and where they go
  std::vector<std::size_t> pinned;                          // slots this request pinned
  std::vector<std::size_t> filling;                         // slots this request fills
  std::vector<std::size_t> uncached;                        // distinct ids computed into scratch

  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::uint64_t now = ++clock_;
    std::vector<std::size_t> misses;
    // Hits first, and pinned at once, so that the evictions below cannot take a row this
    // request is about to read.
    for (std::size_t d = 0; d < num_distinct; ++d) {
      const auto it = where_.find(distinct[d]);
      if (it != where_.end() && slots_[it->second].ready) {
        Slot& slot = slots_[it->second];
        ++slot.pins;
        slot.last_used = now;
        source[d] = slot.row.get();
        pinned.push_back(it->second);
      } else {
        misses.push_back(d);
      }
    }
    counters_.cache_hits.fetch_add(static_cast<std::int64_t>(num_distinct - misses.size()),
                                   std::memory_order_relaxed);
    counters_.cache_misses.fetch_add(static_cast<std::int64_t>(misses.size()),
                                     std::memory_order_relaxed);

    // A row another request is computing right now (pinned, not ready) is computed again here
    // rather than waited for; only that other request caches it.
    std::vector<std::size_t> to_cache;
    for (const std::size_t d : misses) {
      (where_.count(distinct[d]) > 0 ? uncached : to_cache).push_back(d);
    }

    // Slots the misses may take: empty ones, never-used ones up to the capacity, then unpinned
    // rows, least recently used first. Pinned rows (this request's hits, rows other requests
    // read or fill) are off limits.
    std::vector<std::size_t> free_slots;
    for (std::size_t s = 0; s < slots_.size() && free_slots.size() < to_cache.size(); ++s) {
      if (slots_[s].anchor < 0 && slots_[s].pins == 0) free_slots.push_back(s);
    }
    while (slots_.size() < static_cast<std::size_t>(capacity_) &&
           free_slots.size() < to_cache.size()) {
      free_slots.push_back(slots_.size());
      slots_.emplace_back();
    }
    if (free_slots.size() < to_cache.size()) {
      std::vector<std::size_t> evictable;
      for (std::size_t s = 0; s < slots_.size(); ++s) {
        if (slots_[s].pins == 0 && slots_[s].anchor >= 0) evictable.push_back(s);
      }
      const std::size_t wanted = std::min(evictable.size(), to_cache.size() - free_slots.size());
      std::partial_sort(evictable.begin(),
                        evictable.begin() + static_cast<std::ptrdiff_t>(wanted),
                        evictable.end(),
                        [this](std::size_t a, std::size_t b) {
                          return slots_[a].last_used < slots_[b].last_used;
                        });
      free_slots.insert(free_slots.end(),
                        evictable.begin(),
                        evictable.begin() + static_cast<std::ptrdiff_t>(wanted));
    }

    for (std::size_t t = 0; t < to_cache.size(); ++t) {
      const std::size_t d = to_cache[t];
      const Index anchor = distinct[d];
      if (t >= free_slots.size()) {
        uncached.push_back(d);
        continue;
      }
      const std::size_t s = free_slots[t];
      Slot& slot = slots_[s];
      if (slot.anchor >= 0) where_.erase(slot.anchor);
      if (!slot.row) {
        slot.row.reset(new float[static_cast<std::size_t>(n)]);
        ++allocated_rows_;
      }
      slot.anchor = anchor;
      slot.ready = false;
      slot.pins = 1;
      slot.last_used = now;
      where_[anchor] = s;
      pinned.push_back(s);
      filling.push_back(s);
      source[d] = slot.row.get();
      compute_anchor.push_back(anchor);
      compute_row.push_back(slot.row.get());
    }
  }

  // Whatever happens below, give the pinned slots back; slots that were not filled are emptied
  // so that no later request can read a half-computed row.
  bool filled = false;
  struct Release {
    const DijkstraProvider& self;
    const std::vector<std::size_t>& pinned;
    const std::vector<std::size_t>& filling;
    const bool& filled;
    ~Release() {
      std::lock_guard<std::mutex> lock(self.mutex_);
      for (const std::size_t s : filling) {
        Slot& slot = self.slots_[s];
        if (filled) {
          slot.ready = true;
        } else {
          self.where_.erase(slot.anchor);
          slot.anchor = -1;
          slot.ready = false;
        }
      }
      for (const std::size_t s : pinned) --self.slots_[s].pins;
    }
  } release{*this, pinned, filling, filled};

  std::unique_ptr<float[]> scratch;
  if (!uncached.empty()) {
    scratch.reset(new float[uncached.size() * static_cast<std::size_t>(n)]);
    for (std::size_t u = 0; u < uncached.size(); ++u) {
      float* row = scratch.get() + u * static_cast<std::size_t>(n);
      source[uncached[u]] = row;
      compute_anchor.push_back(distinct[uncached[u]]);
      compute_row.push_back(row);
    }
  }

  const int threads = resolve_threads(threads_);
  const std::int64_t runs = static_cast<std::int64_t>(compute_anchor.size());
  const CsrGraphView view = graph_.view();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (runs > 1)
  for (std::int64_t r = 0; r < runs; ++r) {
    detail::dijkstra_row(view, compute_anchor[r], compute_row[r]);
  }
  counters_.shortest_path_runs.fetch_add(runs, std::memory_order_relaxed);
  filled = true;

  std::vector<const float*> rows(anchors.size());
  for (std::size_t k = 0; k < anchors.size(); ++k) {
    const auto d =
        std::lower_bound(distinct.begin(), distinct.end(), anchors[k]) - distinct.begin();
    rows[k] = source[static_cast<std::size_t>(d)];
  }
  detail::gather_columns(rows, n, out, threads);
}

std::unique_ptr<DijkstraProvider> make_dijkstra_provider(const CsrGraphView& graph,
                                                         const DijkstraOptions& options) {
  return std::make_unique<DijkstraProvider>(graph, options);
}

}  // namespace gw
