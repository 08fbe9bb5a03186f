// Private to io/: RAII ownership of HDF5 identifiers, the process-wide HDF5 lock, and the shared
// state of Reader / Writer. Includes hdf5.h, so it must never be included from a public header.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/hdf5.h"

namespace gw::io::detail {

// Holds the process-wide recursive lock around HDF5 for its lifetime; the first one also silences
// HDF5's automatic error-stack printing (every failure becomes a gw::Error instead) and registers
// the LZF decoder. Every public gw::io entry point takes one.
class Hdf5Lock {
 public:
  Hdf5Lock();

 private:
  std::lock_guard<std::recursive_mutex> guard_;
};

// An owned HDF5 identifier, closed with its matching H5?close on destruction. Move-only.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Handle() { reset(); }
  Handle(Handle&& other) noexcept : id_(other.id_), closer_(other.closer_) {
    other.id_ = H5I_INVALID_HID;
  }
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.id_;
      closer_ = other.closer_;
      other.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports whether the close succeeded (files: whether everything was flushed).
  bool close() {
    if (id_ < 0) return true;
    const herr_t status = closer_ ? closer_(id_) : 0;
    id_ = H5I_INVALID_HID;
    return status >= 0;
  }
  void reset() { (void)close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

inline Handle file_handle(hid_t id) { return Handle(id, H5Fclose); }
inline Handle group_handle(hid_t id) { return Handle(id, H5Gclose); }
inline Handle dataset_handle(hid_t id) { return Handle(id, H5Dclose); }
inline Handle object_handle(hid_t id) { return Handle(id, H5Oclose); }
inline Handle attribute_handle(hid_t id) { return Handle(id, H5Aclose); }
inline Handle type_handle(hid_t id) { return Handle(id, H5Tclose); }
inline Handle space_handle(hid_t id) { return Handle(id, H5Sclose); }
inline Handle plist_handle(hid_t id) { return Handle(id, H5Pclose); }

// "/a/b" from "a/b", "/a//b/", ...; "/" for the root or an empty path.
std::string normalize_path(std::string_view object);
// "/a" for "/a/b"; "/" for "/a".
std::string parent_path(const std::string& normalized);

// The DType of an HDF5 datatype.
DType dtype_of(hid_t type);

// Empty if the CSR arrays satisfy the invariants documented at CsrArray, else the first problem
// ("has indptr of length 3; expected rows + 1 = 5"), to be prefixed with what is being checked.
std::string csr_problem(std::int64_t rows,
                        std::int64_t cols,
                        std::span<const Offset> indptr,
                        std::span<const Index> indices,
                        std::size_t data_size);

// The chunk size Writer aims at for compressed datasets.
inline constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
// The chunk dimensions Writer uses for a compressed dataset of `shape` (no dimension 0): cut along
// the leading dimensions first (row blocks of a matrix), and along inner ones only where a single
// index of the outer ones is over kChunkBytes. Every chunk dimension is in [1, shape[d]] and the
// chunk holds at most kChunkBytes (so it is always under HDF5's 4 GiB limit on chunks).
std::vector<hsize_t> chunk_shape(std::span<const std::int64_t> shape, std::size_t element_size);

// Registers gwalign's LZF decoder as HDF5 filter 32000 (idempotent). Returns false if HDF5
// refused the registration.
bool register_lzf_filter();
// Decodes one LZF block (the format of liblzf 3.x, which h5py's LZF filter writes): returns the
// number of bytes written to `out`, or -1 if `out` is too small, or -2 if `in` is corrupt.
std::ptrdiff_t lzf_decode(const std::uint8_t* in,
                          std::size_t in_size,
                          std::uint8_t* out,
                          std::size_t out_size);

}  // namespace gw::io::detail

namespace gw::io {

// Shared by Reader and Writer: an open file plus the user-facing name used in messages.
struct Reader::Impl {
  std::string path;
  detail::Handle file;

  // "'/obsm/x' in 'a.h5ad'"
  std::string where(std::string_view object) const;
  ObjectKind kind(const std::string& normalized) const;
  // Opens a group or dataset; kNotFound (listing the nearest existing group) if missing, kBadData
  // if it is of the other kind. `what` is "dataset", "group" or "object".
  detail::Handle open(const std::string& normalized, ObjectKind expected) const;
  std::vector<std::string> children(hid_t group) const;
  // "(/obsm holds: a, b, c)" for the deepest existing ancestor group of `normalized`.
  std::string nearby(const std::string& normalized) const;
  detail::Handle open_attribute(const std::string& normalized, std::string_view name) const;
  // kUnsupported if the dataset's filter pipeline holds a filter HDF5 cannot decode here.
  void check_filters(hid_t dataset, const std::string& normalized) const;
  ObjectInfo info(const std::string& normalized) const;
};

}  // namespace gw::io
