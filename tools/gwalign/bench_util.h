// Shared pieces of the `gwalign bench` subcommands: repeated timing with medians, the streaming
// floors that kernels are compared against, and the one-object JSON / text report.
#pragma once

#include <cxxopts.hpp>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gw::cli {

struct TimingStats {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  int reps = 0;
};

// Runs `fn` `warmup` times untimed, then `reps` times timed; returns median/min/max seconds.
TimingStats time_repeated(int reps, const std::function<void()>& fn, int warmup = 1);

// Median of a list of samples (the mean of the two middle values for an even count).
double median(std::vector<double> samples);

// The process's maximum resident set so far, in bytes (getrusage ru_maxrss).
std::size_t peak_rss_bytes();

// The floors themselves (read / write bandwidth, multiply-add peak) are gw::floors
// (tools/floors/floors.h), shared with the Google Benchmark binaries.

// Options every benchmark takes: --reps, --threads, --seed, --json, --help.
void add_common_bench_options(cxxopts::Options& options, int default_reps = 5);

// One benchmark's output: an ordered list of fields printed as one JSON object (--json) or as
// aligned "name: value" lines.
class BenchReport {
 public:
  explicit BenchReport(std::string what);

  BenchReport& set(const std::string& name, double v);
  BenchReport& set(const std::string& name, std::int64_t v);
  BenchReport& set(const std::string& name, int v) { return set(name, std::int64_t{v}); }
  BenchReport& set(const std::string& name, bool v);
  BenchReport& set(const std::string& name, const std::string& v);
  BenchReport& set(const std::string& name, const char* v) { return set(name, std::string(v)); }
  // Adds <prefix>seconds, <prefix>seconds_min, <prefix>seconds_max (and reps once).
  BenchReport& set_timing(const std::string& prefix, const TimingStats& stats);

  void print(std::ostream& out, bool json) const;

 private:
  using Value = std::variant<double, std::int64_t, bool, std::string>;
  BenchReport& put(const std::string& name, Value v);
  std::vector<std::pair<std::string, Value>> fields_;
};

}  // namespace gw::cli
