"""gwalign.align / align_anndata against the gwalign CLI, and the package's input handling."""

import json
import math
import os
import signal
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

import gwalign
from conftest import DATA, read_h5, spiral_pair

# Flags shared by the CLI and the Python calls that are compared: same seed and thread count, so
# the two runs must be bitwise identical (gw::Options::seed's contract).
FLAGS = dict(knn=5, seed=1, threads=2)
CLI_FLAGS = ["--seed", "1", "--threads", "2", "--dense", "--quiet"]
# The kNN size only for point clouds: the CLI rejects --knn when no side is a point cloud.
GIVEN_GEOMETRY_FLAGS = dict(seed=1, threads=2)


def cli_run(cli, tmp_path, source, target, *extra, points=True):
    out, report = tmp_path / "out.h5", tmp_path / "report.json"
    knn = ["--knn", "5"] if points else []
    cli("align", source, target, "-o", out, "--report", report, *CLI_FLAGS, *knn, *extra)
    return read_h5(out, "/plan"), read_h5(out, "/matching"), json.loads(report.read_text())


def keys_deep(d):
    """The key set of a JSON object, nested objects included ("result.timings.sinkhorn")."""
    out = set()
    for k, v in d.items():
        out.add(k)
        if isinstance(v, dict):
            out |= {k + "." + s for s in keys_deep(v)}
    return out


def test_align_points_equals_cli_plan_matching_and_report_keys(cli, tmp_path):
    xs, xt, _, _ = spiral_pair()
    plan, matching, report = cli_run(cli, tmp_path, DATA / "spiral_400.h5", DATA / "swissroll_500.h5")
    r = gwalign.align(xs, xt, progress=False, **FLAGS)
    np.testing.assert_array_equal(r.matching, matching)
    np.testing.assert_array_equal(r.plan, plan)
    assert keys_deep(r.report) - {"abs_rho"} >= keys_deep(report) - {"abs_rho"}
    assert set(r.report) == set(report)
    assert r.report["total_seconds"] == r.total_seconds
    assert r.report["result"]["iterations"] == report["result"]["iterations"]


def test_align_graphs_equals_cli_on_obsp_graphs(cli, tmp_path):
    import anndata as ad
    xs, xt, _, _ = spiral_pair()
    gs, gt = gwalign.knn_graph(xs, 5), gwalign.knn_graph(xt, 5)
    for name, g in (("s", gs), ("t", gt)):
        a = ad.AnnData(X=np.zeros((g.shape[0], 1), dtype=np.float32))
        a.obsp["distances"] = g
        a.write_h5ad(tmp_path / (name + ".h5ad"))
    plan, matching, report = cli_run(cli, tmp_path, tmp_path / "s.h5ad", tmp_path / "t.h5ad",
                                     "--rep", "obsp:distances", points=False)
    r = gwalign.align(gs, gt, progress=False, **GIVEN_GEOMETRY_FLAGS)
    np.testing.assert_array_equal(r.matching, matching)
    np.testing.assert_array_equal(r.plan, plan)
    assert r.report["source_geometry"] == report["source_geometry"]


def test_align_anndata_default_geometry_is_the_only_obsp_graph_as_in_the_cli(cli, tmp_path):
    # No obsm entry and one CSR graph in obsp: both front ends take that graph without flags.
    import anndata as ad
    xs, xt, _, _ = spiral_pair()
    adatas = []
    for name, x in (("s", xs), ("t", xt)):
        g = gwalign.knn_graph(x, 5)
        a = ad.AnnData(X=np.zeros((g.shape[0], 1), dtype=np.float32))
        a.obsp["mesh"] = g
        a.write_h5ad(tmp_path / (name + ".h5ad"))
        adatas.append(a)
    plan, matching, _ = cli_run(cli, tmp_path, tmp_path / "s.h5ad", tmp_path / "t.h5ad",
                                points=False)
    r = gwalign.align_anndata(adatas[0], adatas[1], rep=None, copy=False, progress=False,
                              **GIVEN_GEOMETRY_FLAGS)
    np.testing.assert_array_equal(r.matching, matching)
    a = ad.AnnData(X=np.zeros((3, 1), dtype=np.float32))
    with pytest.raises(ValueError, match="no obsm entry"):
        gwalign.align_anndata(a, a, rep=None)


