#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "distances/dijkstra_provider.h"
#include "distances/distance_provider.h"
#include "distances/landmark.h"
#include "distances/precomputed.h"
#include "distances/providers.h"
#include "distances/shortest_paths.h"
#include "distances/shortest_paths_reference.h"
#include "graph/builder.h"
#include "graph/components.h"
#include "graph/knn.h"
#include "isa_test_util.h"
#include "test_util.h"

namespace gw {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Path lengths are summed in float32: a path of h edges is within h x 2^-24 (relative) of the
// double reference; the random graphs here have paths of at most ~100 edges.
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

// `value` (float32 result) agrees with `expected` (double reference): same infinities, else
// within kPathRelTol relative (so a reference 0 must be exactly 0).
::testing::AssertionResult path_length_matches(float value, double expected) {
  if (std::isinf(expected) || std::isinf(value)) {
    if (std::isinf(expected) && value == kInf) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << value << ", expected " << expected;
  }
  if (std::abs(static_cast<double>(value) - expected) <= kPathRelTol * expected) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << value << ", expected " << expected;
}

struct GraphCase {
  std::string label;
  CsrGraph graph;
};

// Random weighted graphs: directed and undirected, dense enough to be connected and sparse enough
// to fall apart, with self loops, parallel edges and ~10% zero-weight edges.
std::vector<GraphCase> random_graphs(std::uint64_t seed) {
  std::vector<GraphCase> cases;
  Rng rng(seed);
  for (const bool undirected : {false, true}) {
    for (const Offset edges_per_node : {1, 4}) {
      const Index n = 40 + static_cast<Index>(rng.uniform_index(40));
      EdgeList edges = test::random_edges(rng, n, edges_per_node * n, true, 0.0f, 1.0f);
      for (float& w : edges.weights) {
        if (rng.uniform() < 0.1) w = 0.0f;
      }
      BuildOptions options;
      options.symmetrize = undirected;
      CsrGraph graph = build_csr(n, edges.view(), options);
      const Index comps = connected_components(graph).count;
      cases.push_back({std::string(undirected ? "undirected" : "directed") + " n=" +
                           std::to_string(n) + " edges=" + std::to_string(graph.num_edges()) +
                           " components=" + std::to_string(comps),
                       std::move(graph)});
    }
  }
  return cases;
}

// Undirected random graph that is connected: a random spanning path plus random edges.
CsrGraph connected_undirected_graph(Rng& rng, Index n, Offset extra_edges, float min_weight) {
  EdgeList edges = test::random_edges(rng, n, extra_edges, true, min_weight, 1.0f);
  for (Index i = 0; i + 1 < n; ++i) {
    edges.src.push_back(i);
    edges.dst.push_back(i + 1);
    edges.weights.push_back(min_weight + (1.0f - min_weight) * rng.uniform_float());
  }
  BuildOptions options;
  options.symmetrize = true;
  return build_csr(n, edges.view(), options);
}

// A path 0 - 1 - ... - (n-1) with random positive lengths.
CsrGraph path_graph(Rng& rng, Index n) {
  EdgeList edges;
  for (Index i = 0; i + 1 < n; ++i) {
    edges.src.push_back(i);
    edges.dst.push_back(i + 1);
    edges.weights.push_back(0.1f + rng.uniform_float());
  }
  BuildOptions options;
  options.symmetrize = true;
  return build_csr(n, edges.view(), options);
}

// The largest finite entry of a reference matrix (the graph's diameter). Landmark coordinates are
// float path sums up to that size, so differences of two coordinates carry absolute rounding
// errors of about kPathRelTol x diameter, whatever the size of the difference.
double diameter(const std::vector<double>& reference) {
  double max_finite = 0.0;
  for (double v : reference) {
    if (!std::isinf(v)) max_finite = std::max(max_finite, v);
  }
  return max_finite;
}

std::vector<Index> random_anchors(Rng& rng, Index n, Index m) {
  std::vector<Index> anchors(m);
  for (Index& a : anchors) a = static_cast<Index>(rng.uniform_index(n));
  return anchors;
}

// The block distances_to must return, from a double all-pairs matrix: out[i*m+k] = D[a_k][i].
void expect_block_matches_reference(std::span<const float> block,
                                    std::span<const Index> anchors,
                                    const std::vector<double>& reference,
                                    Index n,
                                    const std::string& label) {
  const std::size_t m = anchors.size();
  ASSERT_EQ(block.size(), static_cast<std::size_t>(n) * m);
  for (Index i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < m; ++k) {
      const double expected = reference[static_cast<std::size_t>(anchors[k]) * n + i];
      ASSERT_TRUE(path_length_matches(block[i * m + k], expected))
          << label << " node " << i << " anchor " << anchors[k];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Shortest paths

TEST(ShortestPaths, AllPairsMatchFloydWarshall) {
  int connected = 0;
  int disconnected = 0;
  for (std::uint64_t seed : {1, 2, 3}) {
    for (const GraphCase& c : random_graphs(seed)) {
      (connected_components(c.graph).count == 1 ? connected : disconnected) += 1;
      const std::vector<double> reference = reference::floyd_warshall(c.graph);
      const std::vector<float> ours = all_pairs_shortest_paths(c.graph, 2);
      ASSERT_EQ(ours.size(), reference.size());
      for (std::size_t e = 0; e < ours.size(); ++e) {
        ASSERT_TRUE(path_length_matches(ours[e], reference[e]))
            << c.label << " pair " << e / c.graph.num_nodes() << " -> " << e % c.graph.num_nodes();
      }
    }
  }
  // The generator must exercise both kinds of graph.
  EXPECT_GT(connected, 0);
  EXPECT_GT(disconnected, 0);
}

TEST(ShortestPaths, SingleSourceAndRowsMatchBellmanFord) {
  Rng rng(11);
  for (const GraphCase& c : random_graphs(4)) {
    const Index n = c.graph.num_nodes();
    const std::vector<Index> sources = random_anchors(rng, n, 7);
    std::vector<float> rows(sources.size() * n);
    shortest_path_rows(c.graph, sources, rows, 2);
    std::vector<float> row(n);
    for (std::size_t k = 0; k < sources.size(); ++k) {
      const std::vector<double> reference = reference::bellman_ford(c.graph, sources[k]);
      shortest_path_lengths(c.graph, sources[k], row);
      for (Index v = 0; v < n; ++v) {
        ASSERT_TRUE(path_length_matches(row[v], reference[v])) << c.label << " " << v;
        ASSERT_EQ(rows[k * n + v], row[v]);  // same kernel, same answer
      }
    }
  }
}

TEST(ShortestPaths, UnweightedGraphCountsHops) {
  // Directed cycle 0 -> 1 -> ... -> 9 -> 0: hops from s to v are (v - s) mod 10.
  EdgeList edges;
  for (Index i = 0; i < 10; ++i) {
    edges.src.push_back(i);
    edges.dst.push_back((i + 1) % 10);
  }
  const CsrGraph graph = build_csr(10, edges.view());
  const std::vector<float> d = all_pairs_shortest_paths(graph);
  for (Index s = 0; s < 10; ++s) {
    for (Index v = 0; v < 10; ++v) EXPECT_EQ(d[s * 10 + v], static_cast<float>((v - s + 10) % 10));
  }
}

TEST(ShortestPaths, SingleNodeAndEdgelessGraphs) {
  const CsrGraph single(1, {0, 0}, {});
  EXPECT_EQ(all_pairs_shortest_paths(single), std::vector<float>{0.0f});
  const CsrGraph self_loop(1, {0, 1}, {0}, {2.5f});
  EXPECT_EQ(all_pairs_shortest_paths(self_loop), std::vector<float>{0.0f});
  const CsrGraph edgeless(3, {0, 0, 0, 0}, {});
  const std::vector<float> d = all_pairs_shortest_paths(edgeless);
  for (Index s = 0; s < 3; ++s) {
    for (Index v = 0; v < 3; ++v) EXPECT_EQ(d[s * 3 + v], s == v ? 0.0f : kInf);
  }
}

TEST(ShortestPaths, RejectsBadSourcesSizesAndWeights) {
  const CsrGraph graph(3, {0, 1, 2, 2}, {1, 2}, {1.0f, 1.0f});
  std::vector<float> row(3);
  expect_error(
      [&] { shortest_path_lengths(graph, 3, row); }, ErrorCode::kInvalidArgument, "source id 3");
  expect_error(
      [&] { shortest_path_lengths(graph, -1, row); }, ErrorCode::kInvalidArgument, "source id -1");
  std::vector<float> short_row(2);
  expect_error([&] { shortest_path_lengths(graph, 0, short_row); },
               ErrorCode::kInvalidArgument,
               "expected n = 3");
  const Index sources[] = {0, 7};
  std::vector<float> rows(6);
  expect_error([&] { shortest_path_rows(graph, sources, rows); },
               ErrorCode::kInvalidArgument,
               "source id 7 (position 1)");
  const CsrGraph negative(3, {0, 1, 2, 2}, {1, 2}, {1.0f, -1.0f});
  expect_error([&] { all_pairs_shortest_paths(negative); }, ErrorCode::kBadData, "graph");
}

// ---------------------------------------------------------------------------------------------
// Post-processing, mode names

TEST(ClampAndNormalize, ReplacesInfinityByOneAndAHalfTimesTheMaxThenNormalizes) {
  std::vector<float> block = {0.0f, 2.0f, kInf, 4.0f, 1.0f, kInf};
  std::vector<float> copy = block;
  EXPECT_EQ(clamp_and_normalize(copy, false), 1.0);
  EXPECT_EQ(copy, (std::vector<float>{0.0f, 2.0f, 6.0f, 4.0f, 1.0f, 6.0f}));
  EXPECT_EQ(clamp_and_normalize(block, true), 6.0);
  EXPECT_EQ(block, (std::vector<float>{0.0f, 2.0f / 6.0f, 1.0f, 4.0f / 6.0f, 1.0f / 6.0f, 1.0f}));
}

TEST(ClampAndNormalize, HandlesBlocksWithoutPositiveFiniteEntries) {
  std::vector<float> zeros_and_inf = {0.0f, kInf, 0.0f};
  EXPECT_EQ(clamp_and_normalize(zeros_and_inf, true), 1.0);
  EXPECT_EQ(zeros_and_inf, (std::vector<float>{0.0f, 1.0f, 0.0f}));
  std::vector<float> zeros = {0.0f, 0.0f};
  EXPECT_EQ(clamp_and_normalize(zeros, true), 1.0);
  EXPECT_EQ(zeros, (std::vector<float>{0.0f, 0.0f}));
  std::vector<float> empty;
  EXPECT_EQ(clamp_and_normalize(empty, true), 1.0);
}

TEST(ClampAndNormalize, LargeBlockMatchesElementwiseDefinitionAndRejectsNaN) {
  Rng rng(5);
  std::vector<float> block(300000);
  float max_finite = 0.0f;
  for (float& v : block) {
    v = rng.uniform() < 0.01 ? kInf : 10.0f * rng.uniform_float();
    if (v != kInf) max_finite = std::max(max_finite, v);
  }
  const std::vector<float> original = block;
  const double divisor = clamp_and_normalize(block, true);
  EXPECT_EQ(divisor, static_cast<double>(1.5f * max_finite));
  for (std::size_t i = 0; i < block.size(); ++i) {
    const float expected = original[i] == kInf ? 1.0f : original[i] / (1.5f * max_finite);
    ASSERT_EQ(block[i], expected) << i;
  }
  block[123456] = std::numeric_limits<float>::quiet_NaN();
  expect_error([&] { clamp_and_normalize(block, true); }, ErrorCode::kBadData, "position 123456");
}

TEST(DistanceMode, NamesRoundTrip) {
  for (DistanceMode mode :
       {DistanceMode::kPrecomputed, DistanceMode::kDijkstra, DistanceMode::kLandmark}) {
    EXPECT_EQ(distance_mode_from_string(to_string(mode)), mode);
  }
  EXPECT_EQ(to_string(DistanceMode::kLandmark), "landmark");
  EXPECT_FALSE(distance_mode_from_string("euclidean").has_value());
}

// ---------------------------------------------------------------------------------------------
// Precomputed and dense providers

TEST(PrecomputedProvider, MatchesFloydWarshallWithDirectionFromAnchor) {
  Rng rng(21);
  for (const GraphCase& c : random_graphs(6)) {
    const Index n = c.graph.num_nodes();
    const auto provider = make_precomputed_provider(c.graph);
    EXPECT_EQ(provider->name(), "precomputed");
    EXPECT_EQ(provider->num_nodes(), n);
    EXPECT_EQ(provider->memory_bytes(), static_cast<std::size_t>(n) * n * sizeof(float));
    const std::vector<double> reference = reference::floyd_warshall(c.graph);
    std::vector<Index> anchors = random_anchors(rng, n, 9);
    anchors.push_back(anchors[0]);  // a repeat
    std::vector<float> out(n * anchors.size());
    provider->distances_to(anchors, out);
    expect_block_matches_reference(out, anchors, reference, n, c.label);
    EXPECT_EQ(provider->stats().shortest_path_runs, n);
    EXPECT_EQ(provider->stats().anchors, 10);
  }
}

TEST(PrecomputedProvider, RejectsOutOfRangeAnchorsAndWrongOutputSize) {
  const CsrGraph graph(3, {0, 1, 2, 2}, {1, 2}, {1.0f, 1.0f});
  const auto provider = make_precomputed_provider(graph);
  const Index anchors[] = {0, 2, 5};
  std::vector<float> out(9);
  expect_error([&] { provider->distances_to(anchors, out); },
               ErrorCode::kInvalidArgument,
               "anchor id 5 (position 2)");
  const Index ok[] = {0, 1};
  expect_error([&] { provider->distances_to(ok, out); },
               ErrorCode::kInvalidArgument,
               "expected n x m = 3 x 2");
  PrecomputedOptions small;
  small.max_bytes = 16;
  expect_error(
      [&] { make_precomputed_provider(graph, small); }, ErrorCode::kInvalidArgument, "max_bytes");
}

TEST(DenseProvider, ReadsAnchorRowsOfTheMatrix) {
  // Asymmetric on purpose: out[i * m + k] must be D[anchor][i].
  std::vector<float> d = {0, 1, 2, 3, 0, 4, 5, kInf, 0};
  DenseOptions options;
  options.allow_asymmetric = true;
  const auto provider = make_dense_provider(d, 3, options);
  EXPECT_EQ(provider->name(), "dense");
  const Index anchors[] = {2, 0};
  std::vector<float> out(6);
  provider->distances_to(anchors, out);
  EXPECT_EQ(out, (std::vector<float>{5, 0, kInf, 1, 0, 2}));
}

TEST(DenseProvider, ValidatesShapeValuesDiagonalAndSymmetry) {
  expect_error([] { make_dense_provider(std::vector<float>(8, 0.0f), 3); },
               ErrorCode::kInvalidArgument,
               "expected n x n = 3 x 3");
  expect_error(
      [] {
        make_dense_provider({0, 1, std::nanf(""), 0}, 2);
      },
      ErrorCode::kBadData,
      "D[1][0]");
  expect_error([] { make_dense_provider({0, -1, -1, 0}, 2); }, ErrorCode::kBadData, "D[0][1] = -1");
  expect_error([] { make_dense_provider({0, 1, 1, 0.5f}, 2); }, ErrorCode::kBadData, "diagonal");
  expect_error([] { make_dense_provider({0, 1, 2, 0}, 2); }, ErrorCode::kBadData, "not symmetric");
  // +inf (unreachable) is fine, and symmetric float noise within the tolerance passes.
  EXPECT_NO_THROW(make_dense_provider({0, kInf, kInf, 0}, 2));
  EXPECT_NO_THROW(make_dense_provider({0, 1.0f, std::nextafter(1.0f, 2.0f), 0}, 2));
  DenseOptions allow;
  allow.allow_asymmetric = true;
  EXPECT_NO_THROW(make_dense_provider({0, 1, 2, 0}, 2, allow));
}

TEST(DenseProvider, FindsAsymmetryInLargeTiledMatrices) {
  const Index n = 300;
  std::vector<float> d(static_cast<std::size_t>(n) * n);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j) d[i * n + j] = static_cast<float>(std::abs(i - j));
  }
  EXPECT_NO_THROW(make_dense_provider(d, n));
  d[250 * n + 70] = 1000.0f;
  expect_error([&] { make_dense_provider(d, n); }, ErrorCode::kBadData, "D[70][250]");
}

// ---------------------------------------------------------------------------------------------
// Dijkstra provider

TEST(DijkstraProvider, SameAnswersForEveryCacheCapacity) {
  Rng rng(31);
  for (const GraphCase& c : random_graphs(7)) {
    const Index n = c.graph.num_nodes();
    const std::vector<double> reference = reference::floyd_warshall(c.graph);
    const auto exact = make_precomputed_provider(c.graph);
    std::vector<std::unique_ptr<DijkstraProvider>> providers;
    for (const Index capacity : {0, 1, 3, 7, 1000}) {
      DijkstraOptions options;
      options.cache_rows = capacity;
      providers.push_back(make_dijkstra_provider(c.graph, options));
    }
    providers.push_back(make_dijkstra_provider(c.graph));  // default budget: every row fits
    EXPECT_EQ(providers.back()->cache_capacity(), n);
    for (int request = 0; request < 25; ++request) {
      // Few distinct anchors, often repeated, so rows get reused, evicted and recomputed.
      std::vector<Index> anchors = random_anchors(rng, std::min<Index>(n, 12), 1 + request % 9);
      std::vector<float> expected(n * anchors.size());
      exact->distances_to(anchors, expected);
      for (const auto& provider : providers) {
        std::vector<float> out(n * anchors.size(), -1.0f);
        provider->distances_to(anchors, out);
        // Same kernel and summation order as the all-pairs rows: bitwise equal.
        ASSERT_EQ(out, expected) << c.label << " capacity " << provider->cache_capacity()
                                 << " request " << request;
        ASSERT_LE(provider->cached_rows(), provider->cache_capacity());
      }
      expect_block_matches_reference(expected, anchors, reference, n, c.label);
    }
    EXPECT_EQ(providers[0]->stats().cache_hits, 0);
    EXPECT_EQ(providers[0]->cached_rows(), 0);
    EXPECT_GT(providers[4]->stats().cache_hits, 0);
    EXPECT_LE(providers[4]->stats().cache_misses, 12);
  }
}

TEST(DijkstraProvider, LeastRecentlyUsedRowIsEvictedAndCountersAdd) {
  Rng rng(41);
  const CsrGraph graph = connected_undirected_graph(rng, 50, 100, 0.1f);
  DijkstraOptions options;
  options.cache_rows = 2;
  options.threads = 1;
  const auto provider = make_dijkstra_provider(graph, options);
  std::vector<float> out(50);
  const auto request = [&](Index anchor) {
    const Index anchors[] = {anchor};
    provider->distances_to(anchors, out);
  };
  request(1);  // miss
  request(2);  // miss
  request(1);  // hit: 1 is now the most recently used
  request(3);  // miss, evicts 2
  request(1);  // hit
  request(2);  // miss, evicts 3
  request(3);  // miss, evicts 1
  const DistanceStats stats = provider->stats();
  EXPECT_EQ(stats.requests, 7);
  EXPECT_EQ(stats.anchors, 7);
  EXPECT_EQ(stats.cache_hits, 2);
  EXPECT_EQ(stats.cache_misses, 5);
  EXPECT_EQ(stats.shortest_path_runs, 5);
  EXPECT_EQ(provider->cached_rows(), 2);
  const auto exact = make_precomputed_provider(graph);
  std::vector<float> expected(50);
  const Index three[] = {3};
  exact->distances_to(three, expected);
  EXPECT_EQ(out, expected);
}

TEST(DijkstraProvider, RequestLargerThanCacheKeepsItsOwnRowsAndComputesRepeatsOnce) {
  Rng rng(43);
  const CsrGraph graph = connected_undirected_graph(rng, 60, 120, 0.1f);
  DijkstraOptions options;
  options.cache_rows = 3;
  const auto provider = make_dijkstra_provider(graph, options);
  const auto exact = make_precomputed_provider(graph);
  // 3 cached rows are hits; the request needs 8 distinct rows, 5 of which cannot be cached.
  const std::vector<Index> warm = {4, 5, 6};
  std::vector<float> out(60 * warm.size());
  provider->distances_to(warm, out);
  const std::vector<Index> anchors = {4, 9, 5, 9, 10, 11, 6, 12, 13, 4};
  out.assign(60 * anchors.size(), -1.0f);
  provider->distances_to(anchors, out);
  std::vector<float> expected(out.size());
  exact->distances_to(anchors, expected);
  EXPECT_EQ(out, expected);
  const DistanceStats stats = provider->stats();
  EXPECT_EQ(stats.cache_hits, 3);
  EXPECT_EQ(stats.cache_misses, 3 + 5);
  EXPECT_EQ(stats.shortest_path_runs, 3 + 5);
  EXPECT_EQ(stats.anchors, 3 + 10);
  EXPECT_EQ(provider->cached_rows(), 3);
}

TEST(DijkstraProvider, ConcurrentRequestsGetCorrectRows) {
  Rng rng(47);
  const CsrGraph graph = connected_undirected_graph(rng, 200, 600, 0.0f);
  const auto exact = make_precomputed_provider(graph);
  DijkstraOptions options;
  options.cache_rows = 5;
  options.threads = 1;
  const auto provider = make_dijkstra_provider(graph, options);
  constexpr int kThreads = 4;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      Rng local(1000 + t);
      for (int request = 0; request < 40; ++request) {
        const std::vector<Index> anchors = random_anchors(local, 15, 1 + request % 6);
        std::vector<float> out(200 * anchors.size());
        std::vector<float> expected(out.size());
        provider->distances_to(anchors, out);
        exact->distances_to(anchors, expected);
        failures[t] += out == expected ? 0 : 1;
      }
    });
  }
  for (auto& worker : workers) worker.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
  EXPECT_LE(provider->cached_rows(), 5);
  const DistanceStats stats = provider->stats();
  EXPECT_EQ(stats.requests, kThreads * 40);
  EXPECT_GE(stats.shortest_path_runs, stats.cache_misses);
  // Every slot is still usable afterwards: a full-capacity request, repeated, hits throughout.
  const std::vector<Index> five = {100, 101, 102, 103, 104};
  std::vector<float> out(200 * five.size());
  provider->distances_to(five, out);
  const std::int64_t hits_before = provider->stats().cache_hits;
  provider->distances_to(five, out);
  EXPECT_EQ(provider->stats().cache_hits - hits_before, 5);
}

