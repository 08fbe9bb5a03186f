// cub::DeviceScan wrappers (scan.cuh).
#include <cub/device/device_scan.cuh>

#include "cellgraph/cuda/scan.cuh"

namespace gw::cuda {

cudaError_t exclusive_sum(void* temp,
                          std::size_t& temp_bytes,
                          const Offset* in,
                          Offset* out,
                          Offset count,
                          cudaStream_t stream) {
  return cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, count, stream);
}

cudaError_t inclusive_sum(void* temp,
                          std::size_t& temp_bytes,
                          const Offset* in,
                          Offset* out,
                          Offset count,
                          cudaStream_t stream) {
  return cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, count, stream);
}

}  // namespace gw::cuda
