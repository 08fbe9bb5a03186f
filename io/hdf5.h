// Reading and writing HDF5 files: dense arrays, CSR groups, strings and attributes.
//
// HDF5 is private to this module: nothing here exposes an HDF5 type, so consumers of gw::io need
// neither hdf5.h nor HDF5's compile flags. Every failure is a gw::Error whose one-line message
// names the file and the object path:
//   missing file / dataset / group / attribute  -> ErrorCode::kNotFound (lists what exists nearby)
//   a file that cannot be opened or read (permissions, a pipe) -> kIo, with the OS's reason
//   not an HDF5 file, wrong rank or dtype, invalid CSR, out-of-range value -> kBadData
//   a compression filter this build cannot decode -> kUnsupported (names dataset and filter)
//   an output that cannot be created -> kCannotCreate;   read/write failure -> kIo
//
// Object paths are absolute ("/obsm/X_pca"); a relative path ("obsm/X_pca") is taken from the
// root. Dense arrays are row-major: element (i, j) of an n x d array is data[i*d + j].
//
// Compression: gzip (deflate), shuffle, fletcher32, scale-offset and n-bit are decoded by HDF5
// itself (szip too where HDF5 was built with it, as Debian's is); LZF (filter 32000, what h5py and
// anndata write with compression="lzf", e.g. anndata's own 0.7 test archives) is
// decoded by gwalign's own filter, registered on first use. Any other filter (blosc, bitshuffle,
// zstd, ...) is rejected before reading with kUnsupported naming the dataset and the filter, unless
// an HDF5 plugin for it is installed where HDF5 looks (HDF5_PLUGIN_PATH).
//
// Thread-safety: Debian's HDF5 is built without thread-safety. Every gw::io call takes one
// process-wide lock, so concurrent calls from several threads are serialized (never parallel),
// but code that calls HDF5 directly outside gw::io must not run at the same time.
#pragma once

#include <concepts>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/types.h"

namespace gw::io {

// Element types as stored in a file (reported by describe(); requested types are C++ types).
enum class DType {
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat32,
  kFloat64,
  kBool,    // h5py/numpy bool: an enum {FALSE = 0, TRUE = 1} over int8
  kString,  // fixed- or variable-length
  kOther,   // compound, reference, opaque, other enums, ...
  kNone,    // groups
};
// "int32", "float64", "bool", "string", ...
std::string_view to_string(DType dtype);

// Element types that arrays can be read into and written from. Reads convert from any stored
// numeric type (see Reader::read_array); bool data is read as uint8 (0/1).
template <typename T>
concept Element =
    std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, std::int8_t> ||
    std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t> || std::same_as<T, std::uint8_t>;

// A dense row-major array owned by value. shape is empty for a scalar (one element).
template <typename T>
struct Array {
  std::vector<T> data;
  std::vector<std::int64_t> shape;

  int rank() const { return static_cast<int>(shape.size()); }
  // Product of the shape (1 for a scalar).
  std::int64_t size() const {
    std::int64_t n = 1;
    for (std::int64_t d : shape) n *= d;
    return n;
  }
  // shape[0] (1 for a scalar) and the product of the remaining dimensions (1 for rank <= 1).
  std::int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  std::int64_t cols() const { return rows() == 0 ? 0 : size() / rows(); }
};

// A compressed sparse row matrix owned by value, as stored in an anndata / scipy CSR group.
//   row i holds entries indptr[i] .. indptr[i+1]-1: column indices[p], value data[p].
// indptr has rows + 1 entries, starts at 0, never decreases and ends at nnz; every index is in
// [0, cols). Column indices within a row keep the file's order (not necessarily sorted), and
// duplicates are kept as stored. Indices are gw::Index (int32) as in the graph core: files may
// store int32 or int64 indices; a matrix with more than 2^31 - 1 columns is kUnsupported.
template <typename T>
struct CsrArray {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<Offset> indptr;  // rows + 1
  std::vector<Index> indices;  // nnz
  std::vector<T> data;         // nnz

