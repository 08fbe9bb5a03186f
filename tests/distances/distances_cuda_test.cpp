// The device shortest paths, farthest-point landmarks and providers
// (distances/cuda_shortest_paths.h) against the CPU's Dijkstra on fresh random graphs (ctest label
// "gpu"). Every test skips when no CUDA device is visible (always in a build without CUDA).
//
// Tolerances. kPathRelTol: both sides sum float32 lengths along paths, so a value is within h x
// 2^-24 (relative) of the exact length of its path (h edges, at most ~100 here); a device row that
// differs from Dijkstra's by more than that is wrong. Stronger, and checked separately: both return
// the least float32 left-to-right sum over all paths, a value that does not depend on the order of
// relaxations, so the rows must be equal bit for bit; the farthest-point picks, which compare
// these floats, depend on that.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "core/context.h"
#include "core/cuda_stream.h"
#include "core/device_array.h"
#include "core/error.h"
#include "core/rng.h"
#include "distances/cuda_shortest_paths.h"
#include "distances/landmark.h"
#include "distances/precomputed.h"
#include "distances/shortest_paths.h"
#include "graph/builder.h"
#include "graph/components.h"
#include "graph/cuda_graph.h"
#include "graph/knn.h"
#include "test_util.h"

namespace gw {
namespace {

#define GW_REQUIRE_GPU()                                                       \
  do {                                                                         \
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device is visible"; \
  } while (0)

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kPathRelTol = 1e-5;

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

struct GraphCase {
  std::string label;
  CsrGraph graph;
};

// Random graphs: directed and undirected, weighted (with ~10% zero weights, self loops and
// parallel edges) and unweighted, sparse enough to fall into several components or dense.
std::vector<GraphCase> random_graphs(Rng& rng, Index max_n) {
  std::vector<GraphCase> cases;
  for (const bool undirected : {false, true}) {
    for (const bool weighted : {true, false}) {
      for (const Offset per_node : {1, 5}) {
        const Index n = 2 + static_cast<Index>(rng.uniform_index(max_n - 1));
        EdgeList edges = test::random_edges(rng, n, per_node * n, weighted, 0.0f, 1.0f);
        for (float& w : edges.weights) {
          if (rng.uniform() < 0.1) w = 0.0f;
        }
        BuildOptions options;
        options.symmetrize = undirected;
        CsrGraph graph = build_csr(n, edges.view(), options);
        const Index comps = connected_components(graph).count;
        cases.push_back({std::string(undirected ? "undirected" : "directed") +
                             (weighted ? " weighted" : " unweighted") + " n=" + std::to_string(n) +
                             " edges=" + std::to_string(graph.num_edges()) +
                             " components=" + std::to_string(comps),
                         std::move(graph)});
      }
    }
  }
  return cases;
}

CsrGraph knn_graph_of_random_points(Rng& rng, Index n, int d, int k) {
  const auto points = test::random_points(rng, n, d);
  KnnGraphOptions options;
  options.k = k;
  return knn_graph(std::span<const double>(points), n, d, options);
}

std::vector<Index> random_sources(Rng& rng, Index n, Index m) {
  std::vector<Index> sources(m);
  for (Index& s : sources) s = static_cast<Index>(rng.uniform_index(n));
  return sources;
}

// Counts the entries outside kPathRelTol (or with a different infinity) and the entries that are
// not bitwise equal.
struct RowDiff {
  std::int64_t beyond_tolerance = 0;
  std::int64_t not_identical = 0;
  std::int64_t first_bad = -1;
};

RowDiff compare_rows(std::span<const float> got, std::span<const float> want) {
  RowDiff diff;
  for (std::size_t p = 0; p < want.size(); ++p) {
    const float a = got[p];
    const float b = want[p];
    const bool same_inf = std::isinf(a) && std::isinf(b);
    const bool close =
        !std::isinf(a) && !std::isinf(b) && std::abs(static_cast<double>(a) - b) <= kPathRelTol * b;
    if (!same_inf && !close) {
      if (diff.first_bad < 0) diff.first_bad = static_cast<std::int64_t>(p);
      ++diff.beyond_tolerance;
    }
    if (!(a == b)) ++diff.not_identical;
  }
  return diff;
}

// ---------------------------------------------------------------------------------------------
// Rows and all pairs

TEST(CudaShortestPaths, RowsEqualDijkstraWithinRoundingOnRandomGraphs) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(5501);
  for (int repeat = 0; repeat < 3; ++repeat) {
    for (const GraphCase& c : random_graphs(rng, 3000)) {
      const Index n = c.graph.num_nodes();
      const std::vector<Index> sources =
          random_sources(rng, n, 1 + static_cast<Index>(rng.uniform_index(300)));
      std::vector<float> want(sources.size() * n);
      shortest_path_rows(c.graph, sources, want);
      const std::vector<float> got = shortest_path_rows_cuda(c.graph, sources, stream);
      ASSERT_EQ(got.size(), want.size()) << c.label;
      const RowDiff diff = compare_rows(got, want);
      EXPECT_EQ(diff.beyond_tolerance, 0)
          << c.label << ": first at row " << diff.first_bad / n << " node " << diff.first_bad % n
          << ": got " << got[diff.first_bad] << ", Dijkstra " << want[diff.first_bad];
    }
  }
}

TEST(CudaShortestPaths, RowsAreDijkstrasBitForBitOnKnnAndRandomGraphs) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(5502);
  std::vector<GraphCase> cases = random_graphs(rng, 2000);
  cases.push_back({"kNN 20000 x 2-D, k = 5", knn_graph_of_random_points(rng, 20000, 2, 5)});
  cases.push_back({"kNN 20000 x 3-D, k = 30", knn_graph_of_random_points(rng, 20000, 3, 30)});
  for (const GraphCase& c : cases) {
    const Index n = c.graph.num_nodes();
    const std::vector<Index> sources = random_sources(rng, n, 64);
    std::vector<float> want(sources.size() * n);
    shortest_path_rows(c.graph, sources, want);
    const std::vector<float> got = shortest_path_rows_cuda(c.graph, sources, stream);
    const RowDiff diff = compare_rows(got, want);
    EXPECT_EQ(diff.not_identical, 0)
        << c.label << " (" << diff.beyond_tolerance << " of them beyond the rounding tolerance)";
  }
}

TEST(CudaShortestPaths, AllPairsEqualDijkstraAllPairs) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(5503);
  std::vector<GraphCase> cases = random_graphs(rng, 700);
  cases.push_back({"kNN 3000 x 3-D, k = 10", knn_graph_of_random_points(rng, 3000, 3, 10)});
  for (const GraphCase& c : cases) {
    const std::vector<float> want = all_pairs_shortest_paths(c.graph);
    const std::vector<float> got = all_pairs_shortest_paths_cuda(c.graph, stream);
    ASSERT_EQ(got.size(), want.size()) << c.label;
    const RowDiff diff = compare_rows(got, want);
    EXPECT_EQ(diff.beyond_tolerance, 0) << c.label;
    EXPECT_EQ(diff.not_identical, 0) << c.label;
  }
}

