// Plain HDF5 layer: round trips, conversions, compression, validation errors, atomic output.
// Fixtures that only the HDF5 C API can make (gzip + shuffle, fixed-length strings, an
// unregistered filter) are written with it here; everything else goes through gw::io.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "io/hdf5.h"
#include "io/hdf5_handle_impl.h"
#include "io/temp_file.h"
#include "io_test_util.h"

namespace gw::io {
namespace {

using test::random_csr;
using test::random_values;
using test::TempDir;

// ---------------------------------------------------------------------------------------------
// Round trips

template <typename T>
void write_every_shape(Writer& writer, const std::string& name, Rng& rng) {
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {0}, {17}, {5, 3}, {2, 3, 4}};
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    std::int64_t n = 1;
    for (auto d : shapes[s]) n *= d;
    const std::vector<T> values = random_values<T>(rng, static_cast<std::size_t>(n));
    DatasetOptions plain;
    DatasetOptions gzip;
    gzip.gzip_level = 6;
    writer.write_array<T>("/" + name + "/plain" + std::to_string(s), values, shapes[s], plain);
    writer.write_array<T>("/" + name + "/gzip" + std::to_string(s), values, shapes[s], gzip);
  }
}

template <typename T>
void expect_read_back(const Reader& reader, const std::string& name, Rng& rng, DType stored) {
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {0}, {17}, {5, 3}, {2, 3, 4}};
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    std::int64_t n = 1;
    for (auto d : shapes[s]) n *= d;
    const std::vector<T> values = random_values<T>(rng, static_cast<std::size_t>(n));
    for (const char* variant : {"/plain", "/gzip"}) {
      const std::string path = "/" + name + variant + std::to_string(s);
      const Array<T> array = reader.read_array<T>(path);
      EXPECT_EQ(array.shape, shapes[s]) << path;
      EXPECT_EQ(array.data, values) << path;
      EXPECT_EQ(reader.info(path).dtype, stored) << path;
      EXPECT_EQ(reader.read_array<T>(path, static_cast<int>(shapes[s].size())).data, values);
    }
  }
}

TEST(Hdf5, RoundTripsEveryDtypeAndRankWithAndWithoutGzip) {
  TempDir dir;
  const std::string path = dir.file("types.h5");
  {
    Rng rng(11);
    Writer writer(path);
    write_every_shape<float>(writer, "f32", rng);
    write_every_shape<double>(writer, "f64", rng);
    write_every_shape<std::int8_t>(writer, "i8", rng);
    write_every_shape<std::int32_t>(writer, "i32", rng);
    write_every_shape<std::int64_t>(writer, "i64", rng);
    write_every_shape<std::uint8_t>(writer, "u8", rng);
    writer.commit();
  }
  Reader reader(path);
  Rng rng(11);  // same sequence as the writer's
  expect_read_back<float>(reader, "f32", rng, DType::kFloat32);
  expect_read_back<double>(reader, "f64", rng, DType::kFloat64);
  expect_read_back<std::int8_t>(reader, "i8", rng, DType::kInt8);
  expect_read_back<std::int32_t>(reader, "i32", rng, DType::kInt32);
  expect_read_back<std::int64_t>(reader, "i64", rng, DType::kInt64);
  expect_read_back<std::uint8_t>(reader, "u8", rng, DType::kUInt8);
  // Compressed datasets really are compressed (chunked with deflate).
  const ObjectInfo info = reader.info("/f64/gzip3");
  EXPECT_EQ(info.filters, std::vector<std::string>{"deflate"});
  EXPECT_TRUE(reader.info("/f64/plain3").filters.empty());
}

TEST(Hdf5, LargeGzipDatasetRoundTripsAcrossManyChunks) {
  // 3000 x 200 doubles = 4.8 MB: several ~1 MiB row-block chunks, plus a partial last chunk.
  TempDir dir;
  const std::string path = dir.file("big.h5");
  Rng rng(5);
  const std::vector<double> values = random_values<double>(rng, 3000 * 200);
  {
    Writer writer(path);
    DatasetOptions options;
    options.gzip_level = 1;
    const std::int64_t shape[2] = {3000, 200};
    writer.write_array<double>("/m", values, shape, options);
    writer.commit();
  }
  const Array<double> back = Reader(path).read_array<double>("m", 2);
  EXPECT_EQ(back.shape, (std::vector<std::int64_t>{3000, 200}));
  EXPECT_EQ(back.data, values);
}

// Compressed datasets are chunked at about kChunkBytes: leading dimensions are cut first, and inner
// ones too where one index of the outer ones is already over the target. A 1 x 2^30 float64 row
// used to get the whole 8 GiB row as one chunk, over HDF5's 4 GiB limit.
TEST(Hdf5, ChunkShapeStaysUnderTheTargetAndCutsLeadingDimensionsFirst) {
  struct Case {
    std::vector<std::int64_t> shape;
    std::size_t element_size;
  };
  const std::vector<Case> cases = {
      {{1, std::int64_t{1} << 30}, 8},
      {{std::int64_t{1} << 30, 1}, 8},
      {{3, 5, std::int64_t{1} << 28}, 4},
      {{2, std::int64_t{1} << 21, 3}, 8},
      {{std::int64_t{1} << 20, 3}, 8},
      {{std::int64_t{1} << 40}, 1},
      {{100, 4}, 8},
      {{7}, 2},
  };
  for (const Case& c : cases) {
    const std::vector<hsize_t> chunk = detail::chunk_shape(c.shape, c.element_size);
    ASSERT_EQ(chunk.size(), c.shape.size());
    double bytes = static_cast<double>(c.element_size);
    for (std::size_t d = 0; d < chunk.size(); ++d) {
      EXPECT_GE(chunk[d], 1u) << "dimension " << d << " of case " << &c - cases.data();
      EXPECT_LE(chunk[d], static_cast<hsize_t>(c.shape[d])) << "case " << &c - cases.data();
      bytes *= static_cast<double>(chunk[d]);
    }
    EXPECT_LE(bytes, static_cast<double>(detail::kChunkBytes)) << "case " << &c - cases.data();
  }
  using Chunk = std::vector<hsize_t>;
  EXPECT_EQ(detail::chunk_shape(cases[0].shape, 8), (Chunk{1, 131072}));
  EXPECT_EQ(detail::chunk_shape(cases[2].shape, 4), (Chunk{1, 1, 262144}));
  EXPECT_EQ(detail::chunk_shape(cases[3].shape, 8), (Chunk{1, 43690, 3}));
  EXPECT_EQ(detail::chunk_shape(cases[4].shape, 8), (Chunk{43690, 3}));  // row blocks
  EXPECT_EQ(detail::chunk_shape(cases[6].shape, 8), (Chunk{100, 4}));    // small: one chunk

  // The Writer uses it: a 1 x 2^18 float64 row (2 MiB) is stored in 1 MiB chunks.
  TempDir dir;
  const std::string path = dir.file("row.h5");
  const std::int64_t n = std::int64_t{1} << 18;
  const std::vector<double> values(static_cast<std::size_t>(n), 0.5);
  {
    Writer writer(path);
    DatasetOptions gzip;
    gzip.gzip_level = 1;
    writer.write_array<double>("/row", values, std::vector<std::int64_t>{1, n}, gzip);
    writer.commit();
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t dataset = H5Dopen2(file, "/row", H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(dataset);
  hsize_t stored[2] = {0, 0};
  EXPECT_EQ(H5Pget_chunk(dcpl, 2, stored), 2);
  H5Pclose(dcpl);
  H5Dclose(dataset);
  H5Fclose(file);
  EXPECT_EQ(stored[0], 1u);
  EXPECT_EQ(stored[1], 131072u);
  EXPECT_EQ(Reader(path).read_array<double>("/row").data, values);
}

TEST(Hdf5, BoolRoundTripsAsH5pyEnumAndReadsAsZeroOne) {
  TempDir dir;
  const std::string path = dir.file("bool.h5");
  Rng rng(3);
  std::vector<std::uint8_t> mask(40);
  for (auto& m : mask) m = static_cast<std::uint8_t>(rng.uniform_index(2));
  {
    Writer writer(path);
    DatasetOptions options;
    options.as_bool = true;
    const std::int64_t shape[2] = {4, 10};
    writer.write_array<std::uint8_t>("/mask", mask, shape, options);
    writer.set_attribute("/mask", "flag", true);
    writer.commit();
  }
  Reader reader(path);
  EXPECT_EQ(reader.info("/mask").dtype, DType::kBool);
  EXPECT_EQ(reader.read_array<std::uint8_t>("/mask").data, mask);
  const Array<std::int32_t> as_int = reader.read_array<std::int32_t>("/mask");
  EXPECT_TRUE(std::equal(as_int.data.begin(), as_int.data.end(), mask.begin()));
  EXPECT_EQ(reader.attribute_dtype("/mask", "flag"), DType::kBool);
  EXPECT_EQ(reader.read_attribute<std::uint8_t>("/mask", "flag").data,
            std::vector<std::uint8_t>{1});
}

TEST(Hdf5, BoolRejectsValuesOtherThanZeroAndOne) {
  TempDir dir;
  Writer writer(dir.file("bad_bool.h5"));
  DatasetOptions options;
  options.as_bool = true;
  const std::vector<std::uint8_t> values = {0, 1, 2};
  const std::int64_t shape[1] = {3};
  EXPECT_GW_ERROR(writer.write_array<std::uint8_t>("/b", values, shape, options),
                  ErrorCode::kInvalidArgument,
                  "value 2 at position 2");
  const std::vector<float> floats = {0.0f};
  const std::int64_t one[1] = {1};
  EXPECT_GW_ERROR(writer.write_array<float>("/f", floats, one, options),
                  ErrorCode::kInvalidArgument,
                  "as_bool needs uint8");
}

TEST(Hdf5, StringsRoundTripAsVariableLengthUtf8) {
  TempDir dir;
  const std::string path = dir.file("strings.h5");
  const std::vector<std::string> names = {"cell-0", "", "Zelle-ä", "細胞", std::string(300, 'x')};
  {
    Writer writer(path);
    writer.write_strings("/names", names);
    writer.write_strings("/empty", std::vector<std::string>{});
    writer.write_string("/note", "hello — world");
    writer.set_attribute("/names", "kind", "obs names");
    writer.set_attribute("/names", "order", std::vector<std::string>{"b", "a", "ü"});
    writer.set_attribute("/", "empty-list", std::vector<std::string>{});
    writer.commit();
  }
  Reader reader(path);
  EXPECT_EQ(reader.read_strings("/names"), names);
  EXPECT_TRUE(reader.read_strings("/empty").empty());
  EXPECT_EQ(reader.read_string("/note"), "hello — world");
  EXPECT_EQ(reader.info("/names").dtype, DType::kString);
  EXPECT_EQ(reader.read_string_attribute("/names", "kind"), "obs names");
  EXPECT_EQ(reader.read_string_array_attribute("/names", "order"),
            (std::vector<std::string>{"b", "a", "ü"}));
  EXPECT_TRUE(reader.read_string_array_attribute("/", "empty-list").empty());
}

TEST(Hdf5, NumericAttributesRoundTripAndReplace) {
  TempDir dir;
  const std::string path = dir.file("attrs.h5");
  {
    Writer writer(path);
    writer.ensure_group("/report");
    writer.set_attribute("/report", "cost", 0.125);
    writer.set_attribute("/report", "iterations", std::int64_t{300});
    writer.set_attribute("/report", "threads", 2);
    writer.set_attribute("/report", "cost", 0.25);  // replaces
    const std::vector<float> eps = {1e-3f, 5e-4f};
    writer.set_attribute_array<float>("/report", "eps", eps);
    writer.commit();
  }
  Reader reader(path);
  const Array<double> cost = reader.read_attribute<double>("/report", "cost");
  EXPECT_TRUE(cost.shape.empty());
  EXPECT_EQ(cost.data, std::vector<double>{0.25});
  EXPECT_EQ(reader.read_attribute<std::int64_t>("/report", "iterations").data,
            std::vector<std::int64_t>{300});
  EXPECT_EQ(reader.attribute_dtype("/report", "threads"), DType::kInt32);
  EXPECT_EQ(reader.read_attribute<float>("/report", "eps").data,
            (std::vector<float>{1e-3f, 5e-4f}));
  const std::vector<std::string> names = reader.attribute_names("/report");
  EXPECT_EQ(names, (std::vector<std::string>{"cost", "eps", "iterations", "threads"}));
  EXPECT_TRUE(reader.has_attribute("/report", "eps"));
  EXPECT_FALSE(reader.has_attribute("/report", "nope"));
}

TEST(Hdf5, ConvertsBetweenStoredAndRequestedTypes) {
  TempDir dir;
  const std::string path = dir.file("convert.h5");
  const std::vector<std::int32_t> ints = {-3, 0, 7, 1 << 20};
  const std::vector<double> integral = {-2.0, 0.0, 5.0, 1e9};
  const std::vector<std::int64_t> big = {1, std::int64_t{1} << 40};
  const std::vector<double> fractional = {1.0, 2.5};
  const std::vector<std::uint8_t> bytes = {0, 200, 255};
  {
    Writer writer(path);
    writer.write_array<std::int32_t>("/ints", ints, std::vector<std::int64_t>{4});
    writer.write_array<double>("/integral", integral, std::vector<std::int64_t>{4});
    writer.write_array<std::int64_t>("/big", big, std::vector<std::int64_t>{2});
    writer.write_array<double>("/fractional", fractional, std::vector<std::int64_t>{2});
    writer.write_array<std::uint8_t>("/bytes", bytes, std::vector<std::int64_t>{3});
    writer.commit();
  }
  Reader reader(path);
  EXPECT_EQ(reader.read_array<double>("/ints").data, (std::vector<double>{-3, 0, 7, 1 << 20}));
  EXPECT_EQ(reader.read_array<float>("/ints").data, (std::vector<float>{-3, 0, 7, 1 << 20}));
  EXPECT_EQ(reader.read_array<std::int64_t>("/ints").data,
            (std::vector<std::int64_t>{-3, 0, 7, 1 << 20}));
  EXPECT_EQ(reader.read_array<std::int32_t>("/integral").data,
            (std::vector<std::int32_t>{-2, 0, 5, 1000000000}));
  EXPECT_EQ(reader.read_array<std::int32_t>("/bytes").data,
            (std::vector<std::int32_t>{0, 200, 255}));
  EXPECT_EQ(reader.read_array<float>("/big").data[1], static_cast<float>(std::int64_t{1} << 40));
  EXPECT_GW_ERROR(reader.read_array<std::int32_t>("/big"),
                  ErrorCode::kBadData,
                  "/big",
                  "1099511627776",
                  "flat position 1",
                  "int32");
  EXPECT_GW_ERROR(reader.read_array<std::int64_t>("/fractional"),
                  ErrorCode::kBadData,
                  "/fractional",
                  "2.5",
                  "not an integer");
  EXPECT_GW_ERROR(
      reader.read_array<std::int8_t>("/bytes"), ErrorCode::kBadData, "value 200", "int8");
  EXPECT_GW_ERROR(
      reader.read_array<std::uint8_t>("/ints"), ErrorCode::kBadData, "value -3", "uint8");
}

// ---------------------------------------------------------------------------------------------
// CSR

TEST(Hdf5, CsrRoundTripsWithInt32AndInt64Indices) {
  TempDir dir;
  const std::string path = dir.file("csr.h5");
  Rng rng(21);
  const CsrArray<double> csr = random_csr<double>(rng, 40, 70, 0.1);
  const CsrArray<float> csr_f = random_csr<float>(rng, 1, 5, 0.5);
  CsrArray<std::int64_t> empty;
  empty.rows = 3;
  empty.cols = 4;
  empty.indptr = {0, 0, 0, 0};
  {
    Writer writer(path);
    writer.write_csr<double>("/g32", csr, IndexWidth::kInt32);
    writer.write_csr<double>("/g64", csr, IndexWidth::kInt64);
    writer.write_csr<double>("/gauto", csr);
    DatasetOptions gzip;
    gzip.gzip_level = 4;
    writer.write_csr<float>("/nested/gz", csr_f, IndexWidth::kAuto, gzip);
    writer.write_csr<std::int64_t>("/empty", empty);
    writer.commit();
  }
  Reader reader(path);
  EXPECT_EQ(reader.info("/g32/indices").dtype, DType::kInt32);
  EXPECT_EQ(reader.info("/g32/indptr").dtype, DType::kInt32);
  EXPECT_EQ(reader.info("/g64/indices").dtype, DType::kInt64);
  EXPECT_EQ(reader.info("/g64/indptr").dtype, DType::kInt64);
  EXPECT_EQ(reader.info("/gauto/indices").dtype, DType::kInt32);
  EXPECT_EQ(reader.read_attribute<std::int64_t>("/g32", "shape").data,
            (std::vector<std::int64_t>{40, 70}));
  for (const char* name : {"/g32", "/g64", "/gauto"}) {
    const CsrArray<double> back = reader.read_csr<double>(name);
    EXPECT_EQ(back.rows, csr.rows) << name;
    EXPECT_EQ(back.cols, csr.cols) << name;
    EXPECT_EQ(back.indptr, csr.indptr) << name;
    EXPECT_EQ(back.indices, csr.indices) << name;
    EXPECT_EQ(back.data, csr.data) << name;
  }
  const CsrArray<float> back_f = reader.read_csr<float>("/nested/gz");
  EXPECT_EQ(back_f.data, csr_f.data);
  EXPECT_EQ(back_f.indices, csr_f.indices);
  EXPECT_EQ(reader.info("/nested/gz/data").filters, std::vector<std::string>{"deflate"});
  const CsrArray<double> back_empty = reader.read_csr<double>("/empty");
  EXPECT_EQ(back_empty.rows, 3);
  EXPECT_EQ(back_empty.nnz(), 0);
  EXPECT_EQ(back_empty.indptr, (std::vector<Offset>{0, 0, 0, 0}));
}

TEST(Hdf5, CscGroupIsConvertedToCsr) {
  TempDir dir;
  const std::string path = dir.file("csc.h5");
  Rng rng(8);
  // A random CSR matrix A (9 x 6); its transpose's CSR arrays are A's CSC arrays.
  const CsrArray<double> transpose = random_csr<double>(rng, 6, 9, 0.3);
  {
    Writer writer(path);
    writer.ensure_group("/m");
    writer.set_attribute("/m", "encoding-type", "csc_matrix");
    const std::int64_t shape[2] = {9, 6};
    writer.set_attribute_array<std::int64_t>("/m", "shape", shape);
    writer.write_array<double>(
        "/m/data", transpose.data, std::vector<std::int64_t>{transpose.nnz()});
    writer.write_array<std::int32_t>(
        "/m/indices", transpose.indices, std::vector<std::int64_t>{transpose.nnz()});
    writer.write_array<std::int64_t>("/m/indptr", transpose.indptr, std::vector<std::int64_t>{7});
    writer.commit();
  }
  const CsrArray<double> csr = Reader(path).read_csr<double>("/m");
  EXPECT_EQ(csr.rows, 9);
  EXPECT_EQ(csr.cols, 6);
  const std::vector<double> dense_t = test::csr_to_dense(transpose);
  const std::vector<double> dense = test::csr_to_dense(csr);
  for (int i = 0; i < 9; ++i) {
    for (int j = 0; j < 6; ++j) EXPECT_EQ(dense[i * 6 + j], dense_t[j * 9 + i]);
  }
  for (std::int64_t i = 0; i < csr.rows; ++i) {  // rows come out sorted by column
    EXPECT_TRUE(std::is_sorted(csr.indices.begin() + csr.indptr[i],
                               csr.indices.begin() + csr.indptr[i + 1]));
  }
}

// A CSC group's columns become the CSR result's column indices (int32): more than 2^31 - 1 of them
// is refused from the shape attribute, before anything is read (they used to wrap after the
// conversion). Its rows are indices already and were checked before.
TEST(Hdf5, CscGroupWithMoreThanInt32MaxColumnsIsUnsupported) {
  TempDir dir;
  const std::string path = dir.file("wide_csc.h5");
  {
    Writer writer(path);
    for (const char* group : {"/wide", "/tall"}) {
      writer.ensure_group(group);
      writer.set_attribute(group, "encoding-type", "csc_matrix");
      writer.write_array<double>(
          std::string(group) + "/data", std::vector<double>{}, std::vector<std::int64_t>{0});
      writer.write_array<std::int32_t>(std::string(group) + "/indices",
                                       std::vector<std::int32_t>{},
                                       std::vector<std::int64_t>{0});
      writer.write_array<std::int64_t>(std::string(group) + "/indptr",
                                       std::vector<std::int64_t>{0, 0, 0},
                                       std::vector<std::int64_t>{3});
    }
    const std::int64_t wide[2] = {2, std::int64_t{1} << 31};
    writer.set_attribute_array<std::int64_t>("/wide", "shape", wide);
    const std::int64_t tall[2] = {std::int64_t{1} << 31, 2};
    writer.set_attribute_array<std::int64_t>("/tall", "shape", tall);
    writer.commit();
  }
  const Reader reader(path);
  EXPECT_GW_ERROR(reader.read_csr<double>("/wide"),
                  ErrorCode::kUnsupported,
                  "'/wide' in '" + path + "'",
                  "2147483648 columns",
                  "at most 2^31 - 1");
  EXPECT_GW_ERROR(
      reader.read_csr<double>("/tall"), ErrorCode::kUnsupported, "'/tall'", "2147483648 rows");
}

// Writes a CSR group from raw arrays, bypassing Writer::write_csr's validation.
void write_raw_csr(Writer& writer,
                   const std::string& group,
                   std::vector<std::int64_t> shape,
                   const std::vector<std::int64_t>& indptr,
                   const std::vector<std::int64_t>& indices,
                   const std::vector<double>& data) {
  writer.ensure_group(group);
  writer.set_attribute(group, "encoding-type", "csr_matrix");
  if (!shape.empty()) writer.set_attribute_array<std::int64_t>(group, "shape", shape);
  writer.write_array<std::int64_t>(
      group + "/indptr", indptr, std::vector<std::int64_t>{std::int64_t(indptr.size())});
  writer.write_array<std::int64_t>(
      group + "/indices", indices, std::vector<std::int64_t>{std::int64_t(indices.size())});
  writer.write_array<double>(
      group + "/data", data, std::vector<std::int64_t>{std::int64_t(data.size())});
}

TEST(Hdf5, InvalidCsrGroupsAreRejectedNamingGroupAndPosition) {
  TempDir dir;
  const std::string path = dir.file("bad_csr.h5");
  {
    Writer writer(path);
    write_raw_csr(writer, "/nonmonotone", {3, 4}, {0, 2, 1, 3}, {0, 1, 2}, {1, 1, 1});
    write_raw_csr(writer, "/out_of_range", {2, 4}, {0, 2, 3}, {0, 3, 4}, {1, 1, 1});
    write_raw_csr(writer, "/negative", {2, 4}, {0, 1, 2}, {0, -1}, {1, 1});
    write_raw_csr(writer, "/short_indptr", {3, 4}, {0, 1, 2}, {0, 1}, {1, 1});
    write_raw_csr(writer, "/bad_end", {2, 4}, {0, 1, 3}, {0, 1}, {1, 1});
    write_raw_csr(writer, "/data_length", {2, 4}, {0, 1, 2}, {0, 1}, {1, 1, 1});
    write_raw_csr(writer, "/no_shape", {}, {0, 1}, {0}, {1});
    writer.set_attribute("/no_shape", "encoding-type", "csr_matrix");
    write_raw_csr(writer, "/dataframe", {1, 1}, {0, 1}, {0}, {1});
    writer.set_attribute("/dataframe", "encoding-type", "dataframe");
    writer.ensure_group("/missing_member");
    writer.set_attribute("/missing_member", "encoding-type", "csr_matrix");
    writer.set_attribute_array<std::int64_t>(
        "/missing_member", "shape", std::vector<std::int64_t>{1, 1});
    writer.write_array<std::int64_t>(
        "/missing_member/indptr", std::vector<std::int64_t>{0, 0}, std::vector<std::int64_t>{2});
    writer.commit();
  }
  Reader reader(path);
  EXPECT_GW_ERROR(reader.read_csr<double>("/nonmonotone"),
                  ErrorCode::kBadData,
                  "'/nonmonotone' in '" + path + "'",
                  "indptr[2] = 1 < indptr[1] = 2");
  EXPECT_GW_ERROR(reader.read_csr<double>("/out_of_range"),
                  ErrorCode::kBadData,
                  "/out_of_range",
                  "indices[2] = 4 (row 1) outside [0, 4)");
  EXPECT_GW_ERROR(
      reader.read_csr<double>("/negative"), ErrorCode::kBadData, "indices[1] = -1 (row 1)");
  EXPECT_GW_ERROR(reader.read_csr<double>("/short_indptr"),
                  ErrorCode::kBadData,
                  "indptr of length 3; expected rows + 1 = 4");
  EXPECT_GW_ERROR(
      reader.read_csr<double>("/bad_end"), ErrorCode::kBadData, "indptr[2] = 3 but 2 indices");
  EXPECT_GW_ERROR(
      reader.read_csr<double>("/data_length"), ErrorCode::kBadData, "3 data values but 2");
  EXPECT_GW_ERROR(
      reader.read_csr<double>("/no_shape"), ErrorCode::kBadData, "/no_shape", "no 'shape'");
  EXPECT_GW_ERROR(
      reader.read_csr<double>("/dataframe"), ErrorCode::kBadData, "encoding-type 'dataframe'");
  EXPECT_GW_ERROR(reader.read_csr<double>("/missing_member"),
                  ErrorCode::kNotFound,
                  "'/missing_member/data' not found",
                  "holds: indptr");
}

TEST(Hdf5, WriteCsrValidatesItsInput) {
  TempDir dir;
  Writer writer(dir.file("w.h5"));
  CsrArray<double> csr;
  csr.rows = 2;
  csr.cols = 3;
  csr.indptr = {0, 1, 2};
  csr.indices = {0, 3};
  csr.data = {1.0, 2.0};
  EXPECT_GW_ERROR(writer.write_csr<double>("/g", csr),
                  ErrorCode::kInvalidArgument,
                  "indices[1] = 3 (row 1) outside [0, 3)");
  csr.indices = {0, 2};
  EXPECT_NO_THROW(writer.write_csr<double>("/g", csr));
  validate_csr(csr, "ok");
  csr.indptr = {0, 2, 1};
  EXPECT_GW_ERROR(validate_csr(csr, "plan"), ErrorCode::kBadData, "plan has decreasing indptr");
}

// ---------------------------------------------------------------------------------------------
// Fixtures written with the HDF5 C API

// Writes `values` (n x 4 doubles) with chunking, shuffle and gzip.
void write_gzip_with_c_api(const std::string& path, const std::vector<double>& values) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hsize_t dims[2] = {values.size() / 4, 4};
  const hsize_t chunk[2] = {7, 4};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_shuffle(dcpl);
  H5Pset_deflate(dcpl, 9);
  const hid_t group = H5Gcreate2(file, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t dataset =
      H5Dcreate2(group, "packed", H5T_IEEE_F64BE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  H5Dclose(dataset);
  H5Gclose(group);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
}

TEST(Hdf5, ReadsGzipShuffleBigEndianDatasetWrittenWithCApi) {
  TempDir dir;
  const std::string path = dir.file("gzip.h5");
  Rng rng(99);
  const std::vector<double> values = random_values<double>(rng, 50 * 4);
  write_gzip_with_c_api(path, values);
  Reader reader(path);
  EXPECT_EQ(reader.info("/g/packed").filters, (std::vector<std::string>{"shuffle", "deflate"}));
  const Array<double> back = reader.read_array<double>("g/packed", 2);
  EXPECT_EQ(back.shape, (std::vector<std::int64_t>{50, 4}));
  EXPECT_EQ(back.data, values);
  const Array<float> as_float = reader.read_array<float>("/g/packed");
  for (std::size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(as_float.data[i], static_cast<float>(values[i]));
  }
}

TEST(Hdf5, ReadsFixedLengthStringsWithEveryPadding) {
  TempDir dir;
  const std::string path = dir.file("fixed.h5");
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t n = 3;
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    struct Case {
      const char* name;
      H5T_str_t pad;
      const char data[3][6];
    };
    const Case cases[] = {
        {"nullterm", H5T_STR_NULLTERM, {"ab", "cdefg", ""}},
        {"nullpad", H5T_STR_NULLPAD, {"ab", "cdefg", ""}},
        {"spacepad", H5T_STR_SPACEPAD, {"ab   ", "cdefg", "     "}},
    };
    for (const Case& c : cases) {
      const hid_t type = H5Tcopy(H5T_C_S1);
      H5Tset_size(type, 6);
      H5Tset_strpad(type, c.pad);
      const hid_t dataset =
          H5Dcreate2(file, c.name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      ASSERT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, c.data), 0);
      const hid_t scalar = H5Screate(H5S_SCALAR);
      const hid_t attribute = H5Acreate2(dataset, "label", type, scalar, H5P_DEFAULT, H5P_DEFAULT);
      ASSERT_GE(H5Awrite(attribute, type, c.data[1]), 0);
      H5Aclose(attribute);
      H5Sclose(scalar);
      H5Dclose(dataset);
      H5Tclose(type);
    }
    H5Sclose(space);
    H5Fclose(file);
  }
  Reader reader(path);
  for (const char* name : {"nullterm", "nullpad", "spacepad"}) {
    EXPECT_EQ(reader.read_strings(name), (std::vector<std::string>{"ab", "cdefg", ""})) << name;
    EXPECT_EQ(reader.read_string_attribute(name, "label"), "cdefg") << name;
  }
}

// A stand-in for a real third-party filter (blosc's id): registered only while writing, so that
// reading sees a filter this process cannot decode, exactly as with a file from PyTables.
constexpr H5Z_filter_t kForeignFilterId = 32001;
size_t xor_filter(unsigned, size_t, const unsigned[], size_t nbytes, size_t*, void** buf) {
  auto* bytes = static_cast<unsigned char*>(*buf);
  for (size_t i = 0; i < nbytes; ++i) bytes[i] ^= 0x5a;
  return nbytes;
}

TEST(Hdf5, RejectsUndecodableFilterNamingDatasetAndFilter) {
  TempDir dir;
  const std::string path = dir.file("foreign.h5");
  {
    const H5Z_class2_t foreign = {
        H5Z_CLASS_T_VERS, kForeignFilterId, 1, 1, "blosc", nullptr, nullptr, xor_filter};
    ASSERT_GE(H5Zregister(&foreign), 0);
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t n = 64;
    const hsize_t chunk = 16;
    const hid_t space = H5Screate_simple(1, &n, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    ASSERT_GE(H5Pset_filter(dcpl, kForeignFilterId, H5Z_FLAG_MANDATORY, 0, nullptr), 0);
    const hid_t group = H5Gcreate2(file, "obsm", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t dataset =
        H5Dcreate2(group, "packed", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    std::vector<double> values(n, 1.5);
    ASSERT_GE(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()),
              0);
    H5Dclose(dataset);
    H5Gclose(group);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(file);
    ASSERT_GE(H5Zunregister(kForeignFilterId), 0);
  }
  Reader reader(path);
  EXPECT_EQ(reader.info("/obsm/packed").filters, std::vector<std::string>{"blosc"});
  EXPECT_GW_ERROR(reader.read_array<double>("/obsm/packed"),
                  ErrorCode::kUnsupported,
                  "'/obsm/packed' in '" + path + "'",
                  "filter 'blosc' (id 32001)");
  EXPECT_GW_ERROR(reader.read_strings("/obsm/packed"), ErrorCode::kUnsupported, "'blosc'");
}

// ---------------------------------------------------------------------------------------------
// LZF decoder (format: liblzf 3.x; see io/lzf_filter.cpp)

std::vector<std::uint8_t> lzf(const std::vector<std::uint8_t>& in, std::size_t out_size) {
  std::vector<std::uint8_t> out(out_size);
  const std::ptrdiff_t n = detail::lzf_decode(in.data(), in.size(), out.data(), out.size());
  if (n < 0) return {static_cast<std::uint8_t>(-n)};  // 1: output too small, 2: corrupt
  out.resize(static_cast<std::size_t>(n));
  return out;
}

TEST(Hdf5, LzfDecoderHandlesLiteralsBackReferencesAndErrors) {
  // Literal run of 3 ("abc"), then a back reference of length 5 at distance 3 (overlapping:
  // "abcab"), then a long reference: control 0xE0 | 0 (length field 7, distance high bits 0),
  // extension byte 3 -> length 7 + 3 + 2 = 12, distance byte 0 -> distance 1 (repeat last byte).
  const std::vector<std::uint8_t> stream = {2, 'a', 'b', 'c', (3 << 5) | 0, 2, 0xE0, 3, 0};
  const std::vector<std::uint8_t> expected = {'a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'b', 'b',
                                              'b', 'b', 'b', 'b', 'b', 'b', 'b', 'b', 'b', 'b'};
  EXPECT_EQ(lzf(stream, 64), expected);
  EXPECT_EQ(lzf(stream, expected.size()), expected);
  EXPECT_EQ(lzf(stream, expected.size() - 1), std::vector<std::uint8_t>{1});  // too small
  // Truncated literal, back reference before the start, missing distance byte.
  EXPECT_EQ(lzf({5, 'a', 'b'}, 64), std::vector<std::uint8_t>{2});
  EXPECT_EQ(lzf({0, 'a', (1 << 5), 4}, 64), std::vector<std::uint8_t>{2});
  EXPECT_EQ(lzf({0, 'a', (1 << 5)}, 64), std::vector<std::uint8_t>{2});
  EXPECT_TRUE(lzf({}, 8).empty());
}

// Writes a 16-element int32 dataset in one chunk (64 bytes) whose stored bytes are `stream`, with
// LZF as h5py records it (cd_values[2] = the chunk's size), bypassing any encoder.
void write_lzf_chunk(hid_t file, const char* name, const std::vector<std::uint8_t>& stream) {
  const hsize_t n = 16;
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &n);
  const unsigned cd_values[3] = {4, 3, 64};  // h5py: filter revision, LZF version, chunk bytes
  ASSERT_GE(H5Pset_filter(dcpl, 32000, H5Z_FLAG_OPTIONAL, 3, cd_values), 0);
  const hid_t dataset =
      H5Dcreate2(file, name, H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ASSERT_GE(dataset, 0);
  const hsize_t offset = 0;
  ASSERT_GE(H5Dwrite_chunk(dataset, H5P_DEFAULT, 0, &offset, stream.size(), stream.data()), 0);
  H5Dclose(dataset);
  H5Pclose(dcpl);
  H5Sclose(space);
}

// Every LZF chunk must decode to the chunk's size: one that decodes short used to be accepted, and
// HDF5 handed the undecoded rest of the chunk buffer (uninitialised memory) back as data.
TEST(Hdf5, LzfChunkThatDecodesToTheWrongSizeIsAReadFailure) {
  TempDir dir;
  const std::string path = dir.file("lzf_short.h5");
  std::vector<std::int32_t> values(16);
  for (int i = 0; i < 16; ++i) values[i] = 1000 + i;
  std::vector<std::uint8_t> bytes(64);
  std::memcpy(bytes.data(), values.data(), 64);  // little-endian, as stored
  // Two literal runs of 32 bytes: exactly the chunk.
  std::vector<std::uint8_t> full = {31};
  full.insert(full.end(), bytes.begin(), bytes.begin() + 32);
  full.push_back(31);
  full.insert(full.end(), bytes.begin() + 32, bytes.end());
  // The first run alone: 32 of the chunk's 64 bytes.
  const std::vector<std::uint8_t> half(full.begin(), full.begin() + 33);
  // Both runs and a back reference of 8 more bytes: 72 bytes, past the chunk.
  std::vector<std::uint8_t> longer = full;
  longer.insert(longer.end(), {(6 << 5) | 0, 7});
  {
    // HDF5 creates a dataset only with a filter that can encode: a stand-in with LZF's id (never
    // run, as the chunks are written raw) is registered while writing, then gwalign's decoder.
    const detail::Hdf5Lock lock;
    const H5Z_class2_t stand_in = {
        H5Z_CLASS_T_VERS, 32000, 1, 1, "lzf", nullptr, nullptr, xor_filter};
    ASSERT_GE(H5Zregister(&stand_in), 0);
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    write_lzf_chunk(file, "full", full);
    write_lzf_chunk(file, "short", half);
    write_lzf_chunk(file, "long", longer);
    H5Fclose(file);
    ASSERT_GE(H5Zunregister(32000), 0);
    ASSERT_TRUE(detail::register_lzf_filter());
  }
  const Reader reader(path);
  EXPECT_EQ(reader.info("/short").filters, std::vector<std::string>{"lzf"});
  EXPECT_EQ(reader.read_array<std::int32_t>("/full").data, values);
  EXPECT_GW_ERROR(reader.read_array<std::int32_t>("/short"),
                  ErrorCode::kIo,
                  "'/short' in '" + path + "'",
                  "read failed");
  EXPECT_GW_ERROR(reader.read_array<std::int32_t>("/long"), ErrorCode::kIo, "'/long'");
}

// ---------------------------------------------------------------------------------------------
// Validation errors: files, objects, ranks, dtypes

TEST(Hdf5, MissingFileIsNotFound) {
  TempDir dir;
  const std::string path = dir.file("absent.h5");
  EXPECT_GW_ERROR(Reader{path}, ErrorCode::kNotFound, "file '" + path + "' does not exist");
}

TEST(Hdf5, NonHdf5FileIsBadData) {
  TempDir dir;
  const std::string path = dir.file("text.h5");
  std::ofstream(path) << "not hdf5\n";
  EXPECT_GW_ERROR(Reader{path}, ErrorCode::kBadData, "'" + path + "' is not an HDF5 file");
  EXPECT_GW_ERROR(Reader{dir.path().string()}, ErrorCode::kBadData, "is a directory");
}

// A file that exists but cannot be read is an I/O failure with the OS's reason (kIo, exit 74), not
// "not an HDF5 file" (kBadData, 65): H5Fis_hdf5 answers both the same way, and it blocked forever
// opening a FIFO without a writer.
TEST(Hdf5, UnreadableFileIsIoErrorNotBadData) {
  TempDir dir;
  const std::string fifo = dir.file("pipe.h5");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_GW_ERROR(Reader{fifo}, ErrorCode::kIo, "'" + fifo + "'", "pipe or socket");

  // Permission bits do not stop root; /proc/self/mem opens for anyone but fails every read at
  // offset 0 (nothing is mapped there).
  const std::string locked = dir.file("locked.h5");
  std::ofstream(locked) << "anything";
  std::filesystem::permissions(locked, std::filesystem::perms::none);
  if (::access(locked.c_str(), R_OK) != 0) {
    EXPECT_GW_ERROR(Reader{locked},
                    ErrorCode::kIo,
                    "cannot open file '" + locked + "' for reading",
                    std::strerror(EACCES));
  }
  if (std::filesystem::exists("/proc/self/mem")) {
    EXPECT_GW_ERROR(Reader{"/proc/self/mem"},
                    ErrorCode::kIo,
                    "cannot read file '/proc/self/mem'",
                    std::strerror(EIO));
  }
  // A file that reads but is empty is still not HDF5.
  const std::string empty = dir.file("empty.h5");
  std::ofstream{empty};
  EXPECT_GW_ERROR(Reader{empty}, ErrorCode::kBadData, "'" + empty + "' is not an HDF5 file");
}

TEST(Hdf5, FileImageInMemoryReadsLikeTheFileAndRejectsTruncatedBytes) {
  TempDir dir;
  const std::string path = dir.file("image.h5");
  Rng rng(12);
  const std::vector<double> values = random_values<double>(rng, 60);
  const CsrArray<float> csr = random_csr<float>(rng, 7, 9, 0.3);
  {
    Writer writer(path);
    writer.write_array<double>("/obsm/x", values, std::vector<std::int64_t>{20, 3});
    writer.write_csr<float>("/X", csr);
    writer.commit();
  }
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());

  const Reader from_file(path);
  const Reader image = Reader::from_image(bytes, "memory.h5");
  bytes.assign(bytes.size(), std::byte{0});  // HDF5 holds its own copy of the image
  EXPECT_EQ(image.path(), "memory.h5");
  EXPECT_EQ(image.read_array<double>("/obsm/x").data, from_file.read_array<double>("/obsm/x").data);
  const CsrArray<float> read = image.read_csr<float>("/X");
  EXPECT_EQ(read.indptr, csr.indptr);
  EXPECT_EQ(read.indices, csr.indices);
  EXPECT_EQ(read.data, csr.data);
  EXPECT_EQ(image.describe().size(), from_file.describe().size());

  const std::vector<std::byte> truncated(bytes.begin(), bytes.begin() + 4);
  EXPECT_GW_ERROR(Reader::from_image(truncated, "short.h5"),
                  ErrorCode::kBadData,
                  "'short.h5' is not an HDF5 file");
  const std::vector<std::byte> zeros(4096, std::byte{0});
  EXPECT_GW_ERROR(Reader::from_image(zeros, "zeros.h5"),
                  ErrorCode::kBadData,
                  "'zeros.h5' is not a readable HDF5 file");
}

// Found by the h5ad fuzz harness (tests/fuzz/regressions/h5ad/): a group hard-linked into itself
// under two names made describe() list 2^32 paths (it only bounded the depth). Each group is now
// descended into once.
TEST(Hdf5, DescribeDescendsIntoAGroupLinkedIntoItselfOnce) {
  TempDir dir;
  const std::string path = dir.file("cycle.h5");
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t group = H5Gcreate2(file, "/g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(H5Lcreate_hard(file, "/g", group, "self_a", H5P_DEFAULT, H5P_DEFAULT), 0);
    ASSERT_GE(H5Lcreate_hard(file, "/g", group, "self_b", H5P_DEFAULT, H5P_DEFAULT), 0);
    const hsize_t dims[1] = {3};
    const hid_t space = H5Screate_simple(1, dims, nullptr);
    const hid_t data =
        H5Dcreate2(group, "x", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(data);
    H5Sclose(space);
    H5Gclose(group);
    H5Fclose(file);
  }
  const std::vector<ObjectInfo> objects = Reader(path).describe();
  std::vector<std::string> paths;
  for (const auto& info : objects) paths.push_back(info.path);
  // Both self links are listed (they are links of /g), but not descended into again.
  EXPECT_EQ(paths, (std::vector<std::string>{"/g", "/g/self_a", "/g/self_b", "/g/x"}));
  EXPECT_EQ(objects[1].kind, ObjectKind::kGroup);
}

TEST(Hdf5, MissingObjectsAreNotFoundAndListWhatExists) {
  TempDir dir;
  const std::string path = dir.file("objects.h5");
  {
    Writer writer(path);
    writer.write_array<double>(
        "/obsm/X_pca", std::vector<double>(6), std::vector<std::int64_t>{3, 2});
    writer.write_array<double>(
        "/obsm/X_tsne", std::vector<double>(6), std::vector<std::int64_t>{3, 2});
    writer.ensure_group("/empty");
    writer.commit();
  }
  Reader reader(path);
  EXPECT_GW_ERROR(reader.read_array<double>("/obsm/X_umap"),
                  ErrorCode::kNotFound,
                  "dataset '/obsm/X_umap' not found in '" + path + "'",
                  "/obsm holds: X_pca, X_tsne");
  EXPECT_GW_ERROR(reader.read_array<double>("/nothing/here/x"),
                  ErrorCode::kNotFound,
                  "'/nothing/here/x' not found",
                  "/ holds: empty, obsm");
  EXPECT_GW_ERROR(reader.read_array<double>("/empty/x"), ErrorCode::kNotFound, "/empty is empty");
  EXPECT_GW_ERROR(
      reader.list("/obsm/X_pca"), ErrorCode::kBadData, "is a dataset; expected a group");
  EXPECT_GW_ERROR(reader.read_array<double>("/obsm"), ErrorCode::kBadData, "is a group");
  EXPECT_GW_ERROR(reader.read_string_attribute("/obsm", "encoding-type"),
                  ErrorCode::kNotFound,
                  "attribute 'encoding-type' not found on '/obsm'",
                  "no attributes");
  EXPECT_EQ(reader.kind("/obsm/X_umap"), ObjectKind::kNone);
  EXPECT_EQ(reader.kind("obsm"), ObjectKind::kGroup);
  EXPECT_EQ(reader.kind("/obsm/X_pca/deeper"), ObjectKind::kNone);
}

TEST(Hdf5, WrongRankAndWrongDtypeAreBadData) {
  TempDir dir;
  const std::string path = dir.file("rank.h5");
  {
    Writer writer(path);
    writer.write_array<float>("/cube", std::vector<float>(8), std::vector<std::int64_t>{2, 2, 2});
    writer.write_strings("/names", std::vector<std::string>{"a", "b"});
    writer.commit();
  }
  Reader reader(path);
  EXPECT_GW_ERROR(reader.read_array<float>("/cube", 2),
                  ErrorCode::kBadData,
                  "'/cube' in '" + path + "'",
                  "rank 3 (shape 2 x 2 x 2); expected rank 2");
  EXPECT_GW_ERROR(reader.read_array<double>("/names"),
                  ErrorCode::kBadData,
                  "'/names'",
                  "holds string values; expected a numeric array");
  EXPECT_GW_ERROR(reader.read_strings("/cube"), ErrorCode::kBadData, "expected strings");
}

// A dataset whose dimensions multiply past int64 (found by the h5ad fuzzer as a corrupt file; the
// element count overflowed, undefined behaviour): chunked storage lets HDF5 create it without
// allocating anything, and reading it is bad data naming the dataset, for numbers and strings.
TEST(Hdf5, ShapeWhoseElementCountOverflowsIsBadData) {
  TempDir dir;
  const std::string path = dir.file("huge.h5");
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hsize_t dims[2] = {4, hsize_t{2522015791327477763}};
    const hsize_t chunk[2] = {1, 1};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t space1 = H5Screate_simple(1, &dims[1], nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    const hid_t dcpl1 = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl1, 1, chunk);
    const hid_t numbers =
        H5Dcreate2(file, "huge", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    const hid_t string_type = H5Tcopy(H5T_C_S1);
    H5Tset_size(string_type, 4);
    const hid_t strings =
        H5Dcreate2(file, "names", string_type, space1, H5P_DEFAULT, dcpl1, H5P_DEFAULT);
    ASSERT_GE(numbers, 0);
    ASSERT_GE(strings, 0);
    H5Dclose(numbers);
    H5Dclose(strings);
    H5Tclose(string_type);
    H5Pclose(dcpl);
    H5Pclose(dcpl1);
    H5Sclose(space);
    H5Sclose(space1);
    H5Fclose(file);
  }
  Reader reader(path);
  EXPECT_GW_ERROR(reader.read_array<float>("/huge"),
                  ErrorCode::kBadData,
                  "'/huge'",
                  "claims shape 4 x 2522015791327477763, more than 2^56 elements");
  EXPECT_GW_ERROR(
      reader.read_strings("/names"), ErrorCode::kBadData, "'/names'", "more than 2^56 elements");
}

// A corrupt integer datatype message whose precision exceeds its size (the h5ad fuzzer's 8-byte
// integer of 193 bits) made HDF5's conversion smash its own stack; the reader refuses the type
// before HDF5 converts. The file is written by HDF5 and its datatype messages patched in place:
// version 1 integer, little-endian signed, 8 bytes, offset 0, precision 64 -> 193.
TEST(Hdf5, NumberTypeWiderThanItsBytesIsBadDataBeforeHdf5Converts) {
  TempDir dir;
  const std::string path = dir.file("precision.h5");
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hsize_t three = 3;
    const hid_t space = H5Screate_simple(1, &three, nullptr);
    const hid_t data = H5Dcreate2(file, "d", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT,
                                  H5P_DEFAULT);
    const std::int64_t values[3] = {1, 2, 3};
    ASSERT_GE(H5Dwrite(data, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values), 0);
    const hid_t scalar = H5Screate(H5S_SCALAR);
    const hid_t attribute = H5Acreate2(file, "n", H5T_STD_I64LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(H5Awrite(attribute, H5T_NATIVE_INT64, values), 0);
    H5Aclose(attribute);
    H5Sclose(scalar);
    H5Dclose(data);
    H5Sclose(space);
    H5Fclose(file);
  }
  std::vector<char> bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const unsigned char message[] = {0x10, 0x08, 0, 0, 8, 0, 0, 0, 0, 0, 64, 0};
  int patched = 0;
  for (std::size_t i = 0; i + sizeof(message) <= bytes.size(); ++i) {
    if (std::memcmp(bytes.data() + i, message, sizeof(message)) == 0) {
      bytes[i + 10] = static_cast<char>(193);
      ++patched;
    }
  }
  ASSERT_EQ(patched, 2) << "the dataset's and the attribute's datatype messages";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  Reader reader(path);
  const char* expected = "declares a 8-byte integer type of 193 bits at bit offset 0";
  EXPECT_GW_ERROR(reader.read_attribute<double>("/", "n"), ErrorCode::kBadData, expected);
  EXPECT_GW_ERROR(reader.read_array<double>("/d"), ErrorCode::kBadData, "'/d'", expected);
  EXPECT_GW_ERROR(reader.read_array<std::int64_t>("/d"), ErrorCode::kBadData, expected);
}

// A dataset of fill values can declare any shape in a few hundred bytes of file: a read that would
// allocate more than max_read_bytes() (physical memory by default) is kBadData before any
// allocation, and a read that fits is unaffected.
TEST(Hdf5, ReadsBeyondTheReadLimitAreBadDataBeforeAllocating) {
  TempDir dir;
  const std::string path = dir.file("declared.h5");
  const hsize_t huge = hsize_t{1} << 50;  // 2^50 elements: 16 PB at 16 bytes each
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hsize_t chunk = 1024;
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, &chunk);
    const hid_t space = H5Screate_simple(1, &huge, nullptr);
    const hid_t numbers =
        H5Dcreate2(file, "huge", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    const hid_t string_type = H5Tcopy(H5T_C_S1);
    H5Tset_size(string_type, H5T_VARIABLE);
    const hid_t strings =
        H5Dcreate2(file, "names", string_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    const hsize_t small = 1000;
    const hid_t small_space = H5Screate_simple(1, &small, nullptr);
    const hid_t fits = H5Dcreate2(
        file, "small", H5T_IEEE_F64LE, small_space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(numbers, 0);
    ASSERT_GE(strings, 0);
    ASSERT_GE(fits, 0);
    for (hid_t d : {numbers, strings, fits}) H5Dclose(d);
    H5Tclose(string_type);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Sclose(small_space);
    H5Fclose(file);
  }
  Reader reader(path);
  EXPECT_GE(max_read_bytes(), std::size_t{1} << 20);  // physical memory (or unlimited)
  EXPECT_GW_ERROR(reader.read_array<double>("/huge"),
                  ErrorCode::kBadData,
                  "'/huge'",
                  "claims 1125899906842624 elements",
                  "physical memory");
  EXPECT_GW_ERROR(reader.read_strings("/names"),
                  ErrorCode::kBadData,
                  "'/names'",
                  "claims 1125899906842624 elements");
  EXPECT_EQ(reader.read_array<double>("/small").data.size(), 1000u);
  // A lower limit applies to every later read, in any Reader, until reset (0: the default).
  set_max_read_bytes(1000 * 16 - 1);
  EXPECT_GW_ERROR(reader.read_array<double>("/small"), ErrorCode::kBadData, "claims 1000 elements");
  set_max_read_bytes(1000 * 16);
  EXPECT_EQ(reader.read_array<double>("/small").data.size(), 1000u);
  set_max_read_bytes(0);
  EXPECT_GE(max_read_bytes(), std::size_t{1} << 20);
}

// A CSC group's converted row pointers are sized by its shape attribute alone (rows + 1 offsets and
// their cursor copy): a 1-entry matrix declaring a million rows needs 16 MB for them, refused under
// a 1 MiB read limit before allocating (the check was missing: a corrupt shape of 2^31 - 1 rows
// allocated two 16 GiB arrays); the same file reads under the default limit.
TEST(Hdf5, CscRowPointersSizedByTheShapeAreCheckedAgainstTheReadLimit) {
  TempDir dir;
  const std::string path = dir.file("tall_csc.h5");
  {
    Writer writer(path);
    writer.ensure_group("/m");
    writer.set_attribute("/m", "encoding-type", "csc_matrix");
    const std::int64_t shape[2] = {1000000, 1};
    writer.set_attribute_array<std::int64_t>("/m", "shape", shape);
    writer.write_array<double>("/m/data", std::vector<double>{2.5}, std::vector<std::int64_t>{1});
    writer.write_array<std::int32_t>(
        "/m/indices", std::vector<std::int32_t>{999999}, std::vector<std::int64_t>{1});
    writer.write_array<std::int64_t>(
        "/m/indptr", std::vector<std::int64_t>{0, 1}, std::vector<std::int64_t>{2});
    writer.commit();
  }
  const Reader reader(path);
  set_max_read_bytes(std::size_t{1} << 20);
  EXPECT_GW_ERROR(reader.read_csr<double>("/m"),
                  ErrorCode::kBadData,
                  "'/m'",
                  "CSR row pointers",
                  "claims 1000001 elements");
  set_max_read_bytes(0);
  const CsrArray<double> csr = reader.read_csr<double>("/m");
  EXPECT_EQ(csr.rows, 1000000);
  EXPECT_EQ(csr.indptr[999999], 0);
  EXPECT_EQ(csr.indptr[1000000], 1);
  EXPECT_EQ(csr.indices, (std::vector<Index>{0}));
}

TEST(Hdf5, TruncatedOrCorruptFilesAreIoErrors) {
  TempDir dir;
  const std::string path = dir.file("data.h5");
  Rng rng(4);
  {
    Writer writer(path);
    DatasetOptions gzip;
    gzip.gzip_level = 6;
    // Random doubles hardly compress, so the chunks fill most of the file.
    const std::vector<double> values = random_values<double>(rng, 100000);
    writer.write_array<double>("/values", values, std::vector<std::int64_t>{100000}, gzip);
    writer.commit();
  }
  const auto size = std::filesystem::file_size(path);
  const std::string corrupt = dir.file("corrupt.h5");
  std::filesystem::copy_file(path, corrupt);
  {
    // Overwrite bytes in the middle of the compressed chunk data.
    std::fstream file(corrupt, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size * 6 / 10));
    const std::string garbage(4096, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  EXPECT_GW_ERROR(Reader(corrupt).read_array<double>("/values"),
                  ErrorCode::kIo,
                  "'/values' in '" + corrupt + "'",
                  "read failed");
  std::filesystem::resize_file(path, size / 2);
  EXPECT_GW_ERROR(Reader{path}, ErrorCode::kIo, "cannot open HDF5 file '" + path + "'");
}

// An encoding-type attribute that is a 2 x 2 array of strings cannot be read as one string: the
// error names the attribute, the object and the file (it named the attribute alone).
TEST(Hdf5, UnreadableEncodingTypeAttributeNamesObjectAndFile) {
  TempDir dir;
  const std::string path = dir.file("attr.h5");
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hid_t group = H5Gcreate2(file, "m", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, 4);
    const hsize_t dims[2] = {2, 2};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t attribute =
        H5Acreate2(group, "encoding-type", type, space, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(attribute, 0);
    const char text[16] = "csr\0csr\0csr\0csr";
    ASSERT_GE(H5Awrite(attribute, type, text), 0);
    H5Aclose(attribute);
    H5Sclose(space);
    H5Tclose(type);
    H5Gclose(group);
    H5Fclose(file);
  }
  const Reader reader(path);
  const std::string where = "attribute 'encoding-type' of '/m' in '" + path + "'";
  EXPECT_GW_ERROR(reader.info("/m"), ErrorCode::kBadData, where, "expected a 1-D string array");
  EXPECT_GW_ERROR(reader.read_csr<double>("/m"), ErrorCode::kBadData, where);
  EXPECT_GW_ERROR(describe(path), ErrorCode::kBadData, where);
}

TEST(Hdf5, H5sparseGroupsAreReadWithTheirShapeAttribute) {
  TempDir dir;
  const std::string path = dir.file("h5sparse.h5");
  Rng rng(12);
  const CsrArray<float> csr = random_csr<float>(rng, 6, 9, 0.4);
  {
    Writer writer(path);
    writer.ensure_group("/m");
    writer.set_attribute("/m", "h5sparse_format", "csr");
    writer.set_attribute_array<std::int64_t>(
        "/m", "h5sparse_shape", std::vector<std::int64_t>{6, 9});
    writer.write_array<float>("/m/data", csr.data, std::vector<std::int64_t>{csr.nnz()});
    writer.write_array<std::int32_t>(
        "/m/indices", csr.indices, std::vector<std::int64_t>{csr.nnz()});
    writer.write_array<std::int64_t>("/m/indptr", csr.indptr, std::vector<std::int64_t>{7});
    writer.commit();
  }
  Reader reader(path);
  const CsrArray<float> back = reader.read_csr<float>("/m");
  EXPECT_EQ(back.rows, 6);
  EXPECT_EQ(back.cols, 9);
  EXPECT_EQ(back.indptr, csr.indptr);
  EXPECT_EQ(back.indices, csr.indices);
  EXPECT_EQ(back.data, csr.data);
  EXPECT_EQ(reader.info("/m").shape, (std::vector<std::int64_t>{6, 9}));
}

TEST(Hdf5, DescribeListsEveryObjectWithShapesAndEncodings) {
  TempDir dir;
  const std::string path = dir.file("describe.h5");
  Rng rng(1);
  {
    Writer writer(path);
    writer.write_csr<float>("/X", random_csr<float>(rng, 4, 3, 0.5));
    writer.set_attribute("/X", "encoding-type", "csr_matrix");
    writer.write_array<double>(
        "/obsm/pca", std::vector<double>(8), std::vector<std::int64_t>{4, 2});
    writer.commit();
  }
  const std::vector<ObjectInfo> objects = describe(path);
  std::vector<std::string> paths;
  for (const auto& object : objects) paths.push_back(object.path);
  EXPECT_EQ(
      paths,
      (std::vector<std::string>{"/X", "/X/data", "/X/indices", "/X/indptr", "/obsm", "/obsm/pca"}));
  EXPECT_EQ(objects[0].kind, ObjectKind::kGroup);
  EXPECT_EQ(objects[0].encoding_type, "csr_matrix");
  EXPECT_EQ(objects[0].shape, (std::vector<std::int64_t>{4, 3}));
  EXPECT_EQ(objects[0].dtype, DType::kFloat32);
  EXPECT_EQ(objects[5].shape, (std::vector<std::int64_t>{4, 2}));
  EXPECT_EQ(objects[5].dtype, DType::kFloat64);
}

// ---------------------------------------------------------------------------------------------
// Paths and atomic output

TEST(Io, ParseH5PathSplitsAtFirstColonSlash) {
  EXPECT_EQ(parse_h5_path("file.h5:/group/dataset").file, "file.h5");
  EXPECT_EQ(parse_h5_path("file.h5:/group/dataset").object, "/group/dataset");
  EXPECT_EQ(parse_h5_path("dir/file.h5:/g//d/").object, "/g/d");
  EXPECT_EQ(parse_h5_path("file.h5").file, "file.h5");
  EXPECT_TRUE(parse_h5_path("file.h5").object.empty());
  EXPECT_EQ(parse_h5_path("run:3.h5").file, "run:3.h5");  // ':' without '/' is part of the name
  EXPECT_TRUE(parse_h5_path("run:3.h5").object.empty());
  EXPECT_EQ(parse_h5_path("a:b/c.h5:/x").file, "a:b/c.h5");
  EXPECT_EQ(parse_h5_path("a:b/c.h5:/x").object, "/x");
  EXPECT_EQ(parse_h5_path("f.h5:/").object, "/");
  EXPECT_GW_ERROR(parse_h5_path(":/x"), ErrorCode::kInvalidArgument, "no file name");
}

TEST(Io, InterruptedWriteLeavesNoFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("out.h5");
  std::string temp;
  {
    Writer writer(path);
    temp = writer.temp_path();
    EXPECT_EQ(std::filesystem::path(temp).parent_path(), dir.path());
    EXPECT_EQ(std::filesystem::path(temp).filename().string().rfind(".out.h5.tmp-", 0), 0u);
    writer.write_array<double>(
        "/plan", std::vector<double>(100, 1.0), std::vector<std::int64_t>{10, 10});
    EXPECT_TRUE(std::filesystem::exists(temp));
    EXPECT_FALSE(std::filesystem::exists(path));
  }  // destroyed without commit()
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(temp));
  EXPECT_TRUE(dir.entries().empty());

  // An exception thrown mid-write unwinds the same way.
  try {
    Writer writer(path);
    writer.write_array<double>("/a", std::vector<double>(4), std::vector<std::int64_t>{2, 2});
    writer.write_array<double>("/b", std::vector<double>(3), std::vector<std::int64_t>{2, 2});
    FAIL() << "a size mismatch must throw";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(dir.entries().empty());
}

// A killed run leaves its temporary behind, and a container's entry point has the same pid every
// run: temporaries named by pid and a counter alone made every later run fail with "File exists".
// Names that exist are skipped; the stale files are left alone.
TEST(Io, StaleTemporariesDoNotBlockLaterWrites) {
  TempDir dir;
  const std::string path = dir.file("out.h5");
  const std::string stale_prefix = dir.file(".out.h5.tmp-" + std::to_string(::getpid()) + "-");
  for (int i = 0; i < 1000; ++i) std::ofstream(stale_prefix + std::to_string(i)) << "stale";
  {
    Writer writer(path);
    writer.write_scalar<std::int32_t>("/version", 1);
    writer.commit();
  }
  EXPECT_EQ(Reader(path).read_array<std::int32_t>("/version").data, std::vector<std::int32_t>{1});
  EXPECT_EQ(dir.entries().size(), 1001u);  // the stale ones and the output, no new temporary

  // The retry itself: names that exist are skipped for the next suffix, up to kTempFileTries.
  std::vector<std::string> suffixes = {"a", "b", "c"};
  std::size_t next = 0;
  auto from_list = [&] { return suffixes[next++ % suffixes.size()]; };
  std::ofstream(stale_prefix + "a") << "stale";
  std::ofstream(stale_prefix + "b") << "stale";
  const std::string made = detail::create_temp_file(path, from_list);
  EXPECT_EQ(made, stale_prefix + "c");
  EXPECT_EQ(next, 3u);
  EXPECT_EQ(std::filesystem::file_size(made), 0u);
  next = 0;
  EXPECT_GW_ERROR(detail::create_temp_file(path, from_list),
                  ErrorCode::kCannotCreate,
                  "cannot create '" + path + "'",
                  std::to_string(kTempFileTries) + " temporary names",
                  "remove stale temporaries");
  EXPECT_EQ(next, static_cast<std::size_t>(kTempFileTries));

  // The real suffixes: 16 hex digits, different every time.
  const std::string first = detail::random_temp_suffix();
  EXPECT_EQ(first.size(), 16u);
  EXPECT_EQ(first.find_first_not_of("0123456789abcdef"), std::string::npos) << first;
  EXPECT_NE(detail::random_temp_suffix(), first);
}

TEST(Io, CommitReplacesTargetAtomically) {
  TempDir dir;
  const std::string path = dir.file("out.h5");
  {
    Writer first(path);
    first.write_scalar<std::int32_t>("/version", 1);
    first.commit();
    EXPECT_TRUE(first.committed());
  }
  {
    Writer second(path);
    second.write_scalar<std::int32_t>("/version", 2);
    // Until commit() the old file is untouched and readable.
    EXPECT_EQ(Reader(path).read_array<std::int32_t>("/version").data, std::vector<std::int32_t>{1});
    second.commit();
    EXPECT_GW_ERROR(second.write_scalar<std::int32_t>("/late", 3),
                    ErrorCode::kInvalidArgument,
                    "already committed");
  }
  EXPECT_EQ(Reader(path).read_array<std::int32_t>("/version").data, std::vector<std::int32_t>{2});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.h5"});
}

TEST(Io, CopyOfKeepsSourceObjectsAndReplacesOthers) {
  TempDir dir;
  const std::string source = dir.file("source.h5");
  const std::string out = dir.file("out.h5");
  {
    Writer writer(source);
    writer.write_array<double>("/keep", std::vector<double>{1, 2, 3}, std::vector<std::int64_t>{3});
    writer.write_array<double>("/replace", std::vector<double>{4}, std::vector<std::int64_t>{1});
    writer.commit();
  }
  {
    Writer writer = Writer::copy_of(source, out);
    EXPECT_TRUE(writer.exists("/keep"));
    EXPECT_EQ(writer.reader().read_array<double>("/keep").data, (std::vector<double>{1, 2, 3}));
    writer.write_strings("/replace", std::vector<std::string>{"new"});
    writer.write_scalar<double>("/added/value", 7.0);
    EXPECT_TRUE(writer.remove("/keep"));
    EXPECT_FALSE(writer.remove("/keep"));
    writer.write_array<double>("/keep", std::vector<double>{1, 2, 3}, std::vector<std::int64_t>{3});
    writer.commit();
  }
  Reader reader(out);
  EXPECT_EQ(reader.read_array<double>("/keep").data, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(reader.read_strings("/replace"), std::vector<std::string>{"new"});
  EXPECT_EQ(reader.read_array<double>("/added/value").data, std::vector<double>{7.0});
  // The source itself is unchanged.
  EXPECT_EQ(Reader(source).read_array<double>("/replace").data, std::vector<double>{4});
  // Copying onto itself works too (the copy is made first, then renamed over it).
  {
    Writer writer = Writer::copy_of(out, out);
    writer.write_scalar<double>("/added/value", 8.0);
    writer.commit();
  }
  EXPECT_EQ(Reader(out).read_array<double>("/added/value").data, std::vector<double>{8.0});
  EXPECT_GW_ERROR(Writer::copy_of(dir.file("none.h5"), out), ErrorCode::kNotFound, "none.h5");
}

TEST(Io, MissingOrUnwritableOutputDirectoryIsCannotCreate) {
  TempDir dir;
  const std::string missing = dir.file("no/such/dir") + "/out.h5";
  EXPECT_GW_ERROR(Writer{missing},
                  ErrorCode::kCannotCreate,
                  "output directory '" + dir.file("no/such/dir") + "' does not exist");
  const std::string file_as_dir = dir.file("plain.txt");
  std::ofstream(file_as_dir) << "x";
  EXPECT_GW_ERROR(Writer{file_as_dir + "/out.h5"}, ErrorCode::kCannotCreate, "is not a directory");
  EXPECT_GW_ERROR(Writer{dir.path().string()}, ErrorCode::kCannotCreate, "is a directory");

  // A read-only directory. Permission bits do not stop root, so as root use /proc, where nobody
  // can create files.
  const std::string locked = dir.file("locked");
  std::filesystem::create_directory(locked);
  std::filesystem::permissions(
      locked, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  const bool permissions_apply = ::access(locked.c_str(), W_OK) != 0;
  const std::string unwritable = permissions_apply ? locked : std::string("/proc");
  EXPECT_GW_ERROR(Writer{unwritable + "/out.h5"},
                  ErrorCode::kCannotCreate,
                  "cannot write in directory '" + unwritable + "'");
  std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  EXPECT_TRUE(std::filesystem::is_empty(locked));
}

}  // namespace
}  // namespace gw::io
