// AnnData (.h5ad) on top of gw::io's HDF5 layer: reading X / obsm / obsp / layers / obs, writing a
// minimal valid AnnData file or adding results to a copy of an existing one, and resolving the
// CLI's matrix specs ("obsm:X_pca", "file.h5:/path").
//
// Layout read and written (anndata 0.8 on-disk format, which also covers files from 0.7.x):
//   /              attrs encoding-type "anndata", encoding-version "0.1.0" (absent in 0.7 files)
//   /X             dense dataset (n_obs x n_vars) or CSR/CSC group (data, indices, indptr, shape)
//   /obs, /var     dataframes: group with attrs _index (name of the index dataset), column-order,
//                  encoding-type "dataframe"; one dataset per column; categorical columns are
//                  groups (0.8) or int codes with a "categories" attribute (0.7)
//   /obsm/<key>    dense n_obs x d (or CSR) ; /obsp/<key> n_obs x n_obs dense or CSR
//   /uns/<key>     nested dicts (groups) of scalars, strings and arrays
// Dense arrays carry encoding-type "array" (0.2.0), CSR groups "csr_matrix" (0.1.0), dicts
// "dict" (0.1.0), string arrays "string-array" (0.2.0), scalars "numeric-scalar" / "string"
// (0.2.0), dataframes "dataframe" (0.2.0): what anndata 0.8.0 itself writes.
//
// Errors and thread-safety: as in io/hdf5.h.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "io/hdf5.h"

namespace gw::io {

// A 2-D matrix as stored: dense (row-major) or CSR.
template <Element T>
using Matrix = std::variant<Array<T>, CsrArray<T>>;

enum class MatrixFormat { kNone, kDense, kCsr, kCsc, kOther };
// "dense" / "csr" / "csc" / "none" / "other".
std::string_view to_string(MatrixFormat format);

// Rows and columns of a matrix of either form.
template <Element T>
std::int64_t matrix_rows(const Matrix<T>& m) {
  return std::holds_alternative<Array<T>>(m) ? std::get<Array<T>>(m).rows()
                                             : std::get<CsrArray<T>>(m).rows;
}
template <Element T>
std::int64_t matrix_cols(const Matrix<T>& m) {
  return std::holds_alternative<Array<T>>(m) ? std::get<Array<T>>(m).cols()
                                             : std::get<CsrArray<T>>(m).cols;
}

// Where the CLI's matrix spec points, relative to `default_file` (the SOURCE/TARGET .h5ad):
//   "X" -> /X;  "obsm:KEY" -> /obsm/KEY;  "obsp:KEY" -> /obsp/KEY;  "layers:KEY" -> /layers/KEY;
//   "/path/in/file" -> that object of default_file;  "other.h5:/path" -> that object of other.h5
//   (any spec containing ":/" names a file, so an object path must not contain ":/").
// kInvalidArgument for anything else (the message lists the accepted forms).
H5Path resolve_matrix_spec(const std::string& default_file, std::string_view spec);

// Format of the object at `object`: a dense dataset of rank 1 or 2, a CSR or CSC group, or other.
MatrixFormat matrix_format(const Reader& file, std::string_view object);

// The matrix at `object`: a dense dataset of rank 2 (rank 1 is read as n x 1) or a CSR / CSC group
// (CSC converted to CSR). kNotFound if missing, kBadData for anything else.
template <Element T>
Matrix<T> read_matrix(const Reader& file, std::string_view object);
// The same, for a spec resolved by resolve_matrix_spec.
template <Element T>
Matrix<T> read_matrix(const std::string& default_file, std::string_view spec);

// One entry of an AnnData mapping (X, obsm/<key>, obsp/<key>, layers/<key>).
struct H5adEntry {
  std::string key;     // "X", "obsm:X_pca", ... (the spec that reads it)
  std::string object;  // "/obsm/X_pca"
  MatrixFormat format = MatrixFormat::kNone;
  DType dtype = DType::kNone;
  std::vector<std::int64_t> shape;
};

// A categorical obs column: codes[i] in [0, categories.size()) or -1 (missing, anndata's NaN).
struct Categorical {
  std::vector<std::string> categories;
  std::vector<std::int32_t> codes;
  bool ordered = false;
};

// A read-only .h5ad file. Cheap to construct (reads only the obs index length on demand).
class H5adReader {
 public:
  explicit H5adReader(const std::string& path);
  // Over an already open file (e.g. Reader::from_image).
  explicit H5adReader(Reader file);

  const Reader& file() const { return file_; }
  const std::string& path() const { return file_.path(); }

  // True when the root says encoding-type "anndata", or (0.7 files) an obs dataframe group exists.
  bool is_anndata() const;
  // Number of observations: the length of the obs index (or X's rows when there is no obs).
  std::int64_t n_obs() const;
  // Number of variables: the length of the var index (or X's columns).
  std::int64_t n_vars() const;
  std::vector<std::string> obs_names() const;
  std::vector<std::string> var_names() const;
  // The obs columns in column-order (without the index).
  std::vector<std::string> obs_columns() const;

  // Keys of the mappings, in name order (empty when the group is absent).
  std::vector<std::string> obsm_keys() const { return keys("obsm"); }
  std::vector<std::string> obsp_keys() const { return keys("obsp"); }
  std::vector<std::string> layer_keys() const { return keys("layers"); }
  std::vector<std::string> uns_keys() const { return keys("uns"); }
  // X (if present), then obsm, obsp and layers entries, each with format, dtype and shape.
  std::vector<H5adEntry> entries() const;

