// The joint embedding (embedding/joint_embedding.h): each building block against a plain or dense
// reference on fresh random inputs, the spiral -> swiss roll embedding, and the errors.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "datagen/spiral.h"
#include "embedding/joint_embedding.h"
#include "graph/builder.h"
#include "graph/knn.h"
#include "solver/metrics.h"
#include "solver/solve.h"
#include "test_util.h"

namespace gw {
namespace {

// Sums of a few hundred products in a different order: rounding differences only.
constexpr double kSumOrderTolerance = 1e-12;
// CG is run to a relative residual of 1e-13; the condition numbers here are below ~100, so the
// solution error is below ~1e-11 relative, far inside this bound.
constexpr double kSolveTolerance = 1e-9;

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  return worst;
}

std::vector<double> random_plan(Rng& rng, Index rows, Index cols, std::vector<Index> zero_rows) {
  std::vector<double> t(static_cast<std::size_t>(rows) * cols);
  for (double& x : t) x = rng.uniform() < 0.3 ? 0.0 : rng.uniform();
  for (Index r : zero_rows) std::fill_n(t.begin() + static_cast<std::size_t>(r) * cols, cols, 0.0);
  return t;
}

EmbeddingMatrix random_matrix(Rng& rng, Index rows, Index cols) {
  EmbeddingMatrix m{rows, cols, std::vector<double>(static_cast<std::size_t>(rows) * cols)};
  for (double& x : m.values) x = 2.0 * rng.uniform() - 1.0;
  return m;
}

// CSR arrays of a dense row-major matrix (zeros left out).
struct Csr {
  std::vector<Offset> offsets{0};
  std::vector<Index> indices;
  std::vector<double> values;
};
Csr to_csr(const std::vector<double>& dense, Index rows, Index cols) {
  Csr csr;
  for (Index r = 0; r < rows; ++r) {
    for (Index c = 0; c < cols; ++c) {
      const double v = dense[static_cast<std::size_t>(r) * cols + c];
      if (v != 0.0) {
        csr.indices.push_back(c);
        csr.values.push_back(v);
      }
    }
    csr.offsets.push_back(static_cast<Offset>(csr.values.size()));
  }
  return csr;
}

// The projection as the formula reads, one child point at a time.
std::vector<double> plain_projection(const std::vector<double>& t,
                                     Index rows,
                                     Index cols,
                                     bool child_is_rows,
                                     const EmbeddingMatrix& parent) {
  const Index child_n = child_is_rows ? rows : cols;
  const Index parent_n = child_is_rows ? cols : rows;
  std::vector<double> out(static_cast<std::size_t>(child_n) * parent.cols, 0.0);
  for (Index i = 0; i < child_n; ++i) {
    double mass = 0.0;
    for (Index j = 0; j < parent_n; ++j) {
      mass += child_is_rows ? t[i * cols + j] : t[j * cols + i];
    }
    if (mass == 0.0) continue;
    for (Index k = 0; k < parent.cols; ++k) {
      double sum = 0.0;
      for (Index j = 0; j < parent_n; ++j) {
        sum += (child_is_rows ? t[i * cols + j] : t[j * cols + i]) * parent(j, k);
      }
      out[i * parent.cols + k] = sum / mass;
    }
  }
  return out;
}

TEST(Barycentric, DenseAndCsrMatchPlainLoopInBothOrientations) {
  Rng rng(11);
  const Index rows = 37, cols = 53;
  const std::vector<double> t = random_plan(rng, rows, cols, {4, 20});
  const Csr csr = to_csr(t, rows, cols);
  EmbeddingPlan dense{"a", "b", rows, cols, t, {}, {}, {}};
  EmbeddingPlan sparse{"a", "b", rows, cols, {}, csr.offsets, csr.indices, csr.values};
  for (bool child_is_rows : {true, false}) {
    const EmbeddingMatrix parent = random_matrix(rng, child_is_rows ? cols : rows, 5);
    const std::vector<double> expected = plain_projection(t, rows, cols, child_is_rows, parent);
    for (const EmbeddingPlan* plan : {&dense, &sparse}) {
      std::vector<double> mass;
      const EmbeddingMatrix got = barycentric_projection(*plan, child_is_rows, parent, mass);
      EXPECT_EQ(got.rows, child_is_rows ? rows : cols);
      EXPECT_EQ(got.cols, 5);
      EXPECT_LT(max_abs_difference(got.values, expected), kSumOrderTolerance)
          << (plan == &dense ? "dense" : "csr") << ", child_is_rows " << child_is_rows;
    }
  }
  std::vector<double> mass;
  barycentric_projection(dense, true, random_matrix(rng, cols, 2), mass);
  EXPECT_EQ(mass[4], 0.0);
  EXPECT_EQ(mass[20], 0.0);
  EXPECT_GT(mass[5], 0.0);
}

// A random graph over n nodes with every node linked to its successor (connected), plus random
// directed edges, self loops and duplicates included (the smoothing must symmetrize and drop them).
CsrGraph random_connected_graph(Rng& rng, Index n, Offset extra) {
  EdgeList edges = test::random_edges(rng, n, extra, /*weighted=*/true, 0.5f, 2.0f);
  for (Index i = 0; i + 1 < n; ++i) {
    edges.src.push_back(i);
    edges.dst.push_back(i + 1);
    edges.weights.push_back(1.0f);
  }
  return build_csr(n, edges.view());
}

// Dense 0/1 symmetric adjacency without self loops, from the graph's edges.
Eigen::MatrixXd dense_adjacency(const CsrGraphView& g) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(g.num_nodes, g.num_nodes);
  for (Index i = 0; i < g.num_nodes; ++i) {
    for (Index j : g.neighbors(i)) {
      if (i != j) a(i, j) = a(j, i) = 1.0;
    }
  }
  return a;
}

