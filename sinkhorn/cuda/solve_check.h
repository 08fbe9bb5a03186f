// gw::cuda::SolveCheck: what a check iteration of a CUDA Sinkhorn solve reads back (CudaSinkhorn,
// CudaSparseSinkhorn). Private to the module; included in CUDA builds only.
//
// One device block holds the summed marginal residual (written by launch_sum) and the kernels'
// status slots (sinkhorn_kernels.cuh: the smallest offending row / column or kNoIndex); a pinned
// host copy of it is read back in one transfer per check, so a check costs one copy and one
// stream synchronization whatever it finds.
//
// Thread-safety: one solve at a time (it belongs to one Impl and its stream).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "core/cuda/cuda_util.h"
#include "core/error.h"
#include "sinkhorn/cuda/sinkhorn_kernels.cuh"

namespace gw::cuda {

class SolveCheck {
 public:
  // Allocates the device block and its pinned copy on the current device (call it under the
  // owner's DeviceGuard); release() frees them (after the stream has finished with them).
  void allocate() {
    host_.ensure(1);
    device_.ensure(1);
  }
  void release() {
    host_.release();
    device_.release();
  }

  // Where the kernels write: the status slots and the residual sum.
  int* status() {
    return reinterpret_cast<int*>(reinterpret_cast<char*>(device_.get()) + offsetof(Block, status));
  }
  double* error() { return reinterpret_cast<double*>(device_.get()); }

  // Marks every status slot "nothing found" on `stream`, before the first iteration of a solve.
  void reset(cudaStream_t stream) {
    GW_CUDA_CHECK(cudaMemsetAsync(status(), 0x7F, sizeof(int) * kStatusSlots, stream));
  }

  // Copies the block to the host after the work queued on `stream`, waits for it, and throws
  // kBadData naming `who` ("CudaSinkhorn::solve") and the first bad row or column; `entry` names
  // what an empty row or column lacks ("entry", "support entry") and `hint` is appended to that
  // message (may be empty). Returns the residual sum.
  double read(cudaStream_t stream, const char* who, const char* entry, const char* hint) {
    GW_CUDA_CHECK(
        cudaMemcpyAsync(host_.get(), device_.get(), sizeof(Block), cudaMemcpyDeviceToHost, stream));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream));
    const int* slot = host_.get()->status;
    GW_CHECK_CODE(slot[kBadRow] == kNoIndex,
                  ErrorCode::kBadData,
                  who << ": the cost has a NaN or -inf entry in row " << slot[kBadRow]);
    GW_CHECK_CODE(slot[kBadColumn] == kNoIndex,
                  ErrorCode::kBadData,
                  who << ": the cost has a NaN or -inf entry in column " << slot[kBadColumn]);
    GW_CHECK_CODE(slot[kEmptyRow] == kNoIndex,
                  ErrorCode::kBadData,
                  who << ": row " << slot[kEmptyRow] << " has positive mass but no finite-cost "
                      << entry << " towards any positive-mass column" << hint);
    GW_CHECK_CODE(slot[kEmptyColumn] == kNoIndex,
                  ErrorCode::kBadData,
                  who << ": column " << slot[kEmptyColumn] << " has positive mass but no "
                      << "finite-cost " << entry << " towards any positive-mass row" << hint);
    return host_.get()->error;
  }

 private:
  struct Block {
    double error;
    int status[kStatusSlots];
  };
  PinnedBuffer<Block> host_;
  DeviceBuffer<Block> device_;
};

}  // namespace gw::cuda
