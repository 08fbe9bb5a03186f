// `gwalign bench apsp`: all-pairs shortest paths (the precomputed distance mode) on the kNN graph
// of n random points in [0, 1)^d, parallel Dijkstra over sources. bench/peers/apsp_scipy.py times
// scipy.sparse.csgraph.dijkstra on the same graph (--save) and compares the distances.
//
// Floor: the n x n float32 output written once at the write bandwidth measured here. Dijkstra is
// bound by heap and cache latency, not by that floor; ns_per_edge (thread-seconds per relaxed
// edge) is the figure to compare across graph sizes.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cli_util.h"
#include "interrupt.h"
#include "tools/floors/floors.h"
#include "command.h"
#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "distances/shortest_paths.h"
#include "graph/components.h"
#include "graph/knn.h"
#include "io/hdf5.h"

namespace gw::cli {
namespace {

void save_graph_and_rows(const std::string& path,
                         const CsrGraph& graph,
                         const std::vector<float>& distances,
                         Index sample_rows) {
  const Index n = graph.num_nodes();
  // Only while the temporary exists: SIGINT / SIGTERM wait for the check before commit() (the
  // temporary is removed as Interrupted unwinds, cli_util.h) and a file size limit is a write
  // error, not a kill that leaves the temporary; during the timing a signal still ends the run.
  const InterruptScope interrupts;
  io::Writer out(path);
  io::CsrArray<float> csr;
  csr.rows = csr.cols = n;
  csr.indptr = graph.row_offsets();
  csr.indices = graph.col_indices();
  csr.data = graph.weights();
  out.write_csr("/graph", csr);
  if (sample_rows > 0) {
    // Evenly spaced sources, so a sample covers the whole id range.
    std::vector<Index> sources(sample_rows);
    std::vector<float> rows(static_cast<std::size_t>(sample_rows) * n);
    for (Index r = 0; r < sample_rows; ++r) {
      sources[r] = static_cast<Index>(static_cast<std::int64_t>(r) * n / sample_rows);
      std::copy_n(distances.data() + static_cast<std::size_t>(sources[r]) * n,
                  n,
                  rows.data() + static_cast<std::size_t>(r) * n);
    }
    const std::int64_t source_shape[] = {sample_rows};
    const std::int64_t row_shape[] = {sample_rows, n};
    out.write_array<Index>("/distances/sources", std::span<const Index>(sources), source_shape);
    out.write_array<float>("/distances/rows", std::span<const float>(rows), row_shape);
  }
  throw_if_interrupted();
  out.commit();
}

int run_bench_apsp(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Time all-pairs shortest paths on the kNN graph of random points.\n"
                           "Example: gwalign bench apsp --n 5000 --k 30 --json");
  // clang-format off
  options.add_options()
      ("n", "number of points (graph nodes)", cxxopts::value<Index>()->default_value("5000"))
      ("d", "dimension of the points", cxxopts::value<int>()->default_value("3"))
      ("k", "neighbours per point of the kNN graph", cxxopts::value<int>()->default_value("30"))
      ("save", "write the graph (/graph, CSR) to this HDF5 file, for bench/peers/apsp_scipy.py",
       cxxopts::value<std::string>())
      ("sample-rows", "with --save: also write this many of our distance rows (/distances/rows, "
                      "evenly spaced sources in /distances/sources); n writes all",
       cxxopts::value<Index>()->default_value("0"));
  // clang-format on
  add_common_bench_options(options, 3);
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  const Index n = args["n"].as<Index>();
  const int d = args["d"].as<int>();
  const int k = args["k"].as<int>();
  const Index sample_rows = args["sample-rows"].as<Index>();
  GW_CHECK(n >= 2, "--n must be >= 2, got " << n);
  GW_CHECK(sample_rows >= 0 && sample_rows <= n,
           "--sample-rows must be in [0, n = " << n << "], got " << sample_rows);
  if (args.count("save")) check_output_path(args["save"].as<std::string>(), "--save", {});
  ScopedThreads threads(args["threads"].as<int>());

  Rng rng(args["seed"].as<std::uint64_t>());
  std::vector<double> points(static_cast<std::size_t>(n) * d);
  for (double& x : points) x = rng.uniform();
  KnnGraphOptions knn;
  knn.k = k;
  const CsrGraph graph = knn_graph(std::span<const double>(points), n, d, knn);

  std::vector<float> distances;
  const TimingStats stats = time_repeated(args["reps"].as<int>(), [&] {
    distances = all_pairs_shortest_paths(graph, threads.count());
  });

  const double out_bytes = static_cast<double>(n) * n * sizeof(float);
  const double write_bandwidth =
      floors::write_bandwidth(static_cast<std::size_t>(out_bytes), threads.count());
  const double floor_seconds = out_bytes / write_bandwidth;
  const double relaxations = static_cast<double>(n) * static_cast<double>(graph.num_edges());

  BenchReport report("apsp");
  report.set("n", std::int64_t{n}).set("d", d).set("k", k);
  report.set("edges", std::int64_t{graph.num_edges()});
  report.set("components", std::int64_t{connected_components(graph).count});
  report.set("threads", threads.count());
  report.set_timing("", stats);
  report.set("output_bytes", out_bytes);
  report.set("write_bandwidth", write_bandwidth);
  report.set("floor_seconds", floor_seconds);
  report.set("floor_ratio", stats.median / floor_seconds);
  report.set("ns_per_edge", stats.median * threads.count() / relaxations * 1e9);
  if (args.count("save")) {
    save_graph_and_rows(args["save"].as<std::string>(), graph, distances, sample_rows);
    report.set("saved", args["save"].as<std::string>());
    report.set("saved_rows", std::int64_t{sample_rows});
  }
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

}  // namespace

GW_CLI_BENCH("apsp",
             "all-pairs shortest paths (parallel Dijkstra) on a random kNN graph",
             run_bench_apsp);

}  // namespace gw::cli
