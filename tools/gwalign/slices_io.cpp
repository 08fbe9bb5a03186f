#include "slices_io.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string_view>
#include <variant>

#include "core/error.h"

namespace gw::cli {
namespace {

// kNotFound "'FILE' has no obsm['KEY']<what>; obsm keys: ...<hint>" when the key is missing.
void require_obsm(const io::H5adReader& file, const std::string& key, std::string_view what, std::string_view hint) {
  const std::vector<std::string> keys = file.obsm_keys();
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
  std::string listed;
  for (const std::string& k : keys) listed += (listed.empty() ? "" : ", ") + k;
  GW_THROW(ErrorCode::kNotFound, "'" << file.path() << "' has no obsm['" << key << "']" << what
                                     << "; obsm keys: " << (listed.empty() ? "none" : listed) << hint);
}

}  // namespace

std::vector<double> read_section_coordinates(const io::H5adReader& file, const std::string& key,
                                             int* dimension) {
  require_obsm(file, key, " (the spot / cell coordinates)", "; name another with --spatial-key");
  io::Array<double> a = file.read_obsm<double>(key);
  GW_CHECK_CODE(a.rank() == 2, ErrorCode::kBadData,
                "obsm['" << key << "'] in '" << file.path() << "' is not a matrix of coordinates");
  *dimension = static_cast<int>(a.cols());
  for (double v : a.data) {
    GW_CHECK_CODE(std::isfinite(v), ErrorCode::kBadData,
                  "obsm['" << key << "'] in '" << file.path() << "' holds a non-finite coordinate");
  }
  return std::move(a.data);
}

spatial::ExpressionBlock read_expression_block(const io::H5adReader& file,
                                               const std::vector<Index>& columns) {
  const io::Matrix<float> x = file.read_x<float>();
  spatial::ExpressionBlock block;
  block.rows = static_cast<Index>(io::matrix_rows(x));
  block.genes = static_cast<Index>(columns.size());
  block.values.assign(static_cast<std::size_t>(block.rows) * block.genes, 0.0f);
  if (const auto* dense = std::get_if<io::Array<float>>(&x)) {
    const std::int64_t cols = dense->cols();
    for (Index i = 0; i < block.rows; ++i)
      for (Index g = 0; g < block.genes; ++g)
        block.values[static_cast<std::size_t>(i) * block.genes + g] = dense->data[i * cols + columns[g]];
    return block;
  }
  const auto& csr = std::get<io::CsrArray<float>>(x);
  std::vector<Index> position(csr.cols, -1);
  for (Index g = 0; g < block.genes; ++g) position[columns[g]] = g;
  for (Index i = 0; i < block.rows; ++i) {
    for (Offset p = csr.indptr[i]; p < csr.indptr[i + 1]; ++p) {
      const Index g = position[csr.indices[p]];
      if (g >= 0) block.values[static_cast<std::size_t>(i) * block.genes + g] += csr.data[p];
    }
  }
  return block;
}

std::vector<TransferKey> parse_transfer_keys(const std::string& list, const std::string& flag) {
  std::vector<TransferKey> keys;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    TransferKey key;
    key.text = list.substr(start, end - start);
    GW_CHECK(!key.text.empty(), flag << " has an empty key in '" << list << "'; give KEY,KEY,...");
    key.obsm = key.text.rfind("obsm:", 0) == 0;
    key.name = key.obsm ? key.text.substr(5) : key.text;
    GW_CHECK(!key.name.empty(), flag << ": '" << key.text << "' names no obsm key");
    keys.push_back(std::move(key));
    start = end + 1;
  }
  return keys;
}

void check_transfer_key(const io::H5adReader& file, const TransferKey& key) {
  if (key.obsm) {
    const auto keys = file.obsm_keys();
    GW_CHECK_CODE(std::find(keys.begin(), keys.end(), key.name) != keys.end(), ErrorCode::kNotFound,
                  "'" << file.path() << "' has no obsm['" << key.name << "'] to transfer");
    return;
  }
  const auto columns = file.obs_columns();
  if (std::find(columns.begin(), columns.end(), key.name) == columns.end()) {
    std::string listed;
    for (const std::string& c : columns) listed += (listed.empty() ? "" : ", ") + c;
    GW_THROW(ErrorCode::kNotFound, "'" << file.path() << "' has no obs column '" << key.name
                                       << "' to transfer; obs columns: " << (listed.empty() ? "none" : listed));
  }
}

Index transfer_key(const io::H5adReader& from, const TransferKey& key, const spatial::PlanView& plan,
                   const spatial::TransferOptions& options, io::H5adWriter& out) {
  const std::string target = key.name + "_transferred";
  if (!key.obsm && from.obs_column_is_categorical(key.name)) {
    const io::Categorical labels = from.read_obs_categorical(key.name);
    const spatial::CategoricalTransfer t = spatial::transfer_categorical(
        plan, labels.codes, static_cast<int>(std::max<std::size_t>(labels.categories.size(), 1)), options);
    out.put_obs_categorical(target, io::Categorical{labels.categories, t.label, labels.ordered});
    out.put_obs_column<double>(target + "_confidence", t.confidence);
    return t.unreached;
  }
  io::Array<double> values;
  if (key.obsm) {
    values = from.read_obsm<double>(key.name);
  } else {
    values.data = from.read_obs_column(key.name);
    values.shape = {static_cast<std::int64_t>(values.data.size())};
  }
  const Index columns = values.rank() == 1 ? 1 : static_cast<Index>(values.cols());
  const spatial::ContinuousTransfer t = spatial::transfer_continuous(plan, values.data, columns, options);
  const std::int64_t rows = static_cast<std::int64_t>(t.mass.size());
  if (key.obsm) {
    out.put_obsm(target, io::Array<double>{t.values, {rows, columns}});
  } else {
    out.put_obs_column<double>(target, t.values);
  }
  return t.unreached;
}

