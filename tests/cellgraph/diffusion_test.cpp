#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cellgraph/diffusion.h"
#include "cellgraph/diffusion_reference.h"
#include "cellgraph/workloads.h"
#include "cellgraph_test_util.h"
#include "core/error.h"
#include "core/rng.h"
#include "graph/builder.h"
#include "graph/laplacian.h"
#include "isa_test_util.h"
#include "test_util.h"

namespace gw {
namespace {

using test::expect_error;

// Chebyshev at K = 64 in float64 against an eigendecomposition: both exact to rounding, which
// for ||x|| ~ 1 and n <= 200 stays far below this (the acceptance bound).
constexpr double kExactTolerance = 1e-8;
// The batched kernel and the plain-loop recurrence differ only in the rounding of the shifted
// operator's entries and the order of additions inside a row: a few ulp per step over 64 steps.
constexpr double kRecurrenceTolerance = 1e-12;
// float32 compute against the float64 reference: ~64 steps of float rounding (2^-24) on values
// of order 1.
constexpr double kFloatTolerance = 2e-5;

double max_abs_diff(std::span<const double> a, std::span<const double> b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  return worst;
}

std::vector<double> random_signal(Rng& rng, std::size_t size) {
  std::vector<double> x(size);
  for (double& v : x) v = 2.0 * rng.uniform() - 1.0;
  return x;
}

// A random undirected graph (both directions stored) with `m` random pairs, some isolated nodes
// when m is small, optionally weighted.
CsrGraph random_undirected(Rng& rng, Index n, Offset m, bool weighted) {
  const EdgeList edges = test::random_edges(rng, n, m, weighted, 0.1f, 2.0f);
  BuildOptions options;
  options.symmetrize = true;
  return build_csr(n, edges.view(), options);
}

// One graph of the batch as a DiffusionGraphs view over its CSR edges (edges stored as given).
struct SingleGraph {
  std::vector<Index> num_nodes;
  std::vector<Offset> edge_ptr;
  EdgeList edges;
  explicit SingleGraph(const CsrGraph& g)
      : num_nodes{g.num_nodes()}, edge_ptr{0, g.num_edges()}, edges(to_edge_list(g)) {}
  DiffusionGraphs view() const {
    return {num_nodes, edge_ptr, edges.src, edges.dst, edges.weights};
  }
};

// ---------------------------------------------------------------------------------------------
// Coefficients

TEST(Bessel, MatchesKnownValues) {
  // Values from mpmath at 30 digits.
  struct Case {
    int k;
    double x;
    double value;
  };
  const Case cases[] = {{0, 1.0, 1.2660658777520084},
                        {1, 1.0, 0.565159103992485},
                        {0, 10.0, 2815.7166284662544},
                        {2, 0.1, 0.0012510419922417593},
                        {5, 0.1, 2.6052519298936978e-09},
                        {64, 0.1, 4.2724804464910405e-173},
                        {3, 25.0, 4806356106.506539},
                        {0, 50.0, 2.9325537838493362e+20},
                        {10, 50.0, 1.0715971594776371e+20}};
  for (const Case& c : cases) {
    EXPECT_NEAR(bessel_i(c.k, c.x), c.value, 1e-14 * c.value) << "I_" << c.k << "(" << c.x << ")";
  }
  EXPECT_EQ(bessel_i(0, 0.0), 1.0);
  EXPECT_EQ(bessel_i(3, 0.0), 0.0);
  // Scaled values where I_k itself would overflow or need e^x (lgamma of the peak term costs a
  // few more digits at such arguments).
  EXPECT_NEAR(bessel_i_scaled(0, 500.0), 0.017845706500153168, 1e-12 * 0.0178);
  EXPECT_NEAR(bessel_i_scaled(7, 700.0), 0.01456222040607166, 1e-12 * 0.0146);
  EXPECT_NEAR(bessel_i_scaled(100, 300.0), 1.5055776056932095e-09, 1e-12 * 1.5e-9);
  // Orders above 170 take the peak-term (lgamma) path.
  EXPECT_NEAR(bessel_i_scaled(200, 300.0), 2.0981681180178433e-30, 1e-12 * 2.1e-30);
  EXPECT_NEAR(bessel_i(175, 150.0), 8.694225211503412e+22, 1e-12 * 8.7e22);
  expect_error([] { bessel_i(-1, 1.0); }, ErrorCode::kInvalidArgument, "order k must be >= 0");
  expect_error([] { bessel_i(0, 800.0); }, ErrorCode::kInvalidArgument, "argument x");
}

TEST(ChebyshevWeights, ReproduceTheExponentialAtTheIntervalEnds) {
  // T_k(-1) = (-1)^k maps to lambda = 0 (exp(0) = 1), T_k(1) = 1 to lambda = lambda_max.
  for (double beta : {0.0, 0.1, 1.0, 7.5}) {
    for (double lambda_max : {2.0, 1.3}) {
      const std::vector<double> w = heat_chebyshev_weights(64, beta, lambda_max);
      ASSERT_EQ(w.size(), 65u);
      double at_zero = 0.0, at_max = 0.0;
      for (std::size_t k = 0; k < w.size(); ++k) {
        at_zero += (k % 2 == 0 ? 1.0 : -1.0) * w[k];
        at_max += w[k];
      }
      EXPECT_NEAR(at_zero, 1.0, 1e-14) << beta;
      EXPECT_NEAR(at_max, std::exp(-beta * lambda_max), 1e-14) << beta;
    }
  }
  // The compatibility variant differs in w_0 only, by e^{-beta} I_0(beta).
  const std::vector<double> halved = heat_chebyshev_weights(8, 0.1);
  const std::vector<double> full = heat_chebyshev_weights(8, 0.1, 2.0, false);
  EXPECT_NEAR(full[0] - halved[0], std::exp(-0.1) * bessel_i(0, 0.1), 1e-16);
  for (int k = 1; k <= 8; ++k) EXPECT_EQ(full[k], halved[k]);
  // Cached values are returned unchanged.
  EXPECT_EQ(heat_chebyshev_weights(8, 0.1), halved);
}

// ---------------------------------------------------------------------------------------------
// Against exact oracles

TEST(Diffusion, MatchesTheEigendecompositionOracleOnRandomUndirectedGraphsOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(42);
    DiffusionOptions options;  // K = 64, beta = 0.1, lambda_max = 2
    for (int trial = 0; trial < 12; ++trial) {
      const Index n = 1 + static_cast<Index>(rng.uniform_index(200));
      const Offset m = static_cast<Offset>(rng.uniform_index(3 * n + 1));
      const bool weighted = trial % 2 == 1;
      const CsrGraph g = random_undirected(rng, n, m, weighted);
      const Index channels = 1 + static_cast<Index>(rng.uniform_index(70));
      const std::vector<double> x = random_signal(rng, static_cast<std::size_t>(n) * channels);
      const SingleGraph single(g);
      std::vector<double> y(x.size());
      diffuse_batch(single.view(), x, n, channels, y, options);
      const std::vector<double> exact = heat_kernel_eigen_reference(g, options.beta, x, channels);
      EXPECT_LE(max_abs_diff(y, exact), kExactTolerance)
          << "trial " << trial << ": n = " << n << ", m = " << m << ", C = " << channels;
      // The estimated lambda_max gives the same operator exp(-beta L).
      DiffusionOptions estimated = options;
      estimated.estimate_lambda_max = true;
      const HeatDiffusion op(single.view(), n, estimated);
      EXPECT_LE(op.lambda_max(), 2.0);
      op.apply(std::span<const double>(x), channels, std::span<double>(y));
      EXPECT_LE(max_abs_diff(y, exact), kExactTolerance) << "estimated, trial " << trial;
    }
  });
}

