// gw::CudaSparseSinkhorn: device buffers and the iteration loop around the launchers of
// sparse_sinkhorn_kernels.cu. Compiled into every build; without CUDA every entry point throws
// ErrorCode::kNotCompiled.
#include "sinkhorn/cuda_sparse_sinkhorn.h"

#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/error.h"
#include "sinkhorn/sinkhorn_common_impl.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda/cuda_util.h"
#include "sinkhorn/cuda/sinkhorn_kernels.cuh"
#include "sinkhorn/cuda/solve_check.h"
#include "sinkhorn/cuda/sparse_sinkhorn_kernels.cuh"
#endif

namespace gw {

#if GW_HAS_CUDA

namespace {

// Device memory left free beyond the support's buffers (CUDA context growth, other buffers of
// the caller's loop).
constexpr double kHeadroomBytes = 256.0 * (1 << 20);

}  // namespace

class CudaSparseSinkhorn::Impl {
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
    } catch (...) {                   // a destructor must not throw
    }
  }

  void check_device_memory(Index n, Index k, Offset nnz, int anchors, bool feature) const {
    const double entries = static_cast<double>(nnz);
    const double nodes = static_cast<double>(n) + static_cast<double>(k);
    double bytes = entries * (32.0 + (feature ? 8.0 : 0.0)) + 8.0 * (static_cast<double>(k) + 1) +
                   8.0 * (static_cast<double>(n) + 1) + 8.0 * 8.0 * nodes;
    if (anchors > 0) bytes += nodes * (4.0 * anchors + 4.0);
    cuda::DeviceGuard guard(device_);
    std::size_t free_bytes = 0, total_bytes = 0;
    GW_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // Buffers this instance holds already are replaced, not added to.
    const double held = held_bytes();
    const double gib = 1024.0 * 1024.0 * 1024.0;
    GW_CHECK_CODE(bytes + kHeadroomBytes <= static_cast<double>(free_bytes) + held,
                  ErrorCode::kUnsupported,
                  "the sparse support needs about "
                      << bytes / gib << " GiB of device memory (" << nnz << " entries on " << n
                      << " x " << k << "), but CUDA device " << device_ << " has "
                      << (static_cast<double>(free_bytes) + held) / gib << " GiB free (of "
                      << total_bytes / gib << "); lower --support-size or use --backend cpu");
  }

  void set_support(const SparseSupportView& s, const SupportTranspose& t) {
    const char* who = "CudaSparseSinkhorn::set_support";
    GW_CHECK(s.rows >= 0 && s.cols >= 0, who << ": negative shape");
    GW_CHECK(s.row_offsets.size() == static_cast<std::size_t>(s.rows) + 1 &&
                 s.row_offsets.front() == 0 && s.row_offsets.back() == s.nnz(),
             who << ": malformed support (row_offsets)");
    GW_CHECK(t.col_offsets.size() == static_cast<std::size_t>(s.cols) + 1 &&
                 t.entries.size() == static_cast<std::size_t>(s.nnz()) &&
                 t.rows.size() == t.entries.size() && t.col_offsets.back() == s.nnz(),
             who << ": the transpose does not belong to this support");
    cuda::DeviceGuard guard(device_);
    // Growing frees buffers that queued kernels may still read (cuda_util.h's rule).
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const bool reshaped = s.rows != n_ || s.cols != k_;
    const auto n = static_cast<std::size_t>(s.rows), k = static_cast<std::size_t>(s.cols);
    const auto nnz = static_cast<std::size_t>(s.nnz());
    offsets_.ensure(n + 1);
    cols_.ensure(nnz);
    col_offsets_.ensure(k + 1);
    col_entries_.ensure(nnz);
    col_rows_.ensure(nnz);
    cost_.ensure(nnz);
    cost_by_column_.ensure(nnz);
    plan_.ensure(nnz);
    a_.ensure(n);
    b_.ensure(k);
    f_.ensure(n);
    g_.ensure(k);
    u_.ensure(n);
    u_new_.ensure(n);
    v_.ensure(k);
    residual_.ensure(n);
    stats_.ensure(3 * n);
    copy_async(offsets_.get(), s.row_offsets.data(), n + 1);
    copy_async(cols_.get(), s.col_indices.data(), nnz);
    copy_async(col_offsets_.get(), t.col_offsets.data(), k + 1);
    copy_async(col_entries_.get(), t.entries.data(), nnz);
    copy_async(col_rows_.get(), t.rows.data(), nnz);
    host_offsets_.assign(s.row_offsets.begin(), s.row_offsets.end());
    n_ = s.rows;
    k_ = s.cols;
    nnz_ = s.nnz();
    has_support_ = true;
    has_cost_ = false;
    has_feature_ = false;
    if (reshaped) {
      marginals_set_ = false;
      zero_potentials();
    }
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  Index rows() const { return n_; }
  Index cols() const { return k_; }
  Offset nnz() const { return nnz_; }

  void set_marginals(std::span<const double> a, std::span<const double> b) {
    require_support("set_marginals");
    GW_CHECK(a.size() == static_cast<std::size_t>(n_) && b.size() == static_cast<std::size_t>(k_),
             "CudaSparseSinkhorn::set_marginals: got " << a.size() << " and " << b.size()
                                                       << " entries for a " << n_ << " x " << k_
                                                       << " support");
    mass_a_ = detail::checked_mass("CudaSparseSinkhorn::set_marginals", a, "a");
    mass_b_ = detail::checked_mass("CudaSparseSinkhorn::set_marginals", b, "b");
    cuda::DeviceGuard guard(device_);
    copy_async(a_.get(), a.data(), a.size());
    copy_async(b_.get(), b.data(), b.size());
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    marginals_set_ = true;
  }

  void set_potentials(std::span<const double> f, std::span<const double> g) {
    require_support("set_potentials");
    check_node_spans("set_potentials", f.size(), g.size());
    detail::check_potentials("CudaSparseSinkhorn::set_potentials", f, "f");
    detail::check_potentials("CudaSparseSinkhorn::set_potentials", g, "g");
    cuda::DeviceGuard guard(device_);
    copy_async(f_.get(), f.data(), f.size());
    copy_async(g_.get(), g.data(), g.size());
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void reset_potentials() {
    require_support("reset_potentials");
    cuda::DeviceGuard guard(device_);
    zero_potentials();
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void download_potentials(std::span<double> f, std::span<double> g) const {
    require_support("download_potentials");
    check_node_spans("download_potentials", f.size(), g.size());
    cuda::DeviceGuard guard(device_);
    cuda::copy_to_host(f.data(), f_.get(), f.size(), stream_);
    cuda::copy_to_host(g.data(), g_.get(), g.size(), stream_);
  }

  void upload_cost(std::span<const float> cost) {
    require_support("upload_cost");
    check_entry_span("upload_cost", cost.size());
    cuda::DeviceGuard guard(device_);
    cuda::copy_to_device(cost_.get(), cost.data(), cost.size(), stream_);
    has_cost_ = true;
  }

  void download_cost(std::span<float> cost) const {
    require_cost("download_cost");
    check_entry_span("download_cost", cost.size());
    cuda::DeviceGuard guard(device_);
    cuda::copy_to_host(cost.data(), cost_.get(), cost.size(), stream_);
  }

  void set_feature_cost(std::span<const double> feature, double fused_weight) {
    const char* who = "CudaSparseSinkhorn::set_feature_cost";
    require_support("set_feature_cost");
    GW_CHECK(
        feature.empty() || feature.size() == static_cast<std::size_t>(nnz_),
        who << ": feature_cost has " << feature.size() << " entries for a support of " << nnz_);
    GW_CHECK(fused_weight >= 0.0 && fused_weight <= 1.0,
             who << ": fused_weight must be in [0, 1], got " << fused_weight);
    has_feature_ = false;
    if (feature.empty() || fused_weight == 0.0) return;
    cuda::DeviceGuard guard(device_);
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));  // growing frees what queued kernels may read
    feature_.ensure(feature.size());
    cuda::copy_to_device(feature_.get(), feature.data(), feature.size(), stream_);
    fused_weight_ = fused_weight;
    has_feature_ = true;
  }

  void anchor_cost(std::span<const float> dx, std::span<const float> dy, int m) {
    const char* who = "CudaSparseSinkhorn::anchor_cost";
    require_support("anchor_cost");
    GW_CHECK(m >= 1, who << ": m must be >= 1, got " << m);
    GW_CHECK(dx.size() == static_cast<std::size_t>(n_) * m &&
                 dy.size() == static_cast<std::size_t>(k_) * m,
             who << ": dx and dy need " << n_ << " x " << m << " and " << k_ << " x " << m
                 << " entries, got " << dx.size() << " and " << dy.size());
    cuda::DeviceGuard guard(device_);
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));  // growing frees what queued kernels may read
    dx_.ensure(dx.size());
    dy_.ensure(dy.size());
    xn_.ensure(static_cast<std::size_t>(n_));
    yn_.ensure(static_cast<std::size_t>(k_));
    copy_async(dx_.get(), dx.data(), dx.size());
    copy_async(dy_.get(), dy.data(), dy.size());
    GW_CUDA_CHECK(cuda::launch_support_row_norms(dx_.get(), n_, m, xn_.get(), stream_));
    GW_CUDA_CHECK(cuda::launch_support_row_norms(dy_.get(), k_, m, yn_.get(), stream_));
    GW_CUDA_CHECK(cuda::launch_support_cost(offsets_.get(),
                                            cols_.get(),
                                            n_,
                                            dx_.get(),
                                            dy_.get(),
                                            xn_.get(),
                                            yn_.get(),
                                            m,
                                            has_feature_ ? feature_.get() : nullptr,
                                            fused_weight_,
                                            cost_.get(),
                                            stream_));
    // The host blocks may be rewritten as soon as this returns.
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    has_cost_ = true;
  }

  SinkhornResult solve(double epsilon, const SinkhornOptions& options) {
    const char* who = "CudaSparseSinkhorn::solve";
    detail::check_options(who, options);
    detail::check_epsilon(who, epsilon);
    require_cost("solve");
    GW_CHECK(marginals_set_,
             who << ": no marginals for the current " << n_ << " x " << k_
                 << " support; call set_marginals first");
    detail::check_balance(who, mass_a_, mass_b_, options);
    cuda::DeviceGuard guard(device_);

    cuda::SparseSinkhornParams params;
    params.n = n_;
    params.k = k_;
    params.epsilon = epsilon;
    params.inv_eps = 1.0 / epsilon;
    params.tau_a = detail::damping(options.rho_a, epsilon);
    params.tau_b = detail::damping(options.rho_b, epsilon);
    params.rho_a = options.rho_a;

    check_.reset(stream_);
    GW_CUDA_CHECK(cuda::launch_support_to_scaled(
        f_.get(), n_, epsilon, kZeroMassPotential, u_.get(), stream_));
    GW_CUDA_CHECK(cuda::launch_support_to_scaled(
        g_.get(), k_, epsilon, kZeroMassPotential, v_.get(), stream_));
    // The column pass streams the cost in column order, gathered once per call (as on the CPU).
    GW_CUDA_CHECK(cuda::launch_gather_entries(
        cost_.get(), col_entries_.get(), nnz_, cost_by_column_.get(), stream_));

    SinkhornResult result;
    result.backend = Backend::kCuda;
    result.threads = 0;
    for (int t = 0;; ++t) {
      const bool check = detail::is_check_iteration(t, options);
      GW_CUDA_CHECK(cuda::launch_support_row_pass(offsets_.get(),
                                                  cols_.get(),
                                                  cost_.get(),
                                                  params,
                                                  a_.get(),
                                                  u_.get(),
                                                  v_.get(),
                                                  u_new_.get(),
                                                  check ? residual_.get() : nullptr,
                                                  check_.status(),
                                                  stream_));
      if (check) {
        GW_CUDA_CHECK(cuda::launch_sum(residual_.get(), n_, check_.error(), stream_));
        const double error =
            check_.read(stream_,
                        "CudaSparseSinkhorn::solve",
                        "support entry",
                        "; cover every positive-mass row and column with the support");
        // The potentials the solve returns are those the residual was measured on: a stop
        // leaves u as it was before this row pass.
        if (detail::finish_check(t, error, options, result)) break;
      }
      u_.swap(u_new_);
      GW_CUDA_CHECK(cuda::launch_support_column_pass(col_offsets_.get(),
                                                     col_rows_.get(),
                                                     cost_by_column_.get(),
                                                     params,
                                                     b_.get(),
                                                     u_.get(),
                                                     v_.get(),
                                                     check_.status(),
                                                     stream_));
    }
    GW_CUDA_CHECK(cuda::launch_support_from_scaled(
        u_.get(), n_, epsilon, kZeroMassPotential, f_.get(), stream_));
    GW_CUDA_CHECK(cuda::launch_support_from_scaled(
        v_.get(), k_, epsilon, kZeroMassPotential, g_.get(), stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return result;
  }

  void upload_plan(std::span<const double> plan) {
    require_support("upload_plan");
    check_entry_span("upload_plan", plan.size());
    cuda::DeviceGuard guard(device_);
    cuda::copy_to_device(plan_.get(), plan.data(), plan.size(), stream_);
  }

  void download_plan(std::span<double> plan) const {
    require_support("download_plan");
    check_entry_span("download_plan", plan.size());
    cuda::DeviceGuard guard(device_);
    cuda::copy_to_host(plan.data(), plan_.get(), plan.size(), stream_);
  }

  void download_plan_rows(std::span<const Index> rows, std::span<double> out) {
    const char* who = "CudaSparseSinkhorn::download_plan_rows";
    require_support("download_plan_rows");
    std::vector<Offset> out_offsets(rows.size() + 1, 0);
    for (std::size_t t = 0; t < rows.size(); ++t) {
      const Index i = rows[t];
      GW_CHECK(i >= 0 && i < n_, who << ": row " << i << " outside [0, " << n_ << ")");
      out_offsets[t + 1] = out_offsets[t] + (host_offsets_[i + 1] - host_offsets_[i]);
    }
    GW_CHECK(
        out.size() == static_cast<std::size_t>(out_offsets.back()),
        who << ": out has " << out.size() << " entries for " << out_offsets.back() << " values");
    if (out.empty()) return;
    cuda::DeviceGuard guard(device_);
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));  // growing frees what queued kernels may read
    gather_rows_.ensure(rows.size());
    gather_offsets_.ensure(out_offsets.size());
    gather_values_.ensure(out.size());
    copy_async(gather_rows_.get(), rows.data(), rows.size());
    copy_async(gather_offsets_.get(), out_offsets.data(), out_offsets.size());
    GW_CUDA_CHECK(cuda::launch_gather_rows(offsets_.get(),
                                           plan_.get(),
                                           gather_rows_.get(),
                                           gather_offsets_.get(),
                                           static_cast<Index>(rows.size()),
                                           gather_values_.get(),
                                           stream_));
    cuda::copy_to_host(out.data(), gather_values_.get(), out.size(), stream_);
  }

  void plan_momentum(double epsilon, double alpha, std::span<PlanBlendStats> stats) {
    const char* who = "CudaSparseSinkhorn::plan_momentum";
    require_cost("plan_momentum");
    GW_CHECK(stats.size() == static_cast<std::size_t>(n_),
             who << ": stats needs " << n_ << " entries, got " << stats.size());
    GW_CHECK(alpha > 0.0 && alpha <= 1.0, who << ": alpha must be in (0, 1]");
    detail::check_epsilon(who, epsilon);
    static_assert(sizeof(PlanBlendStats) == 3 * sizeof(double),
                  "the kernel writes PlanBlendStats as three doubles");
    cuda::DeviceGuard guard(device_);
    GW_CUDA_CHECK(cuda::launch_support_to_scaled(
        f_.get(), n_, epsilon, kZeroMassPotential, u_.get(), stream_));
    GW_CUDA_CHECK(cuda::launch_support_to_scaled(
        g_.get(), k_, epsilon, kZeroMassPotential, v_.get(), stream_));
    GW_CUDA_CHECK(cuda::launch_support_momentum(offsets_.get(),
                                                cols_.get(),
                                                cost_.get(),
                                                u_.get(),
                                                v_.get(),
                                                n_,
                                                1.0 / epsilon,
                                                1.0 - alpha,
                                                alpha,
                                                plan_.get(),
                                                stats_.get(),
                                                stream_));
    cuda::copy_to_host(reinterpret_cast<double*>(stats.data()),
                       stats_.get(),
                       3 * static_cast<std::size_t>(n_),
                       stream_);
  }

  int device() const { return device_; }
  const CudaStream& stream() const { return handle_; }

 private:
  template <typename T>
  void copy_async(T* device, const T* host, std::size_t count) {
    if (count == 0) return;
    GW_CUDA_CHECK(
        cudaMemcpyAsync(device, host, count * sizeof(T), cudaMemcpyHostToDevice, stream_));
  }

  void zero_potentials() {
    GW_CUDA_CHECK(
        cudaMemsetAsync(f_.get(), 0, static_cast<std::size_t>(n_) * sizeof(double), stream_));
    GW_CUDA_CHECK(
        cudaMemsetAsync(g_.get(), 0, static_cast<std::size_t>(k_) * sizeof(double), stream_));
  }

  double held_bytes() const {
    return static_cast<double>(
        offsets_.size() * sizeof(Offset) + cols_.size() * sizeof(Index) +
        col_offsets_.size() * sizeof(Offset) + col_entries_.size() * sizeof(Offset) +
        col_rows_.size() * sizeof(Index) + (cost_.size() + cost_by_column_.size()) * sizeof(float) +
        (plan_.size() + feature_.size()) * sizeof(double) +
        (dx_.size() + dy_.size() + xn_.size() + yn_.size()) * sizeof(float) +
        (a_.size() + b_.size() + f_.size() + g_.size() + u_.size() + u_new_.size() + v_.size() +
         residual_.size() + stats_.size()) *
            sizeof(double));
  }

  void require_support(const char* what) const {
    GW_CHECK(has_support_, "CudaSparseSinkhorn::" << what << ": no support yet; call set_support");
  }
  void require_cost(const char* what) const {
    require_support(what);
    GW_CHECK(has_cost_,
             "CudaSparseSinkhorn::" << what
                                    << ": no cost on the current support; call upload_cost or "
                                       "anchor_cost first");
  }
  void check_entry_span(const char* what, std::size_t size) const {
    GW_CHECK(
        size == static_cast<std::size_t>(nnz_),
        "CudaSparseSinkhorn::" << what << ": got " << size << " entries for a support of " << nnz_);
  }
  void check_node_spans(const char* what, std::size_t f, std::size_t g) const {
    GW_CHECK(f == static_cast<std::size_t>(n_) && g == static_cast<std::size_t>(k_),
             "CudaSparseSinkhorn::" << what << ": got " << f << " and " << g << " entries for a "
                                    << n_ << " x " << k_ << " support");
  }

  // The messages of sparse_sinkhorn (check_lse) for the same conditions.
  CudaStream handle_;
  int device_;
  cudaStream_t stream_ = nullptr;  // handle_'s
  cuda::SolveCheck check_;
  Index n_ = 0;
  Index k_ = 0;
  Offset nnz_ = 0;
  bool has_support_ = false;
  bool has_cost_ = false;
  bool marginals_set_ = false;
  bool has_feature_ = false;
  double fused_weight_ = 0.0;
  double mass_a_ = 0.0;
  double mass_b_ = 0.0;
  std::vector<Offset> host_offsets_;  // the support's row offsets (download_plan_rows)
  cuda::DeviceBuffer<Offset> offsets_, col_offsets_, col_entries_, gather_offsets_;
  cuda::DeviceBuffer<Index> gather_rows_;
  cuda::DeviceBuffer<double> gather_values_;
  cuda::DeviceBuffer<Index> cols_, col_rows_;
  cuda::DeviceBuffer<float> cost_, cost_by_column_, dx_, dy_, xn_, yn_;
  cuda::DeviceBuffer<double> plan_, feature_, a_, b_, f_, g_, u_, u_new_, v_, residual_, stats_;
};

