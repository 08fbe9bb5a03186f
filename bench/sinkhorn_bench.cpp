// Sinkhorn kernels: the reference oracle and the fused CPU kernel at a few sizes, float32 and
// float64, plus the streaming floor (a plain summing read of a cost-sized buffer) in the same
// binary. Every benchmark reports bytes_per_second over the n x k cost read once per iteration,
// so fused / floor bytes-per-second ratios read off the output directly. The CUDA variant lives
// in `gwalign bench sinkhorn --backend cuda` (scripts/gpu-check.sh), which owns its device.
//
//   build-*/bench/sinkhorn_bench --benchmark_filter='4000/5000'
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/context.h"
#include "core/rng.h"
#include "core/types.h"
#include "sinkhorn/sinkhorn.h"
#include "sinkhorn/sinkhorn_reference.h"
#include "tools/floors/floors.h"

namespace {

constexpr int kIterationsPerSolve = 20;
constexpr double kEpsilon = 1e-3;

template <typename T>
struct Problem {
  gw::Index n;
  gw::Index k;
  std::vector<T> cost;
  std::vector<double> a, b, f, g;

  Problem(gw::Index rows, gw::Index cols) : n(rows), k(cols), cost(std::size_t(rows) * cols) {
    gw::Rng rng(1);
    for (T& c : cost) c = static_cast<T>(rng.uniform());
    a.assign(n, 1.0 / n);
    b.assign(k, 1.0 / k);
    f.assign(n, 0.0);
    g.assign(k, 0.0);
  }
  gw::CostView view() const { return gw::CostView(cost.data(), n, k); }
};

template <typename T>
gw::SinkhornOptions solve_options() {
  gw::SinkhornOptions options;
  options.max_iterations = kIterationsPerSolve;
  options.tolerance = 0.0;
  options.precision = sizeof(T) == 4 ? gw::Precision::kF32 : gw::Precision::kF64;
  return options;
}

// Bytes of C read per solve: one read per iteration plus the final residual check.
template <typename T>
void set_bytes(benchmark::State& state, const Problem<T>& p) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          (kIterationsPerSolve + 1) * p.n * p.k * sizeof(T));
}

template <typename T>
void BM_SinkhornFused(benchmark::State& state) {
  Problem<T> p(static_cast<gw::Index>(state.range(0)), static_cast<gw::Index>(state.range(1)));
  const gw::SinkhornOptions options = solve_options<T>();
  gw::sinkhorn(p.view(), p.a, p.b, kEpsilon, p.f, p.g, options);  // warm start, as in the GW loop
  for (auto _ : state) {
    std::vector<double> f = p.f, g = p.g;
    benchmark::DoNotOptimize(gw::sinkhorn(p.view(), p.a, p.b, kEpsilon, f, g, options));
  }
  set_bytes(state, p);
}

template <typename T>
void BM_SinkhornReference(benchmark::State& state) {
  Problem<T> p(static_cast<gw::Index>(state.range(0)), static_cast<gw::Index>(state.range(1)));
  const gw::SinkhornOptions options = solve_options<T>();
  gw::sinkhorn_reference(p.view(), p.a, p.b, kEpsilon, p.f, p.g, options);
  for (auto _ : state) {
    std::vector<double> f = p.f, g = p.g;
    benchmark::DoNotOptimize(gw::sinkhorn_reference(p.view(), p.a, p.b, kEpsilon, f, g, options));
  }
  set_bytes(state, p);
}

// The floor: one plain summing read of the n x k cost per "iteration" (gw::floors::read_pass, the
// same code as `gwalign bench`), same byte accounting.
template <typename T>
void BM_StreamFloor(benchmark::State& state) {
  Problem<T> p(static_cast<gw::Index>(state.range(0)), static_cast<gw::Index>(state.range(1)));
  const int threads = gw::available_threads();
  for (auto _ : state) {
    double total = 0.0;
    for (int pass = 0; pass <= kIterationsPerSolve; ++pass) {
      total += gw::floors::read_pass(p.cost.data(), p.cost.size(), threads);
    }
    benchmark::DoNotOptimize(total);
  }
  set_bytes(state, p);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->Args({500, 600})->Args({2000, 2500})->Args({4000, 5000})->Unit(benchmark::kMillisecond);
}

BENCHMARK_TEMPLATE(BM_SinkhornFused, float)->Apply(sizes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_SinkhornFused, double)->Apply(sizes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_StreamFloor, float)->Apply(sizes)->UseRealTime();
BENCHMARK_TEMPLATE(BM_StreamFloor, double)->Apply(sizes)->UseRealTime();
// The oracle is slow (scalar double exp, two passes): small sizes only.
BENCHMARK_TEMPLATE(BM_SinkhornReference, float)
    ->Args({500, 600})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_SinkhornReference, double)
    ->Args({500, 600})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
