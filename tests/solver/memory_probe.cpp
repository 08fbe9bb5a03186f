// Helper process of MemoryEstimate.* (sparse_solver_test.cpp): builds a spiral -> swiss roll
// problem with landmark providers, runs one gw::solve and prints two numbers: the estimate of the
// solver's own buffers (estimate_memory of the chosen path minus its inputs) and the measured
// growth of the peak resident set over the resident set before the call. A separate process
// (not fork()) so that the measurement starts from a fresh OpenMP runtime and a clean peak.
//   memory_probe dense|sparse N K SUPPORT_SIZE
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "datagen/spiral.h"
#include "distances/landmark.h"
#include "graph/knn.h"
#include "solver/solve.h"

namespace {

std::size_t current_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: memory_probe dense|sparse N K SUPPORT_SIZE\n");
    return 64;
  }
  const std::string path = argv[1];
  const gw::Index n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  gw::KnnGraphOptions knn;
  knn.k = 5;
  knn.connect = true;
  gw::Problem problem;
  {
    const gw::datagen::PointSet source = gw::datagen::spiral(n, 7);
    const gw::datagen::PointSet target = gw::datagen::swiss_roll(k, 7);
    problem.source = gw::Geometry::from_provider(gw::make_landmark_provider(
        gw::knn_graph(std::span<const double>(source.points), n, 2, knn)));
    problem.target = gw::Geometry::from_provider(gw::make_landmark_provider(
        gw::knn_graph(std::span<const double>(target.points), k, 3, knn)));
  }
  gw::Options options;
  options.support = path == "sparse" ? gw::Support::kSparse : gw::Support::kDense;
  options.support_size = std::atoi(argv[4]);
  options.max_iterations = 12;
  options.min_iterations = 0;
  options.support_regrow_every = 5;
  const gw::MemoryEstimate e = gw::estimate_memory(problem, options);
  const gw::Strategy strategy = gw::choose_strategy(problem, options);
  const std::size_t before = current_rss_bytes();
  gw::solve(problem, options);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const std::size_t peak = static_cast<std::size_t>(usage.ru_maxrss) * 1024;
  std::printf("%zu %zu\n", strategy.estimated_peak_bytes - e.inputs, peak > before ? peak - before : 0);
  return 0;
}