TEST(DijkstraProvider, CapacityFollowsMemoryBudgetAndMemoryIsReported) {
  Rng rng(53);
  const CsrGraph graph = connected_undirected_graph(rng, 1000, 2000, 0.1f);
  DijkstraOptions options;
  options.cache_memory_bytes = 10 * 1000 * sizeof(float) + 100;
  const auto provider = make_dijkstra_provider(graph, options);
  EXPECT_EQ(provider->cache_capacity(), 10);
  const std::size_t empty_bytes = provider->memory_bytes();
  const std::vector<Index> anchors = {1, 2, 3};
  std::vector<float> out(3000);
  provider->distances_to(anchors, out);
  EXPECT_GE(provider->memory_bytes(), empty_bytes + 3 * 1000 * sizeof(float));
  DijkstraOptions negative;
  negative.cache_rows = -1;
  expect_error(
      [&] { make_dijkstra_provider(graph, negative); }, ErrorCode::kInvalidArgument, "cache_rows");
  const Index bad[] = {1000};
  std::vector<float> one(1000);
  expect_error(
      [&] { provider->distances_to(bad, one); }, ErrorCode::kInvalidArgument, "anchor id 1000");
}

TEST(DijkstraProvider, OwnsACopyOfTheGraph) {
  Rng rng(59);
  std::unique_ptr<DijkstraProvider> provider;
  std::vector<float> expected(40 * 2);
  const std::vector<Index> anchors = {3, 17};
  {
    const CsrGraph graph = connected_undirected_graph(rng, 40, 80, 0.1f);
    make_precomputed_provider(graph)->distances_to(anchors, expected);
    provider = make_dijkstra_provider(graph);
  }  // the caller's graph is gone
  std::vector<float> out(expected.size());
  provider->distances_to(anchors, out);
  EXPECT_EQ(out, expected);
}

