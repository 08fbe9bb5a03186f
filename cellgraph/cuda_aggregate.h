// Per-gene aggregation of token embeddings on a CUDA device: the operation of
// cellgraph/aggregate.h with inputs and outputs in device memory.
//
// The device needs a bound on the ids to size its outputs without synchronizing: `id_bound`
// (e.g. the vocabulary size) must exceed every valid id. Two methods, the same output:
//   kSortByKey  radix sort of (gene id, token position) pairs over all B * T positions (invalid
//               positions get the key id_bound and sort last), run-length encoding of the sorted
//               ids (the distinct ids and counts), a scan for the run starts, then one block per
//               gene sums its tokens' rows in token order in double. Deterministic, and equal to
//               the CPU version to the last bit.
//   kAtomics    one warp per valid token adds its row into a [id_bound, H] double table with
//               atomicAdd (and its count), then a scan over the table's occupied ids compacts the
//               result. Sum order varies from run to run (rounding differences ~1e-16 relative).
// Which is faster depends on the id distribution and H; `gwalign bench aggregate --backend cuda`
// times both (--method).
//
// Everything is enqueued on the instance's gw::CudaStream (core/cuda_stream.h: its own, or the
// caller's when constructed from one) without host synchronization; the number of
// distinct ids stays on the device until download(). Invalid input cannot throw on the device: a
// length outside [0, T] is clamped and a valid id outside [0, id_bound) is skipped and recorded;
// check() (and download()) throw kInvalidArgument / kBadData like the CPU version.
//
// Thread-safety: one host thread at a time per instance. In a build without CUDA the constructor
// throws gw::Error(ErrorCode::kNotCompiled).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "cellgraph/aggregate.h"
#include "core/cuda_stream.h"
#include "core/types.h"

namespace gw {

enum class CudaAggregateMethod { kSortByKey, kAtomics };
// "sort" / "atomics", and back (std::nullopt for an unknown name).
std::string_view to_string(CudaAggregateMethod method);
std::optional<CudaAggregateMethod> cuda_aggregate_method_from_string(std::string_view name);

// The last result in device memory, valid until the next run on the instance.
struct DeviceGeneAggregate {
  const Index* gene_ids = nullptr;   // distinct ids, ascending (first *num_genes entries)
  const void* mean = nullptr;        // [capacity, hidden] float or double (the embeddings' type)
  const Offset* counts = nullptr;    // tokens per id
  const Index* num_genes = nullptr;  // device scalar: U
  Index capacity = 0;                // rows allocated (>= U)
  Index hidden = 0;
};

class CudaAggregator {
 public:
  // Binds to CUDA device `device`. kNotCompiled without CUDA, kInvalidArgument when the device
  // does not exist.
  explicit CudaAggregator(int device = 0);
  // Enqueues everything on `stream` (its device is the instance's device).
  explicit CudaAggregator(const CudaStream& stream);
  ~CudaAggregator();
  CudaAggregator(CudaAggregator&&) noexcept;
  CudaAggregator& operator=(CudaAggregator&&) noexcept;
  CudaAggregator(const CudaAggregator&) = delete;
  CudaAggregator& operator=(const CudaAggregator&) = delete;

  // Device inputs (this device's memory): embeddings [B, T, H], gene_ids [B, T], lengths [B].
  // Asynchronous; the inputs must stay valid until the work completes.
  void run_async(const float* embeddings,
                 const Index* gene_ids,
                 const Index* lengths,
                 Index batch,
                 Index seq_len,
                 Index hidden,
                 Index id_bound,
                 const AggregateOptions& options = {},
                 CudaAggregateMethod method = CudaAggregateMethod::kSortByKey);
  void run_async(const double* embeddings,
                 const Index* gene_ids,
                 const Index* lengths,
                 Index batch,
                 Index seq_len,
                 Index hidden,
                 Index id_bound,
                 const AggregateOptions& options = {},
                 CudaAggregateMethod method = CudaAggregateMethod::kSortByKey);

  DeviceGeneAggregate device_result() const;

  // Host copies of the last result (synchronous; calls check()). The type must match the
  // embeddings of the last run (kInvalidArgument otherwise).
  GeneAggregate<float> download_float();
  GeneAggregate<double> download_double();

  // Host in, host out (synchronous): copies the inputs in, runs, downloads.
  GeneAggregate<float> aggregate(std::span<const float> embeddings,
                                 std::span<const Index> gene_ids,
                                 std::span<const Index> lengths,
                                 Index batch,
                                 Index seq_len,
                                 Index hidden,
                                 Index id_bound,
                                 const AggregateOptions& options = {},
                                 CudaAggregateMethod method = CudaAggregateMethod::kSortByKey);
  GeneAggregate<double> aggregate(std::span<const double> embeddings,
                                  std::span<const Index> gene_ids,
                                  std::span<const Index> lengths,
                                  Index batch,
                                  Index seq_len,
                                  Index hidden,
                                  Index id_bound,
                                  const AggregateOptions& options = {},
                                  CudaAggregateMethod method = CudaAggregateMethod::kSortByKey);

  void synchronize();
  // synchronize(), then throws if the last run met an invalid length or id.
  void check();

  // Benchmark floor: seconds (best of `reps`) for a streaming kernel to read `bytes` bytes at
  // `buffer` (device memory of this device) once.
  double time_read(const void* buffer, Offset bytes, int reps = 5);

  int device() const;
  // The stream all work is enqueued on (give it to DeviceArray so copies are ordered with it).
  const CudaStream& stream() const;

 private:
  class Impl;
  Impl& impl() const;  // throws kNotCompiled without CUDA
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw
