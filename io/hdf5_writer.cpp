// Writer: atomic HDF5 output (temporary file + rename), datasets, CSR groups, strings, attributes.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>
#include <type_traits>

#include "core/error.h"
#include "io/hdf5.h"
#include "io/hdf5_handle_impl.h"
#include "io/temp_file.h"

namespace gw::io {

struct Writer::Impl {
  std::string target;
  std::string temp;
  Reader reader;         // owns the open read-write file; answers lookups
  Reader::Impl* shared;  // reader's state (file handle, messages)
  bool committed = false;

  hid_t file() const { return shared->file.get(); }
  Reader::Impl& state() const { return *shared; }
};

namespace {

using detail::Handle;
using detail::Hdf5Lock;
using detail::normalize_path;

// Checks the target's directory and creates an empty, exclusive temporary file next to it, so
// that a missing or unwritable directory is reported with the OS's reason before HDF5 is involved.
std::string create_output_temp(const std::string& path) {
  namespace fs = std::filesystem;
  GW_CHECK(!path.empty(), "the output path is empty; give a file name such as out.h5");
  const fs::path target(path);
  GW_CHECK(target.has_filename(),
           "output path '" << path << "' names a directory; give a file name such as out.h5");
  const fs::path dir = target.parent_path();
  const std::string dir_text = dir.empty() ? std::string(".") : dir.string();
  std::error_code ec;
  const fs::file_status dir_status = fs::status(dir.empty() ? fs::path(".") : dir, ec);
  if (!fs::exists(dir_status)) {
    GW_THROW(
        ErrorCode::kCannotCreate,
        "cannot create '" << path << "': output directory '" << dir_text << "' does not exist");
  }
  if (!fs::is_directory(dir_status)) {
    GW_THROW(ErrorCode::kCannotCreate,
             "cannot create '" << path << "': '" << dir_text << "' is not a directory");
  }
  if (fs::is_directory(fs::status(target, ec))) {
    GW_THROW(ErrorCode::kCannotCreate, "cannot create '" << path << "': it is a directory");
  }
  return create_temp_file(path);
}

Handle strong_close_fapl() {
  Handle fapl = detail::plist_handle(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
  return fapl;
}

template <typename T>
hid_t file_type() {
  if constexpr (std::is_same_v<T, float>) return H5T_IEEE_F32LE;
  if constexpr (std::is_same_v<T, double>) return H5T_IEEE_F64LE;
  if constexpr (std::is_same_v<T, std::int8_t>) return H5T_STD_I8LE;
  if constexpr (std::is_same_v<T, std::int32_t>) return H5T_STD_I32LE;
  if constexpr (std::is_same_v<T, std::int64_t>) return H5T_STD_I64LE;
  if constexpr (std::is_same_v<T, std::uint8_t>) return H5T_STD_U8LE;
}

template <typename T>
hid_t memory_type() {
  if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  if constexpr (std::is_same_v<T, std::int8_t>) return H5T_NATIVE_INT8;
  if constexpr (std::is_same_v<T, std::int32_t>) return H5T_NATIVE_INT32;
  if constexpr (std::is_same_v<T, std::int64_t>) return H5T_NATIVE_INT64;
  if constexpr (std::is_same_v<T, std::uint8_t>) return H5T_NATIVE_UINT8;
}

// numpy bool as h5py writes it: enum {FALSE = 0, TRUE = 1} over a one-byte integer.
Handle bool_type(hid_t base) {
  Handle type = detail::type_handle(H5Tenum_create(base));
  const std::int8_t false_value = 0;
  const std::int8_t true_value = 1;
  H5Tenum_insert(type.get(), "FALSE", &false_value);
  H5Tenum_insert(type.get(), "TRUE", &true_value);
  return type;
}

Handle vlen_utf8_type() {
  Handle type = detail::type_handle(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

Handle make_space(std::span<const std::int64_t> shape) {
  if (shape.empty()) return detail::space_handle(H5Screate(H5S_SCALAR));
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  return detail::space_handle(
      H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
}

}  // namespace

namespace detail {
std::vector<hsize_t> chunk_shape(std::span<const std::int64_t> shape, std::size_t element_size) {
  std::vector<hsize_t> chunk(shape.begin(), shape.end());
  for (std::size_t d = 0; d < chunk.size(); ++d) {
    double inner = static_cast<double>(element_size);
    for (std::size_t e = d + 1; e < chunk.size(); ++e) inner *= static_cast<double>(chunk[e]);
    const double fit = std::floor(static_cast<double>(kChunkBytes) / inner);
    if (static_cast<double>(chunk[d]) <= fit) break;  // everything from here on fits
    chunk[d] = static_cast<hsize_t>(std::max(1.0, fit));
    // One slice of the inner dimensions alone is over the target (fit < 1, e.g. a 1 x 2^30 row):
    // keep a single index here and go on cutting the inner dimensions, or the chunk exceeds
    // HDF5's 4 GiB limit on chunks.
    if (fit >= 1.0) break;
  }
  return chunk;
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------

Writer::Writer(const std::string& path) {
  Hdf5Lock lock;
  const std::string temp = create_output_temp(path);
  Handle fapl = strong_close_fapl();
  Handle file =
      detail::file_handle(H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
  if (!file.valid()) {
    std::remove(temp.c_str());
    GW_THROW(ErrorCode::kCannotCreate, "cannot create HDF5 file '" << path << "'");
  }
  auto state = std::make_unique<Reader::Impl>();
  state->path = path;
  state->file = std::move(file);
  Reader::Impl* shared = state.get();
  impl_ = std::unique_ptr<Impl>(new Impl{path, temp, Reader(std::move(state)), shared, false});
}

Writer Writer::copy_of(const std::string& source, const std::string& path) {
  Hdf5Lock lock;
  { Reader check(source); }  // kNotFound / kBadData for a missing or non-HDF5 source
  const std::string temp = create_output_temp(path);
  std::error_code ec;
  std::filesystem::copy_file(source, temp, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) {
    std::remove(temp.c_str());
    GW_THROW(ErrorCode::kIo,
             "cannot copy '" << source << "' to '" << temp << "' (" << ec.message() << ")");
  }
  Handle fapl = strong_close_fapl();
  Handle file = detail::file_handle(H5Fopen(temp.c_str(), H5F_ACC_RDWR, fapl.get()));
  if (!file.valid()) {
    std::remove(temp.c_str());
    GW_THROW(ErrorCode::kIo, "cannot open the copy of '" << source << "' for writing");
  }
  auto state = std::make_unique<Reader::Impl>();
  state->path = path;
  state->file = std::move(file);
  Reader::Impl* shared = state.get();
  Writer writer;
  writer.impl_ =
      std::unique_ptr<Impl>(new Impl{path, temp, Reader(std::move(state)), shared, false});
  return writer;
}

Writer::~Writer() {
  if (!impl_) return;
  Hdf5Lock lock;
  if (!impl_->committed) {
    impl_->state().file.reset();
    std::remove(impl_->temp.c_str());
  }
  impl_.reset();
}

Writer::Writer(Writer&&) noexcept = default;
Writer& Writer::operator=(Writer&& other) noexcept {
  if (this != &other) {
    Writer discard(std::move(*this));
    impl_ = std::move(other.impl_);
  }
  return *this;
}

const std::string& Writer::path() const { return impl_->target; }
const std::string& Writer::temp_path() const { return impl_->temp; }
bool Writer::committed() const { return impl_->committed; }

namespace {
// Why a write failed, from the errno that HDF5's POSIX driver left (the callers clear errno first):
// a full disk or a file-size limit names its remedy; "" when no system call failed.
std::string write_failure_reason() {
  const int err = errno;
  if (err == ENOSPC || err == EFBIG || err == EDQUOT) {
    return std::string(": ") + std::strerror(err) +
           " (free disk space, raise the file-size limit, or write elsewhere)";
  }
  return err == 0 ? std::string() : std::string(": ") + std::strerror(err);
}

void check_open(const Writer::Impl& impl) {
  GW_CHECK(!impl.committed,
           "the output '" << impl.target << "' was already committed; create a new Writer");
}
}  // namespace

ObjectKind Writer::kind(std::string_view object) const {
  check_open(*impl_);
  return impl_->reader.kind(object);
}

std::vector<std::string> Writer::list(std::string_view group) const {
  check_open(*impl_);
  return impl_->reader.list(group);
}

Reader& Writer::reader() {
  check_open(*impl_);
  return impl_->reader;
}

bool Writer::ensure_group(std::string_view group) {
  Hdf5Lock lock;
  check_open(*impl_);
  const std::string path = normalize_path(group);
  Reader::Impl& state = impl_->state();
  // Walk down so that a dataset in the way is named, and create what is missing.
  bool created = false;
  std::size_t pos = 1;
  while (path != "/") {
    const std::size_t slash = path.find('/', pos);
    const std::string prefix = path.substr(0, slash);
    const ObjectKind kind = state.kind(prefix);
    if (kind == ObjectKind::kDataset) {
      GW_THROW(ErrorCode::kBadData,
               "cannot create group " << state.where(path) << ": " << prefix << " is a dataset");
    }
    if (kind == ObjectKind::kNone) {
      Handle made = detail::group_handle(
          H5Gcreate2(impl_->file(), prefix.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
      GW_CHECK_CODE(made.valid(), ErrorCode::kIo, "cannot create group " << state.where(prefix));
      created = true;
    }
    if (slash == std::string::npos) break;
    pos = slash + 1;
  }
  return created;
}

bool Writer::remove(std::string_view object) {
  Hdf5Lock lock;
  check_open(*impl_);
  const std::string path = normalize_path(object);
  GW_CHECK(path != "/", "cannot remove the root group of '" << impl_->target << "'");
  if (impl_->state().kind(path) == ObjectKind::kNone) {
    // A dangling link still has a name to free.
    if (impl_->state().kind(detail::parent_path(path)) != ObjectKind::kGroup ||
        H5Lexists(impl_->file(), path.c_str(), H5P_DEFAULT) <= 0) {
      return false;
    }
  }
  GW_CHECK_CODE(H5Ldelete(impl_->file(), path.c_str(), H5P_DEFAULT) >= 0,
                ErrorCode::kIo,
                "cannot remove " << impl_->state().where(path));
  return true;
}

namespace {
// Normalizes `object`, removes what is there and creates the parent groups.
std::string prepare_target(Writer& writer, std::string_view object, const std::string& target) {
  const std::string path = normalize_path(object);
  GW_CHECK(path != "/", "cannot write a dataset or group at the root of '" << target << "'");
  writer.remove(path);
  writer.ensure_group(detail::parent_path(path));
  return path;
}
}  // namespace

template <Element T>
void Writer::write_array(std::string_view object,
                         std::span<const T> data,
                         std::span<const std::int64_t> shape,
                         const DatasetOptions& options) {
  Hdf5Lock lock;
  check_open(*impl_);
  std::int64_t count = 1;
  for (std::int64_t d : shape) {
    GW_CHECK(d >= 0, "write_array('" << object << "'): negative dimension " << d);
    count *= d;
  }
  GW_CHECK(count == static_cast<std::int64_t>(data.size()),
           "write_array('" << object << "'): shape holds " << count << " elements but data has "
                           << data.size());
  GW_CHECK(options.gzip_level >= 0 && options.gzip_level <= 9,
           "DatasetOptions::gzip_level must be in [0, 9], got " << options.gzip_level);
  if (options.as_bool) {
    GW_CHECK((std::is_same_v<T, std::uint8_t>),
             "DatasetOptions::as_bool needs uint8 data (0/1) for '" << object << "'");
    for (std::size_t i = 0; i < data.size(); ++i) {
      GW_CHECK(data[i] == 0 || data[i] == 1,
               "write_array('" << object << "') as bool: value " << static_cast<int>(data[i])
                               << " at position " << i << " is not 0 or 1");
    }
  }
  const std::string path = prepare_target(*this, object, impl_->target);
  Handle space = make_space(shape);
  Handle dcpl = detail::plist_handle(H5Pcreate(H5P_DATASET_CREATE));
  if (options.gzip_level > 0 && count > 0 && !shape.empty()) {
    const std::vector<hsize_t> chunk = detail::chunk_shape(shape, sizeof(T));
    GW_CHECK_CODE(H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()) >= 0 &&
                      H5Pset_deflate(dcpl.get(), static_cast<unsigned>(options.gzip_level)) >= 0,
                  ErrorCode::kIo,
                  "cannot set up gzip chunks for dataset " << impl_->state().where(path)
                                                           << "; write it without compression");
  }
  Handle stored_bool;
  Handle memory_bool;
  hid_t stored = file_type<T>();
  hid_t memory = memory_type<T>();
  if (options.as_bool) {
    stored_bool = bool_type(H5T_STD_I8LE);
    memory_bool = bool_type(H5T_NATIVE_INT8);
    stored = stored_bool.get();
    memory = memory_bool.get();
  }
  Handle dataset = detail::dataset_handle(H5Dcreate2(
      impl_->file(), path.c_str(), stored, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  GW_CHECK_CODE(
      dataset.valid(), ErrorCode::kIo, "cannot create dataset " << impl_->state().where(path));
  if (count > 0) {
    errno = 0;
    GW_CHECK_CODE(H5Dwrite(dataset.get(), memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) >= 0,
                  ErrorCode::kIo,
                  "cannot write dataset " << impl_->state().where(path) << write_failure_reason());
  }
}

template <Element T>
void Writer::write_csr(std::string_view group,
                       const CsrArray<T>& csr,
                       IndexWidth width,
                       const DatasetOptions& options) {
  Hdf5Lock lock;
  check_open(*impl_);
  const std::string problem =
      detail::csr_problem(csr.rows, csr.cols, csr.indptr, csr.indices, csr.data.size());
  GW_CHECK(problem.empty(), "write_csr('" << group << "'): the matrix " << problem);
  const bool fits32 = csr.nnz() <= std::numeric_limits<std::int32_t>::max() &&
                      csr.cols <= std::numeric_limits<std::int32_t>::max();
  GW_CHECK(width != IndexWidth::kInt32 || fits32,
           "write_csr('" << group << "'): IndexWidth::kInt32 cannot hold nnz = " << csr.nnz()
                         << "; use kAuto or kInt64");
  const bool use64 = width == IndexWidth::kInt64 || (width == IndexWidth::kAuto && !fits32);

  const std::string path = prepare_target(*this, group, impl_->target);
  ensure_group(path);
  const std::int64_t shape[2] = {csr.rows, csr.cols};
  set_attribute_array<std::int64_t>(path, "shape", shape);

  const std::int64_t nnz = csr.nnz();
  const std::int64_t pointer_count = csr.rows + 1;
  DatasetOptions index_options = options;
  index_options.as_bool = false;
  write_array<T>(path + "/data", std::span<const T>(csr.data), {&nnz, 1}, options);
  if (use64) {
    const std::vector<std::int64_t> indices(csr.indices.begin(), csr.indices.end());
    write_array<std::int64_t>(
        path + "/indices", std::span<const std::int64_t>(indices), {&nnz, 1}, index_options);
    write_array<std::int64_t>(path + "/indptr",
                              std::span<const std::int64_t>(csr.indptr),
                              {&pointer_count, 1},
                              index_options);
  } else {
    write_array<std::int32_t>(
        path + "/indices", std::span<const std::int32_t>(csr.indices), {&nnz, 1}, index_options);
    const std::vector<std::int32_t> indptr(csr.indptr.begin(), csr.indptr.end());
    write_array<std::int32_t>(path + "/indptr",
                              std::span<const std::int32_t>(indptr),
                              {&pointer_count, 1},
                              index_options);
  }
}

void Writer::write_strings(std::string_view object, std::span<const std::string> values) {
  Hdf5Lock lock;
  check_open(*impl_);
  const std::string path = prepare_target(*this, object, impl_->target);
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const std::string& value : values) pointers.push_back(value.c_str());
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  Handle space = make_space({&n, 1});
  Handle type = vlen_utf8_type();
  Handle dataset = detail::dataset_handle(H5Dcreate2(
      impl_->file(), path.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  GW_CHECK_CODE(
      dataset.valid(), ErrorCode::kIo, "cannot create dataset " << impl_->state().where(path));
  if (n > 0) {
    errno = 0;
    GW_CHECK_CODE(
        H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) >= 0,
        ErrorCode::kIo,
        "cannot write dataset " << impl_->state().where(path) << write_failure_reason());
  }
}

void Writer::write_string(std::string_view object, std::string_view value) {
  Hdf5Lock lock;
  check_open(*impl_);
  const std::string path = prepare_target(*this, object, impl_->target);
  const std::string text(value);
  const char* pointer = text.c_str();
  Handle space = make_space({});
  Handle type = vlen_utf8_type();
  Handle dataset = detail::dataset_handle(H5Dcreate2(
      impl_->file(), path.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  errno = 0;
  GW_CHECK_CODE(
      dataset.valid() &&
          H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &pointer) >= 0,
      ErrorCode::kIo,
      "cannot write dataset " << impl_->state().where(path) << write_failure_reason());
}

namespace {
// Creates attribute `name` on the object (replacing an existing one) and writes `buffer`.
void write_attribute(Writer::Impl& impl,
                     std::string_view object,
                     std::string_view name,
                     hid_t stored,
                     hid_t memory,
                     hid_t space,
                     const void* buffer) {
  const std::string path = normalize_path(object);
  Handle handle = impl.state().open(path, ObjectKind::kNone);
  const std::string attribute_name(name);
  if (H5Aexists(handle.get(), attribute_name.c_str()) > 0) {
    H5Adelete(handle.get(), attribute_name.c_str());
  }
  Handle attribute = detail::attribute_handle(
      H5Acreate2(handle.get(), attribute_name.c_str(), stored, space, H5P_DEFAULT, H5P_DEFAULT));
  // H5Awrite rejects a null buffer even for a zero-length attribute.
  const std::int64_t placeholder = 0;
  if (buffer == nullptr) buffer = &placeholder;
  GW_CHECK_CODE(
      attribute.valid() && H5Awrite(attribute.get(), memory, buffer) >= 0,
      ErrorCode::kIo,
      "cannot write attribute '" << attribute_name << "' of " << impl.state().where(path));
}
}  // namespace

void Writer::set_attribute(std::string_view object, std::string_view name, std::string_view value) {
  Hdf5Lock lock;
  check_open(*impl_);
  const std::string text(value);
  const char* pointer = text.c_str();
  Handle type = vlen_utf8_type();
  Handle space = make_space({});
  write_attribute(*impl_, object, name, type.get(), type.get(), space.get(), &pointer);
}

void Writer::set_attribute(std::string_view object,
                           std::string_view name,
                           std::span<const std::string> values) {
  Hdf5Lock lock;
  check_open(*impl_);
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const std::string& value : values) pointers.push_back(value.c_str());
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  Handle type = vlen_utf8_type();
  Handle space = make_space({&n, 1});
  write_attribute(*impl_, object, name, type.get(), type.get(), space.get(), pointers.data());
}

void Writer::set_attribute(std::string_view object, std::string_view name, bool value) {
  Hdf5Lock lock;
  check_open(*impl_);
  const std::int8_t code = value ? 1 : 0;
  Handle stored = bool_type(H5T_STD_I8LE);
  Handle memory = bool_type(H5T_NATIVE_INT8);
  Handle space = make_space({});
  write_attribute(*impl_, object, name, stored.get(), memory.get(), space.get(), &code);
}

template <Element T>
void Writer::set_attribute_array(std::string_view object,
                                 std::string_view name,
                                 std::span<const T> values,
                                 bool scalar) {
  Hdf5Lock lock;
  check_open(*impl_);
  GW_CHECK(!scalar || values.size() == 1,
           "set_attribute_array('" << name << "'): a scalar attribute needs exactly one value");
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  Handle space = scalar ? make_space({}) : make_space({&n, 1});
  write_attribute(
      *impl_, object, name, file_type<T>(), memory_type<T>(), space.get(), values.data());
}

void Writer::commit() {
  Hdf5Lock lock;
  check_open(*impl_);
  auto fail = [&](ErrorCode code, const std::string& message) {
    impl_->state().file.reset();
    std::remove(impl_->temp.c_str());
    impl_->committed = true;  // nothing left to write or clean up
    GW_THROW(code, message);
  };
  if (H5Fflush(impl_->file(), H5F_SCOPE_GLOBAL) < 0 || !impl_->state().file.close()) {
    fail(ErrorCode::kIo, "cannot flush '" + impl_->target + "' (disk full?)");
  }
  // Make the data durable before the rename makes it visible.
  const int fd = ::open(impl_->temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    fail(ErrorCode::kIo, "cannot sync '" + impl_->temp + "': " + std::strerror(err));
  }
  ::close(fd);
  if (std::rename(impl_->temp.c_str(), impl_->target.c_str()) != 0) {
    const int err = errno;
    fail(ErrorCode::kCannotCreate,
         "cannot rename '" + impl_->temp + "' to '" + impl_->target + "': " + std::strerror(err));
  }
  impl_->committed = true;
}

#define GW_IO_INSTANTIATE(T)                                                                       \
  template void Writer::write_array<T>(                                                            \
      std::string_view, std::span<const T>, std::span<const std::int64_t>, const DatasetOptions&); \
  template void Writer::write_csr<T>(                                                              \
      std::string_view, const CsrArray<T>&, IndexWidth, const DatasetOptions&);                    \
  template void Writer::set_attribute_array<T>(                                                    \
      std::string_view, std::string_view, std::span<const T>, bool);
GW_IO_INSTANTIATE(float)
GW_IO_INSTANTIATE(double)
GW_IO_INSTANTIATE(std::int8_t)
GW_IO_INSTANTIATE(std::int32_t)
GW_IO_INSTANTIATE(std::int64_t)
GW_IO_INSTANTIATE(std::uint8_t)
#undef GW_IO_INSTANTIATE

}  // namespace gw::io
