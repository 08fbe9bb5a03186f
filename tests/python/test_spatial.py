"""gwalign.spatial.align_slices and gwalign.transfer on AnnData: the same numbers as
`gwalign slices` / `gwalign transfer`, exact transfer through permutation plans, a numpy
reference for blurred plans, scanpy's copy= convention and one-line errors on bad input."""

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp

import gwalign
import gwalign.spatial
from conftest import run_cli

ad = pytest.importorskip("anndata")

# Measured on `gwalign generate tissue --sections 2 -n 800 --seed 0` (721 and 796 cells): domain
# push accuracy 0.751, registration error 0.076 of the section diameter (the test also pins both
# to the CLI's numbers); the bounds leave room for other BLAS / compilers' rounding.
MIN_DOMAIN_ACCURACY = 0.68
MAX_REGISTRATION_ERROR = 0.12

_run = run_cli


@pytest.fixture(scope="module")
def tissue(tmp_path_factory):
    """Two generated sections, `gwalign slices` on them, and align_slices(copy=True) on them."""
    root = tmp_path_factory.mktemp("tissue")
    _run("generate", "tissue", "--sections", 2, "-n", 800, "--seed", 0, "--out-dir", root / "in")
    paths = [root / "in" / "section_0.h5ad", root / "in" / "section_1.h5ad"]
    _run("slices", *paths, "--out-dir", root / "cli", "--transfer", "domain")
    inputs = [ad.read_h5ad(p) for p in paths]
    before = [(a.X.copy(), dict(a.obsm), a.obs.copy(), set(a.uns.keys())) for a in inputs]
    copies, plans, reports = gwalign.spatial.align_slices(inputs, copy=True)
    return dict(root=root, paths=paths, inputs=inputs, before=before, copies=copies, plans=plans,
                reports=reports, cli=[ad.read_h5ad(root / "cli" / p.name) for p in paths])


def test_align_slices_gives_the_cli_registered_coordinates_and_plan(tissue):
    for mine, theirs in zip(tissue["copies"], tissue["cli"]):
        np.testing.assert_allclose(mine.obsm["spatial_aligned"], theirs.obsm["spatial_aligned"],
                                   rtol=0, atol=1e-9)
    cli_plan = scipy.io.mmread(str(tissue["root"] / "cli" / "plan_0_1.mtx")).tocsr()
    plan = tissue["plans"][0]
    assert sp.issparse(plan) and plan.shape == cli_plan.shape
    assert abs(plan - cli_plan).max() < 1e-12
    report = tissue["reports"][0]
    assert (report["fixed"], report["moving"]) == (0, 1)
    assert report["overlap_mass"] == pytest.approx(1.0, abs=1e-6)
    assert report["solve"]["gw_loss"] == pytest.approx(report["gw_loss"])


def test_align_slices_copy_leaves_the_inputs_untouched(tissue):
    for adata, (x, obsm, obs, uns) in zip(tissue["inputs"], tissue["before"]):
        assert "spatial_aligned" not in adata.obsm
        assert set(adata.obsm.keys()) == set(obsm.keys())
        assert set(adata.uns.keys()) == uns
        assert (adata.X != x).nnz == 0
        pd.testing.assert_frame_equal(adata.obs, obs)
    for copy in tissue["copies"]:
        assert copy.obsm["spatial_aligned"].shape == (copy.n_obs, 3)


def test_domain_transfer_and_registration_reach_the_measured_quality_and_match_the_cli(tissue):
    fixed, moving = tissue["copies"]
    out = gwalign.transfer(fixed, moving, tissue["plans"][0], keys=["domain"],
                           key_added="domain_pred", copy=True)
    assert "domain_pred" not in moving.obs  # copy=True: the receiver is untouched too
    predicted = out.obs["domain_pred"].astype(str).to_numpy()
    assert np.array_equal(predicted, tissue["cli"][1].obs["domain_transferred"].astype(str).to_numpy())
    accuracy = np.mean(predicted == moving.obs["domain"].astype(str).to_numpy())
    assert accuracy > MIN_DOMAIN_ACCURACY
    # Registration error: section 0 is the frame, so its (exact) motion onto the true positions
    # carries section 1's registered coordinates to where the truth has them.
    src, dst = fixed.obsm["spatial_aligned"][:, :2], np.asarray(fixed.obsm["spatial_true"])[:, :2]
    ms, md = src.mean(0), dst.mean(0)
    u, _, vt = np.linalg.svd((src - ms).T @ (dst - md))
    rotation = vt.T @ u.T
    moved = (moving.obsm["spatial_aligned"][:, :2] - ms) @ rotation.T + md
    error = np.linalg.norm(moved - np.asarray(moving.obsm["spatial_true"])[:, :2], axis=1).mean()
    assert error / moving.uns["generator"]["diameter"] < MAX_REGISTRATION_ERROR
    probabilities = out.obsm["domain_pred_probabilities"]
    assert list(probabilities.columns) == list(out.uns["domain_pred_classes"])
    np.testing.assert_allclose(probabilities.to_numpy().sum(1), 1.0, atol=1e-12)


