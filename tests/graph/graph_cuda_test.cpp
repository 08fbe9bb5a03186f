// The device graph functions (graph/cuda_graph.h) against the CPU ones on fresh random inputs
// (ctest label "gpu"). Every test skips when no CUDA device is visible (always in a build without
// CUDA).
//
// Tolerance: none. The device computes the CPU's float64 squared distances with the same
// operations in the same order (no fused multiply-adds on either side), the same float32
// conversions, the same (distance, index) order and the same tie rules, so the kNN lists, the graph
// arrays, the components and the bridges must be equal bit for bit; "up to ties" is not needed
// because ties resolve to the smaller index on both sides.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/cuda_stream.h"
#include "core/error.h"
#include "core/rng.h"
#include "graph/builder.h"
#include "graph/components.h"
#include "graph/csr_graph.h"
#include "graph/cuda_graph.h"
#include "graph/knn.h"
#include "test_util.h"

namespace gw {
namespace {

#define GW_REQUIRE_GPU()                                                       \
  do {                                                                         \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device is visible"; \
  } while (0)

template <typename Fn>
void expect_error(Fn&& fn, ErrorCode code, const std::string& fragment) {
  try {
    fn();
    ADD_FAILURE() << "expected an error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

void expect_same_knn(const KnnResult& got, const KnnResult& want, const std::string& what) {
  ASSERT_EQ(got.n, want.n) << what;
  ASSERT_EQ(got.k, want.k) << what;
  ASSERT_EQ(got.indices.size(), want.indices.size()) << what;
  ASSERT_EQ(got.distances.size(), want.distances.size()) << what;
  for (std::size_t p = 0; p < got.indices.size(); ++p) {
    ASSERT_EQ(got.indices[p], want.indices[p]) << what << " at row " << p / want.k;
    ASSERT_EQ(got.distances[p], want.distances[p]) << what << " at row " << p / want.k;
  }
}

void expect_same_graph(const CsrGraph& got, const CsrGraph& want, const std::string& what) {
  ASSERT_EQ(got.num_nodes(), want.num_nodes()) << what;
  EXPECT_EQ(got.row_offsets(), want.row_offsets()) << what;
  EXPECT_EQ(got.col_indices(), want.col_indices()) << what;
  EXPECT_EQ(got.weights(), want.weights()) << what;  // float ==: bit for bit (no NaN)
}

std::vector<float> to_float(const std::vector<double>& x) { return {x.begin(), x.end()}; }

// ---------------------------------------------------------------------------------------------
// kNN search

TEST(CudaKnn, SearchEqualsTheCpuForEveryDimensionChunkAndTail) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4401);
  // Dimensions hit every kernel variant (1, 2, 3, 4 whole; 8 and 16 per stage, with padded
  // tails: 5, 13, 40); sizes leave partial query blocks (128) and point tiles (64).
  struct Case {
    Index n;
    int d;
    int k;
  };
  for (const Case c : {Case{2, 3, 5},
                       Case{65, 1, 4},
                       Case{300, 2, 7},
                       Case{1000, 3, 30},
                       Case{777, 4, 12},
                       Case{513, 5, 9},
                       Case{300, 8, 64},
                       Case{450, 13, 17},
                       Case{257, 16, 3},
                       Case{200, 40, 15},
                       Case{40, 3, 100}}) {
    const std::string what =
        "n=" + std::to_string(c.n) + " d=" + std::to_string(c.d) + " k=" + std::to_string(c.k);
    const auto points = test::random_points(rng, c.n, c.d);
    expect_same_knn(knn_search_cuda(std::span<const double>(points), c.n, c.d, c.k, stream),
                    knn_search(std::span<const double>(points), c.n, c.d, c.k),
                    what + " double");
    const auto as_float = to_float(points);
    expect_same_knn(knn_search_cuda(std::span<const float>(as_float), c.n, c.d, c.k, stream),
                    knn_search(std::span<const float>(as_float), c.n, c.d, c.k),
                    what + " float");
  }
}

TEST(CudaKnn, TiesAndDuplicatePointsResolveToTheSmallerIndexLikeTheCpu) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4402);
  // A small integer grid: many exact ties and duplicates (distance 0).
  for (int d : {2, 3, 16}) {
    const Index n = 700;
    std::vector<double> points(static_cast<std::size_t>(n) * d);
    for (double& x : points) x = static_cast<double>(rng.uniform_index(4));
    expect_same_knn(knn_search_cuda(std::span<const double>(points), n, d, 12, stream),
                    knn_search(std::span<const double>(points), n, d, 12),
                    "grid d=" + std::to_string(d));
  }
  std::vector<double> same(300 * 3, 0.5);
  expect_same_knn(knn_search_cuda(std::span<const double>(same), 300, 3, 7, stream),
                  knn_search(std::span<const double>(same), 300, 3, 7),
                  "all points identical");
}

TEST(CudaKnn, ExactFarFromTheOriginAtTinyScalesAndWithoutTheFilter) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4403);
  const Index n = 900;
  const int d = 3;
  // Far from the origin (centring keeps the filter tight), near-underflow scales (float32
  // squares of the differences go subnormal), and coordinates so large that float32 squares would
  // overflow (the filter is off: every pair in float64).
  for (const double offset : {0.0, 1e7, -3e12}) {
    for (const double scale : {1.0, 1e-3, 1e-21, 1e25}) {
      std::vector<double> points = test::random_points(rng, n, d, scale);
      for (double& x : points) x += offset;
      const std::string what =
          "offset " + std::to_string(offset) + " scale " + std::to_string(scale);
      expect_same_knn(knn_search_cuda(std::span<const double>(points), n, d, 10, stream),
                      knn_search(std::span<const double>(points), n, d, 10),
                      what);
    }
  }
}

