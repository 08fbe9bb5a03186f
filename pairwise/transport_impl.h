// How `run_pairwise` hands out work and gathers results: in one process (LocalTransport) or across
// MPI ranks (pairwise/mpi.h). Every method is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace gw::pairwise {

// The result of one work item, as it travels to rank 0 (plain doubles, so one MPI_Put moves it).
struct ItemResult {
  double objective = 0.0;
  double standard_error = 0.0;
  double seconds = 0.0;
  double status = 0.0;  // 0 pending, 1 done, 2 abnormal, 3 pruned
  double iterations = 0.0;
};
static_assert(sizeof(ItemResult) == 5 * sizeof(double));

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sizes the result store for `items` work items and resets the work counter (collective).
  virtual void begin(std::int64_t items) = 0;
  // The next [begin, end) of the work list, at most `chunk` items; false when none is left.
  virtual bool next_chunk(std::int64_t chunk, std::int64_t& begin, std::int64_t& end) = 0;
  // Stores item k's result where rank 0 can read it.
  virtual void record(std::int64_t item, const ItemResult& result) = 0;
  // Rank 0: every item's result so far (status 0 where pending). Other ranks: empty.
  virtual std::vector<ItemResult> snapshot() = 0;
  // Rank 0: items recorded so far by all ranks.
  virtual std::int64_t recorded() = 0;
  // Waits for every rank (collective).
  virtual void barrier() = 0;
  // Rank 0's `values` on every rank (collective).
  virtual void broadcast(std::vector<std::int64_t>& values) = 0;
};

class LocalTransport final : public Transport {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void begin(std::int64_t items) override {
    results_.assign(static_cast<std::size_t>(items), ItemResult{});
    items_ = items;
    next_ = 0;
    recorded_ = 0;
  }
  bool next_chunk(std::int64_t chunk, std::int64_t& begin, std::int64_t& end) override {
    begin = next_.fetch_add(chunk);
    end = std::min(begin + chunk, items_);
    return begin < items_;
  }
  void record(std::int64_t item, const ItemResult& result) override {
    std::lock_guard<std::mutex> lock(mutex_);
    results_[static_cast<std::size_t>(item)] = result;
    ++recorded_;
  }
  std::vector<ItemResult> snapshot() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return results_;
  }
  std::int64_t recorded() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return recorded_;
  }
  void barrier() override {}
  void broadcast(std::vector<std::int64_t>&) override {}

 private:
  std::mutex mutex_;
  std::vector<ItemResult> results_;
  std::int64_t items_ = 0;
  std::int64_t recorded_ = 0;
  std::atomic<std::int64_t> next_{0};
};

}  // namespace gw::pairwise