def test_align_distance_matrices_equals_cli_as_distances(cli, tmp_path):
    import h5py
    xs, xt, _, _ = spiral_pair()
    ds, dt = cdist(xs, xs).astype(np.float32), cdist(xt, xt).astype(np.float32)
    for name, d in (("s.h5", ds), ("t.h5", dt)):
        with h5py.File(tmp_path / name, "w") as f:
            f["dist"] = d
    plan, matching, report = cli_run(cli, tmp_path, tmp_path / "s.h5", tmp_path / "t.h5",
                                     "--rep", "/dist", "--as-distances", points=False)
    r = gwalign.align(ds, dt, as_distances=True, progress=False, **GIVEN_GEOMETRY_FLAGS)
    np.testing.assert_array_equal(r.matching, matching)
    np.testing.assert_array_equal(r.plan, plan)
    assert r.report["target_geometry"] == report["target_geometry"]


def test_align_anndata_writes_what_cli_write_into_source_writes(cli, tmp_path):
    import anndata as ad
    src, tgt = DATA / "tiny_source.h5ad", DATA / "tiny_target.h5ad"
    cli_out = tmp_path / "cli.h5ad"
    cli("align", src, tgt, "--rep", "obsm:X_pca", "--write-into-source", "-o", cli_out,
        *CLI_FLAGS, "--knn", "5")
    expected = ad.read_h5ad(cli_out)
    a, b = ad.read_h5ad(src), ad.read_h5ad(tgt)
    annotated = gwalign.align_anndata(a, b, rep="obsm:X_pca", copy=True, progress=False, **FLAGS)
    assert "gw_plan" not in a.obsm  # copy=True leaves the input alone
    annotated.write_h5ad(tmp_path / "py.h5ad")
    got = ad.read_h5ad(tmp_path / "py.h5ad")
    np.testing.assert_array_equal(got.obsm["gw_match"], expected.obsm["gw_match"])
    np.testing.assert_array_equal(got.obsm["gw_plan"], expected.obsm["gw_plan"])
    assert set(got.uns["gw"]) == set(expected.uns["gw"])
    for key in ("termination", "iterations", "n", "k", "plan_format", "seed", "abs_rho", "truth",
                "source_rep", "target_rep", "gw_loss"):
        assert got.uns["gw"][key] == expected.uns["gw"][key], key
    # In place (copy=False): the source gains the same entries and a Result is returned.
    r = gwalign.align_anndata(a, b, rep="obsm:X_pca", progress=False, **FLAGS)
    assert isinstance(r, gwalign.Result)
    np.testing.assert_array_equal(a.obsm["gw_match"], expected.obsm["gw_match"])


@pytest.mark.parametrize("layout", ["fortran", "strided", "float32", "int"])
def test_point_layouts_and_dtypes_give_the_same_alignment(layout):
    rng = np.random.default_rng(3)
    xs, xt = rng.normal(size=(120, 3)), rng.normal(size=(100, 2))
    if layout == "float32":
        xs = xs.astype(np.float32)
    if layout == "int":
        xs = np.round(xs * 100).astype(np.int64)
    base = gwalign.align(np.ascontiguousarray(xs, dtype=np.float64), xt, progress=False, **FLAGS)
    if layout == "fortran":
        xs = np.asfortranarray(xs)
    if layout == "strided":
        wide = np.zeros((xs.shape[0], 2 * xs.shape[1]))
        wide[:, ::2] = xs
        xs = wide[:, ::2]
        assert not xs.flags.c_contiguous
    r = gwalign.align(xs, xt, progress=False, **FLAGS)
    np.testing.assert_array_equal(r.plan, base.plan)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_graph_index_dtypes_and_float64_weights_give_the_same_alignment(index_dtype):
    xs, xt, _, _ = spiral_pair()
    gs, gt = gwalign.knn_graph(xs, 5), gwalign.knn_graph(xt, 5)
    base = gwalign.align(gs, gt, progress=False, **FLAGS)
    g64 = sp.csr_matrix((gs.data.astype(np.float64), gs.indices.astype(index_dtype),
                         gs.indptr.astype(index_dtype)), shape=gs.shape)
    g64.indices = g64.indices.astype(index_dtype)
    g64.indptr = g64.indptr.astype(index_dtype)
    r = gwalign.align(g64, gt.tocoo(), progress=False, **FLAGS)
    np.testing.assert_array_equal(r.plan, base.plan)


