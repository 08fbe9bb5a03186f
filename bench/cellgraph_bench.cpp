// Graph-cell kernels (cellgraph/): edge masks on the yeast-sized synthetic gene graph, batched
// Chebyshev heat diffusion and per-gene aggregation, CPU and CUDA in one binary, each next to a
// floor measured in the same binary:
//   - BM_WriteFloor / BM_ReadFloor: a plain fill / summing loop over a buffer of the given bytes;
//     the dense masks write B * E bytes (bytes_per_second / BM_WriteFloor's = ratio to floor),
//     the aggregation reads B * T * H floats once (the same against BM_ReadFloor);
//   - the diffusion reports its multiply-adds (K * nnz * C) as a rate counter "macs", next to
//     BM_FmaPeak's (the multiply-add peak of 64-byte vector FMAs on independent chains);
//   - removal lists report items_per_second = removed edges per second (their output is ~0.1% of
//     the dense form, so no memory floor binds).
// CUDA variants skip (SkipWithError) without a device; their times are device times measured
// around a synchronize.
//
//   build-*/bench/cellgraph_bench --benchmark_filter='Masks|Floor'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "cellgraph/aggregate.h"
#include "cellgraph/cuda_aggregate.h"
#include "cellgraph/cuda_diffusion.h"
#include "cellgraph/cuda_edge_masks.h"
#include "cellgraph/diffusion.h"
#include "cellgraph/edge_masks.h"
#include "cellgraph/workloads.h"
#include "core/context.h"
#include "core/device_array.h"
#include "core/rng.h"
#include "tools/floors/floors.h"

namespace {

using gw::Index;
using gw::Offset;

// The yeast-sized gene graph, built once.
const gw::EdgeMasker& yeast_masker() {
  static const gw::EdgeMasker masker = [] {
    gw::EdgeMasker m(gw::kYeastGenes);
    for (const gw::SyntheticEdgeType& type : gw::synthetic_yeast_graph(1)) {
      m.add_type(type.name, type.edges.view());
    }
    return m;
  }();
  return masker;
}

const gw::PerturbationSet& triples(Index batch) {
  static std::map<Index, gw::PerturbationSet> sets;
  auto it = sets.find(batch);
  if (it == sets.end()) {
    gw::Rng rng(1, static_cast<std::uint64_t>(batch));
    it = sets.emplace(batch, gw::random_perturbations(rng, gw::kYeastGenes, batch, 3)).first;
  }
  return it->second;
}

// Runs fn(t) on `threads` std::threads (this binary is not built with OpenMP flags).
template <typename Fn>
void on_threads(int threads, Fn&& fn) {
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back([&fn, t] { fn(t); });
  fn(0);
  for (std::thread& thread : pool) thread.join();
}

bool have_gpu(benchmark::State& state) {
  if (gw::cuda_device_count() > 0) return true;
  state.SkipWithError("no CUDA device");
  return false;
}

// ---------------------------------------------------------------------------------------------
// Floors

// The floors are gw::floors's passes (tools/floors/floors.h), the same code as `gwalign bench`.
void BM_WriteFloor(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0));
  std::vector<std::uint8_t> buffer(bytes, 1);
  const int threads = gw::available_threads();
  int pass = 0;
  for (auto _ : state) {
    gw::floors::write_pass(buffer.data(), bytes, static_cast<unsigned char>(++pass & 1), threads);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * bytes);
}
BENCHMARK(BM_WriteFloor)->Arg(24 * 2495908)->Arg(64 * 2495908)->UseRealTime();

void BM_ReadFloor(benchmark::State& state) {
  const std::size_t count = static_cast<std::size_t>(state.range(0)) / sizeof(float);
  std::vector<float> buffer(count, 1.0f);
  const int threads = gw::available_threads();
  for (auto _ : state) {
    benchmark::DoNotOptimize(gw::floors::read_pass(buffer.data(), count, threads));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * count * sizeof(float));
}
BENCHMARK(BM_ReadFloor)->Arg(64 * 512 * 128 * 4)->Arg(1 << 30)->UseRealTime();

// Float multiply-add peak at the best instruction-set target of this CPU, as a "macs" counter
// (multiply-adds per second, best pass) like the diffusion's.
void BM_FmaPeak(benchmark::State& state) {
  const int threads = gw::available_threads();
  double flops = 0.0;
  for (auto _ : state) flops = std::max(flops, gw::floors::fma_peak_pass_f32(threads));
  state.counters["macs"] = flops / 2.0;
}
BENCHMARK(BM_FmaPeak)->UseRealTime();

// ---------------------------------------------------------------------------------------------
// Edge masks: all nine types per batch of B triples.

