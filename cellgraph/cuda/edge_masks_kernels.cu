// Edge-mask CUDA kernels and their host launchers (declared in edge_masks_kernels.cuh).
//
// Removal lists: gather candidates (incident edges of each id occurrence) into per-sample
// segments, sort each segment (CUB), flag first occurrences, scan the flags, scatter. Every size
// the host needs is an upper bound known before the batch is read, so nothing here waits for the
// device. Device code is compiled as C++17 (cmake/GwalignOptions.cmake), so this file cannot
// include core/error.h (C++20): launchers return the launch status and the caller checks it.
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>

#include "cellgraph/cuda/edge_masks_kernels.cuh"

namespace gw::cuda {
namespace {

constexpr int kThreads = 256;
constexpr Offset kMaxBlocks = 65535;

unsigned grid_for(Offset items) {
  const Offset blocks = (items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<Offset>(1, std::min(blocks, kMaxBlocks)));
}

// The sample owning id occurrence j: the b with sptr[b] <= j < sptr[b+1], or -1 when
// j >= sptr[B]. sptr is non-decreasing from sptr[0] = 0.
__device__ Index sample_of(Offset j, const Offset* sptr, Index num_samples) {
  Index lo = 0;
  Index hi = num_samples + 1;  // first index with sptr[index] > j, searched in [lo, hi)
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (sptr[mid] <= j) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const Index b = lo - 1;
  return (b >= 0 && b < num_samples) ? b : -1;
}

__global__ void sanitize_ptr_kernel(
    const Offset* ptr, Index num_samples, Index num_ids, Offset* sptr, int* status) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  bool bad = ptr[0] != 0 || ptr[num_samples] != num_ids;
  Offset running = 0;
  sptr[0] = 0;
  for (Index b = 1; b <= num_samples; ++b) {
    const Offset v = ptr[b];
    bad = bad || v < ptr[b - 1];
    const Offset clamped = v < 0 ? 0 : (v > num_ids ? num_ids : v);
    running = clamped > running ? clamped : running;
    sptr[b] = running;
  }
  if (bad) atomicOr(status, kStatusBadPtr);
}

__global__ void candidate_counts_kernel(const Index* ids,
                                        Index num_ids,
                                        const Offset* sptr,
                                        Index num_samples,
                                        const Offset* inc_offsets,
                                        Index num_nodes,
                                        Offset* counts,
                                        int* status) {
  const Offset used = sptr[num_samples];
  for (Offset j = blockIdx.x * static_cast<Offset>(blockDim.x) + threadIdx.x; j <= num_ids;
       j += static_cast<Offset>(gridDim.x) * blockDim.x) {
    Offset count = 0;
    if (j < used) {
      const Index id = ids[j];
      if (id >= 0 && id < num_nodes) {
        count = inc_offsets[id + 1] - inc_offsets[id];
      } else {
        atomicOr(status, kStatusBadId);
      }
    }
    counts[j] = count;
  }
}

__global__ void segment_offsets_kernel(const Offset* coff,
                                       const Offset* sptr,
                                       Index num_samples,
                                       Offset* seg) {
  for (Index b = blockIdx.x * blockDim.x + threadIdx.x; b <= num_samples;
       b += gridDim.x * blockDim.x) {
    seg[b] = coff[sptr[b]];
  }
}

// One block per id occurrence; the threads copy its incidence list (coalesced).
__global__ void gather_candidates_kernel(const Index* ids,
                                         const Offset* sptr,
                                         Index num_samples,
                                         const Offset* inc_offsets,
                                         const Index* inc_edges,
                                         const Offset* coff,
                                         Index* cand,
                                         Index* cand_sample) {
  const Offset j = blockIdx.x;
  const Offset begin = coff[j];
  const Offset count = coff[j + 1] - begin;
  if (count == 0) return;  // outside every sample, a bad id, or an isolated gene
  const Index b = sample_of(j, sptr, num_samples);
  const Index* edges = inc_edges + inc_offsets[ids[j]];
  for (Offset i = threadIdx.x; i < count; i += blockDim.x) {
    cand[begin + i] = edges[i];
    cand_sample[begin + i] = b;
  }
}

__global__ void first_flags_kernel(const Index* sorted,
                                   const Index* cand_sample,
                                   const Offset* seg,
                                   Index num_samples,
                                   Offset capacity,
                                   Offset* flags) {
  const Offset total = seg[num_samples];
  for (Offset i = blockIdx.x * static_cast<Offset>(blockDim.x) + threadIdx.x; i < capacity;
       i += static_cast<Offset>(gridDim.x) * blockDim.x) {
    Offset flag = 0;
    if (i < total) {
      const Index b = cand_sample[i];
      flag = (i == seg[b] || sorted[i] != sorted[i - 1]) ? 1 : 0;
    }
    flags[i] = flag;
  }
}

__global__ void scatter_removed_kernel(const Index* sorted,
                                       const Index* cand_sample,
                                       const Offset* flags,
                                       const Offset* rank,
                                       const Offset* seg,
                                       Index num_samples,
                                       Offset capacity,
                                       Offset num_edges,
                                       Offset* positions,
                                       Offset* ptr) {
  const Offset stride = static_cast<Offset>(gridDim.x) * blockDim.x;
  const Offset first = blockIdx.x * static_cast<Offset>(blockDim.x) + threadIdx.x;
  for (Offset i = first; i < capacity; i += stride) {
    if (flags[i] != 0) positions[rank[i] - 1] = cand_sample[i] * num_edges + sorted[i];
  }
  for (Offset b = first; b <= num_samples; b += stride) {
    const Offset s = seg[b];
    ptr[b] = s == 0 ? 0 : rank[s - 1];
  }
}

__global__ void clear_mask_kernel(const Index* ids,
                                  const Offset* sptr,
                                  Index num_samples,
                                  const Offset* inc_offsets,
                                  const Index* inc_edges,
                                  Index num_nodes,
                                  Offset num_edges,
                                  std::uint8_t* keep,
                                  int* status) {
  const Offset j = blockIdx.x;
  const Index b = sample_of(j, sptr, num_samples);
  if (b < 0) return;
  const Index id = ids[j];
  if (id < 0 || id >= num_nodes) {
    if (threadIdx.x == 0) atomicOr(status, kStatusBadId);
    return;
  }
  const Offset begin = inc_offsets[id];
  const Offset count = inc_offsets[id + 1] - begin;
  std::uint8_t* mask = keep + b * num_edges;
  for (Offset i = threadIdx.x; i < count; i += blockDim.x) mask[inc_edges[begin + i]] = 0;
}

}  // namespace

