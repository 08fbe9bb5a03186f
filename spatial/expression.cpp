#include "spatial/expression.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "core/rng.h"

namespace gw::spatial {
namespace {

using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;
using RowBlock = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rows per block when a float block is widened to double for a product: 4,096 rows of a few
// thousand genes stay within tens of MB however large the section.
constexpr Index kBlockRows = 4096;

// Calls fn(block as a double matrix, first row) over row blocks of one section.
template <typename Fn>
void for_each_block(const ExpressionBlock& b, Fn&& fn) {
  for (Index start = 0; start < b.rows; start += kBlockRows) {
    const Index rows = std::min(kBlockRows, b.rows - start);
    Eigen::Map<const RowBlock> block(b.values.data() + static_cast<std::size_t>(start) * b.genes,
                                     rows, b.genes);
    const Mat wide = block.cast<double>();
    fn(wide, start);
  }
}

void normalize_and_log(ExpressionBlock& b, const ExpressionOptions& options) {
  for (Index i = 0; i < b.rows; ++i) {
    float* row = b.values.data() + static_cast<std::size_t>(i) * b.genes;
    double total = 0.0;
    for (Index g = 0; g < b.genes; ++g) {
      GW_CHECK_CODE(std::isfinite(row[g]) && row[g] >= 0.0f, ErrorCode::kBadData,
                    "expression: count " << row[g] << " at cell " << i << ", gene " << g
                                         << " is negative or not finite (give raw counts)");
      total += row[g];
    }
    const double scale = options.normalize_total && total > 0.0 ? options.target_sum / total : 1.0;
    for (Index g = 0; g < b.genes; ++g) row[g] = static_cast<float>(std::log1p(row[g] * scale));
  }
}

// Y = (X - 1 mu^T) W over all sections, stacked in input order.
Mat centred_times(const std::vector<ExpressionBlock>& blocks, const Vec& mu, const Mat& w, Index total) {
  Mat y(total, w.cols());
  const Eigen::RowVectorXd shift = mu.transpose() * w;
  Index offset = 0;
  for (const ExpressionBlock& b : blocks) {
    for_each_block(b, [&](const Mat& x, Index start) {
      y.middleRows(offset + start, x.rows()) = (x * w).rowwise() - shift;
    });
    offset += b.rows;
  }
  return y;
}

// (X - 1 mu^T)^T Y.
Mat centred_transpose_times(const std::vector<ExpressionBlock>& blocks, const Vec& mu, const Mat& y) {
  Mat out = Mat::Zero(mu.size(), y.cols());
  Index offset = 0;
  for (const ExpressionBlock& b : blocks) {
    for_each_block(b, [&](const Mat& x, Index start) {
      out.noalias() += x.transpose() * y.middleRows(offset + start, x.rows());
    });
    offset += b.rows;
  }
  out -= mu * y.colwise().sum();
  return out;
}

Mat orthonormal_columns(const Mat& y) {
  Eigen::HouseholderQR<Mat> qr(y);
  return qr.householderQ() * Mat::Identity(y.rows(), y.cols());
}

// The top-d principal axes (g x d) and their variances, exactly.
void exact_axes(const std::vector<ExpressionBlock>& blocks, const Vec& mu, Index total, int d,
                Mat& axes, Vec& variances) {
  const Index g = mu.size();
  Mat cov = Mat::Zero(g, g);
  for (const ExpressionBlock& b : blocks) {
    for_each_block(b, [&](const Mat& x, Index) {
      const Mat xc = x.rowwise() - mu.transpose();
      cov.selfadjointView<Eigen::Lower>().rankUpdate(xc.transpose());
    });
  }
  cov = cov.selfadjointView<Eigen::Lower>();
  cov /= static_cast<double>(std::max<Index>(total - 1, 1));
  Eigen::SelfAdjointEigenSolver<Mat> eig(cov);
  // Eigenvalues ascend: the last d columns, reversed.
  axes = eig.eigenvectors().rightCols(d).rowwise().reverse();
  variances = eig.eigenvalues().tail(d).reverse();
}

void randomized_axes(const std::vector<ExpressionBlock>& blocks, const Vec& mu, Index total, int d,
                     const ExpressionOptions& options, Mat& axes, Vec& variances) {
  const Index g = mu.size();
  const Index l = std::min<Index>(g, d + options.oversampling);
  Rng rng(options.seed, /*stream=*/0x5ca7);
  Mat omega(g, l);
  for (Index c = 0; c < l; ++c)
    for (Index r = 0; r < g; ++r) omega(r, c) = rng.normal();
  Mat q = orthonormal_columns(centred_times(blocks, mu, omega, total));
  for (int it = 0; it < options.power_iterations; ++it) {
    const Mat z = orthonormal_columns(centred_transpose_times(blocks, mu, q));
    q = orthonormal_columns(centred_times(blocks, mu, z, total));
  }
  // B^T = X_c^T Q (g x l); its SVD gives the right singular vectors of X_c's projection.
  const Mat bt = centred_transpose_times(blocks, mu, q);
  Eigen::JacobiSVD<Mat> svd(bt, Eigen::ComputeThinU);
  axes = svd.matrixU().leftCols(d);
  variances = svd.singularValues().head(d).array().square() /
              static_cast<double>(std::max<Index>(total - 1, 1));
}

}  // namespace

SharedGenes shared_genes(const std::vector<std::vector<std::string>>& var_names) {
  SharedGenes out;
  if (var_names.empty()) return out;
  std::vector<std::unordered_map<std::string, Index>> index(var_names.size());
  for (std::size_t s = 0; s < var_names.size(); ++s) {
    for (std::size_t c = 0; c < var_names[s].size(); ++c) {
      index[s].emplace(var_names[s][c], static_cast<Index>(c));  // first occurrence wins
    }
  }
  out.columns.resize(var_names.size());
  std::unordered_map<std::string, bool> seen;
  for (std::size_t c = 0; c < var_names[0].size(); ++c) {
    const std::string& name = var_names[0][c];
    if (!seen.emplace(name, true).second) continue;
    bool everywhere = true;
    for (std::size_t s = 1; s < var_names.size() && everywhere; ++s) everywhere = index[s].count(name) > 0;
    if (!everywhere) continue;
    out.names.push_back(name);
    for (std::size_t s = 0; s < var_names.size(); ++s) out.columns[s].push_back(index[s].at(name));
  }
  return out;
}

const char* to_string(ExpressionCost cost) { return cost == ExpressionCost::kPca ? "pca" : "cosine"; }

ExpressionCost expression_cost_from_string(std::string_view text) {
  if (text == "pca") return ExpressionCost::kPca;
  if (text == "cosine") return ExpressionCost::kCosine;
  GW_THROW(ErrorCode::kInvalidArgument,
           "expression cost must be pca (Euclidean on PCA scores) or cosine, got '"
               << std::string(text) << "'");
}

ExpressionFeatures expression_features(std::vector<ExpressionBlock>& blocks,
                                       const ExpressionOptions& options) {
  GW_CHECK(!blocks.empty(), "expression features: no sections given");
  GW_CHECK(options.dimensions >= 1, "expression features: dimensions must be >= 1, got " << options.dimensions);
  const Index g = blocks.front().genes;
  GW_CHECK(g >= 1, "expression features: no shared genes");
  Index total = 0;
  for (std::size_t s = 0; s < blocks.size(); ++s) {
    const ExpressionBlock& b = blocks[s];
    GW_CHECK(b.genes == g, "expression features: section " << s << " has " << b.genes
                                                           << " genes, section 0 has " << g);
    GW_CHECK(b.rows >= 1, "expression features: section " << s << " has no cells");
    GW_CHECK(b.values.size() == static_cast<std::size_t>(b.rows) * b.genes,
             "expression features: section " << s << " holds " << b.values.size()
                                             << " values, expected " << b.rows << " x " << b.genes);
    total += b.rows;
  }
  for (ExpressionBlock& b : blocks) normalize_and_log(b, options);

  Vec mu = Vec::Zero(g);
  for (const ExpressionBlock& b : blocks) {
    for_each_block(b, [&](const Mat& x, Index) { mu += x.colwise().sum().transpose(); });
  }
  mu /= static_cast<double>(total);
  double total_variance = 0.0;
  for (const ExpressionBlock& b : blocks) {
    for_each_block(b, [&](const Mat& x, Index) {
      total_variance += (x.rowwise() - mu.transpose()).squaredNorm();
    });
  }
  total_variance /= static_cast<double>(std::max<Index>(total - 1, 1));

  const int d = static_cast<int>(std::min<Index>(options.dimensions, g));
  ExpressionFeatures out;
  out.dimensions = d;
  out.randomized = g > options.exact_max_genes;
  Mat axes;
  Vec variances;
  if (out.randomized) {
    randomized_axes(blocks, mu, total, d, options, axes, variances);
  } else {
    exact_axes(blocks, mu, total, d, axes, variances);
  }
  // A deterministic sign per axis: its largest-magnitude loading is positive.
  for (int c = 0; c < d; ++c) {
    Index arg = 0;
    axes.col(c).cwiseAbs().maxCoeff(&arg);
    if (axes(arg, c) < 0.0) axes.col(c) *= -1.0;
  }
  for (int c = 0; c < d; ++c) {
    out.explained_variance_ratio.push_back(total_variance > 0.0 ? variances[c] / total_variance : 0.0);
  }
  for (const ExpressionBlock& b : blocks) {
    DenseMatrix<double> f(b.rows, d, std::vector<double>(static_cast<std::size_t>(b.rows) * d));
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> scores(
        f.values.data(), b.rows, d);
    for_each_block(b, [&](const Mat& x, Index start) {
      scores.middleRows(start, x.rows()) = (x.rowwise() - mu.transpose()) * axes;
    });
    if (options.cost == ExpressionCost::kCosine) scale_rows_to_unit_length(f);
    out.features.push_back(std::move(f));
  }
  return out;
}

void scale_rows_to_unit_length(DenseMatrix<double>& features) {
  Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> rows(
      features.values.data(), features.rows, features.cols);
  for (Index i = 0; i < features.rows; ++i) {
    const double norm = rows.row(i).norm();
    if (norm > 0.0) rows.row(i) /= norm;
  }
}

}  // namespace gw::spatial