TEST(CudaShortestPaths, RowsPastTwoToThe31EntriesUseWideOffsets) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(5504);
  // 2,100 rows of 2^20 nodes: 2.2e9 entries (8.8 GB), so rows past the 2,047th start beyond
  // 2^31 floats. A random graph of average degree ~12 (few rounds per source); the rows that
  // straddle and pass 2^31 are compared with Dijkstra.
  const Index n = Index{1} << 20;
  const EdgeList edges = test::random_edges(rng, n, 6 * static_cast<Offset>(n), true, 0.01f, 1.0f);
  BuildOptions options;
  options.symmetrize = true;
  const CsrGraph graph = build_csr(n, edges.view(), options);
  const Index m = 2100;
  const std::vector<Index> sources = random_sources(rng, n, m);
  const DeviceCsrGraph device = DeviceCsrGraph::upload(graph, stream);
  const DeviceArray<float> rows = shortest_path_rows_device(device, sources);
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(m) * n);
  DeviceArray<float> one(static_cast<std::size_t>(n), stream);
  std::vector<float> want(n);
  for (const Index r : {Index{0}, Index{2047}, Index{2048}, Index{2049}, m - 1}) {
    one.copy_from_device_async(rows.data() + static_cast<std::size_t>(r) * n, n);
    const std::vector<float> got = one.download();
    shortest_path_lengths(graph, sources[r], want);
    const RowDiff diff = compare_rows(got, want);
    EXPECT_EQ(diff.not_identical, 0) << "row " << r;
  }
}

TEST(CudaShortestPaths, RejectsSourcesOutsideTheGraph) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(5505);
  const CsrGraph graph = knn_graph_of_random_points(rng, 50, 2, 3);
  const Index bad[] = {3, 50};
  expect_error([&] { shortest_path_rows_cuda(graph, bad, stream); },
               ErrorCode::kInvalidArgument,
               "source id 50 (position 1)");
}

// ---------------------------------------------------------------------------------------------
// Farthest-point sampling and providers

void expect_same_sample(const FarthestPointSample& got,
                        const FarthestPointSample& want,
                        const std::string& what) {
  EXPECT_EQ(got.nodes, want.nodes) << what;
  EXPECT_EQ(got.radius, want.radius) << what;
  EXPECT_EQ(got.min_distance, want.min_distance) << what;
  EXPECT_EQ(got.rows, want.rows) << what;
}