  std::int64_t nnz() const { return static_cast<std::int64_t>(indices.size()); }
};

// Throws ErrorCode::kBadData naming `what` ("CSR group '/X' in 'a.h5ad'") and the first bad
// position unless `csr` satisfies the invariants above. O(rows + nnz).
template <Element T>
void validate_csr(const CsrArray<T>& csr, std::string_view what);

// "file.h5:/group/dataset" -> {file = "file.h5", object = "/group/dataset"}. The split is at the
// first ":/"; a path without one (including names that contain ':' not followed by '/') is a file
// name with an empty object. Throws kInvalidArgument for ":/x" (no file name).
struct H5Path {
  std::string file;
  std::string object;  // empty: the whole file
};
H5Path parse_h5_path(std::string_view text);

enum class ObjectKind { kNone, kGroup, kDataset };
// "group" / "dataset" / "none".
std::string_view to_string(ObjectKind kind);

// What one object holds (Reader::info, describe). For a CSR/CSC group, shape is its `shape` (or
// `h5sparse_shape`) attribute and dtype the dtype of its data dataset.
struct ObjectInfo {
  std::string path;
  ObjectKind kind = ObjectKind::kNone;
  DType dtype = DType::kNone;
  std::vector<std::int64_t> shape;      // datasets: dataspace dims ({} for a scalar)
  std::string encoding_type;            // the "encoding-type" attribute, if present and a string
  std::vector<std::string> filters;     // datasets: the filter pipeline ("deflate", "lzf", ...)
  std::vector<std::string> attributes;  // attribute names
};

// The largest single read a Reader allocates, in bytes: one dataset or attribute with its
// conversion temporary (about 16 bytes per number, 40 plus the string's length per string).
// Default 0 means physical_memory_bytes() (core/context.h: the machine's memory or its cgroup
// limit). A dataset whose declared shape needs more fails with kBadData naming its element count
// before anything is allocated, so a corrupt file (or one too large for this machine) ends in a
// one-line error instead of an out-of-memory kill. Process-wide; safe to call from any thread (an
// atomic). The fuzz harnesses lower it to their memory budget.
void set_max_read_bytes(std::size_t bytes);
// The limit in force (physical memory when unset; SIZE_MAX when that is unknown).
std::size_t max_read_bytes();

// A read-only open HDF5 file. Opening checks that the file exists and is HDF5. Move-only;
// closing happens in the destructor. Methods are const and may be called in any order.
class Reader {
 public:
  explicit Reader(const std::string& path);
  // Opens an HDF5 file held in memory (the bytes of a whole .h5 / .h5ad file), read-only, without
  // touching the file system: HDF5's core driver reads from a private copy of `bytes`, so the
  // caller's buffer need not outlive the call. `name` stands in for the file name in messages.
  // kBadData when the bytes are not an HDF5 file. Used by the fuzz harnesses (tests/fuzz/) and by
  // callers that receive a file's bytes rather than a path.
  static Reader from_image(std::span<const std::byte> bytes, const std::string& name);
  ~Reader();
  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const;

  // Kind of the object at `object` (kNone if it does not exist; never throws for a missing path).
  ObjectKind kind(std::string_view object) const;
  bool exists(std::string_view object) const { return kind(object) != ObjectKind::kNone; }
  // Names of the children of a group, in name order. kNotFound if the group does not exist.
  std::vector<std::string> list(std::string_view group) const;
  ObjectInfo info(std::string_view object) const;

  // The dataset at `object`, converted to T. expected_rank >= 0 requires that rank (kBadData
  // otherwise). Conversions: any integer or float to float/double (HDF5 rounding); integers to a
  // narrower integer type only when every value fits, and floats to integers only when every value
  // is integral and fits (kBadData naming the first offending value otherwise); bool -> 0/1.
  // O(size) time, the array plus at most one temporary of the same length in memory.
  template <Element T>
  Array<T> read_array(std::string_view object, int expected_rank = -1) const;

  // The CSR group at `object` (anndata "csr_matrix", h5sparse "csr", or a group with data /
  // indices / indptr and a shape attribute). A "csc_matrix" group is converted to CSR (O(nnz)
  // extra memory). Validated as described at CsrArray.
  template <Element T>
  CsrArray<T> read_csr(std::string_view object) const;

  // A 1-D (or scalar) string dataset, fixed- or variable-length, ASCII or UTF-8 (bytes as stored).
  std::vector<std::string> read_strings(std::string_view object) const;
  // A scalar string dataset (or a 1-element 1-D one).
  std::string read_string(std::string_view object) const;

  // Attributes of the object at `object` ("/" for the root).
  bool has_attribute(std::string_view object, std::string_view name) const;
  std::vector<std::string> attribute_names(std::string_view object) const;
  // A scalar or 1-element string attribute.
  std::string read_string_attribute(std::string_view object, std::string_view name) const;
  // A string attribute of any length (scalar -> one element).
  std::vector<std::string> read_string_array_attribute(std::string_view object,
                                                       std::string_view name) const;
  // A numeric attribute (scalar -> shape {}), converted as in read_array.
  template <Element T>
  Array<T> read_attribute(std::string_view object, std::string_view name) const;
  // DType of an attribute (kNotFound if missing).
  DType attribute_dtype(std::string_view object, std::string_view name) const;

  // Every object below `group` (default: the whole file), depth first in name order.
  std::vector<ObjectInfo> describe(std::string_view group = "/") const;

  struct Impl;

