// Device CSR graphs, components and stitching (graph/cuda_graph.h). Compiled into every build;
// without CUDA every entry point throws ErrorCode::kNotCompiled.
#include "graph/cuda_graph.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/error.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda/cuda_util.h"
#include "graph/cuda/device_graph_impl.h"
#include "graph/cuda/graph_kernels.cuh"
#endif

namespace gw {

#if GW_HAS_CUDA

namespace detail {

DeviceComponents device_components(
    const Offset* row_offsets, const Index* cols, int stride, Index n, cudaStream_t stream) {
  DeviceComponents out;
  const std::size_t size = static_cast<std::size_t>(n);
  out.labels.ensure(size);
  if (n == 0) return out;
  cuda::DeviceBuffer<Index> parent(size), root(size), flags(size), rank(size);
  GW_CUDA_CHECK(cuda::launch_init_parents(parent.get(), n, stream));
  GW_CUDA_CHECK(cuda::launch_union_edges(row_offsets, cols, stride, n, parent.get(), stream));
  GW_CUDA_CHECK(cuda::launch_flatten(parent.get(), n, root.get(), flags.get(), stream));
  std::size_t bytes = 0;
  GW_CUDA_CHECK(cuda::graph_exclusive_sum(nullptr, bytes, flags.get(), rank.get(), n, stream));
  cuda::DeviceBuffer<std::byte> temp(bytes);
  GW_CUDA_CHECK(cuda::graph_exclusive_sum(temp.get(), bytes, flags.get(), rank.get(), n, stream));
  GW_CUDA_CHECK(cuda::launch_component_labels(root.get(), rank.get(), n, out.labels.get(), stream));
  Index last_rank = 0;
  Index last_flag = 0;
  cuda::copy_to_host(&last_rank, rank.get() + (n - 1), 1, stream);
  cuda::copy_to_host(&last_flag, flags.get() + (n - 1), 1, stream);
  out.count = last_rank + last_flag;
  return out;
}

std::vector<Bridge> device_stitch(
    const double* points, int d, const DeviceComponents& components, Index n, cudaStream_t stream) {
  std::vector<Bridge> bridges;
  const Index count = components.count;
  if (count <= 1) return bridges;
  const std::size_t size = static_cast<std::size_t>(n);

  // Members of each component, so a merged component's nodes are found without a scan.
  cuda::DeviceBuffer<Index> iota(size), sorted_labels(size), members(size);
  GW_CUDA_CHECK(cuda::launch_iota(iota.get(), n, stream));
  const int label_bits = static_cast<int>(std::bit_width(static_cast<std::uint32_t>(count - 1)));
  std::size_t bytes = 0;
  GW_CUDA_CHECK(cuda::sort_members(nullptr,
                                   bytes,
                                   components.labels.get(),
                                   iota.get(),
                                   sorted_labels.get(),
                                   members.get(),
                                   n,
                                   label_bits,
                                   stream));
  cuda::DeviceBuffer<std::byte> temp(bytes);
  GW_CUDA_CHECK(cuda::sort_members(temp.get(),
                                   bytes,
                                   components.labels.get(),
                                   iota.get(),
                                   sorted_labels.get(),
                                   members.get(),
                                   n,
                                   label_bits,
                                   stream));
  cuda::DeviceBuffer<Offset> offsets_device(static_cast<std::size_t>(count) + 1);
  GW_CUDA_CHECK(
      cuda::launch_member_offsets(sorted_labels.get(), n, count, offsets_device.get(), stream));
  std::vector<Offset> offsets(static_cast<std::size_t>(count) + 1);
  cuda::copy_to_host(offsets.data(), offsets_device.get(), offsets.size(), stream);

  cuda::DeviceBuffer<std::uint8_t> in_main(size);
  cuda::DeviceBuffer<double> best(size);
  cuda::DeviceBuffer<Index> best_src(size);
  const cuda::StitchState state{in_main.get(), best.get(), best_src.get()};
  GW_CUDA_CHECK(cuda::launch_stitch_init(state, n, stream));
  cuda::DeviceBuffer<cuda::BridgeChoice> choice(1);
  auto absorb = [&](Index component) {
    GW_CUDA_CHECK(cuda::launch_absorb(
        points, d, members.get(), offsets[component], offsets[component + 1], n, state, stream));
  };

  absorb(0);  // node 0's component has label 0
  bridges.reserve(static_cast<std::size_t>(count) - 1);
  for (Index step = 1; step < count; ++step) {
    GW_CUDA_CHECK(
        cuda::launch_choose_bridge(state, components.labels.get(), n, choice.get(), stream));
    cuda::BridgeChoice host{};
    cuda::copy_to_host(&host, choice.get(), 1, stream);
    GW_CHECK_CODE(
        host.target != INT_MAX && host.source >= 0 && host.label > 0 && host.label < count,
        ErrorCode::kInternal,
        "stitch_components_cuda: step " << step << " of " << count - 1
                                        << " found no outside node (target " << host.target
                                        << ", label " << host.label << ")");
    bridges.push_back({host.source, host.target, static_cast<float>(std::sqrt(host.length2))});
    absorb(host.label);
  }
  GW_CUDA_CHECK(cudaStreamSynchronize(stream));  // the last absorb, before its buffers go
  return bridges;
}

DeviceCsrGraph assemble_csr(const CudaStream& stream,
                            Index n,
                            cuda::DeviceBuffer<std::uint64_t>& keys,
                            cuda::DeviceBuffer<float>& values,
                            Offset count,
                            bool keep_all,
                            bool weighted) {
  const cudaStream_t s = cuda::stream_of(stream);
  DeviceCsrGraph graph;
  graph.num_nodes = n;
  graph.row_offsets = DeviceArray<Offset>(static_cast<std::size_t>(n) + 1, stream);
  if (count == 0) {
    GW_CUDA_CHECK(cudaMemsetAsync(
        graph.row_offsets.data(), 0, (static_cast<std::size_t>(n) + 1) * sizeof(Offset), s));
    GW_CUDA_CHECK(cudaStreamSynchronize(s));
    graph.col_indices = DeviceArray<Index>(0, stream);
    graph.weights = DeviceArray<float>(0, stream);
    return graph;
  }
  const std::size_t size = static_cast<std::size_t>(count);
  cuda::DeviceBuffer<std::uint64_t> sorted_keys(size);
  cuda::DeviceBuffer<float> sorted_values(size);
  const int key_bits =
      32 + std::max(1, static_cast<int>(std::bit_width(static_cast<std::uint32_t>(n - 1))));
  {
    std::size_t bytes = 0;
    GW_CUDA_CHECK(cuda::sort_edge_keys(nullptr,
                                       bytes,
                                       keys.get(),
                                       sorted_keys.get(),
                                       values.get(),
                                       sorted_values.get(),
                                       count,
                                       key_bits,
                                       s));
    cuda::DeviceBuffer<std::byte> temp(bytes);
    GW_CUDA_CHECK(cuda::sort_edge_keys(temp.get(),
                                       bytes,
                                       keys.get(),
                                       sorted_keys.get(),
                                       values.get(),
                                       sorted_values.get(),
                                       count,
                                       key_bits,
                                       s));
    // The unsorted copies are dead once the sort has run: free them before the next buffers.
    GW_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  keys.release();
  values.release();

  cuda::DeviceBuffer<Offset> flags(size), pos(size);
  GW_CUDA_CHECK(cuda::launch_first_key_flags(sorted_keys.get(), count, keep_all, flags.get(), s));
  {
    std::size_t bytes = 0;
    GW_CUDA_CHECK(cuda::graph_exclusive_sum(nullptr, bytes, flags.get(), pos.get(), count, s));
    cuda::DeviceBuffer<std::byte> temp(bytes);
    GW_CUDA_CHECK(cuda::graph_exclusive_sum(temp.get(), bytes, flags.get(), pos.get(), count, s));
    Offset last_pos = 0;
    Offset last_flag = 0;
    cuda::copy_to_host(&last_pos, pos.get() + (count - 1), 1, s);
    cuda::copy_to_host(&last_flag, flags.get() + (count - 1), 1, s);
    const Offset total = last_pos + last_flag;
    graph.col_indices = DeviceArray<Index>(static_cast<std::size_t>(total), stream);
    graph.weights = DeviceArray<float>(weighted ? static_cast<std::size_t>(total) : 0, stream);
  }
  const Offset total = graph.num_edges();
  cuda::DeviceBuffer<Index> rows(static_cast<std::size_t>(total));
  GW_CUDA_CHECK(cuda::launch_scatter_edges(sorted_keys.get(),
                                           sorted_values.get(),
                                           flags.get(),
                                           pos.get(),
                                           count,
                                           rows.get(),
                                           graph.col_indices.data(),
                                           weighted ? graph.weights.data() : nullptr,
                                           s));
  GW_CUDA_CHECK(cuda::launch_row_offsets(rows.get(), total, n, graph.row_offsets.data(), s));
  GW_CUDA_CHECK(cudaStreamSynchronize(s));  // before the scratch buffers are freed
  return graph;
}

void append_bridge_keys(const std::vector<Bridge>& bridges,
                        cuda::DeviceBuffer<std::uint64_t>& keys,
                        cuda::DeviceBuffer<float>& values,
                        Offset at,
                        cudaStream_t stream) {
  if (bridges.empty()) return;
  std::vector<std::uint64_t> host_keys;
  std::vector<float> host_values;
  for (const Bridge& bridge : bridges) {
    const auto source = static_cast<std::uint64_t>(static_cast<std::uint32_t>(bridge.source));
    const auto target = static_cast<std::uint64_t>(static_cast<std::uint32_t>(bridge.target));
    host_keys.push_back((source << 32) | target);
    host_keys.push_back((target << 32) | source);
    host_values.push_back(bridge.length);
    host_values.push_back(bridge.length);
  }
  cuda::copy_to_device(keys.get() + at, host_keys.data(), host_keys.size(), stream);
  cuda::copy_to_device(values.get() + at, host_values.data(), host_values.size(), stream);
}

}  // namespace detail

DeviceCsrGraph DeviceCsrGraph::upload(const CsrGraphView& graph, const CudaStream& stream) {
  validate(graph, "graph");
  DeviceCsrGraph out;
  out.num_nodes = graph.num_nodes;
  out.row_offsets = DeviceArray<Offset>(graph.row_offsets, stream);
  out.col_indices = DeviceArray<Index>(graph.col_indices, stream);
  out.weights = DeviceArray<float>(graph.weights, stream);
  return out;
}

CsrGraph DeviceCsrGraph::download() const {
  return CsrGraph(num_nodes, row_offsets.download(), col_indices.download(), weights.download());
}

Components connected_components_cuda(const DeviceCsrGraph& graph) {
  const Index n = graph.num_nodes;
  cuda::DeviceGuard guard(graph.stream().device());
  const cudaStream_t s = cuda::stream_of(graph.stream());
  const detail::DeviceComponents device =
      detail::device_components(graph.row_offsets.data(), graph.col_indices.data(), 0, n, s);
  Components comps;
  comps.count = device.count;
  comps.labels.resize(static_cast<std::size_t>(n));
  cuda::copy_to_host(comps.labels.data(), device.labels.get(), comps.labels.size(), s);
  comps.sizes.assign(static_cast<std::size_t>(comps.count), 0);
  for (const Index label : comps.labels) ++comps.sizes[label];
  return comps;
}

namespace {

template <typename T>
StitchResult stitch_cuda_impl(const CsrGraphView& graph,
                              std::span<const T> points,
                              int d,
                              const CudaStream& stream) {
  const Index n = graph.num_nodes;
  GW_CHECK(d >= 1, "stitch_components_cuda: dimension must be >= 1, got " << d);
  GW_CHECK(points.size() == static_cast<std::size_t>(n) * d,
           "stitch_components_cuda: " << points.size() << " coordinates for " << n
                                      << " nodes of dimension " << d);
  cuda::DeviceGuard guard(stream.device());
  const cudaStream_t s = cuda::stream_of(stream);
  DeviceCsrGraph device = DeviceCsrGraph::upload(graph, stream);
  const detail::DeviceComponents comps =
      detail::device_components(device.row_offsets.data(), device.col_indices.data(), 0, n, s);
  if (comps.count <= 1) return {CsrGraph::copy_of(graph), {}};

  const std::vector<double> coords(points.begin(), points.end());
  cuda::DeviceBuffer<double> coords_device(coords.size());
  cuda::copy_to_device(coords_device.get(), coords.data(), coords.size(), s);
  StitchResult result;
  result.bridges = detail::device_stitch(coords_device.get(), d, comps, n, s);

  const Offset edges = graph.num_edges();
  const Offset count = edges + 2 * static_cast<Offset>(result.bridges.size());
  cuda::DeviceBuffer<std::uint64_t> keys(static_cast<std::size_t>(count));
  cuda::DeviceBuffer<float> values(static_cast<std::size_t>(count));
  GW_CUDA_CHECK(cuda::launch_csr_edge_keys(device.row_offsets.data(),
                                           device.col_indices.data(),
                                           device.has_weights() ? device.weights.data() : nullptr,
                                           n,
                                           keys.get(),
                                           values.get(),
                                           s));
  detail::append_bridge_keys(result.bridges, keys, values, edges, s);
  // Stable sort, no merging: parallel edges stay in CSR order, as build_csr(kKeepAll) keeps them.
  result.graph =
      detail::assemble_csr(stream, n, keys, values, count, /*keep_all=*/true, graph.has_weights())
          .download();
  return result;
}

}  // namespace

StitchResult stitch_components_cuda(const CsrGraphView& graph,
                                    std::span<const double> points,
                                    int d,
                                    const CudaStream& stream) {
  return stitch_cuda_impl(graph, points, d, stream);
}

StitchResult stitch_components_cuda(const CsrGraphView& graph,
                                    std::span<const float> points,
                                    int d,
                                    const CudaStream& stream) {
  return stitch_cuda_impl(graph, points, d, stream);
}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled(const char* what) {
  GW_THROW(ErrorCode::kNotCompiled,
           what << ": this gwalign was built without CUDA; rebuild with -DGWALIGN_ENABLE_CUDA=ON "
                   "or use the CPU functions of graph/knn.h and graph/components.h");
}
}  // namespace

DeviceCsrGraph DeviceCsrGraph::upload(const CsrGraphView&, const CudaStream&) {
  not_compiled("DeviceCsrGraph::upload");
}
CsrGraph DeviceCsrGraph::download() const { not_compiled("DeviceCsrGraph::download"); }
Components connected_components_cuda(const DeviceCsrGraph&) {
  not_compiled("connected_components_cuda");
}
StitchResult stitch_components_cuda(const CsrGraphView&,
                                    std::span<const double>,
                                    int,
                                    const CudaStream&) {
  not_compiled("stitch_components_cuda");
}
StitchResult stitch_components_cuda(const CsrGraphView&,
                                    std::span<const float>,
                                    int,
                                    const CudaStream&) {
  not_compiled("stitch_components_cuda");
}

#endif  // GW_HAS_CUDA

}  // namespace gw
