// The sampled GW loop on a CUDA device (docs/architecture.md section 2), step for step the loop of
// gw_loop_cpu.cpp: same uniforms (Rng(seed, 1)), same providers and clamping on the host, same
// augmented-factor GEMM, EMA / fused blends, slack layout, warm-started Sinkhorn, momentum blend,
// stopping rules, progress callback and Result fields. Compiled into every build; without CUDA
// run_cuda_loop throws ErrorCode::kNotCompiled (the pattern of every CUDA class: one file, the
// device code under GW_HAS_CUDA).
//
// Where the data lives. Device, allocated once per solve (Real = float32 in mixed precision):
//   Lambda (n+1)(k+1) Real, T n k Real, T_new (n+1)(k+1) Real, [EMA of Lambda n k Real],
//   [fused feature cost n k Real], D_X n M and D_Y k M float32, the GEMM factors (n + k)(M + 2)
//   Real, per-row change / cost / mass (3n doubles), plus CudaSinkhorn's and the sampler's
//   scratch (O((n + k) + (n / 256) k) doubles). Host: the distance blocks (pinned, written by
//   the providers), a pinned staging buffer for the initial and final plans.
//   At 45k x 45k in float32 that is ~24 GB of device memory.
// Per iteration: the sampler draws M pairs from T on the device (2M uniforms up, 2M ids down);
// the providers compute D_X, D_Y on the host (two small H2D copies); the factor kernels and one
// cuBLAS GEMM write Lambda; CudaSinkhorn solves from the previous potentials; plan_to_device
// writes T_new; the blend kernel updates T with per-row partials, reduced on the device to
// (||dT||^2, <Lambda, T>), 16 bytes read back. Everything (the loop's kernels, cuBLAS, the sampler,
// CudaSinkhorn) runs on one gw::CudaStream, so no device-wide synchronization is needed. Host
// synchronizations per iteration: the anchors, Lambda before Sinkhorn (the pinned distance
// staging is rewritten by the providers next), Sinkhorn's own checks, and the totals -- the anchors
// must come back every iteration anyway, since the distance providers run on the host, so the
// stopping rule sees every iteration as on the CPU. The final plan comes back as float64 n x k
// (solve() computes matching, top-k and loss from it on the host): 8 n k bytes of host memory, 16
// GB at 45k x 45k.
//
// Determinism: no atomics in any reduction (fixed-order block reductions, cuBLAS on one stream),
// so the same seed on the same device and build reproduces the plan bitwise.
#include <vector>

#include "core/config.h"
#include "core/error.h"
#include "solver/sampled/sampled_impl.h"

#if GW_HAS_CUDA
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <exception>
#include <string>
#include <thread>
#include <type_traits>

#include "core/context.h"
#include "core/cuda/cuda_util.h"
#include "core/timer.h"
#include "sampling/cuda_sampling.h"
#include "sampling/sampling.h"
#include "sinkhorn/cuda_sinkhorn.h"
#include "sinkhorn/sinkhorn.h"
#include "solver/cuda/cublas_library.h"
#include "solver/sampled/cuda/gw_loop_kernels.cuh"
#include "solver/sampled/loop_driver_impl.h"

#define GW_CUBLAS_CHECK(call)                                                           \
  do {                                                                                  \
    const cublasStatus_t gw_cublas_status_ = (call);                                    \
    if (gw_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                   \
      GW_THROW(::gw::ErrorCode::kInternal,                                              \
               "cuBLAS call " #call " failed: "                                         \
                   << ::gw::detail::cublas_library().status_string(gw_cublas_status_)); \
    }                                                                                   \
  } while (0)