def test_python_transfer_matches_gwalign_transfer_pull(tissue, tmp_path):
    paths = tissue["paths"]
    plan_path = tissue["root"] / "cli" / "plan_0_1.mtx"
    _run("transfer", *paths, "--plan", plan_path, "--keys", "domain,obsm:spatial_true",
         "--direction", "pull", "-o", tmp_path / "pulled.h5ad")
    theirs = ad.read_h5ad(tmp_path / "pulled.h5ad")
    fixed, moving = (ad.read_h5ad(p) for p in paths)
    gwalign.transfer(fixed, moving, scipy.io.mmread(str(plan_path)), ["domain", "obsm:spatial_true"],
                     direction="pull", key_added={"domain": "d", "obsm:spatial_true": "t"})
    assert np.array_equal(fixed.obs["d"].astype(str), theirs.obs["domain_transferred"].astype(str))
    np.testing.assert_allclose(fixed.obs["d_confidence"], theirs.obs["domain_transferred_confidence"],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(fixed.obsm["t"], theirs.obsm["spatial_true_transferred"], rtol=0, atol=1e-9)


def _labelled(n, seed):
    rng = np.random.default_rng(seed)
    obs = pd.DataFrame({
        "kind": pd.Categorical(rng.choice(["a", "b", "c", "d"], n)),
        "score": rng.normal(size=n),
    }, index=["c%d" % i for i in range(n)])
    adata = ad.AnnData(X=rng.poisson(2.0, (n, 6)).astype(np.float32), obs=obs)
    adata.var_names = ["g%d" % j for j in range(6)]
    adata.obsm["spatial"] = rng.uniform(0, 100, (n, 2))
    return adata


@pytest.mark.parametrize("direction", ["push", "pull"])
def test_transfer_through_a_permutation_plan_is_exact(direction):
    n = 57
    src, tgt = _labelled(n, 1), _labelled(n, 2)
    perm = np.random.default_rng(3).permutation(n)  # source cell i <-> target cell perm[i]
    plan = sp.csr_matrix((np.full(n, 1.0 / n), (np.arange(n), perm)), shape=(n, n))
    sender, receiver = (src, tgt) if direction == "push" else (tgt, src)
    index = np.argsort(perm) if direction == "push" else perm  # receiver r <- sender index[r]
    gwalign.transfer(src, tgt, plan, ["kind", "score", "obsm:spatial", "X"], direction=direction,
                     key_added={"kind": "k", "score": "s", "obsm:spatial": "xy", "X": "x"})
    assert np.array_equal(receiver.obs["k"].astype(str), sender.obs["kind"].astype(str).to_numpy()[index])
    assert np.all(receiver.obs["k_confidence"] == 1.0)
    np.testing.assert_allclose(receiver.obs["s"], sender.obs["score"].to_numpy()[index], rtol=1e-15)
    np.testing.assert_allclose(receiver.obsm["xy"], sender.obsm["spatial"][index], rtol=1e-15)
    np.testing.assert_allclose(receiver.obsm["x"], sender.X[index], rtol=1e-15)
    assert list(receiver.uns["x_var_names"]) == list(sender.var_names)
    onehot = receiver.obsm["k_probabilities"].to_numpy()
    assert np.array_equal(onehot.argmax(1), receiver.obs["k"].cat.codes.to_numpy())
    assert np.all(onehot.max(1) == 1.0) and np.all(onehot.sum(1) == 1.0)


def test_transfer_through_a_blurred_plan_matches_a_numpy_reference():
    n, k = 40, 55
    src, tgt = _labelled(n, 4), _labelled(k, 5)
    rng = np.random.default_rng(6)
    dense = rng.random((n, k)) * (rng.random((n, k)) < 0.2)
    dense[:, 7] = 0.0  # a target cell the plan does not reach
    dense /= dense.sum()
    gwalign.transfer(src, tgt, sp.csr_matrix(dense), ["kind", "score"], key_added={"kind": "k", "score": "s"})
    onehot = np.eye(4)[src.obs["kind"].cat.codes.to_numpy()]
    mass = dense.sum(0)
    reached = mass > 1e-6 * mass.sum() / k
    expected = (dense.T @ onehot)[reached] / mass[reached, None]
    got = tgt.obsm["k_probabilities"].to_numpy()
    np.testing.assert_allclose(got[reached], expected, rtol=1e-12, atol=1e-15)
    assert np.all(got[~reached] == 0.0) and not reached[7]
    assert tgt.obs["k"].isna().to_numpy()[7] and tgt.obs["k_confidence"].iloc[7] == 0.0
    assert np.array_equal(tgt.obs["k"].cat.codes.to_numpy()[reached], expected.argmax(1))
    np.testing.assert_allclose(tgt.obs["s"].to_numpy()[reached],
                               (dense.T @ src.obs["score"].to_numpy())[reached] / mass[reached], rtol=1e-12)
    assert np.isnan(tgt.obs["s"].iloc[7])


def test_align_slices_in_place_writes_each_section_and_its_z():
    a, b = _labelled(120, 7), _labelled(130, 8)
    plans, reports = gwalign.spatial.align_slices([a, b], key_added="stacked", z_spacing=2.5, seed=1)
    assert a.obsm["stacked"].shape == (120, 3) and b.obsm["stacked"].shape == (130, 3)
    np.testing.assert_array_equal(a.obsm["stacked"][:, :2], a.obsm["spatial"])  # the frame
    assert np.all(a.obsm["stacked"][:, 2] == 0.0) and np.all(b.obsm["stacked"][:, 2] == 2.5)
    assert plans[0].shape == (120, 130) and len(reports) == 1


def test_align_slices_to_a_reference_with_partial_overlap_moves_that_mass():
    sections = [_labelled(120, 7), _labelled(130, 8), _labelled(110, 9)]
    plans, reports = gwalign.spatial.align_slices(sections, overlap=0.6, reference=1, seed=1)
    assert [(r["fixed"], r["moving"]) for r in reports] == [(1, 0), (1, 2)]
    assert [p.shape for p in plans] == [(130, 120), (130, 110)]
    for plan, report in zip(plans, reports):
        assert report["overlap"] == 0.6
        # The sampled partial solve meets the mass to its polishing Sinkhorn's convergence: on
        # these random 110-130-cell sections 0.590-0.600 (the C++ stack test allows 0.01 too).
        assert plan.sum() == pytest.approx(0.6, abs=0.015)
        assert report["overlap_mass"] == pytest.approx(plan.sum(), rel=1e-9)
    np.testing.assert_array_equal(sections[1].obsm["spatial_aligned"][:, :2], sections[1].obsm["spatial"])
    assert [s.obsm["spatial_aligned"][0, 2] for s in sections] == [0.0, 1.0, 2.0]
    # Pulling onto the reference's cells: cells the partial plan leaves out get no label.
    out = gwalign.transfer(sections[1], sections[0], plans[0], ["kind"], direction="pull", copy=True)
    missing = out.obs["kind"].isna().to_numpy()
    assert np.array_equal(missing, out.obs["kind_confidence"].to_numpy() == 0.0)
    assert np.all(out.obsm["kind_probabilities"].to_numpy()[missing] == 0.0)


def test_bad_input_raises_one_line_value_errors():
    a, b = _labelled(30, 9), _labelled(30, 10)
    c = b.copy()
    del c.obsm["spatial"]
    with pytest.raises(ValueError, match=r"section 1 has no obsm\['spatial'\]"):
        gwalign.spatial.align_slices([a, c])
    d = b.copy()
    d.var_names = ["other%d" % j for j in range(6)]
    with pytest.raises(ValueError, match="no gene .* is shared"):
        gwalign.spatial.align_slices([a, d])
    e = b.copy()
    e.obsm["spatial"] = np.zeros((30, 3))
    with pytest.raises(ValueError, match=r"obsm\['spatial'\] is 30 x 3"):
        gwalign.spatial.align_slices([a, e])
    with pytest.raises(ValueError, match="at least two sections"):
        gwalign.spatial.align_slices([a])
    with pytest.raises(ValueError, match="plan is 30 x 29"):
        gwalign.transfer(a, b, sp.random(30, 29, density=0.2), ["kind"])
    with pytest.raises(ValueError, match="has no obs column 'missing'"):
        gwalign.transfer(a, b, sp.eye(30), ["missing"])
    with pytest.raises(ValueError, match=r"has no obsm\['nothing'\]"):
        gwalign.transfer(a, b, sp.eye(30), ["obsm:nothing"])
    with pytest.raises(ValueError, match="direction must be"):
        gwalign.transfer(a, b, sp.eye(30), ["kind"], direction="sideways")
    negative = sp.eye(30, format="csr") * -1.0
    with pytest.raises(ValueError, match="negative or non-finite"):
        gwalign.transfer(a, b, negative, ["kind"])
    assert "kind_confidence" not in b.obs  # nothing written by the failed calls
