// Sinkhorn on a CUDA device, for solver loops that keep everything on the GPU.
//
// CudaSinkhorn owns the device buffers of one problem shape: cost (optional, see upload_cost),
// marginals, potentials, scratch. Typical GW-loop use:
//
//   CudaSinkhorn sinkhorn(device);
//   sinkhorn.reserve(n + 1, k + 1);                    // once: no allocation later
//   for (each outer iteration) {
//     sinkhorn.use_device_cost(CostView(d_lambda, n + 1, k + 1));  // or upload_cost(host view)
//     sinkhorn.set_marginals(a, b);                    // when they change
//     SinkhornResult r = sinkhorn.solve(eps_t, options);  // warm-starts from the last potentials
//     sinkhorn.plan_to_device(eps_t, PlanView(d_plan, n + 1, k + 1));
//   }
//
// Same iteration, check schedule, residual and zero-mass conventions as gw::sinkhorn()
// (sinkhorn.h). Per iteration: a row kernel (one warp per row, online-max log-sum-exp) and a column
// pass (partial log-sum-exps per 256-row tile, combined per column), i.e. two reads of C; the
// residual is reduced on the device and the host synchronizes only at check iterations.
// options.precision selects float32 (mixed: double accumulation) or float64 compute; the cost may
// be stored as either type. options.threads is ignored.
//
// Streams: all work runs on one gw::CudaStream (core/cuda_stream.h): the instance's own (the
// `device` constructor) or the caller's (the GW loop shares one stream between its kernels, the
// sampler and this class; a framework's stream can be borrowed). Calls return when their results
// are complete (solve, downloads, plan_to_host) or enqueued (plan_to_device: work enqueued later on
// stream() sees the plan; anything else, a cudaMemcpy on the legacy default stream included, must
// synchronize stream() first).
//
// Thread-safety: an instance is used by one host thread at a time.
//
// In a build without CUDA the constructor throws gw::Error(ErrorCode::kNotCompiled).
#pragma once

#include <memory>
#include <span>

#include "core/cuda_stream.h"
#include "core/types.h"
#include "sinkhorn/sinkhorn.h"

namespace gw {

class CudaSinkhorn {
 public:
  // Binds to CUDA device `device`. Throws kNotCompiled without CUDA, kInvalidArgument when the
  // device does not exist.
  explicit CudaSinkhorn(int device = 0);
  // Enqueues everything on `stream` (its device is the instance's device).
  explicit CudaSinkhorn(const CudaStream& stream);
  ~CudaSinkhorn();
  CudaSinkhorn(CudaSinkhorn&&) noexcept;
  CudaSinkhorn& operator=(CudaSinkhorn&&) noexcept;
  CudaSinkhorn(const CudaSinkhorn&) = delete;
  CudaSinkhorn& operator=(const CudaSinkhorn&) = delete;

  // Allocates every buffer for problems up to n x k (an owned cost buffer only when
  // reserve_cost, sized for `cost_type` elements). Later calls within these sizes never allocate.
  void reserve(Index n, Index k, bool reserve_cost = true, Precision cost_type = Precision::kF32);

  // Copies a host cost (any row stride; stored contiguously on the device, element type kept) into
  // the owned cost buffer, growing it only beyond what was reserved. Synchronous.
  void upload_cost(const CostView& host_cost);

  // Uses a cost that already lives in device memory of this device (no copy). The memory must stay
  // valid and unchanged until the next upload_cost / use_device_cost or the destruction.
  void use_device_cost(const CostView& device_cost);

  // When the cost's shape differs from the previous one, the potentials are reset to zero and the
  // marginals must be set again.
  Index rows() const;
  Index cols() const;

  // Host marginals of the current shape (same rules as gw::sinkhorn: finite, >= 0, positive sums).
  void set_marginals(std::span<const double> a, std::span<const double> b);

  // Uploads potentials (cost units; kZeroMassPotential / -inf marks zero mass). Without this call
  // solve() starts from the potentials the previous solve left on the device (warm start), or
  // from zeros after a shape change.
  void set_potentials(std::span<const double> f, std::span<const double> g);
  void reset_potentials();

  // Runs Sinkhorn from the device potentials and leaves the result there.
  SinkhornResult solve(double epsilon, const SinkhornOptions& options = {});

  // Copies the device potentials to the host (zero mass as kZeroMassPotential). Synchronous.
  void download_potentials(std::span<double> f, std::span<double> g) const;

  // T_ij = exp((f_i + g_j - C_ij) / epsilon) from the current device potentials and cost, computed
  // in `precision`, into a device buffer of this device (plan_to_device; asynchronous, see above)
  // or a host buffer (plan_to_host; synchronous, through a device scratch of n x k elements that
  // is kept for later calls). Zero-mass rows / columns are exactly 0.
  void plan_to_device(double epsilon,
                      const PlanView& device_plan,
                      Precision precision = Precision::kF32);
  void plan_to_host(double epsilon,
                    const PlanView& host_plan,
                    Precision precision = Precision::kF32);

  // Benchmark floor, not used by the solver: the time in seconds (best of `reps`) that a plain
  // streaming kernel takes to read the current cost once on this device.
  double time_cost_read(int reps = 5);

  int device() const;
  // The stream all work is enqueued on.
  const CudaStream& stream() const;

 private:
  class Impl;
  Impl& impl() const;  // throws kNotCompiled without CUDA
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw
