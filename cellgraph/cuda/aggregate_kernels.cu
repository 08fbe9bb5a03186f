// Per-gene aggregation CUDA kernels and their host launchers (declared in aggregate_kernels.cuh).
//
// Sort-by-key: radix sort of (id, position) over all B * T positions, run-length encoding, then
// one block per gene summing its rows in token order (the radix sort is stable), so the sums are
// those of the CPU version, bit for bit. Atomics: one warp per token, atomicAdd into a double
// table indexed by id, then a compaction by a scan of the occupied ids. Device code is compiled as
// C++17; launchers return the launch status.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>

#include <algorithm>
#include <cstdint>

#include "cellgraph/cuda/aggregate_kernels.cuh"

namespace gw::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarp = 32;
constexpr Offset kMaxBlocks = 65535;

unsigned grid_for(Offset items, Offset per_block) {
  const Offset blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<Offset>(1, std::min(blocks, kMaxBlocks)));
}

// Valid range of row b: [first, clamp(length, 0, T)); flags an out-of-range length.
__device__ Index row_end(const Index* lengths, Index b, Index seq_len, int* status) {
  const Index length = lengths[b];
  if (length < 0 || length > seq_len) {
    atomicOr(status, kAggregateBadLength);
    return length < 0 ? 0 : seq_len;
  }
  return length;
}

__global__ void make_keys_kernel(const Index* ids,
                                 const Index* lengths,
                                 Index batch,
                                 Index seq_len,
                                 Index first,
                                 Index id_bound,
                                 Index* keys,
                                 Index* values,
                                 int* status) {
  const Offset total = static_cast<Offset>(batch) * seq_len;
  for (Offset p = blockIdx.x * static_cast<Offset>(blockDim.x) + threadIdx.x; p < total;
       p += static_cast<Offset>(gridDim.x) * blockDim.x) {
    const Index b = static_cast<Index>(p / seq_len);
    const Index t = static_cast<Index>(p - static_cast<Offset>(b) * seq_len);
    // Only the first position of a row reports a bad length, once per row.
    const Index end =
        t == 0 ? row_end(lengths, b, seq_len, status) : min(max(lengths[b], Index{0}), seq_len);
    Index key = id_bound;
    if (t >= first && t < end) {
      const Index id = ids[p];
      if (id >= 0 && id < id_bound) {
        key = id;
      } else {
        atomicOr(status, kAggregateBadId);
      }
    }
    keys[p] = key;
    values[p] = static_cast<Index>(p);
  }
}

template <typename T>
__global__ void run_means_kernel(const T* embeddings,
                                 Index hidden,
                                 const Index* values,
                                 const Index* unique,
                                 const Offset* counts,
                                 const Offset* starts,
                                 const Index* num_runs,
                                 Index id_bound,
                                 Index capacity,
                                 T* mean,
                                 Index* num_genes) {
  const Index runs = *num_runs;
  const Index genes = runs - ((runs > 0 && unique[runs - 1] == id_bound) ? 1 : 0);
  if (blockIdx.x == 0 && threadIdx.x == 0) *num_genes = genes;
  for (Index r = blockIdx.x; r < genes && r < capacity; r += gridDim.x) {
    const Offset begin = starts[r];
    const Offset count = counts[r];
    for (Index h = threadIdx.x; h < hidden; h += blockDim.x) {
      double sum = 0.0;
      for (Offset k = begin; k < begin + count; ++k) {
        sum += static_cast<double>(embeddings[static_cast<Offset>(values[k]) * hidden + h]);
      }
      mean[static_cast<Offset>(r) * hidden + h] = static_cast<T>(sum / static_cast<double>(count));
    }
  }
}

template <typename T>
__global__ void atomic_accumulate_kernel(const T* embeddings,
                                         const Index* ids,
                                         const Index* lengths,
                                         Index batch,
                                         Index seq_len,
                                         Index hidden,
                                         Index first,
                                         Index id_bound,
                                         double* sums,
                                         unsigned long long* counts,
                                         int* status) {
  const int lane = threadIdx.x % kWarp;
  const Offset warps = static_cast<Offset>(gridDim.x) * (blockDim.x / kWarp);
  const Offset total = static_cast<Offset>(batch) * seq_len;
  for (Offset p = (blockIdx.x * static_cast<Offset>(blockDim.x) + threadIdx.x) / kWarp; p < total;
       p += warps) {
    const Index b = static_cast<Index>(p / seq_len);
    const Index t = static_cast<Index>(p - static_cast<Offset>(b) * seq_len);
    const Index end = (t == 0 && lane == 0) ? row_end(lengths, b, seq_len, status)
                                            : min(max(lengths[b], Index{0}), seq_len);
    if (t < first || t >= end) continue;
    const Index id = ids[p];
    if (id < 0 || id >= id_bound) {
      if (lane == 0) atomicOr(status, kAggregateBadId);
      continue;
    }
    const T* row = embeddings + p * hidden;
    double* sum = sums + static_cast<Offset>(id) * hidden;
    for (Index h = lane; h < hidden; h += kWarp) atomicAdd(sum + h, static_cast<double>(row[h]));
    if (lane == 0) atomicAdd(counts + id, 1ULL);
  }
}

__global__ void table_flags_kernel(const unsigned long long* counts,
                                   Index id_bound,
                                   Offset* flags) {
  for (Offset id = blockIdx.x * static_cast<Offset>(blockDim.x) + threadIdx.x; id <= id_bound;
       id += static_cast<Offset>(gridDim.x) * blockDim.x) {
    flags[id] = (id < id_bound && counts[id] > 0) ? 1 : 0;
  }
}

template <typename T>
__global__ void compact_table_kernel(const double* sums,
                                     const unsigned long long* counts,
                                     const Offset* flags,
                                     const Offset* slots,
                                     Index id_bound,
                                     Index hidden,
                                     T* mean,
                                     Index* gene_ids,
                                     Offset* counts_out,
                                     Index* num_genes) {
  if (blockIdx.x == 0 && threadIdx.x == 0) *num_genes = static_cast<Index>(slots[id_bound]);
  for (Index id = blockIdx.x; id < id_bound; id += gridDim.x) {
    if (flags[id] == 0) continue;
    const Offset u = slots[id];
    const unsigned long long count = counts[id];
    if (threadIdx.x == 0) {
      gene_ids[u] = id;
      counts_out[u] = static_cast<Offset>(count);
    }
    for (Index h = threadIdx.x; h < hidden; h += blockDim.x) {
      mean[u * hidden + h] =
          static_cast<T>(sums[static_cast<Offset>(id) * hidden + h] / static_cast<double>(count));
    }
  }
}

__global__ void read_bytes_kernel(const uint4* vectors,
                                  Offset count,
                                  const unsigned char* tail,
                                  Offset tail_bytes,
                                  unsigned long long* sink) {
  unsigned long long acc = 0;
  for (Offset i = blockIdx.x * static_cast<Offset>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<Offset>(gridDim.x) * blockDim.x) {
    const uint4 v = vectors[i];
    acc += static_cast<unsigned long long>(v.x ^ v.y ^ v.z ^ v.w);
  }
  if (blockIdx.x == 0) {
    for (Offset i = threadIdx.x; i < tail_bytes; i += blockDim.x) acc += tail[i];
  }
  // One atomic per warp keeps the checksum honest without costing bandwidth.
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    acc += __shfl_down_sync(0xffffffffu, acc, offset);
  }
  if (threadIdx.x % kWarp == 0) atomicAdd(sink, acc);
}

template <typename T>
cudaError_t run_means(const T* embeddings,
                      Index hidden,
                      const Index* values,
                      const Index* unique,
                      const Offset* counts,
                      const Offset* starts,
                      const Index* num_runs,
                      Index id_bound,
                      Index capacity,
                      T* mean,
                      Index* num_genes,
                      cudaStream_t stream) {
  const int threads = hidden >= 128 ? 128 : 64;
  run_means_kernel<T><<<grid_for(std::max<Index>(capacity, 1), 1), threads, 0, stream>>>(embeddings,
                                                                                         hidden,
                                                                                         values,
                                                                                         unique,
                                                                                         counts,
                                                                                         starts,
                                                                                         num_runs,
                                                                                         id_bound,
                                                                                         capacity,
                                                                                         mean,
                                                                                         num_genes);
  return cudaGetLastError();
}

template <typename T>
cudaError_t atomic_accumulate(const T* embeddings,
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
                              cudaStream_t stream) {
  const Offset total = static_cast<Offset>(batch) * seq_len;
  if (total == 0) return cudaSuccess;
  atomic_accumulate_kernel<T><<<grid_for(total, kThreads / kWarp), kThreads, 0, stream>>>(
      embeddings, ids, lengths, batch, seq_len, hidden, first, id_bound, sums, counts, status);
  return cudaGetLastError();
}

