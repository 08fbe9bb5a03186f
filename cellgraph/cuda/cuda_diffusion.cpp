// gw::CudaHeatDiffusion: the operator upload and the launch sequence around
// diffusion_kernels.cu. Compiled into every build; without CUDA every entry point throws
// ErrorCode::kNotCompiled.
#include "cellgraph/cuda_diffusion.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "cellgraph/cuda/diffusion_kernels.cuh"
#include "core/cuda/cuda_util.h"
#endif

namespace gw {

#if GW_HAS_CUDA

namespace {

constexpr std::string_view kToDevice = "copy it to the device first (gw::DeviceArray)";

template <typename T>
void copy_to_device(cuda::DeviceBuffer<T>& buffer,
                    const std::vector<T>& host,
                    cudaStream_t stream) {
  buffer.ensure(host.size());
  cuda::copy_to_device(buffer.get(), host.data(), host.size(), stream);
}

// w_k in the compute type with subnormal values flushed to 0, as HeatDiffusion::apply does, so
// both backends sum the same terms.
template <typename T>
T device_weight(double w) {
  const T rounded = static_cast<T>(w);
  return std::abs(rounded) < std::numeric_limits<T>::min() ? T(0) : rounded;
}

}  // namespace

class CudaHeatDiffusion::Impl {
 public:
  explicit Impl(const CudaStream& stream) : stream_(stream), device_(stream.device()) {}

  // Queued steps may still use the buffers freed after this (a borrowed stream's owner may be
  // gone: wait_before_release waits for the device then).
  ~Impl() { stream_.wait_before_release(); }

  void prepare(const HeatDiffusion& op) {
    cuda::DeviceGuard guard(device_);
    stream_.synchronize();  // work in flight may still read the previous operator
    const cudaStream_t s = cuda::stream_of(stream_);
    const CsrMatrix<double>& matrix = op.shifted_laplacian();
    num_graphs_ = op.num_graphs();
    seq_len_ = op.seq_len();
    nodes_ = op.num_nodes();
    nnz_ = op.nnz();
    weights_ = op.weights();
    std::vector<Offset> padded_row(nodes_);
    const std::vector<Offset>& node_offsets = op.node_offsets();
    for (Index b = 0; b < num_graphs_; ++b) {
      for (Offset r = node_offsets[b]; r < node_offsets[b + 1]; ++r) {
        padded_row[r] = static_cast<Offset>(b) * seq_len_ + (r - node_offsets[b]);
      }
    }
    copy_to_device(row_offsets_, matrix.row_offsets, s);
    copy_to_device(cols_, matrix.col_indices, s);
    copy_to_device(values_f64_, matrix.values, s);
    copy_to_device(values_f32_, std::vector<float>(matrix.values.begin(), matrix.values.end()), s);
    copy_to_device(padded_row_, padded_row, s);
    prepared_ = true;
  }

  void prepare(const DiffusionGraphs& graphs, Index seq_len, const DiffusionOptions& options) {
    prepare(HeatDiffusion(graphs, seq_len, options));
  }

  template <typename T>
  void apply_async(const T* x, Index channels, T* y) {
    GW_CHECK(prepared_, "CudaHeatDiffusion::apply: call prepare() first");
    GW_CHECK(channels >= 1, "CudaHeatDiffusion::apply: channels must be >= 1, got " << channels);
    const std::size_t elements = static_cast<std::size_t>(num_graphs_) * seq_len_ * channels;
    if (elements == 0) return;
    cuda::DeviceGuard guard(device_);
    cuda::check_device_pointer(x, device_, "CudaHeatDiffusion::apply: x", kToDevice);
    cuda::check_device_pointer(y, device_, "CudaHeatDiffusion::apply: y", kToDevice);
    GW_CHECK(x + elements <= y || y + elements <= x,
             "CudaHeatDiffusion::apply: x and y overlap; give y its own buffer");
    const std::size_t work = std::max<std::size_t>(1, static_cast<std::size_t>(nodes_) * channels);
    if (t0_.size() < work * sizeof(T) || t1_.size() < work * sizeof(T)) {
      stream_.synchronize();  // growing frees buffers that queued steps may still use
      t0_.ensure(work * sizeof(T));
      t1_.ensure(work * sizeof(T));
    }
    const cudaStream_t s = cuda::stream_of(stream_);
    const T* values = nullptr;
    if constexpr (std::is_same_v<T, float>) {
      values = values_f32_.get();
    } else {
      values = values_f64_.get();
    }
    const Offset* rows = row_offsets_.get();
    const Index* cols = cols_.get();
    const Offset* padded = padded_row_.get();
    // Padding rows stay zero; the real rows are overwritten by the unpad step.
    GW_CUDA_CHECK(cudaMemsetAsync(y, 0, elements * sizeof(T), s));
    T* prev = t0_.as<T>();
    T* cur = t1_.as<T>();
    GW_CUDA_CHECK(
        cuda::launch_unpad(x, padded, nodes_, channels, device_weight<T>(weights_[0]), prev, y, s));
    const int order = static_cast<int>(weights_.size()) - 1;
    if (order >= 1) {
      GW_CUDA_CHECK(cuda::launch_chebyshev_step(rows,
                                                cols,
                                                values,
                                                padded,
                                                nodes_,
                                                channels,
                                                prev,
                                                cur,
                                                true,
                                                device_weight<T>(weights_[1]),
                                                y,
                                                s));
    }
    for (int k = 2; k <= order; ++k) {
      GW_CUDA_CHECK(cuda::launch_chebyshev_step(rows,
                                                cols,
                                                values,
                                                padded,
                                                nodes_,
                                                channels,
                                                cur,
                                                prev,
                                                false,
                                                device_weight<T>(weights_[k]),
                                                y,
                                                s));
      std::swap(prev, cur);
    }
  }

