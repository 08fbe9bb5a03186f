// Device-memory helpers shared by the cellgraph CUDA orchestration files (CUDA builds only):
// a growing device buffer, a current-device guard, a device check shared by the constructors.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "cellgraph/cuda/cuda_check.h"
#include "core/context.h"
#include "core/error.h"

namespace gw::cuda {

// Owning device allocation that only grows (contents are not preserved across growth).
class Scratch {
 public:
  Scratch() = default;
  ~Scratch() {
    if (ptr_ != nullptr) cudaFree(ptr_);  // no throw from a destructor
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  Scratch(Scratch&& other) noexcept { swap(other); }
  Scratch& operator=(Scratch&& other) noexcept {
    swap(other);
    return *this;
  }

  // At least `bytes` bytes (1 byte at minimum, so data() is never null).
  void ensure(std::size_t bytes) {
    bytes = bytes == 0 ? 1 : bytes;
    if (bytes <= bytes_) return;
    if (ptr_ != nullptr) GW_CUDA_CHECK(cudaFree(ptr_));
    ptr_ = nullptr;
    bytes_ = 0;
    GW_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    bytes_ = bytes;
  }
  template <typename T>
  T* ensure_as(std::size_t count) {
    ensure(count * sizeof(T));
    return as<T>();
  }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void swap(Scratch& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(bytes_, other.bytes_);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

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

// A non-blocking stream owned by an object.
class Stream {
 public:
  Stream() { GW_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_ != nullptr) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  void synchronize() const { GW_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// Checks that `pointer` is device (or managed) memory of `device`; `what` names it for the message.
inline void check_device_pointer(const void* pointer, int device, const char* what) {
  if (pointer == nullptr) return;  // empty inputs may pass null
  cudaPointerAttributes attributes{};
  GW_CUDA_CHECK(cudaPointerGetAttributes(&attributes, pointer));
  GW_CHECK(attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged,
           what << " is not device memory; copy it to the device first (gw::DeviceArray)");
  GW_CHECK(attributes.device == device,
           what << " lives on device " << attributes.device << " but this instance uses device "
                << device);
}

}  // namespace gw::cuda