void BM_RemovalLists(benchmark::State& state) {
  const gw::EdgeMasker& masker = yeast_masker();
  const gw::PerturbationSet& batch = triples(static_cast<Index>(state.range(0)));
  Offset removed = 0;
  for (auto _ : state) {
    const std::vector<gw::RemovedEdges> lists = masker.removed_edges(batch.view());
    removed = 0;
    for (const gw::RemovedEdges& r : lists) removed += static_cast<Offset>(r.positions.size());
    benchmark::DoNotOptimize(removed);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * removed);
}
BENCHMARK(BM_RemovalLists)
    ->Arg(24)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_DenseMasks(benchmark::State& state) {
  const gw::EdgeMasker& masker = yeast_masker();
  const Index b = static_cast<Index>(state.range(0));
  const gw::PerturbationSet& batch = triples(b);
  std::vector<std::vector<std::uint8_t>> keep(masker.num_types());
  for (int t = 0; t < masker.num_types(); ++t) keep[t].resize(b * masker.num_edges(t));
  for (auto _ : state) {
    for (int t = 0; t < masker.num_types(); ++t) masker.keep_mask(t, batch.view(), keep[t]);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * b * masker.total_edges());
}
BENCHMARK(BM_DenseMasks)->Arg(24)->Arg(64)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CudaRemovalLists(benchmark::State& state) {
  if (!have_gpu(state)) return;
  gw::CudaEdgeMasker cuda(yeast_masker());
  const gw::DeviceBatch batch =
      cuda.upload_batch(triples(static_cast<Index>(state.range(0))).view());
  for (auto _ : state) {
    cuda.removed_edges_async(batch);
    cuda.synchronize();
  }
}
BENCHMARK(BM_CudaRemovalLists)
    ->Arg(24)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_CudaDenseMasks(benchmark::State& state) {
  if (!have_gpu(state)) return;
  const gw::EdgeMasker& masker = yeast_masker();
  const Index b = static_cast<Index>(state.range(0));
  gw::CudaEdgeMasker cuda(masker);
  const gw::DeviceBatch batch = cuda.upload_batch(triples(b).view());
  gw::DeviceArray<std::uint8_t> keep(static_cast<std::size_t>(b) * masker.total_edges(),
                                     cuda.stream());
  for (auto _ : state) {
    Offset offset = 0;
    for (int t = 0; t < masker.num_types(); ++t) {
      cuda.keep_mask_async(t, batch, keep.data() + offset);
      offset += static_cast<Offset>(b) * masker.num_edges(t);
    }
    cuda.synchronize();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * b * masker.total_edges());
}
BENCHMARK(BM_CudaDenseMasks)->Arg(64)->Arg(256)->UseRealTime()->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------------------------
// Diffusion: B graphs of S padded nodes, ~5 stored edges per node, C channels, K = 64.

struct DiffusionInput {
  gw::DiffusionGraphSet graphs;
  std::vector<float> x;
};

const DiffusionInput& diffusion_input(Index batch, Index seq, Index channels) {
  static std::map<std::tuple<Index, Index, Index>, DiffusionInput> inputs;
  const auto key = std::make_tuple(batch, seq, channels);
  auto it = inputs.find(key);
  if (it == inputs.end()) {
    gw::Rng rng(7);
    DiffusionInput input;
    input.graphs = gw::random_diffusion_graphs(rng, batch, seq);
    input.x.resize(static_cast<std::size_t>(batch) * seq * channels);
    for (float& v : input.x) v = 2.0f * rng.uniform_float() - 1.0f;
    it = inputs.emplace(key, std::move(input)).first;
  }
  return it->second;
}

gw::DiffusionOptions diffusion_options() {
  gw::DiffusionOptions options;
  options.symmetrize = true;
  return options;
}

void set_macs(benchmark::State& state, Offset nnz, Index channels) {
  state.counters["macs"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 64.0 * static_cast<double>(nnz) * channels,
      benchmark::Counter::kIsRate);
}

void BM_DiffusionBatched(benchmark::State& state) {
  const Index b = static_cast<Index>(state.range(0)), s = static_cast<Index>(state.range(1));
  const Index c = static_cast<Index>(state.range(2));
  const DiffusionInput& input = diffusion_input(b, s, c);
  std::vector<float> y(input.x.size());
  Offset nnz = 0;
  for (auto _ : state) {
    const gw::HeatDiffusion op(input.graphs.view(), s, diffusion_options());
    op.apply(std::span<const float>(input.x), c, std::span<float>(y));
    nnz = op.nnz();
  }
  set_macs(state, nnz, c);
}

void BM_DiffusionLoop(benchmark::State& state) {
  const Index b = static_cast<Index>(state.range(0)), s = static_cast<Index>(state.range(1));
  const Index c = static_cast<Index>(state.range(2));
  const DiffusionInput& input = diffusion_input(b, s, c);
  const gw::DiffusionGraphSet& set = input.graphs;
  std::vector<float> y(input.x.size());
  const std::size_t rows = static_cast<std::size_t>(s) * c;
  for (auto _ : state) {
    for (Index g = 0; g < b; ++g) {
      const Offset e0 = set.edge_ptr[g], m = set.edge_ptr[g + 1] - e0;
      const std::vector<Offset> ptr = {0, m};
      const gw::DiffusionGraphs one{std::span<const Index>(set.num_nodes).subspan(g, 1),
                                    ptr,
                                    std::span<const Index>(set.src).subspan(e0, m),
                                    std::span<const Index>(set.dst).subspan(e0, m),
                                    {}};
      gw::diffuse_batch(one,
                        std::span<const float>(input.x).subspan(g * rows, rows),
                        s,
                        c,
                        std::span<float>(y).subspan(g * rows, rows),
                        diffusion_options());
    }
  }
}

