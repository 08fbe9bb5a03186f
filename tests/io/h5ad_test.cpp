// AnnData layer: our writer and reader against each other (H5ad.*), and against Debian's
// anndata 0.8 / h5py / PyTables through tests/io/interop_fixtures.py (Interop.*).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "core/error.h"
#include "core/json.h"
#include "core/rng.h"
#include "io/h5ad.h"
#include "io/hdf5.h"
#include "io_test_util.h"

namespace gw::io {
namespace {

using test::random_csr;
using test::random_values;
using test::read_raw;
using test::run_fixture;
using test::TempDir;
using test::write_raw;

// Everything the interop tests exchange, generated from one seed.
struct Inputs {
  std::int64_t n_obs = 23;
  std::int64_t n_vars = 11;
  std::int64_t d = 5;
  std::int64_t plan_cols = 17;
  std::vector<std::string> names;
  Array<float> x_dense;
  CsrArray<float> x_csr;
  Array<double> pca;
  Array<float> dist;
  CsrArray<double> graph;
  std::vector<double> weights;
  CsrArray<double> plan;  // top-3 per row, like the CLI's sparse plan
  Array<std::int64_t> match;
  double cost = 0.0421875;
  std::int64_t iterations = 137;
};

Inputs make_inputs(std::uint64_t seed) {
  Rng rng(seed);
  Inputs in;
  for (std::int64_t i = 0; i < in.n_obs; ++i)
    in.names.push_back("cell-" + std::to_string(i) + "-é");
  in.x_dense = {random_values<float>(rng, in.n_obs * in.n_vars), {in.n_obs, in.n_vars}};
  in.x_csr = random_csr<float>(rng, in.n_obs, in.n_vars, 0.3);
  in.pca = {random_values<double>(rng, in.n_obs * in.d), {in.n_obs, in.d}};
  in.dist = {random_values<float>(rng, in.n_obs * in.n_obs), {in.n_obs, in.n_obs}};
  for (float& v : in.dist.data) v = std::abs(v);
  in.graph = random_csr<double>(rng, in.n_obs, in.n_obs, 0.2);
  in.weights = random_values<double>(rng, in.n_obs);
  in.plan.rows = in.n_obs;
  in.plan.cols = in.plan_cols;
  in.plan.indptr.push_back(0);
  in.match.shape = {in.n_obs};
  for (std::int64_t i = 0; i < in.n_obs; ++i) {
    std::vector<Index> columns(static_cast<std::size_t>(in.plan_cols));
    for (Index j = 0; j < in.plan_cols; ++j) columns[j] = j;
    rng.shuffle(std::span<Index>(columns));
    columns.resize(3);
    std::sort(columns.begin(), columns.end());
    for (Index j : columns) {
      in.plan.indices.push_back(j);
      in.plan.data.push_back(rng.uniform() / in.n_obs);
    }
    in.plan.indptr.push_back(static_cast<Offset>(in.plan.indices.size()));
    in.match.data.push_back(columns[rng.uniform_index(3)]);
  }
  return in;
}

void write_inputs(const TempDir& dir, const Inputs& in) {
  JsonWriter meta;
  meta.begin_object()
      .member("n_obs", in.n_obs)
      .member("n_vars", in.n_vars)
      .member("d", in.d)
      .member("plan_cols", in.plan_cols)
      .member("cost", in.cost)
      .member("iterations", in.iterations)
      .member("lzf_n", 400)
      .end_object();
  std::ofstream(dir.file("meta.json")) << meta.str();
  std::ofstream names(dir.file("names.txt"), std::ios::binary);
  for (const auto& name : in.names) names << name << "\n";
  names.close();
  write_raw(dir.file("x_dense.f32"), in.x_dense.data);
  write_raw(dir.file("x_data.f32"), in.x_csr.data);
  write_raw(dir.file("x_indices.i32"), in.x_csr.indices);
  write_raw(dir.file("x_indptr.i64"), in.x_csr.indptr);
  write_raw(dir.file("pca.f64"), in.pca.data);
  write_raw(dir.file("dist.f32"), in.dist.data);
  write_raw(dir.file("graph_data.f64"), in.graph.data);
  write_raw(dir.file("graph_indices.i32"), in.graph.indices);
  write_raw(dir.file("graph_indptr.i64"), in.graph.indptr);
  write_raw(dir.file("weights.f64"), in.weights);
  write_raw(dir.file("plan_data.f64"), in.plan.data);
  write_raw(dir.file("plan_indices.i32"), in.plan.indices);
  write_raw(dir.file("plan_indptr.i64"), in.plan.indptr);
  write_raw(dir.file("match.i64"), in.match.data);
}

// The gw_* entries the align command adds (--write-into-source), through H5adWriter.
void put_gw_entries(H5adWriter& out, const Inputs& in) {
  out.put_obsm<double>("gw_plan", in.plan);
  out.put_obsm<std::int64_t>("gw_match", in.match);
  out.put_uns("gw/cost", in.cost);
  out.put_uns("gw/iterations", in.iterations);
  out.put_uns("gw/converged", true);
  out.put_uns("gw/backend", "cpu");
  out.put_uns("gw/params/epsilon", 0.005);
}

H5adWriter write_full(const std::string& path, const Inputs& in) {
  H5adWriter out = H5adWriter::create(path, in.n_obs, in.n_vars, in.names);
  out.set_x<float>(in.x_csr);
  out.put_obsm<double>("X_pca", in.pca);
  out.put_obsp<float>("dist", in.dist);
  out.put_obsp<double>("connectivities", in.graph);
  out.put_obs_column<double>("weight", in.weights);
  put_gw_entries(out, in);
  return out;
}

template <typename T>
void expect_csr_eq(const CsrArray<T>& a, const CsrArray<T>& b, const std::string& what) {
  EXPECT_EQ(a.rows, b.rows) << what;
  EXPECT_EQ(a.cols, b.cols) << what;
  EXPECT_EQ(a.indptr, b.indptr) << what;
  EXPECT_EQ(a.indices, b.indices) << what;
  EXPECT_EQ(a.data, b.data) << what;
}

template <typename T>
const CsrArray<T>& as_csr(const Matrix<T>& m) {
  EXPECT_TRUE(std::holds_alternative<CsrArray<T>>(m));
  static const CsrArray<T> empty;
  return std::holds_alternative<CsrArray<T>>(m) ? std::get<CsrArray<T>>(m) : empty;
}

template <typename T>
const Array<T>& as_dense(const Matrix<T>& m) {
  EXPECT_TRUE(std::holds_alternative<Array<T>>(m));
  static const Array<T> empty;
  return std::holds_alternative<Array<T>>(m) ? std::get<Array<T>>(m) : empty;
}

// ---------------------------------------------------------------------------------------------
// H5ad: our writer, our reader

TEST(H5ad, WrittenFileReadsBackWithEveryEntry) {
  TempDir dir;
  const Inputs in = make_inputs(7);
  const std::string path = dir.file("full.h5ad");
  write_full(path, in).commit();

  H5adReader reader(path);
  EXPECT_TRUE(reader.is_anndata());
  EXPECT_EQ(reader.n_obs(), in.n_obs);
  EXPECT_EQ(reader.n_vars(), in.n_vars);
  EXPECT_EQ(reader.obs_names(), in.names);
  EXPECT_EQ(reader.var_names().front(), "0");
  EXPECT_EQ(reader.obs_columns(), std::vector<std::string>{"weight"});
  EXPECT_EQ(reader.obsm_keys(), (std::vector<std::string>{"X_pca", "gw_match", "gw_plan"}));
  EXPECT_EQ(reader.obsp_keys(), (std::vector<std::string>{"connectivities", "dist"}));
  EXPECT_EQ(reader.uns_keys(), std::vector<std::string>{"gw"});
  expect_csr_eq(as_csr(reader.read_x<float>()), in.x_csr, "X");
  EXPECT_EQ(reader.read_obsm<double>("X_pca").data, in.pca.data);
  EXPECT_EQ(reader.read_obsm<std::int64_t>("gw_match").data, in.match.data);
  EXPECT_EQ(as_dense(reader.read_obsp<float>("dist")).data, in.dist.data);
  expect_csr_eq(as_csr(reader.read_obsp<double>("connectivities")), in.graph, "graph");
  expect_csr_eq(as_csr(read_matrix<double>(reader.file(), "/obsm/gw_plan")), in.plan, "plan");
  EXPECT_EQ(reader.read_obs_column("weight"), in.weights);

  const std::vector<H5adEntry> entries = reader.entries();
  ASSERT_EQ(entries.size(), 6u);
  EXPECT_EQ(entries[0].key, "X");
  EXPECT_EQ(entries[0].format, MatrixFormat::kCsr);
  EXPECT_EQ(entries[0].dtype, DType::kFloat32);
  EXPECT_EQ(entries[0].shape, (std::vector<std::int64_t>{in.n_obs, in.n_vars}));
  EXPECT_EQ(entries[1].key, "obsm:X_pca");
  EXPECT_EQ(entries[1].format, MatrixFormat::kDense);
  EXPECT_EQ(entries[3].key, "obsm:gw_plan");
  EXPECT_EQ(entries[3].format, MatrixFormat::kCsr);
  EXPECT_EQ(entries[4].key, "obsp:connectivities");

  // The encoding attributes anndata 0.8.0 writes (checked against its own output).
  const Reader& file = reader.file();
  auto encoding = [&file](const std::string& object) {
    return file.read_string_attribute(object, "encoding-type") + "/" +
           file.read_string_attribute(object, "encoding-version");
  };
  EXPECT_EQ(encoding("/"), "anndata/0.1.0");
  EXPECT_EQ(encoding("/X"), "csr_matrix/0.1.0");
  EXPECT_EQ(encoding("/obs"), "dataframe/0.2.0");
  EXPECT_EQ(encoding("/obs/_index"), "string-array/0.2.0");
  EXPECT_EQ(encoding("/obs/weight"), "array/0.2.0");
  EXPECT_EQ(encoding("/obsm"), "dict/0.1.0");
  EXPECT_EQ(encoding("/obsm/X_pca"), "array/0.2.0");
  EXPECT_EQ(encoding("/obsm/gw_plan"), "csr_matrix/0.1.0");
  EXPECT_EQ(encoding("/uns/gw"), "dict/0.1.0");
  EXPECT_EQ(encoding("/uns/gw/params"), "dict/0.1.0");
  EXPECT_EQ(encoding("/uns/gw/cost"), "numeric-scalar/0.2.0");
  EXPECT_EQ(encoding("/uns/gw/converged"), "numeric-scalar/0.2.0");
  EXPECT_EQ(encoding("/uns/gw/backend"), "string/0.2.0");
  for (const char* group : {"/layers", "/obsp", "/varm", "/varp", "/var"}) {
    EXPECT_TRUE(file.has_attribute(group, "encoding-type")) << group;
  }
  EXPECT_EQ(file.read_string_attribute("/obs", "_index"), "_index");
  EXPECT_EQ(file.read_string_array_attribute("/obs", "column-order"),
            std::vector<std::string>{"weight"});
  EXPECT_EQ(file.info("/uns/gw/converged").dtype, DType::kBool);
  EXPECT_EQ(file.read_array<double>("/uns/gw/cost").data, std::vector<double>{in.cost});
  EXPECT_EQ(file.read_string("/uns/gw/backend"), "cpu");
}

TEST(H5ad, ResolveMatrixSpecCoversEveryForm) {
  auto check = [](std::string_view spec, const std::string& file, const std::string& object) {
    const H5Path where = resolve_matrix_spec("src.h5ad", spec);
    EXPECT_EQ(where.file, file) << spec;
    EXPECT_EQ(where.object, object) << spec;
  };
  check("X", "src.h5ad", "/X");
  check("obsm:X_pca", "src.h5ad", "/obsm/X_pca");
  check("obsp:distances", "src.h5ad", "/obsp/distances");
  check("layers:counts", "src.h5ad", "/layers/counts");
  check("/custom/points", "src.h5ad", "/custom/points");
  check("/data/feat.h5:/costs", "/data/feat.h5", "/costs");
  check("feat.h5:/costs", "feat.h5", "/costs");
  check("run:2/feat.h5:/a/b", "run:2/feat.h5", "/a/b");
  EXPECT_GW_ERROR(resolve_matrix_spec("src.h5ad", "umap"),
                  ErrorCode::kInvalidArgument,
                  "'umap' not understood",
                  "obsm:KEY");
  EXPECT_GW_ERROR(resolve_matrix_spec("src.h5ad", "obsm:"), ErrorCode::kInvalidArgument, "obsm:");
  EXPECT_GW_ERROR(resolve_matrix_spec("src.h5ad", ""), ErrorCode::kInvalidArgument, "empty");
}

TEST(H5ad, ReadMatrixBySpecFromThisOrAnotherFile) {
  TempDir dir;
  const Inputs in = make_inputs(8);
  const std::string path = dir.file("src.h5ad");
  write_full(path, in).commit();
  const std::string other = dir.file("feat.h5");
  {
    Writer writer(other);
    writer.write_array<float>("/costs", in.dist);
    writer.write_array<double>("/vector", in.weights, std::vector<std::int64_t>{in.n_obs});
    writer.commit();
  }
  expect_csr_eq(as_csr(read_matrix<float>(path, "X")), in.x_csr, "X");
  EXPECT_EQ(as_dense(read_matrix<double>(path, "obsm:X_pca")).data, in.pca.data);
  EXPECT_EQ(as_dense(read_matrix<float>(path, other + ":/costs")).data, in.dist.data);
  const Array<double> column = as_dense(read_matrix<double>(other, "/vector"));
  EXPECT_EQ(column.shape, (std::vector<std::int64_t>{in.n_obs, 1}));
  EXPECT_EQ(matrix_rows<double>(read_matrix<double>(path, "obsp:connectivities")), in.n_obs);
  EXPECT_EQ(matrix_format(Reader(path), "/obs"), MatrixFormat::kOther);
  EXPECT_GW_ERROR(read_matrix<double>(path, "/obs"),
                  ErrorCode::kBadData,
                  "'/obs' in '" + path + "' is a group with encoding-type 'dataframe'");
  EXPECT_GW_ERROR(read_matrix<double>(path, "obsm:X_umap"),
                  ErrorCode::kNotFound,
                  "'/obsm/X_umap' not found",
                  "X_pca");
}

TEST(H5ad, ReaderErrorsNameTheKeyAndWhatExists) {
  TempDir dir;
  const Inputs in = make_inputs(9);
  const std::string path = dir.file("src.h5ad");
  {
    H5adWriter out = write_full(path, in);
    Writer& file = out.file();
    // A categorical column in both layouts: anndata 0.8 (group) and 0.7 (codes + categories).
    file.ensure_group("/obs/batch");
    file.set_attribute("/obs/batch", "encoding-type", "categorical");
    file.write_array<std::int8_t>(
        "/obs/legacy_cat", std::vector<std::int8_t>(in.n_obs), std::vector<std::int64_t>{in.n_obs});
    file.set_attribute("/obs/legacy_cat", "categories", "ref");
    file.write_strings("/obs/label", in.names);
    // Entries H5adWriter would refuse, written around it.
    file.write_array<double>(
        "/obsm/wrong_rows", std::vector<double>(4), std::vector<std::int64_t>{2, 2});
    file.write_array<double>(
        "/obsp/rect", std::vector<double>(in.n_obs * 2), std::vector<std::int64_t>{in.n_obs, 2});
    out.commit();
  }
  H5adReader reader(path);
  EXPECT_GW_ERROR(reader.read_obsm<double>("X_umap"),
                  ErrorCode::kNotFound,
                  "obsm key 'X_umap' not found in '" + path + "'",
                  "obsm keys: X_pca, gw_match, gw_plan, wrong_rows");
  EXPECT_GW_ERROR(
      reader.read_obsm<double>("gw_plan"), ErrorCode::kBadData, "obsm:gw_plan", "is csr");
  EXPECT_GW_ERROR(reader.read_obsm<double>("wrong_rows"),
                  ErrorCode::kBadData,
                  "has 2 rows but the file has n_obs = 23");
  EXPECT_GW_ERROR(reader.read_obsp<double>("rect"),
                  ErrorCode::kBadData,
                  "obsp:rect",
                  "is 23 x 2; expected n_obs x n_obs = 23 x 23");
  EXPECT_GW_ERROR(
      reader.read_obsp<double>("nope"), ErrorCode::kNotFound, "obsp keys: connectivities");
  EXPECT_GW_ERROR(reader.read_obs_column("mass"),
                  ErrorCode::kNotFound,
                  "obs column 'mass' not found",
                  "obs columns: weight");
  EXPECT_GW_ERROR(reader.read_obs_column("batch"), ErrorCode::kBadData, "'batch'", "categorical");
  EXPECT_GW_ERROR(reader.read_obs_column("legacy_cat"), ErrorCode::kBadData, "categorical");
  EXPECT_GW_ERROR(reader.read_obs_column("label"), ErrorCode::kBadData, "holds strings");
}

TEST(H5ad, ObsIndexIsTheDatasetNamedByTheIndexAttribute) {
  TempDir dir;
  const std::string path = dir.file("renamed_index.h5ad");
  const std::vector<std::string> ids = {"AAAC-1", "AAAG-1", "AACT-1"};
  {
    H5adWriter out = H5adWriter::create(path, 3, 2);
    out.file().write_strings("/obs/cell_id", ids);
    out.file().set_attribute("/obs", "_index", "cell_id");
    out.file().remove("/obs/_index");
    out.commit();
  }
  H5adReader reader(path);
  EXPECT_EQ(reader.obs_names(), ids);
  EXPECT_EQ(reader.n_obs(), 3);
  EXPECT_EQ(reader.var_names(), (std::vector<std::string>{"0", "1"}));
}

TEST(H5ad, WriterRejectsShapesThatDoNotMatchTheFile) {
  TempDir dir;
  H5adWriter out = H5adWriter::create(dir.file("w.h5ad"), 4, 3);
  EXPECT_GW_ERROR(out.set_x<float>(Array<float>{std::vector<float>(12), {3, 4}}),
                  ErrorCode::kInvalidArgument,
                  "n_obs x n_vars = 4 x 3");
  EXPECT_GW_ERROR(out.put_obsm<double>("p", Array<double>{std::vector<double>(6), {3, 2}}),
                  ErrorCode::kInvalidArgument,
                  "n_obs = 4 rows");
  EXPECT_GW_ERROR(out.put_obsp<double>("g", Array<double>{std::vector<double>(12), {4, 3}}),
                  ErrorCode::kInvalidArgument,
                  "n_obs x n_obs = 4 x 4");
  EXPECT_GW_ERROR(out.put_obs_column<double>("w", std::vector<double>(3)),
                  ErrorCode::kInvalidArgument,
                  "3 values for n_obs = 4");
  EXPECT_GW_ERROR(out.put_obsm<double>("a/b", Array<double>{std::vector<double>(4), {4}}),
                  ErrorCode::kInvalidArgument,
                  "no '/'");
  EXPECT_GW_ERROR(out.put_uns("/abs", 1.0), ErrorCode::kInvalidArgument, "relative path");
  EXPECT_GW_ERROR(H5adWriter::create(dir.file("x.h5ad"), 2, 1, {"only-one"}),
                  ErrorCode::kInvalidArgument,
                  "1 obs names for n_obs = 2");
}

TEST(H5ad, CopyOfAddsEntriesAndKeepsEverythingElse) {
  TempDir dir;
  const Inputs in = make_inputs(10);
  const std::string source = dir.file("source.h5ad");
  {
    H5adWriter out = H5adWriter::create(source, in.n_obs, in.n_vars, in.names);
    out.set_x<float>(in.x_dense);
    out.put_obsm<double>("X_pca", in.pca);
    out.put_uns("note", "kept");
    out.commit();
  }
  const std::string path = dir.file("with_plan.h5ad");
  {
    H5adWriter out = H5adWriter::copy_of(source, path);
    EXPECT_EQ(out.n_obs(), in.n_obs);
    EXPECT_EQ(out.n_vars(), in.n_vars);
    put_gw_entries(out, in);
    out.commit();
  }
  H5adReader reader(path);
  EXPECT_EQ(as_dense(reader.read_x<float>()).data, in.x_dense.data);
  EXPECT_EQ(reader.read_obsm<double>("X_pca").data, in.pca.data);
  expect_csr_eq(reader.file().read_csr<double>("/obsm/gw_plan"), in.plan, "plan");
  EXPECT_EQ(reader.read_obsm<std::int64_t>("gw_match").data, in.match.data);
  EXPECT_EQ(reader.file().read_string("/uns/note"), "kept");
  EXPECT_EQ(reader.file().read_array<std::int64_t>("/uns/gw/iterations").data,
            std::vector<std::int64_t>{in.iterations});
  EXPECT_FALSE(H5adReader(source).file().exists("/obsm/gw_plan"));

  const std::string plain = dir.file("plain.h5");
  {
    Writer writer(plain);
    writer.write_scalar<double>("/x", 1.0);
    writer.commit();
  }
  EXPECT_GW_ERROR(H5adWriter::copy_of(plain, dir.file("o.h5ad")),
                  ErrorCode::kBadData,
                  "is not an AnnData file");
}

// ---------------------------------------------------------------------------------------------
// Interop with Debian's anndata 0.8 / h5py / PyTables

TEST(Interop, FilesWrittenByAnndataAreRead) {
  GW_SKIP_WITHOUT_ANNDATA();
  TempDir dir;
  const Inputs in = make_inputs(101);
  write_inputs(dir, in);
  const auto written = run_fixture({"anndata-write", dir.path().string()});
  ASSERT_EQ(written.status, 0) << written.output;

  {
    H5adReader dense(dir.file("anndata_dense.h5ad"));
    EXPECT_TRUE(dense.is_anndata());
    EXPECT_EQ(dense.n_obs(), in.n_obs);
    EXPECT_EQ(dense.n_vars(), in.n_vars);
    EXPECT_EQ(dense.obs_names(), in.names);
    EXPECT_EQ(dense.file().info("/X").filters, std::vector<std::string>{"deflate"});
    const Matrix<float> x_matrix = dense.read_x<float>();
    const Array<float>& x = as_dense(x_matrix);
    EXPECT_EQ(x.shape, in.x_dense.shape);
    EXPECT_EQ(x.data, in.x_dense.data);
    EXPECT_EQ(dense.read_obsm<double>("X_pca").data, in.pca.data);
    EXPECT_EQ(as_dense(dense.read_obsp<float>("dist")).data, in.dist.data);
    EXPECT_EQ(as_dense(read_matrix<double>(dense.path(), "obsp:dist")).data,
              std::vector<double>(in.dist.data.begin(), in.dist.data.end()));
    EXPECT_EQ(dense.read_obs_column("weight"), in.weights);
    EXPECT_EQ(dense.obs_columns(), (std::vector<std::string>{"weight", "batch", "label"}));
    EXPECT_GW_ERROR(dense.read_obs_column("batch"), ErrorCode::kBadData, "categorical");
    EXPECT_GW_ERROR(dense.read_obs_column("label"), ErrorCode::kBadData, "strings");
    EXPECT_EQ(dense.file().read_string("/uns/note"), "written by anndata");
  }
  {
    H5adReader sparse(dir.file("anndata_csr.h5ad"));
    EXPECT_EQ(sparse.n_obs(), in.n_obs);
    EXPECT_EQ(sparse.file().info("/X/data").filters, std::vector<std::string>{"deflate"});
    expect_csr_eq(as_csr(sparse.read_x<float>()), in.x_csr, "X");
    expect_csr_eq(as_csr(sparse.read_obsp<double>("connectivities")), in.graph, "graph");
    EXPECT_EQ(sparse.read_obsm<double>("X_pca").data, in.pca.data);
    const std::vector<H5adEntry> entries = sparse.entries();
    ASSERT_FALSE(entries.empty());
    EXPECT_EQ(entries[0].format, MatrixFormat::kCsr);
    EXPECT_EQ(entries[0].shape, (std::vector<std::int64_t>{in.n_obs, in.n_vars}));
  }
}

TEST(Interop, AnndataReadsWhatWeWrite) {
  GW_SKIP_WITHOUT_ANNDATA();
  TempDir dir;
  const Inputs in = make_inputs(202);
  write_inputs(dir, in);
  const std::string path = dir.file("ours.h5ad");
  write_full(path, in).commit();
  const auto result = run_fixture({"anndata-read", path, dir.path().string()});
  EXPECT_EQ(result.status, 0) << result.output;
  EXPECT_NE(result.output.find("OK read by anndata 0.8"), std::string::npos) << result.output;
}

TEST(Interop, AnndataReadsOurCopyOfItsFileWithResultsAdded) {
  GW_SKIP_WITHOUT_ANNDATA();
  TempDir dir;
  const Inputs in = make_inputs(303);
  write_inputs(dir, in);
  const auto written = run_fixture({"anndata-write", dir.path().string()});
  ASSERT_EQ(written.status, 0) << written.output;
  for (const char* name : {"anndata_dense.h5ad", "anndata_csr.h5ad"}) {
    const std::string source = dir.file(name);
    const std::string path = dir.file(std::string("gw_") + name);
    {
      H5adWriter out = H5adWriter::copy_of(source, path);
      put_gw_entries(out, in);
      out.commit();
    }
    const auto result = run_fixture({"anndata-read-copy", path, source, dir.path().string()});
    EXPECT_EQ(result.status, 0) << name << ": " << result.output;
  }
}

TEST(Interop, LegacyAnndataArchivesAreRead) {
  GW_SKIP_WITHOUT_ANNDATA();
  const std::string root = "/usr/lib/python3/dist-packages/anndata/tests/data/archives/";
  int found = 0;
  for (const char* version : {"v0.7.0", "v0.7.8"}) {
    const std::string archive = root + version + "/adata.h5ad";
    if (!std::filesystem::exists(archive)) continue;
    ++found;
    SCOPED_TRACE(archive);
    TempDir dir;
    const auto dumped = run_fixture({"legacy-dump", archive, dir.path().string()});
    ASSERT_EQ(dumped.status, 0) << dumped.output;
    std::vector<std::string> names;
    {
      std::ifstream in(dir.file("legacy_names.txt"));
      for (std::string line; std::getline(in, line);) names.push_back(line);
    }
    const std::vector<double> x_expected = read_raw<double>(dir.file("legacy_x.f64"));
    const std::vector<double> obsm_expected = read_raw<double>(dir.file("legacy_obsm.f64"));
    const std::vector<double> column_expected = read_raw<double>(dir.file("legacy_float64.f64"));

    H5adReader reader(archive);
    EXPECT_TRUE(reader.is_anndata());
    EXPECT_EQ(reader.obs_names(), names);
    EXPECT_EQ(reader.n_obs(), static_cast<std::int64_t>(names.size()));
    // Every dataset in these archives is LZF-compressed (h5py's filter 32000).
    EXPECT_EQ(reader.file().info("/X/data").filters, std::vector<std::string>{"lzf"});
    const Matrix<double> x_matrix = reader.read_x<double>();
    const CsrArray<double>& x = as_csr(x_matrix);
    EXPECT_EQ(test::csr_to_dense(x), x_expected);
    EXPECT_EQ(reader.read_obsm<double>("array").data, obsm_expected);
    EXPECT_EQ(reader.read_obs_column("float64"), column_expected);
    EXPECT_GW_ERROR(reader.read_obs_column("obs_cat"), ErrorCode::kBadData, "categorical");

    // Results added to a copy of a legacy file are still read by anndata.
    Inputs in = make_inputs(404);
    in.n_obs = reader.n_obs();
    in.n_vars = reader.n_vars();
    in.names = names;
    Rng plan_rng(5);
    in.plan = random_csr<double>(plan_rng, in.n_obs, in.plan_cols, 0.2);
    in.match = {std::vector<std::int64_t>(in.n_obs, 3), {in.n_obs}};
    write_inputs(dir, in);
    const std::string path = dir.file("legacy_gw.h5ad");
    {
      H5adWriter out = H5adWriter::copy_of(archive, path);
      put_gw_entries(out, in);
      out.commit();
    }
    const auto result = run_fixture({"anndata-read-copy", path, archive, dir.path().string()});
    EXPECT_EQ(result.status, 0) << result.output;
  }
  if (found == 0) GTEST_SKIP() << "anndata's legacy archives are not installed under " << root;
}

TEST(Interop, LzfDatasetsWrittenByH5pyAreDecoded) {
  GW_SKIP_WITHOUT_ANNDATA();
  TempDir dir;
  const Inputs in = make_inputs(505);
  write_inputs(dir, in);
  Rng rng(55);
  const std::vector<double> random = random_values<double>(rng, 400);
  std::vector<std::int32_t> runs(400);
  for (int i = 0; i < 400; ++i) runs[i] = i / 37;  // long runs: back references in the stream
  write_raw(dir.file("lzf_random.f64"), random);
  write_raw(dir.file("lzf_runs.i32"), runs);
  const std::string path = dir.file("lzf.h5");
  const auto written = run_fixture({"h5py-lzf", path, dir.path().string()});
  ASSERT_EQ(written.status, 0) << written.output;

  Reader reader(path);
  EXPECT_EQ(reader.info("/runs").filters, std::vector<std::string>{"lzf"});
  const Array<double> back = reader.read_array<double>("/random", 2);
  EXPECT_EQ(back.shape, (std::vector<std::int64_t>{100, 4}));
  EXPECT_EQ(back.data, random);
  EXPECT_EQ(reader.read_array<std::int32_t>("/runs").data, runs);
  const std::vector<std::string> names = reader.read_strings("/names");
  ASSERT_EQ(names.size(), 50u);
  EXPECT_EQ(names[0], "lzf-0");
  EXPECT_EQ(names[49], "lzf-49");
}

TEST(Interop, BloscDatasetWrittenByPyTablesIsRejected) {
  GW_SKIP_WITHOUT_ANNDATA();
  TempDir dir;
  const std::string path = dir.file("blosc.h5");
  const auto written = run_fixture({"pytables-blosc", path});
  if (written.status == 3) GTEST_SKIP() << written.output;
  ASSERT_EQ(written.status, 0) << written.output;
  Reader reader(path);
  EXPECT_GW_ERROR(reader.read_array<double>("/packed"),
                  ErrorCode::kUnsupported,
                  "'/packed' in '" + path + "'",
                  "filter 'blosc' (id 32001)");
}

}  // namespace
}  // namespace gw::io
