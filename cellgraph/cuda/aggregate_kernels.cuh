// Host launchers of the per-gene aggregation CUDA kernels (aggregate_kernels.cu). Private to the
// module: included by cuda/cuda_aggregate.cpp only, in CUDA builds.
//
// Device data (all pointers device memory, launches asynchronous on `stream`):
//   embeddings [B * T * H] (float or double), ids [B * T], lengths [B]
//   token position p = b * T + t; a position is valid when first <= t < clamp(lengths[b], 0, T)
//   (first = 1 with skip_cls, else 0)
//   status: one int of kAggregate* bits, never cleared by the kernels
// Functions with (temp, temp_bytes) wrap CUB: with temp == nullptr they only set temp_bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cellgraph/cuda/scan.cuh"
#include "core/types.h"

namespace gw::cuda {

inline constexpr int kAggregateBadLength = 1;  // a length outside [0, T]
inline constexpr int kAggregateBadId = 2;      // a valid position's id outside [0, id_bound)

// keys[p] = ids[p] for a valid position with an id in [0, id_bound), else id_bound (sorts last);
// values[p] = p. Sets the status bits.
cudaError_t launch_make_keys(const Index* ids,
                             const Index* lengths,
                             Index batch,
                             Index seq_len,
                             Index first,
                             Index id_bound,
                             Index* keys,
                             Index* values,
                             int* status,
                             cudaStream_t stream);

// Stable radix sort of (key, value) pairs on key bits [0, end_bit) (keys are >= 0).
cudaError_t sort_pairs(void* temp,
                       std::size_t& temp_bytes,
                       const Index* keys_in,
                       Index* keys_out,
                       const Index* values_in,
                       Index* values_out,
                       Index count,
                       int end_bit,
                       cudaStream_t stream);

// Runs of equal keys: unique[r], counts[r] for r < *num_runs.
cudaError_t run_length_encode(void* temp,
                              std::size_t& temp_bytes,
                              const Index* keys,
                              Index* unique,
                              Offset* counts,
                              Index* num_runs,
                              Index count,
                              cudaStream_t stream);

// One block per run r < capacity whose key is < id_bound: mean[r, :] = the double sum of the rows
// of its tokens values[starts[r] .. starts[r] + counts[r]) in that order, divided by counts[r].
// Also *num_genes = the number of such runs (the sentinel run id_bound, if any, is last).
cudaError_t launch_run_means(const float* embeddings,
                             Index hidden,
                             const Index* values,
                             const Index* unique,
                             const Offset* counts,
                             const Offset* starts,
                             const Index* num_runs,
                             Index id_bound,
                             Index capacity,
                             float* mean,
                             Index* num_genes,
                             cudaStream_t stream);
cudaError_t launch_run_means(const double* embeddings,
                             Index hidden,
                             const Index* values,
                             const Index* unique,
                             const Offset* counts,
                             const Offset* starts,
                             const Index* num_runs,
                             Index id_bound,
                             Index capacity,
                             double* mean,
                             Index* num_genes,
                             cudaStream_t stream);

// One warp per valid position: atomicAdd of its row into sums[id, :] (double) and 1 into
// counts[id]. Sets the status bits.
cudaError_t launch_atomic_accumulate(const float* embeddings,
                                     const Index* ids,
                                     const Index* lengths,
                                     Index batch,
                                     Index seq_len,
                                     Index hidden,
                                     Index first,
                                     Index id_bound,
                                     double* sums,
                                     unsigned long long* counts,
                                     int* status,
                                     cudaStream_t stream);
cudaError_t launch_atomic_accumulate(const double* embeddings,
                                     const Index* ids,
                                     const Index* lengths,
                                     Index batch,
                                     Index seq_len,
                                     Index hidden,
                                     Index first,
                                     Index id_bound,
                                     double* sums,
                                     unsigned long long* counts,
                                     int* status,
                                     cudaStream_t stream);

// flags[id] = counts[id] > 0 for id < id_bound, flags[id_bound] = 0.
cudaError_t launch_table_flags(const unsigned long long* counts,
                               Index id_bound,
                               Offset* flags,
                               cudaStream_t stream);

// For every occupied id (flags[id] = 1), u = slots[id] (exclusive scan of flags): gene_ids[u] =
// id, counts_out[u] = counts[id], mean[u, :] = sums[id, :] / counts[id]; *num_genes =
// slots[id_bound].
cudaError_t launch_compact_table(const double* sums,
                                 const unsigned long long* counts,
                                 const Offset* flags,
                                 const Offset* slots,
                                 Index id_bound,
                                 Index hidden,
                                 float* mean,
                                 Index* gene_ids,
                                 Offset* counts_out,
                                 Index* num_genes,
                                 cudaStream_t stream);
cudaError_t launch_compact_table(const double* sums,
                                 const unsigned long long* counts,
                                 const Offset* flags,
                                 const Offset* slots,
                                 Index id_bound,
                                 Index hidden,
                                 double* mean,
                                 Index* gene_ids,
                                 Offset* counts_out,
                                 Index* num_genes,
                                 cudaStream_t stream);

// Benchmark floor: reads `bytes` bytes at `buffer` once (16-byte loads where aligned) and adds a
// checksum into *sink so the reads cannot be dropped.
cudaError_t launch_read_bytes(const void* buffer,
                              Offset bytes,
                              unsigned long long* sink,
                              cudaStream_t stream);

}  // namespace gw::cuda
