"""Python side of gwalign's io interop tests (run with Debian's /usr/bin/python3).

The C++ tests generate every input with gw::Rng and hand it over as raw little-endian arrays in a
work directory (NAME.f32 / .f64 / .i32 / .i64, names.txt, meta.json); this script turns them into
files written by anndata / h5py / PyTables, or reads files gwalign wrote and checks them against
the same arrays. It prints one line; exit status 0 = done/OK, 1 = mismatch or error, 3 = a needed
Python package is missing (the C++ test then skips with that message).

Commands:
  check-anndata                   exit 0 if anndata (and scipy, h5py) import
  anndata-write DIR               DIR/anndata_dense.h5ad and DIR/anndata_csr.h5ad (gzip)
  anndata-read FILE DIR           read FILE (written by gwalign) with anndata and compare
  anndata-read-copy FILE SRC DIR  read FILE = copy of SRC plus gw_* entries, compare both
  legacy-dump ARCHIVE DIR         anndata's own view of an archive: X, obsm/array, obs names,
                                  obs['float64']
  h5py-lzf FILE DIR               lzf-compressed datasets (compressible, random, strings)
  categorical-write DIR           DIR/cat.h5ad with categorical / string obs columns and
                                  obsm['spatial'], and anndata's codes and categories of each
  categorical-dump FILE KEY DIR   anndata's codes and categories of obs[KEY] in FILE
  categorical-read FILE DIR       check obs['transferred'] and obsm['spatial_aligned'] of FILE
  pytables-blosc FILE             a blosc-compressed dataset (exit 3 if PyTables is missing)
"""
import json
import os
import sys

import numpy as np


def load(directory, name, dtype, shape=None):
    array = np.fromfile(os.path.join(directory, name), dtype=dtype)
    return array.reshape(shape) if shape is not None else array


def load_inputs(directory):
    with open(os.path.join(directory, "meta.json")) as f:
        meta = json.load(f)
    n, m, d = meta["n_obs"], meta["n_vars"], meta["d"]
    with open(os.path.join(directory, "names.txt"), encoding="utf-8") as f:
        names = f.read().split("\n")[:n]
    import scipy.sparse as sp

    x_csr = sp.csr_matrix(
        (
            load(directory, "x_data.f32", "<f4"),
            load(directory, "x_indices.i32", "<i4"),
            load(directory, "x_indptr.i64", "<i8"),
        ),
        shape=(n, m),
    )
    graph = sp.csr_matrix(
        (
            load(directory, "graph_data.f64", "<f8"),
            load(directory, "graph_indices.i32", "<i4"),
            load(directory, "graph_indptr.i64", "<i8"),
        ),
        shape=(n, n),
    )
    return {
        "meta": meta,
        "names": names,
        "x_dense": load(directory, "x_dense.f32", "<f4", (n, m)),
        "x_csr": x_csr,
        "pca": load(directory, "pca.f64", "<f8", (n, d)),
        "dist": load(directory, "dist.f32", "<f4", (n, n)),
        "graph": graph,
        "weights": load(directory, "weights.f64", "<f8"),
    }


def fail(message):
    print("MISMATCH: " + message)
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def anndata_write(directory):
    import anndata as ad
    import pandas as pd

    inputs = load_inputs(directory)
    n = inputs["meta"]["n_obs"]
    obs = pd.DataFrame(
        {
            "weight": inputs["weights"],
            "batch": pd.Categorical(["a" if i % 3 else "b" for i in range(n)]),
            "label": ["cell-%d" % i for i in range(n)],
        },
        index=inputs["names"],
    )
    dense = ad.AnnData(X=inputs["x_dense"], obs=obs)
    dense.obsm["X_pca"] = inputs["pca"]
    dense.obsp["dist"] = inputs["dist"]
    dense.uns["note"] = "written by anndata"
    dense.write_h5ad(os.path.join(directory, "anndata_dense.h5ad"), compression="gzip")

    sparse = ad.AnnData(X=inputs["x_csr"], obs=obs.copy())
    sparse.obsm["X_pca"] = inputs["pca"]
    sparse.obsp["connectivities"] = inputs["graph"]
    sparse.write_h5ad(os.path.join(directory, "anndata_csr.h5ad"), compression="gzip")
    print("OK anndata %s" % ad.__version__)


def load_meta(directory):
    with open(os.path.join(directory, "meta.json")) as f:
        return json.load(f)


