// `gwalign bench landmarks`: the setup a solve pays per point-cloud side in landmark mode: the
// kNN graph of the points, then farthest-point landmarks and their shortest-path rows (the
// landmark provider). Points: the spiral benchmark's noisy 2-D spiral or 3-D swiss roll
// (tools/datagen/spiral.h), or uniform in [0, 1)^d.
//
// --backend cpu: knn_graph + make_landmark_provider (graph/knn.h, distances/landmark.h).
// --backend cuda: knn_graph_device + make_landmark_provider_cuda (graph/cuda_graph.h,
// distances/cuda_shortest_paths.h), and with --cpu-reps > 0 the CPU pipeline on the same points in
// the same process: speedup_vs_cpu, and graph_equal / landmarks_equal / coordinates_equal (the
// device results against the CPU's, bit for bit).
//
// Floors (--backend cuda): the kNN search's float32 filter, 3 n^2 d flops at --peak-tflops, plus
// one read of the graph (12 bytes per edge, 8 per offset) and one write of a row (4 n bytes) per
// landmark row, twice (the pruned picks, then the full rows), at --bandwidth-gbs. The picks are
// sequential and latency-bound, far above that bound; the figure to follow is seconds.
#include <cstdint>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "bench_util.h"
#include "command.h"
#include "core/context.h"
#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "datagen/spiral.h"
#include "distances/cuda_shortest_paths.h"
#include "distances/landmark.h"
#include "graph/components.h"
#include "graph/cuda_graph.h"
#include "graph/knn.h"

