#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "spatial/expression.h"
#include "spatial/registration.h"
#include "spatial/transfer.h"

namespace gw::spatial {
namespace {

constexpr double kPi = 3.14159265358979323846;

// A rotation about a random axis (3-D) or by `angle` (2-D).
std::vector<double> rotation(int d, double angle, Rng& rng) {
  if (d == 2) return {std::cos(angle), -std::sin(angle), std::sin(angle), std::cos(angle)};
  Eigen::Vector3d axis(rng.normal(), rng.normal(), rng.normal());
  const Eigen::Matrix3d r = Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
  std::vector<double> out(9);
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) out[a * 3 + b] = r(a, b);
  return out;
}

struct Pair {
  std::vector<double> x;  // source, n x d
  std::vector<double> y;  // target, n x d: y[perm[i]] = R0^T (x[i] - t0)
  std::vector<Index> perm;
  RigidTransform truth;   // carries y onto x
};

Pair make_pair_of_sections(Index n, int d, double angle, std::uint64_t seed) {
  Rng rng(seed);
  Pair p;
  p.x.resize(static_cast<std::size_t>(n) * d);
  for (double& v : p.x) v = 10.0 * rng.uniform();
  p.truth.dimension = d;
  p.truth.rotation = rotation(d, angle, rng);
  for (int a = 0; a < d; ++a) p.truth.translation.push_back(5.0 * rng.normal());
  p.perm.resize(n);
  std::iota(p.perm.begin(), p.perm.end(), 0);
  rng.shuffle(std::span<Index>(p.perm));
  p.y.resize(p.x.size());
  for (Index i = 0; i < n; ++i) {
    for (int b = 0; b < d; ++b) {
      double v = 0.0;  // (R0^T (x - t0))_b = sum_a R0[a][b] (x_a - t_a)
      for (int a = 0; a < d; ++a) v += p.truth.rotation[a * d + b] * (p.x[i * d + a] - p.truth.translation[a]);
      p.y[static_cast<std::size_t>(p.perm[i]) * d + b] = v;
    }
  }
  return p;
}

std::vector<double> permutation_plan(const Pair& p, Index n) {
  std::vector<double> plan(static_cast<std::size_t>(n) * n, 0.0);
  for (Index i = 0; i < n; ++i) plan[static_cast<std::size_t>(i) * n + p.perm[i]] = 1.0 / n;
  return plan;
}

// P_ij proportional to exp(-|x_i - x_j'|^2 / (2 sigma^2)), j' the source point that target j
// came from: each row spreads its mass over the true match's neighbourhood.
std::vector<double> blurred_plan(const Pair& p, Index n, int d, double sigma) {
  std::vector<Index> inverse(n);
  for (Index i = 0; i < n; ++i) inverse[p.perm[i]] = i;
  std::vector<double> plan(static_cast<std::size_t>(n) * n);
  double total = 0.0;
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < n; ++j) {
      double sq = 0.0;
      for (int a = 0; a < d; ++a) {
        const double diff = p.x[i * d + a] - p.x[static_cast<std::size_t>(inverse[j]) * d + a];
        sq += diff * diff;
      }
      plan[static_cast<std::size_t>(i) * n + j] = std::exp(-sq / (2 * sigma * sigma));
      total += plan[static_cast<std::size_t>(i) * n + j];
    }
  }
  for (double& v : plan) v /= total;
  return plan;
}

void expect_transform_near(const RigidTransform& got, const RigidTransform& want, double rot_tol,
                           double shift_tol) {
  ASSERT_EQ(got.dimension, want.dimension);
  for (std::size_t e = 0; e < want.rotation.size(); ++e) EXPECT_NEAR(got.rotation[e], want.rotation[e], rot_tol) << e;
  for (std::size_t e = 0; e < want.translation.size(); ++e)
    EXPECT_NEAR(got.translation[e], want.translation[e], shift_tol) << e;
}

// An exact permutation plan determines the motion up to rounding: 1e-9 on coordinates of ~10.
constexpr double kExactTolerance = 1e-9;

TEST(Registration, RecoversRotationAndTranslationFromPermutationPlan2d3d) {
  for (int d : {2, 3}) {
    const Index n = 200;
    const Pair p = make_pair_of_sections(n, d, 2.1, 7 + d);
    const std::vector<double> plan = permutation_plan(p, n);
    const Registration r = register_sections(PlanView::dense(plan, n, n), p.x, p.y, d);
    expect_transform_near(r.transform, p.truth, kExactTolerance, kExactTolerance);
    EXPECT_LT(r.rms_residual, kExactTolerance);
    EXPECT_NEAR(r.mass, 1.0, 1e-12);
    EXPECT_FALSE(r.transform.reflection);
  }
}

