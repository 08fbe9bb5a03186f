"""gwalign.joint_embedding and the drop-in gwalign.torchgw.joint_embedding."""

import numpy as np
import pytest
import scipy.sparse as sp

import gwalign
from gwalign.torchgw import build_knn_graph, joint_embedding
from conftest import spiral_pair

# Partner distance / random-pair distance on the spiral (see tests/embedding/embedding_test.cpp:
# with the swiss roll as anchor its height axis, which the spiral lacks, stays in the distance).
MAX_RATIO_SPIRAL_ANCHOR = 0.12
MAX_RATIO_SWISSROLL_ANCHOR = 0.35


def _as_tensor_if_possible(a):
    try:
        import torch
    except ImportError:
        return a
    return torch.from_numpy(a)


def test_dropin_call_on_the_quickstart_shapes_returns_numpy_arrays_of_out_dim_columns():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)).astype(np.float32)
    Y = rng.normal(size=(600, 5)).astype(np.float32)
    # Any plan of the right shape will do here (the spiral test below uses a solved one); a torch
    # tensor, as sampled_gw returns when torch is importable.
    T = _as_tensor_if_possible(rng.uniform(size=(500, 600)) / (500 * 600))
    g_src = build_knn_graph(X, k=10)
    g_tgt = build_knn_graph(Y, k=10)
    emb = joint_embedding(anchor_name="tgt", data_by_name={"src": X, "tgt": Y},
                          graphs_by_name={"src": g_src, "tgt": g_tgt},
                          transport_plans={("src", "tgt"): T}, out_dim=10)
    assert set(emb) == {"src", "tgt"}
    # The reference returns dict[str, np.ndarray], whatever the plans' type.
    assert all(isinstance(z, np.ndarray) for z in emb.values())
    assert emb["src"].shape == (500, 10) and emb["tgt"].shape == (600, 10)
    assert np.all(np.isfinite(emb["src"])) and np.all(np.isfinite(emb["tgt"]))
    # Y has 5 columns: 5 principal components, then zero padding.
    assert np.all(np.abs(emb["tgt"][:, :5]).max(axis=0) > 0)
    assert np.all(emb["tgt"][:, 5:] == 0)
    # torch inputs (points and plan) give the same numpy arrays.
    torch = pytest.importorskip("torch")
    again = joint_embedding("tgt", {"src": torch.from_numpy(X), "tgt": torch.from_numpy(Y)},
                            {"src": g_src, "tgt": g_tgt}, {("src", "tgt"): T}, out_dim=10)
    assert isinstance(again["src"], np.ndarray)
    np.testing.assert_allclose(again["src"], emb["src"], rtol=0, atol=1e-12)


def _numpy_pca(x, dimension):
    """PCA by numpy's eigh, each axis signed so its largest-magnitude loading is positive."""
    xc = x - x.mean(axis=0)
    values, vectors = np.linalg.eigh(xc.T @ xc)
    order = np.argsort(values)[::-1][:dimension]
    vectors = vectors[:, order]
    signs = np.sign(vectors[np.abs(vectors).argmax(axis=0), np.arange(vectors.shape[1])])
    z = np.zeros((x.shape[0], dimension))
    z[:, :vectors.shape[1]] = xc @ (vectors * signs)
    return z


