#include "embedding/joint_embedding.h"

#include <Eigen/Dense>
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <deque>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "graph/components.h"

namespace gw {
namespace {

using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Principal components whose variance is below this fraction of the largest are numerical noise
// (data lying in a subspace), and become zero columns like the components that do not exist.
constexpr double kNegligibleVarianceRatio = 1e-12;

std::string plan_name(const EmbeddingPlan& plan) {
  return "plan (" + plan.row_dataset + ", " + plan.col_dataset + ")";
}

void check_plan_entries(const EmbeddingPlan& plan) {
  const std::string name = plan_name(plan);
  if (!plan.dense.empty()) {
    GW_CHECK(plan.dense.size() == static_cast<std::size_t>(plan.rows) * plan.cols,
             name << " has " << plan.dense.size() << " dense values but is " << plan.rows << " x "
                  << plan.cols << "; give rows * cols values, row-major");
    check_all_finite(plan.dense, name);
    for (std::size_t e = 0; e < plan.dense.size(); ++e) {
      GW_CHECK_CODE(plan.dense[e] >= 0.0,
                    ErrorCode::kBadData,
                    name << " has a negative entry (" << plan.dense[e] << ") at flat position " << e
                         << "; transport plans are non-negative");
    }
    return;
  }
  GW_CHECK(plan.row_offsets.size() == static_cast<std::size_t>(plan.rows) + 1,
           name << " is neither dense nor CSR: give rows * cols dense values, or rows + 1 = "
                << plan.rows + 1 << " row offsets (got " << plan.row_offsets.size() << ")");
  GW_CHECK(plan.col_indices.size() == plan.values.size(),
           name << " has " << plan.col_indices.size() << " column indices but "
                << plan.values.size() << " values; give one value per stored entry");
  GW_CHECK(plan.row_offsets.front() == 0 &&
               plan.row_offsets.back() == static_cast<Offset>(plan.values.size()),
           name << ": CSR row offsets must start at 0 and end at the number of stored entries ("
                << plan.values.size() << ")");
  for (Index i = 0; i < plan.rows; ++i) {
    GW_CHECK(plan.row_offsets[i] <= plan.row_offsets[i + 1],
             name << ": CSR row offsets decrease at row " << i << "; they must be non-decreasing");
  }
  check_all_finite(plan.values, name);
  for (std::size_t e = 0; e < plan.values.size(); ++e) {
    GW_CHECK(plan.col_indices[e] >= 0 && plan.col_indices[e] < plan.cols,
             name << " has column index " << plan.col_indices[e] << " outside [0, " << plan.cols
                  << ") at stored entry " << e);
    GW_CHECK_CODE(plan.values[e] >= 0.0,
                  ErrorCode::kBadData,
                  name << " has a negative entry (" << plan.values[e] << ") at stored entry " << e
                       << "; transport plans are non-negative");
  }
}

// The symmetrized 0/1 adjacency of `graph` without self loops, as an Eigen matrix, and its degrees.
Eigen::SparseMatrix<double> symmetric_adjacency(const CsrGraphView& graph) {
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(static_cast<std::size_t>(graph.num_edges()) * 2);
  for (Index i = 0; i < graph.num_nodes; ++i) {
    for (const Index j : graph.neighbors(i)) {
      if (j == i) continue;
      triplets.emplace_back(i, j, 1.0);
      triplets.emplace_back(j, i, 1.0);
    }
  }
  Eigen::SparseMatrix<double> a(graph.num_nodes, graph.num_nodes);
  // Duplicates (an edge stored in both directions, or twice) collapse to 1: A is a 0/1 pattern.
  a.setFromTriplets(triplets.begin(), triplets.end(), [](double, double) { return 1.0; });
  return a;
}

}  // namespace

bool JointEmbeddingOptions::is_valid(std::string* why) const {
  std::ostringstream out;
  if (dimension < 1) {
    out << "dimension must be >= 1 (got " << dimension << ")";
  } else if (!(lambda >= 0.0) || !std::isfinite(lambda)) {
    out << "lambda must be finite and >= 0 (got " << lambda << ")";
  } else if (!(cg_tolerance > 0.0) || !(cg_tolerance < 1.0)) {
    out << "cg_tolerance must be in (0, 1) (got " << cg_tolerance << ")";
  } else if (cg_max_iterations < 1) {
    out << "cg_max_iterations must be >= 1 (got " << cg_max_iterations << ")";
  } else {
    return true;
  }
  if (why != nullptr) *why = out.str();
  return false;
}

const JointEmbeddingResult::Dataset& JointEmbeddingResult::dataset(std::string_view name) const {
  for (const Dataset& d : datasets) {
    if (d.name == name) return d;
  }
  GW_THROW(ErrorCode::kInvalidArgument,
           "the joint embedding has no dataset named '" << name << "'");
}

EmbeddingMatrix pca_embedding(
    std::span<const double> points, Index n, int d, int dimension, std::vector<double>* variances) {
  GW_CHECK(n >= 1 && d >= 1 && dimension >= 1,
           "pca_embedding needs n >= 1 points, d >= 1 columns and dimension >= 1 (got n = "
               << n << ", d = " << d << ", dimension = " << dimension << ")");
  GW_CHECK(points.size() == static_cast<std::size_t>(n) * d,
           "pca_embedding: " << points.size() << " values for " << n << " x " << d << " points");
  const Eigen::Map<const RowMajorMatrix> x(points.data(), n, d);
  const RowMajorMatrix centred = x.rowwise() - x.colwise().mean();

  // Coordinates on the principal axes either way: from the d x d covariance (Z = Xc V), or, when
  // there are fewer points than columns, from the n x n Gram matrix (Xc Xc^T = U S^2 U^T, so
  // Z = U S), the cheaper eigenproblem of the two.
  const bool by_gram = n < d;
  const Eigen::MatrixXd gram = by_gram ? Eigen::MatrixXd(centred * centred.transpose())
                                       : Eigen::MatrixXd(centred.transpose() * centred);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(gram);
  GW_CHECK_CODE(eigen.info() == Eigen::Success,
                ErrorCode::kInternal,
                "pca_embedding: the eigensolver failed on the " << gram.rows() << " x "
                                                                << gram.cols() << " matrix");
  const Eigen::VectorXd& values = eigen.eigenvalues();  // ascending
  const Index size = static_cast<Index>(values.size());
  const double largest = std::max(values[size - 1], 0.0);

  EmbeddingMatrix z{
      n, dimension, std::vector<double>(static_cast<std::size_t>(n) * dimension, 0.0)};
  if (variances != nullptr) variances->clear();
  const double denominator = n > 1 ? static_cast<double>(n - 1) : 1.0;
  for (int c = 0; c < std::min<Index>(dimension, size); ++c) {
    const Index k = size - 1 - c;
    if (!(values[k] > kNegligibleVarianceRatio * largest) || largest <= 0.0) break;
    Eigen::VectorXd column;
    if (by_gram) {
      column = eigen.eigenvectors().col(k) * std::sqrt(values[k]);
    } else {
      column = centred * eigen.eigenvectors().col(k);
    }
    // The sign of an eigenvector is arbitrary; fix it by the loading of largest magnitude (by
    // the coordinate of largest magnitude for the Gram route, whose vectors are coordinates).
    Eigen::VectorXd loading = by_gram ? Eigen::VectorXd(centred.transpose() * column)
                                      : Eigen::VectorXd(eigen.eigenvectors().col(k));
    Eigen::Index arg = 0;
    loading.cwiseAbs().maxCoeff(&arg);
    if (loading[arg] < 0.0) column = -column;
    for (Index i = 0; i < n; ++i) z.values[static_cast<std::size_t>(i) * dimension + c] = column[i];
    if (variances != nullptr) variances->push_back(values[k] / denominator);
  }
  return z;
}

EmbeddingMatrix barycentric_projection(const EmbeddingPlan& plan,
                                       bool child_is_rows,
                                       const EmbeddingMatrix& parent,
                                       std::vector<double>& mass) {
  const Index child_n = child_is_rows ? plan.rows : plan.cols;
  const Index parent_n = child_is_rows ? plan.cols : plan.rows;
  GW_CHECK(parent.rows == parent_n,
           plan_name(plan) << " has " << parent_n << " points on the parent side but the parent "
                           << "embedding has " << parent.rows << " rows");
  const Index dim = parent.cols;
  EmbeddingMatrix b{
      child_n, dim, std::vector<double>(static_cast<std::size_t>(child_n) * dim, 0.0)};
  mass.assign(child_n, 0.0);
  // Accumulate T_ij * Z_p[j] into row i (child = rows) or row j (child = columns), then divide by
  // the mass: one pass over the stored entries either way.
  auto accumulate = [&](Index r, Index c, double t) {
    if (t == 0.0) return;
    const Index child = child_is_rows ? r : c;
    const Index par = child_is_rows ? c : r;
    mass[child] += t;
    double* out = b.values.data() + static_cast<std::size_t>(child) * dim;
    const double* in = parent.values.data() + static_cast<std::size_t>(par) * dim;
    for (Index k = 0; k < dim; ++k) out[k] += t * in[k];
  };
  if (!plan.dense.empty()) {
    for (Index r = 0; r < plan.rows; ++r) {
      for (Index c = 0; c < plan.cols; ++c) {
        accumulate(r, c, plan.dense[static_cast<std::size_t>(r) * plan.cols + c]);
      }
    }
  } else {
    for (Index r = 0; r < plan.rows; ++r) {
      for (Offset e = plan.row_offsets[r]; e < plan.row_offsets[r + 1]; ++e) {
        accumulate(r, plan.col_indices[e], plan.values[e]);
      }
    }
  }
  for (Index i = 0; i < child_n; ++i) {
    if (mass[i] <= 0.0) continue;
    double* row = b.values.data() + static_cast<std::size_t>(i) * dim;
    for (Index k = 0; k < dim; ++k) row[k] /= mass[i];
  }
  return b;
}

SmoothingResult laplacian_smoothing(const CsrGraphView& graph,
                                    const EmbeddingMatrix& targets,
                                    std::span<const double> fidelity,
                                    double lambda,
                                    const JointEmbeddingOptions& options) {
  const Index n = graph.num_nodes;
  GW_CHECK(targets.rows == n && fidelity.size() == static_cast<std::size_t>(n),
           "laplacian_smoothing: the graph has " << n << " nodes but the targets have "
                                                 << targets.rows << " rows and the fidelity "
                                                 << fidelity.size() << " entries");
  GW_CHECK(lambda > 0.0, "laplacian_smoothing needs lambda > 0 (got " << lambda << ")");
  const Eigen::SparseMatrix<double> a = symmetric_adjacency(graph);
  const Eigen::VectorXd degree = a * Eigen::VectorXd::Ones(n);

  // (I + lambda L_rw) Z = B is not symmetric; multiplying by D gives the SPD system
  // (D + lambda (D - A)) Z = D B with the same solution, which CG can solve. With fidelity
  // weights the D of the data term becomes F D. An isolated node has D_ii = 0: its data term uses
  // weight 1 instead, so it keeps its target (or, with f_i = 0, its row is rejected upstream).
  Eigen::VectorXd data_weight(n);
  for (Index i = 0; i < n; ++i) {
    data_weight[i] = (fidelity[i] != 0.0 ? 1.0 : 0.0) * std::max(degree[i], 1.0);
  }
  Eigen::SparseMatrix<double> system = -lambda * a;
  Eigen::VectorXd diagonal = data_weight + lambda * degree;
  Eigen::SparseMatrix<double> diag_matrix(n, n);
  std::vector<Eigen::Triplet<double>> diag_triplets;
  diag_triplets.reserve(n);
  for (Index i = 0; i < n; ++i) diag_triplets.emplace_back(i, i, diagonal[i]);
  diag_matrix.setFromTriplets(diag_triplets.begin(), diag_triplets.end());
  system += diag_matrix;
  system.makeCompressed();

  Eigen::ConjugateGradient<Eigen::SparseMatrix<double>,
                           Eigen::Lower | Eigen::Upper,
                           Eigen::DiagonalPreconditioner<double>>
      cg;
  cg.setTolerance(options.cg_tolerance);
  cg.setMaxIterations(options.cg_max_iterations);
  cg.compute(system);
  GW_CHECK_CODE(cg.info() == Eigen::Success,
                ErrorCode::kInternal,
                "laplacian_smoothing: the preconditioner could not be set up");

  const Index dim = targets.cols;
  const Eigen::Map<const RowMajorMatrix> b(targets.values.data(), n, dim);
  SmoothingResult result;
  result.smoothed = EmbeddingMatrix{n, dim, std::vector<double>(targets.values.size())};
  Eigen::Map<RowMajorMatrix> z(result.smoothed.values.data(), n, dim);
  for (Index k = 0; k < dim; ++k) {
    const Eigen::VectorXd rhs = data_weight.cwiseProduct(b.col(k));
    // B itself is the natural starting guess: the smoothed embedding is close to it.
    const Eigen::VectorXd solution = cg.solveWithGuess(rhs, b.col(k));
    z.col(k) = solution;
    result.iterations = std::max(result.iterations, static_cast<int>(cg.iterations()));
    result.residual = std::max(result.residual, cg.error());
  }
  return result;
}

JointEmbeddingResult joint_embedding(const JointEmbeddingProblem& problem,
                                     const JointEmbeddingOptions& options) {
  std::string why;
  GW_CHECK(options.is_valid(&why), "joint embedding options: " << why);
  const auto& datasets = problem.datasets;
  const int count = static_cast<int>(datasets.size());
  GW_CHECK(count >= 1, "joint embedding: give at least one dataset");

  auto find = [&](const std::string& name) {
    for (int i = 0; i < count; ++i) {
      if (datasets[i].name == name) return i;
    }
    return -1;
  };
  for (int i = 0; i < count; ++i) {
    GW_CHECK(!datasets[i].name.empty(), "joint embedding: dataset " << i << " has no name");
    GW_CHECK(find(datasets[i].name) == i,
             "joint embedding: two datasets are named '" << datasets[i].name
                                                         << "'; names must be unique");
    GW_CHECK(datasets[i].num_points >= 1,
             "joint embedding: dataset '" << datasets[i].name << "' has no points");
  }
  const int anchor = find(problem.anchor);
  GW_CHECK(anchor >= 0,
           "joint embedding: the anchor '" << problem.anchor << "' is not one of the datasets");
  const EmbeddingDataset& anchor_set = datasets[anchor];
  GW_CHECK(anchor_set.dimension >= 1 &&
               anchor_set.points.size() ==
                   static_cast<std::size_t>(anchor_set.num_points) * anchor_set.dimension,
           "joint embedding: the anchor '" << anchor_set.name << "' needs its points ("
                                           << anchor_set.num_points << " x d, row-major; got "
                                           << anchor_set.points.size()
                                           << " values, d = " << anchor_set.dimension << ")");
  check_all_finite(anchor_set.points, "points of the anchor '" + anchor_set.name + "'");

  // Plans: both ends must be datasets, shapes must match them.
  const int plan_count = static_cast<int>(problem.plans.size());
  std::vector<std::pair<int, int>> ends(plan_count);
  for (int p = 0; p < plan_count; ++p) {
    const EmbeddingPlan& plan = problem.plans[p];
    const int r = find(plan.row_dataset);
    const int c = find(plan.col_dataset);
    GW_CHECK(r >= 0, plan_name(plan) << ": no dataset is named '" << plan.row_dataset << "'");
    GW_CHECK(c >= 0, plan_name(plan) << ": no dataset is named '" << plan.col_dataset << "'");
    GW_CHECK(r != c, plan_name(plan) << " links a dataset to itself; plans join two datasets");
    GW_CHECK(plan.rows == datasets[r].num_points && plan.cols == datasets[c].num_points,
             plan_name(plan) << " is " << plan.rows << " x " << plan.cols << " but '"
                             << plan.row_dataset << "' has " << datasets[r].num_points
                             << " points and '" << plan.col_dataset << "' has "
                             << datasets[c].num_points << "; rows are the first dataset's points");
    check_plan_entries(plan);
    ends[p] = {r, c};
  }

  // Breadth-first search from the anchor over the plans.
  std::vector<int> parent_plan(count, -1);
  std::vector<bool> reached(count, false);
  std::vector<bool> used(plan_count, false);
  std::vector<int> order{anchor};
  reached[anchor] = true;
  for (std::size_t head = 0; head < order.size(); ++head) {
    const int u = order[head];
    for (int p = 0; p < plan_count; ++p) {
      const auto [r, c] = ends[p];
      const int other = r == u ? c : (c == u ? r : -1);
      if (other < 0 || reached[other]) continue;
      reached[other] = true;
      parent_plan[other] = p;
      used[p] = true;
      order.push_back(other);
    }
  }
  for (int i = 0; i < count; ++i) {
    GW_CHECK(reached[i],
             "joint embedding: dataset '" << datasets[i].name << "' is not linked to the anchor '"
                                          << anchor_set.name
                                          << "' by any chain of transport plans; give a plan "
                                             "between it and the anchor (or a linked dataset)");
  }
  if (options.lambda > 0.0) {
    for (int i = 0; i < count; ++i) {
      if (i == anchor) continue;
      GW_CHECK(datasets[i].graph.has_value(),
               "joint embedding: dataset '"
                   << datasets[i].name
                   << "' needs a graph for the Laplacian term (lambda = " << options.lambda
                   << "); give its kNN graph, or "
                      "lambda = 0");
      GW_CHECK(datasets[i].graph->num_nodes == datasets[i].num_points,
               "joint embedding: the graph of '"
                   << datasets[i].name << "' has " << datasets[i].graph->num_nodes
                   << " nodes but the dataset has " << datasets[i].num_points << " points");
      validate(*datasets[i].graph, "graph of '" + datasets[i].name + "'");
    }
  }

  JointEmbeddingResult result;
  result.dimension = options.dimension;
  result.datasets.resize(count);
  for (int i = 0; i < count; ++i) result.datasets[i].name = datasets[i].name;
  for (int p = 0; p < plan_count; ++p) {
    if (!used[p]) result.unused_plans.push_back(p);
  }

  result.datasets[anchor].embedding = pca_embedding(anchor_set.points,
                                                    anchor_set.num_points,
                                                    anchor_set.dimension,
                                                    options.dimension,
                                                    &result.anchor_variances);
  result.anchor_components = static_cast<int>(result.anchor_variances.size());

  for (std::size_t step = 1; step < order.size(); ++step) {
    const int child = order[step];
    const EmbeddingPlan& plan = problem.plans[parent_plan[child]];
    const bool child_is_rows = ends[parent_plan[child]].first == child;
    const int parent =
        child_is_rows ? ends[parent_plan[child]].second : ends[parent_plan[child]].first;
    JointEmbeddingResult::Dataset& out = result.datasets[child];
    out.parent = datasets[parent].name;
    std::vector<double> mass;
    EmbeddingMatrix projected =
        barycentric_projection(plan, child_is_rows, result.datasets[parent].embedding, mass);
    std::vector<double> fidelity(mass.size());
    for (std::size_t i = 0; i < mass.size(); ++i) {
      fidelity[i] = mass[i] > 0.0 ? 1.0 : 0.0;
      if (mass[i] <= 0.0) ++out.zero_mass_points;
    }
    if (options.lambda == 0.0) {
      GW_CHECK_CODE(out.zero_mass_points == 0,
                    ErrorCode::kBadData,
                    "joint embedding: " << out.zero_mass_points << " points of '" << out.name
                                        << "' get no mass from " << plan_name(plan)
                                        << ", so they have no barycentre; use lambda > 0 to "
                                           "place them from their graph neighbours");
      out.embedding = std::move(projected);
      continue;
    }
    const CsrGraphView graph = *datasets[child].graph;
    if (out.zero_mass_points > 0) {
      // A zero-mass point is placed only through graph paths to points with mass.
      const Components components = connected_components(graph);
      std::vector<bool> has_mass(components.count, false);
      for (Index i = 0; i < graph.num_nodes; ++i) {
        if (fidelity[i] != 0.0) has_mass[components.labels[i]] = true;
      }
      Index stranded = 0;
      for (Index i = 0; i < graph.num_nodes; ++i)
        stranded += has_mass[components.labels[i]] ? 0 : 1;
      GW_CHECK_CODE(stranded == 0,
                    ErrorCode::kBadData,
                    "joint embedding: " << stranded << " points of '" << out.name
                                        << "' get no mass from " << plan_name(plan)
                                        << " and no graph path reaches a point with mass; give "
                                           "a plan with mass on them or a connected graph");
    }
    SmoothingResult smoothed =
        laplacian_smoothing(graph, projected, fidelity, options.lambda, options);
    out.embedding = std::move(smoothed.smoothed);
    out.cg_iterations = smoothed.iterations;
    out.cg_residual = smoothed.residual;
  }
  return result;
}

}  // namespace gw