TEST(CudaKnn, RejectsBadInputLikeTheCpu) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  std::vector<double> pts = {0, 0, 1, 1};
  expect_error([&] { knn_search_cuda(std::span<const double>(pts), 2, 3, 1, stream); },
               ErrorCode::kInvalidArgument,
               "4 coordinates");
  expect_error([&] { knn_search_cuda(std::span<const double>(pts), 2, 2, 0, stream); },
               ErrorCode::kInvalidArgument,
               "k must be >= 1");
  KnnGraphOptions tree;
  tree.algorithm = KnnAlgorithm::kKdTree;
  expect_error([&] { knn_graph_cuda(std::span<const double>(pts), 2, 2, tree, stream); },
               ErrorCode::kInvalidArgument,
               "kKdTree");
  pts[3] = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { knn_search_cuda(std::span<const double>(pts), 2, 2, 1, stream); },
               ErrorCode::kBadData,
               "position 3");
}

// ---------------------------------------------------------------------------------------------
// kNN graphs

TEST(CudaKnnGraph, EqualsTheCpuGraphOnRandomPointsWithAndWithoutStitching) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4404);
  for (int trial = 0; trial < 8; ++trial) {
    const Index n = 1 + static_cast<Index>(rng.uniform_index(3000));
    const int d = 1 + static_cast<int>(rng.uniform_index(6));
    KnnGraphOptions options;
    options.k = 1 + static_cast<int>(rng.uniform_index(12));
    options.connect = trial % 2 == 0;
    const auto points = test::random_points(rng, n, d);
    const std::string what =
        "n=" + std::to_string(n) + " d=" + std::to_string(d) + " k=" + std::to_string(options.k);
    expect_same_graph(knn_graph_cuda(std::span<const double>(points), n, d, options, stream),
                      knn_graph(std::span<const double>(points), n, d, options),
                      what);
    const auto as_float = to_float(points);
    expect_same_graph(knn_graph_cuda(std::span<const float>(as_float), n, d, options, stream),
                      knn_graph(std::span<const float>(as_float), n, d, options),
                      what + " float");
  }
}

TEST(CudaKnnGraph, StitchesFarApartClustersWithTheCpuBridges) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4405);
  for (int trial = 0; trial < 4; ++trial) {
    // Clusters of random sizes, far apart, with k small enough that some split further.
    const int d = 2 + trial % 2;
    std::vector<double> points;
    const int clusters = 3 + static_cast<int>(rng.uniform_index(8));
    for (int c = 0; c < clusters; ++c) {
      const Index size = 1 + static_cast<Index>(rng.uniform_index(400));
      for (Index i = 0; i < size; ++i) {
        points.push_back(50.0 * c + rng.uniform());
        for (int t = 1; t < d; ++t) points.push_back(rng.uniform());
      }
    }
    const Index n = static_cast<Index>(points.size() / d);
    KnnGraphOptions options;
    options.k = 1 + static_cast<int>(rng.uniform_index(3));
    options.connect = false;
    const CsrGraph split = knn_graph(std::span<const double>(points), n, d, options);
    ASSERT_GT(connected_components(split).count, 1) << "trial " << trial;
    options.connect = true;
    const CsrGraph got = knn_graph_cuda(std::span<const double>(points), n, d, options, stream);
    expect_same_graph(got,
                      knn_graph(std::span<const double>(points), n, d, options),
                      "clusters, trial " + std::to_string(trial));
    EXPECT_EQ(connected_components(got).count, 1);
  }
}