io::CsrArray<double> plan_csr(const Result& result) {
  io::CsrArray<double> csr;
  csr.rows = result.n;
  csr.cols = result.k;
  if (result.plan.empty()) {
    csr.indptr = result.plan_topk.row_offsets;
    csr.indices = result.plan_topk.col_indices;
    csr.data = result.plan_topk.values;
    return csr;
  }
  csr.indptr.push_back(0);
  for (Index i = 0; i < result.n; ++i) {
    for (Index j = 0; j < result.k; ++j) {
      const double v = result.plan[static_cast<std::size_t>(i) * result.k + j];
      if (v > 0.0) {
        csr.indices.push_back(j);
        csr.data.push_back(v);
      }
    }
    csr.indptr.push_back(static_cast<Offset>(csr.indices.size()));
  }
  return csr;
}

DenseMatrix<double> read_obsm_matrix(const io::H5adReader& file, const std::string& key, Index rows) {
  require_obsm(file, key, "", "");
  io::Array<double> a = file.read_obsm<double>(key);
  GW_CHECK_CODE(a.rank() == 2 && static_cast<Index>(a.shape[0]) == rows && a.shape[1] >= 1,
                ErrorCode::kBadData,
                "obsm['" << key << "'] in '" << file.path() << "' is not a matrix with one row per cell ("
                         << rows << ")");
  for (double v : a.data)
    GW_CHECK_CODE(std::isfinite(v), ErrorCode::kBadData,
                  "obsm['" << key << "'] in '" << file.path() << "' holds a non-finite value");
  const Index cols = static_cast<Index>(a.shape[1]);
  return DenseMatrix<double>(rows, cols, std::move(a.data));
}

std::vector<DenseMatrix<double>> read_feature_representation(const std::vector<const io::H5adReader*>& files,
                                                             const std::string& spec,
                                                             const cxxopts::ParseResult& flags) {
  GW_CHECK(spec.rfind("obsm:", 0) == 0 && spec.size() > 5,
           "--features must be obsm:KEY (a representation every file holds), got '" << spec << "'");
  GW_CHECK(!flags.count("pca-dims"), "--pca-dims applies to the shared-gene PCA; it has no effect with --features");
  const std::string key = spec.substr(5);
  const bool cosine =
      spatial::expression_cost_from_string(flags["expression"].as<std::string>()) == spatial::ExpressionCost::kCosine;
  std::vector<DenseMatrix<double>> out;
  for (const io::H5adReader* file : files) {
    out.push_back(read_obsm_matrix(*file, key, static_cast<Index>(file->n_obs())));
    GW_CHECK_CODE(out.back().cols == out.front().cols, ErrorCode::kBadData,
                  "obsm['" << key << "'] is " << out.back().cols << " wide in '" << file->path() << "' but "
                           << out.front().cols << " in '" << files.front()->path()
                           << "'; --features needs one representation shared by all files");
    if (cosine) spatial::scale_rows_to_unit_length(out.back());
  }
  std::cerr << "expression: obsm['" << key << "'], " << out.front().cols << " columns, cost "
            << (cosine ? "cosine" : "Euclidean") << "\n";
  return out;
}

std::vector<DenseMatrix<double>> shared_gene_features(const std::vector<const io::H5adReader*>& files,
                                                      const cxxopts::ParseResult& flags, std::string_view hint) {
  std::vector<std::vector<std::string>> var_names;
  for (const io::H5adReader* file : files) var_names.push_back(file->var_names());
  const spatial::SharedGenes shared = spatial::shared_genes(var_names);
  if (shared.names.empty()) {
    std::string listed;
    for (const io::H5adReader* file : files) listed += (listed.empty() ? "'" : ", '") + file->path() + "'";
    GW_THROW(ErrorCode::kBadData,
             "no gene (var name) is shared by " << listed << "; the expression cost needs shared genes" << hint);
  }
  std::vector<spatial::ExpressionBlock> blocks;
  for (std::size_t f = 0; f < files.size(); ++f) blocks.push_back(read_expression_block(*files[f], shared.columns[f]));
  spatial::ExpressionOptions eo;
  eo.cost = spatial::expression_cost_from_string(flags["expression"].as<std::string>());
  eo.dimensions = flags["pca-dims"].as<int>();
  GW_CHECK(eo.dimensions >= 1, "--pca-dims must be >= 1, got " << eo.dimensions);
  eo.seed = flags["seed"].as<std::uint64_t>();
  spatial::ExpressionFeatures features = spatial::expression_features(blocks, eo);
  std::cerr << "expression: " << shared.names.size() << " shared genes -> " << features.dimensions
            << " PCA dims (" << (features.randomized ? "randomized" : "exact") << "), cost "
            << spatial::to_string(eo.cost) << "\n";
  return std::move(features.features);
}

}  // namespace gw::cli