TEST(Registration, CsrPlanGivesTheDensePlansFit) {
  const Index n = 150;
  const int d = 2;
  const Pair p = make_pair_of_sections(n, d, -0.7, 3);
  const std::vector<double> dense = blurred_plan(p, n, d, 0.8);
  // Keep the 12 largest entries of each row in both forms.
  CsrMatrix<double> csr;
  csr.rows = csr.cols = n;
  csr.row_offsets.push_back(0);
  std::vector<double> pruned(dense.size(), 0.0);
  for (Index i = 0; i < n; ++i) {
    std::vector<Index> cols(n);
    std::iota(cols.begin(), cols.end(), 0);
    std::partial_sort(cols.begin(), cols.begin() + 12, cols.end(), [&](Index a, Index b) {
      return dense[i * n + a] > dense[i * n + b];
    });
    std::sort(cols.begin(), cols.begin() + 12);
    for (int e = 0; e < 12; ++e) {
      csr.col_indices.push_back(cols[e]);
      csr.values.push_back(dense[i * n + cols[e]]);
      pruned[i * n + cols[e]] = dense[i * n + cols[e]];
    }
    csr.row_offsets.push_back(static_cast<Offset>(csr.col_indices.size()));
  }
  const Registration a = register_sections(PlanView::dense(pruned, n, n), p.x, p.y, d);
  const Registration b = register_sections(PlanView::csr(csr), p.x, p.y, d);
  expect_transform_near(b.transform, a.transform, 1e-12, 1e-11);
  EXPECT_NEAR(a.residual, b.residual, 1e-12);
}

TEST(Registration, RecoversMotionFromBlurredPlanWithinStatedTolerance) {
  // Points fill a 10 x 10 (x 10) box; each row's mass is spread with sigma = 0.5 (5% of the side).
  // The isotropic blur shrinks the cross-covariance but barely turns it: rotation entries within
  // 0.02 and translation within 0.1 (1% of the side).
  for (int d : {2, 3}) {
    const Index n = 300;
    const Pair p = make_pair_of_sections(n, d, 0.9, 11 + d);
    const std::vector<double> plan = blurred_plan(p, n, d, 0.5);
    const Registration r = register_sections(PlanView::dense(plan, n, n), p.x, p.y, d);
    expect_transform_near(r.transform, p.truth, 0.02, 0.1);
    EXPECT_GT(r.rms_residual, 0.1);  // the blur leaves a residual of about sigma sqrt(d)
  }
}

TEST(Registration, ReflectionOnlyWhenAllowed) {
  const Index n = 100;
  const int d = 2;
  Pair p = make_pair_of_sections(n, d, 0.4, 5);
  for (Index j = 0; j < n; ++j) p.y[j * d] = -p.y[j * d];  // mirror the target
  const std::vector<double> plan = permutation_plan(p, n);
  const Registration proper = register_sections(PlanView::dense(plan, n, n), p.x, p.y, d);
  EXPECT_FALSE(proper.transform.reflection);
  const double det = proper.transform.rotation[0] * proper.transform.rotation[3] -
                     proper.transform.rotation[1] * proper.transform.rotation[2];
  EXPECT_NEAR(det, 1.0, 1e-12);
  EXPECT_GT(proper.rms_residual, 1.0);
  RegistrationOptions options;
  options.allow_reflection = true;
  const Registration mirrored = register_sections(PlanView::dense(plan, n, n), p.x, p.y, d, options);
  EXPECT_TRUE(mirrored.transform.reflection);
  EXPECT_LT(mirrored.rms_residual, kExactTolerance);
}

TEST(Registration, RejectsWrongShapesAndEmptyPlans) {
  std::vector<double> plan(4, 0.0);
  std::vector<double> pts(4, 1.0);
  EXPECT_THROW(register_sections(PlanView::dense(plan, 2, 2), pts, pts, 2), Error);  // no mass
  plan[0] = 1.0;
  EXPECT_THROW(register_sections(PlanView::dense(plan, 2, 2), pts, pts, 4), Error);
  EXPECT_THROW(register_sections(PlanView::dense(plan, 2, 2), std::vector<double>(6), pts, 2), Error);
}

