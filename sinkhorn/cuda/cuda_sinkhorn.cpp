// gw::CudaSinkhorn: device buffers and the iteration loop around the launchers of
// sinkhorn_kernels.cu. Compiled into every build; without CUDA every entry point throws
// ErrorCode::kNotCompiled.
#include "sinkhorn/cuda_sinkhorn.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"
#include "sinkhorn/sinkhorn_common_impl.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda/cuda_util.h"
#include "sinkhorn/cuda/sinkhorn_kernels.cuh"
#include "sinkhorn/cuda/solve_check.h"
#endif

namespace gw {

#if GW_HAS_CUDA

namespace {

using detail::kInf;

std::size_t element_size(Precision type) {
  return type == Precision::kF32 ? sizeof(float) : sizeof(double);
}

}  // namespace

class CudaSinkhorn::Impl {
 public:
  explicit Impl(const CudaStream& stream)
      : handle_(stream), device_(stream.device()), stream_(cuda::stream_of(stream)) {
    cuda::DeviceGuard guard(device_);
    check_.allocate();
  }

  ~Impl() {
    try {
      cuda::DeviceGuard guard(device_);
      handle_.wait_before_release();  // queued kernels may still use the buffers
      check_.release();
    } catch (...) {  // a destructor must not throw
    }
  }

