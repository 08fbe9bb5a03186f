// Union-find components, stitching steps and CSR assembly on the device (graph_kernels.cuh).
#include <math_constants.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "graph/cuda/graph_kernels.cuh"

namespace gw::cuda {

namespace {

constexpr int kThreads = 256;
// Grid-stride loops everywhere; the grid is capped well above the 65,535 blocks that y and z allow
// (x allows 2^31 - 1), so large inputs launch more than 65,535 blocks in x.
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 24;

unsigned blocks_for(std::int64_t count, int threads = kThreads) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((count + threads - 1) / threads, 1, kMaxBlocks));
}

__device__ std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ std::int64_t grid_threads() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// ---- union-find ----

// The root of x, halving the path on the way: parent[x] is replaced by its grandparent, an
// ancestor whatever other threads do concurrently (sets only merge, and only roots are ever
// re-parented, by compare-and-swap), so the race between halving writes is benign. Loads are
// volatile: other blocks change parents while this runs.
__device__ Index find_root(Index* parent, Index x) {
  volatile Index* p = parent;
  while (true) {
    const Index up = p[x];
    if (up == x) return x;
    const Index top = p[up];
    if (top == up) return up;
    p[x] = top;
    x = top;
  }
}

__device__ void unite(Index* parent, Index a, Index b) {
  while (true) {
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a == b) return;
    if (a > b) {
      const Index t = a;
      a = b;
      b = t;
    }
    // Hook the larger root b under a; if b stopped being a root meanwhile, retry from its parent.
    const Index old = atomicCAS(parent + b, b, a);
    if (old == b) return;
    b = old;
  }
}

__global__ void init_parents_kernel(Index* parent, Index n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    parent[i] = static_cast<Index>(i);
  }
}

__global__ void union_edges_kernel(
    const Offset* row_offsets, const Index* cols, int stride, Index n, Index* parent) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const Offset begin = row_offsets != nullptr ? row_offsets[i] : i * stride;
    const Offset end = row_offsets != nullptr ? row_offsets[i + 1] : begin + stride;
    for (Offset e = begin; e < end; ++e) unite(parent, static_cast<Index>(i), cols[e]);
  }
}

// Read-only root walk: no halving here, so no thread can overwrite a root another one stored.
__global__ void flatten_kernel(const Index* parent, Index n, Index* root, Index* root_flags) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    Index x = static_cast<Index>(i);
    while (parent[x] != x) x = parent[x];
    root[i] = x;
    root_flags[i] = x == i ? 1 : 0;
  }
}

__global__ void component_labels_kernel(const Index* root,
                                        const Index* rank,
                                        Index n,
                                        Index* labels) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) labels[i] = rank[root[i]];
}

// ---- stitching ----

__global__ void iota_kernel(Index* iota, Index n) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    iota[i] = static_cast<Index>(i);
  }
}

__global__ void member_offsets_kernel(const Index* sorted, Index n, Index count, Offset* offsets) {
  for (std::int64_t p = global_thread(); p < n; p += grid_threads()) {
    if (p == 0 || sorted[p] != sorted[p - 1]) offsets[sorted[p]] = p;
    if (p == n - 1) offsets[count] = n;
  }
}

__global__ void stitch_init_kernel(StitchState s, Index n) {
  for (std::int64_t v = global_thread(); v < n; v += grid_threads()) {
    s.in_main[v] = 0;
    s.best[v] = CUDART_INF;
    s.best_src[v] = -1;
  }
}

__global__ void mark_members_kernel(const Index* members,
                                    Offset begin,
                                    Offset end,
                                    std::uint8_t* in_main) {
  for (std::int64_t p = begin + global_thread(); p < end; p += grid_threads()) {
    in_main[members[p]] = 1;
  }
}

// (d, a) < (bd, bs) lexicographically: the CPU's "dist < best || (dist == best && a < src)".
__device__ bool closer(double d, Index a, double bd, Index bs) {
  return d < bd || (d == bd && a < bs);
}

