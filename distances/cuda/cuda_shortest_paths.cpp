// Device shortest paths, farthest-point landmarks and providers (distances/cuda_shortest_paths.h).
// Compiled into every build; without CUDA every entry point throws ErrorCode::kNotCompiled.
#include "distances/cuda_shortest_paths.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>

#include "core/config.h"
#include "core/error.h"
#include "core/rng.h"
#include "distances/shortest_paths_impl.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda/cuda_util.h"
#include "distances/cuda/shortest_paths_kernels.cuh"
#endif

namespace gw {

#if GW_HAS_CUDA

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Frontier lanes per node: the average degree rounded up to 4, 8, 16 or 32.
int group_for(const DeviceCsrGraph& graph) {
  const double degree =
      graph.num_nodes > 0 ? static_cast<double>(graph.num_edges()) / graph.num_nodes : 0.0;
  return degree <= 4.0 ? 4 : degree <= 8.0 ? 8 : degree <= 16.0 ? 16 : 32;
}

cuda::SsspArgs graph_args(const DeviceCsrGraph& graph) {
  cuda::SsspArgs args;
  args.row_offsets = graph.row_offsets.data();
  args.cols = graph.col_indices.data();
  args.weights = graph.has_weights() ? graph.weights.data() : nullptr;
  args.n = graph.num_nodes;
  return args;
}

// The frontiers and stamps of `blocks` concurrent blocks (12 n bytes each).
struct Workspace {
  cuda::DeviceBuffer<Index> queues;
  cuda::DeviceBuffer<int> stamps;
  int blocks = 0;

