// Graph construction on a CUDA device: CSR graphs in device memory, the exact kNN graph of a point
// cloud, connected components and component stitching. The results equal the CPU functions'
// (graph/knn.h, graph/components.h) exactly: same neighbours (ties to the smaller index), same
// float32 weights bit for bit, same bridges, same CSR arrays.
//
// kNN search (knn_search_cuda, knn_graph_device): exact brute force in one fused kernel. Blocks of
// 128 queries stream the points in tiles of 64 through shared memory; each thread accumulates the
// float32 squared distances of its query to the tile from centred coordinates (coordinate
// differences, not the |x|^2 + |y|^2 - 2 x.y form, so there is no cancellation), and a pair whose
// float32 distance is within a proven rounding bound of the query's current k-th best is
// recomputed exactly, in float64 with the CPU's sequence of operations (no fused multiply-adds),
// and ranked by (distance, index). The bound covers the float32 rounding of the centred
// coordinates and of the sum, so every point that can be among the k best reaches the exact test;
// the k best are therefore the CPU's, whatever the input (inputs so large that float32 squares
// could overflow turn the filter off: every pair is then evaluated in float64). Work: n^2 d fused
// multiply-adds in float32 plus the float64 re-ranking of a few candidates per query (about
// k log(n / k) on random orders; a tile scan starts next to the block's own rows, so inputs stored
// in spatial order need fewer). Memory: n d (4 + 8) bytes of coordinates plus n k 12 bytes of
// running top-k lists, never O(n^2).
//
// Graph: both directions of every kNN edge (and of every bridge) are sorted as 64-bit (row, column)
// keys (cub radix sort) and duplicates merged; a mutual pair's two copies carry the same float32
// distance, so "symmetrize by max" is that value (the CPU's rule). Components: lock-free
// union-find (roots hooked under the smaller root, so every root is its set's smallest node;
// labels numbered by root, as on the CPU). Stitching (KnnGraphOptions::connect): Prim's rule over
// components exactly as graph/components.h states it, one device pass per absorbed component (a
// warp per outside node, exact float64 distances to the component's members), then an argmin with
// the CPU's tie rules; the host drives one step per bridge.
//
// Streams: every function enqueues its work on the given stream (for a DeviceCsrGraph, the stream
// of its arrays) and, where it returns host data, waits for it. Thread-safety: one host thread at
// a time per stream. In a build without CUDA every function throws ErrorCode::kNotCompiled; with
// CUDA but no device, CudaStream::create already throws kInvalidArgument.
#pragma once

#include <span>
#include <vector>

#include "core/cuda_stream.h"
#include "core/device_array.h"
#include "core/types.h"
#include "graph/components.h"
#include "graph/csr_graph.h"
#include "graph/knn.h"

namespace gw {

// A CSR graph in device memory, with CsrGraph's layout (graph/csr_graph.h): row_offsets int64
// [n + 1], col_indices int32 [E], weights float32 [E] or empty (size 0) for an unweighted graph.
// Columns are sorted within each row in every graph the functions here build. All three arrays
// live on one stream (row_offsets.stream()). Move-only; owns its arrays.
struct DeviceCsrGraph {
  Index num_nodes = 0;
  DeviceArray<Offset> row_offsets;
  DeviceArray<Index> col_indices;
  DeviceArray<float> weights;

  Offset num_edges() const { return static_cast<Offset>(col_indices.size()); }
  bool has_weights() const { return weights.size() != 0; }
  const CudaStream& stream() const { return row_offsets.stream(); }

  // A device copy of `graph` after validate(graph) (kBadData naming the problem).
  static DeviceCsrGraph upload(const CsrGraphView& graph, const CudaStream& stream);
  // The host copy (waits for the stream).
  CsrGraph download() const;
};

// knn_search (graph/knn.h) on the device: the same n x k neighbour indices and float32 distances,
// ordered by (distance, index). Same argument checks and errors as knn_search (kInvalidArgument
// for n < 1, d < 1, k < 1, a span of the wrong size; kBadData for a NaN or Inf coordinate); a k >=
// n is clipped to n - 1. Returns after the results are on the host.
KnnResult knn_search_cuda(
    std::span<const float> points, Index n, int d, int k, const CudaStream& stream);
KnnResult knn_search_cuda(
    std::span<const double> points, Index n, int d, int k, const CudaStream& stream);

// knn_graph (graph/knn.h) on the device, result in device memory: the undirected kNN graph
// (symmetrized by max, both directions stored, columns sorted, weight = Euclidean distance) and,
// with options.connect, the bridges of stitch_components. Equal to knn_graph(points, n, d,
// options) array for array. options.algorithm must be kAuto or kBruteForce (the device search is
// exact brute force; kKdTree throws kInvalidArgument). Memory on the device, at the peak (the
// edge sort): about 48 n k bytes plus the coordinates.
DeviceCsrGraph knn_graph_device(std::span<const float> points,
                                Index n,
                                int d,
                                const KnnGraphOptions& options,
                                const CudaStream& stream);
DeviceCsrGraph knn_graph_device(std::span<const double> points,
                                Index n,
                                int d,
                                const KnnGraphOptions& options,
                                const CudaStream& stream);

// knn_graph_device(...).download(): the host CsrGraph, equal to knn_graph's.
CsrGraph knn_graph_cuda(std::span<const float> points,
                        Index n,
                        int d,
                        const KnnGraphOptions& options,
                        const CudaStream& stream);
CsrGraph knn_graph_cuda(std::span<const double> points,
                        Index n,
                        int d,
                        const KnnGraphOptions& options,
                        const CudaStream& stream);

// connected_components (graph/components.h) of a device graph: weakly connected components,
// numbered in the order of their smallest node. Returns the host result (waits for the stream).
Components connected_components_cuda(const DeviceCsrGraph& graph);

// stitch_components (graph/components.h) on the device, for any graph over `points` (n x d,
// row-major, n = graph.num_nodes): the same bridges in the same order and the same rebuilt graph
// (parallel edges kept in CSR order, bridges inserted by column). Validates the graph (kBadData)
// and the sizes (kInvalidArgument). Returns after the results are on the host.
StitchResult stitch_components_cuda(const CsrGraphView& graph,
                                    std::span<const double> points,
                                    int d,
                                    const CudaStream& stream);
StitchResult stitch_components_cuda(const CsrGraphView& graph,
                                    std::span<const float> points,
                                    int d,
                                    const CudaStream& stream);

}  // namespace gw