cudaError_t launch_sanitize_ptr(const Offset* ptr,
                                Index num_samples,
                                Index num_ids,
                                Offset* sptr,
                                int* status,
                                cudaStream_t stream) {
  sanitize_ptr_kernel<<<1, 1, 0, stream>>>(ptr, num_samples, num_ids, sptr, status);
  return cudaGetLastError();
}

cudaError_t launch_candidate_counts(const Index* ids,
                                    Index num_ids,
                                    const Offset* sptr,
                                    Index num_samples,
                                    const Offset* inc_offsets,
                                    Index num_nodes,
                                    Offset* counts,
                                    int* status,
                                    cudaStream_t stream) {
  candidate_counts_kernel<<<grid_for(Offset{num_ids} + 1), kThreads, 0, stream>>>(
      ids, num_ids, sptr, num_samples, inc_offsets, num_nodes, counts, status);
  return cudaGetLastError();
}

cudaError_t launch_segment_offsets(
    const Offset* coff, const Offset* sptr, Index num_samples, Offset* seg, cudaStream_t stream) {
  segment_offsets_kernel<<<grid_for(Offset{num_samples} + 1), kThreads, 0, stream>>>(
      coff, sptr, num_samples, seg);
  return cudaGetLastError();
}

cudaError_t launch_gather_candidates(const Index* ids,
                                     Index num_ids,
                                     const Offset* sptr,
                                     Index num_samples,
                                     const Offset* inc_offsets,
                                     const Index* inc_edges,
                                     const Offset* coff,
                                     Index* cand,
                                     Index* cand_sample,
                                     cudaStream_t stream) {
  if (num_ids == 0) return cudaSuccess;
  gather_candidates_kernel<<<static_cast<unsigned>(num_ids), kThreads, 0, stream>>>(
      ids, sptr, num_samples, inc_offsets, inc_edges, coff, cand, cand_sample);
  return cudaGetLastError();
}

cudaError_t segmented_sort(void* temp,
                           std::size_t& temp_bytes,
                           const Index* in,
                           Index* out,
                           Offset capacity,
                           Index num_samples,
                           const Offset* seg,
                           cudaStream_t stream) {
  return cub::DeviceSegmentedSort::SortKeys(
      temp, temp_bytes, in, out, capacity, num_samples, seg, seg + 1, stream);
}

cudaError_t launch_first_flags(const Index* sorted,
                               const Index* cand_sample,
                               const Offset* seg,
                               Index num_samples,
                               Offset capacity,
                               Offset* flags,
                               cudaStream_t stream) {
  if (capacity == 0) return cudaSuccess;
  first_flags_kernel<<<grid_for(capacity), kThreads, 0, stream>>>(
      sorted, cand_sample, seg, num_samples, capacity, flags);
  return cudaGetLastError();
}

cudaError_t launch_scatter_removed(const Index* sorted,
                                   const Index* cand_sample,
                                   const Offset* flags,
                                   const Offset* rank,
                                   const Offset* seg,
                                   Index num_samples,
                                   Offset capacity,
                                   Offset num_edges,
                                   Offset* positions,
                                   Offset* ptr,
                                   cudaStream_t stream) {
  const Offset items = std::max<Offset>(capacity, Offset{num_samples} + 1);
  scatter_removed_kernel<<<grid_for(items), kThreads, 0, stream>>>(
      sorted, cand_sample, flags, rank, seg, num_samples, capacity, num_edges, positions, ptr);
  return cudaGetLastError();
}

cudaError_t launch_clear_mask(const Index* ids,
                              Index num_ids,
                              const Offset* sptr,
                              Index num_samples,
                              const Offset* inc_offsets,
                              const Index* inc_edges,
                              Index num_nodes,
                              Offset num_edges,
                              std::uint8_t* keep,
                              int* status,
                              cudaStream_t stream) {
  if (num_ids == 0) return cudaSuccess;
  clear_mask_kernel<<<static_cast<unsigned>(num_ids), kThreads, 0, stream>>>(
      ids, sptr, num_samples, inc_offsets, inc_edges, num_nodes, num_edges, keep, status);
  return cudaGetLastError();
}

}  // namespace gw::cuda
