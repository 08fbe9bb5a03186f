// gw::DeviceArray<T>: a typed array in CUDA device memory, bound to the gw::CudaStream its copies
// go through. The one device-memory type of the public API: callers that start from host data
// (tests, benchmarks, the CLI, the Python module) hand its data() to the CUDA classes
// (cellgraph/cuda_*.h, sinkhorn/cuda_sinkhorn.h). Header without CUDA includes.
//
// Ordering: upload() and download() are enqueued on stream() (cudaMemcpyAsync) and return when the
// copy has completed, so they are ordered with every kernel enqueued on the same stream. Build the
// array from the stream of the class that reads or writes it (e.g. `DeviceArray<float> x(host,
// diffusion.stream())`): then no extra synchronization is needed. With another stream, synchronize
// the writer's stream (or record an event) before reading.
//
// Ownership: the array owns its allocation (cudaMalloc on construction, cudaFree on destruction,
// after synchronizing its stream, or the whole device when the stream is borrowed: its owner may
// destroy a borrowed stream before the array, which then must not copy any more but is still
// safe to destroy); move-only. In a build without CUDA the constructors throw
// gw::Error(ErrorCode::kNotCompiled).
//
// Thread-safety: one host thread at a time per array.
//
// Instantiated for float, double, gw::Index, gw::Offset and std::uint8_t.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "core/cuda_stream.h"

namespace gw {

template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  // `count` elements on the stream's device (uninitialized; count 0 allocates nothing).
  DeviceArray(std::size_t count, const CudaStream& stream);
  // A device copy of `host` (returns when the copy is complete).
  DeviceArray(std::span<const T> host, const CudaStream& stream);
  ~DeviceArray();
  DeviceArray(DeviceArray&& other) noexcept;
  DeviceArray& operator=(DeviceArray&& other) noexcept;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  int device() const { return stream_.device(); }
  const CudaStream& stream() const { return stream_; }

  // Copies host.size() <= size() elements to the start of the array, on stream(), after the work
  // already enqueued there; returns when the copy is complete.
  void upload(std::span<const T> host);
  // The first `count` elements (all when count is omitted) as a host vector, copied on stream()
  // after the work already enqueued there.
  std::vector<T> download(std::size_t count) const;
  std::vector<T> download() const { return download(size_); }
  // Copies `count` <= size() elements from device memory at `source` (on this array's device) to
  // the start of the array, enqueued on stream() after the work already there; returns at once
  // (the source must stay valid until the stream reaches the copy).
  void copy_from_device_async(const T* source, std::size_t count);

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  CudaStream stream_;
};

}  // namespace gw