def test_dense_plan_and_matching_are_views_of_the_result():
    xs, xt, _, _ = spiral_pair()
    r = gwalign.align(xs, xt, progress=False, **FLAGS)
    plan = r.plan
    assert not plan.flags.owndata and plan.base is not None
    assert np.shares_memory(plan, r.plan)  # both views of the same C++ buffer
    assert np.shares_memory(r.matching, r.matching)
    assert plan.shape == (400, 500) and r.matching.dtype == np.int32
    np.testing.assert_array_equal(r.matching, plan.argmax(axis=1))


def test_topk_plan_is_csr_with_top_k_entries_per_row():
    # The sampled solver's plans are dense (no ties among a row's top entries to break).
    xs, xt, _, _ = spiral_pair()
    dense = gwalign.align(xs, xt, progress=False, solver="sampled", **FLAGS)
    r = gwalign.align(xs, xt, plan_format="topk", top_k=4, progress=False, solver="sampled",
                      **FLAGS)
    assert sp.isspmatrix_csr(r.plan) and r.plan.shape == (400, 500)
    assert np.all(np.diff(r.plan.indptr) == 4)
    row = dense.plan[0]
    top = np.sort(np.argsort(row)[-4:])
    np.testing.assert_array_equal(r.plan.indices[:4], top)
    np.testing.assert_array_equal(r.matching, dense.matching)


def test_spiral_alignment_recovers_the_angles():
    xs, xt, ts, tt = spiral_pair()
    r = gwalign.align(xs, xt, truth=(ts, tt), progress=False, **FLAGS)
    assert r.report["abs_rho"] >= 0.99
    assert r.ok()


def test_every_cpp_option_is_a_keyword_with_the_cpp_default():
    names = gwalign.option_names()
    for name in ("num_anchors", "epsilon", "knn", "seed", "plan_format", "distance_mode",
                 "precision", "rho_a", "partial_mass", "top_k", "multiscale"):
        assert name in names
    o = gwalign.Options()
    assert o.num_anchors == 50 and o.epsilon == 1e-3 and o.plan_format == "dense"
    assert o.distance_mode is None and o.partial_mass is None and o.rho_a == float("inf")
    assert "num_anchors=50" in repr(o) and gwalign.options_dict(o)["knn"] == 30
    import inspect
    params = inspect.signature(gwalign.align).parameters
    assert all(name in params for name in names)
    assert params["num_anchors"].default == 50
    opts = gwalign.make_options(num_anchors=80, distance_mode="landmark")
    assert opts.num_anchors == 80 and opts.distance_mode == "landmark"
    xs, xt, _, _ = spiral_pair()
    r = gwalign.align(xs, xt, options=opts, progress=False, max_iterations=60, knn=5)
    assert r.options.num_anchors == 80 and r.source_distances == "landmark"


def test_errors_map_to_python_exceptions_with_the_library_message():
    xs, xt, _, _ = spiral_pair()
    bad = xs.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="source points has a non-finite value"):
        gwalign.align(bad, xt, progress=False)
    with pytest.raises(ValueError, match="num_anchors"):
        gwalign.align(xs, xt, num_anchors=0, progress=False)
    with pytest.raises(TypeError, match="unknown option 'num_anchor'"):
        gwalign.align(xs, xt, num_anchor=5)
    with pytest.raises(ValueError, match="unknown value 'sparse'"):
        gwalign.align(xs, xt, plan_format="sparse")
    with pytest.raises(ValueError, match="square"):
        gwalign.align(xs, xt, as_distances=True)
    if not gwalign.has_cuda:
        with pytest.raises(NotImplementedError, match="CUDA"):
            gwalign.align(xs, xt, backend="cuda", progress=False)
    neg = sp.csr_matrix(np.array([[0, -1.0], [-1.0, 0]]))
    with pytest.raises(ValueError, match="source graph"):
        gwalign.align(neg, neg, progress=False)


