// `gwalign bench sinkhorn`: time per Sinkhorn iteration on a random n x k cost (uniform in
// [0, 1), uniform marginals), against the floor of one streaming read of the cost measured in the
// same process (CPU: a plain summing loop over a buffer of the cost's size, measured between the
// timed solves; CUDA: a plain streaming kernel over the cost itself). bench/peers/sinkhorn_pot.py
// runs POT on the same problem
// (--save-problem).
//
// The timed solves run exactly --iters iterations (tolerance 0) from warm potentials (those of a
// short untimed solve), as the GW loop calls Sinkhorn; seconds_per_iter = median time / iters, so
// the one extra read of the final residual check is included.
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
#include "core/types.h"
#include "io/hdf5.h"
#include "sinkhorn/cuda_sinkhorn.h"
#include "sinkhorn/sinkhorn.h"

namespace gw::cli {
namespace {

// Iterations of the untimed solve that produces the warm start.
constexpr int kWarmStartIterations = 20;

struct CostMatrix {
  std::vector<float> f32;
  std::vector<double> f64;
  CostView view(Index n, Index k) const {
    return f32.empty() ? CostView(f64.data(), n, k) : CostView(f32.data(), n, k);
  }
};

void save_problem(const std::string& path,
                  const CostMatrix& cost,
                  Index n,
                  Index k,
                  std::span<const double> a,
                  std::span<const double> b,
                  double epsilon) {
  // Only while the temporary exists: SIGINT / SIGTERM wait for the check before commit() (the
  // temporary is removed as Interrupted unwinds, cli_util.h) and a file size limit is a write
  // error, not a kill that leaves the temporary; during the timing a signal still ends the run.
  const InterruptScope interrupts;
  io::Writer out(path);
  const std::int64_t shape[] = {n, k};
  if (!cost.f32.empty()) {
    out.write_array<float>("/C", std::span<const float>(cost.f32), shape);
  } else {
    out.write_array<double>("/C", std::span<const double>(cost.f64), shape);
  }
  const std::int64_t n_shape[] = {n};
  const std::int64_t k_shape[] = {k};
  out.write_array<double>("/a", a, n_shape);
  out.write_array<double>("/b", b, k_shape);
  out.write_scalar<double>("/epsilon", epsilon);
  throw_if_interrupted();
  out.commit();
}

int run_bench_sinkhorn(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Time one Sinkhorn iteration against the streaming floor of the cost.\n"
                           "Example: gwalign bench sinkhorn --n 4000 --k 5000 --iters 100 "
                           "--precision f32 --json");
  options.add_options()("n", "rows of the cost", cxxopts::value<Index>()->default_value("4000"))(
      "k", "columns of the cost", cxxopts::value<Index>()->default_value("5000"))(
      "iters", "iterations per timed solve", cxxopts::value<int>()->default_value("100"))(
      "precision",
      "f32 (mixed) | f64; also the cost's element type",
      cxxopts::value<std::string>()->default_value("f32"))(
      "eps", "entropic regularization epsilon", cxxopts::value<double>()->default_value("1e-3"))(
      "backend", "cpu | cuda", cxxopts::value<std::string>()->default_value("cpu"))(
      "device", "CUDA device with --backend cuda", cxxopts::value<int>()->default_value("0"))(
      "save-problem",
      "also write C, a, b, epsilon to this HDF5 file (for bench/peers/sinkhorn_pot.py)",
      cxxopts::value<std::string>());
  add_common_bench_options(options);
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  const Index n = args["n"].as<Index>();
  const Index k = args["k"].as<Index>();
  const int iters = args["iters"].as<int>();
  const double epsilon = args["eps"].as<double>();
  const auto precision = precision_from_string(args["precision"].as<std::string>());
  GW_CHECK(precision.has_value(),
           "--precision must be f32 or f64, got '" << args["precision"].as<std::string>() << "'");
  const auto backend = backend_from_string(args["backend"].as<std::string>());
  GW_CHECK(backend.has_value(),
           "--backend must be cpu or cuda, got '" << args["backend"].as<std::string>() << "'");
  GW_CHECK(n >= 1 && k >= 1, "--n and --k must be >= 1, got " << n << " and " << k);
  GW_CHECK(iters >= 1, "--iters must be >= 1, got " << iters);
  if (args.count("save-problem")) {
    check_output_path(args["save-problem"].as<std::string>(), "--save-problem", {});
  }
  const int reps = args["reps"].as<int>();
  const int threads = resolve_threads(args["threads"].as<int>());