TEST(Diffusion, LanczosEstimateBoundsTheSpectrum) {
  Rng rng(5);
  const CsrGraph g = random_undirected(rng, 150, 200, false);
  const SingleGraph single(g);
  DiffusionOptions options;
  options.estimate_lambda_max = true;
  options.lanczos_steps = 40;
  const HeatDiffusion op(single.view(), 150, options);
  const CsrMatrix<double> lap = normalized_laplacian(g);
  Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(150, 150);
  for (Index i = 0; i < 150; ++i) {
    for (Offset p = lap.row_offsets[i]; p < lap.row_offsets[i + 1]; ++p) {
      dense(i, lap.col_indices[p]) += lap.values[p];
    }
  }
  const double top = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(dense).eigenvalues().maxCoeff();
  // 40 steps on 150 nodes converge the top Ritz value; the residual bound then covers it.
  EXPECT_GE(op.lambda_max(), top - 1e-9);
  EXPECT_LE(op.lambda_max(), std::min(2.0, top + 0.05));
  const std::vector<double> x = random_signal(rng, 150 * 3);
  std::vector<double> y(x.size());
  op.apply(std::span<const double>(x), 3, std::span<double>(y));
  EXPECT_LE(max_abs_diff(y, heat_kernel_eigen_reference(g, 0.1, x, 3)), kExactTolerance);
}