// graph/components.cpp's squared_distance: float64 differences and a running sum from 0, each
// operation rounded on its own (never fused), so the value is bitwise the CPU's.
__device__ double squared_distance(const double* x, Index a, Index b, int d) {
  const double* pa = x + static_cast<std::int64_t>(a) * d;
  const double* pb = x + static_cast<std::int64_t>(b) * d;
  double sum = 0.0;
  for (int t = 0; t < d; ++t) {
    const double diff = __dsub_rn(pa[t], pb[t]);
    sum = __dadd_rn(sum, __dmul_rn(diff, diff));
  }
  return sum;
}

// A warp per outside node v; its lanes split the members, then a shuffle reduction.
__global__ void absorb_kernel(const double* x,
                              int d,
                              const Index* members,
                              Offset begin,
                              Offset end,
                              Index n,
                              StitchState s) {
  const int lane = threadIdx.x & 31;
  const std::int64_t warps = grid_threads() / 32;
  for (std::int64_t v = global_thread() / 32; v < n; v += warps) {
    if (s.in_main[v]) continue;  // the same v for the whole warp: no divergence
    double bd = CUDART_INF;
    Index bs = INT_MAX;
    for (Offset p = begin + lane; p < end; p += 32) {
      const Index a = members[p];
      const double dist = squared_distance(x, a, static_cast<Index>(v), d);
      if (closer(dist, a, bd, bs)) {
        bd = dist;
        bs = a;
      }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
      const double od = __shfl_down_sync(0xffffffffu, bd, offset);
      const Index os = __shfl_down_sync(0xffffffffu, bs, offset);
      if (closer(od, os, bd, bs)) {
        bd = od;
        bs = os;
      }
    }
    if (lane == 0 && closer(bd, bs, s.best[v], s.best_src[v])) {
      s.best[v] = bd;
      s.best_src[v] = bs;
    }
  }
}

__global__ void choice_init_kernel(BridgeChoice* choice) {
  choice->best_bits = ~0ull;
  choice->target = INT_MAX;
  choice->source = -1;
  choice->label = -1;
  choice->length2 = CUDART_INF;
}

__device__ unsigned long long warp_min(unsigned long long value) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    value = min(value, __shfl_down_sync(0xffffffffu, value, offset));
  }
  return value;
}

// Nonnegative float64 values order as their bit patterns.
__global__ void min_best_kernel(StitchState s, Index n, BridgeChoice* choice) {
  unsigned long long local = ~0ull;
  for (std::int64_t v = global_thread(); v < n; v += grid_threads()) {
    if (!s.in_main[v]) {
      local = min(local, static_cast<unsigned long long>(__double_as_longlong(s.best[v])));
    }
  }
  local = warp_min(local);
  if ((threadIdx.x & 31) == 0 && local != ~0ull) atomicMin(&choice->best_bits, local);
}

__global__ void argmin_best_kernel(StitchState s, Index n, BridgeChoice* choice) {
  const unsigned long long target_bits = choice->best_bits;
  unsigned long long local = ~0ull;
  for (std::int64_t v = global_thread(); v < n; v += grid_threads()) {
    if (!s.in_main[v] &&
        static_cast<unsigned long long>(__double_as_longlong(s.best[v])) == target_bits) {
      local = min(local, static_cast<unsigned long long>(v));
    }
  }
  local = warp_min(local);
  if ((threadIdx.x & 31) == 0 && local != ~0ull) {
    atomicMin(&choice->target, static_cast<Index>(local));
  }
}

__global__ void gather_choice_kernel(StitchState s, const Index* labels, BridgeChoice* choice) {
  const Index t = choice->target;
  if (t == INT_MAX) return;  // no outside node: the host checks
  choice->source = s.best_src[t];
  choice->label = labels[t];
  choice->length2 = s.best[t];
}

// ---- CSR assembly ----

__global__ void knn_edge_keys_kernel(const Index* indices,
                                     const float* distances,
                                     Index n,
                                     int k,
                                     std::uint64_t* keys,
                                     float* values) {
  const std::int64_t count = static_cast<std::int64_t>(n) * k;
  for (std::int64_t e = global_thread(); e < count; e += grid_threads()) {
    const std::uint64_t i = static_cast<std::uint64_t>(e / k);
    const std::uint64_t j = static_cast<std::uint32_t>(indices[e]);
    keys[2 * e] = (i << 32) | j;
    keys[2 * e + 1] = (j << 32) | i;
    values[2 * e] = distances[e];
    values[2 * e + 1] = distances[e];
  }
}

