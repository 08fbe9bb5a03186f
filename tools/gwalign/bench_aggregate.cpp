// `gwalign bench aggregate`: per-gene mean of token embeddings (cellgraph/aggregate.h) for a
// batch of B rows x T tokens x H float32 channels with gene ids uniform over a --vocabulary, row
// lengths uniform in [--fill * T, T]. The floor is one read of the valid tokens' embeddings at the
// read bandwidth measured in the same process (CPU: a summing loop over a buffer of the same size,
// capped at 1 GiB; CUDA: a streaming kernel over the embeddings themselves).
#include <cstdint>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "bench_util.h"
#include "tools/floors/floors.h"
#include "cellgraph/aggregate.h"
#include "cellgraph/cuda_aggregate.h"
#include "command.h"
#include "core/context.h"
#include "core/device_array.h"
#include "core/error.h"
#include "core/rng.h"

namespace gw::cli {
namespace {

int run_bench_aggregate(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Time the per-gene mean of token embeddings against one read of them.\n"
                           "Example: gwalign bench aggregate --batch 1024 --seq 4096 --hidden 128 "
                           "--json");
  // clang-format off
  options.add_options()
      ("batch", "rows (B)", cxxopts::value<Index>()->default_value("64"))
      ("seq", "tokens per row (T)", cxxopts::value<Index>()->default_value("512"))
      ("hidden", "embedding width (H)", cxxopts::value<Index>()->default_value("128"))
      ("vocabulary", "distinct gene ids", cxxopts::value<Index>()->default_value("19247"))
      ("fill", "row lengths are uniform in [fill * T, T]",
       cxxopts::value<double>()->default_value("1"))
      ("skip-cls", "exclude position 0 of every row")
      ("method", "CUDA method: sort | atomics", cxxopts::value<std::string>()->default_value("sort"))
      ("backend", "cpu | cuda", cxxopts::value<std::string>()->default_value("cpu"))
      ("device", "CUDA device with --backend cuda", cxxopts::value<int>()->default_value("0"));
  // clang-format on
  add_common_bench_options(options, 5);
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  const Index batch = args["batch"].as<Index>();
  const Index seq = args["seq"].as<Index>();
  const Index hidden = args["hidden"].as<Index>();
  const Index vocabulary = args["vocabulary"].as<Index>();
  const double fill = args["fill"].as<double>();
  const int reps = args["reps"].as<int>();
  const std::uint64_t seed = args["seed"].as<std::uint64_t>();
  const std::string backend_name = args["backend"].as<std::string>();
  const auto backend = backend_from_string(backend_name);
  GW_CHECK(backend.has_value(), "--backend must be cpu or cuda, got '" << backend_name << "'");
  GW_CHECK(batch >= 1 && seq >= 1 && hidden >= 1 && vocabulary >= 1,
           "--batch, --seq, --hidden and --vocabulary must be >= 1");
  GW_CHECK(fill >= 0.0 && fill <= 1.0, "--fill must be in [0, 1], got " << fill);
  ScopedThreads threads(args["threads"].as<int>());
  AggregateOptions aggregate_options;
  aggregate_options.skip_cls = args.count("skip-cls") > 0;
  aggregate_options.threads = threads.count();

  // Inputs, generated in parallel with one random stream per row.
  const std::size_t tokens = static_cast<std::size_t>(batch) * seq;
  std::vector<float> embeddings(tokens * hidden);
  std::vector<Index> ids(tokens);
  std::vector<Index> lengths(batch);
#pragma omp parallel for num_threads(threads.count()) schedule(dynamic, 4)
  for (Index b = 0; b < batch; ++b) {
    Rng rng(seed, static_cast<std::uint64_t>(b));
    const Index low = static_cast<Index>(fill * seq);
    lengths[b] = low + static_cast<Index>(rng.uniform_index(seq - low + 1));
    for (Index t = 0; t < seq; ++t) {
      const std::size_t token = static_cast<std::size_t>(b) * seq + t;
      ids[token] = static_cast<Index>(rng.uniform_index(vocabulary));
      float* row = embeddings.data() + token * hidden;
      for (Index h = 0; h < hidden; ++h) row[h] = 2.0f * rng.uniform_float() - 1.0f;
    }
  }
  Offset valid = 0;
  for (Index b = 0; b < batch; ++b) {
    valid += std::max<Index>(lengths[b] - (aggregate_options.skip_cls ? 1 : 0), 0);
  }
  const double read_bytes = static_cast<double>(valid) * hidden * sizeof(float);

  BenchReport report("aggregate");
  report.set("backend", backend_name).set("batch", std::int64_t{batch});
  report.set("seq", std::int64_t{seq}).set("hidden", std::int64_t{hidden});
  report.set("vocabulary", std::int64_t{vocabulary}).set("valid_tokens", valid);
  report.set("skip_cls", aggregate_options.skip_cls);
  TimingStats stats;
  double floor_seconds = 0.0;
  Index genes = 0;
  if (*backend == Backend::kCpu) {
    GeneAggregate<float> result;
    stats = time_repeated(reps, [&] {
      result = aggregate_by_gene(
          std::span<const float>(embeddings), ids, lengths, batch, seq, hidden, aggregate_options);
    });
    genes = result.num_genes();
    const std::size_t probe =
        std::min<std::size_t>(static_cast<std::size_t>(read_bytes), std::size_t{1} << 30);
    const double bandwidth = floors::read_bandwidth(probe, threads.count());
    floor_seconds = read_bytes / bandwidth;
    report.set("read_bandwidth_gbs", bandwidth / 1e9).set("threads", threads.count());
  } else {
    const std::string method_name = args["method"].as<std::string>();
    const auto method = cuda_aggregate_method_from_string(method_name);
    GW_CHECK(method.has_value(), "--method must be sort or atomics, got '" << method_name << "'");
    CudaAggregator cuda(args["device"].as<int>());
    DeviceArray<float> d_embeddings(std::span<const float>(embeddings), cuda.stream());
    DeviceArray<Index> d_ids(std::span<const Index>(ids), cuda.stream());
    DeviceArray<Index> d_lengths(std::span<const Index>(lengths), cuda.stream());
    stats = time_repeated(reps, [&] {
      cuda.run_async(d_embeddings.data(),
                     d_ids.data(),
                     d_lengths.data(),
                     batch,
                     seq,
                     hidden,
                     vocabulary,
                     aggregate_options,
                     *method);
      cuda.synchronize();
    });
    genes = cuda.download_float().num_genes();
    floor_seconds =
        cuda.time_read(
            d_embeddings.data(), static_cast<Offset>(tokens) * hidden * sizeof(float), reps) *
        (static_cast<double>(valid) / static_cast<double>(tokens));
    report.set("method", method_name);
  }
  report.set("genes", std::int64_t{genes});
  report.set_timing("", stats);
  report.set("read_bytes", read_bytes);
  report.set("floor_seconds", floor_seconds);
  report.set("ratio_to_floor", stats.median / floor_seconds);
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

}  // namespace

GW_CLI_BENCH("aggregate",
             "per-gene mean of token embeddings against one read of them (CPU/CUDA)",
             run_bench_aggregate);

}  // namespace gw::cli
