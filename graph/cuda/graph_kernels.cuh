// Host launchers of the graph-structure kernels (graph_kernels.cu): union-find components, the
// stitching steps, and CSR assembly from 64-bit (row, column) keys. Private to the graph module
// (cuda/*.cpp, CUDA builds only). All pointers are device memory and all launches asynchronous on
// `stream`; every launcher returns the launch status (wrap in GW_CUDA_CHECK). Functions taking
// (temp, temp_bytes) wrap CUB: with temp == nullptr they only set temp_bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "core/types.h"

namespace gw::cuda {

// ---- Components -------------------------------------------------------------------------------

// parent[i] = i, i < n.
cudaError_t launch_init_parents(Index* parent, Index n, cudaStream_t stream);

// Unions the endpoints of every edge i -> cols[e]: e in [row_offsets[i], row_offsets[i + 1]), or,
// with row_offsets == nullptr, e in [i * stride, (i + 1) * stride) (an n x stride kNN list).
// Lock-free: a root is hooked under the smaller root by compare-and-swap, so every root stays the
// smallest node of its set.
cudaError_t launch_union_edges(const Offset* row_offsets,
                               const Index* cols,
                               int stride,
                               Index n,
                               Index* parent,
                               cudaStream_t stream);

// root[i] = the root of i (after the unions have finished; a read-only walk), and root_flags[i] =
// 1 if i is a root, else 0.
cudaError_t launch_flatten(
    const Index* parent, Index n, Index* root, Index* root_flags, cudaStream_t stream);

// out[i] = in[0] + ... + in[i - 1], i < count (cub::DeviceScan::ExclusiveSum).
cudaError_t graph_exclusive_sum(void* temp,
                                std::size_t& temp_bytes,
                                const Index* in,
                                Index* out,
                                Index count,
                                cudaStream_t stream);
cudaError_t graph_exclusive_sum(void* temp,
                                std::size_t& temp_bytes,
                                const Offset* in,
                                Offset* out,
                                Offset count,
                                cudaStream_t stream);

// labels[i] = rank[root[i]]: components numbered in the order of their smallest node (rank = the
// exclusive sum of the root flags).
cudaError_t launch_component_labels(
    const Index* root, const Index* rank, Index n, Index* labels, cudaStream_t stream);

// ---- Stitching --------------------------------------------------------------------------------

// Sorts (labels[i], i) by label: members[] lists the nodes of component 0, then 1, ... (ascending
// within each; cub::DeviceRadixSort, stable). keys_out is scratch of n entries. label_bits: bits
// needed for the largest label.
cudaError_t sort_members(void* temp,
                         std::size_t& temp_bytes,
                         const Index* labels,
                         const Index* iota,
                         Index* keys_out,
                         Index* members,
                         Index n,
                         int label_bits,
                         cudaStream_t stream);

// iota[i] = i, i < n.
cudaError_t launch_iota(Index* iota, Index n, cudaStream_t stream);

// member_offsets[c] = first position of component c in the sorted keys, member_offsets[count] =
// n (every label in [0, count) occurs).
cudaError_t launch_member_offsets(
    const Index* sorted_labels, Index n, Index count, Offset* member_offsets, cudaStream_t stream);

// The state of the growing main component A.
struct StitchState {
  std::uint8_t* in_main = nullptr;  // n: 1 for nodes of A
  double* best = nullptr;           // n: min over a in A of |x_a - x_v|^2 (v outside A)
  Index* best_src = nullptr;        // n: the smallest a reaching best[v]
};

// best = +inf, best_src = -1, in_main = 0 for every node.
cudaError_t launch_stitch_init(StitchState state, Index n, cudaStream_t stream);

// Absorbs the members [begin, end) of `members` into A: marks them, then, a warp per outside node
// v, lowers (best[v], best_src[v]) to the closest member (exact float64 squared distances, the
// CPU's operations; ties to the smaller member, as the CPU's ascending scan with strict
// improvement). points: n x d float64.
cudaError_t launch_absorb(const double* points,
                          int d,
                          const Index* members,
                          Offset begin,
                          Offset end,
                          Index n,
                          StitchState state,
                          cudaStream_t stream);

// The next bridge: the outside node with the smallest best (ties to the smallest node, as the
// CPU's ascending scan with strict improvement), its source, its label and its squared length.
struct BridgeChoice {
  unsigned long long best_bits;  // the float64 bits of the smallest best (nonnegative: monotone)
  Index target;
  Index source;
  Index label;
  double length2;
};

// Fills *choice (device memory) from the state: three passes (min of the bits, min node with
// that value, gather). `labels`: n component labels.
cudaError_t launch_choose_bridge(
    StitchState state, const Index* labels, Index n, BridgeChoice* choice, cudaStream_t stream);

// ---- CSR assembly -----------------------------------------------------------------------------

// keys[2e] = (i << 32) | j and keys[2e + 1] = (j << 32) | i with values[2e] = values[2e + 1] =
// distances[e], for the kNN list entry e = i * k + t (j = indices[e]), e < n k.
cudaError_t launch_knn_edge_keys(const Index* indices,
                                 const float* distances,
                                 Index n,
                                 int k,
                                 std::uint64_t* keys,
                                 float* values,
                                 cudaStream_t stream);

// keys[e] = (row(e) << 32) | cols[e], values[e] = weights[e] (1 when weights == nullptr), for the
// E edges of a CSR graph in CSR order (a thread per row).
cudaError_t launch_csr_edge_keys(const Offset* row_offsets,
                                 const Index* cols,
                                 const float* weights,
                                 Index n,
                                 std::uint64_t* keys,
                                 float* values,
                                 cudaStream_t stream);

// Stable sort of (keys, values) by key (cub::DeviceRadixSort over bits [0, key_bits)).
cudaError_t sort_edge_keys(void* temp,
                           std::size_t& temp_bytes,
                           const std::uint64_t* keys_in,
                           std::uint64_t* keys_out,
                           const float* values_in,
                           float* values_out,
                           Offset count,
                           int key_bits,
                           cudaStream_t stream);

// flags[p] = 1 if p == 0 or keys[p] != keys[p - 1] (the first copy of every key), else 0; with
// keep_all every flag is 1. p < count.
cudaError_t launch_first_key_flags(
    const std::uint64_t* keys, Offset count, bool keep_all, Offset* flags, cudaStream_t stream);

// For flagged p: cols[pos[p]] = low 32 bits of keys[p], weights[pos[p]] = values[p] (weights may
// be nullptr), rows[pos[p]] = high 32 bits.
cudaError_t launch_scatter_edges(const std::uint64_t* keys,
                                 const float* values,
                                 const Offset* flags,
                                 const Offset* pos,
                                 Offset count,
                                 Index* rows,
                                 Index* cols,
                                 float* weights,
                                 cudaStream_t stream);

// row_offsets[r] = the first position p with rows[p] >= r (binary search), r <= n; rows ascending,
// num_edges entries.
cudaError_t launch_row_offsets(
    const Index* rows, Offset num_edges, Index n, Offset* row_offsets, cudaStream_t stream);

}  // namespace gw::cuda