__global__ void csr_edge_keys_kernel(const Offset* row_offsets,
                                     const Index* cols,
                                     const float* weights,
                                     Index n,
                                     std::uint64_t* keys,
                                     float* values) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) {
    const std::uint64_t row = static_cast<std::uint64_t>(i) << 32;
    for (Offset e = row_offsets[i]; e < row_offsets[i + 1]; ++e) {
      keys[e] = row | static_cast<std::uint32_t>(cols[e]);
      values[e] = weights != nullptr ? weights[e] : 1.0f;
    }
  }
}

__global__ void first_key_flags_kernel(const std::uint64_t* keys,
                                       Offset count,
                                       bool keep_all,
                                       Offset* flags) {
  for (std::int64_t p = global_thread(); p < count; p += grid_threads()) {
    flags[p] = (keep_all || p == 0 || keys[p] != keys[p - 1]) ? 1 : 0;
  }
}

__global__ void scatter_edges_kernel(const std::uint64_t* keys,
                                     const float* values,
                                     const Offset* flags,
                                     const Offset* pos,
                                     Offset count,
                                     Index* rows,
                                     Index* cols,
                                     float* weights) {
  for (std::int64_t p = global_thread(); p < count; p += grid_threads()) {
    if (!flags[p]) continue;
    const Offset at = pos[p];
    rows[at] = static_cast<Index>(keys[p] >> 32);
    cols[at] = static_cast<Index>(keys[p] & 0xffffffffu);
    if (weights != nullptr) weights[at] = values[p];
  }
}

__global__ void row_offsets_kernel(const Index* rows, Offset num_edges, Index n, Offset* offsets) {
  for (std::int64_t r = global_thread(); r <= n; r += grid_threads()) {
    Offset lo = 0;
    Offset hi = num_edges;
    while (lo < hi) {
      const Offset mid = lo + (hi - lo) / 2;
      if (rows[mid] < r) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    offsets[r] = lo;
  }
}

}  // namespace

cudaError_t launch_init_parents(Index* parent, Index n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  init_parents_kernel<<<blocks_for(n), kThreads, 0, stream>>>(parent, n);
  return cudaGetLastError();
}

cudaError_t launch_union_edges(const Offset* row_offsets,
                               const Index* cols,
                               int stride,
                               Index n,
                               Index* parent,
                               cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  union_edges_kernel<<<blocks_for(n), kThreads, 0, stream>>>(row_offsets, cols, stride, n, parent);
  return cudaGetLastError();
}

cudaError_t launch_flatten(
    const Index* parent, Index n, Index* root, Index* root_flags, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  flatten_kernel<<<blocks_for(n), kThreads, 0, stream>>>(parent, n, root, root_flags);
  return cudaGetLastError();
}

cudaError_t graph_exclusive_sum(void* temp,
                                std::size_t& temp_bytes,
                                const Index* in,
                                Index* out,
                                Index count,
                                cudaStream_t stream) {
  return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, count, stream);
}

cudaError_t graph_exclusive_sum(void* temp,
                                std::size_t& temp_bytes,
                                const Offset* in,
                                Offset* out,
                                Offset count,
                                cudaStream_t stream) {
  return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, count, stream);
}

cudaError_t launch_component_labels(
    const Index* root, const Index* rank, Index n, Index* labels, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  component_labels_kernel<<<blocks_for(n), kThreads, 0, stream>>>(root, rank, n, labels);
  return cudaGetLastError();
}

cudaError_t sort_members(void* temp,
                         std::size_t& temp_bytes,
                         const Index* labels,
                         const Index* iota,
                         Index* keys_out,
                         Index* members,
                         Index n,
                         int label_bits,
                         cudaStream_t stream) {
  // Labels are nonnegative: sorted as unsigned words over their low label_bits bits.
  return cub::DeviceRadixSort::SortPairs(temp,
                                         temp_bytes,
                                         reinterpret_cast<const std::uint32_t*>(labels),
                                         reinterpret_cast<std::uint32_t*>(keys_out),
                                         iota,
                                         members,
                                         n,
                                         0,
                                         std::max(label_bits, 1),
                                         stream);
}

