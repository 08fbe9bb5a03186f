// `gwalign bench anchors`: what one iteration of the GW loop pays for distances. Builds a
// provider (dijkstra, landmark or precomputed) on the kNN graph of n random points in [0, 1)^d
// (setup_seconds), then times requests of m anchors drawn uniformly at random, a fresh set per
// request (seconds = median per request).
//
// Floor of a request: max(its compulsory memory traffic at the bandwidths measured here, its flops
// at the FMA peak measured here). Traffic: the n x m float32 output written once, plus for
// landmark the n x d coordinates read once; flops: for landmark the GEMM's 2 n m d. Dijkstra
// requests are latency-bound (one run per missed anchor), far above either floor.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench_util.h"
#include "command.h"
#include "core/context.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"
#include "distances/providers.h"
#include "graph/knn.h"
#include "tools/floors/floors.h"

namespace gw::cli {
namespace {

int run_bench_anchors(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Time building a distance provider and one request of m anchors.\n"
                           "Example: gwalign bench anchors --n 100000 --m 80 --mode landmark "
                           "--json");
  // clang-format off
  options.add_options()
      ("n", "number of points (graph nodes)", cxxopts::value<Index>()->default_value("100000"))
      ("d", "dimension of the points", cxxopts::value<int>()->default_value("3"))
      ("k", "neighbours per point of the kNN graph", cxxopts::value<int>()->default_value("30"))
      ("m", "anchors per request", cxxopts::value<Index>()->default_value("80"))
      ("mode", "dijkstra | landmark | precomputed",
       cxxopts::value<std::string>()->default_value("landmark"))
      ("landmarks", "landmark mode: number of landmarks",
       cxxopts::value<int>()->default_value("50"))
      ("cache-rows", "dijkstra mode: cache capacity in rows (-1 = default memory budget)",
       cxxopts::value<Index>()->default_value("-1"))
      ("setup-reps", "timed provider constructions (the median is reported)",
       cxxopts::value<int>()->default_value("3"));
  // clang-format on
  add_common_bench_options(options, 11);
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  const Index n = args["n"].as<Index>();
  const int dim = args["d"].as<int>();
  const int k = args["k"].as<int>();
  const Index m = args["m"].as<Index>();
  const std::string mode_name = args["mode"].as<std::string>();
  const auto mode = distance_mode_from_string(mode_name);
  GW_CHECK(mode.has_value(),
           "--mode must be dijkstra, landmark or precomputed, got '" << mode_name << "'");
  GW_CHECK(n >= 2, "--n must be >= 2, got " << n);
  GW_CHECK(m >= 1 && m <= n, "--m must be in [1, n], got " << m);
  ScopedThreads threads(args["threads"].as<int>());
  const std::uint64_t seed = args["seed"].as<std::uint64_t>();

  Rng rng(seed);
  std::vector<double> points(static_cast<std::size_t>(n) * dim);
  for (double& x : points) x = rng.uniform();
  KnnGraphOptions knn;
  knn.k = k;
  const CsrGraph graph = knn_graph(std::span<const double>(points), n, dim, knn);

  ProviderOptions provider_options;
  provider_options.precomputed.threads = threads.count();
  provider_options.dijkstra.threads = threads.count();
  const Index cache_rows = args["cache-rows"].as<Index>();
  if (cache_rows >= 0) provider_options.dijkstra.cache_rows = cache_rows;
  provider_options.landmark.threads = threads.count();
  provider_options.landmark.num_landmarks = args["landmarks"].as<int>();
  provider_options.landmark.seed = seed;

  std::unique_ptr<DistanceProvider> provider;
  const TimingStats setup = time_repeated(
      args["setup-reps"].as<int>(),
      [&] {
        provider.reset();  // the old one's memory goes back before the next is built
        provider = make_distance_provider(graph, *mode, provider_options);
      },
      /*warmup=*/0);

  // A fresh random anchor set per request, as the GW loop draws them (uniformly here).
  Rng anchor_rng(seed ^ 0x5eed);
  std::vector<Index> anchors(m);
  std::vector<float> out(static_cast<std::size_t>(n) * m);
  const TimingStats request = time_repeated(args["reps"].as<int>(), [&] {
    for (Index& a : anchors) a = static_cast<Index>(anchor_rng.uniform_index(n));
    provider->distances_to(anchors, out);
  });

  const double out_bytes = static_cast<double>(n) * m * sizeof(float);
  double in_bytes = 0.0;
  const auto* landmark = dynamic_cast<const LandmarkProvider*>(provider.get());
  if (landmark != nullptr) {
    in_bytes = static_cast<double>(n) * landmark->num_landmarks() * sizeof(float);
  }
  const double write_bandwidth =
      floors::write_bandwidth(static_cast<std::size_t>(out_bytes), threads.count());
  const double read_bandwidth =
      in_bytes > 0.0 ? floors::read_bandwidth(static_cast<std::size_t>(in_bytes), threads.count())
                     : 0.0;
  const double bytes_seconds =
      out_bytes / write_bandwidth + (in_bytes > 0.0 ? in_bytes / read_bandwidth : 0.0);
  const double flops =
      landmark != nullptr ? 2.0 * n * m * static_cast<double>(landmark->num_landmarks()) : 0.0;
  const double fma_peak = flops > 0.0 ? floors::fma_peak<float>(threads.count(), 5) : 0.0;
  const double flops_seconds = flops > 0.0 ? flops / fma_peak : 0.0;
  const double floor_seconds = std::max(bytes_seconds, flops_seconds);

  BenchReport report("anchors");
  report.set("mode", mode_name).set("n", std::int64_t{n}).set("d", dim).set("k", k);
  report.set("m", std::int64_t{m});
  report.set("edges", std::int64_t{graph.num_edges()});
  report.set("threads", threads.count());
  report.set_timing("setup_", setup);
  report.set("setup_reps", setup.reps);
  report.set_timing("", request);
  report.set("floor_seconds", floor_seconds);
  report.set("floor_ratio", request.median / floor_seconds);
  report.set("bytes_floor_seconds", bytes_seconds);
  report.set("write_bandwidth", write_bandwidth);
  if (landmark != nullptr) {
    report.set("landmarks", std::int64_t{landmark->num_landmarks()});
    report.set("read_bandwidth", read_bandwidth);
    report.set("flops_floor_seconds", flops_seconds);
    report.set("fma_peak_gflops", fma_peak * 1e-9);
    report.set("gflops", flops / request.median * 1e-9);
  }
  const DistanceStats stats = provider->stats();
  report.set("memory_bytes", static_cast<std::int64_t>(provider->memory_bytes()));
  report.set("shortest_path_runs", stats.shortest_path_runs);
  report.set("cache_hits", stats.cache_hits);
  report.set("cache_misses", stats.cache_misses);
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

}  // namespace

GW_CLI_BENCH("anchors",
             "distance provider setup and per-request time (dijkstra | landmark | precomputed)",
             run_bench_anchors);

}  // namespace gw::cli
