// Host launchers of the edge-mask CUDA kernels (edge_masks_kernels.cu). Private to the module:
// included by cuda/cuda_edge_masks.cpp only, in CUDA builds.
//
// Device data (all pointers device memory, all launches asynchronous on `stream`):
//   ids          [num_ids] gene ids of the batch, ptr [B + 1] as given by the caller
//   sptr         [B + 1] the sanitized ptr: sptr[0] = 0, running maximum of ptr clamped to
//                [0, num_ids]; equal to ptr for a valid batch
//   inc_offsets  [n + 1], inc_edges [2E at most]: one edge type's incidence (graph/incidence.h),
//                edge ids as int32
//   status       one int of kStatus* bits, never cleared by the kernels
// Functions with (temp, temp_bytes) wrap CUB: with temp == nullptr they only set temp_bytes
// (the scans are in scan.cuh).
// Every launcher returns the launch status; wrap calls in GW_CUDA_CHECK.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cellgraph/cuda/scan.cuh"
#include "core/types.h"

namespace gw::cuda {

inline constexpr int kStatusBadPtr = 1;  // ptr[0] != 0, a decrease, or ptr[B] != num_ids
inline constexpr int kStatusBadId = 2;   // an id outside [0, n)

// sptr from ptr (one thread: B is small); sets kStatusBadPtr for an invalid ptr.
cudaError_t launch_sanitize_ptr(const Offset* ptr,
                                Index num_samples,
                                Index num_ids,
                                Offset* sptr,
                                int* status,
                                cudaStream_t stream);

// counts[j] = degree of ids[j] in the incidence for j in [0, sptr[B]) with a valid id, else 0;
// counts[num_ids] = 0 (so an exclusive scan of num_ids + 1 entries ends at the total). Sets
// kStatusBadId for an id outside [0, num_nodes) in [0, sptr[B]).
cudaError_t launch_candidate_counts(const Index* ids,
                                    Index num_ids,
                                    const Offset* sptr,
                                    Index num_samples,
                                    const Offset* inc_offsets,
                                    Index num_nodes,
                                    Offset* counts,
                                    int* status,
                                    cudaStream_t stream);

// seg[b] = coff[sptr[b]] for b in [0, B]: the candidate range of sample b is [seg[b], seg[b+1]).
cudaError_t launch_segment_offsets(
    const Offset* coff, const Offset* sptr, Index num_samples, Offset* seg, cudaStream_t stream);

// One block per id occurrence j: copies the incident edges of ids[j] to cand[coff[j] ..) and
// the sample of j to cand_sample[coff[j] ..). Occurrences with no candidates are skipped.
cudaError_t launch_gather_candidates(const Index* ids,
                                     Index num_ids,
                                     const Offset* sptr,
                                     Index num_samples,
                                     const Offset* inc_offsets,
                                     const Index* inc_edges,
                                     const Offset* coff,
                                     Index* cand,
                                     Index* cand_sample,
                                     cudaStream_t stream);

// Sorts every segment [seg[b], seg[b+1]) of `in` into `out` (cub::DeviceSegmentedSort).
cudaError_t segmented_sort(void* temp,
                           std::size_t& temp_bytes,
                           const Index* in,
                           Index* out,
                           Offset capacity,
                           Index num_samples,
                           const Offset* seg,
                           cudaStream_t stream);

// flags[i] = 1 for the first occurrence of each value within its segment, for i < seg[B];
// 0 for every other i < capacity.
cudaError_t launch_first_flags(const Index* sorted,
                               const Index* cand_sample,
                               const Offset* seg,
                               Index num_samples,
                               Offset capacity,
                               Offset* flags,
                               cudaStream_t stream);

// positions[rank[i] - 1] = cand_sample[i] * num_edges + sorted[i] for flagged i (rank = inclusive
// scan of flags), and ptr[b] = rank[seg[b] - 1] (0 when seg[b] = 0) for b in [0, B].
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
                                   cudaStream_t stream);

// One block per id occurrence j in a sample, with a valid id: keep[b * num_edges + e] = 0 for
// every edge e incident to ids[j], b the sample of j. keep must be set to 1 beforehand. Sets
// kStatusBadId for an id outside [0, num_nodes) in a sample.
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
                              cudaStream_t stream);

}  // namespace gw::cuda
