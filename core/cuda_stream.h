// gw::CudaStream: the CUDA stream (and device) that a CUDA class or a gw::DeviceArray enqueues its
// work and copies on. Header without CUDA includes: the stream travels as an opaque pointer
// (a cudaStream_t).
//
// Two kinds:
//   CudaStream::create(device)          a new non-blocking stream on `device`, owned: destroyed
//                                       (after a synchronize) when the last copy of the handle
//                                       goes away;
//   CudaStream::borrow(stream, device)  the caller's stream (PyTorch's current stream, a RAFT or
//                                       faiss resources handle's stream, nullptr for the legacy
//                                       default stream), never destroyed by gwalign: it must
//                                       outlive every object that holds the handle.
// Copies of a handle share the stream, so several CUDA classes built from one handle run their
// work in one order without synchronizing the device between them: pass the handle to each
// (e.g. a CudaHeatDiffusion whose output a CudaAggregator reads, or a caller's framework stream).
//
// Ordering contract of the CUDA classes: everything a class or a DeviceArray does with device
// memory, host-to-device and device-to-host copies included, is enqueued on its handle's stream;
// host-side results are returned only after that stream has reached them. Work on other streams is
// not ordered with it: synchronize() (or a CUDA event) is the caller's tool for that.
//
// Thread-safety: a handle may be copied and read from several threads; the stream itself is used by
// one host thread at a time (the CUDA classes are single-threaded objects).
//
// In a build without CUDA, create() and borrow() throw gw::Error(ErrorCode::kNotCompiled); a
// default-constructed handle is empty (valid() false) in every build.
#pragma once

#include <memory>
#include <utility>

namespace gw {

class CudaStream {
 public:
  // An empty handle: valid() is false and get() throws. The CUDA classes never hold one.
  CudaStream() = default;

  // A new non-blocking stream on CUDA device `device`. Throws kNotCompiled without CUDA,
  // kInvalidArgument when the device does not exist.
  static CudaStream create(int device = 0);
  // The caller's stream (a cudaStream_t as void*; nullptr is the legacy default stream) on
  // `device`, not owned. Throws kNotCompiled without CUDA, kInvalidArgument for a bad device.
  static CudaStream borrow(void* stream, int device = 0);

  bool valid() const { return state_ != nullptr; }
  // The cudaStream_t as an opaque pointer (nullptr for the legacy default stream).
  void* get() const;
  int device() const;
  // True when the handle created the stream (create()), false for borrow().
  bool owned() const;
  // Blocks until all work enqueued on the stream so far has finished.
  void synchronize() const;
  // The wait before freeing memory that work on this stream may still use, for destructors:
  // synchronizes the stream when the handle owns it and the whole device when it is borrowed,
  // since the owner may have destroyed a borrowed stream already (a Python object or cache that
  // outlives the torch / CuPy stream it was made on; synchronizing a destroyed stream crashes
  // inside the driver). The device wait covers that stream's work while it existed. Never
  // throws: CUDA errors are sticky and surface at the next checked call. Does nothing on an
  // empty handle or in a build without CUDA.
  void wait_before_release() const noexcept;

 private:
  struct State;
  explicit CudaStream(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace gw
