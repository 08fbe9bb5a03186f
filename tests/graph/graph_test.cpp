#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "graph/batch.h"
#include "graph/builder.h"
#include "graph/components.h"
#include "graph/csr_graph.h"
#include "graph/incidence.h"
#include "graph/knn.h"
#include "graph/knn_reference.h"
#include "graph/laplacian.h"
#include "test_util.h"

namespace gw {
namespace {

// Expects `fn` to throw gw::Error with `code` and a message containing `fragment`.
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

// (src, dst) -> list of weights, the multiset view of a graph.
std::map<std::pair<Index, Index>, std::vector<float>> edge_map(const CsrGraphView& g) {
  std::map<std::pair<Index, Index>, std::vector<float>> out;
  for (Index i = 0; i < g.num_nodes; ++i) {
    for (Offset e = g.row_offsets[i]; e < g.row_offsets[i + 1]; ++e) {
      out[{i, g.col_indices[e]}].push_back(g.weight(e));
    }
  }
  return out;
}

bool columns_sorted(const CsrGraphView& g) {
  for (Index i = 0; i < g.num_nodes; ++i) {
    auto row = g.neighbors(i);
    if (!std::is_sorted(row.begin(), row.end())) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Builder

TEST(Builder, KeepsEveryEdgeSortedByColumnInInputOrder) {
  std::vector<Index> src = {0, 2, 0, 1, 0};
  std::vector<Index> dst = {2, 0, 1, 1, 2};
  std::vector<float> w = {1, 2, 3, 4, 5};
  CsrGraph g = build_csr(3, {src, dst, w});
  EXPECT_EQ(g.row_offsets(), (std::vector<Offset>{0, 3, 4, 5}));
  EXPECT_EQ(g.col_indices(), (std::vector<Index>{1, 2, 2, 1, 0}));
  EXPECT_EQ(g.weights(), (std::vector<float>{3, 1, 5, 4, 2}));
}

TEST(Builder, DuplicatePoliciesMergeParallelEdges) {
  std::vector<Index> src = {0, 0, 0, 1};
  std::vector<Index> dst = {1, 1, 1, 0};
  std::vector<float> w = {2, 5, 3, 7};
  auto weight01 = [&](DuplicatePolicy policy) {
    BuildOptions opt;
    opt.duplicates = policy;
    CsrGraph g = build_csr(2, {src, dst, w}, opt);
    EXPECT_EQ(g.num_edges(), 2);
    return g.weights()[0];
  };
  EXPECT_EQ(weight01(DuplicatePolicy::kMin), 2.0f);
  EXPECT_EQ(weight01(DuplicatePolicy::kMax), 5.0f);
  EXPECT_EQ(weight01(DuplicatePolicy::kSum), 10.0f);
}

TEST(Builder, SymmetrizeByMaxAndSelfLoopPolicies) {
  std::vector<Index> src = {0, 1, 2, 2};
  std::vector<Index> dst = {1, 0, 2, 0};
  std::vector<float> w = {1, 4, 9, 3};
  BuildOptions opt;
  opt.symmetrize = true;
  CsrGraph g = build_csr(3, {src, dst, w}, opt);
  auto edges = edge_map(g);
  EXPECT_EQ(edges[std::make_pair(0, 1)], std::vector<float>{4});
  EXPECT_EQ(edges[std::make_pair(1, 0)], std::vector<float>{4});
  EXPECT_EQ(edges[std::make_pair(0, 2)], std::vector<float>{3});
  EXPECT_EQ(edges[std::make_pair(2, 0)], std::vector<float>{3});
  EXPECT_EQ(edges[std::make_pair(2, 2)], std::vector<float>{9});  // self loop stored once
  EXPECT_EQ(g.num_edges(), 5);
  EXPECT_TRUE(is_symmetric(g));
  opt.self_loops = SelfLoopPolicy::kDrop;
  CsrGraph dropped = build_csr(3, {src, dst, w}, opt);
  EXPECT_EQ(dropped.num_edges(), 4);
  EXPECT_EQ(edge_map(dropped).count({2, 2}), 0u);
}

// Found by the graph fuzz harness (tests/fuzz/regressions/graph/): with no stored edge (or no
// node) at all, build_csr indexed an empty vector (undefined behaviour the sanitizer build reports).
TEST(Builder, NoEdgesOrNoNodesGiveAnEmptyGraph) {
  const std::vector<Index> loops = {1, 1, 3};
  BuildOptions drop;
  drop.self_loops = SelfLoopPolicy::kDrop;
  for (const auto& [edges, options] :
       {std::pair<std::vector<Index>, BuildOptions>{{}, {}}, {loops, drop}}) {
    const CsrGraph g = build_csr(5, {edges, edges, {}}, options);
    EXPECT_EQ(g.num_nodes(), 5);
    EXPECT_EQ(g.num_edges(), 0);
    EXPECT_EQ(g.row_offsets(), std::vector<Offset>(6, 0));
    validate(g);
  }
  // And no nodes at all (the per-chunk row counters are then empty too).
  const CsrGraph none = build_csr(0, {{}, {}, {}});
  EXPECT_EQ(none.num_nodes(), 0);
  EXPECT_EQ(none.row_offsets(), std::vector<Offset>(1, 0));
}

TEST(Builder, RandomEdgeListsMatchTheMultisetOracle) {
  Rng rng(101);
  for (int trial = 0; trial < 20; ++trial) {
    const Index n = 1 + static_cast<Index>(rng.uniform_index(60));
    const EdgeList edges = test::random_edges(rng, n, static_cast<Offset>(rng.uniform_index(300)));
    BuildOptions opt;
    opt.symmetrize = trial % 2 == 1;
    opt.duplicates = opt.symmetrize ? DuplicatePolicy::kMax : DuplicatePolicy::kKeepAll;
    CsrGraph g = build_csr(n, edges.view(), opt);
    validate(g);
    EXPECT_TRUE(columns_sorted(g));
    std::map<std::pair<Index, Index>, std::vector<float>> expected;
    for (Offset e = 0; e < edges.size(); ++e) {
      const Index u = edges.src[e], v = edges.dst[e];
      const float w = edges.weights[e];
      if (!opt.symmetrize) {
        expected[{u, v}].push_back(w);
        continue;
      }
      for (auto key : {std::make_pair(u, v), std::make_pair(v, u)}) {
        auto& list = expected[key];
        if (list.empty()) list.push_back(w);
        list[0] = std::max(list[0], w);
        if (u == v) break;
      }
    }
    EXPECT_EQ(edge_map(g), expected) << "trial " << trial;
    if (opt.symmetrize) {
      EXPECT_TRUE(is_symmetric(g));
    }
  }
}

TEST(Builder, RejectsBadEdgesNamingThem) {
  std::vector<Index> src = {0, 1}, dst = {1, 5};
  expect_error([&] { build_csr(3, {src, dst, {}}); }, ErrorCode::kBadData, "edge 1 (1 -> 5)");
  std::vector<Index> dst_ok = {1, 2};
  std::vector<float> negative = {1.0f, -2.0f};
  expect_error([&] { build_csr(3, {src, dst_ok, negative}); }, ErrorCode::kBadData, "edge 1");
  std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN(), 1.0f};
  expect_error([&] { build_csr(3, {src, dst_ok, nan}); }, ErrorCode::kBadData, "edge 0");
  std::vector<Index> short_dst = {1};
  expect_error([&] { build_csr(3, {src, short_dst, {}}); }, ErrorCode::kInvalidArgument, "targets");
}

TEST(Builder, EdgeListRoundTrip) {
  Rng rng(3);
  const EdgeList edges = test::random_edges(rng, 30, 200);
  CsrGraph g = build_csr(30, edges.view());
  CsrGraph again = build_csr(30, to_edge_list(g).view());
  EXPECT_EQ(again.row_offsets(), g.row_offsets());
  EXPECT_EQ(again.col_indices(), g.col_indices());
  EXPECT_EQ(again.weights(), g.weights());
}

// ---------------------------------------------------------------------------------------------
// Validation

TEST(Validate, NamesEveryKindOfProblem) {
  const std::vector<Index> cols = {1, 0};
  const std::vector<float> w = {1.0f, 1.0f};
  auto view = [&](const std::vector<Offset>& offsets,
                  const std::vector<Index>& c,
                  const std::vector<float>& ws,
                  Index n) {
    return CsrGraphView{n, offsets, c, ws};
  };
  std::vector<Offset> good = {0, 1, 2};
  EXPECT_NO_THROW(validate(view(good, cols, w, 2)));
  std::vector<Offset> short_offsets = {0, 2};
  expect_error([&] { validate(view(short_offsets, cols, w, 2), "obsp/conn"); },
               ErrorCode::kBadData,
               "obsp/conn: row_offsets has 2 entries");
  std::vector<Offset> not_zero = {1, 1, 2};
  expect_error(
      [&] { validate(view(not_zero, cols, w, 2)); }, ErrorCode::kBadData, "row_offsets[0]");
  std::vector<Offset> decreasing = {0, 2, 1};
  expect_error([&] { validate(view(decreasing, cols, w, 2)); },
               ErrorCode::kBadData,
               "not monotone at row 1");
  std::vector<Offset> wrong_end = {0, 1, 1};
  expect_error([&] { validate(view(wrong_end, cols, w, 2)); }, ErrorCode::kBadData, "ends at 1");
  std::vector<Index> bad_col = {1, 7};
  expect_error([&] { validate(view(good, bad_col, w, 2)); },
               ErrorCode::kBadData,
               "column index 7 at edge 1");
  std::vector<float> neg = {1.0f, -0.5f};
  expect_error([&] { validate(view(good, cols, neg, 2)); },
               ErrorCode::kBadData,
               "negative weight -0.5 at edge 1");
  std::vector<float> inf = {std::numeric_limits<float>::infinity(), 1.0f};
  expect_error(
      [&] { validate(view(good, cols, inf, 2)); }, ErrorCode::kBadData, "non-finite weight");
  std::vector<float> short_w = {1.0f};
  expect_error([&] { validate(view(good, cols, short_w, 2)); }, ErrorCode::kBadData, "1 weights");
}

// ---------------------------------------------------------------------------------------------
// kNN

void expect_same_knn(const KnnResult& got, const KnnResult& want, const std::string& what) {
  ASSERT_EQ(got.k, want.k) << what;
  ASSERT_EQ(got.indices.size(), want.indices.size()) << what;
  for (std::size_t p = 0; p < got.indices.size(); ++p) {
    ASSERT_EQ(got.indices[p], want.indices[p]) << what << " at row " << p / got.k;
    ASSERT_EQ(got.distances[p], want.distances[p]) << what << " at row " << p / got.k;
  }
}

TEST(Knn, KdTreeAndBruteForceEqualTheReferenceOnRandomPoints) {
  Rng rng(2024);
  struct Case {
    Index n;
    int d;
    int k;
  };
  for (const Case c : {Case{1, 3, 5},
                       Case{2, 2, 5},
                       Case{50, 1, 4},
                       Case{300, 2, 7},
                       Case{500, 3, 30},
                       Case{257, 8, 10},
                       Case{200, 20, 15},
                       Case{40, 3, 100}}) {
    const auto points = test::random_points(rng, c.n, c.d);
    const KnnResult want = knn_search_reference(points, c.n, c.d, c.k);
    const std::string what = "n=" + std::to_string(c.n) + " d=" + std::to_string(c.d);
    expect_same_knn(
        knn_search(std::span<const double>(points), c.n, c.d, c.k, KnnAlgorithm::kKdTree),
        want,
        what + " kd-tree");
    expect_same_knn(
        knn_search(std::span<const double>(points), c.n, c.d, c.k, KnnAlgorithm::kBruteForce),
        want,
        what + " brute force");
    // Float input: the same values widened to double give the same answer.
    std::vector<float> as_float(points.begin(), points.end());
    std::vector<double> widened(as_float.begin(), as_float.end());
    expect_same_knn(knn_search(std::span<const float>(as_float), c.n, c.d, c.k),
                    knn_search_reference(widened, c.n, c.d, c.k),
                    what + " float");
  }
}

TEST(Knn, TiesAndDuplicatePointsResolveToTheSmallerIndex) {
  Rng rng(9);
  // Points on a small integer grid: many exact ties, and duplicates (distance 0).
  for (int d : {2, 3, 16}) {
    const Index n = 400;
    std::vector<double> points(static_cast<std::size_t>(n) * d);
    for (double& x : points) x = static_cast<double>(rng.uniform_index(4));
    const KnnResult want = knn_search_reference(points, n, d, 12);
    for (auto algo : {KnnAlgorithm::kKdTree, KnnAlgorithm::kBruteForce}) {
      expect_same_knn(knn_search(std::span<const double>(points), n, d, 12, algo),
                      want,
                      "grid d=" + std::to_string(d));
    }
  }
  // All points identical: neighbours are simply the smallest other indices.
  std::vector<double> same(30 * 3, 0.5);
  const KnnResult r = knn_search(std::span<const double>(same), 30, 3, 4);
  EXPECT_EQ(std::vector<Index>(r.indices.begin(), r.indices.begin() + 4),
            (std::vector<Index>{1, 2, 3, 4}));
  EXPECT_EQ(std::vector<Index>(r.indices.begin() + 4, r.indices.begin() + 8),
            (std::vector<Index>{0, 2, 3, 4}));
}

TEST(Knn, RejectsBadInput) {
  std::vector<double> pts = {0, 0, 1, 1};
  expect_error([&] { knn_search(std::span<const double>(pts), 2, 3, 1); },
               ErrorCode::kInvalidArgument,
               "4 coordinates");
  expect_error([&] { knn_search(std::span<const double>(pts), 2, 2, 0); },
               ErrorCode::kInvalidArgument,
               "k must be >= 1");
  std::vector<double> empty;
  expect_error([&] { knn_search(std::span<const double>(empty), 0, 2, 3); },
               ErrorCode::kInvalidArgument,
               "at least one point");
  pts[3] = std::numeric_limits<double>::quiet_NaN();
  expect_error([&] { knn_search(std::span<const double>(pts), 2, 2, 1); },
               ErrorCode::kBadData,
               "position 3");
}

TEST(KnnGraph, IsTheSymmetrizedKnnRelationWithDistanceWeights) {
  Rng rng(77);
  const Index n = 600;
  const int d = 3, k = 6;
  const auto points = test::random_points(rng, n, d);
  const KnnResult knn = knn_search_reference(points, n, d, k);
  KnnGraphOptions opt;
  opt.k = k;
  opt.connect = false;
  const CsrGraph g = knn_graph(std::span<const double>(points), n, d, opt);
  validate(g);
  EXPECT_TRUE(columns_sorted(g));
  EXPECT_TRUE(is_symmetric(g));
  std::set<std::pair<Index, Index>> expected;
  for (Index i = 0; i < n; ++i) {
    for (int t = 0; t < k; ++t) {
      const Index j = knn.indices[i * k + t];
      expected.insert({i, j});
      expected.insert({j, i});
    }
  }
  std::set<std::pair<Index, Index>> got;
  for (const auto& [key, weights] : edge_map(g)) {
    got.insert(key);
    ASSERT_EQ(weights.size(), 1u);
    double dist2 = 0.0;
    for (int t = 0; t < d; ++t) {
      const double diff = points[key.first * d + t] - points[key.second * d + t];
      dist2 += diff * diff;
    }
    EXPECT_EQ(weights[0], static_cast<float>(std::sqrt(dist2)));
  }
  EXPECT_EQ(got, expected);
}

TEST(KnnGraph, ConnectsFarApartClusters) {
  Rng rng(5);
  const int d = 2;
  std::vector<double> points;
  for (int cluster = 0; cluster < 4; ++cluster) {
    for (int i = 0; i < 50; ++i) {
      points.push_back(100.0 * cluster + rng.uniform());
      points.push_back(rng.uniform());
    }
  }
  KnnGraphOptions opt;
  opt.k = 5;
  opt.connect = false;
  EXPECT_EQ(connected_components(knn_graph(std::span<const double>(points), 200, d, opt)).count, 4);
  opt.connect = true;
  const CsrGraph g = knn_graph(std::span<const double>(points), 200, d, opt);
  EXPECT_EQ(connected_components(g).count, 1);
  EXPECT_TRUE(is_symmetric(g));
}

// ---------------------------------------------------------------------------------------------
// Components and stitching

std::vector<Index> bfs_labels(const CsrGraphView& g) {
  // Undirected adjacency, BFS in node order: labels numbered by smallest node.
  std::vector<std::vector<Index>> adj(g.num_nodes);
  for (Index i = 0; i < g.num_nodes; ++i) {
    for (Index j : g.neighbors(i)) {
      adj[i].push_back(j);
      adj[j].push_back(i);
    }
  }
  std::vector<Index> labels(g.num_nodes, -1);
  Index next = 0;
  for (Index s = 0; s < g.num_nodes; ++s) {
    if (labels[s] >= 0) continue;
    std::queue<Index> q;
    q.push(s);
    labels[s] = next;
    while (!q.empty()) {
      const Index u = q.front();
      q.pop();
      for (Index v : adj[u]) {
        if (labels[v] < 0) {
          labels[v] = next;
          q.push(v);
        }
      }
    }
    ++next;
  }
  return labels;
}

TEST(Components, EqualBreadthFirstSearchOnRandomDirectedGraphs) {
  Rng rng(31);
  for (int trial = 0; trial < 30; ++trial) {
    const Index n = 1 + static_cast<Index>(rng.uniform_index(200));
    const EdgeList edges =
        test::random_edges(rng, n, static_cast<Offset>(rng.uniform_index(n + 1)));
    const CsrGraph g = build_csr(n, edges.view());
    const Components comps = connected_components(g);
    const auto want = bfs_labels(g);
    EXPECT_EQ(comps.labels, want);
    EXPECT_EQ(comps.count, *std::max_element(want.begin(), want.end()) + 1);
    Index total = 0;
    for (Index s : comps.sizes) total += s;
    EXPECT_EQ(total, n);
  }
}

TEST(Stitch, ResultIsConnectedAndEveryBridgeIsTheTrueShortest) {
  Rng rng(8);
  for (int trial = 0; trial < 10; ++trial) {
    const Index n = 120;
    const int d = 2;
    const auto points = test::random_points(rng, n, d);
    // Sparse random edges leave many components.
    EdgeList edges = test::random_edges(rng, n, 40, false);
    BuildOptions opt;
    opt.symmetrize = true;
    const CsrGraph g = build_csr(n, edges.view(), opt);
    const Components before = connected_components(g);
    const StitchResult stitched = stitch_components(g, std::span<const double>(points), d);
    ASSERT_EQ(static_cast<Index>(stitched.bridges.size()), before.count - 1);
    EXPECT_EQ(connected_components(stitched.graph).count, 1);
    EXPECT_TRUE(is_symmetric(stitched.graph));

    // Replay: each bridge must be the minimum over (grown component) x (rest).
    std::vector<Index> label = before.labels;
    std::vector<char> in_main(n, 0);
    for (Index i = 0; i < n; ++i) in_main[i] = label[i] == label[0];
    for (const Bridge& b : stitched.bridges) {
      double best = std::numeric_limits<double>::infinity();
      for (Index a = 0; a < n; ++a) {
        if (!in_main[a]) continue;
        for (Index v = 0; v < n; ++v) {
          if (in_main[v]) continue;
          const double dx = points[a * d] - points[v * d];
          const double dy = points[a * d + 1] - points[v * d + 1];
          best = std::min(best, dx * dx + dy * dy);
        }
      }
      ASSERT_TRUE(in_main[b.source]);
      ASSERT_FALSE(in_main[b.target]);
      EXPECT_FLOAT_EQ(b.length, static_cast<float>(std::sqrt(best)));
      const Index merged = label[b.target];
      for (Index i = 0; i < n; ++i) in_main[i] = in_main[i] || label[i] == merged;
    }
  }
}

TEST(Stitch, ConnectedGraphIsUnchanged) {
  std::vector<Index> src = {0, 1}, dst = {1, 2};
  std::vector<float> w = {1, 1};
  BuildOptions opt;
  opt.symmetrize = true;
  const CsrGraph g = build_csr(3, {src, dst, w}, opt);
  std::vector<double> pts = {0, 1, 2};
  const StitchResult r = stitch_components(g, std::span<const double>(pts), 1);
  EXPECT_TRUE(r.bridges.empty());
  EXPECT_EQ(r.graph.col_indices(), g.col_indices());
}

// ---------------------------------------------------------------------------------------------
// Laplacian

TEST(Laplacian, EqualsTheDenseFormula) {
  Rng rng(12);
  for (int trial = 0; trial < 20; ++trial) {
    const Index n = 1 + static_cast<Index>(rng.uniform_index(40));
    // Directed edges with self loops, parallel edges, isolated nodes and sinks.
    const EdgeList edges = test::random_edges(
        rng, n, static_cast<Offset>(rng.uniform_index(3 * n)), trial % 3 != 0, 0.1f, 2.0f);
    const CsrGraph g = build_csr(n, edges.view());
    const CsrMatrix<double> lap = normalized_laplacian(g);

    std::vector<double> a(n * n, 0.0);
    for (Offset e = 0; e < edges.size(); ++e) {
      a[edges.src[e] * n + edges.dst[e]] += edges.weights.empty() ? 1.0 : edges.weights[e];
    }
    std::vector<double> dinv(n, 0.0);
    for (Index i = 0; i < n; ++i) {
      double deg = 0.0;
      for (Index j = 0; j < n; ++j) deg += a[i * n + j];
      dinv[i] = deg > 0 ? 1.0 / std::sqrt(deg) : 0.0;
    }
    std::vector<double> got(n * n, 0.0);
    ASSERT_EQ(lap.row_offsets.size(), static_cast<std::size_t>(n) + 1);
    for (Index i = 0; i < n; ++i) {
      bool diag = false;
      for (Offset p = lap.row_offsets[i]; p < lap.row_offsets[i + 1]; ++p) {
        if (p > lap.row_offsets[i]) {
          ASSERT_LT(lap.col_indices[p - 1], lap.col_indices[p]);
        }
        got[i * n + lap.col_indices[p]] = lap.values[p];
        diag = diag || lap.col_indices[p] == i;
      }
      EXPECT_TRUE(diag) << "row " << i << " lacks its diagonal";
    }
    constexpr double kTol = 1e-12;  // a few roundings of products of doubles
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < n; ++j) {
        const double want = (i == j ? 1.0 : 0.0) - dinv[i] * a[i * n + j] * dinv[j];
        EXPECT_NEAR(got[i * n + j], want, kTol) << "L(" << i << "," << j << ")";
      }
    }
  }
}

TEST(Laplacian, IsolatedNodeHasUnitDiagonal) {
  std::vector<Index> src = {0}, dst = {1};
  BuildOptions opt;
  opt.symmetrize = true;
  const CsrGraph g = build_csr(3, {src, dst, {}}, opt);
  const CsrMatrix<double> lap = normalized_laplacian(g);
  EXPECT_EQ(lap.row_offsets[3] - lap.row_offsets[2], 1);
  EXPECT_EQ(lap.col_indices[lap.row_offsets[2]], 2);
  EXPECT_EQ(lap.values[lap.row_offsets[2]], 1.0);
  EXPECT_DOUBLE_EQ(lap.values[1], -1.0);  // L(0,1) = -1/sqrt(1*1)
}

// ---------------------------------------------------------------------------------------------
// Batching and incidence

TEST(Batch, RoundTripsAndIsBlockDiagonal) {
  Rng rng(4);
  std::vector<CsrGraph> graphs;
  for (int b = 0; b < 7; ++b) {
    const Index n = static_cast<Index>(rng.uniform_index(30));  // includes empty graphs
    graphs.push_back(build_csr(
        n,
        test::random_edges(rng, std::max<Index>(n, 1), n == 0 ? 0 : rng.uniform_index(80)).view()));
  }
  std::vector<CsrGraphView> views(graphs.begin(), graphs.end());
  const GraphBatch batch = batch_graphs(views);
  validate(batch.graph);
  ASSERT_EQ(batch.num_graphs(), 7);
  for (Index b = 0; b < 7; ++b) {
    EXPECT_EQ(batch.num_nodes_of(b), graphs[b].num_nodes());
    for (Index i = static_cast<Index>(batch.node_offsets[b]); i < batch.node_offsets[b + 1]; ++i) {
      for (Index j : batch.graph.view().neighbors(i)) {
        EXPECT_GE(j, batch.node_offsets[b]);
        EXPECT_LT(j, batch.node_offsets[b + 1]);
      }
    }
    const CsrGraph back = unbatch_graph(batch, b);
    EXPECT_EQ(back.row_offsets(), graphs[b].row_offsets());
    EXPECT_EQ(back.col_indices(), graphs[b].col_indices());
    EXPECT_EQ(back.weights(), graphs[b].weights());
  }
  EXPECT_EQ(unbatch_graphs(batch).size(), 7u);
  std::vector<Index> s = {0}, t = {0};
  const CsrGraph unweighted = build_csr(1, {s, t, {}});
  std::vector<CsrGraphView> mixed = {graphs[0].view(), unweighted.view()};
  expect_error([&] { batch_graphs(mixed); }, ErrorCode::kInvalidArgument, "graph 1");
}

TEST(Incidence, EqualsTheOracleWithSelfLoopsOnce) {
  Rng rng(6);
  for (int trial = 0; trial < 20; ++trial) {
    const Index n = 1 + static_cast<Index>(rng.uniform_index(50));
    const EdgeList edges =
        test::random_edges(rng, n, static_cast<Offset>(rng.uniform_index(200)), false);
    const Incidence inc = build_incidence(n, edges.view());
    ASSERT_EQ(inc.num_nodes(), n);
    for (Index v = 0; v < n; ++v) {
      std::vector<Offset> want;
      for (Offset e = 0; e < edges.size(); ++e) {
        if (edges.src[e] == v || edges.dst[e] == v) want.push_back(e);
      }
      const auto got = inc.edges_of(v);
      EXPECT_EQ(std::vector<Offset>(got.begin(), got.end()), want) << "node " << v;
    }
    // The CSR form numbers edges by CSR position.
    const CsrGraph g = build_csr(n, edges.view());
    const Incidence by_csr = build_incidence(g);
    for (Index v = 0; v < n; ++v) {
      for (Offset e : by_csr.edges_of(v)) {
        const auto& ro = g.row_offsets();
        const Index src =
            static_cast<Index>(std::upper_bound(ro.begin(), ro.end(), e) - ro.begin() - 1);
        EXPECT_TRUE(src == v || g.col_indices()[e] == v);
      }
    }
  }
  std::vector<Index> src = {0}, dst = {3};
  expect_error([&] { build_incidence(2, {src, dst, {}}); }, ErrorCode::kBadData, "edge 0");
}

}  // namespace
}  // namespace gw
