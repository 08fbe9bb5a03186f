#include "align_inputs.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <span>
#include <sstream>

#include "cli_util.h"
#include "core/error.h"
#include "io/h5ad.h"
#include "io/hdf5.h"
#include "solver/inputs.h"

namespace gw::cli {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// "'/obsm/X_pca' in 'a.h5ad'"
std::string where_text(const io::H5Path& where) {
  return "'" + where.object + "' in '" + where.file + "'";
}

io::H5Path resolve(const std::string& file, const std::string& spec) {
  io::H5Path where = io::resolve_matrix_spec(file, spec);
  GW_CHECK(!where.object.empty(), "matrix spec '" << spec << "' names a file but no dataset");
  return where;
}

Index checked_index(std::int64_t value, const std::string& what) {
  GW_CHECK_CODE(value >= 1 && value <= std::numeric_limits<Index>::max(),
                ErrorCode::kBadData,
                what << " has " << value << " rows; gwalign needs 1 to 2^31 - 1 nodes");
  return static_cast<Index>(value);
}

// Dense row-major copy of a matrix of either form (CSR: absent entries are `fill`).
template <typename T>
std::vector<T> to_dense(io::Matrix<T> matrix, T fill) {
  if (auto* dense = std::get_if<io::Array<T>>(&matrix)) return std::move(dense->data);
  const auto& csr = std::get<io::CsrArray<T>>(matrix);
  std::vector<T> out(static_cast<std::size_t>(csr.rows * csr.cols), fill);
  for (std::int64_t i = 0; i < csr.rows; ++i) {
    for (Offset p = csr.indptr[i]; p < csr.indptr[i + 1]; ++p) {
      out[static_cast<std::size_t>(i * csr.cols + csr.indices[p])] = csr.data[p];
    }
  }
  return out;
}

Geometry distances_geometry(const io::Reader& file,
                            const io::H5Path& where,
                            const SideRequest& request,
                            std::string& description) {
  io::Matrix<float> matrix = io::read_matrix<float>(file, where.object);
  const std::int64_t rows = io::matrix_rows(matrix), cols = io::matrix_cols(matrix);
  GW_CHECK_CODE(rows == cols,
                ErrorCode::kBadData,
                "distance matrix " << where_text(where) << " is " << rows << " x " << cols
                                   << "; --as-distances needs a square n x n matrix of distances "
                                      "between the n nodes (or drop --as-distances to read it as "
                                      "points)");
  const Index n = checked_index(rows, where_text(where));
  const bool sparse = std::holds_alternative<io::CsrArray<float>>(matrix);
  SideGeometry side =
      side_from_distance_matrix(to_dense(std::move(matrix), std::numeric_limits<float>::infinity()),
                                n,
                                sparse,
                                request.threads,
                                "distance matrix " + where_text(where));
  description = std::move(side.description);
  return std::move(side.geometry);
}

Geometry graph_geometry(const io::Reader& file, const io::H5Path& where, std::string& description) {
  const io::CsrArray<float> csr = file.read_csr<float>(where.object);
  GW_CHECK_CODE(csr.rows == csr.cols,
                ErrorCode::kBadData,
                "graph " << where_text(where) << " is " << csr.rows << " x " << csr.cols
                         << "; an obsp graph must be n x n (nodes x nodes)");
  const Index n = checked_index(csr.rows, where_text(where));
  SideGeometry side =
      side_from_csr_graph(n, csr.indptr, csr.indices, csr.data, "graph " + where_text(where));
  description = std::move(side.description);
  return std::move(side.geometry);
}

Geometry points_geometry(const io::Reader& file,
                         const io::H5Path& where,
                         std::string& description) {
  io::Matrix<double> matrix = io::read_matrix<double>(file, where.object);
  const std::int64_t rows = io::matrix_rows(matrix), cols = io::matrix_cols(matrix);
  const Index n = checked_index(rows, where_text(where));
  GW_CHECK_CODE(cols >= 1 && cols <= std::numeric_limits<int>::max(),
                ErrorCode::kBadData,
                "points " << where_text(where) << " have " << cols << " columns");
  SideGeometry side = side_from_points(
      to_dense(std::move(matrix), 0.0), n, static_cast<int>(cols), "points " + where_text(where));
  description = std::move(side.description);
  return std::move(side.geometry);
}

}  // namespace

