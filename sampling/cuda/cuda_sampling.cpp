// gw::CudaAnchorSampler: scratch buffers and the launch sequence around sampling_kernels.cu.
// Compiled into every build; without CUDA every entry point throws ErrorCode::kNotCompiled.
#include "sampling/cuda_sampling.h"

#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda/cuda_util.h"
#include "sampling/cuda/sampling_kernels.cuh"
#endif

namespace gw {

#if GW_HAS_CUDA

class CudaAnchorSampler::Impl {
 public:
  explicit Impl(const CudaStream& stream) : stream_(stream), device_(stream.device()) {}

  ~Impl() {
    try {  // release on the right device; a destructor must not throw
      cuda::DeviceGuard guard(device_);
      stream_.wait_before_release();  // queued kernels may still use the buffers
      row_mass_.release();
      cdf_.release();
      uniforms_.release();
      out_.release();
      uniforms_host_.release();
      out_host_.release();
    } catch (...) {
    }
  }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void reserve(Index n, int m) {
    GW_CHECK(n >= 1 && m >= 1,
             "CudaAnchorSampler::reserve: sizes must be >= 1, got n = " << n << ", m = " << m);
    cuda::DeviceGuard guard(device_);
    const auto rows = static_cast<std::size_t>(n);
    const auto pairs = static_cast<std::size_t>(m);
    row_mass_.ensure(rows);
    cdf_.ensure(rows);
    uniforms_.ensure(2 * pairs);
    uniforms_host_.ensure(2 * pairs);
    // [status slots | rows | cols] in one block so that one copy brings everything back.
    out_.ensure(cuda::kSampleStatusSlots + 2 * pairs);
    out_host_.ensure(cuda::kSampleStatusSlots + 2 * pairs);
  }

  template <typename T>
  AnchorPairs sample(const T* plan,
                     Index n,
                     Index k,
                     Offset stride,
                     const double* row_mass,
                     std::span<const double> uniforms) {
    GW_CHECK(n >= 1 && k >= 1, "sampling needs a non-empty plan, got " << n << " x " << k);
    GW_CHECK(stride >= k,
             "plan row stride " << stride << " is smaller than its " << k << " columns");
    GW_CHECK(uniforms.size() % 2 == 0 && !uniforms.empty(),
             "sampling needs 2 uniforms per pair, got " << uniforms.size());
    GW_CHECK(uniforms.size() / 2 <= static_cast<std::size_t>(0x7FFFFFFF),
             "CudaAnchorSampler::sample: at most 2^31 - 1 pairs per call");
    const int m = static_cast<int>(uniforms.size() / 2);
    cuda::DeviceGuard guard(device_);
    GW_CHECK(plan != nullptr, "the plan passed to CudaAnchorSampler::sample is null");
    cuda::check_device_pointer(plan,
                               device_,
                               "the plan passed to CudaAnchorSampler::sample",
                               "copy it to the device first");
    cuda::check_device_pointer(row_mass,  // null: computed from the plan
                               device_,
                               "the row masses passed to CudaAnchorSampler::sample",
                               "copy it to the device first");
    reserve(n, m);
    const cudaStream_t stream = cuda::stream_of(stream_);
    const Precision type = std::is_same_v<T, float> ? Precision::kF32 : Precision::kF64;

    std::memcpy(uniforms_host_.get(), uniforms.data(), uniforms.size_bytes());
    GW_CUDA_CHECK(cudaMemcpyAsync(uniforms_.get(),
                                  uniforms_host_.get(),
                                  uniforms.size_bytes(),
                                  cudaMemcpyHostToDevice,
                                  stream));
    int* status = out_.get();
    Index* pairs = out_.get() + cuda::kSampleStatusSlots;
    GW_CUDA_CHECK(cudaMemsetAsync(status, 0x7F, sizeof(int) * cuda::kSampleStatusSlots, stream));
    const double* masses = row_mass;
    if (masses == nullptr) {
      GW_CUDA_CHECK(cuda::launch_row_sums(plan, type, n, k, stride, row_mass_.get(), stream));
      masses = row_mass_.get();
    }
    GW_CUDA_CHECK(cuda::launch_cumulative_sums(masses, n, cdf_.get(), stream));
    GW_CUDA_CHECK(cuda::launch_draw_pairs(
        plan, type, n, k, stride, cdf_.get(), uniforms_.get(), m, pairs, status, stream));
    const std::size_t count = cuda::kSampleStatusSlots + 2 * static_cast<std::size_t>(m);
    GW_CUDA_CHECK(cudaMemcpyAsync(
        out_host_.get(), out_.get(), count * sizeof(int), cudaMemcpyDeviceToHost, stream));
    stream_.synchronize();

    const int* host_status = out_host_.get();
    GW_CHECK_CODE(host_status[cuda::kSampleZeroTotal] == cuda::kSampleNoIndex,
                  ErrorCode::kBadData,
                  "cannot sample anchors from a plan of zero mass");
    GW_CHECK_CODE(host_status[cuda::kSampleEmptyRow] == cuda::kSampleNoIndex,
                  ErrorCode::kBadData,
                  "cannot sample a column of plan row "
                      << host_status[cuda::kSampleEmptyRow]
                      << ": it has no mass (the row masses do not match the plan)");
    const Index* host_pairs = host_status + cuda::kSampleStatusSlots;
    AnchorPairs result;
    result.rows.assign(host_pairs, host_pairs + m);
    result.cols.assign(host_pairs + m, host_pairs + 2 * static_cast<std::size_t>(m));
    return result;
  }