CudaSparseSinkhorn::CudaSparseSinkhorn(int device)
    : CudaSparseSinkhorn(CudaStream::create(device)) {}
CudaSparseSinkhorn::CudaSparseSinkhorn(const CudaStream& stream)
    : impl_(std::make_unique<Impl>(stream)) {}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled() {
  GW_THROW(ErrorCode::kNotCompiled,
           "CudaSparseSinkhorn: this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON or use gw::sparse_sinkhorn (CPU)");
}
}  // namespace

// Never constructed (the constructor throws); it gives the forwarding methods below something to
// call in a build without CUDA.
class CudaSparseSinkhorn::Impl {
 public:
  void check_device_memory(Index, Index, Offset, int, bool) const { not_compiled(); }
  void set_support(const SparseSupportView&, const SupportTranspose&) { not_compiled(); }
  Index rows() const { not_compiled(); }
  Index cols() const { not_compiled(); }
  Offset nnz() const { not_compiled(); }
  void set_marginals(std::span<const double>, std::span<const double>) { not_compiled(); }
  void set_potentials(std::span<const double>, std::span<const double>) { not_compiled(); }
  void reset_potentials() { not_compiled(); }
  void download_potentials(std::span<double>, std::span<double>) const { not_compiled(); }
  void upload_cost(std::span<const float>) { not_compiled(); }
  void download_cost(std::span<float>) const { not_compiled(); }
  void set_feature_cost(std::span<const double>, double) { not_compiled(); }
  void anchor_cost(std::span<const float>, std::span<const float>, int) { not_compiled(); }
  SinkhornResult solve(double, const SinkhornOptions&) { not_compiled(); }
  void upload_plan(std::span<const double>) { not_compiled(); }
  void download_plan(std::span<double>) const { not_compiled(); }
  void download_plan_rows(std::span<const Index>, std::span<double>) { not_compiled(); }
  void plan_momentum(double, double, std::span<PlanBlendStats>) { not_compiled(); }
  int device() const { not_compiled(); }
  const CudaStream& stream() const { not_compiled(); }
};