TEST(CudaFarthestPoint, PicksRadiiMinimaAndRowsEqualTheCpu) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(5506);
  std::vector<GraphCase> cases = random_graphs(rng, 1500);
  cases.push_back({"kNN 30000 x 2-D, k = 5", knn_graph_of_random_points(rng, 30000, 2, 5)});
  // Duplicate points: zero-length edges and nodes at distance 0 from a pick (ties at 0).
  {
    std::vector<double> points = test::random_points(rng, 2000, 2);
    std::copy(points.begin(), points.begin() + 1000, points.begin() + 1000);
    KnnGraphOptions knn;
    knn.k = 4;
    cases.push_back(
        {"kNN with duplicated points", knn_graph(std::span<const double>(points), 2000, 2, knn)});
  }
  for (const GraphCase& c : cases) {
    const DeviceCsrGraph device = DeviceCsrGraph::upload(c.graph, stream);
    // Past n on the small graphs (every node picked, clipped to n); the CPU's picks cost a full
    // Dijkstra each, so the large ones stop at 300.
    const Index n = c.graph.num_nodes();
    for (const Index count : {Index{1}, Index{17}, n <= 2000 ? n + 5 : Index{300}}) {
      FarthestPointOptions options;
      options.seed = static_cast<std::uint64_t>(count);
      options.keep_rows = count < 100;
      const std::string what = c.label + ", " + std::to_string(count) + " picks";
      expect_same_sample(farthest_point_sample_cuda(device, count, options),
                         farthest_point_sample(c.graph, count, options),
                         what);
    }
    FarthestPointOptions start;
    start.start = c.graph.num_nodes() - 1;
    expect_same_sample(farthest_point_sample_cuda(device, 9, start),
                       farthest_point_sample(c.graph, 9, start),
                       c.label + ", start n - 1");
  }
}

TEST(CudaFarthestPoint, RejectsBadCountsAndStarts) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(5507);
  const DeviceCsrGraph device =
      DeviceCsrGraph::upload(knn_graph_of_random_points(rng, 40, 2, 3), stream);
  expect_error(
      [&] { farthest_point_sample_cuda(device, 0); }, ErrorCode::kInvalidArgument, "count");
  FarthestPointOptions options;
  options.start = 40;
  expect_error([&] { farthest_point_sample_cuda(device, 2, options); },
               ErrorCode::kInvalidArgument,
               "start id 40");
}

TEST(CudaLandmark, ProviderEqualsTheCpuProviderOnConnectedAndDisconnectedGraphs) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(5508);
  std::vector<GraphCase> cases = random_graphs(rng, 1500);
  cases.push_back({"kNN 50000 x 3-D, k = 5", knn_graph_of_random_points(rng, 50000, 3, 5)});
  for (const GraphCase& c : cases) {
    const Index n = c.graph.num_nodes();
    LandmarkOptions options;
    options.num_landmarks = 1 + static_cast<int>(rng.uniform_index(60));
    options.seed = rng.next_u64();
    const auto want = make_landmark_provider(c.graph, options);
    const auto got = make_landmark_provider_cuda(DeviceCsrGraph::upload(c.graph, stream), options);
    ASSERT_EQ(got->num_landmarks(), want->num_landmarks()) << c.label;
    EXPECT_TRUE(
        std::equal(got->landmarks().begin(), got->landmarks().end(), want->landmarks().begin()))
        << c.label;
    EXPECT_TRUE(std::equal(
        got->coordinates().begin(), got->coordinates().end(), want->coordinates().begin()))
        << c.label;
    EXPECT_EQ(got->num_classes(), want->num_classes()) << c.label;
    const std::vector<Index> anchors = random_sources(rng, n, 20);
    std::vector<float> got_block(anchors.size() * n);
    std::vector<float> want_block(anchors.size() * n);
    got->distances_to(anchors, got_block);
    want->distances_to(anchors, want_block);
    EXPECT_EQ(got_block, want_block) << c.label;
  }
}

TEST(CudaPrecomputed, ProviderEqualsTheCpuProviderAndChecksItsBudget) {
  GW_REQUIRE_GPU();
  const CudaStream stream = CudaStream::create(0);
  Rng rng(5509);
  const CsrGraph graph = knn_graph_of_random_points(rng, 2500, 2, 6);
  const DeviceCsrGraph device = DeviceCsrGraph::upload(graph, stream);
  const auto want = make_precomputed_provider(graph);
  const auto got = make_precomputed_provider_cuda(device);
  EXPECT_EQ(got->name(), "precomputed");
  EXPECT_TRUE(std::equal(got->matrix().begin(), got->matrix().end(), want->matrix().begin()));
  PrecomputedOptions small;
  small.max_bytes = 1000;
  expect_error([&] { make_precomputed_provider_cuda(device, small); },
               ErrorCode::kInvalidArgument,
               "max_bytes");
}

}  // namespace
}  // namespace gw