TEST(Diffusion, DirectedGraphsMatchTheTaylorOracle) {
  Rng rng(9);
  for (int trial = 0; trial < 8; ++trial) {
    const Index n = 2 + static_cast<Index>(rng.uniform_index(120));
    const EdgeList edges = test::random_edges(rng, n, 3 * n, trial % 2 == 0, 0.2f, 1.5f);
    const CsrGraph g = build_csr(n, edges.view());
    const Index channels = 5;
    const std::vector<double> x = random_signal(rng, static_cast<std::size_t>(n) * channels);
    std::vector<double> y(x.size());
    diffuse_batch(SingleGraph(g).view(), x, n, channels, y);
    EXPECT_LE(max_abs_diff(y, heat_kernel_taylor_reference(g, 0.1, x, channels)), kExactTolerance)
        << trial;
  }
}

TEST(Diffusion, CompatibilityFlagAddsTheUnhalvedTerm) {
  Rng rng(17);
  const CsrGraph g = random_undirected(rng, 60, 150, true);
  const Index channels = 4;
  const std::vector<double> x = random_signal(rng, 60 * channels);
  DiffusionOptions options;
  options.halve_c0 = false;
  std::vector<double> y(x.size());
  diffuse_batch(SingleGraph(g).view(), x, 60, channels, y, options);
  std::vector<double> expected = heat_kernel_eigen_reference(g, 0.1, x, channels);
  const double extra = std::exp(-0.1) * bessel_i(0, 0.1);
  for (std::size_t i = 0; i < x.size(); ++i) expected[i] += extra * x[i];
  EXPECT_LE(max_abs_diff(y, expected), kExactTolerance);
}

// ---------------------------------------------------------------------------------------------
// Batching

// A mixed batch: graphs of several sizes, an edgeless graph, an empty graph (0 nodes), one with
// a self loop, weighted; padding rows of x hold NaN (they must never be read).
struct MixedBatch {
  Index seq_len = 40;
  Index channels = 70;  // two channel blocks in float64, one and a bit in float32
  DiffusionGraphSet set;
  std::vector<float> weights;
  std::vector<double> x;

  explicit MixedBatch(Rng& rng) {
    const Index sizes[] = {40, 17, 0, 25, 33, 1, 40};
    set.edge_ptr.push_back(0);
    for (Index b = 0; b < 7; ++b) {
      const Index n = sizes[b];
      set.num_nodes.push_back(n);
      const Offset m = (b == 3 || n < 2) ? 0 : 3 * n;  // graph 3 has no edges
      for (Offset e = 0; e < m; ++e) {
        set.src.push_back(static_cast<Index>(rng.uniform_index(n)));
        set.dst.push_back(static_cast<Index>(rng.uniform_index(n)));
        weights.push_back(0.5f + rng.uniform_float());
      }
      set.edge_ptr.push_back(static_cast<Offset>(set.src.size()));
      single_ptr_.push_back({0, set.edge_ptr[b + 1] - set.edge_ptr[b]});
    }
    x.assign(static_cast<std::size_t>(7) * seq_len * channels,
             std::numeric_limits<double>::quiet_NaN());
    for (Index b = 0; b < 7; ++b) {
      for (Index i = 0; i < sizes[b]; ++i) {
        for (Index c = 0; c < channels; ++c) {
          x[(static_cast<std::size_t>(b) * seq_len + i) * channels + c] = 2.0 * rng.uniform() - 1.0;
        }
      }
    }
  }
  DiffusionGraphs view() const {
    DiffusionGraphs v = set.view();
    v.weights = weights;
    return v;
  }
  // Graph b alone, as a batch of one.
  DiffusionGraphs graph(Index b) const {
    const Offset e0 = set.edge_ptr[b];
    const Offset m = set.edge_ptr[b + 1] - e0;
    return {std::span<const Index>(set.num_nodes).subspan(b, 1),
            single_ptr_[b],
            std::span<const Index>(set.src).subspan(e0, m),
            std::span<const Index>(set.dst).subspan(e0, m),
            std::span<const float>(weights).subspan(e0, m)};
  }
  std::span<const double> x_of(Index b) const {
    return std::span<const double>(x).subspan(static_cast<std::size_t>(b) * seq_len * channels,
                                              static_cast<std::size_t>(seq_len) * channels);
  }