JointEmbeddingOptions tight_cg() {
  JointEmbeddingOptions o;
  o.cg_tolerance = 1e-13;
  return o;
}

TEST(LaplacianSmoothing, MatchesDenseSolveOfIPlusLambdaRandomWalkLaplacian) {
  Rng rng(5);
  const Index n = 60;
  const CsrGraph g = random_connected_graph(rng, n, 90);
  const EmbeddingMatrix b = random_matrix(rng, n, 3);
  const Eigen::MatrixXd a = dense_adjacency(g);
  const Eigen::VectorXd degree = a.rowwise().sum();
  // L_rw = I - D^{-1} A, as the header states; (I + lambda L_rw) is not symmetric, so the dense
  // oracle is Eigen's LDLT of the equivalent symmetric system D (I + lambda L_rw).
  for (double lambda : {0.3, 1.0, 10.0}) {
    Eigen::MatrixXd l_rw = Eigen::MatrixXd::Identity(n, n) - degree.cwiseInverse().asDiagonal() * a;
    const Eigen::MatrixXd system =
        degree.asDiagonal() * (Eigen::MatrixXd::Identity(n, n) + lambda * l_rw);
    const Eigen::MatrixXd rhs =
        degree.asDiagonal() *
        Eigen::Map<const Eigen::Matrix<double, -1, -1, Eigen::RowMajor>>(b.values.data(), n, 3);
    const Eigen::MatrixXd expected = system.ldlt().solve(rhs);
    const std::vector<double> ones(n, 1.0);
    const SmoothingResult got = laplacian_smoothing(g, b, ones, lambda, tight_cg());
    double worst = 0.0;
    for (Index i = 0; i < n; ++i) {
      for (Index k = 0; k < 3; ++k)
        worst = std::max(worst, std::abs(got.smoothed(i, k) - expected(i, k)));
    }
    EXPECT_LT(worst, kSolveTolerance) << "lambda " << lambda;
    EXPECT_GT(got.iterations, 0);
    EXPECT_LE(got.residual, 1e-13);
  }
}