template <typename T>
cudaError_t compact_table(const double* sums,
                          const unsigned long long* counts,
                          const Offset* flags,
                          const Offset* slots,
                          Index id_bound,
                          Index hidden,
                          T* mean,
                          Index* gene_ids,
                          Offset* counts_out,
                          Index* num_genes,
                          cudaStream_t stream) {
  const int threads = hidden >= 128 ? 128 : 64;
  compact_table_kernel<T><<<grid_for(std::max<Index>(id_bound, 1), 1), threads, 0, stream>>>(
      sums, counts, flags, slots, id_bound, hidden, mean, gene_ids, counts_out, num_genes);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_make_keys(const Index* ids,
                             const Index* lengths,
                             Index batch,
                             Index seq_len,
                             Index first,
                             Index id_bound,
                             Index* keys,
                             Index* values,
                             int* status,
                             cudaStream_t stream) {
  const Offset total = static_cast<Offset>(batch) * seq_len;
  if (total == 0) return cudaSuccess;
  make_keys_kernel<<<grid_for(total, kThreads), kThreads, 0, stream>>>(
      ids, lengths, batch, seq_len, first, id_bound, keys, values, status);
  return cudaGetLastError();
}

cudaError_t sort_pairs(void* temp,
                       std::size_t& temp_bytes,
                       const Index* keys_in,
                       Index* keys_out,
                       const Index* values_in,
                       Index* values_out,
                       Index count,
                       int end_bit,
                       cudaStream_t stream) {
  // The keys are >= 0, so their bits sort as unsigned integers.
  return cub::DeviceRadixSort::SortPairs(temp,
                                         temp_bytes,
                                         reinterpret_cast<const std::uint32_t*>(keys_in),
                                         reinterpret_cast<std::uint32_t*>(keys_out),
                                         values_in,
                                         values_out,
                                         count,
                                         0,
                                         end_bit,
                                         stream);
}

cudaError_t run_length_encode(void* temp,
                              std::size_t& temp_bytes,
                              const Index* keys,
                              Index* unique,
                              Offset* counts,
                              Index* num_runs,
                              Index count,
                              cudaStream_t stream) {
  return cub::DeviceRunLengthEncode::Encode(
      temp, temp_bytes, keys, unique, counts, num_runs, count, stream);
}

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
                             cudaStream_t stream) {
  return run_means<float>(embeddings,
                          hidden,
                          values,
                          unique,
                          counts,
                          starts,
                          num_runs,
                          id_bound,
                          capacity,
                          mean,
                          num_genes,
                          stream);
}

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
                             cudaStream_t stream) {
  return run_means<double>(embeddings,
                           hidden,
                           values,
                           unique,
                           counts,
                           starts,
                           num_runs,
                           id_bound,
                           capacity,
                           mean,
                           num_genes,
                           stream);
}

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
                                     cudaStream_t stream) {
  return atomic_accumulate<float>(embeddings,
                                  ids,
                                  lengths,
                                  batch,
                                  seq_len,
                                  hidden,
                                  first,
                                  id_bound,
                                  sums,
                                  counts,
                                  status,
                                  stream);
}

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
                                     cudaStream_t stream) {
  return atomic_accumulate<double>(embeddings,
                                   ids,
                                   lengths,
                                   batch,
                                   seq_len,
                                   hidden,
                                   first,
                                   id_bound,
                                   sums,
                                   counts,
                                   status,
                                   stream);
}

cudaError_t launch_table_flags(const unsigned long long* counts,
                               Index id_bound,
                               Offset* flags,
                               cudaStream_t stream) {
  table_flags_kernel<<<grid_for(static_cast<Offset>(id_bound) + 1, kThreads),
                       kThreads,
                       0,
                       stream>>>(counts, id_bound, flags);
  return cudaGetLastError();
}

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
                                 cudaStream_t stream) {
  return compact_table<float>(
      sums, counts, flags, slots, id_bound, hidden, mean, gene_ids, counts_out, num_genes, stream);
}

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
                                 cudaStream_t stream) {
  return compact_table<double>(
      sums, counts, flags, slots, id_bound, hidden, mean, gene_ids, counts_out, num_genes, stream);
}

cudaError_t launch_read_bytes(const void* buffer,
                              Offset bytes,
                              unsigned long long* sink,
                              cudaStream_t stream) {
  // cudaMalloc'd buffers are 256-byte aligned; an unaligned start is read bytewise.
  const auto address = reinterpret_cast<std::uintptr_t>(buffer);
  const bool aligned = address % 16 == 0;
  const Offset vectors = aligned ? bytes / 16 : 0;
  const Offset tail = bytes - vectors * 16;
  read_bytes_kernel<<<grid_for(std::max<Offset>(vectors, 1), kThreads), kThreads, 0, stream>>>(
      static_cast<const uint4*>(buffer),
      vectors,
      static_cast<const unsigned char*>(buffer) + vectors * 16,
      tail,
      sink);
  return cudaGetLastError();
}

}  // namespace gw::cuda
