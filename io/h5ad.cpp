// AnnData (.h5ad) reading and writing on top of Reader / Writer (no HDF5 calls here).
#include "io/h5ad.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "core/error.h"

namespace gw::io {
namespace {

constexpr std::string_view kSpecForms =
    "use X, obsm:KEY, obsp:KEY, layers:KEY, /path/in/file or FILE.h5:/path";

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string join(const std::vector<std::string>& names, std::size_t max_listed = 20) {
  if (names.empty()) return "(none)";
  std::ostringstream out;
  for (std::size_t i = 0; i < names.size() && i < max_listed; ++i) {
    out << (i ? ", " : "") << names[i];
  }
  if (names.size() > max_listed) out << ", ... " << names.size() - max_listed << " more";
  return out.str();
}

std::string string_attribute_or(const Reader& file,
                                std::string_view object,
                                std::string_view name,
                                std::string fallback) {
  if (!file.has_attribute(object, name) || file.attribute_dtype(object, name) != DType::kString) {
    return fallback;
  }
  const std::vector<std::string> values = file.read_string_array_attribute(object, name);
  return values.size() == 1 ? values[0] : fallback;
}

std::string shape_text(std::int64_t rows, std::int64_t cols) {
  return std::to_string(rows) + " x " + std::to_string(cols);
}

void check_key(std::string_view mapping, std::string_view key) {
  GW_CHECK(!key.empty() && key.find('/') == std::string_view::npos,
           mapping << " key '" << key << "' must be non-empty and contain no '/'");
}

}  // namespace

std::string_view to_string(MatrixFormat format) {
  switch (format) {
    case MatrixFormat::kNone:
      return "none";
    case MatrixFormat::kDense:
      return "dense";
    case MatrixFormat::kCsr:
      return "csr";
    case MatrixFormat::kCsc:
      return "csc";
    case MatrixFormat::kOther:
      return "other";
  }
  return "other";
}

H5Path resolve_matrix_spec(const std::string& default_file, std::string_view spec) {
  GW_CHECK(!spec.empty(), "empty matrix spec; " << kSpecForms);
  if (spec == "X") return {default_file, "/X"};
  // FILE:/path first, so that an absolute file name ("/data/feat.h5:/costs") is not taken for an
  // object path.
  if (spec.find(":/") != std::string_view::npos && spec.substr(0, 5) != "obsm:" &&
      spec.substr(0, 5) != "obsp:" && spec.substr(0, 7) != "layers:") {
    return parse_h5_path(spec);
  }
  if (spec.front() == '/') return {default_file, parse_h5_path("f:" + std::string(spec)).object};
  for (std::string_view mapping : {"obsm", "obsp", "layers"}) {
    const std::string prefix = std::string(mapping) + ":";
    if (starts_with(spec, prefix) && spec.size() > prefix.size() && spec[prefix.size()] != '/') {
      const std::string_view key = spec.substr(prefix.size());
      return {default_file, "/" + std::string(mapping) + "/" + std::string(key)};
    }
  }
  GW_THROW(ErrorCode::kInvalidArgument,
           "matrix spec '" << spec << "' not understood; " << kSpecForms);
}

MatrixFormat matrix_format(const Reader& file, std::string_view object) {
  switch (file.kind(object)) {
    case ObjectKind::kNone:
      return MatrixFormat::kNone;
    case ObjectKind::kDataset: {
      const ObjectInfo info = file.info(object);
      const bool numeric =
          info.dtype != DType::kString && info.dtype != DType::kOther && info.dtype != DType::kNone;
      return numeric && (info.shape.size() == 1 || info.shape.size() == 2) ? MatrixFormat::kDense
                                                                           : MatrixFormat::kOther;
    }
    case ObjectKind::kGroup:
      break;
  }
  const std::string encoding = string_attribute_or(file, object, "encoding-type", "");
  if (encoding == "csr_matrix") return MatrixFormat::kCsr;
  if (encoding == "csc_matrix") return MatrixFormat::kCsc;
  if (!encoding.empty()) return MatrixFormat::kOther;
  const std::string h5sparse = string_attribute_or(file, object, "h5sparse_format", "");
  if (h5sparse == "csr") return MatrixFormat::kCsr;
  if (h5sparse == "csc") return MatrixFormat::kCsc;
  // A bare scipy-style group: data / indices / indptr and a shape attribute.
  const std::string base(object);
  if (file.exists(base + "/data") && file.exists(base + "/indices") &&
      file.exists(base + "/indptr") && file.has_attribute(object, "shape")) {
    return MatrixFormat::kCsr;
  }
  return MatrixFormat::kOther;
}

template <Element T>
Matrix<T> read_matrix(const Reader& file, std::string_view object) {
  switch (matrix_format(file, object)) {
    case MatrixFormat::kNone:
      file.info(object);  // throws kNotFound, listing what the parent group holds
      break;
    case MatrixFormat::kDense: {
      Array<T> array = file.read_array<T>(object);
      if (array.rank() == 1) array.shape.push_back(1);
      return array;
    }
    case MatrixFormat::kCsr:
    case MatrixFormat::kCsc:
      return file.read_csr<T>(object);
    case MatrixFormat::kOther:
      break;
  }
  const ObjectInfo info = file.info(object);
  GW_THROW(
      ErrorCode::kBadData,
      "'" << info.path << "' in '" << file.path() << "' is a " << to_string(info.kind)
          << (info.encoding_type.empty() ? "" : " with encoding-type '" + info.encoding_type + "'")
          << " (dtype " << to_string(info.dtype) << ", rank " << info.shape.size()
          << "); expected a 1-D/2-D numeric dataset or a CSR/CSC group");
}

template <Element T>
Matrix<T> read_matrix(const std::string& default_file, std::string_view spec) {
  const H5Path where = resolve_matrix_spec(default_file, spec);
  GW_CHECK(!where.object.empty(), "matrix spec '" << spec << "' names no object; " << kSpecForms);
  Reader file(where.file);
  return read_matrix<T>(file, where.object);
}

// ---------------------------------------------------------------------------------------------
// H5adReader

H5adReader::H5adReader(const std::string& path) : file_(path) {}
H5adReader::H5adReader(Reader file) : file_(std::move(file)) {}

bool H5adReader::is_anndata() const {
  if (string_attribute_or(file_, "/", "encoding-type", "") == "anndata") return true;
  return file_.kind("/obs") == ObjectKind::kGroup &&
         (file_.has_attribute("/obs", "_index") ||
          string_attribute_or(file_, "/obs", "encoding-type", "") == "dataframe");
}

std::vector<std::string> H5adReader::keys(std::string_view group) const {
  if (file_.kind(group) != ObjectKind::kGroup) return {};
  return file_.list(group);
}

std::int64_t H5adReader::index_length(std::string_view dataframe) const {
  const std::string group = "/" + std::string(dataframe);
  if (file_.kind(group) == ObjectKind::kGroup) {
    const std::string index = string_attribute_or(file_, group, "_index", "_index");
    const ObjectInfo info = file_.info(group + "/" + index);
    GW_CHECK_CODE(info.kind == ObjectKind::kDataset && info.shape.size() == 1,
                  ErrorCode::kBadData,
                  "the " << dataframe << " index '" << info.path << "' in '" << path()
                         << "' is not a 1-D dataset");
    return info.shape[0];
  }
  GW_CHECK_CODE(file_.exists("/X"),
                ErrorCode::kBadData,
                "'" << path() << "' has neither /" << dataframe
                    << " nor /X, so its size is unknown; is it an AnnData file?");
  const ObjectInfo x = file_.info("/X");
  GW_CHECK_CODE(x.shape.size() == 2,
                ErrorCode::kBadData,
                "/X in '" << path() << "' is not 2-D (rank " << x.shape.size() << ")");
  return dataframe == "obs" ? x.shape[0] : x.shape[1];
}

std::vector<std::string> H5adReader::index_names(std::string_view dataframe) const {
  const std::string group = "/" + std::string(dataframe);
  GW_CHECK_CODE(file_.kind(group) == ObjectKind::kGroup,
                ErrorCode::kNotFound,
                "'" << path() << "' has no " << dataframe << " dataframe group");
  const std::string index = string_attribute_or(file_, group, "_index", "_index");
  return file_.read_strings(group + "/" + index);
}

std::int64_t H5adReader::n_obs() const { return index_length("obs"); }
std::int64_t H5adReader::n_vars() const { return index_length("var"); }
std::vector<std::string> H5adReader::obs_names() const { return index_names("obs"); }
std::vector<std::string> H5adReader::var_names() const { return index_names("var"); }

std::vector<std::string> H5adReader::obs_columns() const {
  if (file_.kind("/obs") != ObjectKind::kGroup) return {};
  if (file_.has_attribute("/obs", "column-order")) {
    // anndata writes an empty float64 array when there are no columns.
    if (file_.attribute_dtype("/obs", "column-order") != DType::kString) return {};
    return file_.read_string_array_attribute("/obs", "column-order");
  }
  const std::string index = string_attribute_or(file_, "/obs", "_index", "_index");
  std::vector<std::string> columns;
  for (std::string& name : file_.list("/obs")) {
    if (name != index && name != "__categories") columns.push_back(std::move(name));
  }
  return columns;
}

std::vector<H5adEntry> H5adReader::entries() const {
  std::vector<H5adEntry> out;
  auto add = [&](std::string key, std::string object) {
    H5adEntry entry;
    entry.key = std::move(key);
    entry.object = std::move(object);
    entry.format = matrix_format(file_, entry.object);
    const ObjectInfo info = file_.info(entry.object);
    entry.dtype = info.dtype;
    entry.shape = info.shape;
    out.push_back(std::move(entry));
  };
  if (file_.exists("/X")) add("X", "/X");
  for (std::string_view mapping : {"obsm", "obsp", "layers"}) {
    for (const std::string& key : keys(mapping)) {
      // Built by appending: GCC 12 warns falsely (-Wrestrict) on "/" + std::string(...).
      std::string object = "/";
      object.append(mapping).append("/").append(key);
      add(std::string(mapping) + ":" + key, std::move(object));
    }
  }
  return out;
}

template <Element T>
Matrix<T> H5adReader::read_x() const {
  GW_CHECK_CODE(file_.exists("/X"), ErrorCode::kNotFound, "'" << path() << "' has no X");
  return read_matrix<T>(file_, "/X");
}

template <Element T>
Array<T> H5adReader::read_obsm(std::string_view key) const {
  const std::string object = "/obsm/" + std::string(key);
  if (file_.kind(object) == ObjectKind::kNone) {
    GW_THROW(ErrorCode::kNotFound,
             "obsm key '" << key << "' not found in '" << path()
                          << "'; obsm keys: " << join(obsm_keys()));
  }
  const MatrixFormat format = matrix_format(file_, object);
  if (format != MatrixFormat::kDense) {
    GW_THROW(ErrorCode::kBadData,
             "obsm:" << key << " in '" << path() << "' is " << to_string(format)
                     << "; dense points (n_obs x d) are expected");
  }
  Array<T> array = file_.read_array<T>(object);
  const std::int64_t n = n_obs();
  if (array.rows() != n) {
    GW_THROW(ErrorCode::kBadData,
             "obsm:" << key << " in '" << path() << "' has " << array.rows()
                     << " rows but the file has n_obs = " << n);
  }
  return array;
}

template <Element T>
Matrix<T> H5adReader::read_obsp(std::string_view key) const {
  const std::string object = "/obsp/" + std::string(key);
  if (file_.kind(object) == ObjectKind::kNone) {
    GW_THROW(ErrorCode::kNotFound,
             "obsp key '" << key << "' not found in '" << path()
                          << "'; obsp keys: " << join(obsp_keys()));
  }
  Matrix<T> matrix = read_matrix<T>(file_, object);
  const std::int64_t n = n_obs();
  if (matrix_rows<T>(matrix) != n || matrix_cols<T>(matrix) != n) {
    GW_THROW(ErrorCode::kBadData,
             "obsp:" << key << " in '" << path() << "' is "
                     << shape_text(matrix_rows<T>(matrix), matrix_cols<T>(matrix))
                     << "; expected n_obs x n_obs = " << shape_text(n, n));
  }
  return matrix;
}

std::vector<double> H5adReader::read_obs_column(std::string_view name) const {
  const std::string object = "/obs/" + std::string(name);
  const ObjectKind kind = file_.kind(object);
  if (kind == ObjectKind::kNone) {
    GW_THROW(ErrorCode::kNotFound,
             "obs column '" << name << "' not found in '" << path()
                            << "'; obs columns: " << join(obs_columns()));
  }
  // Categorical columns: a group (anndata >= 0.8) or integer codes with a "categories" attribute.
  if (kind == ObjectKind::kGroup || file_.has_attribute(object, "categories")) {
    GW_THROW(ErrorCode::kBadData,
             "obs column '" << name << "' in '" << path()
                            << "' is categorical; a numeric column is needed");
  }
  const ObjectInfo info = file_.info(object);
  if (info.dtype == DType::kString) {
    GW_THROW(ErrorCode::kBadData,
             "obs column '" << name << "' in '" << path()
                            << "' holds strings; a numeric column is needed");
  }
  Array<double> values = file_.read_array<double>(object, 1);
  const std::int64_t n = n_obs();
  GW_CHECK_CODE(values.rows() == n,
                ErrorCode::kBadData,
                "obs column '" << name << "' in '" << path() << "' has " << values.rows()
                               << " values but n_obs = " << n);
  return std::move(values.data);
}

// ---------------------------------------------------------------------------------------------
// H5adWriter

namespace {

void encode(Writer& file, std::string_view object, const char* type, const char* version) {
  file.set_attribute(object, "encoding-type", type);
  file.set_attribute(object, "encoding-version", version);
}

std::vector<std::string> default_names(std::int64_t n) {
  std::vector<std::string> names(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) names[i] = std::to_string(i);
  return names;
}

void write_dataframe(Writer& file,
                     const std::string& group,
                     const std::vector<std::string>& names) {
  file.ensure_group(group);
  encode(file, group, "dataframe", "0.2.0");
  file.set_attribute(group, "_index", "_index");
  // What anndata 0.8 writes for a dataframe without columns: an empty float64 array.
  file.set_attribute_array<double>(group, "column-order", std::span<const double>());
  file.write_strings(group + "/_index", names);
  encode(file, group + "/_index", "string-array", "0.2.0");
}

}  // namespace

H5adWriter::H5adWriter(Writer file, std::int64_t n_obs, std::int64_t n_vars)
    : file_(std::move(file)), n_obs_(n_obs), n_vars_(n_vars) {}

H5adWriter H5adWriter::create(const std::string& path,
                              std::int64_t n_obs,
                              std::int64_t n_vars,
                              std::vector<std::string> obs_names,
                              std::vector<std::string> var_names) {
  GW_CHECK(n_obs >= 0 && n_vars >= 0,
           "H5adWriter::create: n_obs and n_vars must be >= 0, got " << n_obs << ", " << n_vars);
  if (obs_names.empty()) obs_names = default_names(n_obs);
  if (var_names.empty()) var_names = default_names(n_vars);
  GW_CHECK(static_cast<std::int64_t>(obs_names.size()) == n_obs,
           "H5adWriter::create: " << obs_names.size() << " obs names for n_obs = " << n_obs);
  GW_CHECK(static_cast<std::int64_t>(var_names.size()) == n_vars,
           "H5adWriter::create: " << var_names.size() << " var names for n_vars = " << n_vars);
  Writer file(path);
  encode(file, "/", "anndata", "0.1.0");
  write_dataframe(file, "/obs", obs_names);
  write_dataframe(file, "/var", var_names);
  for (const char* group : {"/layers", "/obsm", "/obsp", "/uns", "/varm", "/varp"}) {
    file.ensure_group(group);
    encode(file, group, "dict", "0.1.0");
  }
  return H5adWriter(std::move(file), n_obs, n_vars);
}

H5adWriter H5adWriter::copy_of(const std::string& source, const std::string& path) {
  std::int64_t n_obs = 0;
  std::int64_t n_vars = 0;
  {
    H5adReader reader(source);
    GW_CHECK_CODE(reader.is_anndata(),
                  ErrorCode::kBadData,
                  "'" << source
                      << "' is not an AnnData file (no encoding-type 'anndata' and no obs "
                         "dataframe); --write-into-source needs an .h5ad source");
    n_obs = reader.n_obs();
    n_vars = reader.n_vars();
  }
  return H5adWriter(Writer::copy_of(source, path), n_obs, n_vars);
}

void H5adWriter::ensure_dict(std::string_view group) {
  // Each missing level becomes a dict; existing groups (possibly from an 0.7 file without
  // encoding attributes) are left as they are.
  const std::string path = "/" + std::string(group.substr(group.front() == '/' ? 1 : 0));
  std::size_t pos = 1;
  while (true) {
    const std::size_t slash = path.find('/', pos);
    const std::string prefix = path.substr(0, slash);
    if (file_.ensure_group(prefix)) encode(file_, prefix, "dict", "0.1.0");
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
}

std::string H5adWriter::uns_path(std::string_view key) {
  GW_CHECK(!key.empty() && key.front() != '/' && key.back() != '/',
           "uns key '" << key << "' must be a relative path such as gw/cost");
  const std::string path = "/uns/" + std::string(key);
  const std::size_t slash = path.rfind('/');
  ensure_dict(path.substr(0, slash));
  return path;
}

template <Element T>
void H5adWriter::put_dense(std::string_view object,
                           const Array<T>& value,
                           const DatasetOptions& options) {
  file_.write_array<T>(object, value, options);
  encode(file_, object, "array", "0.2.0");
}

template <Element T>
void H5adWriter::put_csr(std::string_view object,
                         const CsrArray<T>& value,
                         const DatasetOptions& options) {
  file_.write_csr<T>(object, value, IndexWidth::kAuto, options);
  encode(file_, object, "csr_matrix", "0.1.0");
}

template <Element T>
void H5adWriter::set_x(const Array<T>& x, const DatasetOptions& options) {
  GW_CHECK(x.rank() == 2 && x.shape[0] == n_obs_ && x.shape[1] == n_vars_,
           "set_x: X must be n_obs x n_vars = " << shape_text(n_obs_, n_vars_) << ", got rank "
                                                << x.rank() << " with " << x.size() << " elements");
  put_dense<T>("/X", x, options);
}

template <Element T>
void H5adWriter::set_x(const CsrArray<T>& x, const DatasetOptions& options) {
  GW_CHECK(x.rows == n_obs_ && x.cols == n_vars_,
           "set_x: X must be n_obs x n_vars = " << shape_text(n_obs_, n_vars_) << ", got "
                                                << shape_text(x.rows, x.cols));
  put_csr<T>("/X", x, options);
}

template <Element T>
void H5adWriter::put_obsm(std::string_view key,
                          const Array<T>& value,
                          const DatasetOptions& options) {
  check_key("obsm", key);
  GW_CHECK((value.rank() == 1 || value.rank() == 2) && value.rows() == n_obs_,
           "put_obsm('" << key << "'): expected n_obs = " << n_obs_
                        << " rows (rank 1 or 2), got rank " << value.rank() << " with "
                        << value.rows() << " rows");
  ensure_dict("/obsm");
  put_dense<T>("/obsm/" + std::string(key), value, options);
}

template <Element T>
void H5adWriter::put_obsm(std::string_view key,
                          const CsrArray<T>& value,
                          const DatasetOptions& options) {
  check_key("obsm", key);
  GW_CHECK(value.rows == n_obs_,
           "put_obsm('" << key << "'): expected n_obs = " << n_obs_ << " rows, got " << value.rows);
  ensure_dict("/obsm");
  put_csr<T>("/obsm/" + std::string(key), value, options);
}

template <Element T>
void H5adWriter::put_obsp(std::string_view key,
                          const Array<T>& value,
                          const DatasetOptions& options) {
  check_key("obsp", key);
  GW_CHECK(value.rank() == 2 && value.shape[0] == n_obs_ && value.shape[1] == n_obs_,
           "put_obsp('" << key << "'): expected n_obs x n_obs = " << shape_text(n_obs_, n_obs_));
  ensure_dict("/obsp");
  put_dense<T>("/obsp/" + std::string(key), value, options);
}

template <Element T>
void H5adWriter::put_obsp(std::string_view key,
                          const CsrArray<T>& value,
                          const DatasetOptions& options) {
  check_key("obsp", key);
  GW_CHECK(value.rows == n_obs_ && value.cols == n_obs_,
           "put_obsp('" << key << "'): expected n_obs x n_obs = " << shape_text(n_obs_, n_obs_)
                        << ", got " << shape_text(value.rows, value.cols));
  ensure_dict("/obsp");
  put_csr<T>("/obsp/" + std::string(key), value, options);
}

template <Element T>
void H5adWriter::put_obs_column(std::string_view name, std::span<const T> values) {
  check_key("obs column", name);
  GW_CHECK(
      static_cast<std::int64_t>(values.size()) == n_obs_,
      "put_obs_column('" << name << "'): " << values.size() << " values for n_obs = " << n_obs_);
  Reader& reader = file_.reader();
  GW_CHECK_CODE(reader.kind("/obs") == ObjectKind::kGroup,
                ErrorCode::kBadData,
                "'" << file_.path() << "' has no obs dataframe group");
  const std::string index = string_attribute_or(reader, "/obs", "_index", "_index");
  GW_CHECK(name != index && name != "__categories",
           "put_obs_column: '" << name << "' is reserved in the obs dataframe");
  std::vector<std::string> order;
  if (reader.has_attribute("/obs", "column-order") &&
      reader.attribute_dtype("/obs", "column-order") == DType::kString) {
    order = reader.read_string_array_attribute("/obs", "column-order");
  }
  const std::int64_t n = n_obs_;
  file_.write_array<T>("/obs/" + std::string(name), values, {&n, 1});
  encode(file_, "/obs/" + std::string(name), "array", "0.2.0");
  if (std::find(order.begin(), order.end(), name) == order.end()) order.emplace_back(name);
  file_.set_attribute("/obs", "column-order", std::span<const std::string>(order));
}

void H5adWriter::put_uns(std::string_view key, double value) {
  const std::string path = uns_path(key);
  file_.write_scalar<double>(path, value);
  encode(file_, path, "numeric-scalar", "0.2.0");
}

void H5adWriter::put_uns(std::string_view key, std::int64_t value) {
  const std::string path = uns_path(key);
  file_.write_scalar<std::int64_t>(path, value);
  encode(file_, path, "numeric-scalar", "0.2.0");
}

void H5adWriter::put_uns(std::string_view key, bool value) {
  const std::string path = uns_path(key);
  const std::uint8_t code = value ? 1 : 0;
  DatasetOptions as_bool;
  as_bool.as_bool = true;
  file_.write_array<std::uint8_t>(path, std::span<const std::uint8_t>(&code, 1), {}, as_bool);
  encode(file_, path, "numeric-scalar", "0.2.0");
}

void H5adWriter::put_uns(std::string_view key, std::string_view value) {
  const std::string path = uns_path(key);
  file_.write_string(path, value);
  encode(file_, path, "string", "0.2.0");
}

template <Element T>
void H5adWriter::put_uns_array(std::string_view key, const Array<T>& value) {
  const std::string path = uns_path(key);
  put_dense<T>(path, value, {});
}

#define GW_H5AD_INSTANTIATE(T)                                                                     \
  template Matrix<T> read_matrix<T>(const Reader&, std::string_view);                              \
  template Matrix<T> read_matrix<T>(const std::string&, std::string_view);                         \
  template Matrix<T> H5adReader::read_x<T>() const;                                                \
  template Array<T> H5adReader::read_obsm<T>(std::string_view) const;                              \
  template Matrix<T> H5adReader::read_obsp<T>(std::string_view) const;                             \
  template void H5adWriter::set_x<T>(const Array<T>&, const DatasetOptions&);                      \
  template void H5adWriter::set_x<T>(const CsrArray<T>&, const DatasetOptions&);                   \
  template void H5adWriter::put_obsm<T>(std::string_view, const Array<T>&, const DatasetOptions&); \
  template void H5adWriter::put_obsm<T>(                                                           \
      std::string_view, const CsrArray<T>&, const DatasetOptions&);                                \
  template void H5adWriter::put_obsp<T>(std::string_view, const Array<T>&, const DatasetOptions&); \
  template void H5adWriter::put_obsp<T>(                                                           \
      std::string_view, const CsrArray<T>&, const DatasetOptions&);                                \
  template void H5adWriter::put_obs_column<T>(std::string_view, std::span<const T>);               \
  template void H5adWriter::put_uns_array<T>(std::string_view, const Array<T>&);
GW_H5AD_INSTANTIATE(float)
GW_H5AD_INSTANTIATE(double)
GW_H5AD_INSTANTIATE(std::int8_t)
GW_H5AD_INSTANTIATE(std::int32_t)
GW_H5AD_INSTANTIATE(std::int64_t)
GW_H5AD_INSTANTIATE(std::uint8_t)
#undef GW_H5AD_INSTANTIATE

}  // namespace gw::io