  Workspace(Index n, int count) : blocks(count) {
    const std::size_t size = static_cast<std::size_t>(n) * count;
    queues.ensure(2 * size);
    stamps.ensure(size);
  }
  // Every stamp to -1 (below the first round of a launch with first_round = 0).
  void reset(cudaStream_t stream) {
    GW_CUDA_CHECK(cudaMemsetAsync(stamps.get(), 0xff, stamps.size() * sizeof(int), stream));
  }
};

// The launch shape for m sources: blocks of the largest size when the sources do not fill the
// multiprocessors (a landmark batch), else several smaller blocks per multiprocessor; as many
// blocks as are resident at once, at most m, and at most what a quarter of the free device memory
// holds in workspaces.
struct BatchShape {
  int blocks = 1;
  int threads = cuda::kSsspBatchThreads;
};

BatchShape batch_shape(Index n, Index m, int group) {
  int device = 0;
  GW_CUDA_CHECK(cudaGetDevice(&device));
  int sms = 0;
  GW_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  BatchShape shape;
  if (m <= sms) shape.threads = cuda::kSsspSingleThreads;
  int per_sm = 0;
  GW_CUDA_CHECK(cuda::sssp_blocks_per_sm(shape.threads, group, &per_sm));
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  GW_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const std::size_t per_block = 12 * static_cast<std::size_t>(std::max<Index>(n, 1));
  const std::size_t by_memory = std::max<std::size_t>(1, free_bytes / 4 / per_block);
  const std::int64_t resident = std::max<std::int64_t>(1, std::int64_t{sms} * per_sm);
  shape.blocks = static_cast<int>(std::min<std::int64_t>(
      {resident, static_cast<std::int64_t>(m), static_cast<std::int64_t>(by_memory)}));
  return shape;
}

// Rows of `sources` (device, m of them) into rows (device, m x n), several launches if the round
// stamps of one launch could overflow int: a block runs at most ceil(m / blocks) sources of at
// most n + 2 rounds each.
void run_batch(const DeviceCsrGraph& graph, const Index* sources, Index m, float* rows) {
  const Index n = graph.num_nodes;
  if (m == 0 || n == 0) return;
  const cudaStream_t s = cuda::stream_of(graph.stream());
  const int group = group_for(graph);
  const BatchShape shape = batch_shape(n, m, group);
  Workspace workspace(n, shape.blocks);
  const std::int64_t rounds_per_source = static_cast<std::int64_t>(n) + 2;
  const std::int64_t per_block = std::max<std::int64_t>(1, (INT_MAX - 1) / rounds_per_source);
  const std::int64_t chunk = per_block * workspace.blocks;
  for (std::int64_t first = 0; first < m; first += chunk) {
    const Index count = static_cast<Index>(std::min<std::int64_t>(chunk, m - first));
    workspace.reset(s);
    cuda::SsspArgs args = graph_args(graph);
    args.sources = sources + first;
    args.num_sources = count;
    args.rows = rows + first * static_cast<std::int64_t>(n);
    args.queues = workspace.queues.get();
    args.stamps = workspace.stamps.get();
    GW_CUDA_CHECK(
        cuda::launch_sssp(args, std::min<int>(workspace.blocks, count), shape.threads, group, s));
  }
  // The workspace is freed on return: the runs must be done.
  GW_CUDA_CHECK(cudaStreamSynchronize(s));
}

void check_graph(const DeviceCsrGraph& graph, const char* what) {
  GW_CHECK(graph.row_offsets.size() == static_cast<std::size_t>(graph.num_nodes) + 1,
           what << ": the device graph has " << graph.row_offsets.size()
                << " row offsets for n = " << graph.num_nodes
                << " nodes; build it with DeviceCsrGraph::upload or knn_graph_device");
}

// The picks of farthest-point sampling (keys as launch_farthest writes them), with the minima.
struct Picks {
  std::vector<Index> nodes;
  std::vector<float> radius;
  cuda::DeviceBuffer<float> min_distance;  // n
};

Picks pick_farthest(const DeviceCsrGraph& graph, Index count, const FarthestPointOptions& options) {
  const Index n = graph.num_nodes;
  GW_CHECK(n >= 1, "farthest_point_sample: the graph has no nodes");
  GW_CHECK(count >= 1, "farthest_point_sample: count must be >= 1, got " << count);
  count = std::min(count, n);
  Index start = 0;
  if (options.start) {
    start = *options.start;
    const Index ids[] = {start};
    detail::check_node_ids(ids, n, "start");
  } else {
    Rng rng(options.seed);
    start = static_cast<Index>(rng.uniform_index(static_cast<std::uint64_t>(n)));
  }
  const cudaStream_t s = cuda::stream_of(graph.stream());
  const std::size_t size = static_cast<std::size_t>(n);
  Picks picks;
  picks.min_distance.ensure(size);
  GW_CUDA_CHECK(cuda::launch_fill(picks.min_distance.get(), n, kInf, s));
  cuda::DeviceBuffer<std::uint8_t> picked(size);
  GW_CUDA_CHECK(cudaMemsetAsync(picked.get(), 0, size, s));
  cuda::DeviceBuffer<unsigned long long> keys(static_cast<std::size_t>(count));
  std::uint32_t inf_bits = 0;
  std::memcpy(&inf_bits, &kInf, sizeof(inf_bits));
  const unsigned long long first_key = (static_cast<unsigned long long>(inf_bits) << 32) |
                                       (0xffffffffull - static_cast<unsigned long long>(start));
  cuda::copy_to_device(keys.get(), &first_key, 1, s);

  // One block per pick (the picks are sequential), back to back with the argmax on the stream.
  Workspace workspace(n, 1);
  const int group = group_for(graph);
  for (Index k = 0; k < count; ++k) {
    workspace.reset(s);
    cuda::SsspArgs args = graph_args(graph);
    args.source_key = keys.get() + k;
    args.num_sources = 1;
    args.rows = picks.min_distance.get();
    args.init_rows = false;
    args.picked = picked.get();
    args.queues = workspace.queues.get();
    args.stamps = workspace.stamps.get();
    GW_CUDA_CHECK(cuda::launch_sssp(args, 1, cuda::kSsspSingleThreads, group, s));
    if (k + 1 < count) {
      GW_CUDA_CHECK(
          cuda::launch_farthest(picks.min_distance.get(), picked.get(), n, keys.get() + k + 1, s));
    }
  }
  std::vector<unsigned long long> host_keys(static_cast<std::size_t>(count));
  cuda::copy_to_host(host_keys.data(), keys.get(), host_keys.size(), s);
  for (Index k = 0; k < count; ++k) {
    const unsigned long long key = host_keys[k];
    const auto bits = static_cast<std::uint32_t>(key >> 32);
    float radius = 0.0f;
    std::memcpy(&radius, &bits, sizeof(radius));
    const Index node = static_cast<Index>(0xffffffffull - (key & 0xffffffffull));
    GW_CHECK_CODE(node >= 0 && node < n,
                  ErrorCode::kInternal,
                  "farthest_point_sample_cuda: pick " << k << " decoded to node " << node);
    picks.nodes.push_back(node);
    picks.radius.push_back(k == 0 ? kInf : radius);
  }
  return picks;
}

}  // namespace

