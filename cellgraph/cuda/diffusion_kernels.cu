// Heat-diffusion CUDA kernels and their host launchers (declared in diffusion_kernels.cuh).
//
// Work decomposition of a step: a block of 8 warps takes 8 consecutive operator rows, one row per
// warp; each lane owns channels lane, lane + 32, ... so the loads of a neighbour's row T_k[j, :]
// are coalesced across the warp, and the row's (col, value) pairs are read once per channel sweep
// (from L1 after the first). The sum over a row's entries runs in CSR order, as on the CPU.
// Device code is compiled as C++17; launchers return the launch status.
#include <algorithm>

#include "cellgraph/cuda/diffusion_kernels.cuh"

namespace gw::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 8;
constexpr Offset kMaxBlocks = 65535;

template <typename T>
__global__ void unpad_kernel(
    const T* x, const Offset* padded_row, Index nodes, Index channels, T w0, T* t0, T* y) {
  const Offset total = static_cast<Offset>(nodes) * channels;
  for (Offset k = blockIdx.x * static_cast<Offset>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<Offset>(gridDim.x) * blockDim.x) {
    const Offset i = k / channels;
    const Offset c = k - i * channels;
    const Offset src = padded_row[i] * channels + c;
    const T v = x[src];
    t0[k] = v;
    y[src] = w0 * v;
  }
}

template <typename T>
__global__ void chebyshev_step_kernel(const Offset* row_offsets,
                                      const Index* cols,
                                      const T* values,
                                      const Offset* padded_row,
                                      Index nodes,
                                      Index channels,
                                      const T* cur,
                                      T* out,
                                      bool first,
                                      T w,
                                      T* y) {
  const int lane = threadIdx.x;
  for (Offset i = static_cast<Offset>(blockIdx.x) * kRowsPerBlock + threadIdx.y; i < nodes;
       i += static_cast<Offset>(gridDim.x) * kRowsPerBlock) {
    const Offset begin = row_offsets[i];
    const Offset end = row_offsets[i + 1];
    const Offset row = i * channels;
    const Offset y_row = padded_row[i] * channels;
    for (Index c = lane; c < channels; c += kWarp) {
      T acc = 0;
      for (Offset p = begin; p < end; ++p) {
        acc += values[p] * cur[static_cast<Offset>(cols[p]) * channels + c];
      }
      const T t = first ? acc : T(2) * acc - out[row + c];
      out[row + c] = t;
      y[y_row + c] += w * t;
    }
  }
}

unsigned grid_for(Offset items, Offset per_block) {
  const Offset blocks = (items + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<Offset>(1, std::min(blocks, kMaxBlocks)));
}

template <typename T>
cudaError_t unpad(const T* x,
                  const Offset* padded_row,
                  Index nodes,
                  Index channels,
                  T w0,
                  T* t0,
                  T* y,
                  cudaStream_t stream) {
  if (nodes == 0) return cudaSuccess;
  unpad_kernel<T><<<grid_for(static_cast<Offset>(nodes) * channels, 256), 256, 0, stream>>>(
      x, padded_row, nodes, channels, w0, t0, y);
  return cudaGetLastError();
}

template <typename T>
cudaError_t step(const Offset* row_offsets,
                 const Index* cols,
                 const T* values,
                 const Offset* padded_row,
                 Index nodes,
                 Index channels,
                 const T* cur,
                 T* out,
                 bool first,
                 T w,
                 T* y,
                 cudaStream_t stream) {
  if (nodes == 0) return cudaSuccess;
  const dim3 block(kWarp, kRowsPerBlock);
  chebyshev_step_kernel<T><<<grid_for(nodes, kRowsPerBlock), block, 0, stream>>>(
      row_offsets, cols, values, padded_row, nodes, channels, cur, out, first, w, y);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_unpad(const float* x,
                         const Offset* padded_row,
                         Index nodes,
                         Index channels,
                         float w0,
                         float* t0,
                         float* y,
                         cudaStream_t stream) {
  return unpad<float>(x, padded_row, nodes, channels, w0, t0, y, stream);
}

cudaError_t launch_unpad(const double* x,
                         const Offset* padded_row,
                         Index nodes,
                         Index channels,
                         double w0,
                         double* t0,
                         double* y,
                         cudaStream_t stream) {
  return unpad<double>(x, padded_row, nodes, channels, w0, t0, y, stream);
}

cudaError_t launch_chebyshev_step(const Offset* row_offsets,
                                  const Index* cols,
                                  const float* values,
                                  const Offset* padded_row,
                                  Index nodes,
                                  Index channels,
                                  const float* cur,
                                  float* out,
                                  bool first,
                                  float w,
                                  float* y,
                                  cudaStream_t stream) {
  return step<float>(
      row_offsets, cols, values, padded_row, nodes, channels, cur, out, first, w, y, stream);
}

cudaError_t launch_chebyshev_step(const Offset* row_offsets,
                                  const Index* cols,
                                  const double* values,
                                  const Offset* padded_row,
                                  Index nodes,
                                  Index channels,
                                  const double* cur,
                                  double* out,
                                  bool first,
                                  double w,
                                  double* y,
                                  cudaStream_t stream) {
  return step<double>(
      row_offsets, cols, values, padded_row, nodes, channels, cur, out, first, w, y, stream);
}

}  // namespace gw::cuda