  template <typename T>
  void apply(std::span<const T> x, Index channels, std::span<T> y) {
    GW_CHECK(prepared_, "CudaHeatDiffusion::apply: call prepare() first");
    GW_CHECK(channels >= 1, "CudaHeatDiffusion::apply: channels must be >= 1, got " << channels);
    const std::size_t elements = static_cast<std::size_t>(num_graphs_) * seq_len_ * channels;
    GW_CHECK(x.size() == elements && y.size() == elements,
             "CudaHeatDiffusion::apply: x and y hold " << x.size() << " and " << y.size()
                                                       << " values; [B, S, C] needs " << elements);
    if (elements == 0) return;
    cuda::DeviceGuard guard(device_);
    stream_.synchronize();
    host_x_.ensure(elements * sizeof(T));
    host_y_.ensure(elements * sizeof(T));
    const cudaStream_t s = cuda::stream_of(stream_);
    cuda::copy_to_device(host_x_.as<T>(), x.data(), elements, s);
    apply_async<T>(host_x_.as<T>(), channels, host_y_.as<T>());
    cuda::copy_to_host(y.data(), host_y_.as<T>(), elements, s);
  }

  void synchronize() {
    cuda::DeviceGuard guard(device_);
    stream_.synchronize();
  }

  Index num_graphs() const { return num_graphs_; }
  Index seq_len() const { return seq_len_; }
  Offset nnz() const { return nnz_; }
  int device() const { return device_; }
  const CudaStream& stream() const { return stream_; }

 private:
  CudaStream stream_;
  int device_;
  bool prepared_ = false;
  Index num_graphs_ = 0;
  Index seq_len_ = 0;
  Index nodes_ = 0;
  Offset nnz_ = 0;
  std::vector<double> weights_;
  cuda::DeviceBuffer<Offset> row_offsets_, padded_row_;
  cuda::DeviceBuffer<Index> cols_;
  cuda::DeviceBuffer<float> values_f32_;
  cuda::DeviceBuffer<double> values_f64_;
  // float or double as the caller's data.
  cuda::DeviceBuffer<std::byte> t0_, t1_, host_x_, host_y_;
};

CudaHeatDiffusion::CudaHeatDiffusion(int device) : CudaHeatDiffusion(CudaStream::create(device)) {}
CudaHeatDiffusion::CudaHeatDiffusion(const CudaStream& stream)
    : impl_(std::make_unique<Impl>(stream)) {}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled() {
  GW_THROW(ErrorCode::kNotCompiled,
           "CudaHeatDiffusion: this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON or use gw::HeatDiffusion (CPU)");
}
}  // namespace

// Never constructed (the constructor throws); it gives the forwarding methods below something to
// call in a build without CUDA.
class CudaHeatDiffusion::Impl {
 public:
  void prepare(const HeatDiffusion&) { not_compiled(); }
  void prepare(const DiffusionGraphs&, Index, const DiffusionOptions&) { not_compiled(); }
  template <typename T>
  void apply_async(const T*, Index, T*) {
    not_compiled();
  }
  template <typename T>
  void apply(std::span<const T>, Index, std::span<T>) {
    not_compiled();
  }
  void synchronize() { not_compiled(); }
  Index num_graphs() const { not_compiled(); }
  Index seq_len() const { not_compiled(); }
  Offset nnz() const { not_compiled(); }
  int device() const { not_compiled(); }
  const CudaStream& stream() const { not_compiled(); }
};

CudaHeatDiffusion::CudaHeatDiffusion(int) { not_compiled(); }
CudaHeatDiffusion::CudaHeatDiffusion(const CudaStream&) { not_compiled(); }

#endif  // GW_HAS_CUDA

CudaHeatDiffusion::~CudaHeatDiffusion() = default;
CudaHeatDiffusion::CudaHeatDiffusion(CudaHeatDiffusion&&) noexcept = default;
CudaHeatDiffusion& CudaHeatDiffusion::operator=(CudaHeatDiffusion&&) noexcept = default;

CudaHeatDiffusion::Impl& CudaHeatDiffusion::impl() const {
#if GW_HAS_CUDA
  GW_CHECK(impl_ != nullptr, "CudaHeatDiffusion: use of a moved-from object");
  return *impl_;
#else
  not_compiled();
#endif
}

void CudaHeatDiffusion::prepare(const DiffusionGraphs& graphs,
                                Index seq_len,
                                const DiffusionOptions& options) {
  impl().prepare(graphs, seq_len, options);
}
void CudaHeatDiffusion::prepare(const HeatDiffusion& op) { impl().prepare(op); }
Index CudaHeatDiffusion::num_graphs() const { return impl().num_graphs(); }
Index CudaHeatDiffusion::seq_len() const { return impl().seq_len(); }
Offset CudaHeatDiffusion::nnz() const { return impl().nnz(); }
void CudaHeatDiffusion::apply_async(const float* x, Index channels, float* y) {
  impl().apply_async<float>(x, channels, y);
}
void CudaHeatDiffusion::apply_async(const double* x, Index channels, double* y) {
  impl().apply_async<double>(x, channels, y);
}
void CudaHeatDiffusion::apply(std::span<const float> x, Index channels, std::span<float> y) {
  impl().apply<float>(x, channels, y);
}
void CudaHeatDiffusion::apply(std::span<const double> x, Index channels, std::span<double> y) {
  impl().apply<double>(x, channels, y);
}
void CudaHeatDiffusion::synchronize() { impl().synchronize(); }
int CudaHeatDiffusion::device() const { return impl().device(); }
const CudaStream& CudaHeatDiffusion::stream() const { return impl().stream(); }

}  // namespace gw