TEST(LaplacianSmoothing, ZeroFidelityNodesMatchDenseSolveAndConstantsArePreserved) {
  Rng rng(8);
  const Index n = 40;
  const CsrGraph g = random_connected_graph(rng, n, 50);
  const Eigen::MatrixXd a = dense_adjacency(g);
  const Eigen::VectorXd degree = a.rowwise().sum();
  std::vector<double> fidelity(n, 1.0);
  for (Index i : {3, 17, 18, 30}) fidelity[i] = 0.0;
  EmbeddingMatrix b = random_matrix(rng, n, 2);
  const double lambda = 2.0;
  // (F D + lambda (D - A)) Z = F D B, the header's fidelity-weighted form, densely by LDLT.
  Eigen::VectorXd fd(n);
  for (Index i = 0; i < n; ++i) fd[i] = fidelity[i] * degree[i];
  const Eigen::MatrixXd system =
      Eigen::MatrixXd(fd.asDiagonal()) + lambda * (Eigen::MatrixXd(degree.asDiagonal()) - a);
  Eigen::MatrixXd rhs(n, 2);
  for (Index i = 0; i < n; ++i) {
    for (Index k = 0; k < 2; ++k) rhs(i, k) = fd[i] * b(i, k);
  }
  const Eigen::MatrixXd expected = system.ldlt().solve(rhs);
  const SmoothingResult got = laplacian_smoothing(g, b, fidelity, lambda, tight_cg());
  double worst = 0.0;
  for (Index i = 0; i < n; ++i) {
    for (Index k = 0; k < 2; ++k)
      worst = std::max(worst, std::abs(got.smoothed(i, k) - expected(i, k)));
  }
  EXPECT_LT(worst, kSolveTolerance);

  // A constant embedding on the massed points is left unchanged everywhere (no shrinkage), and
  // the zero-fidelity points take the same value whatever their own target said.
  for (Index i = 0; i < n; ++i) {
    b.values[2 * i] = 0.7;
    b.values[2 * i + 1] = fidelity[i] != 0.0 ? -1.5 : 100.0;
  }
  const SmoothingResult constant = laplacian_smoothing(g, b, fidelity, lambda, tight_cg());
  for (Index i = 0; i < n; ++i) {
    EXPECT_NEAR(constant.smoothed(i, 0), 0.7, kSolveTolerance) << i;
    EXPECT_NEAR(constant.smoothed(i, 1), -1.5, kSolveTolerance) << i;
  }
}

double distance(const EmbeddingMatrix& a, Index i, const EmbeddingMatrix& b, Index j) {
  double s = 0.0;
  for (Index k = 0; k < a.cols; ++k) s += (a(i, k) - b(j, k)) * (a(i, k) - b(j, k));
  return std::sqrt(s);
}

TEST(Pca, IsARotationOfTheCentredDataWithDescendingVariancesAndZeroPadding) {
  Rng rng(3);
  for (const auto& [n, d] : {std::pair<Index, int>{80, 3}, std::pair<Index, int>{6, 9}}) {
    std::vector<double> x = test::random_points(rng, n, d);
    for (Index i = 0; i < n; ++i) x[i * d] *= 5.0;  // one dominant direction
    std::vector<double> variances;
    const int dimension = 12;
    const EmbeddingMatrix z = pca_embedding(x, n, d, dimension, &variances);
    ASSERT_EQ(z.rows, n);
    ASSERT_EQ(z.cols, dimension);
    const int components = std::min<int>(d, n - 1);
    EXPECT_EQ(static_cast<int>(variances.size()), components) << n << " x " << d;
    EXPECT_TRUE(std::is_sorted(variances.rbegin(), variances.rend()));
    // Distances are preserved (all non-zero components are kept) ...
    for (Index i = 0; i < n; ++i) {
      for (Index j = 0; j < n; j += 7) {
        double s = 0.0;
        for (int c = 0; c < d; ++c) s += std::pow(x[i * d + c] - x[j * d + c], 2);
        EXPECT_NEAR(distance(z, i, z, j), std::sqrt(s), 1e-9);
      }
    }
    // ... columns are centred with the reported variances, and the padding is zero.
    for (int c = 0; c < dimension; ++c) {
      double mean = 0.0, square = 0.0;
      for (Index i = 0; i < n; ++i) {
        mean += z(i, c);
        square += z(i, c) * z(i, c);
      }
      EXPECT_NEAR(mean / n, 0.0, 1e-10);
      const double variance = square / (n - 1);
      EXPECT_NEAR(variance, c < components ? variances[c] : 0.0, 1e-9) << "column " << c;
    }
  }
}