void shortest_path_rows_device(const DeviceCsrGraph& graph,
                               std::span<const Index> sources,
                               float* rows) {
  check_graph(graph, "shortest_path_rows_device");
  detail::check_node_ids(sources, graph.num_nodes, "source");
  if (sources.empty() || graph.num_nodes == 0) return;
  cuda::DeviceGuard guard(graph.stream().device());
  cuda::check_device_pointer(rows,
                             graph.stream().device(),
                             "rows",
                             "allocate |sources| x n floats "
                             "on the graph's device (gw::DeviceArray)");
  const cudaStream_t s = cuda::stream_of(graph.stream());
  cuda::DeviceBuffer<Index> device_sources(sources.size());
  cuda::copy_to_device(device_sources.get(), sources.data(), sources.size(), s);
  run_batch(graph, device_sources.get(), static_cast<Index>(sources.size()), rows);
}

DeviceArray<float> shortest_path_rows_device(const DeviceCsrGraph& graph,
                                             std::span<const Index> sources) {
  DeviceArray<float> rows(sources.size() * static_cast<std::size_t>(graph.num_nodes),
                          graph.stream());
  shortest_path_rows_device(graph, sources, rows.data());
  return rows;
}

std::vector<float> shortest_path_rows_cuda(const CsrGraphView& graph,
                                           std::span<const Index> sources,
                                           const CudaStream& stream) {
  const DeviceCsrGraph device = DeviceCsrGraph::upload(graph, stream);
  return shortest_path_rows_device(device, sources).download();
}

DeviceArray<float> all_pairs_shortest_paths_device(const DeviceCsrGraph& graph) {
  check_graph(graph, "all_pairs_shortest_paths_device");
  const Index n = graph.num_nodes;
  std::vector<Index> sources(static_cast<std::size_t>(n));
  std::iota(sources.begin(), sources.end(), 0);
  return shortest_path_rows_device(graph, sources);
}

std::vector<float> all_pairs_shortest_paths_cuda(const CsrGraphView& graph,
                                                 const CudaStream& stream) {
  const DeviceCsrGraph device = DeviceCsrGraph::upload(graph, stream);
  return all_pairs_shortest_paths_device(device).download();
}

DeviceLandmarkRows landmark_rows_device(const DeviceCsrGraph& graph,
                                        Index count,
                                        const FarthestPointOptions& options) {
  check_graph(graph, "farthest_point_sample_cuda");
  cuda::DeviceGuard guard(graph.stream().device());
  Picks picks = pick_farthest(graph, count, options);
  DeviceLandmarkRows out{{}, shortest_path_rows_device(graph, picks.nodes)};
  out.sample.min_distance.resize(static_cast<std::size_t>(graph.num_nodes));
  cuda::copy_to_host(out.sample.min_distance.data(),
                     picks.min_distance.get(),
                     out.sample.min_distance.size(),
                     cuda::stream_of(graph.stream()));
  out.sample.nodes = std::move(picks.nodes);
  out.sample.radius = std::move(picks.radius);
  return out;
}

FarthestPointSample farthest_point_sample_cuda(const DeviceCsrGraph& graph,
                                               Index count,
                                               const FarthestPointOptions& options) {
  check_graph(graph, "farthest_point_sample_cuda");
  if (options.keep_rows) {
    DeviceLandmarkRows rows = landmark_rows_device(graph, count, options);
    rows.sample.rows = rows.rows.download();
    return std::move(rows.sample);
  }
  cuda::DeviceGuard guard(graph.stream().device());
  Picks picks = pick_farthest(graph, count, options);
  FarthestPointSample sample;
  sample.min_distance.resize(static_cast<std::size_t>(graph.num_nodes));
  cuda::copy_to_host(sample.min_distance.data(),
                     picks.min_distance.get(),
                     sample.min_distance.size(),
                     cuda::stream_of(graph.stream()));
  sample.nodes = std::move(picks.nodes);
  sample.radius = std::move(picks.radius);
  return sample;
}

