// `gwalign bench <name>`: end-to-end and kernel benchmarks that print one JSON object each.
#include <iostream>
#include <string>

#include "command.h"

namespace gw::cli {
namespace {

void print_bench_usage(std::ostream& out) {
  out << "Usage: gwalign bench <name> [options] [--json]\n\nBenchmarks:\n";
  for (const auto& bench : benches()) {
    out << "  " << bench.name << std::string(12 - std::min<size_t>(bench.name.size(), 11), ' ')
        << bench.summary << "\n";
  }
  out << "\nEach prints the median of --reps runs and, with --json, one JSON object on stdout.\n";
}

int run_bench(int argc, char** argv) {
  if (argc < 2) {
    print_bench_usage(std::cerr);
    return 64;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h") {
    print_bench_usage(std::cout);
    return 0;
  }
  for (const auto& bench : benches()) {
    if (bench.name == name) {
      std::string full = "gwalign bench " + name;
      argv[1] = full.data();
      return bench.run(argc - 1, argv + 1);
    }
  }
  std::cerr << "gwalign bench: unknown benchmark '" << name << "'; run 'gwalign bench --help'\n";
  return 64;
}

}  // namespace

GW_CLI_COMMAND("bench", "run a benchmark (knn, ...) and print its timings", run_bench);

}  // namespace gw::cli
