// Exact brute-force kNN on the device (knn_kernels.cuh; the method is in graph/cuda_graph.h).
#include <math_constants.h>

#include <algorithm>
#include <cstdint>

#include "graph/cuda/knn_kernels.cuh"

namespace gw::cuda {

namespace {

constexpr int kQueries = kKnnQueriesPerBlock;
constexpr int kTile = kKnnPointsPerTile;
static_assert(kTile == 64, "the candidate mask is one 64-bit word per tile");
static_assert(kTile % 4 == 0, "tiles are read as float4");

// The CPU's exact squared distance (graph/knn.cpp): float64 differences, squares and a running
// sum from 0, in coordinate order, each operation rounded on its own (the _rn intrinsics are never
// fused into multiply-adds), so the value is bitwise the CPU's.
__device__ double exact_squared_distance(const double* x, std::int64_t i, std::int64_t j, int d) {
  const double* a = x + i * d;
  const double* b = x + j * d;
  double sum = 0.0;
  for (int t = 0; t < d; ++t) {
    const double diff = __dsub_rn(b[t], a[t]);
    sum = __dadd_rn(sum, __dmul_rn(diff, diff));
  }
  return sum;
}

// The filter threshold for a query whose k-th best exact squared distance is `kth` (see
// KnnSearchArgs). Rounded up to float32; +inf stays +inf.
__device__ float filter_bound(const KnnSearchArgs& a, double kth) {
  if (!a.filter || kth == CUDART_INF) return CUDART_INF_F;
  const double root = sqrt(kth) * (1.0 + a.filter_rel) + a.filter_abs;
  return __double2float_ru(root * root * (1.0 + 0x1p-20) + 1e-37);
}

// Offers candidate (d2, j) to the sorted list (list_d2, list_index) of `filled` <= k entries;
// returns the new fill. Only called for candidates that beat the k-th entry of a full list.
__device__ int insert_candidate(
    double* list_d2, Index* list_index, int filled, int k, double d2, Index j) {
  int pos = filled < k ? filled : k - 1;
  while (pos > 0) {
    const double pd = list_d2[pos - 1];
    const Index pj = list_index[pos - 1];
    if (pd < d2 || (pd == d2 && pj < j)) break;
    list_d2[pos] = pd;
    list_index[pos] = pj;
    --pos;
  }
  list_d2[pos] = d2;
  list_index[pos] = j;
  return filled < k ? filled + 1 : k;
}

// Stages dims [c, c + kDc) of rows [first, first + count) into tile[t][r] (zero beyond n or d,
// which adds nothing to a squared difference).
template <int kDc, int kRows>
__device__ void stage_rows(
    const float* centred, std::int64_t n, int d, std::int64_t first, int c, float (*tile)[kRows]) {
  for (int e = threadIdx.x; e < kRows * kDc; e += blockDim.x) {
    const int r = e / kDc;
    const int t = e - r * kDc;
    const std::int64_t row = first + r;
    const int dim = c + t;
    tile[t][r] = (row < n && dim < d) ? centred[row * d + dim] : 0.0f;
  }
}

// One thread per query, kQueries per block; every block streams all n points in tiles of kTile,
// starting at the tile of its own first query (inputs in spatial order find close neighbours
// first, which tightens the filter early) and wrapping around.
template <int kDc>
__global__ void __launch_bounds__(kQueries) knn_search_kernel(KnnSearchArgs a) {
  __shared__ float s_query[kDc][kQueries];
  __shared__ __align__(16) float s_point[kDc][kTile];

  const std::int64_t n = a.n;
  const int d = a.d;
  const int k = a.k;
  const std::int64_t block_first = static_cast<std::int64_t>(blockIdx.x) * kQueries;
  const std::int64_t i = block_first + threadIdx.x;
  const bool active = i < n;
  const std::int64_t num_tiles = (n + kTile - 1) / kTile;
  const std::int64_t first_tile = block_first / kTile;

  double* list_d2 = a.best_d2 + (active ? i * k : 0);
  Index* list_index = a.best_index + (active ? i * k : 0);
  int filled = 0;
  float bound = CUDART_INF_F;

  for (std::int64_t step = 0; step < num_tiles; ++step) {
    std::int64_t tile = first_tile + step;
    if (tile >= num_tiles) tile -= num_tiles;
    const std::int64_t p0 = tile * kTile;

    float acc[kTile];
#pragma unroll
    for (int p = 0; p < kTile; ++p) acc[p] = 0.0f;
    for (int c = 0; c < d; c += kDc) {
      __syncthreads();  // the previous chunk's readers are done with the tiles
      // With a single chunk (d <= kDc) the query tile never changes: staged once.
      if (d > kDc || step == 0) stage_rows<kDc, kQueries>(a.centred, n, d, block_first, c, s_query);
      stage_rows<kDc, kTile>(a.centred, n, d, p0, c, s_point);
      __syncthreads();
#pragma unroll
      for (int t = 0; t < kDc; ++t) {
        const float q = s_query[t][threadIdx.x];
#pragma unroll
        for (int p = 0; p < kTile; p += 4) {
          const float4 x = *reinterpret_cast<const float4*>(&s_point[t][p]);
          const float d0 = x.x - q;
          const float d1 = x.y - q;
          const float d2 = x.z - q;
          const float d3 = x.w - q;
          acc[p] = fmaf(d0, d0, acc[p]);
          acc[p + 1] = fmaf(d1, d1, acc[p + 1]);
          acc[p + 2] = fmaf(d2, d2, acc[p + 2]);
          acc[p + 3] = fmaf(d3, d3, acc[p + 3]);
        }
      }
    }
    if (!active) continue;

    // Candidates of this tile against the bound at its start (a superset of those against the
    // bound as it tightens below), minus the points past n and the query itself.
    // Most tiles hold no candidate once the list is full: their minimum settles that in one
    // min per pair, the mask costs three.
    unsigned long long mask = ~0ull;
    if (a.filter) {
      float lowest = acc[0];
#pragma unroll
      for (int p = 1; p < kTile; ++p) lowest = fminf(lowest, acc[p]);
      mask = 0;
      if (lowest <= bound) {
#pragma unroll
        for (int p = 0; p < kTile; ++p) {
          mask |= static_cast<unsigned long long>(acc[p] <= bound) << p;
        }
      }
    }
    const std::int64_t valid = n - p0;
    if (valid < kTile) mask &= (1ull << valid) - 1;
    if (i >= p0 && i < p0 + kTile) mask &= ~(1ull << (i - p0));
    while (mask != 0) {
      const int p = __ffsll(static_cast<long long>(mask)) - 1;
      mask &= mask - 1;
      const Index j = static_cast<Index>(p0 + p);
      const double d2 = exact_squared_distance(a.exact, i, j, d);
      if (filled == k) {
        const double kth = list_d2[k - 1];
        if (d2 > kth || (d2 == kth && j > list_index[k - 1])) continue;
      }
      filled = insert_candidate(list_d2, list_index, filled, k, d2, j);
      if (filled == k) bound = filter_bound(a, list_d2[k - 1]);
    }
  }
}

__global__ void knn_distances_kernel(const double* best_d2, std::int64_t count, float* out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
       e += stride) {
    out[e] = __double2float_rn(__dsqrt_rn(best_d2[e]));
  }
}

template <int kDc>
cudaError_t launch_search(const KnnSearchArgs& args, cudaStream_t stream) {
  const std::int64_t blocks = (static_cast<std::int64_t>(args.n) + kQueries - 1) / kQueries;
  knn_search_kernel<kDc><<<static_cast<unsigned>(blocks), kQueries, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_knn_search(const KnnSearchArgs& args, cudaStream_t stream) {
  if (args.n <= 1 || args.k < 1) return cudaSuccess;
  // The dimension chunk: the whole point for d <= 4 (no padded work), else 8 or 16 dimensions
  // per shared-memory stage.
  switch (args.d) {
    case 1:
      return launch_search<1>(args, stream);
    case 2:
      return launch_search<2>(args, stream);
    case 3:
      return launch_search<3>(args, stream);
    case 4:
      return launch_search<4>(args, stream);
    default:
      return args.d <= 8 ? launch_search<8>(args, stream) : launch_search<16>(args, stream);
  }
}

cudaError_t launch_knn_distances(const double* best_d2,
                                 Offset count,
                                 float* distances,
                                 cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  constexpr int kThreads = 256;
  // A grid-stride loop: the grid is capped (x may go to 2^31 - 1, but a few waves suffice).
  const std::int64_t blocks = std::min<std::int64_t>((count + kThreads - 1) / kThreads, 1 << 20);
  knn_distances_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      best_d2, count, distances);
  return cudaGetLastError();
}

}  // namespace gw::cuda