TEST(RigidTransform, ComposeMatchesApplyingInTurn) {
  Rng rng(1);
  RigidTransform a{3, rotation(3, 0.3, rng), {1, 2, 3}, false};
  RigidTransform b{3, rotation(3, -1.1, rng), {-4, 0.5, 2}, false};
  std::vector<double> pts(30);
  for (double& v : pts) v = rng.normal();
  const std::vector<double> twice = a.apply(b.apply(pts));
  const std::vector<double> once = a.compose(b).apply(pts);
  for (std::size_t e = 0; e < pts.size(); ++e) EXPECT_NEAR(once[e], twice[e], 1e-12);
}

TEST(Transfer, PermutationPlanPushAndPullAreExact) {
  const Index n = 50;
  Rng rng(2);
  std::vector<Index> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  rng.shuffle(std::span<Index>(perm));
  std::vector<double> plan(static_cast<std::size_t>(n) * n, 0.0);
  for (Index i = 0; i < n; ++i) plan[static_cast<std::size_t>(i) * n + perm[i]] = 1.0 / n;
  std::vector<std::int32_t> codes(n);
  for (auto& c : codes) c = static_cast<std::int32_t>(rng.uniform_index(4));
  const CategoricalTransfer push = transfer_categorical(PlanView::dense(plan, n, n), codes, 4);
  TransferOptions pull_options;
  pull_options.direction = Direction::kPull;
  const CategoricalTransfer pull = transfer_categorical(PlanView::dense(plan, n, n), codes, 4, pull_options);
  for (Index i = 0; i < n; ++i) {
    EXPECT_EQ(push.label[perm[i]], codes[i]);
    EXPECT_EQ(push.confidence[perm[i]], 1.0);
    EXPECT_EQ(pull.label[i], codes[perm[i]]);
  }
  EXPECT_EQ(push.unreached, 0);
  std::vector<double> values(static_cast<std::size_t>(n) * 2);
  for (double& v : values) v = rng.normal();
  const ContinuousTransfer moved = transfer_continuous(PlanView::dense(plan, n, n), values, 2);
  for (Index i = 0; i < n; ++i) {
    EXPECT_DOUBLE_EQ(moved.values[perm[i] * 2], values[i * 2]);
    EXPECT_DOUBLE_EQ(moved.values[perm[i] * 2 + 1], values[i * 2 + 1]);
  }
}

TEST(Transfer, BlurredPlanProbabilitiesSumToOneAndArgmaxIsTheMajority) {
  // Target j receives equal mass from 5 sources: 3 of class major[j], 2 drawn from the others.
  const Index n = 100, k = 40;
  const int classes = 5;
  Rng rng(3);
  std::vector<std::int32_t> codes(n);
  for (auto& c : codes) c = static_cast<std::int32_t>(rng.uniform_index(classes));
  std::vector<std::vector<Index>> by_class(classes);
  for (Index i = 0; i < n; ++i) by_class[codes[i]].push_back(i);
  std::vector<double> plan(static_cast<std::size_t>(n) * k, 0.0);
  std::vector<int> major(k);
  for (Index j = 0; j < k; ++j) {
    major[j] = static_cast<int>(rng.uniform_index(classes));
    for (int e = 0; e < 5; ++e) {
      int c = major[j];
      if (e >= 3) {
        do { c = static_cast<int>(rng.uniform_index(classes)); } while (c == major[j]);
      }
      const auto& pool = by_class[c];
      const Index i = pool[rng.uniform_index(pool.size())];
      plan[static_cast<std::size_t>(i) * k + j] += 0.2 / k;
    }
  }
  const CategoricalTransfer t = transfer_categorical(PlanView::dense(plan, n, k), codes, classes);
  for (Index j = 0; j < k; ++j) {
    double sum = 0.0;
    for (int c = 0; c < classes; ++c) sum += t.probabilities[j * classes + c];
    EXPECT_NEAR(sum, 1.0, 1e-12) << j;
    EXPECT_EQ(t.label[j], major[j]) << j;
    EXPECT_GE(t.confidence[j], 0.6 - 1e-12);
  }
}

