// CUDA host-side helpers for the orchestration code of every module (CUDA builds only; private:
// gwalign_add_module does not install cuda/ folders and no public header includes this one).
// Host C++20 (std::span); kernels (*.cu) do not need it: their launchers return the launch
// status and the callers wrap them in GW_CUDA_CHECK.
//
//   GW_CUDA_CHECK(call)      throws gw::Error(kInternal) unless a runtime call returns cudaSuccess
//   GW_CUDA_CHECK_LAUNCH()   the same for the last kernel launch (cudaGetLastError)
//   DeviceBuffer<T>          owning, grow-only device allocation of T (cudaMalloc)
//   PinnedBuffer<T>          owning, grow-only page-locked host allocation of T (cudaMallocHost)
//   DeviceGuard              makes a device current for a scope
//   stream_of(CudaStream)    the cudaStream_t of a gw::CudaStream handle (core/cuda_stream.h)
//   copy_to_device / copy_to_host
//                            copies ordered on a stream (never cudaMemcpy: the legacy default
//                            stream it uses is not ordered with non-blocking streams)
//   check_device_pointer     rejects host memory and memory of another device
//
// Thread-safety: none of these objects may be used from two threads at once.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/cuda_stream.h"
#include "core/error.h"

// GW_CUDA_CHECK(call): throws gw::Error(kInternal) naming the call and CUDA's error name and
// string (with file and line) when a CUDA runtime call does not return cudaSuccess.
#define GW_CUDA_CHECK(call)                                                                   \
  do {                                                                                        \
    const cudaError_t gw_cuda_status_ = (call);                                               \
    if (gw_cuda_status_ != cudaSuccess) {                                                     \
      GW_THROW(::gw::ErrorCode::kInternal,                                                    \
               "CUDA call " #call " failed: " << cudaGetErrorName(gw_cuda_status_) << " ("    \
                                              << cudaGetErrorString(gw_cuda_status_) << ")"); \
    }                                                                                         \
  } while (0)

// GW_CUDA_CHECK_LAUNCH(): after a kernel launch, reports launch-configuration errors at the
// launch site.
#define GW_CUDA_CHECK_LAUNCH() GW_CUDA_CHECK(cudaGetLastError())

namespace gw::cuda {

// Where a BasicBuffer's memory lives.
enum class Memory {
  kDevice,  // cudaMalloc: device memory of the device current at allocation
  kPinned,  // cudaMallocHost: page-locked host memory, for asynchronous copies
};

// `size()` elements of T in `kMemory`, uninitialized. Move-only; the destructor frees.
// ensure() only grows, and growing does not keep the contents (the old block is freed first, so
// the peak is one block). Freeing does not throw: CUDA errors are sticky and surface at the next
// checked call. Growing frees memory that queued work may still use: synchronize first.
template <typename T, Memory kMemory>
class BasicBuffer {
 public:
  BasicBuffer() = default;
  explicit BasicBuffer(std::size_t count) { ensure(count); }
  ~BasicBuffer() { release(); }
  BasicBuffer(BasicBuffer&& other) noexcept { swap(other); }
  BasicBuffer& operator=(BasicBuffer&& other) noexcept {
    swap(other);
    return *this;
  }
  BasicBuffer(const BasicBuffer&) = delete;
  BasicBuffer& operator=(const BasicBuffer&) = delete;

  // At least `count` elements (at least one, so get() is never null afterwards).
  void ensure(std::size_t count) {
    count = count == 0 ? 1 : count;
    if (count <= size_) return;
    release();
    void* pointer = nullptr;
    if constexpr (kMemory == Memory::kDevice) {
      GW_CUDA_CHECK(cudaMalloc(&pointer, count * sizeof(T)));
    } else {
      GW_CUDA_CHECK(cudaMallocHost(&pointer, count * sizeof(T)));
    }
    ptr_ = static_cast<T*>(pointer);
    size_ = count;
  }
  // Frees the memory now (e.g. before a large allocation elsewhere).
  void release() noexcept {
    if (ptr_ != nullptr) {
      if constexpr (kMemory == Memory::kDevice) {
        cudaFree(ptr_);
      } else {
        cudaFreeHost(ptr_);
      }
    }
    ptr_ = nullptr;
    size_ = 0;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return size_; }

  // The first `count` elements as a host span (pinned memory only).
  std::span<T> span(std::size_t count) const {
    static_assert(kMemory == Memory::kPinned, "span() is for host memory, not device memory");
    return {ptr_, count};
  }
  // A byte buffer seen as elements of U, for storage whose element type changes from call to
  // call (cub temporary storage, results in the caller's precision); cudaMalloc aligns to 256
  // bytes, enough for any U.
  template <typename U>
  U* as() const {
    static_assert(std::is_same_v<T, std::byte>, "as<U>() is for byte buffers; use get()");
    return reinterpret_cast<U*>(ptr_);
  }

  void swap(BasicBuffer& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(size_, other.size_);
  }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

template <typename T>
using DeviceBuffer = BasicBuffer<T, Memory::kDevice>;

template <typename T>
using PinnedBuffer = BasicBuffer<T, Memory::kPinned>;

// Makes `device` current for the scope and restores the previous device.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    GW_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) GW_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

inline cudaStream_t stream_of(const CudaStream& stream) {
  return static_cast<cudaStream_t>(stream.get());
}

// Copies `count` elements host -> device on `stream`, after the work already enqueued there, and
// returns when the copy is complete (so `host` may be pageable memory and reused at once).
template <typename T>
void copy_to_device(T* device, const T* host, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  GW_CUDA_CHECK(cudaMemcpyAsync(device, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
  GW_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Copies `count` elements device -> host on `stream`, after the work already enqueued there, and
// returns when they are in `host`.
template <typename T>
void copy_to_host(T* host, const T* device, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  GW_CUDA_CHECK(cudaMemcpyAsync(host, device, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
  GW_CUDA_CHECK(cudaStreamSynchronize(stream));
}

// Throws kInvalidArgument unless `pointer` is device (or managed) memory of `device`. `what` names
// the argument in the message; `remedy` follows "is not device memory; " (e.g. "copy it to the
// device first"). A null pointer passes: callers that need one check it first.
inline void check_device_pointer(const void* pointer,
                                 int device,
                                 std::string_view what,
                                 std::string_view remedy) {
  if (pointer == nullptr) return;
  cudaPointerAttributes attributes{};
  GW_CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
  GW_CHECK(attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged,
           what << " is not device memory; " << remedy);
  GW_CHECK(attributes.device == device,
           what << " lives on device " << attributes.device << " but this instance uses device "
                << device);
}

}  // namespace gw::cuda
