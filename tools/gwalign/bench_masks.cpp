// `gwalign bench masks`: per-batch edge masks on the yeast-sized synthetic gene graph (6,607 genes,
// nine edge types with the real per-type edge counts, 2.5 M edges; cellgraph/workloads.h) for B
// samples of --per-sample random perturbed genes, all nine types per call, in both output forms:
//   removal_seconds   the sorted removal lists + ptr of every type
//   dense_seconds     the dense keep-masks of every type (B * E bytes written in all)
// The floor of the dense form is writing its B * E bytes once at the write bandwidth measured in
// the same process on a buffer of the same size (CPU) or by a device memset (CUDA).
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "tools/floors/floors.h"
#include "cellgraph/cuda_edge_masks.h"
#include "cellgraph/edge_masks.h"
#include "cellgraph/workloads.h"
#include "command.h"
#include "core/context.h"
#include "core/device_array.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/timer.h"

namespace gw::cli {
namespace {

int run_bench_masks(int argc, char** argv) {
  cxxopts::Options options(argv[0],
                           "Time edge masks of B perturbation samples on the yeast-sized gene "
                           "graph (9 edge types, 2.5 M edges), removal lists and dense masks.\n"
                           "Example: gwalign bench masks --batch 64 --json");
  // clang-format off
  options.add_options()
      ("batch", "samples per batch (B)", cxxopts::value<Index>()->default_value("64"))
      ("per-sample", "perturbed genes per sample (3 = triples)",
       cxxopts::value<Index>()->default_value("3"))
      ("backend", "cpu | cuda", cxxopts::value<std::string>()->default_value("cpu"))
      ("device", "CUDA device with --backend cuda", cxxopts::value<int>()->default_value("0"));
  // clang-format on
  add_common_bench_options(options, 10);
  const auto args = options.parse(argc, argv);
  if (args.count("help")) {
    std::cout << options.help() << "\n";
    return 0;
  }
  const Index batch = args["batch"].as<Index>();
  const Index per_sample = args["per-sample"].as<Index>();
  const int reps = args["reps"].as<int>();
  const std::string backend_name = args["backend"].as<std::string>();
  const auto backend = backend_from_string(backend_name);
  GW_CHECK(backend.has_value(), "--backend must be cpu or cuda, got '" << backend_name << "'");
  GW_CHECK(batch >= 1, "--batch must be >= 1, got " << batch);
  const std::uint64_t seed = args["seed"].as<std::uint64_t>();
  ScopedThreads threads(args["threads"].as<int>());

  Stopwatch build_watch;
  const std::vector<SyntheticEdgeType> types = synthetic_yeast_graph(seed);
  const double generate_seconds = build_watch.seconds();
  build_watch.reset();
  EdgeMasker masker(kYeastGenes, EdgeMaskOptions{threads.count()});
  for (const SyntheticEdgeType& type : types) masker.add_type(type.name, type.edges.view());
  const double build_seconds = build_watch.seconds();
  Rng rng(seed, 1);
  const PerturbationSet perts = random_perturbations(rng, kYeastGenes, batch, per_sample);
  const Offset total_edges = masker.total_edges();
  const Offset dense_bytes = static_cast<Offset>(batch) * total_edges;

  BenchReport report("masks");
  report.set("backend", backend_name).set("batch", std::int64_t{batch});
  report.set("per_sample", std::int64_t{per_sample}).set("genes", std::int64_t{kYeastGenes});
  report.set("edge_types", masker.num_types()).set("edges", total_edges);
  report.set("generate_seconds", generate_seconds).set("index_build_seconds", build_seconds);

  TimingStats removal, dense;
  Offset removed_total = 0;
  double floor_seconds = 0.0;
  if (*backend == Backend::kCpu) {
    std::vector<RemovedEdges> removed;
    removal = time_repeated(reps, [&] { removed = masker.removed_edges(perts.view()); });
    for (const RemovedEdges& r : removed) removed_total += static_cast<Offset>(r.positions.size());
    std::vector<std::vector<std::uint8_t>> keep(masker.num_types());
    for (int t = 0; t < masker.num_types(); ++t) keep[t].resize(batch * masker.num_edges(t));
    dense = time_repeated(reps, [&] {
      for (int t = 0; t < masker.num_types(); ++t) masker.keep_mask(t, perts.view(), keep[t]);
    });
    const double bandwidth =
        floors::write_bandwidth(static_cast<std::size_t>(dense_bytes), threads.count());
    floor_seconds = static_cast<double>(dense_bytes) / bandwidth;
    report.set("write_bandwidth_gbs", bandwidth / 1e9);
    report.set("threads", threads.count());
  } else {
    CudaEdgeMasker cuda(masker, args["device"].as<int>());
    const Index num_ids = static_cast<Index>(perts.ids.size());
    const DeviceBatch device_batch = cuda.upload_batch(perts.view());
    removal = time_repeated(reps, [&] {
      cuda.removed_edges_async(device_batch);
      cuda.synchronize();
    });
    cuda.check();
    std::vector<RemovedEdges> removed = cuda.download_removed();
    for (const RemovedEdges& r : removed) removed_total += static_cast<Offset>(r.positions.size());
    DeviceArray<std::uint8_t> keep(static_cast<std::size_t>(dense_bytes), cuda.stream());
    dense = time_repeated(reps, [&] {
      Offset offset = 0;
      for (int t = 0; t < masker.num_types(); ++t) {
        cuda.keep_mask_async(t, device_batch, keep.data() + offset);
        offset += static_cast<Offset>(batch) * masker.num_edges(t);
      }
      cuda.synchronize();
    });
    floor_seconds = cuda.time_fill(keep.data(), dense_bytes, reps);
    report.set("num_ids", std::int64_t{num_ids});
  }
  report.set("removed_edges", removed_total);
  report.set("removed_fraction",
             dense_bytes > 0 ? static_cast<double>(removed_total) / dense_bytes : 0.0);
  report.set_timing("removal_", removal);
  report.set_timing("dense_", dense);
  report.set("dense_bytes", dense_bytes);
  report.set("dense_floor_seconds", floor_seconds);
  report.set("dense_ratio_to_floor", dense.median / floor_seconds);
  report.set("removal_bytes", removed_total * static_cast<Offset>(sizeof(Offset)));
  // gpu-check.sh's table columns.
  report.set("seconds", removal.median);
  report.set("ratio_to_floor", dense.median / floor_seconds);
  report.print(std::cout, args.count("json") > 0);
  return 0;
}

}  // namespace

GW_CLI_BENCH("masks",
             "edge masks of perturbation batches on the yeast-sized gene graph (CPU/CUDA)",
             run_bench_masks);

}  // namespace gw::cli