namespace gw::cli {
namespace {

struct Cloud {
  std::vector<double> points;
  int d = 0;
};

Cloud make_cloud(const std::string& kind, Index n, int d, std::uint64_t seed) {
  if (kind == "spiral") return {datagen::spiral(n, seed).points, 2};
  if (kind == "swissroll") return {datagen::swiss_roll(n, seed).points, 3};
  GW_CHECK(kind == "uniform",
           "--points must be spiral, swissroll or uniform, got '" << kind << "'");
  GW_CHECK(d >= 1, "--d must be >= 1, got " << d);
  Rng rng(seed);
  Cloud cloud{std::vector<double>(static_cast<std::size_t>(n) * d), d};
  for (double& x : cloud.points) x = rng.uniform();
  return cloud;
}

// One setup: seconds of the graph and of the landmark provider.
struct SetupTimes {
  double graph = 0.0;
  double landmarks = 0.0;
};

bool same_graph(const CsrGraph& a, const CsrGraph& b) {
  return a.row_offsets() == b.row_offsets() && a.col_indices() == b.col_indices() &&
         a.weights() == b.weights();
}

template <typename T>
bool same_span(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

int run_bench_landmarks(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Time a point cloud's setup in landmark mode: kNN graph + landmarks.\n"
                           "Example: gwalign bench landmarks --points spiral --n 1000000 "
                           "--backend cuda --json");
  // clang-format off
  options.add_options()
      ("points", "spiral | swissroll | uniform", cxxopts::value<std::string>()->default_value("spiral"))
      ("n", "number of points", cxxopts::value<Index>()->default_value("100000"))
      ("d", "dimension of --points uniform", cxxopts::value<int>()->default_value("3"))
      ("knn", "kNN graph neighbours", cxxopts::value<int>()->default_value("5"))
      ("landmarks", "number of landmarks", cxxopts::value<int>()->default_value("50"))
      ("backend", "cpu | cuda", cxxopts::value<std::string>()->default_value("cpu"))
      ("device", "CUDA device with --backend cuda", cxxopts::value<int>()->default_value("0"))
      ("cpu-reps", "with --backend cuda: timed CPU setups of the same points (0: none)",
       cxxopts::value<int>()->default_value("1"))
      ("peak-tflops", "with --backend cuda: float32 peak for the floor, TFLOP/s",
       cxxopts::value<double>()->default_value("67"))
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
  GW_CHECK(n >= 2, "--n must be >= 2, got " << n);
  const std::string kind = args["points"].as<std::string>();
  GW_CHECK(kind == "uniform" || !args.count("d"), "--d is for --points uniform");
  const auto backend = backend_from_string(args["backend"].as<std::string>());
  GW_CHECK(backend,
           "--backend must be cpu or cuda, got '" << args["backend"].as<std::string>() << "'");
  const bool cuda = *backend == Backend::kCuda;
  if (!cuda) {
    for (const char* name : {"device", "cpu-reps", "peak-tflops", "bandwidth-gbs"}) {
      GW_CHECK(!args.count(name), "--" << name << " is for --backend cuda");
    }
  }
  const int cpu_reps = cuda ? args["cpu-reps"].as<int>() : 0;
  GW_CHECK(cpu_reps >= 0, "--cpu-reps must be >= 0, got " << cpu_reps);
  ScopedThreads threads(args["threads"].as<int>());
  const std::uint64_t seed = args["seed"].as<std::uint64_t>();
  const Cloud cloud = make_cloud(kind, n, args["d"].as<int>(), seed);
  const int d = cloud.d;
  const std::span<const double> points(cloud.points);
  KnnGraphOptions knn;
  knn.k = args["knn"].as<int>();
  LandmarkOptions landmark;
  landmark.num_landmarks = args["landmarks"].as<int>();
  landmark.seed = seed;
  landmark.threads = threads.count();

  // The CPU pipeline (timed in cpu mode, the reference in cuda mode).
  CsrGraph cpu_graph;
  std::unique_ptr<LandmarkProvider> cpu_provider;
  std::vector<SetupTimes> cpu_times;
  auto cpu_setup = [&] {
    Stopwatch watch;
    cpu_graph = knn_graph(points, n, d, knn);
    const double graph_seconds = watch.seconds();
    cpu_provider = make_landmark_provider(cpu_graph, landmark);
    cpu_times.push_back({graph_seconds, watch.seconds() - graph_seconds});
  };

  std::vector<SetupTimes> times;
  CsrGraph graph;
  std::unique_ptr<LandmarkProvider> provider;
  const int reps = args["reps"].as<int>();
  GW_CHECK(reps >= 1, "--reps must be >= 1, got " << reps);
  if (cuda) {
    const CudaStream stream = CudaStream::create(args["device"].as<int>());
    for (int r = 0; r <= reps; ++r) {  // r = 0: warm-up (module load, first allocations)
      Stopwatch watch;
      const DeviceCsrGraph device = knn_graph_device(points, n, d, knn, stream);
      const double graph_seconds = watch.seconds();
      provider = make_landmark_provider_cuda(device, landmark);
      if (r > 0) times.push_back({graph_seconds, watch.seconds() - graph_seconds});
      if (r == reps) graph = device.download();
    }
    for (int r = 0; r < cpu_reps; ++r) cpu_setup();
  } else {
    for (int r = 0; r < reps; ++r) cpu_setup();
    times = cpu_times;
    graph = std::move(cpu_graph);
    provider = std::move(cpu_provider);
  }

  auto stats_of = [](const std::vector<SetupTimes>& samples, double SetupTimes::*field) {
    std::vector<double> values;
    for (const SetupTimes& t : samples) values.push_back(t.*field);
    return median(values);
  };
  std::vector<double> totals;
  for (const SetupTimes& t : times) totals.push_back(t.graph + t.landmarks);
  BenchReport report("landmarks");
  report.set("backend", cuda ? "cuda" : "cpu").set("points", kind);
  report.set("n", std::int64_t{n}).set("d", d).set("knn", knn.k);
  report.set("landmarks", landmark.num_landmarks).set("reps", reps);
  report.set("seconds", median(totals));
  report.set("seconds_min", *std::min_element(totals.begin(), totals.end()));
  report.set("seconds_max", *std::max_element(totals.begin(), totals.end()));
  report.set("graph_seconds", stats_of(times, &SetupTimes::graph));
  report.set("landmark_seconds", stats_of(times, &SetupTimes::landmarks));
  report.set("edges", std::int64_t{graph.num_edges()});
  report.set("components", std::int64_t{connected_components(graph).count});
  report.set("classes", std::int64_t{provider->num_classes()});
  report.set("threads", threads.count());
  if (cuda) {
    const double flops = 3.0 * static_cast<double>(n) * static_cast<double>(n) * d;
    const double row_bytes =
        12.0 * static_cast<double>(graph.num_edges()) + 8.0 * (n + 1) + 4.0 * n;
    const double floor_seconds =
        flops / (args["peak-tflops"].as<double>() * 1e12) +
        2.0 * provider->num_landmarks() * row_bytes / (args["bandwidth-gbs"].as<double>() * 1e9);
    report.set("floor_seconds_per_iter", floor_seconds);
    report.set("ratio_to_floor", median(totals) / floor_seconds);
  }
  if (cuda && cpu_reps > 0) {
    std::vector<double> cpu_totals;
    for (const SetupTimes& t : cpu_times) cpu_totals.push_back(t.graph + t.landmarks);
    report.set("cpu_seconds", median(cpu_totals));
    report.set("cpu_graph_seconds", stats_of(cpu_times, &SetupTimes::graph));
    report.set("cpu_landmark_seconds", stats_of(cpu_times, &SetupTimes::landmarks));
    report.set("speedup_vs_cpu", median(cpu_totals) / median(totals));
    report.set("graph_equal", same_graph(graph, cpu_graph));
    report.set("landmarks_equal", same_span(provider->landmarks(), cpu_provider->landmarks()));
    report.set("coordinates_equal",
               same_span(provider->coordinates(), cpu_provider->coordinates()));
  }
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

}  // namespace

GW_CLI_BENCH("landmarks",
             "a point cloud's landmark-mode setup: kNN graph + farthest-point landmarks",
             run_bench_landmarks);

}  // namespace gw::cli