 private:
  std::vector<std::vector<Offset>> single_ptr_;
};

TEST(Diffusion, BatchedCallEqualsPerGraphCallsAndZeroesPaddingOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(2026);
    for (bool symmetrize : {false, true}) {
      const MixedBatch batch(rng);
      DiffusionOptions options;
      options.symmetrize = symmetrize;
      std::vector<double> y(batch.x.size(), std::numeric_limits<double>::quiet_NaN());
      diffuse_batch(batch.view(), batch.x, batch.seq_len, batch.channels, y, options);

      std::vector<double> y_ref(y.size());
      diffuse_batch_reference(batch.view(), batch.x, batch.seq_len, batch.channels, y_ref, options);
      const std::size_t rows = static_cast<std::size_t>(batch.seq_len) * batch.channels;
      for (Index b = 0; b < 7; ++b) {
        SCOPED_TRACE("graph " + std::to_string(b) + (symmetrize ? ", symmetrized" : ""));
        std::vector<double> y_one(rows, std::numeric_limits<double>::quiet_NaN());
        diffuse_batch(batch.graph(b), batch.x_of(b), batch.seq_len, batch.channels, y_one, options);
        const std::span<const double> y_b = std::span<const double>(y).subspan(b * rows, rows);
        // The same arithmetic in the same order, whether batched or alone.
        EXPECT_TRUE(std::equal(y_b.begin(), y_b.end(), y_one.begin()));
        EXPECT_LE(max_abs_diff(y_b, std::span<const double>(y_ref).subspan(b * rows, rows)),
                  kRecurrenceTolerance);
        const Index n = batch.set.num_nodes[b];
        for (std::size_t i = static_cast<std::size_t>(n) * batch.channels; i < rows; ++i) {
          ASSERT_EQ(y_b[i], 0.0) << "padding value " << i;
        }
      }
      // The edgeless graph keeps its own signal scaled by e^{-beta} (L = I).
      const std::span<const double> x3 = batch.x_of(3);
      const std::span<const double> y3 = std::span<const double>(y).subspan(3 * rows, rows);
      for (std::size_t i = 0; i < static_cast<std::size_t>(25) * batch.channels; ++i) {
        EXPECT_NEAR(y3[i], std::exp(-0.1) * x3[i], 1e-15);
      }
    }
  });
}

TEST(Diffusion, FloatMatchesDoubleAndThreadCountDoesNotMatterOnEveryTarget) {
  test::for_each_isa([&](Isa) {
    Rng rng(31);
    const DiffusionGraphSet set = random_diffusion_graphs(rng, 12, 64);
    const Index seq = 64;
    for (Index channels : {16, 64, 100}) {
      const std::vector<double> x =
          random_signal(rng, static_cast<std::size_t>(12) * seq * channels);
      std::vector<float> xf(x.begin(), x.end());
      DiffusionOptions options;
      options.symmetrize = true;
      std::vector<double> y(x.size());
      diffuse_batch(set.view(), x, seq, channels, y, options);
      std::vector<float> yf(x.size()), yf1(x.size());
      diffuse_batch(set.view(), xf, seq, channels, yf, options);
      options.threads = 1;
      diffuse_batch(set.view(), xf, seq, channels, yf1, options);
      EXPECT_EQ(yf, yf1) << channels;
      double worst = 0.0;
      for (std::size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(yf[i] - y[i]));
      EXPECT_LE(worst, kFloatTolerance) << channels;
      std::vector<double> y_ref(y.size());
      diffuse_batch_reference(set.view(), x, seq, channels, y_ref, options);
      EXPECT_LE(max_abs_diff(y, y_ref), kRecurrenceTolerance) << channels;
    }
  });
}