std::unique_ptr<LandmarkProvider> make_landmark_provider_cuda(const DeviceCsrGraph& graph,
                                                              const LandmarkOptions& options) {
  GW_CHECK(options.num_landmarks >= 1,
           "LandmarkOptions::num_landmarks must be >= 1, got " << options.num_landmarks);
  FarthestPointOptions fps;
  fps.seed = options.seed;
  fps.start = options.start;
  DeviceLandmarkRows rows = landmark_rows_device(graph, options.num_landmarks, fps);
  const std::vector<float> host_rows = rows.rows.download();
  rows.rows = DeviceArray<float>();
  return std::make_unique<LandmarkProvider>(
      std::move(rows.sample.nodes), host_rows, connected_components_cuda(graph), options.threads);
}

std::unique_ptr<PrecomputedProvider> make_precomputed_provider_cuda(
    const DeviceCsrGraph& graph, const PrecomputedOptions& options) {
  const std::size_t n = static_cast<std::size_t>(graph.num_nodes);
  const std::size_t bytes = n * n * sizeof(float);
  GW_CHECK(bytes <= options.max_bytes,
           "precomputed distances for n = " << n << " nodes need " << bytes
                                            << " bytes, above PrecomputedOptions::max_bytes = "
                                            << options.max_bytes
                                            << "; use the dijkstra or landmark mode, or raise "
                                               "max_bytes");
  std::vector<float> matrix = all_pairs_shortest_paths_device(graph).download();
  return std::make_unique<PrecomputedProvider>(
      std::move(matrix), graph.num_nodes, "precomputed", graph.num_nodes, options.threads);
}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled(const char* what) {
  GW_THROW(ErrorCode::kNotCompiled,
           what << ": this gwalign was built without CUDA; rebuild with -DGWALIGN_ENABLE_CUDA=ON "
                   "or use the CPU functions of distances/shortest_paths.h and landmark.h");
}
}  // namespace

void shortest_path_rows_device(const DeviceCsrGraph&, std::span<const Index>, float*) {
  not_compiled("shortest_path_rows_device");
}
DeviceArray<float> shortest_path_rows_device(const DeviceCsrGraph&, std::span<const Index>) {
  not_compiled("shortest_path_rows_device");
}
std::vector<float> shortest_path_rows_cuda(const CsrGraphView&,
                                           std::span<const Index>,
                                           const CudaStream&) {
  not_compiled("shortest_path_rows_cuda");
}
DeviceArray<float> all_pairs_shortest_paths_device(const DeviceCsrGraph&) {
  not_compiled("all_pairs_shortest_paths_device");
}
std::vector<float> all_pairs_shortest_paths_cuda(const CsrGraphView&, const CudaStream&) {
  not_compiled("all_pairs_shortest_paths_cuda");
}
FarthestPointSample farthest_point_sample_cuda(const DeviceCsrGraph&,
                                               Index,
                                               const FarthestPointOptions&) {
  not_compiled("farthest_point_sample_cuda");
}
DeviceLandmarkRows landmark_rows_device(const DeviceCsrGraph&, Index, const FarthestPointOptions&) {
  not_compiled("landmark_rows_device");
}
std::unique_ptr<LandmarkProvider> make_landmark_provider_cuda(const DeviceCsrGraph&,
                                                              const LandmarkOptions&) {
  not_compiled("make_landmark_provider_cuda");
}
std::unique_ptr<PrecomputedProvider> make_precomputed_provider_cuda(const DeviceCsrGraph&,
                                                                    const PrecomputedOptions&) {
  not_compiled("make_precomputed_provider_cuda");
}

#endif  // GW_HAS_CUDA

}  // namespace gw