  void reserve(Index n, Index k, bool reserve_cost, Precision cost_type) {
    GW_CHECK(n >= 1 && k >= 1,
             "CudaSinkhorn::reserve: sizes must be >= 1, got " << n << " x " << k);
    cuda::DeviceGuard guard(device_);
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));  // growing frees what queued kernels may read
    ensure_buffers(n, k);
    if (reserve_cost) {
      owned_cost_.ensure(static_cast<std::size_t>(n) * k * element_size(cost_type));
    }
  }

  void upload_cost(const CostView& host) {
    detail::check_cost_shape("CudaSinkhorn::upload_cost", host);
    cuda::DeviceGuard guard(device_);
    set_shape(host.rows(), host.cols());
    const std::size_t elem = element_size(host.element_type());
    // set_shape synchronized the stream only on a shape change; growing the cost frees the old
    // one, which queued kernels may still read.
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    owned_cost_.ensure(static_cast<std::size_t>(n_) * k_ * elem);
    GW_CUDA_CHECK(cudaMemcpy2DAsync(owned_cost_.get(),
                                    static_cast<std::size_t>(k_) * elem,
                                    host.data(),
                                    static_cast<std::size_t>(host.row_stride()) * elem,
                                    static_cast<std::size_t>(k_) * elem,
                                    static_cast<std::size_t>(n_),
                                    cudaMemcpyHostToDevice,
                                    stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    cost_ = host.element_type() == Precision::kF32
                ? CostView(owned_cost_.as<const float>(), n_, k_)
                : CostView(owned_cost_.as<const double>(), n_, k_);
  }

  void use_device_cost(const CostView& device_cost) {
    detail::check_cost_shape("CudaSinkhorn::use_device_cost", device_cost);
    cuda::DeviceGuard guard(device_);
    cuda::check_device_pointer(device_cost.data(),
                               device_,
                               "CudaSinkhorn: the cost passed to use_device_cost",
                               "use the host variant instead");
    set_shape(device_cost.rows(), device_cost.cols());
    cost_ = device_cost;
  }

  Index rows() const { return n_; }
  Index cols() const { return k_; }

  void set_marginals(std::span<const double> a, std::span<const double> b) {
    require_cost("set_marginals");
    GW_CHECK(a.size() == static_cast<std::size_t>(n_) && b.size() == static_cast<std::size_t>(k_),
             "CudaSinkhorn::set_marginals: got " << a.size() << " and " << b.size()
                                                 << " entries for a " << n_ << " x " << k_
                                                 << " cost");
    mass_a_ = detail::checked_mass("CudaSinkhorn::set_marginals", a, "a");
    mass_b_ = detail::checked_mass("CudaSinkhorn::set_marginals", b, "b");
    cuda::DeviceGuard guard(device_);
    GW_CUDA_CHECK(
        cudaMemcpyAsync(a_.get(), a.data(), a.size_bytes(), cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(
        cudaMemcpyAsync(b_.get(), b.data(), b.size_bytes(), cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    marginals_set_ = true;
  }

  void set_potentials(std::span<const double> f, std::span<const double> g) {
    require_cost("set_potentials");
    GW_CHECK(f.size() == static_cast<std::size_t>(n_) && g.size() == static_cast<std::size_t>(k_),
             "CudaSinkhorn::set_potentials: got " << f.size() << " and " << g.size()
                                                  << " entries for a " << n_ << " x " << k_
                                                  << " cost");
    detail::check_potentials("CudaSinkhorn::set_potentials", f, "f");
    detail::check_potentials("CudaSinkhorn::set_potentials", g, "g");
    // On the device, -inf marks zero mass (the kernels skip those rows / columns).
    std::vector<double> host_f(f.begin(), f.end()), host_g(g.begin(), g.end());
    for (double& x : host_f) x = x <= 0.5 * kZeroMassPotential ? -kInf : x;
    for (double& x : host_g) x = x <= 0.5 * kZeroMassPotential ? -kInf : x;
    cuda::DeviceGuard guard(device_);
    GW_CUDA_CHECK(cudaMemcpyAsync(
        f_.get(), host_f.data(), host_f.size() * sizeof(double), cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(cudaMemcpyAsync(
        g_.get(), host_g.data(), host_g.size() * sizeof(double), cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void reset_potentials() {
    require_cost("reset_potentials");
    cuda::DeviceGuard guard(device_);
    zero_potentials();
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  SinkhornResult solve(double epsilon, const SinkhornOptions& options) {
    const char* who = "CudaSinkhorn::solve";
    detail::check_options(who, options);
    detail::check_epsilon(who, epsilon);
    require_cost("solve");
    GW_CHECK(marginals_set_,
             who << ": no marginals for the current " << n_ << " x " << k_
                 << " cost; call set_marginals first");
    detail::check_balance(who, mass_a_, mass_b_, options);
    cuda::DeviceGuard guard(device_);

    cuda::SinkhornParams params;
    params.n = n_;
    params.k = k_;
    params.cost_stride = cost_.row_stride();
    params.epsilon = epsilon;
    params.inv_eps = 1.0 / epsilon;
    params.tau_a = detail::damping(options.rho_a, epsilon);
    params.tau_b = detail::damping(options.rho_b, epsilon);
    params.rho_a = options.rho_a;
    const Precision compute = options.precision;

    GW_CUDA_CHECK(cuda::launch_scale_potentials(
        g_.get(), k_, params.inv_eps, compute, gt_.get(), nullptr, stream_));
    check_.reset(stream_);

    SinkhornResult result;
    result.backend = Backend::kCuda;
    result.threads = 0;
    for (int t = 0;; ++t) {
      const bool check = detail::is_check_iteration(t, options);
      GW_CUDA_CHECK(cuda::launch_row_update(cost_.data(),
                                            cost_.element_type(),
                                            compute,
                                            params,
                                            a_.get(),
                                            f_.get(),
                                            gt_.get(),
                                            f_new_.get(),
                                            ft_.get(),
                                            fcorr_.get(),
                                            check ? row_residual_.get() : nullptr,
                                            check_.status(),
                                            stream_));
      if (check) {
        GW_CUDA_CHECK(cuda::launch_sum(row_residual_.get(), n_, check_.error(), stream_));
        const double error = check_.read(stream_, "CudaSinkhorn::solve", "entry", "");
        if (detail::finish_check(t, error, options, result)) break;
      }
      f_.swap(f_new_);
      GW_CUDA_CHECK(cuda::launch_column_update(cost_.data(),
                                               cost_.element_type(),
                                               compute,
                                               params,
                                               b_.get(),
                                               ft_.get(),
                                               fcorr_.get(),
                                               partial_max_.get(),
                                               partial_sum_.get(),
                                               g_.get(),
                                               gt_.get(),
                                               check_.status(),
                                               stream_));
    }
    return result;
  }

  void download_potentials(std::span<double> f, std::span<double> g) const {
    require_cost("download_potentials");
    GW_CHECK(f.size() == static_cast<std::size_t>(n_) && g.size() == static_cast<std::size_t>(k_),
             "CudaSinkhorn::download_potentials: got " << f.size() << " and " << g.size()
                                                       << " entries for a " << n_ << " x " << k_
                                                       << " cost");
    cuda::DeviceGuard guard(device_);
    GW_CUDA_CHECK(
        cudaMemcpyAsync(f.data(), f_.get(), f.size_bytes(), cudaMemcpyDeviceToHost, stream_));
    GW_CUDA_CHECK(
        cudaMemcpyAsync(g.data(), g_.get(), g.size_bytes(), cudaMemcpyDeviceToHost, stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (double& x : f) x = x == -kInf ? kZeroMassPotential : x;
    for (double& x : g) x = x == -kInf ? kZeroMassPotential : x;
  }

  void plan_to_device(double epsilon, const PlanView& plan, Precision precision) {
    check_plan(epsilon, plan, "plan_to_device");
    cuda::DeviceGuard guard(device_);
    cuda::check_device_pointer(plan.data(),
                               device_,
                               "CudaSinkhorn: the plan passed to plan_to_device",
                               "use the host variant instead");
    launch_plan(epsilon, plan.data(), plan.element_type(), plan.row_stride(), precision);
  }

  void plan_to_host(double epsilon, const PlanView& plan, Precision precision) {
    check_plan(epsilon, plan, "plan_to_host");
    cuda::DeviceGuard guard(device_);
    const std::size_t elem = element_size(plan.element_type());
    plan_scratch_.ensure(static_cast<std::size_t>(n_) * k_ * elem);
    launch_plan(epsilon, plan_scratch_.get(), plan.element_type(), k_, precision);
    GW_CUDA_CHECK(cudaMemcpy2DAsync(plan.data(),
                                    static_cast<std::size_t>(plan.row_stride()) * elem,
                                    plan_scratch_.get(),
                                    static_cast<std::size_t>(k_) * elem,
                                    static_cast<std::size_t>(k_) * elem,
                                    static_cast<std::size_t>(n_),
                                    cudaMemcpyDeviceToHost,
                                    stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  double time_cost_read(int reps) {
    require_cost("time_cost_read");
    GW_CHECK(reps >= 1, "CudaSinkhorn::time_cost_read: reps must be >= 1, got " << reps);
    cuda::DeviceGuard guard(device_);
    sink_.ensure(1);
    cudaEvent_t start = nullptr, stop = nullptr;
    GW_CUDA_CHECK(cudaEventCreate(&start));
    GW_CUDA_CHECK(cudaEventCreate(&stop));
    float best_ms = 0.0f;
    try {
      for (int rep = 0; rep <= reps; ++rep) {  // rep 0 warms up
        GW_CUDA_CHECK(cudaEventRecord(start, stream_));
        GW_CUDA_CHECK(cuda::launch_read_cost(
            cost_.data(), cost_.element_type(), n_, k_, cost_.row_stride(), sink_.get(), stream_));
        GW_CUDA_CHECK(cudaEventRecord(stop, stream_));
        GW_CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        GW_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        if (rep == 1 || (rep > 1 && ms < best_ms)) best_ms = ms;
      }
    } catch (...) {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
      throw;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return 1e-3 * best_ms;
  }

  int device() const { return device_; }
  const CudaStream& stream() const { return handle_; }

 private:
  void ensure_buffers(Index n, Index k) {
    const auto nn = static_cast<std::size_t>(n);
    const auto kk = static_cast<std::size_t>(k);
    a_.ensure(nn);
    b_.ensure(kk);
    f_.ensure(nn);
    f_new_.ensure(nn);
    g_.ensure(kk);
    ft_.ensure(nn);
    fcorr_.ensure(nn);
    gt_.ensure(kk);
    row_residual_.ensure(nn);
    const std::size_t partials = static_cast<std::size_t>(cuda::column_row_tiles(n)) * kk;
    partial_max_.ensure(partials);
    partial_sum_.ensure(partials);
  }

  // A new shape invalidates the potentials and marginals of the old one.
  void set_shape(Index n, Index k) {
    if (n == n_ && k == k_) return;
    // Growing frees buffers that queued kernels may still read (cuda_util.h's rule).
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    ensure_buffers(n, k);
    n_ = n;
    k_ = k;
    marginals_set_ = false;
    zero_potentials();
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void zero_potentials() {
    GW_CUDA_CHECK(
        cudaMemsetAsync(f_.get(), 0, static_cast<std::size_t>(n_) * sizeof(double), stream_));
    GW_CUDA_CHECK(
        cudaMemsetAsync(g_.get(), 0, static_cast<std::size_t>(k_) * sizeof(double), stream_));
  }

  void require_cost(const char* what) const {
    GW_CHECK(
        cost_.data() != nullptr,
        "CudaSinkhorn::" << what << ": no cost yet; call upload_cost or use_device_cost first");
  }

  void check_plan(double epsilon, const PlanView& plan, const char* what) const {
    require_cost(what);
    detail::check_epsilon("CudaSinkhorn::plan", epsilon);
    GW_CHECK(plan.data() != nullptr,
             "CudaSinkhorn::" << what << ": the plan view has no data pointer");
    GW_CHECK(plan.rows() == n_ && plan.cols() == k_,
             "CudaSinkhorn::" << what << ": the plan is " << plan.rows() << " x " << plan.cols()
                              << " but the cost is " << n_ << " x " << k_);
    GW_CHECK(plan.row_stride() >= plan.cols(),
             "CudaSinkhorn::" << what << ": the plan's row_stride (" << plan.row_stride()
                              << ") is smaller than its column count (" << plan.cols() << ")");
  }

  void launch_plan(
      double epsilon, void* out, Precision out_type, Offset out_stride, Precision precision) {
    const double inv_eps = 1.0 / epsilon;
    GW_CUDA_CHECK(cuda::launch_scale_potentials(
        f_.get(), n_, inv_eps, precision, ft_.get(), fcorr_.get(), stream_));
    GW_CUDA_CHECK(cuda::launch_scale_potentials(
        g_.get(), k_, inv_eps, precision, gt_.get(), nullptr, stream_));
    GW_CUDA_CHECK(cuda::launch_plan(cost_.data(),
                                    cost_.element_type(),
                                    precision,
                                    n_,
                                    k_,
                                    cost_.row_stride(),
                                    inv_eps,
                                    ft_.get(),
                                    fcorr_.get(),
                                    gt_.get(),
                                    out,
                                    out_type,
                                    out_stride,
                                    stream_));
  }

  CudaStream handle_;
  int device_;
  cudaStream_t stream_ = nullptr;  // handle_'s
  cuda::SolveCheck check_;
  Index n_ = 0;
  Index k_ = 0;
  CostView cost_;
  bool marginals_set_ = false;
  double mass_a_ = 0.0;
  double mass_b_ = 0.0;
  // The cost and plan scratch hold float or double as the caller's types say.
  cuda::DeviceBuffer<std::byte> owned_cost_, plan_scratch_;
  // ft_, fcorr_, gt_ hold the compute type: sized for double so either precision fits.
  cuda::DeviceBuffer<double> a_, b_, f_, f_new_, g_, ft_, fcorr_, gt_, row_residual_;
  cuda::DeviceBuffer<double> partial_max_, partial_sum_, sink_;
};

CudaSinkhorn::CudaSinkhorn(int device) : CudaSinkhorn(CudaStream::create(device)) {}
CudaSinkhorn::CudaSinkhorn(const CudaStream& stream) : impl_(std::make_unique<Impl>(stream)) {}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled() {
  GW_THROW(ErrorCode::kNotCompiled,
           "CudaSinkhorn: this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON or use gw::sinkhorn (CPU)");
}
}  // namespace

// Never constructed (the constructor throws); it gives the forwarding methods below something to
// call in a build without CUDA.
class CudaSinkhorn::Impl {
 public:
  void reserve(Index, Index, bool, Precision) { not_compiled(); }
  void upload_cost(const CostView&) { not_compiled(); }
  void use_device_cost(const CostView&) { not_compiled(); }
  Index rows() const { not_compiled(); }
  Index cols() const { not_compiled(); }
  void set_marginals(std::span<const double>, std::span<const double>) { not_compiled(); }
  void set_potentials(std::span<const double>, std::span<const double>) { not_compiled(); }
  void reset_potentials() { not_compiled(); }
  SinkhornResult solve(double, const SinkhornOptions&) { not_compiled(); }
  void download_potentials(std::span<double>, std::span<double>) const { not_compiled(); }
  void plan_to_device(double, const PlanView&, Precision) { not_compiled(); }
  void plan_to_host(double, const PlanView&, Precision) { not_compiled(); }
  double time_cost_read(int) { not_compiled(); }
  int device() const { not_compiled(); }
  const CudaStream& stream() const { not_compiled(); }
};

CudaSinkhorn::CudaSinkhorn(int) { not_compiled(); }
CudaSinkhorn::CudaSinkhorn(const CudaStream&) { not_compiled(); }

#endif  // GW_HAS_CUDA

CudaSinkhorn::~CudaSinkhorn() = default;
CudaSinkhorn::CudaSinkhorn(CudaSinkhorn&&) noexcept = default;
CudaSinkhorn& CudaSinkhorn::operator=(CudaSinkhorn&&) noexcept = default;

CudaSinkhorn::Impl& CudaSinkhorn::impl() const {
#if GW_HAS_CUDA
  GW_CHECK(impl_ != nullptr, "CudaSinkhorn: use of a moved-from object");
  return *impl_;
#else
  not_compiled();
#endif
}

void CudaSinkhorn::reserve(Index n, Index k, bool reserve_cost, Precision cost_type) {
  impl().reserve(n, k, reserve_cost, cost_type);
}
void CudaSinkhorn::upload_cost(const CostView& host_cost) { impl().upload_cost(host_cost); }
void CudaSinkhorn::use_device_cost(const CostView& device_cost) {
  impl().use_device_cost(device_cost);
}
Index CudaSinkhorn::rows() const { return impl().rows(); }
Index CudaSinkhorn::cols() const { return impl().cols(); }
void CudaSinkhorn::set_marginals(std::span<const double> a, std::span<const double> b) {
  impl().set_marginals(a, b);
}
void CudaSinkhorn::set_potentials(std::span<const double> f, std::span<const double> g) {
  impl().set_potentials(f, g);
}
void CudaSinkhorn::reset_potentials() { impl().reset_potentials(); }
SinkhornResult CudaSinkhorn::solve(double epsilon, const SinkhornOptions& options) {
  return impl().solve(epsilon, options);
}
void CudaSinkhorn::download_potentials(std::span<double> f, std::span<double> g) const {
  impl().download_potentials(f, g);
}
void CudaSinkhorn::plan_to_device(double epsilon,
                                  const PlanView& device_plan,
                                  Precision precision) {
  impl().plan_to_device(epsilon, device_plan, precision);
}
void CudaSinkhorn::plan_to_host(double epsilon, const PlanView& host_plan, Precision precision) {
  impl().plan_to_host(epsilon, host_plan, precision);
}
double CudaSinkhorn::time_cost_read(int reps) { return impl().time_cost_read(reps); }
int CudaSinkhorn::device() const { return impl().device(); }
const CudaStream& CudaSinkhorn::stream() const { return impl().stream(); }

}  // namespace gw