namespace gw::detail {

namespace {

using cuda::DeviceBuffer;
using cuda::PinnedBuffer;

// Elements per half of the double-buffered pinned staging buffer of the plan transfers.
constexpr std::size_t kStagingElements = std::size_t{1} << 23;
// Device memory left free beyond the loop's buffers (cuBLAS workspace, CUDA context growth).
constexpr double kHeadroomBytes = 512.0 * (1 << 20);

class CublasHandle {
 public:
  // Loads cuBLAS on the first handle of the process (cublas_library.h).
  explicit CublasHandle(cudaStream_t stream) : lib_(cublas_library()) {
    GW_CUBLAS_CHECK(lib_.create(&handle_));
    try {
      GW_CUBLAS_CHECK(lib_.set_stream(handle_, stream));
      // No TF32: the cost must match the CPU's float32 GEMM up to summation order.
      GW_CUBLAS_CHECK(lib_.set_math_mode(handle_, CUBLAS_DEFAULT_MATH));
    } catch (...) {
      lib_.destroy(handle_);
      throw;
    }
  }
  ~CublasHandle() {
    if (handle_ != nullptr) lib_.destroy(handle_);
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }
  const CublasLibrary& library() const { return lib_; }

 private:
  const CublasLibrary& lib_;
  cublasHandle_t handle_ = nullptr;
};

// out (n x k, row-major, row stride ldc) = left (n x inner, row-major) * right (k x inner,
// row-major)^T. Column-major cuBLAS sees row-major X as X^T, so it computes
// out^T (k x n) = right * left^T: op(A) = A^T on right's storage, op(B) = B on left's.
template <typename Real>
void gemm_rows(const CublasHandle& cublas,
               Index n,
               Index k,
               int inner,
               const Real* left,
               const Real* right,
               Real* out,
               Offset ldc) {
  const Real one = 1, zero = 0;
  const auto gemm = [&](auto fn) {
    GW_CUBLAS_CHECK(fn(cublas.get(),
                       CUBLAS_OP_T,
                       CUBLAS_OP_N,
                       k,
                       n,
                       inner,
                       &one,
                       right,
                       inner,
                       left,
                       inner,
                       &zero,
                       out,
                       static_cast<int>(ldc)));
  };
  if constexpr (std::is_same_v<Real, float>) {
    gemm(cublas.library().sgemm);
  } else {
    gemm(cublas.library().dgemm);
  }
}

template <typename Real>
class CudaLoop {
 public:
  CudaLoop(const PreparedProblem& problem, const Options& options)
      : pb_(problem),
        opt_(options),
        n_(problem.n),
        k_(problem.k),
        m_(options.max_anchors(problem.n, problem.k)),
        slack_(slack_layout(problem.n, problem.k, options)),
        rows_(n_ + (slack_.enabled ? 1 : 0)),
        cols_(k_ + (slack_.enabled ? 1 : 0)),
        gw_(options.fused_weight < 1.0),
        scope_(options.device),
        handle_(CudaStream::create(options.device)),
        stream_(cuda::stream_of(handle_)),
        sampler_(handle_),
        blas_(stream_),
        sinkhorn_(handle_) {
    const bool ema = opt_.lambda_ema > 0.0;
    // The fused blend inside the GW loop needs C_feat on the device; plain OT copies it straight
    // into Lambda.
    const bool feature_on_device = gw_ && opt_.fused_weight > 0.0 && pb_.feature_cost != nullptr;
    check_device_memory(ema, feature_on_device);

    const auto block = static_cast<std::size_t>(rows_) * cols_;
    const auto real_block = static_cast<std::size_t>(n_) * k_;
    lambda_.ensure(block);
    plan_new_.ensure(block);
    plan_.ensure(real_block);
    if (ema) lambda_ema_.ensure(real_block);
    row_change_.ensure(n_);
    row_cost_.ensure(n_);
    row_mass_.ensure(n_);
    totals_.ensure(2);
    totals_host_.ensure(2);
    if (gw_) {
      dx_.ensure(static_cast<std::size_t>(n_) * m_);
      dy_.ensure(static_cast<std::size_t>(k_) * m_);
      dx_host_.ensure(static_cast<std::size_t>(n_) * m_);
      dy_host_.ensure(static_cast<std::size_t>(k_) * m_);
      left_.ensure(static_cast<std::size_t>(n_) * (m_ + 2));
      right_.ensure(static_cast<std::size_t>(k_) * (m_ + 2));
      sampler_.reserve(n_, m_);
    }
    if (pb_.feature_cost != nullptr) {
      const auto& values = pb_.feature_cost->values;
      max_feature_cost_ = *std::max_element(values.begin(), values.end());
    }
    if (feature_on_device) {
      feature_.ensure(real_block);
      upload_rows(pb_.feature_cost->values.data(), n_, k_, feature_.get(), k_, nullptr);
    }

    a_.assign(problem.p.begin(), problem.p.end());
    b_.assign(problem.q.begin(), problem.q.end());
    if (slack_.enabled) {
      a_.push_back(slack_.row_mass);
      b_.push_back(slack_.col_mass);
    }
    sinkhorn_.reserve(rows_, cols_, /*reserve_cost=*/false);
    sinkhorn_options_.max_iterations = opt_.sinkhorn_max_iterations;
    sinkhorn_options_.tolerance = opt_.sinkhorn_tolerance;
    sinkhorn_options_.check_every = opt_.sinkhorn_check_every;
    sinkhorn_options_.rho_a = opt_.rho_a;
    sinkhorn_options_.rho_b = opt_.rho_b;
    sinkhorn_options_.precision = precision();
    sinkhorn_options_.threads = opt_.threads;
  }

