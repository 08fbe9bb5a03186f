// The CLI's outputs read by Debian's anndata (/usr/bin/python3): --write-into-source on two
// anndata-written h5ad files aligned by obsm:X_pca, and `gwalign generate --format h5ad`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli_test_util.h"
#include "test_util.h"

namespace gw::cli::test {
namespace {

using gw::test::ScratchDir;

#define SKIP_WITHOUT_ANNDATA()                                                             \
  do {                                                                                     \
    if (anndata_available().status != 0) {                                                 \
      GTEST_SKIP()                                                                         \
          << "/usr/bin/python3 cannot import anndata (install Debian's python3-anndata): " \
          << anndata_available().err;                                                      \
    }                                                                                      \
  } while (0)

// Reads OUT with anndata and checks it against SOURCE: the original content unchanged, and the
// gw entries of the right types and shapes. Prints OK on success.
constexpr const char* kCheckWriteIntoSource = R"PY(
import sys
import anndata
import numpy as np
import scipy.sparse

out, source, k, top_k = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
a = anndata.read_h5ad(out)
s = anndata.read_h5ad(source)
n = s.n_obs
assert a.n_obs == n and a.n_vars == s.n_vars, (a.shape, s.shape)
assert np.array_equal(a.X, s.X), "X changed"
assert list(a.obs_names) == list(s.obs_names), "obs names changed"
assert np.array_equal(a.obs["angle"].values, s.obs["angle"].values), "obs changed"
assert np.array_equal(a.obsm["X_pca"], s.obsm["X_pca"]), "obsm/X_pca changed"
assert (a.obsp["distances"] != s.obsp["distances"]).nnz == 0, "obsp changed"

plan = a.obsm["gw_plan"]
assert scipy.sparse.issparse(plan), type(plan)
assert plan.shape == (n, k), plan.shape
plan = scipy.sparse.csr_matrix(plan)
assert plan.nnz == n * top_k, plan.nnz
assert (plan.data >= 0).all()
rows = np.asarray(plan.sum(axis=1)).ravel()
assert rows.sum() <= 1.0 + 1e-3, rows.sum()

match = np.asarray(a.obsm["gw_match"])
assert match.shape == (n,), match.shape
assert np.issubdtype(match.dtype, np.integer), match.dtype
assert ((match >= 0) & (match < k)).all()
assert np.array_equal(match, np.asarray(plan.argmax(axis=1)).ravel()), "matching != row argmax"

gw = a.uns["gw"]
assert int(gw["iterations"]) > 0, gw["iterations"]
assert int(gw["n"]) == n and int(gw["k"]) == k
assert abs(float(gw["plan_mass"]) - 1.0) < 1e-3, gw["plan_mass"]
assert str(gw["termination"]) in ("converged", "plateau", "max iterations"), gw["termination"]
assert str(gw["source_rep"]) == "obsm:X_pca", gw["source_rep"]
assert float(gw["abs_rho"]) >= 0.99, gw["abs_rho"]
assert str(gw["report_json"]).startswith("{")
print("OK", anndata.__version__, plan.shape, float(gw["abs_rho"]))
)PY";

TEST(CliInterop, AnndataReadsWriteIntoSourceAfterAligningByXPca) {
  SKIP_WITHOUT_ANNDATA();
  ScratchDir dir;
  const std::string source = data_file("tiny_source.h5ad");
  const std::string target = data_file("tiny_target.h5ad");
  const std::string out = dir.file("aligned.h5ad");
  const std::string json = dir.file("run.json");
  const RunResult run = gwalign({"align",
                                 source,
                                 target,
                                 "--rep",
                                 "obsm:X_pca",
                                 "--knn",
                                 "10",
                                 "--write-into-source",
                                 "-o",
                                 out,
                                 "--report",
                                 json,
                                 "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_GE(json_number(read_text(json), "abs_rho"), 0.99);
  const RunResult check = run_program(
      "/usr/bin/python3", {"-c", kCheckWriteIntoSource, out, source, "480", "10"}, dir.path());
  EXPECT_EQ(check.status, 0) << check.out << check.err;
  EXPECT_EQ(check.out.rfind("OK", 0), 0u) << check.out << check.err;
}

TEST(CliInterop, AnndataReadsDensePlanWrittenIntoSource) {
  SKIP_WITHOUT_ANNDATA();
  ScratchDir dir;
  const std::string out = dir.file("aligned.h5ad");
  const RunResult run = gwalign({"align",
                                 data_file("tiny_source.h5ad"),
                                 data_file("tiny_target.h5ad"),
                                 "--rep",
                                 "obsm:X_pca",
                                 "--dense",
                                 "--write-into-source",
                                 "-o",
                                 out,
                                 "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const RunResult check = run_program("/usr/bin/python3",
                                      {"-c",
                                       "import sys, anndata, numpy as np\n"
                                       "a = anndata.read_h5ad(sys.argv[1])\n"
                                       "p = np.asarray(a.obsm['gw_plan'])\n"
                                       "assert p.shape == (400, 480), p.shape\n"
                                       "assert abs(p.sum() - 1) < 1e-3, p.sum()\n"
                                       "m = np.asarray(a.obsm['gw_match'])\n"
                                       "assert np.array_equal(m, p.argmax(axis=1))\n"
                                       "print('OK')\n",
                                       out},
                                      dir.path());
  EXPECT_EQ(check.status, 0) << check.out << check.err;
}

// The sparse-support path's CSR plan (at most --support-size entries per row) in obsm/gw_plan.
TEST(CliInterop, AnndataReadsSparseSupportPlanWrittenIntoSource) {
  SKIP_WITHOUT_ANNDATA();
  ScratchDir dir;
  const std::string out = dir.file("aligned.h5ad");
  const RunResult run = gwalign({"align",
                                 data_file("tiny_source.h5ad"),
                                 data_file("tiny_target.h5ad"),
                                 "--rep",
                                 "obsm:X_pca",
                                 "--knn",
                                 "10",
                                 "--support",
                                 "sparse",
                                 "--support-size",
                                 "16",
                                 "--write-into-source",
                                 "-o",
                                 out,
                                 "--quiet"},
                                dir.path());
  ASSERT_EQ(run.status, 0) << run.err;
  const RunResult check =
      run_program("/usr/bin/python3",
                  {"-c",
                   "import sys, anndata, numpy as np, scipy.sparse\n"
                   "a = anndata.read_h5ad(sys.argv[1])\n"
                   "p = a.obsm['gw_plan']\n"
                   "assert scipy.sparse.issparse(p), type(p)\n"
                   "p = scipy.sparse.csr_matrix(p)\n"
                   "assert p.shape == (400, 480), p.shape\n"
                   "assert np.diff(p.indptr).max() <= 16, np.diff(p.indptr).max()\n"
                   "assert abs(p.sum() - 1) < 1e-3, p.sum()\n"
                   "m = np.asarray(a.obsm['gw_match'])\n"
                   "assert np.array_equal(m, np.asarray(p.argmax(axis=1)).ravel())\n"
                   "gw = a.uns['gw']\n"
                   "assert str(gw['support']) == 'sparse', gw['support']\n"
                   "assert float(gw['abs_rho']) >= 0.99, gw['abs_rho']\n"
                   "print('OK')\n",
                   out},
                  dir.path());
  EXPECT_EQ(check.status, 0) << check.out << check.err;
}

TEST(CliInterop, AnndataReadsGeneratedH5ad) {
  SKIP_WITHOUT_ANNDATA();
  ScratchDir dir;
  const std::string out = dir.file("roll.h5ad");
  ASSERT_EQ(
      gwalign({"generate", "swissroll", "--n", "120", "--seed", "9", "-o", out}, dir.path()).status,
      0);
  const std::string points = dir.file("roll.h5");
  ASSERT_EQ(
      gwalign({"generate", "swissroll", "--n", "120", "--seed", "9", "-o", points}, dir.path())
          .status,
      0);
  const RunResult check = run_program("/usr/bin/python3",
                                      {"-c",
                                       "import sys, anndata, h5py, numpy as np\n"
                                       "a = anndata.read_h5ad(sys.argv[1])\n"
                                       "f = h5py.File(sys.argv[2], 'r')\n"
                                       "assert a.shape == (120, 3), a.shape\n"
                                       "assert list(a.var_names) == ['x', 'h', 'y']\n"
                                       "assert np.array_equal(a.obsm['X_spatial'], f['points'])\n"
                                       "assert np.array_equal(a.X, f['points'])\n"
                                       "assert np.array_equal(a.obs['angle'], f['angles'])\n"
                                       "assert str(a.uns['generator']['kind']) == 'swissroll'\n"
                                       "print('OK')\n",
                                       out,
                                       points},
                                      dir.path());
  EXPECT_EQ(check.status, 0) << check.out << check.err;
}

}  // namespace
}  // namespace gw::cli::test