def long_solve_args():
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0, 4 * np.pi, 1500))
    xs = np.c_[t * np.cos(t), t * np.sin(t)]
    xt = np.c_[t * np.cos(t), 5 * rng.uniform(size=t.size), t * np.sin(t)]
    # No stopping rule can fire: the sampled loop runs max_iterations unless cancelled.
    return (xs, xt), dict(knn=5, max_iterations=100000, tolerance=0.0, plateau_improvement=0.0,
                          check_every=1, seed=2, solver="sampled")


def test_progress_callable_sees_iterations_and_false_cancels():
    seen = []

    def progress(p):
        seen.append((p.iteration, p.max_iterations, p.epsilon))
        return p.iteration < 20

    (xs, xt), kw = long_solve_args()
    r = gwalign.align(xs, xt, progress=progress, **kw)
    assert r.termination == "cancelled"
    assert seen[-1][0] == 20 and seen[0][1] == 100000
    assert r.iterations == 20


def test_ctrl_c_during_a_solve_raises_keyboard_interrupt_promptly():
    (xs, xt), kw = long_solve_args()
    timer = threading.Timer(1.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        gwalign.align(xs, xt, progress=False, **kw)
    elapsed = time.monotonic() - start
    timer.join()
    # 100000 iterations take minutes; the interrupt ends the solve at the next host check.
    assert elapsed < 30
    # The module is usable afterwards.
    small = gwalign.align(xs[:100], xt[:100], knn=5, max_iterations=60, progress=False)
    assert small.ok()


def test_gil_is_released_while_solving():
    (xs, xt), kw = long_solve_args()
    ticks = 0
    done = threading.Event()
    results = {}

    def solve():
        results["r"] = gwalign.align(xs, xt, progress=lambda p: p.iteration < 150, **kw)
        done.set()

    worker = threading.Thread(target=solve)
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert results["r"].termination == "cancelled"
    # With the GIL held for the whole solve the main thread could not run at all meanwhile.
    assert ticks > 50


def test_knn_graph_equals_brute_force_symmetrized_knn():
    rng = np.random.default_rng(5)
    x = rng.normal(size=(200, 4))
    k = 6
    g = gwalign.knn_graph(x, k, connect=False)
    d = cdist(x, x)
    np.fill_diagonal(d, np.inf)
    nearest = np.argsort(d, axis=1, kind="stable")[:, :k]
    want = np.zeros((200, 200), dtype=bool)
    want[np.repeat(np.arange(200), k), nearest.ravel()] = True
    want |= want.T
    got = g.toarray() > 0
    np.testing.assert_array_equal(got, want)
    rows, cols = np.nonzero(want)
    np.testing.assert_allclose(np.asarray(g[rows, cols]).ravel(), d[rows, cols], rtol=1e-6)


def test_gw_loss_equals_the_quadruple_sum():
    rng = np.random.default_rng(6)
    n, k = 7, 5
    dx, dy = cdist(*[rng.normal(size=(n, 2))] * 2), cdist(*[rng.normal(size=(k, 3))] * 2)
    t = rng.uniform(size=(n, k))
    t /= t.sum()
    want = sum((dx[i, kk] - dy[j, l]) ** 2 * t[i, j] * t[kk, l]
               for i in range(n) for j in range(k) for kk in range(n) for l in range(k))
    assert gwalign.gw_loss(dx, dy, t) == pytest.approx(want, rel=1e-12)
    assert gwalign.gw_loss(dx.astype(np.float32), np.asfortranarray(dy), t) == pytest.approx(
        want, rel=1e-6)


def test_version_cuda_flag_and_lazy_submodules():
    assert gwalign.__version__.count(".") == 2
    assert isinstance(gwalign.has_cuda, bool)
    assert callable(gwalign.gromov.gromov_wasserstein) and callable(gwalign.torchgw.sampled_gw)
    assert gwalign.cellgraph.EdgeMasker is not None


def test_default_progress_is_a_tqdm_bar_on_stderr(capsys):
    pytest.importorskip("tqdm", reason="tqdm (python3-tqdm) is not installed")
    xs, xt, _, _ = spiral_pair()
    gwalign.align(xs[:150], xt[:150], knn=5, max_iterations=60, check_every=1)
    assert "gwalign" in capsys.readouterr().err
    gwalign.align(xs[:150], xt[:150], knn=5, max_iterations=60, progress=False)
    assert capsys.readouterr().err == ""


def test_python_options_cover_every_field_declared_in_options_h():
    # A new gw::Options field must be added to GW_PY_*_OPTIONS in python/src/module.cpp (one
    # line); this test reads solver/options.h so that forgetting it fails here.
    import re
    from conftest import SOURCE_DIR
    text = (SOURCE_DIR / "solver/options.h").read_text()
    body = text[text.index("struct Options {"):text.index("bool is_valid(")]
    body = re.sub(r"//[^\n]*", "", body)
    declared = set(re.findall(r"^\s*[\w:<>, ]+?\s+(\w+)\s*(?:=[^;]*)?;", body, re.M))
    declared.discard("progress")  # a C++ callback; Python passes progress= to align()
    assert declared, "no fields parsed from solver/options.h"
    assert declared == set(gwalign.option_names())


def test_multiscale_scales_masses_given_in_points_to_the_coarse_problem():
    # slack_shared / partial_mass are in points of the full problem; the 100 x 100 coarse level
    # must not see 300 points (more than it has).
    xs, xt, ts, tt = spiral_pair()
    for kw in (dict(slack_shared=300.0), dict(partial_mass=300.0)):
        r = gwalign.align(xs, xt, multiscale=True, multiscale_size=100, truth=(ts, tt),
                          progress=False, **FLAGS, **kw)
        assert r.multiscale_used, kw
        assert r.report["abs_rho"] >= 0.9, kw


def test_solver_choice_and_exact_method_by_name_with_every_start_reported():
    # The exact-gradient solver (issue 15) under the C++ names: solver, exact_method, starts; the
    # result says what ran and why, and lists each start's loss.
    xs, xt, ts, tt = spiral_pair()
    r = gwalign.align(xs[:120], xt[:150], solver="exact", exact_method="cg", starts=2,
                      start_time_budget=60.0, progress=False, **FLAGS)
    assert r.solver == "exact" and r.solver_reason == "requested (solver = exact)"
    assert r.exact_method == "cg"
    # The two starts asked for, then the orientation check's two candidates (each either run, or
    # skipped with its reason and a NaN loss).
    assert [s["name"] for s in r.starts] == ["profiles", "product", "spectral",
                                             "spectral-reflected"]
    ran = [s for s in r.starts if not s["skipped"]]
    assert all(math.isnan(s["gw_loss"]) and s["iterations"] == 0
               for s in r.starts if s["skipped"])
    assert all(math.isfinite(s["map_objective"]) for s in r.starts[2:])
    assert 0 <= r.start_chosen < len(r.starts) and not r.starts[r.start_chosen]["skipped"]
    assert r.gw_loss == pytest.approx(min(s["gw_loss"] for s in ran), rel=1e-12)
    assert r.gw_loss_exact
    # CG never increases F: within the float32-product phase (whose log holds the objective's
    # quadratic model in float64) and within the float64 finish; where the finish starts, the
    # objective is recomputed in float64 from float32 products, which resolve it to ~1e-6 (up to
    # 1.9e-6 measured on random 100-220-point problems).
    costs = [row["cost"] for row in r.log]
    split = len(costs) - r.float64_finish_iterations
    for phase in (costs[:split], costs[split:]):
        assert all(b <= a * (1 + 1e-12) for a, b in zip(phase, phase[1:]))
    if 0 < split < len(costs):
        assert costs[split] <= costs[split - 1] * (1 + 2e-6)
    sampled = gwalign.align(xs[:120], xt[:150], solver="sampled", max_iterations=60,
                            progress=False, **FLAGS)
    assert sampled.solver == "sampled" and sampled.starts == [] and sampled.exact_method == ""
    assert gwalign.Options().solver == "auto" and gwalign.Options().exact_method == "hybrid"
    with pytest.raises(ValueError, match="Options.solver: unknown value 'fast'"):
        gwalign.align(xs, xt, solver="fast", progress=False)
