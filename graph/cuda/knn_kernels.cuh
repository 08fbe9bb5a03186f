// Host launchers of the exact kNN kernels (knn_kernels.cu). Private to the graph module: included
// by cuda/cuda_knn.cpp only, in CUDA builds. Every launcher returns the launch status; wrap calls
// in GW_CUDA_CHECK.
#pragma once

#include <cuda_runtime_api.h>

#include "core/types.h"

namespace gw::cuda {

// Queries per block (one thread each) and points per shared-memory tile of the search kernel.
inline constexpr int kKnnQueriesPerBlock = 128;
inline constexpr int kKnnPointsPerTile = 64;

// One exact kNN search over n points of dimension d (all pointers device memory).
struct KnnSearchArgs {
  // n x d row-major, float32 coordinates minus a centre: the filter's distances only.
  const float* centred = nullptr;
  // n x d row-major, the input coordinates in float64: the exact distances.
  const double* exact = nullptr;
  Index n = 0;
  int d = 0;
  int k = 0;  // 1 <= k <= n - 1
  // The filter: a pair whose float32 squared distance f satisfies
  //   f <= (sqrt(kth) (1 + filter_rel) + filter_abs)^2 (1 + 2^-20) + 1e-37
  // (kth: the query's current k-th best exact squared distance) is evaluated exactly. filter_abs
  // bounds the norm of the centred coordinates' rounding error of a pair, filter_rel the relative
  // rounding of the float32 sum (cuda_knn.cpp derives both). filter == false: every pair is exact.
  double filter_abs = 0.0;
  double filter_rel = 0.0;
  bool filter = true;
  // Outputs, n x k row-major: the k best (squared distance, index) of each query, ascending by
  // (distance, index). Need no initialization.
  double* best_d2 = nullptr;
  Index* best_index = nullptr;
};

// Runs the search (grid: ceil(n / kKnnQueriesPerBlock) blocks).
cudaError_t launch_knn_search(const KnnSearchArgs& args, cudaStream_t stream);

// distances[e] = float32(sqrt(best_d2[e])) (correctly rounded, as the CPU's
// static_cast<float>(std::sqrt(d2))), e < count.
cudaError_t launch_knn_distances(const double* best_d2,
                                 Offset count,
                                 float* distances,
                                 cudaStream_t stream);

}  // namespace gw::cuda
