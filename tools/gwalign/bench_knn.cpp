// `gwalign bench knn`: exact kNN graph construction (search + symmetrize + components/stitch) on
// n random points in [0, 1)^d, the pipeline scikit-learn users run as kneighbors_graph +
// maximum(G, G.T) + connected_components (bench/peers/knn_sklearn.py runs that on the same points).
//
// --backend cuda times knn_graph_device (graph/cuda_graph.h: upload, exact brute-force search,
// graph in device memory) and, with --cpu-reps > 0, the CPU's knn_graph on the same points in the
// same process: speedup_vs_cpu, and graph_equal (the device graph downloaded and compared array
// for array). Floor: the search's float32 filter, 3 n^2 d flops (a subtraction and a fused
// multiply-add per pair and coordinate), at --peak-tflops (default 67, the H100/H200 SXM
// datasheet's float32 rate; a lead, not a measurement).
#include <iostream>
#include <span>
#include <vector>

#include "bench_util.h"
#include "cli_util.h"
#include "interrupt.h"
#include "command.h"
#include "core/context.h"
#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/rng.h"
#include "graph/components.h"
#include "graph/cuda_graph.h"
#include "graph/knn.h"
#include "io/hdf5.h"

namespace gw::cli {
namespace {

int run_bench_knn_cuda(const cxxopts::ParseResult& args,
                       Index n,
                       int d,
                       const KnnGraphOptions& knn) {
  const int cpu_reps = args["cpu-reps"].as<int>();
  const double peak_tflops = args["peak-tflops"].as<double>();
  GW_CHECK(cpu_reps >= 0, "--cpu-reps must be >= 0, got " << cpu_reps);
  GW_CHECK(peak_tflops > 0.0, "--peak-tflops must be > 0, got " << peak_tflops);
  ScopedThreads threads(args["threads"].as<int>());
  const CudaStream stream = CudaStream::create(args["device"].as<int>());

  Rng rng(args["seed"].as<std::uint64_t>());
  std::vector<double> points(static_cast<std::size_t>(n) * d);
  for (double& x : points) x = rng.uniform();
  const std::span<const double> view(points);

  DeviceCsrGraph device;
  const TimingStats stats = time_repeated(
      args["reps"].as<int>(), [&] { device = knn_graph_device(view, n, d, knn, stream); });
  const CsrGraph graph = device.download();
  const Components comps = connected_components(graph);

  BenchReport report("knn");
  report.set("backend", "cuda").set("n", std::int64_t{n}).set("d", d).set("k", knn.k);
  report.set_timing("", stats);
  report.set("edges", std::int64_t{graph.num_edges()}).set("components", std::int64_t{comps.count});
  const double flops = 3.0 * static_cast<double>(n) * static_cast<double>(n) * d;
  const double floor_seconds = flops / (peak_tflops * 1e12);
  report.set("filter_flops", flops).set("peak_tflops", peak_tflops);
  report.set("floor_seconds_per_iter", floor_seconds);
  report.set("ratio_to_floor", stats.median / floor_seconds);
  if (cpu_reps > 0) {
    // The same options: --algorithm (auto or brute) applies to the CPU run too.
    CsrGraph cpu;
    const TimingStats cpu_stats = time_repeated(
        cpu_reps, [&] { cpu = knn_graph(view, n, d, knn); }, 0);
    report.set_timing("cpu_", cpu_stats);
    report.set("cpu_threads", threads.count());
    report.set("speedup_vs_cpu", cpu_stats.median / stats.median);
    report.set("graph_equal",
               cpu.row_offsets() == graph.row_offsets() &&
                   cpu.col_indices() == graph.col_indices() && cpu.weights() == graph.weights());
  }
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

int run_bench_knn(int argc, char** argv) {
  cxxopts::Options options(
      argv[0],
      "Time exact kNN graph construction on random points.\n"
      "Example: gwalign bench knn --n 20000 --d 3 --k 30 --json\n"
      "         gwalign bench knn --backend cuda --n 1000000 --d 2 --k 5 --json");
  // clang-format off
  options.add_options()
      ("n", "number of points", cxxopts::value<Index>()->default_value("20000"))
      ("d", "dimension", cxxopts::value<int>()->default_value("3"))
      ("k", "neighbours per point", cxxopts::value<int>()->default_value("30"))
      ("algorithm", "auto | kdtree | brute", cxxopts::value<std::string>()->default_value("auto"))
      ("backend", "cpu | cuda", cxxopts::value<std::string>()->default_value("cpu"))
      ("device", "CUDA device with --backend cuda", cxxopts::value<int>()->default_value("0"))
      ("cpu-reps", "with --backend cuda: timed CPU runs of the same input (0: none)",
       cxxopts::value<int>()->default_value("1"))
      ("peak-tflops", "with --backend cuda: float32 peak for the floor, TFLOP/s",
       cxxopts::value<double>()->default_value("67"))
      ("save", "also write the points (/points, n x d float64) and the graph (/graph, CSR) to "
               "this HDF5 file, for bench/peers/knn_sklearn.py", cxxopts::value<std::string>());
  // clang-format on
  add_common_bench_options(options);
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  const Index n = args["n"].as<Index>();
  const int d = args["d"].as<int>();
  const int k = args["k"].as<int>();
  const std::string algorithm_name = args["algorithm"].as<std::string>();
  KnnGraphOptions knn;
  knn.k = k;
  if (algorithm_name == "kdtree") {
    knn.algorithm = KnnAlgorithm::kKdTree;
  } else if (algorithm_name == "brute") {
    knn.algorithm = KnnAlgorithm::kBruteForce;
  } else {
    GW_CHECK(algorithm_name == "auto",
             "--algorithm must be auto, kdtree or brute, got '" << algorithm_name << "'");
  }
  GW_CHECK(n >= 2, "--n must be >= 2, got " << n);
  const auto backend = backend_from_string(args["backend"].as<std::string>());
  GW_CHECK(backend,
           "--backend must be cpu or cuda, got '" << args["backend"].as<std::string>() << "'");
  if (*backend == Backend::kCuda) {
    GW_CHECK(!args.count("save"), "--save is for --backend cpu (the peer compares the CPU graph)");
    return run_bench_knn_cuda(args, n, d, knn);
  }
  for (const char* name : {"device", "cpu-reps", "peak-tflops"}) {
    GW_CHECK(!args.count(name), "--" << name << " is for --backend cuda");
  }
  if (args.count("save")) check_output_path(args["save"].as<std::string>(), "--save", {});
  ScopedThreads threads(args["threads"].as<int>());

  Rng rng(args["seed"].as<std::uint64_t>());
  std::vector<double> points(static_cast<std::size_t>(n) * d);
  for (double& x : points) x = rng.uniform();

  CsrGraph graph;
  const TimingStats stats = time_repeated(args["reps"].as<int>(), [&] {
    graph = knn_graph(std::span<const double>(points), n, d, knn);
  });
  const Components comps = connected_components(graph);

  BenchReport report("knn");
  report.set("n", std::int64_t{n}).set("d", d).set("k", k).set("algorithm", algorithm_name);
  report.set_timing("", stats);
  report.set("edges", std::int64_t{graph.num_edges()}).set("components", std::int64_t{comps.count});
  report.set("threads", threads.count());
  if (args.count("save")) {
    // Only while the temporary exists: SIGINT / SIGTERM wait for the check before commit() (the
    // temporary is removed as Interrupted unwinds, cli_util.h) and a file size limit is a write
    // error, not a kill that leaves the temporary; during the timing a signal still ends the run.
    const InterruptScope interrupts;
    io::Writer out(args["save"].as<std::string>());
    const std::int64_t shape[] = {n, d};
    out.write_array<double>("/points", std::span<const double>(points), shape);
    io::CsrArray<float> csr;
    csr.rows = csr.cols = n;
    csr.indptr = graph.row_offsets();
    csr.indices = graph.col_indices();
    csr.data = graph.weights();
    out.write_csr("/graph", csr);
    throw_if_interrupted();
    out.commit();
    report.set("saved", args["save"].as<std::string>());
  }
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

}  // namespace

GW_CLI_BENCH("knn",
             "exact kNN graph of random points (search + symmetrize + connect)",
             run_bench_knn);

}  // namespace gw::cli