TEST(DijkstraProvider, SingleNodeGraph) {
  const CsrGraph single(1, {0, 0}, {});
  const auto provider = make_dijkstra_provider(single);
  const Index anchors[] = {0, 0};
  std::vector<float> out(2, -1.0f);
  provider->distances_to(anchors, out);
  EXPECT_EQ(out, (std::vector<float>{0.0f, 0.0f}));
}

// ---------------------------------------------------------------------------------------------
// Farthest-point sampling and landmarks

TEST(FarthestPointSample, EachPickIsTheFarthestNodeFromThoseChosen) {
  for (const GraphCase& c : random_graphs(8)) {
    const Index n = c.graph.num_nodes();
    const std::vector<double> reference = reference::floyd_warshall(c.graph);
    FarthestPointOptions options;
    options.seed = 3;
    options.keep_rows = true;
    const FarthestPointSample sample = farthest_point_sample(c.graph, 12, options);
    ASSERT_EQ(sample.nodes.size(), 12u);
    EXPECT_EQ(sample.radius[0], kInf);
    std::vector<float> min_row(n, kInf);   // min over picks of the float rows
    std::vector<double> min_ref(n, kInf);  // the same from the double reference
    std::vector<bool> picked(n, false);
    for (std::size_t k = 0; k < sample.nodes.size(); ++k) {
      const Index node = sample.nodes[k];
      ASSERT_FALSE(picked[node]) << c.label << ": node " << node << " picked twice";
      if (k > 0) {
        // Exactly the farthest by the rows it was chosen with (ties: smallest id)...
        float best = -1.0f;
        Index best_node = -1;
        for (Index v = 0; v < n; ++v) {
          if (!picked[v] && min_row[v] > best) {
            best = min_row[v];
            best_node = v;
          }
        }
        EXPECT_EQ(node, best_node) << c.label << " pick " << k;
        EXPECT_EQ(sample.radius[k], best);
        // ...and the farthest by the exact distances, up to float rounding.
        double best_ref = -1.0;
        for (Index v = 0; v < n; ++v) {
          if (!picked[v]) best_ref = std::max(best_ref, min_ref[v]);
        }
        EXPECT_TRUE(path_length_matches(sample.radius[k], best_ref)) << c.label << " pick " << k;
      }
      picked[node] = true;
      for (Index v = 0; v < n; ++v) {
        min_row[v] = std::min(min_row[v], sample.rows[k * n + v]);
        min_ref[v] = std::min(min_ref[v], reference[static_cast<std::size_t>(node) * n + v]);
      }
    }
    EXPECT_EQ(sample.min_distance, min_row);
  }
}

