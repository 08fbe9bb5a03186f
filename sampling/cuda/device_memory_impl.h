// Device and pinned-host memory helpers of the sampling and solver CUDA code (CUDA builds only;
// private, not installed): typed owning allocations, a current-device scope, an owned stream, a
// device-pointer check, and GW_CUDA_CHECK.
//
// The names differ from the cellgraph and sinkhorn helpers on purpose (those are private to their
// modules and may differ in details); all of them belong in core/ once core offers a CUDA header.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>
#include <utility>

#include "core/error.h"

// GW_CUDA_CHECK(call): throws gw::Error(kInternal) naming the call and CUDA's error when a CUDA
// runtime call does not return cudaSuccess (the same macro as sinkhorn/cuda/cuda_check.h; guarded,
// so either definition serves).
#ifndef GW_CUDA_CHECK
#define GW_CUDA_CHECK(call)                                                                   \
  do {                                                                                        \
    const cudaError_t gw_cuda_status_ = (call);                                               \
    if (gw_cuda_status_ != cudaSuccess) {                                                     \
      GW_THROW(::gw::ErrorCode::kInternal,                                                    \
               "CUDA call " #call " failed: " << cudaGetErrorName(gw_cuda_status_) << " ("    \
                                              << cudaGetErrorString(gw_cuda_status_) << ")"); \
    }                                                                                         \
  } while (0)
#endif

namespace gw::cuda {

// `count` elements of T in device memory of the current device (cudaMalloc), uninitialized.
// Move-only. ensure() grows the allocation (contents are not kept).
template <typename T>
class DeviceAlloc {
 public:
  DeviceAlloc() = default;
  explicit DeviceAlloc(std::size_t count) { ensure(count); }
  ~DeviceAlloc() { release(); }
  DeviceAlloc(DeviceAlloc&& other) noexcept { swap(other); }
  DeviceAlloc& operator=(DeviceAlloc&& other) noexcept {
    swap(other);
    return *this;
  }
  DeviceAlloc(const DeviceAlloc&) = delete;
  DeviceAlloc& operator=(const DeviceAlloc&) = delete;

  // At least `count` elements (at least one, so get() is never null).
  void ensure(std::size_t count) {
    count = count == 0 ? 1 : count;
    if (count <= size_) return;
    release();
    void* pointer = nullptr;
    GW_CUDA_CHECK(cudaMalloc(&pointer, count * sizeof(T)));
    ptr_ = static_cast<T*>(pointer);
    size_ = count;
  }
  // Frees the memory now (e.g. before a large host copy).
  void release() noexcept {
    if (ptr_ != nullptr) cudaFree(ptr_);  // no throw: errors are sticky and surface later
    ptr_ = nullptr;
    size_ = 0;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return size_; }
  void swap(DeviceAlloc& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(size_, other.size_);
  }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

// `count` elements of T in page-locked host memory (cudaMallocHost), for asynchronous copies.
template <typename T>
class PinnedAlloc {
 public:
  PinnedAlloc() = default;
  explicit PinnedAlloc(std::size_t count) { ensure(count); }
  ~PinnedAlloc() { release(); }
  PinnedAlloc(PinnedAlloc&& other) noexcept { swap(other); }
  PinnedAlloc& operator=(PinnedAlloc&& other) noexcept {
    swap(other);
    return *this;
  }
  PinnedAlloc(const PinnedAlloc&) = delete;
  PinnedAlloc& operator=(const PinnedAlloc&) = delete;

  void ensure(std::size_t count) {
    count = count == 0 ? 1 : count;
    if (count <= size_) return;
    release();
    void* pointer = nullptr;
    GW_CUDA_CHECK(cudaMallocHost(&pointer, count * sizeof(T)));
    ptr_ = static_cast<T*>(pointer);
    size_ = count;
  }
  void release() noexcept {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return size_; }
  std::span<T> span(std::size_t count) const { return {ptr_, count}; }
  void swap(PinnedAlloc& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(size_, other.size_);
  }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

// Makes `device` current for the scope and restores the previous device.
class ScopedDevice {
 public:
  explicit ScopedDevice(int device) {
    GW_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) GW_CUDA_CHECK(cudaSetDevice(device));
  }
  ~ScopedDevice() { cudaSetDevice(previous_); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

// A non-blocking stream of the current device, synchronized and destroyed with the object.
class OwnedStream {
 public:
  OwnedStream() { GW_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~OwnedStream() {
    if (stream_ != nullptr) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;

  cudaStream_t get() const { return stream_; }
  void synchronize() const { GW_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// Throws kInvalidArgument unless `pointer` is device (or managed) memory of `device`; `what`
// names the argument in the message.
inline void require_device_pointer(const void* pointer, int device, const char* what) {
  GW_CHECK(pointer != nullptr, what << " is null");
  cudaPointerAttributes attributes{};
  GW_CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
  GW_CHECK(attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged,
           what << " is not device memory; copy it to the device first");
  GW_CHECK(attributes.device == device,
           what << " lives on device " << attributes.device << " but this instance uses device "
                << device);
}

}  // namespace gw::cuda