  // T_0 and its row masses on the device: the given plan (rounded to Real, row masses of the
  // rounded values as on the CPU), the distance-profile plan (built on the device; phase "init"),
  // or p q^T. Then Sinkhorn is bound to Lambda with zero potentials, as the CPU loop starts.
  void start(std::vector<double> initial_plan, Result& result) {
    if (!initial_plan.empty()) {
      ScopedPhase phase(result.timings, "upload");
      std::vector<double> masses(n_);
      upload_rows(initial_plan.data(), n_, k_, plan_.get(), k_, masses.data());
      std::vector<double>().swap(initial_plan);
      GW_CUDA_CHECK(cudaMemcpyAsync(row_mass_.get(),
                                    masses.data(),
                                    masses.size() * sizeof(double),
                                    cudaMemcpyHostToDevice,
                                    stream_));
      GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    } else if (pb_.source != nullptr && opt_.initial_plan == InitialPlan::kDistanceProfiles) {
      ScopedPhase phase(result.timings, "init");
      start_from_distance_profiles();
    } else {
      start_from_product();
    }
    sinkhorn_.use_device_cost(CostView(static_cast<const Real*>(lambda_.get()), rows_, cols_));
    sinkhorn_.reset_potentials();  // the profile solve may have left potentials of this shape
    sinkhorn_.set_marginals(a_, b_);
    if (!pb_.potential_f.empty()) sinkhorn_.set_potentials(pb_.potential_f, pb_.potential_g);
  }

  void run(Result& result) {
    if (!gw_) {
      run_plain_ot(result);
    } else {
      // Same bound as the CPU loop: max-normalized distances keep Lambda <= 1 (the EMA too); the
      // fused blend stays below (1 - alpha_f) + alpha_f max C_feat. The GEMM writes only the
      // real block, so the slack entries are filled once.
      const double alpha_f = opt_.fused_weight;
      const bool fused = alpha_f > 0.0 && pb_.feature_cost != nullptr;
      fill_slack(fused ? (1.0 - alpha_f) + alpha_f * max_feature_cost_ : 1.0);
      run_gw_iterations(*this, pb_, opt_, result);
    }
  }

  std::size_t plan_size() const { return static_cast<std::size_t>(n_) * k_; }