TEST(FarthestPointSample, CoversEveryComponentAndClipsToN) {
  // Three components: {0,1,2}, {3,4}, {5}.
  const std::vector<Index> src = {0, 1, 3};
  const std::vector<Index> dst = {1, 2, 4};
  const std::vector<float> w = {1.0f, 1.0f, 1.0f};
  BuildOptions options;
  options.symmetrize = true;
  const CsrGraph graph = build_csr(6, EdgeListView{src, dst, w}, options);
  FarthestPointOptions fps;
  fps.start = 0;
  const FarthestPointSample three = farthest_point_sample(graph, 3, fps);
  EXPECT_EQ(three.nodes, (std::vector<Index>{0, 3, 5}));
  const FarthestPointSample all = farthest_point_sample(graph, 100, fps);
  ASSERT_EQ(all.nodes.size(), 6u);
  std::vector<Index> sorted = all.nodes;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<Index>{0, 1, 2, 3, 4, 5}));
  expect_error([&] { farthest_point_sample(graph, 0); }, ErrorCode::kInvalidArgument, "count");
  fps.start = 6;
  expect_error(
      [&] { farthest_point_sample(graph, 2, fps); }, ErrorCode::kInvalidArgument, "start id 6");
}

TEST(Landmark, CoordinatesEqualTheDijkstraRowsOfTheLandmarks) {
  Rng rng(61);
  for (const GraphCase& c : random_graphs(9)) {
    const Index n = c.graph.num_nodes();
    LandmarkOptions options;
    options.num_landmarks = 7;
    options.seed = 5;
    const auto provider = make_landmark_provider(c.graph, options);
    ASSERT_EQ(provider->num_landmarks(), 7);
    const std::span<const float> coords = provider->coordinates();
    std::vector<float> row(n);
    for (Index l = 0; l < 7; ++l) {
      shortest_path_lengths(c.graph, provider->landmarks()[l], row);
      for (Index i = 0; i < n; ++i) ASSERT_EQ(coords[i * 7 + l], row[i]) << c.label;
    }
    EXPECT_EQ(provider->stats().shortest_path_runs, 7);
  }
}

