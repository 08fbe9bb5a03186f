// Batched heat diffusion on a CUDA device: the operation of cellgraph/diffusion.h with the
// padded signals in device memory.
//
// prepare() builds the block-diagonal operator L~ on the host exactly as HeatDiffusion does (same
// checks, same entries; O(nodes + edges), multithreaded) and copies it to the device with the
// padded-row index of every node. apply_async() then runs the whole expansion on the device
// without host synchronization: a gather of the real rows of X (unpad), K launches of a fused
// SpMM step (T_{k+1} = 2 L~ T_k - T_{k-1} in place, Y += w_{k+1} T_{k+1}, one warp per row,
// lanes over channels, sums in CSR order), with Y written straight into the padded output, whose
// padding rows are zeroed by a memset. float32 signals use float32 operator values and
// arithmetic; float64 signals float64.
//
// Streams: all work, host copies included, is enqueued on one gw::CudaStream (core/cuda_stream.h):
// the instance's own (the `device` constructor) or the caller's (share one handle between several
// CUDA classes, or borrow a framework's stream, to order their work without synchronizing).
//
// Thread-safety: one host thread at a time per instance. In a build without CUDA the constructor
// throws gw::Error(ErrorCode::kNotCompiled).
#pragma once

#include <memory>
#include <span>

#include "cellgraph/diffusion.h"
#include "core/cuda_stream.h"
#include "core/types.h"

namespace gw {

class CudaHeatDiffusion {
 public:
  // Binds to CUDA device `device`. kNotCompiled without CUDA, kInvalidArgument when the device
  // does not exist.
  explicit CudaHeatDiffusion(int device = 0);
  // Enqueues everything on `stream` (its device is the instance's device).
  explicit CudaHeatDiffusion(const CudaStream& stream);
  ~CudaHeatDiffusion();
  CudaHeatDiffusion(CudaHeatDiffusion&&) noexcept;
  CudaHeatDiffusion& operator=(CudaHeatDiffusion&&) noexcept;
  CudaHeatDiffusion(const CudaHeatDiffusion&) = delete;
  CudaHeatDiffusion& operator=(const CudaHeatDiffusion&) = delete;

  // Builds the operator of a batch on the host and uploads it (synchronous).
  void prepare(const DiffusionGraphs& graphs, Index seq_len, const DiffusionOptions& options = {});
  // Uploads an operator built on the host (synchronous).
  void prepare(const HeatDiffusion& op);

  Index num_graphs() const;
  Index seq_len() const;
  Offset nnz() const;

  // y = exp(-beta L) x per graph for device arrays x, y of [B, S, channels] elements (device
  // memory of this device, not overlapping). Enqueued on stream(); returns at once.
  void apply_async(const float* x, Index channels, float* y);
  void apply_async(const double* x, Index channels, double* y);

  // Host in, host out (synchronous): copies x in, applies, copies y out.
  void apply(std::span<const float> x, Index channels, std::span<float> y);
  void apply(std::span<const double> x, Index channels, std::span<double> y);

  void synchronize();
  int device() const;
  // The stream all work is enqueued on (give it to DeviceArray so copies are ordered with it).
  const CudaStream& stream() const;

 private:
  class Impl;
  Impl& impl() const;  // throws kNotCompiled without CUDA
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw
