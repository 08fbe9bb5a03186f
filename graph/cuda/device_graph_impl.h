// Private to the graph module, CUDA builds only: the device pipeline pieces that cuda_graph.cpp
// and cuda_knn.cpp share (components, stitching, CSR assembly from edge keys).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "core/cuda/cuda_util.h"
#include "core/types.h"
#include "graph/components.h"
#include "graph/cuda_graph.h"

namespace gw::detail {

// Component labels in device memory (numbered by smallest node) and their count.
struct DeviceComponents {
  cuda::DeviceBuffer<Index> labels;  // n
  Index count = 0;
};

// Weakly connected components of the edges i -> cols[e] (CSR rows, or n x stride lists when
// row_offsets is nullptr; see launch_union_edges). Waits for the stream (the count is read back).
DeviceComponents device_components(
    const Offset* row_offsets, const Index* cols, int stride, Index n, cudaStream_t stream);

// The bridges of stitch_components (graph/components.h) for points (n x d float64, device) with
// the given component labels, in the order they are added; empty when count <= 1.
std::vector<Bridge> device_stitch(
    const double* points, int d, const DeviceComponents& components, Index n, cudaStream_t stream);

// Edge keys (row << 32 | column) with float32 values, `count` of them, to a CSR graph: stable
// sort by key, then (unless keep_all) one edge per key, the first copy's value. With weighted ==
// false the graph has no weights. The key buffers are consumed (used as scratch).
DeviceCsrGraph assemble_csr(const CudaStream& stream,
                            Index n,
                            cuda::DeviceBuffer<std::uint64_t>& keys,
                            cuda::DeviceBuffer<float>& values,
                            Offset count,
                            bool keep_all,
                            bool weighted);

// Writes the keys and values of both directions of every bridge at keys[at ..), values[at ..)
// (2 per bridge; weights = bridge lengths).
void append_bridge_keys(const std::vector<Bridge>& bridges,
                        cuda::DeviceBuffer<std::uint64_t>& keys,
                        cuda::DeviceBuffer<float>& values,
                        Offset at,
                        cudaStream_t stream);

}  // namespace gw::detail
