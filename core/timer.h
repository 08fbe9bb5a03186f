// Wall-clock timing: a stopwatch and named per-phase accumulators (for solver reports).
//
// Thread-safety: none; each PhaseTimes belongs to one orchestrating thread.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw {

// Monotonic wall-clock stopwatch (std::chrono::steady_clock), started on construction.
class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void reset() { start_ = Clock::now(); }
  // Seconds since construction or the last reset().
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
};

// Seconds accumulated per named phase, in first-seen order ("distances", "cost", "sinkhorn", ...).
class PhaseTimes {
 public:
  void add(std::string_view phase, double seconds);
  // 0 for a phase never added.
  double get(std::string_view phase) const;
  double total() const;
  const std::vector<std::pair<std::string, double>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, double>> entries_;
};

// Adds the lifetime of the scope to one phase of a PhaseTimes.
class ScopedPhase {
 public:
  ScopedPhase(PhaseTimes& times, std::string_view phase) : times_(times), phase_(phase) {}
  ~ScopedPhase() { times_.add(phase_, watch_.seconds()); }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseTimes& times_;
  std::string_view phase_;
  Stopwatch watch_;
};

}  // namespace gw
