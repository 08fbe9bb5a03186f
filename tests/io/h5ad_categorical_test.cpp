// Categorical obs columns: read from files anndata wrote (0.8 groups, plain strings, numeric
// categories, the 0.7 archives' __categories layout), written by gwalign and read back by anndata.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "io/h5ad.h"
#include "io_test_util.h"

namespace gw::io {
namespace {

using test::read_raw;
using test::run_fixture;
using test::TempDir;

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void expect_as_anndata_sees_it(const H5adReader& reader, const std::string& key, const TempDir& dir) {
  SCOPED_TRACE(key);
  const Categorical column = reader.read_obs_categorical(key);
  EXPECT_EQ(column.categories, read_lines(dir.file("cat_" + key + "_categories.txt")));
  EXPECT_EQ(column.codes, read_raw<std::int32_t>(dir.file("cat_" + key + "_codes.i32")));
}

TEST(Categorical, ColumnsWrittenByAnndataReadAsAnndataSeesThem) {
  GW_SKIP_WITHOUT_ANNDATA();
  TempDir dir;
  const auto written = run_fixture({"categorical-write", dir.path().string()});
  ASSERT_EQ(written.status, 0) << written.output;
  const H5adReader reader(dir.file("cat.h5ad"));
  EXPECT_TRUE(reader.obs_column_is_categorical("celltype"));
  EXPECT_TRUE(reader.obs_column_is_categorical("label"));
  EXPECT_FALSE(reader.obs_column_is_categorical("depth"));
  expect_as_anndata_sees_it(reader, "celltype", dir);  // strings, one missing (-1)
  expect_as_anndata_sees_it(reader, "layer", dir);     // integer categories
  expect_as_anndata_sees_it(reader, "label", dir);     // plain strings: sorted distinct values
  EXPECT_EQ(reader.read_obs_categorical("celltype").codes[3], -1);
  EXPECT_EQ(reader.read_obsm<double>("spatial").data, read_raw<double>(dir.file("cat_spatial.f64")));
  EXPECT_GW_ERROR(reader.read_obs_categorical("depth"), ErrorCode::kBadData, "'depth'", "numeric");
  EXPECT_GW_ERROR(reader.read_obs_categorical("nope"), ErrorCode::kNotFound, "'nope'", "celltype");
}

TEST(Categorical, LegacyArchivesCodesWithCategoriesGroupAreRead) {
  GW_SKIP_WITHOUT_ANNDATA();
  const std::string root = "/usr/lib/python3/dist-packages/anndata/tests/data/archives/";
  int found = 0;
  for (const char* version : {"v0.7.0", "v0.7.8"}) {
    const std::string archive = root + version + "/adata.h5ad";
    if (!std::filesystem::exists(archive)) continue;
    ++found;
    SCOPED_TRACE(archive);
    TempDir dir;
    const auto dumped = run_fixture({"categorical-dump", archive, "obs_cat", dir.path().string()});
    ASSERT_EQ(dumped.status, 0) << dumped.output;
    const H5adReader reader(archive);
    expect_as_anndata_sees_it(reader, "obs_cat", dir);
  }
  if (found == 0) GTEST_SKIP() << "anndata's legacy archives are not installed under " << root;
}

TEST(Categorical, WrittenColumnAndAlignedCoordinatesAreReadByAnndata) {
  GW_SKIP_WITHOUT_ANNDATA();
  TempDir dir;
  const auto written = run_fixture({"categorical-write", dir.path().string()});
  ASSERT_EQ(written.status, 0) << written.output;
  const std::string path = dir.file("out.h5ad");
  Categorical column;
  column.categories = {"alpha", "beta gamma", "δ"};
  for (int i = 0; i < 60; ++i) column.codes.push_back(i % 7 == 0 ? -1 : i % 3);
  std::vector<double> aligned(120);
  for (int i = 0; i < 120; ++i) aligned[i] = 0.5 * i - 3.0;
  {
    H5adWriter out = H5adWriter::copy_of(dir.file("cat.h5ad"), path);
    out.put_obs_categorical("transferred", column);
    out.put_obsm("spatial_aligned", Array<double>{aligned, {60, 2}});
    // Replacing an existing categorical column with one of a new name layout works too.
    out.put_obs_categorical("celltype", column);
    out.commit();
  }
  {
    std::ofstream cats(dir.file("expected_categories.txt"));
    cats << "alpha\nbeta gamma\nδ";
  }
  test::write_raw(dir.file("expected_codes.i32"), column.codes);
  test::write_raw(dir.file("expected_aligned.f64"), aligned);
  const auto read = run_fixture({"categorical-read", path, dir.path().string()});
  EXPECT_EQ(read.status, 0) << read.output;
  const H5adReader back(path);
  EXPECT_EQ(back.read_obs_categorical("transferred").codes, column.codes);
  EXPECT_EQ(back.read_obs_categorical("celltype").categories, column.categories);
}

TEST(Categorical, WriterRejectsOutOfRangeCodesAndWrongLength) {
  TempDir dir;
  H5adWriter out = H5adWriter::create(dir.file("x.h5ad"), 3, 1);
  EXPECT_GW_ERROR(out.put_obs_categorical("c", Categorical{{"a"}, {0, 1, 0}, false}),
                  ErrorCode::kInvalidArgument, "code 1", "row 1");
  EXPECT_GW_ERROR(out.put_obs_categorical("c", Categorical{{"a"}, {0, 0}, false}),
                  ErrorCode::kInvalidArgument, "2 codes", "n_obs = 3");
}

}  // namespace
}  // namespace gw::io