  Rng rng(args["seed"].as<std::uint64_t>());
  CostMatrix cost;
  const std::size_t entries = static_cast<std::size_t>(n) * k;
  if (*precision == Precision::kF32) {
    cost.f32.resize(entries);
    for (float& c : cost.f32) c = rng.uniform_float();
  } else {
    cost.f64.resize(entries);
    for (double& c : cost.f64) c = rng.uniform();
  }
  const CostView view = cost.view(n, k);
  const std::vector<double> a(n, 1.0 / n), b(k, 1.0 / k);
  const std::size_t cost_bytes =
      entries * (*precision == Precision::kF32 ? sizeof(float) : sizeof(double));

  SinkhornOptions solve_options;
  solve_options.precision = *precision;
  solve_options.threads = threads;
  solve_options.max_iterations = iters;
  solve_options.tolerance = 0.0;
  SinkhornOptions warm_options = solve_options;
  warm_options.max_iterations = kWarmStartIterations;

  std::vector<double> f0(n, 0.0), g0(k, 0.0), f(n), g(k);
  SinkhornResult result;
  TimingStats stats;
  double floor_seconds = 0.0;
  int cost_reads_per_iter = 1;
  if (*backend == Backend::kCpu) {
    sinkhorn(view, a, b, epsilon, f0, g0, warm_options);
    // Solve and floor alternate rep by rep, so that on a shared machine both medians sample the
    // same load.
    std::vector<double> floor_samples;
    const auto solve_once = [&] {
      f = f0;
      g = g0;
      result = sinkhorn(view, a, b, epsilon, f, g, solve_options);
    };
    solve_once();  // warm-up
    std::vector<double> samples;
    for (int rep = 0; rep < reps; ++rep) {
      samples.push_back(time_repeated(1, solve_once, 0).median);
      floor_samples.push_back(static_cast<double>(cost_bytes) /
                       floors::read_bandwidth(cost_bytes, threads));
    }
    stats.reps = reps;
    stats.min = *std::min_element(samples.begin(), samples.end());
    stats.max = *std::max_element(samples.begin(), samples.end());
    stats.median = median(samples);
    floor_seconds = median(floor_samples);
  } else {
    CudaSinkhorn cuda(args["device"].as<int>());
    cuda.upload_cost(view);
    cuda.set_marginals(a, b);
    cuda.solve(epsilon, warm_options);
    cuda.download_potentials(f0, g0);
    stats = time_repeated(reps, [&] {
      cuda.set_potentials(f0, g0);
      result = cuda.solve(epsilon, solve_options);
    });
    floor_seconds = cuda.time_cost_read(reps);
    cost_reads_per_iter = 2;  // the row kernel and the column kernels each read C
  }

  const double seconds_per_iter = stats.median / iters;
  BenchReport report("sinkhorn");
  report.set("backend", std::string(to_string(*backend)))
      .set("n", std::int64_t{n})
      .set("k", std::int64_t{k})
      .set("iters", iters)
      .set("precision", std::string(to_string(*precision)))
      .set("epsilon", epsilon)
      .set("threads", result.threads);
  report.set_timing("", stats);
  report.set("seconds_per_iter", seconds_per_iter)
      .set("seconds_per_iter_min", stats.min / iters)
      .set("seconds_per_iter_max", stats.max / iters)
      .set("floor_seconds_per_iter", floor_seconds)
      .set("ratio_to_floor", seconds_per_iter / floor_seconds)
      .set("cost_bytes", static_cast<std::int64_t>(cost_bytes))
      .set("read_bandwidth_gb_per_s", static_cast<double>(cost_bytes) / floor_seconds / 1e9)
      .set("cost_reads_per_iter", cost_reads_per_iter)
      .set("marginal_error", result.marginal_error)
      .set("termination", std::string(to_string(result.termination)));
  if (args.count("save-problem")) {
    const std::string path = args["save-problem"].as<std::string>();
    save_problem(path, cost, n, k, a, b, epsilon);
    report.set("saved", path);
  }
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

}  // namespace

GW_CLI_BENCH("sinkhorn",
             "seconds per Sinkhorn iteration vs the cost's streaming floor",
             run_bench_sinkhorn);

}  // namespace gw::cli
