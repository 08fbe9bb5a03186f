// `gwalign bench apsp`: all-pairs shortest paths (the precomputed distance mode) on the kNN graph
// of n random points in [0, 1)^d, parallel Dijkstra over sources. bench/peers/apsp_scipy.py times
// scipy.sparse.csgraph.dijkstra on the same graph (--save) and compares the distances.
//
// Floor: the n x n float32 output written once at the write bandwidth measured here. Dijkstra is
// bound by heap and cache latency, not by that floor; ns_per_edge (thread-seconds per relaxed
// edge) is the figure to compare across graph sizes.
//
// --backend cuda times all_pairs_shortest_paths_device (distances/cuda_shortest_paths.h; the graph
// on the device, the matrix left there) and, with --cpu-reps > 0, the CPU's parallel Dijkstra on
// the same graph in the same process: speedup_vs_cpu, and matrix_equal (the device matrix
// downloaded and compared bit for bit). Floor: the matrix written once plus the graph read once
// per source (12 bytes per edge and offset entry), at --bandwidth-gbs (default 4300: the copy
// bandwidth seen on an H200 of this workplace, bytes read plus written).
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "bench_util.h"
#include "cli_util.h"
#include "interrupt.h"
#include "command.h"
#include "core/context.h"
#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/rng.h"
#include "distances/cuda_shortest_paths.h"
#include "distances/shortest_paths.h"
#include "graph/components.h"
#include "graph/cuda_graph.h"
#include "graph/knn.h"
#include "io/hdf5.h"
#include "tools/floors/floors.h"

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

int run_bench_apsp_cuda(const cxxopts::ParseResult& args, const CsrGraph& graph, int threads) {
  const int cpu_reps = args["cpu-reps"].as<int>();
  const double bandwidth = args["bandwidth-gbs"].as<double>() * 1e9;
  GW_CHECK(cpu_reps >= 0, "--cpu-reps must be >= 0, got " << cpu_reps);
  GW_CHECK(bandwidth > 0.0, "--bandwidth-gbs must be > 0");
  const Index n = graph.num_nodes();
  const CudaStream stream = CudaStream::create(args["device"].as<int>());
  const DeviceCsrGraph device = DeviceCsrGraph::upload(graph, stream);
  DeviceArray<float> matrix;
  const TimingStats stats = time_repeated(args["reps"].as<int>(), [&] {
    matrix = DeviceArray<float>();  // one matrix at a time on the device
    matrix = all_pairs_shortest_paths_device(device);
  });
  const double out_bytes = static_cast<double>(n) * n * sizeof(float);
  const double graph_bytes =
      static_cast<double>(n) * (12.0 * static_cast<double>(graph.num_edges()) + 8.0 * (n + 1));
  const double floor_seconds = (out_bytes + graph_bytes) / bandwidth;

  BenchReport report("apsp");
  report.set("backend", "cuda").set("n", std::int64_t{n});
  report.set("d", args["d"].as<int>()).set("k", args["k"].as<int>());
  report.set("edges", std::int64_t{graph.num_edges()});
  report.set("components", std::int64_t{connected_components(graph).count});
  report.set_timing("", stats);
  report.set("output_bytes", out_bytes).set("graph_bytes_read", graph_bytes);
  report.set("bandwidth_gbs", bandwidth / 1e9);
  report.set("floor_seconds_per_iter", floor_seconds);
  report.set("ratio_to_floor", stats.median / floor_seconds);
  if (cpu_reps > 0) {
    std::vector<float> cpu;
    const TimingStats cpu_stats = time_repeated(
        cpu_reps, [&] { cpu = all_pairs_shortest_paths(graph, threads); }, 0);
    report.set_timing("cpu_", cpu_stats);
    report.set("cpu_threads", threads);
    report.set("speedup_vs_cpu", cpu_stats.median / stats.median);
    report.set("matrix_equal", matrix.download() == cpu);
  }
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

int run_bench_apsp(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Time all-pairs shortest paths on the kNN graph of random points.\n"
                           "Example: gwalign bench apsp --n 5000 --k 30 --json\n"
                           "         gwalign bench apsp --backend cuda --n 20000 --k 10 --json");
  // clang-format off
  options.add_options()
      ("n", "number of points (graph nodes)", cxxopts::value<Index>()->default_value("5000"))
      ("d", "dimension of the points", cxxopts::value<int>()->default_value("3"))
      ("k", "neighbours per point of the kNN graph", cxxopts::value<int>()->default_value("30"))
      ("save", "write the graph (/graph, CSR) to this HDF5 file, for bench/peers/apsp_scipy.py",
       cxxopts::value<std::string>())
      ("sample-rows", "with --save: also write this many of our distance rows (/distances/rows, "
                      "evenly spaced sources in /distances/sources); n writes all",
       cxxopts::value<Index>()->default_value("0"))
      ("backend", "cpu | cuda", cxxopts::value<std::string>()->default_value("cpu"))
      ("device", "CUDA device with --backend cuda", cxxopts::value<int>()->default_value("0"))
      ("cpu-reps", "with --backend cuda: timed CPU runs on the same graph (0: none)",
       cxxopts::value<int>()->default_value("1"))
      ("bandwidth-gbs", "with --backend cuda: device memory bandwidth for the floor, GB/s",
       cxxopts::value<double>()->default_value("4300"));
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
  const auto backend = backend_from_string(args["backend"].as<std::string>());
  GW_CHECK(backend,
           "--backend must be cpu or cuda, got '" << args["backend"].as<std::string>() << "'");
  if (*backend == Backend::kCuda) {
    GW_CHECK(!args.count("save"), "--save is for --backend cpu");
    return run_bench_apsp_cuda(args, graph, threads.count());
  }
  for (const char* name : {"device", "cpu-reps", "bandwidth-gbs"}) {
    GW_CHECK(!args.count(name), "--" << name << " is for --backend cuda");
  }

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