 private:
  friend class Writer;
  explicit Reader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Every object in `path` (see Reader::describe).
std::vector<ObjectInfo> describe(const std::string& path);

// How a dataset is stored when written.
struct DatasetOptions {
  // 0: no compression; 1..9: gzip (deflate) level. Compressed datasets are chunked by rows
  // (chunks of about 1 MiB).
  int gzip_level = 0;
  // Only for uint8 data: store as h5py/numpy bool (enum {FALSE, TRUE} over int8); every value
  // must be 0 or 1.
  bool as_bool = false;
};

// How a CSR group's indices and indptr are stored.
enum class IndexWidth {
  kAuto,   // int32 when nnz and cols fit in int32 (what scipy/anndata write), else int64
  kInt32,  // kInvalidArgument if nnz or cols exceed int32
  kInt64,
};

// An output HDF5 file written atomically: everything goes to a temporary file next to the target
// (`<dir>/.<name>.tmp-<pid>-<random>`, see io/temp_file.h: a stale one left by a killed run is
// skipped), and commit() closes, flushes, fsyncs and renames it onto the target. Destroying a
// Writer without commit() removes the temporary file, so an interrupted run never leaves a
// half-written output (nor a stale temporary, short of a crash). Move-only.
//
// Writing to an object path that exists replaces it (the old object is unlinked; HDF5 does not
// reclaim its space, `h5repack` does). Missing parent groups are created.
class Writer {
 public:
  // A new, empty file that will become `path` on commit(). kCannotCreate if the directory of
  // `path` does not exist or is not writable (the message names the directory).
  explicit Writer(const std::string& path);
  // A temporary copy of the existing file `source` (byte for byte, so any compression in it is
  // kept without being decoded) that will become `path` on commit(); `source` may equal `path`.
  static Writer copy_of(const std::string& source, const std::string& path);
  ~Writer();
  Writer(Writer&&) noexcept;
  Writer& operator=(Writer&&) noexcept;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // The target path and the temporary file being written.
  const std::string& path() const;
  const std::string& temp_path() const;

  ObjectKind kind(std::string_view object) const;
  bool exists(std::string_view object) const { return kind(object) != ObjectKind::kNone; }
  std::vector<std::string> list(std::string_view group) const;
  // The same as Reader's, on the file as written so far (used to inspect a copied source).
  Reader& reader();

  // Creates the group (and missing parents) if it does not exist; returns true if it created it.
  // kBadData if a dataset is in the way.
  bool ensure_group(std::string_view group);
  // Unlinks the object if it exists; returns whether it did.
  bool remove(std::string_view object);

  // A dense dataset of shape `shape` (empty: scalar) from row-major `data` (size must match).
  template <Element T>
  void write_array(std::string_view object,
                   std::span<const T> data,
                   std::span<const std::int64_t> shape,
                   const DatasetOptions& options = {});
  template <Element T>
  void write_array(std::string_view object,
                   const Array<T>& array,
                   const DatasetOptions& options = {}) {
    write_array<T>(object, std::span<const T>(array.data), array.shape, options);
  }
  // A scalar dataset.
  template <Element T>
  void write_scalar(std::string_view object, T value) {
    write_array<T>(object, std::span<const T>(&value, 1), {}, {});
  }
  // A group with datasets data, indices, indptr and a `shape` attribute (int64 [rows, cols]), the
  // layout scipy, h5sparse and anndata share. Validates `csr` first (kInvalidArgument).
  // The anndata encoding attributes are added by H5adWriter, not here.
  template <Element T>
  void write_csr(std::string_view group,
                 const CsrArray<T>& csr,
                 IndexWidth width = IndexWidth::kAuto,
                 const DatasetOptions& options = {});
  // 1-D / scalar variable-length UTF-8 string datasets (what h5py and anndata write).
  void write_strings(std::string_view object, std::span<const std::string> values);
  void write_string(std::string_view object, std::string_view value);

  // Attributes on an existing object ("/" for the root); an existing attribute is replaced.
  // Strings are variable-length UTF-8; a string span is a 1-D attribute (even when empty).
  void set_attribute(std::string_view object, std::string_view name, std::string_view value);
  void set_attribute(std::string_view object, std::string_view name, const char* value) {
    set_attribute(object, name, std::string_view(value));
  }
  void set_attribute(std::string_view object,
                     std::string_view name,
                     std::span<const std::string> values);
  // Numeric scalar and 1-D attributes.
  template <Element T>
  void set_attribute(std::string_view object, std::string_view name, T value) {
    set_attribute_array<T>(object, name, std::span<const T>(&value, 1), /*scalar=*/true);
  }
  void set_attribute(std::string_view object, std::string_view name, bool value);
  template <Element T>
  void set_attribute_array(std::string_view object,
                           std::string_view name,
                           std::span<const T> values,
                           bool scalar = false);

  // Closes the file, fsyncs it and renames it onto path(). After commit() the Writer only answers
  // path(); calling any writing method throws kInvalidArgument. kIo / kCannotCreate on failure (the
  // temporary is then removed).
  void commit();
  bool committed() const;

  struct Impl;

 private:
  Writer() = default;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gw::io