TEST(CudaKnnGraph, EqualsTheCpuAt300000PointsWhereEdgeKernelsLaunchOver65535Blocks) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4406);
  // 2 n k = 18,000,000 edge keys: the key, flag and scatter kernels (256 threads per block) launch
  // 70,313 blocks, past the 65,535 that a y or z grid dimension allows.
  const Index n = 300000;
  const int d = 3;
  KnnGraphOptions options;
  options.k = 30;
  const auto points = test::random_points(rng, n, d);
  expect_same_graph(knn_graph_cuda(std::span<const double>(points), n, d, options, stream),
                    knn_graph(std::span<const double>(points), n, d, options),
                    "n = 300,000, k = 30");
}

TEST(CudaDeviceCsrGraph, UploadDownloadRoundTripsWeightedAndUnweighted) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4407);
  for (const bool weighted : {true, false}) {
    const EdgeList edges = test::random_edges(rng, 500, 3000, weighted);
    const CsrGraph g = build_csr(500, edges.view());
    const DeviceCsrGraph device = DeviceCsrGraph::upload(g, stream);
    EXPECT_EQ(device.has_weights(), weighted);
    expect_same_graph(device.download(), g, weighted ? "weighted" : "unweighted");
  }
  std::vector<Offset> offsets = {0, 1};
  std::vector<Index> cols = {5};
  const CsrGraph bad(1, offsets, cols);
  expect_error([&] { DeviceCsrGraph::upload(bad, stream); }, ErrorCode::kBadData, "graph");
}

// ---------------------------------------------------------------------------------------------
// Components and stitching

TEST(CudaComponents, EqualTheCpuOnRandomDirectedGraphsWithManyComponents) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4408);
  for (int trial = 0; trial < 30; ++trial) {
    const Index n = 1 + static_cast<Index>(rng.uniform_index(3000));
    const EdgeList edges =
        test::random_edges(rng, n, static_cast<Offset>(rng.uniform_index(n + 1)));
    const CsrGraph g = build_csr(n, edges.view());
    const Components want = connected_components(g);
    const Components got = connected_components_cuda(DeviceCsrGraph::upload(g, stream));
    ASSERT_EQ(got.count, want.count) << "trial " << trial;
    EXPECT_EQ(got.labels, want.labels) << "trial " << trial;
    EXPECT_EQ(got.sizes, want.sizes) << "trial " << trial;
  }
}

TEST(CudaComponents, EqualTheCpuOn17MillionNodesAcrossThe65535BlockLimit) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4409);
  // 17,000,000 nodes: every per-node kernel (256 threads per block) launches 66,407 blocks.
  const Index n = 17000000;
  const EdgeList edges = test::random_edges(rng, n, 9000000, false);
  const CsrGraph g = build_csr(n, edges.view());
  const Components want = connected_components(g);
  const Components got = connected_components_cuda(DeviceCsrGraph::upload(g, stream));
  ASSERT_EQ(got.count, want.count);
  EXPECT_EQ(got.labels, want.labels);
  EXPECT_EQ(got.sizes, want.sizes);
}

TEST(CudaStitch, BridgesAndGraphEqualTheCpuOnRandomMultiComponentGraphs) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(4410);
  for (int trial = 0; trial < 25; ++trial) {
    const Index n = 2 + static_cast<Index>(rng.uniform_index(600));
    const int d = 1 + static_cast<int>(rng.uniform_index(5));
    // Integer coordinates on a few values for half the trials: equal bridge lengths (ties).
    std::vector<double> points = test::random_points(rng, n, d);
    if (trial % 2 == 1) {
      for (double& x : points) x = static_cast<double>(rng.uniform_index(3));
    }
    const bool weighted = trial % 3 != 0;
    // Sparse edges, parallel edges and self loops possible: many components.
    const EdgeList edges =
        test::random_edges(rng, n, static_cast<Offset>(rng.uniform_index(n)), weighted);
    const CsrGraph g = build_csr(n, edges.view());
    const StitchResult want = stitch_components(g, std::span<const double>(points), d);
    const StitchResult got = stitch_components_cuda(g, std::span<const double>(points), d, stream);
    const std::string what = "trial " + std::to_string(trial);
    ASSERT_EQ(got.bridges.size(), want.bridges.size()) << what;
    for (std::size_t b = 0; b < want.bridges.size(); ++b) {
      EXPECT_EQ(got.bridges[b].source, want.bridges[b].source) << what << " bridge " << b;
      EXPECT_EQ(got.bridges[b].target, want.bridges[b].target) << what << " bridge " << b;
      EXPECT_EQ(got.bridges[b].length, want.bridges[b].length) << what << " bridge " << b;
    }
    expect_same_graph(got.graph, want.graph, what);
    const auto as_float = to_float(points);
    const StitchResult got_float =
        stitch_components_cuda(g, std::span<const float>(as_float), d, stream);
    expect_same_graph(
        got_float.graph, stitch_components(g, std::span<const float>(as_float), d).graph, what);
  }
}

}  // namespace
}  // namespace gw
