// Exact kNN search and kNN graphs on the device (graph/cuda_graph.h). Compiled into every build;
// without CUDA every entry point throws ErrorCode::kNotCompiled.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/error.h"
#include "graph/cuda_graph.h"

#if GW_HAS_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda/cuda_util.h"
#include "graph/cuda/device_graph_impl.h"
#include "graph/cuda/graph_kernels.cuh"
#include "graph/cuda/knn_kernels.cuh"
#endif

namespace gw {

#if GW_HAS_CUDA

namespace {

// knn_search's argument checks (graph/knn.cpp), with its messages; returns the clipped k.
template <typename T>
int check_knn_arguments(std::span<const T> points, Index n, int d, int k) {
  GW_CHECK(n >= 1, "kNN search needs at least one point, got n = " << n);
  GW_CHECK(d >= 1, "kNN search: point dimension must be >= 1, got " << d);
  GW_CHECK(k >= 1, "kNN search: k must be >= 1, got " << k);
  GW_CHECK(points.size() == static_cast<std::size_t>(n) * d,
           "kNN search: " << points.size() << " coordinates for n = " << n
                          << " points of dimension " << d << " (expected "
                          << static_cast<std::size_t>(n) * d << ")");
  check_all_finite(points, "kNN input points");
  return static_cast<int>(std::min<Index>(k, n - 1));
}

void check_algorithm(KnnAlgorithm algorithm) {
  GW_CHECK(algorithm == KnnAlgorithm::kAuto || algorithm == KnnAlgorithm::kBruteForce,
           "knn_graph on CUDA runs exact brute force: KnnGraphOptions::algorithm must be kAuto or "
           "kBruteForce, got kKdTree (use the CPU knn_graph for the k-d tree)");
}

// The float32 rounding of one coordinate after centring is at most (2^-24 + 2^-52) |x - c|: the
// float64 subtraction, then the conversion. A pair's error vector is bounded by twice the largest
// |x_t - c_t| per coordinate, in norm; 2.1 leaves room for the rounding of the norm itself.
constexpr double kAbsFactor = 2.1 * 0x1p-24;
// Relative rounding of the float32 sum of d squares of rounded differences ((d + 1) 2^-24 with a
// float32 difference, fused or not), and of the float64 exact value it is compared against:
// (d + 8) 2^-23 is twice that, with margin.
constexpr double kRelBase = 8.0;
// float32 squares must not overflow: 4 d max|x - c|^2 below this (FLT_MAX is 3.4e38).
constexpr double kFloatSafeSum = 1e37;

// The points on the device: float64 copies for exact distances and float32 centred copies for the
// filter, with the filter's bounds.
struct DevicePoints {
  cuda::DeviceBuffer<double> exact;
  cuda::DeviceBuffer<float> centred;
  double filter_abs = 0.0;
  double filter_rel = 0.0;
  bool filter = true;
};

template <typename T>
DevicePoints upload_points(std::span<const T> points, Index n, int d, cudaStream_t stream) {
  const std::size_t size = static_cast<std::size_t>(n) * d;
  std::vector<double> exact(points.begin(), points.end());
  std::vector<double> lo(d, std::numeric_limits<double>::infinity());
  std::vector<double> hi(d, -std::numeric_limits<double>::infinity());
  for (std::size_t e = 0; e < size; ++e) {
    const int t = static_cast<int>(e % d);
    lo[t] = std::min(lo[t], exact[e]);
    hi[t] = std::max(hi[t], exact[e]);
  }
  std::vector<double> centre(d);
  double norm2 = 0.0;
  double largest = 0.0;
  for (int t = 0; t < d; ++t) {
    centre[t] = 0.5 * lo[t] + 0.5 * hi[t];
    const double half = std::max(hi[t] - centre[t], centre[t] - lo[t]);
    norm2 += half * half;
    largest = std::max(largest, half);
  }
  DevicePoints out;
  out.filter = std::isfinite(norm2) && 4.0 * d * largest * largest < kFloatSafeSum;
  out.filter_abs = kAbsFactor * std::sqrt(norm2);
  out.filter_rel = (d + kRelBase) * 0x1p-23;
  std::vector<float> centred(size, 0.0f);
  if (out.filter) {
    for (std::size_t e = 0; e < size; ++e) {
      centred[e] = static_cast<float>(exact[e] - centre[e % d]);
    }
  }
  out.exact.ensure(size);
  out.centred.ensure(size);
  cuda::copy_to_device(out.exact.get(), exact.data(), size, stream);
  cuda::copy_to_device(out.centred.get(), centred.data(), size, stream);
  return out;
}

// The n x k lists of one exact search, in device memory.
struct DeviceKnn {
  cuda::DeviceBuffer<Index> indices;
  cuda::DeviceBuffer<float> distances;
};

DeviceKnn device_knn(const DevicePoints& points, Index n, int d, int k, cudaStream_t stream) {
  const std::size_t size = static_cast<std::size_t>(n) * k;
  DeviceKnn out;
  out.indices.ensure(size);
  out.distances.ensure(size);
  cuda::DeviceBuffer<double> best_d2(size);
  cuda::KnnSearchArgs args;
  args.centred = points.centred.get();
  args.exact = points.exact.get();
  args.n = n;
  args.d = d;
  args.k = k;
  args.filter_abs = points.filter_abs;
  args.filter_rel = points.filter_rel;
  args.filter = points.filter;
  args.best_d2 = best_d2.get();
  args.best_index = out.indices.get();
  GW_CUDA_CHECK(cuda::launch_knn_search(args, stream));
  GW_CUDA_CHECK(cuda::launch_knn_distances(
      best_d2.get(), static_cast<Offset>(size), out.distances.get(), stream));
  GW_CUDA_CHECK(cudaStreamSynchronize(stream));  // before best_d2 is freed
  return out;
}

template <typename T>
KnnResult knn_search_cuda_impl(
    std::span<const T> points, Index n, int d, int k, const CudaStream& stream) {
  k = check_knn_arguments(points, n, d, k);
  if (k == 0) return KnnResult{n, 0, {}, {}};
  cuda::DeviceGuard guard(stream.device());
  const cudaStream_t s = cuda::stream_of(stream);
  const DevicePoints device_points = upload_points(points, n, d, s);
  const DeviceKnn knn = device_knn(device_points, n, d, k, s);
  const std::size_t size = static_cast<std::size_t>(n) * k;
  KnnResult result{n, k, std::vector<Index>(size), std::vector<float>(size)};
  cuda::copy_to_host(result.indices.data(), knn.indices.get(), size, s);
  cuda::copy_to_host(result.distances.data(), knn.distances.get(), size, s);
  return result;
}

template <typename T>
DeviceCsrGraph knn_graph_device_impl(std::span<const T> points,
                                     Index n,
                                     int d,
                                     const KnnGraphOptions& options,
                                     const CudaStream& stream) {
  check_algorithm(options.algorithm);
  const int k = check_knn_arguments(points, n, d, options.k);
  cuda::DeviceGuard guard(stream.device());
  const cudaStream_t s = cuda::stream_of(stream);
  cuda::DeviceBuffer<std::uint64_t> keys;
  cuda::DeviceBuffer<float> values;
  if (k == 0) return detail::assemble_csr(stream, n, keys, values, 0, false, true);

  const DevicePoints device_points = upload_points(points, n, d, s);
  DeviceKnn knn = device_knn(device_points, n, d, k, s);
  std::vector<Bridge> bridges;
  if (options.connect) {
    // The kNN relation's weak components are the symmetrized graph's components.
    const detail::DeviceComponents comps =
        detail::device_components(nullptr, knn.indices.get(), k, n, s);
    bridges = detail::device_stitch(device_points.exact.get(), d, comps, n, s);
  }
  const Offset list = static_cast<Offset>(n) * k;
  const Offset count = 2 * list + 2 * static_cast<Offset>(bridges.size());
  keys.ensure(static_cast<std::size_t>(count));
  values.ensure(static_cast<std::size_t>(count));
  GW_CUDA_CHECK(cuda::launch_knn_edge_keys(
      knn.indices.get(), knn.distances.get(), n, k, keys.get(), values.get(), s));
  detail::append_bridge_keys(bridges, keys, values, 2 * list, s);
  GW_CUDA_CHECK(cudaStreamSynchronize(s));
  knn = DeviceKnn{};  // the lists are in the keys now
  // Merging duplicate keys is the symmetrization: a mutual pair's two copies hold the same float
  // (the squared difference is symmetric), so "max" is that value.
  return detail::assemble_csr(stream, n, keys, values, count, /*keep_all=*/false, true);
}

}  // namespace

KnnResult knn_search_cuda(
    std::span<const float> points, Index n, int d, int k, const CudaStream& stream) {
  return knn_search_cuda_impl(points, n, d, k, stream);
}

KnnResult knn_search_cuda(
    std::span<const double> points, Index n, int d, int k, const CudaStream& stream) {
  return knn_search_cuda_impl(points, n, d, k, stream);
}

DeviceCsrGraph knn_graph_device(std::span<const float> points,
                                Index n,
                                int d,
                                const KnnGraphOptions& options,
                                const CudaStream& stream) {
  return knn_graph_device_impl(points, n, d, options, stream);
}

DeviceCsrGraph knn_graph_device(std::span<const double> points,
                                Index n,
                                int d,
                                const KnnGraphOptions& options,
                                const CudaStream& stream) {
  return knn_graph_device_impl(points, n, d, options, stream);
}

#else  // !GW_HAS_CUDA

namespace {
[[noreturn]] void not_compiled(const char* what) {
  GW_THROW(ErrorCode::kNotCompiled,
           what << ": this gwalign was built without CUDA; rebuild with -DGWALIGN_ENABLE_CUDA=ON "
                   "or use the CPU functions of graph/knn.h");
}
}  // namespace

KnnResult knn_search_cuda(std::span<const float>, Index, int, int, const CudaStream&) {
  not_compiled("knn_search_cuda");
}
KnnResult knn_search_cuda(std::span<const double>, Index, int, int, const CudaStream&) {
  not_compiled("knn_search_cuda");
}
DeviceCsrGraph knn_graph_device(
    std::span<const float>, Index, int, const KnnGraphOptions&, const CudaStream&) {
  not_compiled("knn_graph_device");
}
DeviceCsrGraph knn_graph_device(
    std::span<const double>, Index, int, const KnnGraphOptions&, const CudaStream&) {
  not_compiled("knn_graph_device");
}

#endif  // GW_HAS_CUDA

CsrGraph knn_graph_cuda(std::span<const float> points,
                        Index n,
                        int d,
                        const KnnGraphOptions& options,
                        const CudaStream& stream) {
  return knn_graph_device(points, n, d, options, stream).download();
}

CsrGraph knn_graph_cuda(std::span<const double> points,
                        Index n,
                        int d,
                        const KnnGraphOptions& options,
                        const CudaStream& stream) {
  return knn_graph_device(points, n, d, options, stream).download();
}

}  // namespace gw