def test_native_lambda_zero_is_pca_then_barycentric_projection_dense_and_sparse_plans():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(40, 4)) * [3.0, 2.0, 1.0, 0.5]
    T = rng.uniform(size=(40, 30)) * (rng.uniform(size=(40, 30)) < 0.5)
    T[:, 0] += 0.01  # every column (b point) has mass
    emb = gwalign.joint_embedding({"a": a, "b": np.zeros((30, 2))}, {("a", "b"): T}, anchor="a",
                                  dimension=3, lambda_reg=0.0)
    assert isinstance(emb["a"], np.ndarray) and emb["a"].dtype == np.float64
    za = _numpy_pca(a, 3)
    np.testing.assert_allclose(emb["a"], za, rtol=0, atol=1e-10)
    zb = (T.T @ za) / T.sum(axis=0)[:, None]
    np.testing.assert_allclose(emb["b"], zb, rtol=0, atol=1e-10)
    sparse = gwalign.joint_embedding({"a": a, "b": np.zeros((30, 2))},
                                     {("a", "b"): sp.csr_matrix(T)}, anchor="a", dimension=3,
                                     lambda_reg=0.0)
    np.testing.assert_allclose(sparse["b"], zb, rtol=0, atol=1e-10)


def test_native_smoothing_reports_and_builds_missing_graphs():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(50, 3)), rng.normal(size=(60, 2))
    T = rng.uniform(size=(60, 50))
    emb, info = gwalign.joint_embedding({"a": a, "b": b}, {("b", "a"): T}, anchor="a",
                                        dimension=2, return_info=True)  # b's graph: knn_graph(b)
    assert emb["b"].shape == (60, 2)
    assert info["datasets"]["b"]["parent"] == "a"
    assert info["datasets"]["a"]["parent"] is None
    assert info["datasets"]["b"]["cg_iterations"] > 0
    assert info["anchor_components"] == 2
    assert info["unused_plans"] == []


def _partner_ratio(zs, zt, ts, tt):
    partner = np.abs(tt[None, :] - ts[:, None]).argmin(axis=1)
    rng = np.random.default_rng(4)
    random = rng.integers(0, len(tt), size=len(ts))
    near = np.linalg.norm(zs - zt[partner], axis=1).mean()
    far = np.linalg.norm(zs - zt[random], axis=1).mean()
    return near / far


def test_spiral_points_of_the_same_angle_land_together_in_the_joint_embedding():
    xs, xt, ts, tt = spiral_pair()
    T = gwalign.align(xs, xt, knn=5, epsilon=0.005, num_anchors=80, seed=1).plan
    assert gwalign._core.spearman(ts, tt[T.argmax(axis=1)]) > 0.99
    graphs = {"src": gwalign.knn_graph(xs, 5), "tgt": gwalign.knn_graph(xt, 5)}
    for anchor, bar in (("src", MAX_RATIO_SPIRAL_ANCHOR), ("tgt", MAX_RATIO_SWISSROLL_ANCHOR)):
        emb = gwalign.joint_embedding({"src": xs, "tgt": xt}, {("src", "tgt"): T},
                                      anchor=anchor, graphs=graphs, dimension=10)
        assert _partner_ratio(emb["src"], emb["tgt"], ts, tt) < bar, anchor


def test_errors_name_the_dataset_or_plan():
    rng = np.random.default_rng(5)
    a, b, c = rng.normal(size=(10, 2)), rng.normal(size=(12, 2)), rng.normal(size=(8, 2))
    T = rng.uniform(size=(10, 12))
    with pytest.raises(ValueError, match="dataset 'c' is not linked to the anchor 'a'"):
        gwalign.joint_embedding({"a": a, "b": b, "c": c}, {("a", "b"): T}, anchor="a")
    with pytest.raises(ValueError, match=r"plan \(b, a\) is 10 x 12"):
        gwalign.joint_embedding({"a": a, "b": b}, {("b", "a"): T}, anchor="a")
    with pytest.raises(ValueError, match="anchor 'z' is not a key"):
        gwalign.joint_embedding({"a": a, "b": b}, {("a", "b"): T}, anchor="z")
    with pytest.raises(ValueError, match="negative entry"):
        gwalign.joint_embedding({"a": a, "b": b}, {("a", "b"): -T}, anchor="a")
    with pytest.raises(ValueError, match="lambda must be"):
        gwalign.joint_embedding({"a": a, "b": b}, {("a", "b"): T}, anchor="a", lambda_reg=-1)