  // T (n x k Real on the device) -> plan_out (n x k float64 on the host), through the
  // double-buffered staging buffer: the widening of one chunk overlaps the copy of the next.
  // plan_out normally arrives sized (HostPlanAllocation below).
  void download_plan(std::vector<double>& plan_out) {
    const std::size_t total = static_cast<std::size_t>(n_) * k_;
    const std::size_t half = std::min(total, kStagingElements);
    staging_.ensure(2 * half);
    plan_out.resize(total);
    const std::size_t chunks = (total + half - 1) / half;
    auto enqueue = [&](std::size_t c) {
      const std::size_t offset = c * half;
      const std::size_t count = std::min(half, total - offset);
      GW_CUDA_CHECK(cudaMemcpyAsync(staging_.get() + (c % 2) * half,
                                    plan_.get() + offset,
                                    count * sizeof(Real),
                                    cudaMemcpyDeviceToHost,
                                    stream_));
    };
    auto widen = [&](std::size_t c) {
      const std::size_t offset = c * half;
      const auto count = static_cast<std::ptrdiff_t>(std::min(half, total - offset));
      const Real* in = staging_.get() + (c % 2) * half;
      double* out = plan_out.data() + offset;
#pragma omp parallel for schedule(static)
      for (std::ptrdiff_t e = 0; e < count; ++e) out[e] = static_cast<double>(in[e]);
    };
    enqueue(0);
    for (std::size_t c = 1; c < chunks; ++c) {
      GW_CUDA_CHECK(cudaStreamSynchronize(stream_));  // chunk c - 1 has arrived
      enqueue(c);
      widen(c - 1);
    }
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    widen(chunks - 1);
  }

  // The potentials the loop ended with (for a continued run).
  void take_potentials(std::vector<double>& f, std::vector<double>& g) const {
    f.resize(rows_);
    g.resize(cols_);
    sinkhorn_.download_potentials(f, g);
  }

  // The steps run_gw_iterations (loop_driver_impl.h) drives. The anchors come back to the host
  // every iteration (the providers run there), so the totals are read back every iteration too.
  AnchorPairs sample(std::span<const double> uniforms) {
    return sampler_.sample(plan_.get(), n_, k_, k_, row_mass_.get(), uniforms);
  }
  std::span<float> source_block(int m) { return dx_host_.span(static_cast<std::size_t>(n_) * m); }
  std::span<float> target_block(int m) { return dy_host_.span(static_cast<std::size_t>(k_) * m); }
  void build_cost(int m, bool precise) { fill_gw_cost(m, precise); }
  SinkhornResult sinkhorn(double epsilon, int max_iterations, double tolerance) {
    SinkhornOptions inner = sinkhorn_options_;
    inner.max_iterations = max_iterations;
    inner.tolerance = tolerance;
    return sinkhorn_.solve(epsilon, inner);
  }
  IterationTotals plan_and_blend(double epsilon) {
    // T_new is written on the loop's own stream (shared with CudaSinkhorn): the blend sees it.
    sinkhorn_.plan_to_device(epsilon, PlanView(plan_new_.get(), rows_, cols_), precision());
    return blend(opt_.momentum);
  }

 private:
  static constexpr Precision precision() {
    return std::is_same_v<Real, float> ? Precision::kF32 : Precision::kF64;
  }

