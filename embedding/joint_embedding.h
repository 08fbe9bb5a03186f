// Joint embedding of several datasets into one shared space, from the transport plans that align
// them: a Laplacian-regularized barycentric projection outward from one anchor dataset.
//
// Method (one call of joint_embedding):
//   1. Anchor. Its points (n_a x d) are centred and projected on their top principal axes:
//      Z_a = (X_a - mean) V, V the leading eigenvectors of the d x d covariance (or, when n_a < d,
//      the same axes obtained from the n_a x n_a Gram matrix). Units are the anchor's data units;
//      column c has the variance of the c-th principal component (no whitening). Each axis' sign
//      is fixed so that its largest-magnitude loading is positive (deterministic output). When
//      the anchor has fewer usable axes than `dimension` (d < dimension, or n_a - 1 < dimension),
//      the remaining columns are ZERO: every dataset then lives in the anchor's span, padded. A
//      component whose variance is below 1e-12 of the largest counts as missing (numerical noise
//      of data lying in a subspace).
//      The anchor is not smoothed: its embedding is exactly its PCA coordinates.
//   2. Order. Datasets are reached from the anchor by breadth-first search over the plans (a plan
//      links its two datasets in either direction; it is transposed as needed). Each dataset's
//      parent is the first dataset (in plan order) that reaches it; plans that are not tree edges
//      are listed in JointEmbeddingResult::unused_plans. A dataset no plan path reaches is an
//      error naming it.
//   3. Barycentric projection. For a child c with parent p and plan T (n_c x n_p after any
//      transpose), row i gets the T-weighted mean of the parent's embedding:
//        B_i = sum_j T_ij Z_p[j] / m_i,   m_i = sum_j T_ij.
//      A row with m_i = 0 (a point the plan sends no mass from) has no barycentre: B_i = 0 and the
//      row gets zero fidelity weight in step 4, so its embedding is filled in from its graph
//      neighbours (harmonic interpolation). With lambda = 0, or when a whole connected component
//      of the child's graph has zero mass, such points cannot be placed: kBadData naming the
//      dataset and the number of points.
//   4. Laplacian smoothing. Z_c solves (F + lambda L_rw) Z_c = F B, with F = diag(f_i), f_i = 1
//      for rows with mass and 0 without, and L_rw = I - D^{-1} A the random-walk Laplacian of the
//      child's graph: A is its symmetrized 0/1 adjacency (edge weights are ignored: kNN graphs
//      carry lengths, not affinities; self loops are dropped), D its degree diagonal. With all
//      f_i = 1 this is (I + lambda L_rw) Z = B: each point is pulled towards the mean of its
//      neighbours, a constant embedding is left unchanged (no shrinkage, so the datasets stay in
//      one frame), and the eigenvalues of L_rw lie in [0, 2], so lambda is scale-free. The system
//      is solved in its symmetric positive definite form (F D + lambda (D - A)) Z = F D B, one
//      column at a time, by Eigen's ConjugateGradient with the Jacobi preconditioner, warm-started
//      at B. Isolated nodes (degree 0) keep B_i. lambda = 0 skips the solve: Z_c = B.
//
// Complexity: PCA O(n_a d^2 + d^3) (or O(n_a^2 d + n_a^3) when n_a < d); each projection
// O(nnz(T) * dimension); each smoothing O(iterations * (n + E) * dimension).
// Thread-safety: joint_embedding and the building blocks below are reentrant and read their
// inputs only; concurrent calls on shared inputs are safe. They run on the calling thread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"
#include "graph/csr_graph.h"

namespace gw {

// An owning dense matrix, float64, row-major: rows x cols, element (i, j) at values[i*cols + j].
struct EmbeddingMatrix {
  Index rows = 0;
  Index cols = 0;
  std::vector<double> values;

  double operator()(Index i, Index j) const {
    return values[static_cast<std::size_t>(i) * cols + j];
  }
};

// A transport plan between two datasets (non-owning: the caller keeps the arrays alive).
// Rows are the points of `row_dataset`, columns the points of `col_dataset`. Entries must be
// finite and >= 0; their total need not be 1 (only ratios within a row matter). Dense when
// `dense` is non-empty (rows * cols values, row-major); else CSR (row_offsets: rows + 1 entries,
// col_indices / values: one per stored entry; columns in [0, cols), any order).
struct EmbeddingPlan {
  std::string row_dataset;
  std::string col_dataset;
  Index rows = 0;
  Index cols = 0;
  std::span<const double> dense;
  std::span<const Offset> row_offsets;
  std::span<const Index> col_indices;
  std::span<const double> values;
};

// One dataset to embed (non-owning views).
struct EmbeddingDataset {
  std::string name;  // unique, non-empty
  Index num_points = 0;
  // The points, num_points x dimension row-major. Required for the anchor (its PCA); unused and
  // may be left empty for every other dataset.
  std::span<const double> points;
  int dimension = 0;
  // The dataset's neighbourhood graph (num_points nodes), e.g. its kNN graph. Required for every
  // non-anchor dataset when lambda > 0; unused for the anchor.
  std::optional<CsrGraphView> graph;
};

struct JointEmbeddingProblem {
  std::vector<EmbeddingDataset> datasets;
  std::string anchor;  // the name of one of `datasets`
  std::vector<EmbeddingPlan> plans;
};

struct JointEmbeddingOptions {
  // Columns of every embedding (the reference package's out_dim). >= 1.
  int dimension = 30;
  // Weight of the Laplacian term (step 4). 0 = plain barycentric projection; 1 (the default, as
  // the reference package's lambda_reg) smooths over about one graph neighbourhood; larger values
  // smooth over wider neighbourhoods (the smoothing length grows like sqrt(lambda) hops). >= 0.
  double lambda = 1.0;
  // Conjugate-gradient stopping rule per column: relative residual |r| / |rhs| <= tolerance, or
  // max_iterations iterations. The system's condition number is at most about 1 + 2 lambda when
  // every point has mass, so a few dozen iterations are typical.
  double cg_tolerance = 1e-10;
  int cg_max_iterations = 2000;

  // True when every field is in range; otherwise false and *why names the field and the range.
  bool is_valid(std::string* why = nullptr) const;
};

struct JointEmbeddingResult {
  // One entry per dataset, in the order of JointEmbeddingProblem::datasets.
  struct Dataset {
    std::string name;
    std::string parent;          // the dataset it was projected from ("" for the anchor)
    EmbeddingMatrix embedding;   // num_points x dimension
    Index zero_mass_points = 0;  // rows of the plan from the parent with no mass (step 3)
    int cg_iterations = 0;       // max over columns (0: no solve)
    double cg_residual = 0.0;    // max relative residual over columns (0: no solve)
  };
  std::vector<Dataset> datasets;
  int dimension = 0;
  // Principal components of the anchor that carry data (<= dimension; the rest are zero columns)
  // and the variance of each (descending, in squared data units).
  int anchor_components = 0;
  std::vector<double> anchor_variances;
  // Indices into JointEmbeddingProblem::plans of the plans that were not used (not tree edges).
  std::vector<int> unused_plans;

  // The dataset named `name` (kInvalidArgument if none).
  const Dataset& dataset(std::string_view name) const;
};

// The joint embedding described at the top of this file. Errors (gw::Error): invalid options,
// duplicate / empty / unknown dataset names, a plan whose shape does not match its datasets, a
// plan between a dataset and itself, a missing anchor points or graph, a dataset unreachable from
// the anchor (kInvalidArgument); negative or non-finite plan entries or points, points that
// cannot be placed (step 3) (kBadData). Every message names the dataset or plan.
JointEmbeddingResult joint_embedding(const JointEmbeddingProblem& problem,
                                     const JointEmbeddingOptions& options);

// ---- Building blocks (public so that each is tested on its own) ----

// Step 1: PCA coordinates of `points` (n x d, row-major) in `dimension` columns (zero-padded past
// the available components). `variances` (optional) receives the variance of each nonzero
// component. Requires n >= 1, d >= 1.
EmbeddingMatrix pca_embedding(std::span<const double> points,
                              Index n,
                              int d,
                              int dimension,
                              std::vector<double>* variances = nullptr);

// Step 3: the barycentric projection of `parent` (rows = the plan's parent-side points) through
// `plan`. child_is_rows: the child's points are the plan's rows (else its columns, i.e. T is used
// transposed). `mass` receives each child point's plan mass. Rows with zero mass are zero.
EmbeddingMatrix barycentric_projection(const EmbeddingPlan& plan,
                                       bool child_is_rows,
                                       const EmbeddingMatrix& parent,
                                       std::vector<double>& mass);

// Step 4: solves (F D + lambda (D - A)) Z = F D B on `graph` (num_nodes = targets.rows) with
// fidelity weights f_i in {0, 1} (`fidelity`, one per node; nonzero = 1). lambda > 0.
struct SmoothingResult {
  EmbeddingMatrix smoothed;
  int iterations = 0;     // max over columns
  double residual = 0.0;  // max relative residual over columns
};
SmoothingResult laplacian_smoothing(const CsrGraphView& graph,
                                    const EmbeddingMatrix& targets,
                                    std::span<const double> fidelity,
                                    double lambda,
                                    const JointEmbeddingOptions& options);

}  // namespace gw