  // X, dense or CSR. kNotFound if the file has no X.
  template <Element T>
  Matrix<T> read_x() const;
  // obsm/<key> as a dense array with n_obs rows (rank 1 or 2). A sparse obsm entry is kBadData.
  template <Element T>
  Array<T> read_obsm(std::string_view key) const;
  // obsp/<key> (n_obs x n_obs), dense or CSR.
  template <Element T>
  Matrix<T> read_obsp(std::string_view key) const;
  // A numeric obs column (n_obs values, converted to double). kNotFound lists the columns;
  // a categorical or string column is kBadData.
  std::vector<double> read_obs_column(std::string_view name) const;
  // A categorical obs column in any of anndata's layouts: a group with `categories` and `codes`
  // (encoding-type "categorical", anndata >= 0.8), or integer codes whose categories live in
  // /obs/__categories/<name> (anndata 0.7); a column of strings is read as categorical too
  // (categories: its distinct values in sorted order). Numeric categories are formatted as text
  // ("3", "0.5"). kNotFound lists the columns; a numeric column is kBadData (read it with
  // read_obs_column); codes outside [-1, categories) are kBadData.
  Categorical read_obs_categorical(std::string_view name) const;
  // Whether the obs column is categorical or strings (read_obs_categorical), as opposed to
  // numeric (read_obs_column). kNotFound when it does not exist.
  bool obs_column_is_categorical(std::string_view name) const;

 private:
  std::vector<std::string> keys(std::string_view group) const;
  std::vector<std::string> index_names(std::string_view dataframe) const;
  std::int64_t index_length(std::string_view dataframe) const;
  Reader file_;
};

// Writes an AnnData file that anndata 0.8 reads: either a new minimal one (create) or a copy of an
// existing .h5ad with entries added or replaced (copy_of, for --write-into-source). Atomic like
// Writer: nothing appears at `path` before commit().
class H5adWriter {
 public:
  // A new file with n_obs x n_vars: root encoding attributes, obs/var dataframes with the given
  // names (default "0", "1", ... as anndata names a RangeIndex), empty dict groups obsm, obsp,
  // varm, varp, layers, uns. No X until set_x.
  static H5adWriter create(const std::string& path,
                           std::int64_t n_obs,
                           std::int64_t n_vars,
                           std::vector<std::string> obs_names = {},
                           std::vector<std::string> var_names = {});
  // A copy of the .h5ad `source` (kBadData if it is not an AnnData file); n_obs / n_vars are
  // taken from it and checked on every put.
  static H5adWriter copy_of(const std::string& source, const std::string& path);

  std::int64_t n_obs() const { return n_obs_; }
  std::int64_t n_vars() const { return n_vars_; }

  // X: n_obs x n_vars (kInvalidArgument otherwise).
  template <Element T>
  void set_x(const Array<T>& x, const DatasetOptions& options = {});
  template <Element T>
  void set_x(const CsrArray<T>& x, const DatasetOptions& options = {});
  // obsm/<key>: n_obs rows; dense rank 1 or 2, or CSR.
  template <Element T>
  void put_obsm(std::string_view key, const Array<T>& value, const DatasetOptions& options = {});
  template <Element T>
  void put_obsm(std::string_view key, const CsrArray<T>& value, const DatasetOptions& options = {});
  // obsp/<key>: n_obs x n_obs.
  template <Element T>
  void put_obsp(std::string_view key, const Array<T>& value, const DatasetOptions& options = {});
  template <Element T>
  void put_obsp(std::string_view key, const CsrArray<T>& value, const DatasetOptions& options = {});
  // A numeric obs column of n_obs values (appended to column-order; replaced if it exists).
  template <Element T>
  void put_obs_column(std::string_view name, std::span<const T> values);
  // A categorical obs column (anndata 0.8's group: categories as a string array, codes as int8
  // below 128 categories and int32 above, and the `ordered` flag); an existing column of
  // that name is replaced, its 0.7 /obs/__categories/<name> entry removed. Codes must lie in
  // [-1, categories) and there must be n_obs of them (kInvalidArgument).
  void put_obs_categorical(std::string_view name, const Categorical& column);
  // uns entries; `key` may be a "/"-separated path ("gw/cost"): missing dicts are created.
  void put_uns(std::string_view key, double value);
  void put_uns(std::string_view key, std::int64_t value);
  void put_uns(std::string_view key, int value) { put_uns(key, std::int64_t{value}); }
  void put_uns(std::string_view key, bool value);
  void put_uns(std::string_view key, std::string_view value);
  void put_uns(std::string_view key, const char* value) { put_uns(key, std::string_view(value)); }
  template <Element T>
  void put_uns_array(std::string_view key, const Array<T>& value);

  // The underlying file, for anything the methods above do not cover.
  Writer& file() { return file_; }

  void commit() { file_.commit(); }

 private:
  H5adWriter(Writer file, std::int64_t n_obs, std::int64_t n_vars);
  void ensure_dict(std::string_view group);
  std::string uns_path(std::string_view key);
  template <Element T>
  void put_dense(std::string_view object, const Array<T>& value, const DatasetOptions& options);
  template <Element T>
  void put_csr(std::string_view object, const CsrArray<T>& value, const DatasetOptions& options);
  Writer file_;
  std::int64_t n_obs_ = 0;
  std::int64_t n_vars_ = 0;
};

}  // namespace gw::io
