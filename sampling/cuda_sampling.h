// Anchor-pair sampling from a transport plan that lives on a CUDA device (docs/architecture.md).
//
// The same draws as sample_anchor_pairs() (sampling.h) for the same uniforms: a row i by the row
// masses (binary search of u_s * total in the cumulative row masses), then a column of row i by
// its entries (the first j with T_ij > 0 whose running sum exceeds u_{M+s} * row_mass_i, else the
// last j with T_ij > 0). The plan never leaves the device: the 2M uniforms go up, the 2M indices
// come back. Sums run in double in a fixed order on the device, so a seed fixes the pairs for a
// given device; they agree with the CPU sampler except where a uniform falls within rounding
// (~1e-16 relative) of a boundary between rows or columns.
//
// Usage (the GW loop's pattern):
//   CudaAnchorSampler sampler(device);
//   sampler.reserve(n, m);                    // optional: no allocation in later calls
//   // ... write the plan (and its row masses) on sampler.stream(), or synchronize first ...
//   std::vector<double> u = draw_sampling_uniforms(rng, m);
//   AnchorPairs pairs = sampler.sample(d_plan, n, k, stride, d_row_mass, u);
//
// Cost per call: O(n) for the cumulative row masses (one block), O(M log n) for the row draws,
// O(M k) for the column draws (two reads of each drawn row), plus one read of the plan when no
// row masses are given. One host synchronization per call.
//
// Thread-safety: one host thread at a time per instance. In a build without CUDA the constructor
// throws gw::Error(ErrorCode::kNotCompiled).
#pragma once

#include <memory>
#include <span>

#include "core/cuda_stream.h"
#include "core/types.h"
#include "sampling/sampling.h"

namespace gw {

class CudaAnchorSampler {
 public:
  // Binds to CUDA device `device` and creates the instance's stream. Throws kNotCompiled without
  // CUDA, kInvalidArgument when the device does not exist.
  explicit CudaAnchorSampler(int device = 0);
  // Enqueues everything on `stream` (its device is the instance's device): the GW loop shares one
  // stream between the sampler, the Sinkhorn and its own kernels.
  explicit CudaAnchorSampler(const CudaStream& stream);
  ~CudaAnchorSampler();
  CudaAnchorSampler(CudaAnchorSampler&&) noexcept;
  CudaAnchorSampler& operator=(CudaAnchorSampler&&) noexcept;
  CudaAnchorSampler(const CudaAnchorSampler&) = delete;
  CudaAnchorSampler& operator=(const CudaAnchorSampler&) = delete;

  // Allocates the scratch for plans of up to n rows and m pairs; later calls within these sizes
  // never allocate.
  void reserve(Index n, int m);

  // Draws uniforms.size() / 2 pairs from the plan.
  //   plan      device memory of this device: n x k, row-major, entry (i, j) at
  //             plan[i * stride + j], stride >= k; non-negative.
  //   row_mass  device memory, n doubles: the plan's row sums; nullptr to compute them here (one
  //             read of the plan).
  //   uniforms  host, 2M values in [0, 1), rows first (draw_sampling_uniforms).
  // Work is enqueued on stream(): the plan and row masses must be complete when it runs (written
  // on stream(), or their stream synchronized before the call). Returns when the pairs are on the
  // host. Throws kBadData when the plan has no mass (or NaN mass) or a drawn row has none (row
  // masses that do not match the plan), kInvalidArgument on shapes and host pointers.
  AnchorPairs sample(const float* plan,
                     Index n,
                     Index k,
                     Offset stride,
                     const double* row_mass,
                     std::span<const double> uniforms);
  AnchorPairs sample(const double* plan,
                     Index n,
                     Index k,
                     Offset stride,
                     const double* row_mass,
                     std::span<const double> uniforms);

  int device() const;
  // The stream all work is enqueued on.
  const CudaStream& stream() const;

 private:
  class Impl;
  Impl& impl() const;  // throws kNotCompiled without CUDA
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw
