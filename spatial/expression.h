// Expression features for the cross-section cost of fused GW: the genes two or more sections
// share, each cell's counts normalized and log-transformed, and a joint PCA of all sections
// (PASTE's cost is a dissimilarity of the shared genes; a PCA of log counts is what scanpy and
// moscot feed their costs). The features are per cell, d values each: gw::Problem's
// source_features / target_features, whose cost |f_i - g_j|^2 / max the solver evaluates only where
// it needs it (on the sparse path only on its support), so no n x k matrix is ever built here.
//
// Steps, per cell (a row of counts restricted to the shared genes):
//   1. normalize_total: scale the row to sum to target_sum (rows summing to 0 stay 0);
//   2. log1p;
//   3. PCA of all sections' rows together, centred on their pooled mean: the top `dimensions`
//      eigenvectors of the g x g covariance. Exact (Eigen's SelfAdjointEigenSolver on the
//      covariance, accumulated in double over row blocks: O(N g^2 + g^3)) when g <=
//      exact_max_genes; otherwise the randomized range finder of Halko, Martinsson & Tropp
//      (2011, Algorithm 4.4: a Gaussian sketch of dimensions + oversampling columns and
//      power_iterations re-orthonormalized power steps, then the SVD of the small projection),
//      O(N g (dimensions + oversampling) (2 power_iterations + 2)).
//   4. kCosine only: each row of scores scaled to unit length, so |f - g|^2 = 2 - 2 cos(f, g)
//      (a cosine dissimilarity of the cells' PCA profiles; zero rows stay zero).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"
#include "solver/problem.h"

namespace gw::spatial {

// Genes present in every list, in the order of the first list (names compared exactly).
// columns[s][g] is the column of shared gene g in section s.
struct SharedGenes {
  std::vector<std::string> names;
  std::vector<std::vector<Index>> columns;
};
// No error when nothing is shared (names is empty): the caller names its files.
SharedGenes shared_genes(const std::vector<std::vector<std::string>>& var_names);

enum class ExpressionCost {
  kPca,     // Euclidean on the PCA scores
  kCosine,  // cosine on the PCA scores (unit rows)
};
const char* to_string(ExpressionCost cost);
// "pca" / "cosine"; anything else is kInvalidArgument listing both.
ExpressionCost expression_cost_from_string(std::string_view text);

struct ExpressionOptions {
  ExpressionCost cost = ExpressionCost::kPca;
  // PCA components kept (clipped to the number of shared genes).
  int dimensions = 30;
  bool normalize_total = true;
  double target_sum = 1e4;
  // Exact eigendecomposition up to this many genes (its g x g covariance is 8 g^2 bytes and g^3
  // work: 3,000 genes is 72 MB and a few seconds); the randomized finder above.
  Index exact_max_genes = 3000;
  int oversampling = 10;
  int power_iterations = 4;
  std::uint64_t seed = 0;
};

// One section's counts on the shared genes: rows x genes, row-major float32 (a dense copy of
// the X columns SharedGenes names).
struct ExpressionBlock {
  Index rows = 0;
  Index genes = 0;
  std::vector<float> values;
};

struct ExpressionFeatures {
  int dimensions = 0;
  // One rows x dimensions matrix per section, in input order.
  std::vector<DenseMatrix<double>> features;
  // The variance each kept component explains, as a fraction of the total (descending).
  std::vector<double> explained_variance_ratio;
  bool randomized = false;
};

// Transforms the blocks in place (steps 1-2; the caller's copies are consumed) and returns the
// features. kInvalidArgument when the blocks disagree on the gene count, a block is empty or
// dimensions < 1; kBadData on a negative or non-finite count. Uses Eigen's threads (OpenMP).
ExpressionFeatures expression_features(std::vector<ExpressionBlock>& blocks,
                                       const ExpressionOptions& options = {});

// Step 4 on features the caller already has (an obsm representation such as X_pca or X_scVI):
// each row scaled to unit length (zero rows stay zero), so |f - g|^2 = 2 - 2 cos(f, g).
void scale_rows_to_unit_length(DenseMatrix<double>& features);

}  // namespace gw::spatial