// Three datasets a - b - c given as plans (b, a) and (c, b): c is two hops from the anchor a and
// both plans are used transposed relative to the walk.
struct Chain {
  std::vector<double> a_points;
  std::vector<double> t_ba, t_cb;
  CsrGraph g_b, g_c;
  JointEmbeddingProblem problem;
};
Chain make_chain(Rng& rng) {
  Chain ch;
  ch.a_points = test::random_points(rng, 20, 4);
  ch.t_ba = random_plan(rng, 25, 20, {});
  ch.t_cb = random_plan(rng, 30, 25, {});
  ch.g_b = random_connected_graph(rng, 25, 20);
  ch.g_c = random_connected_graph(rng, 30, 20);
  ch.problem.anchor = "a";
  ch.problem.datasets = {{"a", 20, ch.a_points, 4, std::nullopt},
                         {"b", 25, {}, 0, CsrGraphView(ch.g_b)},
                         {"c", 30, {}, 0, CsrGraphView(ch.g_c)}};
  ch.problem.plans = {{"b", "a", 25, 20, ch.t_ba, {}, {}, {}},
                      {"c", "b", 30, 25, ch.t_cb, {}, {}, {}}};
  return ch;
}

TEST(JointEmbedding, LambdaZeroIsTheBarycentricProjectionAlongThePlanChain) {
  Rng rng(21);
  const Chain ch = make_chain(rng);
  JointEmbeddingOptions o;
  o.dimension = 3;
  o.lambda = 0.0;
  const JointEmbeddingResult r = joint_embedding(ch.problem, o);
  const EmbeddingMatrix z_a = pca_embedding(ch.a_points, 20, 4, 3);
  EXPECT_EQ(max_abs_difference(r.dataset("a").embedding.values, z_a.values), 0.0);
  const std::vector<double> z_b = plain_projection(ch.t_ba, 25, 20, true, z_a);
  EXPECT_LT(max_abs_difference(r.dataset("b").embedding.values, z_b), kSumOrderTolerance);
  const std::vector<double> z_c =
      plain_projection(ch.t_cb, 30, 25, true, EmbeddingMatrix{25, 3, z_b});
  EXPECT_LT(max_abs_difference(r.dataset("c").embedding.values, z_c), 1e-11);
  EXPECT_EQ(r.dataset("b").parent, "a");
  EXPECT_EQ(r.dataset("c").parent, "b");
  EXPECT_EQ(r.dataset("c").cg_iterations, 0);
  EXPECT_TRUE(r.unused_plans.empty());
  EXPECT_EQ(r.anchor_components, 3);

  // lambda > 0: each non-anchor dataset is the smoothing of its projection (parent's final
  // embedding projected, then smoothed), and a plan closing a cycle is reported unused.
  o.lambda = 0.5;
  o.cg_tolerance = 1e-13;
  Chain cyc = make_chain(rng);
  std::vector<double> t_ac = random_plan(rng, 20, 30, {});
  cyc.problem.plans.push_back({"a", "c", 20, 30, t_ac, {}, {}, {}});
  const JointEmbeddingResult s = joint_embedding(cyc.problem, o);
  ASSERT_EQ(s.unused_plans, std::vector<int>{1});  // c is reached from a directly
  EXPECT_EQ(s.dataset("c").parent, "a");
  std::vector<double> mass;
  const EmbeddingMatrix proj_c =
      barycentric_projection(cyc.problem.plans[2], false, s.dataset("a").embedding, mass);
  const SmoothingResult smooth_c =
      laplacian_smoothing(cyc.g_c, proj_c, std::vector<double>(30, 1.0), 0.5, o);
  EXPECT_LT(max_abs_difference(s.dataset("c").embedding.values, smooth_c.smoothed.values), 1e-12);
}