TEST(Landmark, ProviderFromRowsAndComponentsEqualsTheGraphConstructor) {
  Rng rng(63);
  for (const GraphCase& c : random_graphs(11)) {
    const Index n = c.graph.num_nodes();
    LandmarkOptions options;
    options.num_landmarks = 9;
    options.seed = 2;
    const auto from_graph = make_landmark_provider(c.graph, options);
    FarthestPointOptions fps;
    fps.seed = options.seed;
    fps.keep_rows = true;
    const FarthestPointSample sample = farthest_point_sample(c.graph, 9, fps);
    const LandmarkProvider from_rows(
        sample.nodes, sample.rows, connected_components(c.graph), options.threads);
    EXPECT_EQ(std::vector<Index>(from_rows.landmarks().begin(), from_rows.landmarks().end()),
              std::vector<Index>(from_graph->landmarks().begin(), from_graph->landmarks().end()))
        << c.label;
    EXPECT_EQ(
        std::vector<float>(from_rows.coordinates().begin(), from_rows.coordinates().end()),
        std::vector<float>(from_graph->coordinates().begin(), from_graph->coordinates().end()))
        << c.label;
    EXPECT_EQ(from_rows.num_classes(), from_graph->num_classes()) << c.label;
    EXPECT_EQ(from_rows.stats().shortest_path_runs, 9);
    const std::vector<Index> anchors = random_anchors(rng, n, 6);
    std::vector<float> want(n * anchors.size());
    std::vector<float> got(n * anchors.size());
    from_graph->distances_to(anchors, want);
    from_rows.distances_to(anchors, got);
    EXPECT_EQ(got, want) << c.label;
  }
  const Components two{2, {0, 1}, {1, 1}};
  const std::vector<float> rows = {0.0f, kInf};
  expect_error(
      [&] { LandmarkProvider({}, rows, two); }, ErrorCode::kInvalidArgument, "no landmarks");
  expect_error([&] { LandmarkProvider({0}, std::span<const float>(rows).first(1), two); },
               ErrorCode::kInvalidArgument,
               "expected d x n");
  expect_error(
      [&] { LandmarkProvider({2}, rows, two); }, ErrorCode::kInvalidArgument, "landmark id 2");
}