// One graph large enough (> 2^26 multiply-adds) that two threads split each product's rows, with
// a barrier per step: the same result as one thread, and as the reference.
TEST(Diffusion, LargeSingleGraphSplitsRowsAcrossTheTeam) {
  Rng rng(77);
  const DiffusionGraphSet set = random_diffusion_graphs(rng, 1, 8000, 10.0);
  const Index channels = 32;  // one channel block in float64: a single task
  const std::size_t size = static_cast<std::size_t>(8000) * channels;
  const std::vector<double> x = random_signal(rng, size);
  DiffusionOptions options;
  options.symmetrize = true;
  options.threads = 2;
  std::vector<double> y2(size), y1(size), ref(size);
  const HeatDiffusion op(set.view(), 8000, options);
  ASSERT_GE(64.0 * op.nnz() * channels, 67108864.0);
  op.apply(std::span<const double>(x), channels, std::span<double>(y2));
  options.threads = 1;
  diffuse_batch(set.view(), x, 8000, channels, y1, options);
  EXPECT_EQ(y1, y2);
  diffuse_batch_reference(set.view(), x, 8000, channels, ref, options);
  EXPECT_LE(max_abs_diff(y2, ref), kRecurrenceTolerance);
}

TEST(Diffusion, OrderZeroAndOneAreTheFirstTerms) {
  Rng rng(4);
  const CsrGraph g = random_undirected(rng, 10, 20, false);
  const SingleGraph single(g);
  const std::vector<double> x = random_signal(rng, 10 * 2);
  for (int order : {0, 1, 2}) {
    DiffusionOptions options;
    options.order = order;
    options.beta = 0.7;
    std::vector<double> y(x.size());
    diffuse_batch(single.view(), x, 10, 2, y, options);
    const std::vector<double> ref =
        chebyshev_diffusion_reference(g, x, 2, heat_chebyshev_weights(order, 0.7), 2.0);
    EXPECT_LE(max_abs_diff(y, ref), 1e-15) << order;
  }
}

TEST(Diffusion, RejectsBadGraphsAndShapes) {
  const std::vector<Index> nodes = {3, 5};
  const std::vector<Offset> ptr = {0, 1, 2};
  const std::vector<Index> src = {0, 4};
  const std::vector<Index> dst = {2, 5};
  const DiffusionGraphs graphs{nodes, ptr, src, dst, {}};
  expect_error([&] { HeatDiffusion(graphs, 6); },
               ErrorCode::kBadData,
               "graph 1, edge 0 (4 -> 5) has a local node id outside [0, 5)");
  expect_error(
      [&] { HeatDiffusion(graphs, 4); }, ErrorCode::kInvalidArgument, "graph 1 has 5 nodes");
  const std::vector<Offset> short_ptr = {0, 2};
  expect_error(
      [&] {
        HeatDiffusion(DiffusionGraphs{nodes, short_ptr, src, dst, {}}, 6);
      },
      ErrorCode::kInvalidArgument,
      "needs B + 1");
  const std::vector<Index> dst_ok = {2, 3};
  const HeatDiffusion op(DiffusionGraphs{nodes, ptr, src, dst_ok, {}}, 6);
  std::vector<double> x(2 * 6 * 3), y(2 * 6 * 3);
  expect_error([&] { op.apply(std::span<const double>(x), 4, std::span<double>(y)); },
               ErrorCode::kInvalidArgument,
               "needs 48");
  expect_error([&] { op.apply(std::span<const double>(x), 3, std::span<double>(x)); },
               ErrorCode::kInvalidArgument,
               "overlap");
  DiffusionOptions bad;
  bad.beta = -1.0;
  expect_error([&] { HeatDiffusion(graphs, 6, bad); }, ErrorCode::kInvalidArgument, "beta");
  DiffusionOptions directed_estimate;
  directed_estimate.estimate_lambda_max = true;
  expect_error(
      [&] {
        HeatDiffusion(DiffusionGraphs{nodes, ptr, src, dst_ok, {}}, 6, directed_estimate);
      },
      ErrorCode::kInvalidArgument,
      "needs undirected graphs");
}

}  // namespace
}  // namespace gw