  int device() const { return device_; }
  const CudaStream& stream() const { return stream_; }

 private:
  CudaStream stream_;
  int device_;
  cuda::DeviceBuffer<double> row_mass_, cdf_, uniforms_;
  cuda::DeviceBuffer<int> out_;
  cuda::PinnedBuffer<double> uniforms_host_;
  cuda::PinnedBuffer<int> out_host_;
};

CudaAnchorSampler::CudaAnchorSampler(int device) : CudaAnchorSampler(CudaStream::create(device)) {}
CudaAnchorSampler::CudaAnchorSampler(const CudaStream& stream)
    : impl_(std::make_unique<Impl>(stream)) {}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled() {
  GW_THROW(ErrorCode::kNotCompiled,
           "CudaAnchorSampler: this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON or use gw::sample_anchor_pairs (CPU)");
}
}  // namespace

// Never constructed (the constructor throws); it gives the forwarding methods below something to
// call in a build without CUDA.
class CudaAnchorSampler::Impl {
 public:
  void reserve(Index, int) { not_compiled(); }
  template <typename T>
  AnchorPairs sample(const T*, Index, Index, Offset, const double*, std::span<const double>) {
    not_compiled();
  }
  int device() const { not_compiled(); }
  const CudaStream& stream() const { not_compiled(); }
};

CudaAnchorSampler::CudaAnchorSampler(int) { not_compiled(); }
CudaAnchorSampler::CudaAnchorSampler(const CudaStream&) { not_compiled(); }

#endif  // GW_HAS_CUDA

CudaAnchorSampler::~CudaAnchorSampler() = default;
CudaAnchorSampler::CudaAnchorSampler(CudaAnchorSampler&&) noexcept = default;
CudaAnchorSampler& CudaAnchorSampler::operator=(CudaAnchorSampler&&) noexcept = default;

CudaAnchorSampler::Impl& CudaAnchorSampler::impl() const {
#if GW_HAS_CUDA
  GW_CHECK(impl_ != nullptr, "CudaAnchorSampler: use of a moved-from object");
  return *impl_;
#else
  not_compiled();
#endif
}

void CudaAnchorSampler::reserve(Index n, int m) { impl().reserve(n, m); }

AnchorPairs CudaAnchorSampler::sample(const float* plan,
                                      Index n,
                                      Index k,
                                      Offset stride,
                                      const double* row_mass,
                                      std::span<const double> uniforms) {
  return impl().sample(plan, n, k, stride, row_mass, uniforms);
}

AnchorPairs CudaAnchorSampler::sample(const double* plan,
                                      Index n,
                                      Index k,
                                      Offset stride,
                                      const double* row_mass,
                                      std::span<const double> uniforms) {
  return impl().sample(plan, n, k, stride, row_mass, uniforms);
}

int CudaAnchorSampler::device() const { return impl().device(); }
const CudaStream& CudaAnchorSampler::stream() const { return impl().stream(); }

}  // namespace gw
