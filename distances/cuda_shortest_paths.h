// Shortest paths, farthest-point landmarks and the precomputed (all-pairs) matrix on a CUDA device.
//
// The kernel (distances/cuda/shortest_paths_kernels.cuh) is frontier Bellman-Ford with one source
// per thread block: many sources run at once, one per block, each block looping over its share.
// Lengths are accumulated in float32 exactly as the CPU's Dijkstra accumulates them (one rounded
// addition per edge), and both return, for every node, the least such sum over all paths, so the
// rows are the CPU's bit for bit (shortest_paths.h: direction, +inf for unreachable nodes,
// unweighted edges count 1). Time per source: (rounds = the most edges on a shortest path, + 1)
// block-wide steps, each relaxing the current frontier's edges; work O(E x (re-relaxations, a small
// factor on kNN graphs)).
//
// Farthest-point sampling (farthest_point_sample_cuda) keeps the CPU's rules (first pick
// Rng(seed).uniform_index(n) or options.start; each next pick the unpicked node of largest
// min-distance, ties to the smallest id), so the picks are the CPU's. Each pick runs one pruned
// search that only follows nodes it brings closer than every earlier pick (their Voronoi cell),
// enqueued back to back with the device-side argmax: no host round trip per pick. The full rows of
// the picks (the landmark coordinates) are then one batched run, all landmarks at once.
//
// Memory: the output rows plus, per concurrent block, 12 n bytes of frontiers and stamps (the
// number of blocks is capped so that this stays under a quarter of the free device memory).
//
// Graphs: a DeviceCsrGraph (graph/cuda_graph.h) must be valid (DeviceCsrGraph::upload validates;
// knn_graph_device builds valid graphs). Functions taking a host CsrGraphView validate it
// (kBadData) and upload it. Work is enqueued on the graph's stream (or the given one); functions
// returning host data wait for it. Thread-safety: one host thread at a time per stream. Without
// CUDA every function throws ErrorCode::kNotCompiled.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "core/cuda_stream.h"
#include "core/device_array.h"
#include "core/types.h"
#include "distances/landmark.h"
#include "distances/precomputed.h"
#include "graph/csr_graph.h"
#include "graph/cuda_graph.h"

namespace gw {

// Row-major |sources| x n block in device memory: rows[k * n + v] = length of the shortest path
// sources[k] -> v (+inf if unreachable). Sources may repeat; kInvalidArgument names the first one
// outside [0, n). `rows` must hold |sources| x n floats on the graph's device; the work runs on
// graph.stream() and the call returns when the rows are complete.
void shortest_path_rows_device(const DeviceCsrGraph& graph,
                               std::span<const Index> sources,
                               float* rows);

// The same rows in a new device array (|sources| x n).
DeviceArray<float> shortest_path_rows_device(const DeviceCsrGraph& graph,
                                             std::span<const Index> sources);

// shortest_path_rows (distances/shortest_paths.h) on the device: uploads and validates the graph,
// returns the host rows (|sources| x n, row-major).
std::vector<float> shortest_path_rows_cuda(const CsrGraphView& graph,
                                           std::span<const Index> sources,
                                           const CudaStream& stream);

// All pairs: the n x n matrix D[s * n + v] in device memory (n^2 x 4 bytes: n = 45,000 is 8.1 GB).
DeviceArray<float> all_pairs_shortest_paths_device(const DeviceCsrGraph& graph);

// all_pairs_shortest_paths (distances/shortest_paths.h) on the device, returned on the host.
std::vector<float> all_pairs_shortest_paths_cuda(const CsrGraphView& graph,
                                                 const CudaStream& stream);

// farthest_point_sample (distances/landmark.h) on the device: the same picks, radii and minima
// (and, with keep_rows, the same count x n rows). Same checks: kInvalidArgument for count < 1, an
// empty graph, or a start outside [0, n).
FarthestPointSample farthest_point_sample_cuda(const DeviceCsrGraph& graph,
                                               Index count,
                                               const FarthestPointOptions& options = {});

// Farthest-point landmarks with their rows kept on the device: sample.rows is empty and
// rows[l * n + v] = dist(sample.nodes[l] -> v) (count x n, row-major) is a device array.
struct DeviceLandmarkRows {
  FarthestPointSample sample;
  DeviceArray<float> rows;
};
DeviceLandmarkRows landmark_rows_device(const DeviceCsrGraph& graph,
                                        Index count,
                                        const FarthestPointOptions& options = {});

// make_landmark_provider (distances/landmark.h) with the landmark selection and the d shortest-path
// rows computed on the device: the same landmarks and coordinates (bit for bit), hence the same
// provider. Its queries (distances_to) run on the CPU as before. options.threads: CPU threads of
// the setup and of the queries.
std::unique_ptr<LandmarkProvider> make_landmark_provider_cuda(const DeviceCsrGraph& graph,
                                                              const LandmarkOptions& options = {});

// make_precomputed_provider (distances/precomputed.h) with the all-pairs matrix computed on the
// device and then copied to the host. Same max_bytes check (kInvalidArgument).
std::unique_ptr<PrecomputedProvider> make_precomputed_provider_cuda(
    const DeviceCsrGraph& graph, const PrecomputedOptions& options = {});

}  // namespace gw