std::string default_truth(const std::string& file) {
  const io::Reader reader(file);
  if (reader.kind("/angles") == io::ObjectKind::kDataset) return "/angles";
  const io::H5adReader h5ad(file);
  if (h5ad.is_anndata()) {
    const auto columns = h5ad.obs_columns();
    if (std::find(columns.begin(), columns.end(), "angle") != columns.end()) return "obs:angle";
  }
  return "";
}

std::string default_rep(const std::string& file, const std::string& role) {
  const io::Reader reader(file);
  if (reader.kind("/points") == io::ObjectKind::kDataset) return "/points";
  const io::H5adReader h5ad(file);
  if (h5ad.is_anndata()) {
    const auto keys = h5ad.obsm_keys();
    if (keys.size() == 1) return "obsm:" + keys.front();
    // A graph-only file (what `gwalign generate mesh` writes: the coordinates in X, the mesh in
    // obsp): its one CSR graph is the geometry.
    const auto graphs = h5ad.obsp_keys();
    if (keys.empty() && graphs.size() == 1 &&
        io::matrix_format(reader, "/obsp/" + graphs.front()) == io::MatrixFormat::kCsr) {
      return "obsp:" + graphs.front();
    }
    std::ostringstream listed;
    for (std::size_t i = 0; i < keys.size(); ++i) listed << (i ? ", " : "") << "obsm:" << keys[i];
    GW_THROW(ErrorCode::kInvalidArgument,
             "'" << file << "' is an AnnData file with "
                 << (keys.empty() ? "no obsm entry" : "several obsm entries (" + listed.str() + ")")
                 << "; pick the geometry with --" << role << "-rep (or --rep), e.g. obsm:X_pca, "
                 << "obsp:distances or X (gwalign info " << file << " lists them)");
  }
  GW_THROW(ErrorCode::kInvalidArgument,
           "'" << file << "' has no /points dataset; pick the geometry with --" << role
               << "-rep /path (or --rep), see gwalign info " << file);
}

std::vector<double> read_node_vector(const std::string& file,
                                     const std::string& spec,
                                     Index n,
                                     const std::string& what) {
  std::vector<double> values;
  std::string where;
  if (starts_with(spec, "obs:")) {
    const io::H5adReader h5ad(file);
    values = h5ad.read_obs_column(spec.substr(4));
    where = "obs column '" + spec.substr(4) + "' of '" + file + "'";
  } else {
    const io::H5Path path = resolve(file, spec);
    const io::Reader reader(path.file);
    io::Array<double> array = reader.read_array<double>(path.object);
    where = where_text(path);
    GW_CHECK_CODE(array.rank() == 1 || (array.rank() == 2 && array.shape[1] == 1),
                  ErrorCode::kBadData,
                  what << " " << where << " has rank " << array.rank()
                       << "; expected one value per node (a 1-D dataset)");
    values = std::move(array.data);
  }
  GW_CHECK_CODE(values.size() == static_cast<std::size_t>(n),
                ErrorCode::kBadData,
                what << " " << where << " has " << values.size() << " values for " << n
                     << " nodes; give one value per node");
  check_all_finite(std::span<const double>(values), what + " " + where);
  return values;
}