CudaSparseSinkhorn::CudaSparseSinkhorn(int) { not_compiled(); }
CudaSparseSinkhorn::CudaSparseSinkhorn(const CudaStream&) { not_compiled(); }

#endif  // GW_HAS_CUDA

CudaSparseSinkhorn::~CudaSparseSinkhorn() = default;
CudaSparseSinkhorn::CudaSparseSinkhorn(CudaSparseSinkhorn&&) noexcept = default;
CudaSparseSinkhorn& CudaSparseSinkhorn::operator=(CudaSparseSinkhorn&&) noexcept = default;

CudaSparseSinkhorn::Impl& CudaSparseSinkhorn::impl() const {
#if GW_HAS_CUDA
  GW_CHECK(impl_ != nullptr, "CudaSparseSinkhorn: use of a moved-from object");
  return *impl_;
#else
  not_compiled();
#endif
}

void CudaSparseSinkhorn::check_device_memory(
    Index n, Index k, Offset nnz, int anchors, bool feature) const {
  impl().check_device_memory(n, k, nnz, anchors, feature);
}
void CudaSparseSinkhorn::set_support(const SparseSupportView& support,
                                     const SupportTranspose& transpose) {
  impl().set_support(support, transpose);
}
Index CudaSparseSinkhorn::rows() const { return impl().rows(); }
Index CudaSparseSinkhorn::cols() const { return impl().cols(); }
Offset CudaSparseSinkhorn::nnz() const { return impl().nnz(); }
void CudaSparseSinkhorn::set_marginals(std::span<const double> a, std::span<const double> b) {
  impl().set_marginals(a, b);
}
void CudaSparseSinkhorn::set_potentials(std::span<const double> f, std::span<const double> g) {
  impl().set_potentials(f, g);
}
void CudaSparseSinkhorn::reset_potentials() { impl().reset_potentials(); }
void CudaSparseSinkhorn::download_potentials(std::span<double> f, std::span<double> g) const {
  impl().download_potentials(f, g);
}
void CudaSparseSinkhorn::upload_cost(std::span<const float> cost) { impl().upload_cost(cost); }
void CudaSparseSinkhorn::download_cost(std::span<float> cost) const { impl().download_cost(cost); }
void CudaSparseSinkhorn::set_feature_cost(std::span<const double> feature_cost,
                                          double fused_weight) {
  impl().set_feature_cost(feature_cost, fused_weight);
}
void CudaSparseSinkhorn::anchor_cost(std::span<const float> dx, std::span<const float> dy, int m) {
  impl().anchor_cost(dx, dy, m);
}
SinkhornResult CudaSparseSinkhorn::solve(double epsilon, const SinkhornOptions& options) {
  return impl().solve(epsilon, options);
}
void CudaSparseSinkhorn::upload_plan(std::span<const double> plan) { impl().upload_plan(plan); }
void CudaSparseSinkhorn::download_plan(std::span<double> plan) const { impl().download_plan(plan); }
void CudaSparseSinkhorn::download_plan_rows(std::span<const Index> rows, std::span<double> out) {
  impl().download_plan_rows(rows, out);
}
void CudaSparseSinkhorn::plan_momentum(double epsilon,
                                       double alpha,
                                       std::span<PlanBlendStats> stats) {
  impl().plan_momentum(epsilon, alpha, stats);
}
int CudaSparseSinkhorn::device() const { return impl().device(); }
const CudaStream& CudaSparseSinkhorn::stream() const { return impl().stream(); }

}  // namespace gw