void BM_CudaDiffusionBatched(benchmark::State& state) {
  if (!have_gpu(state)) return;
  const Index b = static_cast<Index>(state.range(0)), s = static_cast<Index>(state.range(1));
  const Index c = static_cast<Index>(state.range(2));
  const DiffusionInput& input = diffusion_input(b, s, c);
  gw::CudaHeatDiffusion cuda;
  gw::DeviceArray<float> x(std::span<const float>(input.x), cuda.stream());
  gw::DeviceArray<float> y(input.x.size(), cuda.stream());
  cuda.prepare(input.graphs.view(), s, diffusion_options());
  for (auto _ : state) {
    cuda.apply_async(x.data(), c, y.data());
    cuda.synchronize();
  }
  set_macs(state, cuda.nnz(), c);
}

void DiffusionSizes(benchmark::internal::Benchmark* bench) {
  for (const auto& [b, s] : {std::pair{16, 128}, std::pair{64, 512}, std::pair{256, 1024}}) {
    for (int c : {64, 512}) bench->Args({b, s, c});
  }
  bench->UseRealTime()->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_DiffusionBatched)->Apply(DiffusionSizes);
BENCHMARK(BM_DiffusionLoop)->Apply(DiffusionSizes);
BENCHMARK(BM_CudaDiffusionBatched)->Apply(DiffusionSizes);

// ---------------------------------------------------------------------------------------------
// Aggregation: B x T tokens of H = 128 floats, ids uniform over 19,247 genes, full rows.

struct TokenInput {
  std::vector<float> embeddings;
  std::vector<Index> ids, lengths;
};

const TokenInput& token_input(Index batch, Index seq) {
  static std::map<std::pair<Index, Index>, TokenInput> inputs;
  auto it = inputs.find({batch, seq});
  if (it == inputs.end()) {
    TokenInput input;
    input.embeddings.resize(static_cast<std::size_t>(batch) * seq * 128);
    input.ids.resize(static_cast<std::size_t>(batch) * seq);
    input.lengths.assign(batch, seq);
    const int threads = gw::available_threads();
    on_threads(threads, [&](int part) {
      for (Index r = batch * part / threads; r < batch * (part + 1) / threads; ++r) {
        gw::Rng rng(3, static_cast<std::uint64_t>(r));
        for (Index t = 0; t < seq; ++t) {
          const std::size_t token = static_cast<std::size_t>(r) * seq + t;
          input.ids[token] = static_cast<Index>(rng.uniform_index(19247));
          for (Index h = 0; h < 128; ++h) {
            input.embeddings[token * 128 + h] = 2.0f * rng.uniform_float() - 1.0f;
          }
        }
      }
    });
    it = inputs.emplace(std::pair{batch, seq}, std::move(input)).first;
  }
  return it->second;
}

void BM_Aggregate(benchmark::State& state) {
  const Index b = static_cast<Index>(state.range(0)), t = static_cast<Index>(state.range(1));
  const TokenInput& input = token_input(b, t);
  for (auto _ : state) {
    const gw::GeneAggregate<float> result = gw::aggregate_by_gene(
        std::span<const float>(input.embeddings), input.ids, input.lengths, b, t, 128);
    benchmark::DoNotOptimize(result.mean.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(input.embeddings.size() * sizeof(float)));
}
BENCHMARK(BM_Aggregate)
    ->Args({64, 512})
    ->Args({1024, 4096})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

void BM_CudaAggregate(benchmark::State& state) {
  if (!have_gpu(state)) return;
  const Index b = static_cast<Index>(state.range(0)), t = static_cast<Index>(state.range(1));
  const auto method =
      state.range(2) == 0 ? gw::CudaAggregateMethod::kSortByKey : gw::CudaAggregateMethod::kAtomics;
  const TokenInput& input = token_input(b, t);
  gw::CudaAggregator cuda;
  gw::DeviceArray<float> embeddings(std::span<const float>(input.embeddings), cuda.stream());
  gw::DeviceArray<Index> ids(std::span<const Index>(input.ids), cuda.stream());
  gw::DeviceArray<Index> lengths(std::span<const Index>(input.lengths), cuda.stream());
  for (auto _ : state) {
    cuda.run_async(embeddings.data(), ids.data(), lengths.data(), b, t, 128, 19247, {}, method);
    cuda.synchronize();
  }
  state.SetLabel(std::string(gw::to_string(method)));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(input.embeddings.size() * sizeof(float)));
}
BENCHMARK(BM_CudaAggregate)
    ->Args({64, 512, 0})
    ->Args({64, 512, 1})
    ->Args({1024, 4096, 0})
    ->Args({1024, 4096, 1})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