Side load_side(const SideRequest& request) {
  Side side;
  GW_CHECK_CODE(std::filesystem::exists(request.file),
                ErrorCode::kNotFound,
                (request.role == "source" ? "SOURCE" : "TARGET")
                    << " file '" << request.file << "' does not exist; check the path");
  side.rep = request.rep.empty() ? default_rep(request.file, request.role) : request.rep;
  const io::H5Path where = resolve(request.file, side.rep);
  try {
    const io::Reader reader(where.file);
    const io::MatrixFormat format = io::matrix_format(reader, where.object);
    const bool under_obsp = starts_with(where.object, "/obsp/");
    if (request.as_distances) {
      side.geometry = distances_geometry(reader, where, request, side.description);
    } else if (under_obsp && format == io::MatrixFormat::kDense) {
      GW_THROW(ErrorCode::kInvalidArgument,
               where_text(where) << " is a dense matrix; add --as-distances to use it as an n x n "
                                    "distance matrix (obsp graphs are read from CSR groups)");
    } else if (under_obsp && format != io::MatrixFormat::kNone) {
      side.geometry = graph_geometry(reader, where, side.description);
    } else {
      side.geometry = points_geometry(reader, where, side.description);
    }
  } catch (const Error& e) {
    // A missing file or dataset: say which flag named it and where to look for the right name.
    if (e.code() != ErrorCode::kNotFound) throw;
    throw Error(e.code(),
                "--" + request.role + "-rep '" + side.rep + "': " + e.what() +
                    "; see gwalign info " + where.file);
  }
  side.n = side.geometry.num_nodes();

  if (!request.weights.empty()) {
    side.weights =
        read_node_vector(request.file, request.weights, side.n, "--" + request.role + "-weights");
    for (std::size_t i = 0; i < side.weights.size(); ++i) {
      GW_CHECK_CODE(side.weights[i] >= 0.0,
                    ErrorCode::kBadData,
                    "--" << request.role << "-weights '" << request.weights << "' of '"
                         << request.file << "': weight " << i << " is " << side.weights[i]
                         << "; marginal weights must be >= 0");
    }
  }
  side.truth_spec = request.truth.empty() ? default_truth(request.file) : request.truth;
  if (!side.truth_spec.empty()) {
    side.truth = read_node_vector(request.file, side.truth_spec, side.n, "ground truth");
  }
  return side;
}

DenseMatrix<double> load_feature_cost(const std::string& source_file,
                                      const std::string& spec,
                                      Index n,
                                      Index k) {
  const io::H5Path where = resolve(source_file, spec);
  const io::Reader reader(where.file);
  io::Matrix<double> matrix = io::read_matrix<double>(reader, where.object);
  const std::int64_t rows = io::matrix_rows(matrix), cols = io::matrix_cols(matrix);
  GW_CHECK_CODE(rows == n && cols == k,
                ErrorCode::kBadData,
                "feature cost " << where_text(where) << " is " << rows << " x " << cols
                                << " but the problem is " << n << " x " << k
                                << " (source x target); --feature-cost must be n x k");
  std::vector<double> values = to_dense(std::move(matrix), 0.0);
  check_all_finite(std::span<const double>(values), "feature cost " + where_text(where));
  return DenseMatrix<double>(n, k, std::move(values));
}

FeaturePair load_features(const std::string& source_file,
                          const std::string& source_spec,
                          const std::string& target_file,
                          const std::string& target_spec,
                          std::optional<Index> n,
                          std::optional<Index> k) {
  struct Features {
    std::vector<double> values;
    Index rows = 0;
    std::int64_t cols = 0;
  };
  auto read = [](const std::string& file,
                 const std::string& spec,
                 std::optional<Index> expected,
                 const char* role) {
    const io::H5Path where = resolve(file, spec);
    const io::Reader reader(where.file);
    io::Matrix<double> matrix = io::read_matrix<double>(reader, where.object);
    Features f;
    f.rows = checked_index(io::matrix_rows(matrix), where_text(where));
    f.cols = io::matrix_cols(matrix);
    GW_CHECK_CODE(!expected || *expected == f.rows,
                  ErrorCode::kBadData,
                  role << " features " << where_text(where) << " have " << f.rows
                       << " rows but the " << role << " geometry has " << *expected << " nodes");
    f.values = to_dense(std::move(matrix), 0.0);
    check_all_finite(std::span<const double>(f.values),
                     std::string(role) + " features " + where_text(where));
    return f;
  };
  const Features src = read(source_file, source_spec, n, "source");
  const Features tgt = read(target_file, target_spec, k, "target");
  GW_CHECK_CODE(src.cols == tgt.cols,
                ErrorCode::kBadData,
                "source features '" << source_spec << "' have " << src.cols
                                    << " columns but target features '" << target_spec << "' have "
                                    << tgt.cols
                                    << "; --features needs both sides in the same feature space");
  return {DenseMatrix<double>(src.rows, static_cast<Index>(src.cols), src.values),
          DenseMatrix<double>(tgt.rows, static_cast<Index>(tgt.cols), tgt.values)};
}

}  // namespace gw::cli