TEST(Landmark, MaxNormNeverExceedsTrueDistance) {
  Rng rng(67);
  for (int trial = 0; trial < 3; ++trial) {
    const Index n = 80;
    const CsrGraph graph = connected_undirected_graph(rng, n, 160, 0.0f);
    const std::vector<double> reference = reference::floyd_warshall(graph);
    LandmarkOptions options;
    options.num_landmarks = 10;
    options.seed = static_cast<std::uint64_t>(trial);
    const auto provider = make_landmark_provider(graph, options);
    const std::span<const float> x = provider->coordinates();
    const double scale = diameter(reference);
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < n; ++j) {
        double max_norm = 0.0;
        for (Index l = 0; l < 10; ++l) {
          max_norm =
              std::max(max_norm, std::abs(static_cast<double>(x[i * 10 + l]) - x[j * 10 + l]));
        }
        ASSERT_LE(max_norm, reference[i * n + j] + kPathRelTol * scale) << i << " " << j;
      }
    }
  }
}

TEST(Landmark, ExactOnAPathGraphWithAnEndpointLandmark) {
  Rng rng(71);
  const Index n = 120;
  const CsrGraph graph = path_graph(rng, n);
  const std::vector<double> reference = reference::floyd_warshall(graph);
  // One landmark at an endpoint: the landmark distance is the path distance.
  LandmarkOptions one;
  one.num_landmarks = 1;
  one.start = 0;
  const auto provider = make_landmark_provider(graph, one);
  const std::vector<Index> anchors = random_anchors(rng, n, 20);
  std::vector<float> out(n * anchors.size());
  provider->distances_to(anchors, out);
  const double scale = diameter(reference);
  for (Index i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < anchors.size(); ++k) {
      ASSERT_NEAR(out[i * anchors.size() + k], reference[anchors[k] * n + i], kPathRelTol * scale)
          << i << " " << anchors[k];
    }
  }
  // Several landmarks starting at an endpoint: the max-norm distance is exact for every pair.
  LandmarkOptions five;
  five.num_landmarks = 5;
  five.start = n - 1;
  const auto several = make_landmark_provider(graph, five);
  const std::span<const float> x = several->coordinates();
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j) {
      float max_norm = 0.0f;
      for (Index l = 0; l < 5; ++l)
        max_norm = std::max(max_norm, std::abs(x[i * 5 + l] - x[j * 5 + l]));
      ASSERT_NEAR(max_norm, reference[i * n + j], kPathRelTol * scale) << i << " " << j;
    }
  }
}