TEST(Transfer, ContinuousMatchesPlainWeightedAverageOnRandomCsrPlan) {
  const Index n = 60, k = 45, cols = 3;
  Rng rng(4);
  CsrMatrix<double> plan;
  plan.rows = n;
  plan.cols = k;
  plan.row_offsets.push_back(0);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < k; ++j) {
      if (rng.uniform() < 0.2) {
        plan.col_indices.push_back(j);
        plan.values.push_back(rng.uniform());
      }
    }
    plan.row_offsets.push_back(static_cast<Offset>(plan.col_indices.size()));
  }
  std::vector<double> values(static_cast<std::size_t>(k) * cols);
  for (double& v : values) v = rng.normal();
  TransferOptions options;
  options.direction = Direction::kPull;
  const ContinuousTransfer t = transfer_continuous(PlanView::csr(plan), values, cols, options);
  for (Index i = 0; i < n; ++i) {
    double mass = 0.0;
    std::vector<double> acc(cols, 0.0);
    for (Offset p = plan.row_offsets[i]; p < plan.row_offsets[i + 1]; ++p) {
      mass += plan.values[p];
      for (Index c = 0; c < cols; ++c) acc[c] += plan.values[p] * values[plan.col_indices[p] * cols + c];
    }
    if (mass == 0.0) {
      EXPECT_FALSE(t.has_mass[i]);
      continue;
    }
    for (Index c = 0; c < cols; ++c) EXPECT_NEAR(t.values[i * cols + c], acc[c] / mass, 1e-12);
  }
}

TEST(Transfer, PartialPlanFlagsNodesOutsideTheOverlap) {
  // Only the first 30 of 50 targets receive mass (a partial plan).
  const Index n = 50, k = 50;
  std::vector<double> plan(static_cast<std::size_t>(n) * k, 0.0);
  for (Index i = 0; i < 30; ++i) plan[static_cast<std::size_t>(i) * k + i] = 1.0 / 30;
  plan[45 * k + 45] = 1e-12;  // rounding-level mass: below the threshold
  std::vector<std::int32_t> codes(n, 1);
  const CategoricalTransfer t = transfer_categorical(PlanView::dense(plan, n, k), codes, 2);
  EXPECT_EQ(t.unreached, 20);
  for (Index j = 0; j < k; ++j) {
    EXPECT_EQ(t.has_mass[j] != 0, j < 30) << j;
    EXPECT_EQ(t.label[j], j < 30 ? 1 : -1) << j;
    EXPECT_EQ(t.probabilities[j * 2] + t.probabilities[j * 2 + 1], j < 30 ? 1.0 : 0.0);
  }
  std::vector<double> values(n, 2.5);
  const ContinuousTransfer c = transfer_continuous(PlanView::dense(plan, n, k), values, 1);
  EXPECT_DOUBLE_EQ(c.values[0], 2.5);
  EXPECT_TRUE(std::isnan(c.values[40]));
}

TEST(Transfer, MissingLabelsAreLeftOutAndRejectsBadCodes) {
  std::vector<double> plan = {0.25, 0.0, 0.25, 0.0, 0.0, 0.5};  // 3 x 2
  std::vector<std::int32_t> codes = {0, -1, -1};
  const CategoricalTransfer t = transfer_categorical(PlanView::dense(plan, 3, 2), codes, 2);
  EXPECT_EQ(t.label[0], 0);
  EXPECT_DOUBLE_EQ(t.probabilities[0], 1.0);
  EXPECT_EQ(t.label[1], -1);  // fed by an unlabelled node only
  EXPECT_EQ(t.unreached, 1);
  codes[0] = 2;
  EXPECT_THROW(transfer_categorical(PlanView::dense(plan, 3, 2), codes, 2), Error);
  EXPECT_THROW(direction_from_string("sideways"), Error);
}

TEST(Expression, SharedGenesKeepFirstOrderAndColumns) {
  const SharedGenes s = shared_genes({{"a", "b", "c", "d"}, {"d", "x", "b", "a"}, {"b", "a", "d"}});
  EXPECT_EQ(s.names, (std::vector<std::string>{"a", "b", "d"}));
  EXPECT_EQ(s.columns[1], (std::vector<Index>{3, 2, 0}));
  EXPECT_EQ(s.columns[2], (std::vector<Index>{1, 0, 2}));
  EXPECT_TRUE(shared_genes({{"a"}, {"b"}}).names.empty());
}

// Counts with a low-rank structure (3 programs) plus Poisson-like noise.
std::vector<ExpressionBlock> synthetic_counts(Index genes, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<double>> programs(3, std::vector<double>(genes));
  for (auto& p : programs)
    for (double& v : p) v = 5.0 * rng.uniform() * (rng.uniform() < 0.3 ? 1.0 : 0.1);
  std::vector<ExpressionBlock> blocks;
  for (Index rows : {120, 90}) {
    ExpressionBlock b{rows, genes, std::vector<float>(static_cast<std::size_t>(rows) * genes)};
    for (Index i = 0; i < rows; ++i) {
      const auto& p = programs[rng.uniform_index(3)];
      for (Index g = 0; g < genes; ++g) {
        b.values[i * genes + g] = static_cast<float>(std::floor(p[g] * (0.5 + rng.uniform())));
      }
    }
    blocks.push_back(std::move(b));
  }
  return blocks;
}

