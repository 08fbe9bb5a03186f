#include "bench_util.h"

#include <omp.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <memory>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/json.h"
#include "core/timer.h"
#include "huge_pages.h"

namespace gw::cli {

double median(std::vector<double> samples) {
  GW_CHECK(!samples.empty(), "median of no samples");
  std::sort(samples.begin(), samples.end());
  const std::size_t mid = samples.size() / 2;
  return samples.size() % 2 == 1 ? samples[mid] : 0.5 * (samples[mid - 1] + samples[mid]);
}

std::size_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::size_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

TimingStats time_repeated(int reps, const std::function<void()>& fn, int warmup) {
  GW_CHECK(reps >= 1, "--reps must be >= 1, got " << reps);
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> samples;
  samples.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    Stopwatch watch;
    fn();
    samples.push_back(watch.seconds());
  }
  TimingStats stats;
  stats.reps = reps;
  stats.min = *std::min_element(samples.begin(), samples.end());
  stats.max = *std::max_element(samples.begin(), samples.end());
  stats.median = median(std::move(samples));
  return stats;
}

void add_common_bench_options(cxxopts::Options& options, int default_reps) {
  // clang-format off
  options.add_options("common")
      ("reps", "timed repetitions (the median is reported)",
       cxxopts::value<int>()->default_value(std::to_string(default_reps)))
      ("threads", "CPU threads (0 = all)", cxxopts::value<int>()->default_value("0"))
      ("seed", "random seed for the generated input",
       cxxopts::value<std::uint64_t>()->default_value("1"))
      ("json", "print one JSON object on stdout")
      ("h,help", "print this help");
  // clang-format on
}

BenchReport::BenchReport(std::string what) {
  put("what", std::move(what));
  // Which instruction-set target the CPU kernels run (core/isa.h), and whether the non-kernel
  // code was built for this machine only: figures from different builds stay comparable.
  put("isa", std::string(to_string(active_isa())));
  put("native_build", static_cast<bool>(GW_NATIVE_BUILD));
  put("malloc_huge_pages", gw::cli::malloc_uses_huge_pages());
}

BenchReport& BenchReport::put(const std::string& name, Value v) {
  for (auto& field : fields_) {
    if (field.first == name) {
      field.second = std::move(v);
      return *this;
    }
  }
  fields_.emplace_back(name, std::move(v));
  return *this;
}

BenchReport& BenchReport::set(const std::string& name, double v) { return put(name, v); }
BenchReport& BenchReport::set(const std::string& name, std::int64_t v) { return put(name, v); }
BenchReport& BenchReport::set(const std::string& name, bool v) { return put(name, v); }
BenchReport& BenchReport::set(const std::string& name, const std::string& v) {
  return put(name, v);
}

BenchReport& BenchReport::set_timing(const std::string& prefix, const TimingStats& stats) {
  set(prefix + "seconds", stats.median);
  set(prefix + "seconds_min", stats.min);
  set(prefix + "seconds_max", stats.max);
  return set("reps", std::int64_t{stats.reps});
}

void BenchReport::print(std::ostream& out, bool json) const {
  if (json) {
    JsonWriter writer;
    writer.begin_object();
    for (const auto& [name, v] : fields_) {
      writer.key(name);
      std::visit([&writer](const auto& x) { writer.value(x); }, v);
    }
    writer.end_object();
    out << writer.str() << "\n";
    return;
  }
  std::size_t width = 0;
  for (const auto& field : fields_) width = std::max(width, field.first.size());
  for (const auto& [name, v] : fields_) {
    out << std::left << std::setw(static_cast<int>(width) + 2) << (name + ":");
    std::visit(
        [&out](const auto& x) {
          if constexpr (std::is_same_v<std::decay_t<decltype(x)>, bool>) {
            out << (x ? "true" : "false");
          } else if constexpr (std::is_same_v<std::decay_t<decltype(x)>, double>) {
            out << std::setprecision(6) << x;
          } else {
            out << x;
          }
        },
        v);
    out << "\n";
  }
}

}  // namespace gw::cli