TEST(Landmark, DistancesAreEuclideanInLandmarkSpaceOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(73);
    std::vector<double> points = test::random_points(rng, 2000, 3);
    KnnGraphOptions knn;
    knn.k = 8;
    const CsrGraph graph = knn_graph(std::span<const double>(points), 2000, 3, knn);
    LandmarkOptions options;
    options.num_landmarks = 50;
    const auto provider = make_landmark_provider(graph, options);
    const Index d = provider->num_landmarks();
    const std::vector<Index> anchors = random_anchors(rng, 2000, 40);
    std::vector<float> out(2000 * anchors.size());
    provider->distances_to(anchors, out);
    const std::span<const float> x = provider->coordinates();
    // The GEMM formula is refined where it cancels; see LandmarkProvider::distances_to.
    constexpr double kLandmarkRelTol = 1e-4;
    for (Index i = 0; i < 2000; ++i) {
      for (std::size_t k = 0; k < anchors.size(); ++k) {
        double sq = 0.0;
        for (Index l = 0; l < d; ++l) {
          const double diff = static_cast<double>(x[i * d + l]) - x[anchors[k] * d + l];
          sq += diff * diff;
        }
        const double expected = std::sqrt(sq);
        ASSERT_NEAR(out[i * anchors.size() + k], expected, kLandmarkRelTol * expected + 1e-6)
            << i << " " << anchors[k];
      }
      for (std::size_t k = 0; k < anchors.size(); ++k) {
        if (anchors[k] == i) {
          ASSERT_EQ(out[i * anchors.size() + k], 0.0f);
        }
      }
    }
  });
}

