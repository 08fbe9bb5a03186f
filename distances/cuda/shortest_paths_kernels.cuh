// Host launchers of the device shortest-path kernels (shortest_paths_kernels.cu). Private to the
// distances module (cuda/*.cpp, CUDA builds only). All pointers are device memory and every launch
// is asynchronous on `stream`; each launcher returns the launch status (wrap in GW_CUDA_CHECK).
//
// The algorithm: frontier Bellman-Ford, one source per thread block. A round relaxes the edges of
// every node in the block's frontier (a group of `group` threads per node, its lanes over the
// node's edges): the candidate du + w (float32, rounded once) lowers dist[v] by an atomic minimum
// on the float's bits (nonnegative floats order as their bit patterns), and a node lowered in round
// r joins the next frontier once (a per-node round stamp). The rounds end when a frontier is empty.
// Every value stored is the float32 left-to-right sum along some path, and at the end dist[v] <=
// dist[u] + w holds for every edge, so dist[v] is the least such sum over all paths: the value
// Dijkstra computes with float32 sums (distances/shortest_paths.h), bit for bit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/types.h"

namespace gw::cuda {

// Threads per block: many sources at once (several blocks per multiprocessor), or one source
// (farthest-point picks) with the largest block.
inline constexpr int kSsspBatchThreads = 512;
inline constexpr int kSsspSingleThreads = 1024;

struct SsspArgs {
  // The graph, CSR (graph/csr_graph.h); weights == nullptr: every edge has length 1.
  const Offset* row_offsets = nullptr;
  const Index* cols = nullptr;
  const float* weights = nullptr;
  Index n = 0;
  // Batch mode: sources[s] for s < num_sources, block b runs s = b, b + gridDim.x, ...; row s is
  // rows[s * n .. s * n + n).
  const Index* sources = nullptr;
  Index num_sources = 0;
  // Single mode (source_key != nullptr, one block): the source is node ~(low 32 bits of
  // *source_key) (a farthest-point key, launch_farthest) and its row is rows[0 .. n).
  const unsigned long long* source_key = nullptr;
  float* rows = nullptr;
  // true: the row starts at +inf (a plain run). false: the row keeps its values and only strict
  // improvements propagate: a run from c into m = min over earlier sources leaves min(m, dist(c,
  // .)) (a node c does not improve cannot pass an improvement on), the pruned run of farthest-point
  // sampling.
  bool init_rows = true;
  // Non-null: picked[source] = 1 at the start of the run.
  std::uint8_t* picked = nullptr;
  // Per block: queues[b * 2n .. b * 2n + 2n) (two frontiers) and stamps[b * n .. b * n + n), all
  // stamps < first_round + 1 at the launch (e.g. -1 and first_round = 0). A block uses at most
  // (its sources) x (n + 2) rounds.
  Index* queues = nullptr;
  int* stamps = nullptr;
  int first_round = 0;
};

// Launches `blocks` blocks of `threads` threads (a multiple of `group`, at most 1024); group is 4,
// 8, 16 or 32 threads per frontier node.
cudaError_t launch_sssp(
    const SsspArgs& args, int blocks, int threads, int group, cudaStream_t stream);

// Resident blocks per multiprocessor of the kernel for (threads, group), from the occupancy API.
cudaError_t sssp_blocks_per_sm(int threads, int group, int* blocks);

// *key = max over unpicked v of (bits(min_distance[v]) << 32) | (0xffffffff - v): the farthest
// unpicked node, ties to the smallest id (the CPU's first strict maximum); 0 when every node is
// picked. Zeroes *key first.
cudaError_t launch_farthest(const float* min_distance,
                            const std::uint8_t* picked,
                            Index n,
                            unsigned long long* key,
                            cudaStream_t stream);

// values[i] = value, i < count.
cudaError_t launch_fill(float* values, std::int64_t count, float value, cudaStream_t stream);

}  // namespace gw::cuda