def check_gw_entries(adata, directory, meta):
    import scipy.sparse as sp

    n, k = meta["n_obs"], meta["plan_cols"]
    plan = adata.obsm["gw_plan"]
    expect(sp.issparse(plan), "obsm['gw_plan'] is %s, not a scipy sparse matrix" % type(plan))
    expect(plan.shape == (n, k), "obsm['gw_plan'] has shape %s, expected %s" % (plan.shape, (n, k)))
    expected_plan = sp.csr_matrix(
        (
            load(directory, "plan_data.f64", "<f8"),
            load(directory, "plan_indices.i32", "<i4"),
            load(directory, "plan_indptr.i64", "<i8"),
        ),
        shape=(n, k),
    )
    expect(abs(plan - expected_plan).max() == 0, "obsm['gw_plan'] values differ")
    match = np.asarray(adata.obsm["gw_match"])
    expect(match.shape == (n,), "obsm['gw_match'] has shape %s" % (match.shape,))
    expect(np.issubdtype(match.dtype, np.integer), "obsm['gw_match'] dtype is %s" % match.dtype)
    expect(np.array_equal(match, load(directory, "match.i64", "<i8")), "obsm['gw_match'] differs")
    gw = adata.uns["gw"]
    expect(gw["cost"] == meta["cost"], "uns['gw']['cost'] = %r" % gw["cost"])
    expect(gw["iterations"] == meta["iterations"], "uns['gw']['iterations'] = %r"
           % gw["iterations"])
    expect(bool(gw["converged"]) is True, "uns['gw']['converged'] = %r" % gw["converged"])
    expect(gw["backend"] == "cpu", "uns['gw']['backend'] = %r" % gw["backend"])
    expect(gw["params"]["epsilon"] == 0.005, "uns['gw']['params']['epsilon'] = %r"
           % gw["params"]["epsilon"])


def anndata_read(path, directory):
    import anndata as ad
    import scipy.sparse as sp

    inputs = load_inputs(directory)
    adata = ad.read_h5ad(path)
    n, m = inputs["meta"]["n_obs"], inputs["meta"]["n_vars"]
    expect(adata.shape == (n, m), "shape %s, expected %s" % (adata.shape, (n, m)))
    expect(list(adata.obs_names) == inputs["names"], "obs_names differ")
    expect(list(adata.var_names) == [str(i) for i in range(m)], "var_names differ")
    expect(sp.issparse(adata.X), "X is %s, not sparse" % type(adata.X))
    expect(abs(adata.X - inputs["x_csr"]).max() == 0, "X differs")
    expect(adata.X.dtype == np.float32, "X dtype %s" % adata.X.dtype)
    expect(np.array_equal(adata.obsm["X_pca"], inputs["pca"]), "obsm['X_pca'] differs")
    expect(np.array_equal(adata.obsp["dist"], inputs["dist"]), "obsp['dist'] differs")
    expect(sp.issparse(adata.obsp["connectivities"]), "obsp['connectivities'] not sparse")
    expect(abs(adata.obsp["connectivities"] - inputs["graph"]).max() == 0,
           "obsp['connectivities'] differs")
    expect(np.array_equal(adata.obs["weight"].to_numpy(), inputs["weights"]),
           "obs['weight'] differs")
    expect(list(adata.obs.columns) == ["weight"], "obs columns %s" % list(adata.obs.columns))
    check_gw_entries(adata, directory, inputs["meta"])
    print("OK read by anndata %s" % ad.__version__)


def anndata_read_copy(path, source, directory):
    import anndata as ad
    import scipy.sparse as sp

    meta = load_meta(directory)
    original = ad.read_h5ad(source)
    adata = ad.read_h5ad(path)
    expect(adata.shape == original.shape, "shape %s != source %s" % (adata.shape, original.shape))
    expect(list(adata.obs_names) == list(original.obs_names), "obs_names differ from source")
    x_new = adata.X.toarray() if sp.issparse(adata.X) else np.asarray(adata.X)
    x_old = original.X.toarray() if sp.issparse(original.X) else np.asarray(original.X)
    expect(np.array_equal(x_new, x_old), "X differs from the source")
    for key in original.obsm.keys():
        expect(key in adata.obsm, "obsm['%s'] of the source is missing" % key)
    for column in original.obs.columns:
        expect(column in adata.obs.columns, "obs column '%s' of the source is missing" % column)
    if "note" in original.uns:
        expect(adata.uns.get("note") == original.uns["note"], "uns['note'] lost")
    check_gw_entries(adata, directory, meta)
    print("OK copy read by anndata %s" % ad.__version__)