TEST(JointEmbedding, ZeroMassPointsAreFilledFromNeighboursOrRejected) {
  // A path graph 0 - 1 - 2 - 3 - 4; point 2 gets no mass. With lambda > 0 it lands between its
  // neighbours; with lambda = 0 it has no barycentre and the call fails naming the dataset.
  std::vector<double> anchor_points{0.0, 1.0, 2.0, 3.0, 4.0};
  std::vector<double> t(25, 0.0);
  for (Index i = 0; i < 5; ++i) t[i * 5 + i] = i == 2 ? 0.0 : 1.0;
  EdgeList edges;
  for (Index i = 0; i < 4; ++i) {
    edges.src.push_back(i);
    edges.dst.push_back(i + 1);
  }
  const CsrGraph path = build_csr(5, edges.view(), {.symmetrize = true});
  JointEmbeddingProblem p;
  p.anchor = "x";
  p.datasets = {{"x", 5, anchor_points, 1, std::nullopt}, {"y", 5, {}, 0, CsrGraphView(path)}};
  p.plans = {{"y", "x", 5, 5, t, {}, {}, {}}};
  JointEmbeddingOptions o;
  o.dimension = 1;
  o.lambda = 1.0;
  const JointEmbeddingResult r = joint_embedding(p, o);
  const EmbeddingMatrix& y = r.dataset("y").embedding;
  EXPECT_EQ(r.dataset("y").zero_mass_points, 1);
  EXPECT_GT(y(2, 0), y(1, 0));
  EXPECT_LT(y(2, 0), y(3, 0));
  o.lambda = 0.0;
  try {
    joint_embedding(p, o);
    FAIL() << "lambda = 0 with a zero-mass row must fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kBadData);
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos) << e.what();
  }
}

