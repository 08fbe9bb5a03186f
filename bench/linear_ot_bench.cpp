// Exact linear OT (linear_ot/): LEMON's network simplex behind solve_linear_ot (the reference,
// always from scratch), our TransportSimplex from scratch, and TransportSimplex warm-started from
// the optimum of the previous cost, as conditional gradient uses it. The costs are squared
// distances between random points in the plane (n sources, k targets, uniform masses); the
// sequence moves every point by a small random step per solve (cost changes of ~1% of the range),
// like the slowly changing gradients of the solver's later iterations. One benchmark iteration is
// one solve; `pivots` is TransportSimplex's mean per solve. Sizes: 160 x 123 (a pairwise shape
// pair) and 400 x 500 (the small spiral benchmark).
//
//   build-*/bench/linear_ot_bench
#include <benchmark/benchmark.h>

#include <cstdint>
#include <span>
#include <vector>

#include "core/rng.h"
#include "core/types.h"
#include "linear_ot/linear_ot_reference.h"

namespace {

struct Sequence {
  gw::Index n, k;
  std::vector<double> p, q;
  std::vector<std::vector<double>> costs;  // kSteps slowly moving costs, each n x k

  static constexpr int kSteps = 16;

  Sequence(gw::Index rows, gw::Index cols)
      : n(rows), k(cols), p(rows, 1.0 / rows), q(cols, 1.0 / cols) {
    gw::Rng rng(3);
    std::vector<double> x(2 * static_cast<std::size_t>(n)), y(2 * static_cast<std::size_t>(k));
    for (double& v : x) v = rng.uniform();
    for (double& v : y) v = rng.uniform();
    for (int s = 0; s < kSteps; ++s) {
      std::vector<double> c(static_cast<std::size_t>(n) * k);
      for (gw::Index i = 0; i < n; ++i)
        for (gw::Index j = 0; j < k; ++j) {
          const double dx = x[2 * i] - y[2 * j], dy = x[2 * i + 1] - y[2 * j + 1];
          c[static_cast<std::size_t>(i) * k + j] = dx * dx + dy * dy;
        }
      costs.push_back(std::move(c));
      for (double& v : x) v += 0.01 * (rng.uniform() - 0.5);
    }
  }
};

void BM_LemonFromScratch(benchmark::State& state) {
  const Sequence seq(state.range(0), state.range(1));
  std::size_t s = 0;
  for (auto _ : state) {
    const std::vector<double>& c = seq.costs[s++ % seq.costs.size()];
    benchmark::DoNotOptimize(
        gw::solve_linear_ot(std::span<const double>(c), seq.n, seq.k, seq.p, seq.q));
  }
}

void BM_TransportSimplexFromScratch(benchmark::State& state) {
  const Sequence seq(state.range(0), state.range(1));
  std::size_t s = 0;
  std::int64_t pivots = 0;
  for (auto _ : state) {
    gw::TransportSimplex simplex(seq.p, seq.q);
    const std::vector<double>& c = seq.costs[s++ % seq.costs.size()];
    benchmark::DoNotOptimize(simplex.solve(std::span<const double>(c)));
    pivots += simplex.pivots();
  }
  state.counters["pivots"] = static_cast<double>(pivots) / static_cast<double>(state.iterations());
}

void BM_TransportSimplexWarm(benchmark::State& state) {
  const Sequence seq(state.range(0), state.range(1));
  gw::TransportSimplex simplex(seq.p, seq.q);
  simplex.solve(std::span<const double>(seq.costs.back()));
  std::size_t s = 0;
  std::int64_t pivots = 0;
  for (auto _ : state) {
    // Forwards then backwards through the sequence, so every solve follows its neighbour.
    const std::size_t m = seq.costs.size(), at = s++ % (2 * m);
    const std::vector<double>& c = seq.costs[at < m ? at : 2 * m - 1 - at];
    benchmark::DoNotOptimize(simplex.solve(std::span<const double>(c)));
    pivots += simplex.pivots();
  }
  state.counters["pivots"] = static_cast<double>(pivots) / static_cast<double>(state.iterations());
}

void sizes(benchmark::internal::Benchmark* b) {
  b->Args({160, 123})->Args({400, 500})->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK(BM_LemonFromScratch)->Apply(sizes);
BENCHMARK(BM_TransportSimplexFromScratch)->Apply(sizes);
BENCHMARK(BM_TransportSimplexWarm)->Apply(sizes);

BENCHMARK_MAIN();