// The plain oracle: normalize + log1p in double, then the SVD of the whole centred matrix.
Eigen::MatrixXd reference_scores(std::vector<ExpressionBlock> blocks, int d, const ExpressionOptions& o) {
  Index total = 0;
  for (const auto& b : blocks) total += b.rows;
  const Index g = blocks[0].genes;
  Eigen::MatrixXd x(total, g);
  Index r = 0;
  for (const auto& b : blocks) {
    for (Index i = 0; i < b.rows; ++i, ++r) {
      double sum = 0.0;
      for (Index c = 0; c < g; ++c) sum += b.values[i * g + c];
      for (Index c = 0; c < g; ++c) {
        const double scaled = sum > 0 ? b.values[i * g + c] * o.target_sum / sum : 0.0;
        x(r, c) = static_cast<float>(std::log1p(scaled));  // stored as float, as the kernel does
      }
    }
  }
  x = x.rowwise() - x.colwise().mean();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(x, Eigen::ComputeThinU | Eigen::ComputeThinV);
  return x * svd.matrixV().leftCols(d);
}

// Scores agree column by column up to sign. 1e-3 relative: the kernel stores log1p in float32
// (7 digits) and its eigen-solver and the oracle's SVD round differently.
void expect_scores_match(const ExpressionFeatures& f, const Eigen::MatrixXd& ref, double tol) {
  Index r = 0;
  Eigen::MatrixXd got(ref.rows(), ref.cols());
  for (const auto& m : f.features)
    for (Index i = 0; i < m.rows; ++i, ++r)
      for (Index c = 0; c < m.cols; ++c) got(r, c) = m(i, c);
  for (Index c = 0; c < ref.cols(); ++c) {
    const double sign = got.col(c).dot(ref.col(c)) >= 0 ? 1.0 : -1.0;
    EXPECT_LT((sign * got.col(c) - ref.col(c)).norm(), tol * ref.col(c).norm()) << "component " << c;
  }
}

TEST(Expression, ExactPcaMatchesSvdOfTheCentredMatrix) {
  ExpressionOptions o;
  o.dimensions = 3;
  auto blocks = synthetic_counts(40, 5);
  const Eigen::MatrixXd ref = reference_scores(blocks, 3, o);
  const ExpressionFeatures f = expression_features(blocks, o);
  EXPECT_FALSE(f.randomized);
  ASSERT_EQ(f.features.size(), 2u);
  EXPECT_EQ(f.features[0].rows, 120);
  EXPECT_EQ(f.features[1].cols, 3);
  expect_scores_match(f, ref, 1e-3);
  EXPECT_GT(f.explained_variance_ratio[0], f.explained_variance_ratio[1]);
}

TEST(Expression, RandomizedPcaMatchesExactOnLowRankCounts) {
  ExpressionOptions o;
  o.dimensions = 2;
  o.exact_max_genes = 10;  // force the randomized finder on 60 genes
  auto blocks = synthetic_counts(60, 6);
  const Eigen::MatrixXd ref = reference_scores(blocks, 2, o);
  const ExpressionFeatures f = expression_features(blocks, o);
  EXPECT_TRUE(f.randomized);
  // The two leading components of three well-separated programs: the power iterations converge
  // to 1e-3 of the exact scores.
  expect_scores_match(f, ref, 1e-3);
}

TEST(Expression, CosineRowsHaveUnitNormAndBadCountsAreRejected) {
  ExpressionOptions o;
  o.dimensions = 4;
  o.cost = ExpressionCost::kCosine;
  auto blocks = synthetic_counts(30, 7);
  const ExpressionFeatures f = expression_features(blocks, o);
  for (const auto& m : f.features) {
    for (Index i = 0; i < m.rows; ++i) {
      double sq = 0.0;
      for (Index c = 0; c < m.cols; ++c) sq += m(i, c) * m(i, c);
      EXPECT_NEAR(sq, 1.0, 1e-12);
    }
  }
  auto bad = synthetic_counts(30, 8);
  bad[1].values[5] = -1.0f;
  EXPECT_THROW(expression_features(bad, o), Error);
  EXPECT_THROW(expression_cost_from_string("kl"), Error);
}

}  // namespace
}  // namespace gw::spatial