void expect_error(const JointEmbeddingProblem& p,
                  const JointEmbeddingOptions& o,
                  ErrorCode code,
                  const std::string& needle) {
  try {
    joint_embedding(p, o);
    ADD_FAILURE() << "expected an error mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(JointEmbedding, RejectsUnlinkedDatasetsWrongShapesAndBadInputsNamingThem) {
  Rng rng(2);
  Chain ch = make_chain(rng);
  JointEmbeddingOptions o;
  o.dimension = 2;
  {  // c has no path to the anchor
    JointEmbeddingProblem p = ch.problem;
    p.plans.pop_back();
    expect_error(p, o, ErrorCode::kInvalidArgument, "dataset 'c' is not linked to the anchor");
  }
  {  // a plan whose shape does not match its datasets
    JointEmbeddingProblem p = ch.problem;
    p.plans[1].rows = 29;
    expect_error(p, o, ErrorCode::kInvalidArgument, "plan (c, b) is 29 x 25");
  }
  {  // a plan naming an unknown dataset
    JointEmbeddingProblem p = ch.problem;
    p.plans[1].col_dataset = "zz";
    expect_error(p, o, ErrorCode::kInvalidArgument, "no dataset is named 'zz'");
  }
  {  // negative plan entry
    std::vector<double> bad = ch.t_ba;
    bad[7] = -0.1;
    JointEmbeddingProblem p = ch.problem;
    p.plans[0].dense = bad;
    expect_error(p, o, ErrorCode::kBadData, "plan (b, a) has a negative entry");
  }
  {  // a non-anchor dataset without its graph while lambda > 0
    JointEmbeddingProblem p = ch.problem;
    p.datasets[2].graph.reset();
    expect_error(p, o, ErrorCode::kInvalidArgument, "dataset 'c' needs a graph");
  }
  {  // anchor without points
    JointEmbeddingProblem p = ch.problem;
    p.datasets[0].points = {};
    expect_error(p, o, ErrorCode::kInvalidArgument, "the anchor 'a' needs its points");
  }
  {  // unknown anchor, bad options
    JointEmbeddingProblem p = ch.problem;
    p.anchor = "q";
    expect_error(p, o, ErrorCode::kInvalidArgument, "the anchor 'q' is not one of");
    JointEmbeddingOptions bad = o;
    bad.lambda = -1.0;
    expect_error(ch.problem, bad, ErrorCode::kInvalidArgument, "lambda must be");
    bad = o;
    bad.dimension = 0;
    expect_error(ch.problem, bad, ErrorCode::kInvalidArgument, "dimension must be");
  }
}

// Spiral (400, 2-D) -> swiss roll (500, 3-D), aligned by gw::solve. After the joint embedding a
// source point and the target point of the same angle must land close together: their mean
// distance is compared with the mean distance of random (source, target) pairs (measured: 0.074
// with the spiral as anchor, 0.27 with the swiss roll). With the swiss roll as anchor its height
// (uniform in [0, 1]) is a principal axis the spiral has no counterpart of: a source point is
// projected to the mean height of its partners, so the partner distance keeps |h - 1/2| (0.25 on
// average) and the bar is looser.
constexpr double kMaxRatioSpiralAnchor = 0.12;
constexpr double kMaxRatioSwissRollAnchor = 0.35;

TEST(JointEmbedding, SpiralAndSwissRollPointsOfTheSameAngleLandTogether) {
  const Index n = 400, k = 500;
  const datagen::PointSet src = datagen::spiral(n, 1);
  const datagen::PointSet tgt = datagen::swiss_roll(k, 1);
  Problem problem;
  problem.source = Geometry::from_points(src.points, n, 2);
  problem.target = Geometry::from_points(tgt.points, k, 3);
  Options so;
  so.knn = 5;
  so.epsilon = 0.005;
  so.num_anchors = 80;
  so.max_iterations = 300;
  so.distance_mode = DistanceMode::kPrecomputed;
  so.plan_format = PlanFormat::kDense;  // the embedding below reads the dense plan
  const Result solved = solve(problem, so);
  ASSERT_TRUE(solved.ok()) << solved.message;
  std::vector<double> matched(n);
  for (Index i = 0; i < n; ++i) matched[i] = tgt.angles[solved.matching[i]];
  ASSERT_GT(spearman(src.angles, matched), 0.99) << "the alignment itself failed";

  KnnGraphOptions ko;
  ko.k = 5;
  const CsrGraph g_src = knn_graph(std::span<const double>(src.points), n, 2, ko);
  const CsrGraph g_tgt = knn_graph(std::span<const double>(tgt.points), k, 3, ko);
  // Each source point's partner: the target point of the nearest angle.
  std::vector<Index> partner(n);
  for (Index i = 0; i < n; ++i) {
    Index best = 0;
    for (Index j = 1; j < k; ++j) {
      if (std::abs(tgt.angles[j] - src.angles[i]) < std::abs(tgt.angles[best] - src.angles[i])) {
        best = j;
      }
    }
    partner[i] = best;
  }
  for (const std::string anchor : {"tgt", "src"}) {
    JointEmbeddingProblem p;
    p.anchor = anchor;
    p.datasets = {{"src", n, src.points, 2, CsrGraphView(g_src)},
                  {"tgt", k, tgt.points, 3, CsrGraphView(g_tgt)}};
    p.plans = {{"src", "tgt", n, k, solved.plan, {}, {}, {}}};
    JointEmbeddingOptions o;
    o.dimension = 10;
    const JointEmbeddingResult r = joint_embedding(p, o);
    const EmbeddingMatrix& zs = r.dataset("src").embedding;
    const EmbeddingMatrix& zt = r.dataset("tgt").embedding;
    ASSERT_EQ(zs.cols, 10);
    double partner_mean = 0.0, random_mean = 0.0;
    Rng rng(4);
    for (Index i = 0; i < n; ++i) {
      partner_mean += distance(zs, i, zt, partner[i]) / n;
      random_mean += distance(zs, i, zt, static_cast<Index>(rng.uniform_index(k))) / n;
    }
    const double ratio = partner_mean / random_mean;
    EXPECT_LT(ratio, anchor == "src" ? kMaxRatioSpiralAnchor : kMaxRatioSwissRollAnchor)
        << "anchor " << anchor << ": partner distance " << partner_mean << ", random pairs "
        << random_mean;
  }
}

}  // namespace
}  // namespace gw
