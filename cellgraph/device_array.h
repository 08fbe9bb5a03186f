// A typed array in CUDA device memory, for callers of the cellgraph CUDA classes that start from
// host data (tests, benchmarks, the CLI). Header without CUDA includes.
//
// Ownership: the array owns its allocation (cudaMalloc on construction, cudaFree on destruction);
// move-only. upload / download are synchronous for the host (cudaMemcpy) but not ordered after
// work that the cellgraph CUDA classes enqueue on their own (non-blocking) streams: call their
// synchronize() before downloading what they wrote. In a build without CUDA the constructor
// throws gw::Error(ErrorCode::kNotCompiled).
//
// Instantiated for float, double, gw::Index, gw::Offset and std::uint8_t.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gw {

template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  // `count` elements on CUDA device `device` (uninitialized; count 0 allocates nothing).
  DeviceArray(std::size_t count, int device);
  // A device copy of `host`.
  DeviceArray(std::span<const T> host, int device);
  ~DeviceArray();
  DeviceArray(DeviceArray&& other) noexcept;
  DeviceArray& operator=(DeviceArray&& other) noexcept;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  int device() const { return device_; }

  // Copies host.size() <= size() elements to the start of the array.
  void upload(std::span<const T> host);
  // The first `count` elements (all when count is omitted) as a host vector.
  std::vector<T> download(std::size_t count) const;
  std::vector<T> download() const { return download(size_); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  int device_ = 0;
};

}  // namespace gw