cudaError_t launch_iota(Index* iota, Index n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  iota_kernel<<<blocks_for(n), kThreads, 0, stream>>>(iota, n);
  return cudaGetLastError();
}

cudaError_t launch_member_offsets(
    const Index* sorted_labels, Index n, Index count, Offset* member_offsets, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  member_offsets_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      sorted_labels, n, count, member_offsets);
  return cudaGetLastError();
}

cudaError_t launch_stitch_init(StitchState state, Index n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  stitch_init_kernel<<<blocks_for(n), kThreads, 0, stream>>>(state, n);
  return cudaGetLastError();
}

cudaError_t launch_absorb(const double* points,
                          int d,
                          const Index* members,
                          Offset begin,
                          Offset end,
                          Index n,
                          StitchState state,
                          cudaStream_t stream) {
  if (n <= 0 || end <= begin) return cudaSuccess;
  mark_members_kernel<<<blocks_for(end - begin), kThreads, 0, stream>>>(
      members, begin, end, state.in_main);
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) return status;
  absorb_kernel<<<blocks_for(static_cast<std::int64_t>(n) * 32), kThreads, 0, stream>>>(
      points, d, members, begin, end, n, state);
  return cudaGetLastError();
}

cudaError_t launch_choose_bridge(
    StitchState state, const Index* labels, Index n, BridgeChoice* choice, cudaStream_t stream) {
  choice_init_kernel<<<1, 1, 0, stream>>>(choice);
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess || n <= 0) return status;
  min_best_kernel<<<blocks_for(n), kThreads, 0, stream>>>(state, n, choice);
  if ((status = cudaGetLastError()) != cudaSuccess) return status;
  argmin_best_kernel<<<blocks_for(n), kThreads, 0, stream>>>(state, n, choice);
  if ((status = cudaGetLastError()) != cudaSuccess) return status;
  gather_choice_kernel<<<1, 1, 0, stream>>>(state, labels, choice);
  return cudaGetLastError();
}

cudaError_t launch_knn_edge_keys(const Index* indices,
                                 const float* distances,
                                 Index n,
                                 int k,
                                 std::uint64_t* keys,
                                 float* values,
                                 cudaStream_t stream) {
  const std::int64_t count = static_cast<std::int64_t>(n) * k;
  if (count <= 0) return cudaSuccess;
  knn_edge_keys_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      indices, distances, n, k, keys, values);
  return cudaGetLastError();
}

cudaError_t launch_csr_edge_keys(const Offset* row_offsets,
                                 const Index* cols,
                                 const float* weights,
                                 Index n,
                                 std::uint64_t* keys,
                                 float* values,
                                 cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  csr_edge_keys_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
      row_offsets, cols, weights, n, keys, values);
  return cudaGetLastError();
}

cudaError_t sort_edge_keys(void* temp,
                           std::size_t& temp_bytes,
                           const std::uint64_t* keys_in,
                           std::uint64_t* keys_out,
                           const float* values_in,
                           float* values_out,
                           Offset count,
                           int key_bits,
                           cudaStream_t stream) {
  return cub::DeviceRadixSort::SortPairs(
      temp, temp_bytes, keys_in, keys_out, values_in, values_out, count, 0, key_bits, stream);
}

cudaError_t launch_first_key_flags(
    const std::uint64_t* keys, Offset count, bool keep_all, Offset* flags, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  first_key_flags_kernel<<<blocks_for(count), kThreads, 0, stream>>>(keys, count, keep_all, flags);
  return cudaGetLastError();
}

cudaError_t launch_scatter_edges(const std::uint64_t* keys,
                                 const float* values,
                                 const Offset* flags,
                                 const Offset* pos,
                                 Offset count,
                                 Index* rows,
                                 Index* cols,
                                 float* weights,
                                 cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  scatter_edges_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      keys, values, flags, pos, count, rows, cols, weights);
  return cudaGetLastError();
}

cudaError_t launch_row_offsets(
    const Index* rows, Offset num_edges, Index n, Offset* row_offsets, cudaStream_t stream) {
  row_offsets_kernel<<<blocks_for(static_cast<std::int64_t>(n) + 1), kThreads, 0, stream>>>(
      rows, num_edges, n, row_offsets);
  return cudaGetLastError();
}

}  // namespace gw::cuda
