// Frontier Bellman-Ford on the device, one source per block (shortest_paths_kernels.cuh).
#include <math_constants.h>

#include <algorithm>
#include <cstdint>

#include "distances/cuda/shortest_paths_kernels.cuh"

namespace gw::cuda {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 24;

unsigned blocks_for(std::int64_t count) {
  return static_cast<unsigned>(
      std::clamp<std::int64_t>((count + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Relaxes the out-edges of the frontier nodes in[0 .. count) (a group of kGroup threads per node)
// and appends the nodes lowered in this round to out (once each, by the round stamp).
template <int kGroup>
__device__ void relax_frontier(const SsspArgs& a,
                               float* dist,
                               const Index* in,
                               int count,
                               Index* out,
                               int* stamp,
                               int round,
                               int* out_count) {
  const int lane = static_cast<int>(threadIdx.x) % kGroup;
  const int groups = static_cast<int>(blockDim.x) / kGroup;
  for (int f = static_cast<int>(threadIdx.x) / kGroup; f < count; f += groups) {
    const Index u = in[f];
    // L2 reads (not L1): other threads lower dist[] with atomics while this block runs.
    const float du = __ldcg(dist + u);
    const Offset end = __ldg(a.row_offsets + u + 1);
    for (Offset e = __ldg(a.row_offsets + u) + lane; e < end; e += kGroup) {
      const Index v = __ldg(a.cols + e);
      const float w = a.weights != nullptr ? __ldg(a.weights + e) : 1.0f;
      const float candidate = __fadd_rn(du, w);
      if (candidate < __ldcg(dist + v)) {
        const float old =
            __int_as_float(atomicMin(reinterpret_cast<int*>(dist + v), __float_as_int(candidate)));
        if (candidate < old && atomicExch(stamp + v, round) != round) {
          out[atomicAdd(out_count, 1)] = v;
        }
      }
    }
  }
}

template <int kGroup>
__global__ void __launch_bounds__(kSsspSingleThreads) sssp_kernel(SsspArgs a) {
  // Two frontier counters: round r appends with counter r % 2 while the other is reset for r + 1.
  __shared__ int s_count[2];
  const std::int64_t n = a.n;
  Index* in = a.queues + static_cast<std::int64_t>(blockIdx.x) * 2 * n;
  Index* out = in + n;
  int* stamp = a.stamps + static_cast<std::int64_t>(blockIdx.x) * n;
  int round = a.first_round;
  const bool single = a.source_key != nullptr;

  for (std::int64_t s = blockIdx.x; s < a.num_sources; s += gridDim.x) {
    const Index source =
        single ? static_cast<Index>(~static_cast<std::uint32_t>(*a.source_key)) : a.sources[s];
    float* dist = a.rows + (single ? 0 : s * n);
    if (a.init_rows) {
      for (std::int64_t v = threadIdx.x; v < n; v += blockDim.x) dist[v] = CUDART_INF_F;
    }
    __syncthreads();  // the +inf stores (and the previous source's last reads) are done
    if (threadIdx.x == 0) {
      dist[source] = 0.0f;
      in[0] = source;
      s_count[0] = 0;
      s_count[1] = 0;
      if (a.picked != nullptr) a.picked[source] = 1;
    }
    __syncthreads();
    int count = 1;
    int parity = 0;
    while (count > 0) {
      ++round;
      relax_frontier<kGroup>(a, dist, in, count, out, stamp, round, &s_count[parity]);
      __syncthreads();  // every append of this round is done
      count = s_count[parity];
      // The other counter was last read before the barrier above: safe to reset for next round.
      if (threadIdx.x == 0) s_count[parity ^ 1] = 0;
      parity ^= 1;
      Index* t = in;
      in = out;
      out = t;
      __syncthreads();  // the reset is visible before the next round appends
    }
  }
}

__global__ void farthest_kernel(const float* min_distance,
                                const std::uint8_t* picked,
                                Index n,
                                unsigned long long* key) {
  unsigned long long local = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += stride) {
    if (picked[v]) continue;
    const unsigned long long candidate =
        (static_cast<unsigned long long>(__float_as_uint(min_distance[v])) << 32) |
        (0xffffffffull - static_cast<unsigned long long>(v));
    local = max(local, candidate);
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    local = max(local, __shfl_down_sync(0xffffffffu, local, offset));
  }
  if ((threadIdx.x & 31) == 0 && local != 0) atomicMax(key, local);
}

__global__ void fill_kernel(float* values, std::int64_t count, float value) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    values[i] = value;
  }
}

template <int kGroup>
cudaError_t launch_group(const SsspArgs& args, int blocks, int threads, cudaStream_t stream) {
  sssp_kernel<kGroup><<<blocks, threads, 0, stream>>>(args);
  return cudaGetLastError();
}

template <int kGroup>
cudaError_t occupancy(int threads, int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, sssp_kernel<kGroup>, threads, 0);
}

}  // namespace

cudaError_t launch_sssp(
    const SsspArgs& args, int blocks, int threads, int group, cudaStream_t stream) {
  if (args.n <= 0 || args.num_sources <= 0 || blocks <= 0) return cudaSuccess;
  if (threads <= 0 || threads > kSsspSingleThreads || threads % group != 0) {
    return cudaErrorInvalidValue;
  }
  switch (group) {
    case 4:
      return launch_group<4>(args, blocks, threads, stream);
    case 8:
      return launch_group<8>(args, blocks, threads, stream);
    case 16:
      return launch_group<16>(args, blocks, threads, stream);
    case 32:
      return launch_group<32>(args, blocks, threads, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t sssp_blocks_per_sm(int threads, int group, int* blocks) {
  switch (group) {
    case 4:
      return occupancy<4>(threads, blocks);
    case 8:
      return occupancy<8>(threads, blocks);
    case 16:
      return occupancy<16>(threads, blocks);
    case 32:
      return occupancy<32>(threads, blocks);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t launch_farthest(const float* min_distance,
                            const std::uint8_t* picked,
                            Index n,
                            unsigned long long* key,
                            cudaStream_t stream) {
  cudaError_t status = cudaMemsetAsync(key, 0, sizeof(unsigned long long), stream);
  if (status != cudaSuccess || n <= 0) return status;
  farthest_kernel<<<blocks_for(n), kThreads, 0, stream>>>(min_distance, picked, n, key);
  return cudaGetLastError();
}

cudaError_t launch_fill(float* values, std::int64_t count, float value, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  fill_kernel<<<blocks_for(count), kThreads, 0, stream>>>(values, count, value);
  return cudaGetLastError();
}

}  // namespace gw::cuda