def legacy_dump(archive, directory):
    import anndata as ad
    import scipy.sparse as sp

    adata = ad.read_h5ad(archive)
    x = adata.X.toarray() if sp.issparse(adata.X) else np.asarray(adata.X)
    np.ascontiguousarray(x, dtype="<f8").tofile(os.path.join(directory, "legacy_x.f64"))
    np.ascontiguousarray(adata.obsm["array"], dtype="<f8").tofile(
        os.path.join(directory, "legacy_obsm.f64"))
    with open(os.path.join(directory, "legacy_names.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(adata.obs_names))
    np.ascontiguousarray(adata.obs["float64"].to_numpy(), dtype="<f8").tofile(
        os.path.join(directory, "legacy_float64.f64"))
    print("OK dumped %s" % archive)


def dump_categorical(adata, key, directory):
    column = adata.obs[key]
    if column.dtype.name != "category":
        column = column.astype("category")
    np.ascontiguousarray(column.cat.codes.to_numpy(), dtype="<i4").tofile(
        os.path.join(directory, "cat_%s_codes.i32" % key))
    with open(os.path.join(directory, "cat_%s_categories.txt" % key), "w", encoding="utf-8") as f:
        f.write("\n".join(str(c) for c in column.cat.categories))


def categorical_write(directory):
    """cat.h5ad: obs celltype (categorical strings, one missing), layer (integer categories),
    label (plain strings) and obsm['spatial']; anndata's codes and categories beside it."""
    import anndata as ad
    import pandas as pd

    rng = np.random.default_rng(7)
    n = 60
    celltype = pd.Categorical(rng.choice(["T cell", "B cell", "neuron"], n),
                              categories=["neuron", "T cell", "B cell"])
    celltype[3] = np.nan
    obs = pd.DataFrame({"celltype": celltype,
                        "layer": pd.Categorical(rng.integers(1, 5, n)),
                        "label": np.array(["L%d" % v for v in rng.integers(0, 3, n)], dtype=object),
                        "depth": rng.normal(size=n)},
                       index=["cell%d" % i for i in range(n)])
    adata = ad.AnnData(X=rng.poisson(2.0, (n, 5)).astype(np.float32), obs=obs)
    adata.obsm["spatial"] = rng.normal(size=(n, 2))
    adata.write_h5ad(os.path.join(directory, "cat.h5ad"))
    adata = ad.read_h5ad(os.path.join(directory, "cat.h5ad"))
    for key in ("celltype", "layer", "label"):
        dump_categorical(adata, key, directory)
    np.ascontiguousarray(adata.obsm["spatial"], dtype="<f8").tofile(
        os.path.join(directory, "cat_spatial.f64"))
    print("OK anndata %s" % ad.__version__)


def categorical_dump(path, key, directory):
    import anndata as ad

    dump_categorical(ad.read_h5ad(path), key, directory)
    print("OK dumped %s" % key)


def categorical_read(path, directory):
    """Reads FILE (gwalign wrote obs['transferred'] and obsm['spatial_aligned']) with anndata."""
    import anndata as ad

    adata = ad.read_h5ad(path)
    column = adata.obs["transferred"]
    expect(column.dtype.name == "category", "obs['transferred'] is %s" % column.dtype)
    with open(os.path.join(directory, "expected_categories.txt"), encoding="utf-8") as f:
        categories = f.read().split("\n")
    expect(list(column.cat.categories) == categories,
           "categories %s != %s" % (list(column.cat.categories), categories))
    codes = load(directory, "expected_codes.i32", "<i4")
    expect(np.array_equal(column.cat.codes.to_numpy().astype(np.int32), codes), "codes differ")
    aligned = load(directory, "expected_aligned.f64", "<f8").reshape(adata.n_obs, -1)
    expect(np.array_equal(adata.obsm["spatial_aligned"], aligned), "spatial_aligned differs")
    print("OK categorical read by anndata %s" % ad.__version__)


def h5py_lzf(path, directory):
    import h5py

    n = load_meta(directory)["lzf_n"]
    random_values = load(directory, "lzf_random.f64", "<f8")
    runs = load(directory, "lzf_runs.i32", "<i4")
    with h5py.File(path, "w") as f:
        f.create_dataset("random", data=random_values.reshape(n // 4, 4), compression="lzf",
                         chunks=(max(1, n // 16), 4))
        f.create_dataset("runs", data=runs, compression="lzf", chunks=(max(1, n // 3),))
        f.create_dataset("names", data=np.array(["lzf-%d" % i for i in range(50)], dtype=object),
                         dtype=h5py.string_dtype(), compression="lzf")
        assert f["runs"].compression == "lzf"
    print("OK h5py %s" % h5py.__version__)


def pytables_blosc(path):
    try:
        import tables
    except ImportError:
        print("PyTables (python3-tables) cannot be imported")
        sys.exit(3)
    with tables.open_file(path, "w") as f:
        filters = tables.Filters(complevel=5, complib="blosc")
        array = f.create_carray("/", "packed", atom=tables.Float64Atom(), shape=(1000,),
                                filters=filters)
        array[:] = np.arange(1000, dtype=np.float64)
    print("OK PyTables %s" % tables.__version__)


def main(argv):
    command = argv[1] if len(argv) > 1 else ""
    if command == "check-anndata":
        try:
            import anndata  # noqa: F401
            import h5py  # noqa: F401
            import scipy.sparse  # noqa: F401
        except ImportError as error:
            print("cannot import: %s" % error)
            return 3
        print("OK anndata %s" % anndata.__version__)
        return 0
    handlers = {
        "anndata-write": (anndata_write, 1),
        "anndata-read": (anndata_read, 2),
        "anndata-read-copy": (anndata_read_copy, 3),
        "legacy-dump": (legacy_dump, 2),
        "h5py-lzf": (h5py_lzf, 2),
        "categorical-write": (categorical_write, 1),
        "categorical-dump": (categorical_dump, 3),
        "categorical-read": (categorical_read, 2),
        "pytables-blosc": (pytables_blosc, 1),
    }
    if command not in handlers or len(argv) != 2 + handlers[command][1]:
        print(__doc__)
        return 2
    handlers[command][0](*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
