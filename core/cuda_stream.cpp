// gw::CudaStream (core/cuda_stream.h). Compiled into every build; without CUDA the factories throw
// ErrorCode::kNotCompiled.
#include "core/cuda_stream.h"

#include "core/config.h"
#include "core/context.h"
#include "core/error.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>
#endif

namespace gw {

struct CudaStream::State {
  void* stream = nullptr;
  int device = 0;
  bool owned = false;

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
#if GW_HAS_CUDA
    if (owned && stream != nullptr) {
      // No throw from a destructor: CUDA errors are sticky and surface at the next checked call.
      int previous = 0;
      cudaGetDevice(&previous);
      cudaSetDevice(device);
      cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
      cudaStreamDestroy(static_cast<cudaStream_t>(stream));
      cudaSetDevice(previous);
    }
#endif
  }
};

#if GW_HAS_CUDA

namespace {

void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    GW_THROW(ErrorCode::kInternal,
             "CUDA call " << call << " failed: " << cudaGetErrorName(status) << " ("
                          << cudaGetErrorString(status) << ")");
  }
}

}  // namespace

CudaStream CudaStream::create(int device) {
  require_backend(Backend::kCuda, device);
  auto state = std::make_shared<State>();
  int previous = 0;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaStream_t stream = nullptr;
  const cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaSetDevice(previous);
  check(status, "cudaStreamCreateWithFlags");
  state->stream = stream;
  state->device = device;
  state->owned = true;
  return CudaStream(std::move(state));
}

CudaStream CudaStream::borrow(void* stream, int device) {
  require_backend(Backend::kCuda, device);
  auto state = std::make_shared<State>();
  state->stream = stream;
  state->device = device;
  state->owned = false;
  return CudaStream(std::move(state));
}

void CudaStream::synchronize() const {
  int previous = 0;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  if (previous != device()) check(cudaSetDevice(device()), "cudaSetDevice");
  const cudaError_t status = cudaStreamSynchronize(static_cast<cudaStream_t>(get()));
  if (previous != device()) cudaSetDevice(previous);
  check(status, "cudaStreamSynchronize");
}

void CudaStream::wait_before_release() const noexcept {
  if (state_ == nullptr) return;
  int previous = 0;
  cudaGetDevice(&previous);
  if (previous != state_->device) cudaSetDevice(state_->device);
  if (state_->owned) {
    cudaStreamSynchronize(static_cast<cudaStream_t>(state_->stream));
  } else {
    cudaDeviceSynchronize();
  }
  if (previous != state_->device) cudaSetDevice(previous);
}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled() {
  GW_THROW(
      ErrorCode::kNotCompiled,
      "CudaStream: this gwalign was built without CUDA; rebuild with -DGWALIGN_ENABLE_CUDA=ON");
}
}  // namespace

CudaStream CudaStream::create(int) { not_compiled(); }
CudaStream CudaStream::borrow(void*, int) { not_compiled(); }
void CudaStream::synchronize() const { not_compiled(); }
void CudaStream::wait_before_release() const noexcept {}

#endif  // GW_HAS_CUDA

void* CudaStream::get() const {
  GW_CHECK(state_ != nullptr, "CudaStream: use of an empty handle (create() or borrow() one)");
  return state_->stream;
}

int CudaStream::device() const {
  GW_CHECK(state_ != nullptr, "CudaStream: use of an empty handle (create() or borrow() one)");
  return state_->device;
}

bool CudaStream::owned() const {
  GW_CHECK(state_ != nullptr, "CudaStream: use of an empty handle (create() or borrow() one)");
  return state_->owned;
}

}  // namespace gw