TEST(Landmark, UnreachablePairsAreInfiniteOnDisconnectedGraphsOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(79);
    for (const GraphCase& c : random_graphs(10)) {
      const Index n = c.graph.num_nodes();
      const std::vector<double> reference = reference::floyd_warshall(c.graph);
      if (!is_symmetric(c.graph)) continue;  // exact for undirected graphs only
      for (const int d : {2, 20}) {
        LandmarkOptions options;
        options.num_landmarks = d;
        const auto provider = make_landmark_provider(c.graph, options);
        const std::vector<Index> anchors = random_anchors(rng, n, 10);
        std::vector<float> out(n * anchors.size());
        provider->distances_to(anchors, out);
        for (Index i = 0; i < n; ++i) {
          for (std::size_t k = 0; k < anchors.size(); ++k) {
            const bool unreachable = std::isinf(reference[anchors[k] * n + i]);
            ASSERT_EQ(std::isinf(out[i * anchors.size() + k]), unreachable) << c.label;
          }
        }
        // Clamping makes the block usable by the GW loop.
        clamp_and_normalize(out, true);
        for (float v : out) ASSERT_TRUE(v >= 0.0f && v <= 1.0f);
      }
    }
  });
}

TEST(Landmark, DirectedGraphsDoNotCrashAndRejectBadOptions) {
  for (const GraphCase& c : random_graphs(12)) {
    const auto provider = make_landmark_provider(c.graph);
    const Index anchors[] = {0, 1, 1};
    std::vector<float> out(c.graph.num_nodes() * 3);
    provider->distances_to(anchors, out);
    for (float v : out) ASSERT_FALSE(std::isnan(v));
    EXPECT_EQ(out[0], 0.0f);
  }
  const CsrGraph single(1, {0, 0}, {});
  const auto provider = make_landmark_provider(single);
  EXPECT_EQ(provider->num_landmarks(), 1);
  const Index zero[] = {0};
  std::vector<float> out(1, -1.0f);
  provider->distances_to(zero, out);
  EXPECT_EQ(out[0], 0.0f);
  LandmarkOptions none;
  none.num_landmarks = 0;
  expect_error(
      [&] { make_landmark_provider(single, none); }, ErrorCode::kInvalidArgument, "num_landmarks");
  const Index bad[] = {1};
  expect_error(
      [&] { provider->distances_to(bad, out); }, ErrorCode::kInvalidArgument, "anchor id 1");
}

TEST(Providers, FactoryBuildsEachModeAndTheyAgreeWhereExact) {
  Rng rng(83);
  const CsrGraph graph = connected_undirected_graph(rng, 100, 300, 0.05f);
  const std::vector<Index> anchors = random_anchors(rng, 100, 8);
  std::vector<float> precomputed(800);
  std::vector<float> dijkstra(800);
  std::vector<float> landmark(800);
  make_distance_provider(graph, DistanceMode::kPrecomputed)->distances_to(anchors, precomputed);
  make_distance_provider(graph, DistanceMode::kDijkstra)->distances_to(anchors, dijkstra);
  const auto lm = make_distance_provider(graph, DistanceMode::kLandmark);
  EXPECT_EQ(lm->name(), "landmark");
  lm->distances_to(anchors, landmark);
  EXPECT_EQ(precomputed, dijkstra);
  // Landmark distances bound the true distance from below (max-norm) and above (sqrt(d) x).
  for (std::size_t e = 0; e < 800; ++e) {
    EXPECT_LE(landmark[e], std::sqrt(50.0f) * precomputed[e] * 1.001f + 1e-5f);
  }
}

}  // namespace
}  // namespace gw
