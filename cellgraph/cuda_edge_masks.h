// Edge masks on a CUDA device: the operations of cellgraph/edge_masks.h with the batch and the
// outputs in device memory.
//
// CudaEdgeMasker copies the gene graph's per-type incidence (node -> incident-edge ids, CSR) to
// the device once. Per batch, every call only enqueues work on the instance's stream and returns:
// no host synchronization and no host <-> device copy happen inside removed_edges_async or
// keep_mask_async. Output sizes are bounded on the host without looking at the ids: type t's
// removal list has at most num_ids * max_incident(t) entries, its exact length is ptr[B] on the
// device.
//
// Removal lists on the device, per type: the incident-edge lists of the batch's ids are gathered
// into one candidate array (segment b = sample b; offsets by a scan of the degrees), each segment
// is sorted (cub::DeviceSegmentedSort), duplicates (repeated ids, edges between two perturbed
// genes) are flagged, and a scan of the flags places every first occurrence at its final position
// b * E_t + e. Dense masks: a memset of the B * E_t bytes to 1, then one block per id clears its
// incident edges in its sample's copy.
//
// Invalid batches: the device cannot throw. A ptr that does not start at 0, decreases, or does not
// end at num_ids is replaced by a clamped running maximum, and ids outside [0, n) are skipped, so
// the kernels never leave their buffers; both are recorded in a device status word. check() waits
// for the stream and throws exactly the CPU error (validate_perturbations on a download of the
// batch) if the last batch was invalid. The host-input convenience functions validate first.
//
// Streams: all work, host copies included, is enqueued on one gw::CudaStream (core/cuda_stream.h):
// the instance's own (the `device` constructor) or the caller's, shared with other CUDA classes or
// borrowed from a framework, so that their work is ordered without synchronizing.
//
// Thread-safety: one host thread at a time per instance. In a build without CUDA the constructor
// throws gw::Error(ErrorCode::kNotCompiled).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cellgraph/edge_masks.h"
#include "core/cuda_stream.h"
#include "core/types.h"

namespace gw {

// A perturbation batch in device memory (see PerturbationBatch): ids[num_ids], ptr[B + 1].
struct DeviceBatch {
  const Index* ids = nullptr;
  Index num_ids = 0;
  const Offset* ptr = nullptr;
  Index num_samples = 0;
};

// A removal list in device memory, valid until the next removed_edges_async on the instance.
struct DeviceRemovedEdges {
  const Offset* positions = nullptr;  // ascending; the first ptr[B] entries are the list
  const Offset* ptr = nullptr;        // B + 1
  Offset capacity = 0;                // allocated entries of positions (>= ptr[B])
  Index num_samples = 0;
  Offset num_edges = 0;  // E_t
};

class CudaEdgeMasker {
 public:
  // Copies every type's incidence of `masker` to CUDA device `device` (synchronous). kNotCompiled
  // without CUDA, kInvalidArgument when the device does not exist.
  explicit CudaEdgeMasker(const EdgeMasker& masker, int device = 0);
  // The same on `stream` (its device is the instance's device).
  CudaEdgeMasker(const EdgeMasker& masker, const CudaStream& stream);
  ~CudaEdgeMasker();
  CudaEdgeMasker(CudaEdgeMasker&&) noexcept;
  CudaEdgeMasker& operator=(CudaEdgeMasker&&) noexcept;
  CudaEdgeMasker(const CudaEdgeMasker&) = delete;
  CudaEdgeMasker& operator=(const CudaEdgeMasker&) = delete;

  Index num_nodes() const;
  int num_types() const;
  Offset num_edges(int type) const;

  // Copies a host batch into device buffers owned by the instance (synchronous; validates it on
  // the host first) and returns their view, valid until the next upload_batch.
  DeviceBatch upload_batch(const PerturbationBatch& batch);

  // Removal lists of every type for a device batch. Asynchronous (see the top of this file); the
  // batch's memory must stay valid until the work completes (synchronize) and, for check()'s
  // message, until check().
  void removed_edges_async(const DeviceBatch& batch);
  // Type t's list of the last removed_edges_async.
  DeviceRemovedEdges device_removed(int type) const;

  // The dense keep-mask of type t into `keep` (device memory of this device, B * E_t bytes).
  // Asynchronous.
  void keep_mask_async(int type, const DeviceBatch& batch, std::uint8_t* keep);

  // Waits for all enqueued work.
  void synchronize();
  // synchronize(), then throws the CPU version's error if the last batch was invalid.
  void check();

  // Host copies of the last removal lists (synchronous; calls check()).
  std::vector<RemovedEdges> download_removed();

  // Host in, host out (synchronous): upload_batch + the async call + download.
  std::vector<RemovedEdges> removed_edges(const PerturbationBatch& batch);
  std::vector<std::uint8_t> keep_mask(int type, const PerturbationBatch& batch);

  // Benchmark floor: seconds (best of `reps`) of a cudaMemsetAsync of `bytes` bytes at `buffer`
  // (device memory of this device).
  double time_fill(std::uint8_t* buffer, Offset bytes, int reps = 5);

  int device() const;
  // The stream all work is enqueued on (give it to DeviceArray so copies are ordered with it).
  const CudaStream& stream() const;

 private:
  class Impl;
  Impl& impl() const;  // throws kNotCompiled without CUDA
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw
