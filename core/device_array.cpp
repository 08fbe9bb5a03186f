// gw::DeviceArray (core/device_array.h). Compiled into every build; without CUDA the constructors
// throw ErrorCode::kNotCompiled.
#include "core/device_array.h"

#include <cstdint>
#include <utility>

#include "core/config.h"
#include "core/error.h"
#include "core/types.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda/cuda_util.h"
#endif

namespace gw {

template <typename T>
DeviceArray<T>::DeviceArray(std::size_t count, const CudaStream& stream)
    : size_(count), stream_(stream) {
  GW_CHECK(stream.valid(), "DeviceArray: empty CudaStream (use CudaStream::create or borrow)");
#if GW_HAS_CUDA
  if (count == 0) return;
  cuda::DeviceGuard guard(stream_.device());
  void* pointer = nullptr;
  GW_CUDA_CHECK(cudaMalloc(&pointer, count * sizeof(T)));
  data_ = static_cast<T*>(pointer);
#else
  GW_THROW(ErrorCode::kNotCompiled,
           "DeviceArray: this gwalign was built without CUDA; rebuild with "
           "-DGWALIGN_ENABLE_CUDA=ON");
#endif
}

template <typename T>
DeviceArray<T>::DeviceArray(std::span<const T> host, const CudaStream& stream)
    : DeviceArray(host.size(), stream) {
  upload(host);
}

template <typename T>
DeviceArray<T>::~DeviceArray() {
#if GW_HAS_CUDA
  if (data_ != nullptr) {
    // Queued kernels may still read the array (a borrowed stream's owner may be gone: see
    // CudaStream::wait_before_release); no throw from a destructor.
    stream_.wait_before_release();
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(stream_.device());
    cudaFree(data_);
    cudaSetDevice(previous);
  }
#endif
}

template <typename T>
DeviceArray<T>::DeviceArray(DeviceArray&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      stream_(std::move(other.stream_)) {}

template <typename T>
DeviceArray<T>& DeviceArray<T>::operator=(DeviceArray&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  std::swap(stream_, other.stream_);
  return *this;
}

template <typename T>
void DeviceArray<T>::upload(std::span<const T> host) {
  GW_CHECK(host.size() <= size_,
           "DeviceArray::upload: " << host.size() << " elements into an array of " << size_);
#if GW_HAS_CUDA
  if (host.empty()) return;
  cuda::DeviceGuard guard(stream_.device());
  const auto stream = static_cast<cudaStream_t>(stream_.get());
  GW_CUDA_CHECK(
      cudaMemcpyAsync(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice, stream));
  GW_CUDA_CHECK(cudaStreamSynchronize(stream));
#endif
}

template <typename T>
std::vector<T> DeviceArray<T>::download(std::size_t count) const {
  GW_CHECK(count <= size_,
           "DeviceArray::download: " << count << " elements from an array of " << size_);
  std::vector<T> host(count);
#if GW_HAS_CUDA
  if (count == 0) return host;
  cuda::DeviceGuard guard(stream_.device());
  const auto stream = static_cast<cudaStream_t>(stream_.get());
  GW_CUDA_CHECK(
      cudaMemcpyAsync(host.data(), data_, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  GW_CUDA_CHECK(cudaStreamSynchronize(stream));
#endif
  return host;
}

template <typename T>
void DeviceArray<T>::copy_from_device_async(const T* source, std::size_t count) {
  GW_CHECK(
      count <= size_,
      "DeviceArray::copy_from_device_async: " << count << " elements into an array of " << size_);
#if GW_HAS_CUDA
  if (count == 0) return;
  cuda::DeviceGuard guard(stream_.device());
  GW_CUDA_CHECK(cudaMemcpyAsync(data_,
                                source,
                                count * sizeof(T),
                                cudaMemcpyDeviceToDevice,
                                static_cast<cudaStream_t>(stream_.get())));
#else
  (void)source;
#endif
}

template class DeviceArray<float>;
template class DeviceArray<double>;
template class DeviceArray<Index>;
template class DeviceArray<Offset>;
template class DeviceArray<std::uint8_t>;

}  // namespace gw
