// Distance kernels on kNN graphs of random 3-D points (k = 30): one Dijkstra row, all pairs, the
// reference Bellman-Ford row (the oracle, small sizes only), the three providers' requests, and
// the post-processing, each next to a floor measured in the same binary:
//   - BM_WriteFloor / BM_ReadFloor: a plain fill / summing loop over a buffer of the given bytes;
//     bytes_per_second of a kernel divided by theirs is its ratio to the memory floor;
//   - Dijkstra kernels report items_per_second = relaxed edges per second (they are bound by heap
//     and cache latency, not bandwidth);
//   - the landmark request reports flops (2 n m d, the GEMM) as a rate counter.
//
//   build-*/bench/distances_bench --benchmark_filter='Landmark|Floor'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <span>
#include <vector>

#include "core/rng.h"
#include "core/types.h"
#include "distances/dijkstra_provider.h"
#include "distances/distance_provider.h"
#include "distances/landmark.h"
#include "distances/precomputed.h"
#include "distances/shortest_paths.h"
#include "distances/shortest_paths_reference.h"
#include "graph/knn.h"
#include "core/context.h"
#include "tools/floors/floors.h"

namespace {

// One kNN graph per size, built on first use and shared by the benchmarks.
const gw::CsrGraph& knn_graph_of_size(gw::Index n) {
  static std::map<gw::Index, gw::CsrGraph> graphs;
  auto it = graphs.find(n);
  if (it == graphs.end()) {
    gw::Rng rng(1);
    std::vector<double> points(static_cast<std::size_t>(n) * 3);
    for (double& x : points) x = rng.uniform();
    it = graphs.emplace(n, gw::knn_graph(std::span<const double>(points), n, 3, {})).first;
  }
  return it->second;
}

std::vector<gw::Index> random_anchors(gw::Rng& rng, gw::Index n, gw::Index m) {
  std::vector<gw::Index> anchors(m);
  for (gw::Index& a : anchors) a = static_cast<gw::Index>(rng.uniform_index(n));
  return anchors;
}

void BM_DijkstraRow(benchmark::State& state) {
  const gw::CsrGraph& graph = knn_graph_of_size(static_cast<gw::Index>(state.range(0)));
  std::vector<float> row(graph.num_nodes());
  gw::Index source = 0;
  for (auto _ : state) {
    gw::shortest_path_lengths(graph, source, row);
    source = (source + 7919) % graph.num_nodes();
    benchmark::DoNotOptimize(row.data());
  }
  state.SetItemsProcessed(state.iterations() * graph.num_edges());
  state.SetBytesProcessed(state.iterations() * graph.num_nodes() * sizeof(float));
}
BENCHMARK(BM_DijkstraRow)->Arg(5000)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_BellmanFordReferenceRow(benchmark::State& state) {
  const gw::CsrGraph& graph = knn_graph_of_size(static_cast<gw::Index>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(gw::reference::bellman_ford(graph, 0));
  }
  state.SetItemsProcessed(state.iterations() * graph.num_edges());
}
BENCHMARK(BM_BellmanFordReferenceRow)->Arg(5000)->Unit(benchmark::kMillisecond);

void BM_AllPairs(benchmark::State& state) {
  const gw::CsrGraph& graph = knn_graph_of_size(static_cast<gw::Index>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(gw::all_pairs_shortest_paths(graph).data());
  }
  const std::int64_t n = graph.num_nodes();
  state.SetItemsProcessed(state.iterations() * n * graph.num_edges());
  state.SetBytesProcessed(state.iterations() * n * n * static_cast<std::int64_t>(sizeof(float)));
}
BENCHMARK(BM_AllPairs)->Arg(2000)->Arg(5000)->Unit(benchmark::kMillisecond)->UseRealTime();

// Precomputed request: m rows of the matrix gathered into the n x m block (read + write 4nm B).
void BM_PrecomputedRequest(benchmark::State& state) {
  const gw::CsrGraph& graph = knn_graph_of_size(static_cast<gw::Index>(state.range(0)));
  const auto provider = gw::make_precomputed_provider(graph);
  const gw::Index n = graph.num_nodes();
  const gw::Index m = static_cast<gw::Index>(state.range(1));
  gw::Rng rng(2);
  std::vector<float> out(static_cast<std::size_t>(n) * m);
  for (auto _ : state) {
    const std::vector<gw::Index> anchors = random_anchors(rng, n, m);
    provider->distances_to(anchors, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * std::int64_t{n} * m * sizeof(float));
}
BENCHMARK(BM_PrecomputedRequest)->Args({5000, 80})->Unit(benchmark::kMillisecond)->UseRealTime();

// Dijkstra request without a cache: m runs in parallel.
void BM_DijkstraRequestUncached(benchmark::State& state) {
  const gw::CsrGraph& graph = knn_graph_of_size(static_cast<gw::Index>(state.range(0)));
  gw::DijkstraOptions options;
  options.cache_rows = 0;
  const auto provider = gw::make_dijkstra_provider(graph, options);
  const gw::Index n = graph.num_nodes();
  const gw::Index m = static_cast<gw::Index>(state.range(1));
  gw::Rng rng(3);
  std::vector<float> out(static_cast<std::size_t>(n) * m);
  for (auto _ : state) {
    const std::vector<gw::Index> anchors = random_anchors(rng, n, m);
    provider->distances_to(anchors, out);
  }
  state.SetItemsProcessed(state.iterations() * m * graph.num_edges());
  state.SetBytesProcessed(state.iterations() * std::int64_t{n} * m * sizeof(float));
}
BENCHMARK(BM_DijkstraRequestUncached)
    ->Args({5000, 80})
    ->Args({100000, 80})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Landmark request: the GEMM (2 n m d flops) and one write of the n x m block.
void BM_LandmarkRequest(benchmark::State& state) {
  const gw::CsrGraph& graph = knn_graph_of_size(static_cast<gw::Index>(state.range(0)));
  static std::map<gw::Index, std::unique_ptr<gw::LandmarkProvider>> providers;
  auto& provider = providers[graph.num_nodes()];
  if (!provider) provider = gw::make_landmark_provider(graph);
  const gw::Index n = graph.num_nodes();
  const gw::Index m = static_cast<gw::Index>(state.range(1));
  const gw::Index d = provider->num_landmarks();
  gw::Rng rng(4);
  std::vector<float> out(static_cast<std::size_t>(n) * m);
  for (auto _ : state) {
    const std::vector<gw::Index> anchors = random_anchors(rng, n, m);
    provider->distances_to(anchors, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * std::int64_t{n} * (m + d) * sizeof(float));
  state.counters["flops"] =
      benchmark::Counter(2.0 * n * m * d * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LandmarkRequest)
    ->Args({5000, 80})
    ->Args({100000, 80})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_LandmarkSetup(benchmark::State& state) {
  const gw::CsrGraph& graph = knn_graph_of_size(static_cast<gw::Index>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(gw::make_landmark_provider(graph).get());
  }
  state.SetItemsProcessed(state.iterations() * 50 * graph.num_edges());
}
BENCHMARK(BM_LandmarkSetup)->Arg(100000)->Unit(benchmark::kMillisecond)->UseRealTime();

// Post-processing of a block with 1% unreachable entries: one read pass, one read+write pass.
void BM_ClampAndNormalize(benchmark::State& state) {
  const std::size_t size = static_cast<std::size_t>(state.range(0));
  gw::Rng rng(5);
  std::vector<float> source(size);
  for (float& v : source) {
    v = rng.uniform() < 0.01 ? std::numeric_limits<float>::infinity() : rng.uniform_float();
  }
  std::vector<float> block(size);
  for (auto _ : state) {
    state.PauseTiming();
    block = source;
    state.ResumeTiming();
    benchmark::DoNotOptimize(gw::clamp_and_normalize(block, true));
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(3 * size * sizeof(float)));
}
BENCHMARK(BM_ClampAndNormalize)->Arg(100000 * 80)->Unit(benchmark::kMillisecond)->UseRealTime();

// The floors are gw::floors's passes (tools/floors/floors.h), the same code as `gwalign bench`.
void BM_WriteFloor(benchmark::State& state) {
  std::vector<float> buffer(static_cast<std::size_t>(state.range(0)) / sizeof(float));
  const int threads = gw::available_threads();
  int pass = 0;
  for (auto _ : state) {
    gw::floors::write_pass(buffer.data(),
                           buffer.size() * sizeof(float),
                           static_cast<unsigned char>(++pass & 1),
                           threads);
    benchmark::DoNotOptimize(buffer.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_WriteFloor)->Arg(100000 * 80 * 4)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReadFloor(benchmark::State& state) {
  std::vector<float> buffer(static_cast<std::size_t>(state.range(0)) / sizeof(float), 1.0f);
  const int threads = gw::available_threads();
  for (auto _ : state) {
    benchmark::DoNotOptimize(gw::floors::read_pass(buffer.data(), buffer.size(), threads));
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ReadFloor)->Arg(100000 * 80 * 4)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