  void start_from_product() {
    DeviceBuffer<double> p(n_), q(k_);
    GW_CUDA_CHECK(cudaMemcpyAsync(
        p.get(), pb_.p.data(), pb_.p.size() * sizeof(double), cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(cudaMemcpyAsync(
        q.get(), pb_.q.data(), pb_.q.size() * sizeof(double), cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(cuda::launch_outer_product(
        p.get(), q.get(), n_, k_, precision(), plan_.get(), row_mass_.get(), stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before p and q are freed
  }

  // distance_profile_plan (profile_init.cpp) with its n x k steps on the device: the profiles
  // come from the host (provider queries and sorts, O((n + k) S log S)); the cost
  // C_ij = |P_i - R_j|^2 / Q is one GEMM over augmented factors (as for Lambda), clamped at 0,
  // written into the T_new buffer (unused until the first iteration); Sinkhorn at
  // profile_epsilon x mean(C) writes T_0 directly; T_0 is then normalized to mass 1.
  void start_from_distance_profiles() {
    const DistanceProfiles profiles = distance_profile_features(pb_, opt_);
    const int q = profiles.quantiles;
    DeviceBuffer<float> source(profiles.source.size()), target(profiles.target.size());
    DeviceBuffer<float> left(static_cast<std::size_t>(n_) * (q + 2));
    DeviceBuffer<float> right(static_cast<std::size_t>(k_) * (q + 2));
    GW_CUDA_CHECK(cudaMemcpyAsync(source.get(),
                                  profiles.source.data(),
                                  profiles.source.size() * sizeof(float),
                                  cudaMemcpyHostToDevice,
                                  stream_));
    GW_CUDA_CHECK(cudaMemcpyAsync(target.get(),
                                  profiles.target.data(),
                                  profiles.target.size() * sizeof(float),
                                  cudaMemcpyHostToDevice,
                                  stream_));
    GW_CUDA_CHECK(cuda::launch_augmented_factors(
        source.get(), n_, q, /*left=*/true, Precision::kF32, left.get(), stream_));
    GW_CUDA_CHECK(cuda::launch_augmented_factors(
        target.get(), k_, q, /*left=*/false, Precision::kF32, right.get(), stream_));
    // Device memory is untyped: the T_new buffer holds at least n k floats in either precision.
    float* cost = reinterpret_cast<float*>(plan_new_.get());
    gemm_rows(blas_, n_, k_, q + 2, left.get(), right.get(), cost, k_);
    GW_CUDA_CHECK(cuda::launch_clamp_rows(cost, n_, k_, row_change_.get(), stream_));
    const double sum = device_sum(row_change_.get());
    const double mean = sum / (static_cast<double>(n_) * k_);
    if (!(mean > 0.0)) {  // every profile alike: nothing to prefer, start from p q^T
      start_from_product();
      return;
    }
    const double epsilon = opt_.profile_epsilon * mean;
    sinkhorn_.use_device_cost(CostView(static_cast<const float*>(cost), n_, k_));
    sinkhorn_.reset_potentials();
    sinkhorn_.set_marginals(pb_.p, pb_.q);
    SinkhornOptions profile_options;
    profile_options.max_iterations = opt_.profile_sinkhorn_iterations;
    profile_options.tolerance = 0.0;
    profile_options.threads = opt_.threads;
    sinkhorn_.solve(epsilon, profile_options);
    sinkhorn_.plan_to_device(epsilon, PlanView(plan_.get(), n_, k_), Precision::kF32);
    GW_CUDA_CHECK(
        cuda::launch_plan_row_sums(plan_.get(), precision(), n_, k_, row_mass_.get(), stream_));
    const double mass = device_sum(row_mass_.get());
    GW_CHECK_CODE(mass > 0.0 && std::isfinite(mass),
                  ErrorCode::kInternal,
                  "distance-profile initial plan has mass " << mass);
    GW_CUDA_CHECK(
        cuda::launch_divide_plan(plan_.get(), precision(), n_, k_, mass, row_mass_.get(), stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Sum of n_ doubles on the device (fixed order), read back.
  double device_sum(const double* values) {
    GW_CUDA_CHECK(cuda::launch_pair_sums(values, values, n_, totals_.get(), stream_));
    GW_CUDA_CHECK(cudaMemcpyAsync(
        totals_host_.get(), totals_.get(), 2 * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return totals_host_.get()[0];
  }

  // fused_weight == 1: Lambda = C_feat never changes, so the loop reduces to one Sinkhorn solve.
  void run_plain_ot(Result& result) {
    Stopwatch watch;
    {
      ScopedPhase phase(result.timings, "cost");
      const DenseMatrix<double>& c = *pb_.feature_cost;
      upload_rows(c.values.data(), n_, k_, lambda_.get(), cols_, nullptr);
      double max_cost = 0.0;
      for (double v : c.values) max_cost = std::max(max_cost, v);
      fill_slack(max_cost);
      GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    SinkhornResult inner;
    {
      ScopedPhase phase(result.timings, "sinkhorn");
      inner =
          sinkhorn(opt_.epsilon, opt_.polish_sinkhorn_iterations, opt_.polish_sinkhorn_tolerance);
      sinkhorn_.plan_to_device(opt_.epsilon, PlanView(plan_new_.get(), rows_, cols_), precision());
    }
    record_plain_ot(inner, blend(1.0), opt_.epsilon, watch.seconds(), result);
  }

  // Lambda = a 1^T + 1 b^T - (2/M) D_X D_Y^T as one GEMM over the augmented factors
  // [D_X | a | 1] (n x (M+2)) and [-(2/M) D_Y | 1 | b] (k x (M+2)), then the EMA / fused blends.
  // Returns with Lambda complete (the pinned staging blocks dx_host_ / dy_host_ may be rewritten).
  // `precise` (polishing iterations): the cost from many anchors is used as it is, neither mixed
  // with nor fed into the EMA, whose history is noisier than it.
  void fill_gw_cost(int m, bool precise) {
    const std::size_t dx_bytes = static_cast<std::size_t>(n_) * m * sizeof(float);
    const std::size_t dy_bytes = static_cast<std::size_t>(k_) * m * sizeof(float);
    GW_CUDA_CHECK(
        cudaMemcpyAsync(dx_.get(), dx_host_.get(), dx_bytes, cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(
        cudaMemcpyAsync(dy_.get(), dy_host_.get(), dy_bytes, cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(cuda::launch_augmented_factors(
        dx_.get(), n_, m, /*left=*/true, precision(), left_.get(), stream_));
    GW_CUDA_CHECK(cuda::launch_augmented_factors(
        dy_.get(), k_, m, /*left=*/false, precision(), right_.get(), stream_));
    gemm_rows(blas_, n_, k_, m + 2, left_.get(), right_.get(), lambda_.get(), cols_);

    const double beta = opt_.lambda_ema;
    const bool ema = beta > 0.0 && !precise;
    const double alpha_f = opt_.fused_weight;
    const Real* feature = alpha_f > 0.0 && pb_.feature_cost != nullptr ? feature_.get() : nullptr;
    if (ema || feature != nullptr) {
      GW_CUDA_CHECK(cuda::launch_cost_blends(lambda_.get(),
                                             precision(),
                                             n_,
                                             k_,
                                             cols_,
                                             ema ? lambda_ema_.get() : nullptr,
                                             /*first=*/!ema_started_,
                                             beta,
                                             feature,
                                             alpha_f,
                                             stream_));
      ema_started_ = ema_started_ || ema;
    }
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Slack entries (docs/architecture.md section 2), as in the CPU loop: soft slack has cost
  // 100 max(1, max Lambda) towards the real points and 0 in the corner; exact partial transport
  // the reverse.
  void fill_slack(double max_lambda) {
    if (!slack_.enabled) return;
    const double big = static_cast<double>(static_cast<Real>(100.0 * std::max(1.0, max_lambda)));
    const double edge = slack_.exact_partial ? 0.0 : big;
    const double corner = slack_.exact_partial ? big : 0.0;
    GW_CUDA_CHECK(
        cuda::launch_fill_slack(lambda_.get(), precision(), n_, k_, cols_, edge, corner, stream_));
  }

  // T <- (1 - alpha) T + alpha T_new on the real block, with the row masses left on the device
  // for the next sampling; returns the iteration's totals (one 16-byte read-back).
  IterationTotals blend(double alpha) {
    GW_CUDA_CHECK(cuda::launch_momentum_blend(plan_.get(),
                                              plan_new_.get(),
                                              lambda_.get(),
                                              precision(),
                                              n_,
                                              k_,
                                              cols_,
                                              alpha,
                                              row_change_.get(),
                                              row_cost_.get(),
                                              row_mass_.get(),
                                              stream_));
    GW_CUDA_CHECK(
        cuda::launch_pair_sums(row_change_.get(), row_cost_.get(), n_, totals_.get(), stream_));
    GW_CUDA_CHECK(cudaMemcpyAsync(
        totals_host_.get(), totals_.get(), 2 * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    IterationTotals totals;
    totals.error = std::sqrt(totals_host_.get()[0]);
    totals.cost = totals_host_.get()[1];
    return totals;
  }

  // Copies a host float64 matrix (rows x cols, contiguous) into device rows of Real with row
  // stride dst_stride, rounding on the host into a double-buffered pinned staging buffer (the
  // conversion of one chunk overlaps the copy of the previous one). When row_mass is given, it
  // receives each row's sum of the rounded values, summed in column order as on the CPU.
  void upload_rows(
      const double* src, Index rows, Index cols, Real* dst, Offset dst_stride, double* row_mass) {
    const Index chunk_rows = static_cast<Index>(
        std::max<std::size_t>(1, kStagingElements / static_cast<std::size_t>(cols)));
    const std::size_t half = static_cast<std::size_t>(chunk_rows) * cols;
    staging_.ensure(2 * half);
    int chunk = 0;
    for (Index r0 = 0; r0 < rows; r0 += chunk_rows, ++chunk) {
      const Index r1 = std::min<Index>(rows, r0 + chunk_rows);
      Real* buffer = staging_.get() + (chunk % 2) * half;
      // The copy that last read this half (chunk - 2) finished at the previous iteration's sync.
#pragma omp parallel for schedule(static)
      for (Index i = r0; i < r1; ++i) {
        const double* in = src + static_cast<std::size_t>(i) * cols;
        Real* out = buffer + static_cast<std::size_t>(i - r0) * cols;
        double mass = 0.0;
        for (Index j = 0; j < cols; ++j) {
          out[j] = static_cast<Real>(in[j]);
          mass += static_cast<double>(out[j]);
        }
        if (row_mass != nullptr) row_mass[i] = mass;
      }
      GW_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the previous chunk's copy
      GW_CUDA_CHECK(cudaMemcpy2DAsync(dst + static_cast<std::size_t>(r0) * dst_stride,
                                      static_cast<std::size_t>(dst_stride) * sizeof(Real),
                                      buffer,
                                      static_cast<std::size_t>(cols) * sizeof(Real),
                                      static_cast<std::size_t>(cols) * sizeof(Real),
                                      static_cast<std::size_t>(r1 - r0),
                                      cudaMemcpyHostToDevice,
                                      stream_));
    }
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Throws kUnsupported, with the numbers, when the loop's buffers cannot fit in free device
  // memory (better than a cudaMalloc failure halfway through the setup).
  void check_device_memory(bool ema, bool feature_on_device) const {
    const double real = sizeof(Real);
    const double block = static_cast<double>(rows_) * cols_;
    const double real_block = static_cast<double>(n_) * k_;
    double bytes = 2.0 * block * real +
                   real_block * real * (1.0 + (ema ? 1.0 : 0.0) + (feature_on_device ? 1.0 : 0.0));
    if (gw_) {
      bytes += (static_cast<double>(n_) + k_) * (m_ * 4.0 + (m_ + 2.0) * real);
    }
    const double column_tiles = std::ceil(rows_ / 256.0);
    bytes += 8.0 * (2.0 * column_tiles * cols_ + 12.0 * (rows_ + cols_));  // CudaSinkhorn
    bytes += 8.0 * 6.0 * n_;                                               // rows, sampler
    std::size_t free_bytes = 0, total_bytes = 0;
    GW_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const double gib = 1024.0 * 1024.0 * 1024.0;
    GW_CHECK_CODE(bytes + kHeadroomBytes <= static_cast<double>(free_bytes),
                  ErrorCode::kUnsupported,
                  "the CUDA loop needs about "
                      << bytes / gib << " GiB of device memory for a " << n_ << " x " << k_
                      << " problem in " << to_string(precision()) << ", but CUDA device "
                      << opt_.device << " has " << free_bytes / gib << " GiB free (of "
                      << total_bytes / gib
                      << "); use --precision f32, a smaller problem, or --backend cpu");
  }

  const PreparedProblem& pb_;
  const Options& opt_;
  const Index n_, k_;
  const int m_;  // the most anchors of any iteration (buffer sizes)
  const SlackLayout slack_;
  const Index rows_, cols_;  // augmented shape
  const bool gw_;
  cuda::DeviceGuard scope_;  // options.device is current while the loop lives
  CudaStream handle_;        // the one stream of the loop's kernels, cuBLAS, sampler and Sinkhorn
  cudaStream_t stream_;
  CudaAnchorSampler sampler_;
  CublasHandle blas_;
  CudaSinkhorn sinkhorn_;
  SinkhornOptions sinkhorn_options_;
  DeviceBuffer<Real> lambda_, plan_, plan_new_, lambda_ema_, feature_, left_, right_;
  DeviceBuffer<float> dx_, dy_;
  DeviceBuffer<double> row_change_, row_cost_, row_mass_, totals_;
  PinnedBuffer<float> dx_host_, dy_host_;
  PinnedBuffer<double> totals_host_;
  PinnedBuffer<Real> staging_;
  bool ema_started_ = false;
  double max_feature_cost_ = 0.0;
  std::vector<double> a_, b_;
};

// Sizes the host plan (8 n k bytes) on a host thread of its own while the device iterates. Done
// in the download instead, the value-initializing resize faults in and zeroes every page on one
// thread: 2.4-4.3 s of an 11 s solve at 20,000 x 25,000 on an H100 host (4 GB), longer than the
// copy itself. The loop's host work (the distance providers) runs beside it on the other cores.
// The plan is touched by nobody else until wait(); the destructor joins, so an exception from the
// loop never leaves the thread writing into a vector the caller frees.
class HostPlanAllocation {
 public:
  HostPlanAllocation(std::vector<double>& plan, std::size_t size) {
    if (plan.size() == size) return;
    worker_ = std::thread([&plan, size, this] {
      try {
        plan.resize(size);
      } catch (...) {
        error_ = std::current_exception();
      }
    });
  }
  HostPlanAllocation(const HostPlanAllocation&) = delete;
  HostPlanAllocation& operator=(const HostPlanAllocation&) = delete;
  ~HostPlanAllocation() {
    if (worker_.joinable()) worker_.join();
  }
  // Rethrows the resize's std::bad_alloc, if any, in the caller's thread.
  void wait() {
    if (worker_.joinable()) worker_.join();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::thread worker_;
  std::exception_ptr error_;
};

// Phases beyond the CPU loop's: "device_setup" (handles, buffers), "upload" (a given T_0),
// "init" (the distance-profile T_0 built on the device), "download" (the final plan).
template <typename Real>
void run_loop(PreparedProblem& problem,
              std::vector<double> initial_plan,
              const Options& options,
              std::vector<double>& plan,
              Result& result) {
  Stopwatch setup;
  CudaLoop<Real> loop(problem, options);
  result.timings.add("device_setup", setup.seconds());
  HostPlanAllocation host_plan(plan, loop.plan_size());
  loop.start(std::move(initial_plan), result);
  loop.run(result);
  {
    ScopedPhase phase(result.timings, "download");
    host_plan.wait();
    loop.download_plan(plan);
  }
  loop.take_potentials(problem.potential_f, problem.potential_g);
}

}  // namespace

void run_cuda_loop(PreparedProblem& problem,
                   const Options& options,
                   std::vector<double>& plan,
                   Result& result) {
  require_backend(Backend::kCuda, options.device);
  result.backend = Backend::kCuda;
  // Host threads still run the distance providers and the plan conversions.
  result.threads = available_threads();
  std::vector<double> initial_plan = std::move(problem.initial_plan);
  problem.initial_plan.clear();
  if (options.precision == Precision::kF64) {
    run_loop<double>(problem, std::move(initial_plan), options, plan, result);
  } else {
    run_loop<float>(problem, std::move(initial_plan), options, plan, result);
  }
}

}  // namespace gw::detail

#else  // !GW_HAS_CUDA

namespace gw::detail {

void run_cuda_loop(PreparedProblem&, const Options&, std::vector<double>&, Result&) {
  GW_THROW(ErrorCode::kNotCompiled,
           "backend 'cuda' requested but this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON or use --backend cpu");
}

}  // namespace gw::detail

#endif  // GW_HAS_CUDA
