"""gwalign.torchgw: the reference sampled-GW package's sampled_gw / build_knn_graph on our solver."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import cdist

import gwalign
from gwalign.torchgw import build_knn_graph, joint_embedding, sampled_gw, sampled_lowrank_gw
from conftest import spiral_pair

RHO = 0.998  # the quality bar at 400 x 500


def abs_rho(T, ts, tt):
    return abs(gwalign._core.spearman(ts, tt[np.asarray(T).argmax(axis=1)]))


@pytest.mark.parametrize("mode", ["precomputed", "dijkstra", "landmark"])
def test_spiral_to_swissroll_400x500_recovers_the_angles_in_every_distance_mode(mode):
    xs, xt, ts, tt = spiral_pair()
    T = sampled_gw(xs, xt, distance_mode=mode, k=5, M=80, seed=1)
    assert tuple(T.shape) == (400, 500)
    assert abs_rho(T, ts, tt) >= RHO


def test_log_has_the_reference_keys():
    xs, xt, _, _ = spiral_pair()
    T, log = sampled_gw(xs, xt, k=5, max_iter=80, log=True, seed=1)
    assert set(log) == {"err_list", "n_iter", "gw_cost"}
    assert log["n_iter"] == len(log["err_list"]) and log["n_iter"] <= 80
    assert np.isfinite(log["gw_cost"])


def test_precomputed_distance_matrices_semi_relaxed_ema_mixed_precision_multiscale():
    xs, xt, ts, tt = spiral_pair()
    gs, gt = build_knn_graph(xs, k=5), build_knn_graph(xt, k=5)
    from scipy.sparse.csgraph import shortest_path
    ds, dt = shortest_path(gs, directed=False), shortest_path(gt, directed=False)
    T = sampled_gw(dist_source=ds, dist_target=dt, distance_mode="precomputed", seed=1)
    assert abs_rho(T, ts, tt) >= RHO
    T = sampled_gw(xs, xt, k=5, semi_relaxed=True, rho=1.0, seed=1)
    # The target marginal is free: rows keep p, columns need not sum to q.
    np.testing.assert_allclose(np.asarray(T).sum(axis=1), np.full(400, 1 / 400), rtol=0.05)
    assert abs_rho(T, ts, tt) >= 0.99
    for kw in (dict(lambda_ema_beta=0.5), dict(mixed_precision=True),
               dict(multiscale=True, n_coarse=100)):
        T = sampled_gw(xs, xt, k=5, M=80, seed=1, **kw)
        assert abs_rho(T, ts, tt) >= 0.99, kw


def test_fused_and_pure_wasserstein_with_c_linear():
    xs, xt, ts, tt = spiral_pair()
    c = np.abs(ts[:, None] - tt[None, :])
    c /= c.max()
    T = sampled_gw(xs, xt, k=5, fgw_alpha=0.5, C_linear=c, seed=1)
    assert abs_rho(T, ts, tt) >= RHO
    T = sampled_gw(fgw_alpha=1.0, C_linear=c)
    assert tuple(T.shape) == (400, 500) and abs_rho(T, ts, tt) >= RHO


def test_reference_validation_errors_and_unsupported_parameters():
    xs, xt, _, _ = spiral_pair()
    with pytest.raises(ValueError, match="Cannot infer dataset sizes"):
        sampled_gw()
    with pytest.raises(ValueError, match="distance_mode must be one of"):
        sampled_gw(xs, xt, distance_mode="geodesic")
    with pytest.raises(ValueError, match="fgw_alpha > 0 requires C_linear"):
        sampled_gw(xs, xt, fgw_alpha=0.5)
    with pytest.raises(NotImplementedError, match="differentiable"):
        sampled_gw(xs, xt, differentiable=True)
    with pytest.raises(ValueError, match="lambda_ema_beta"):
        sampled_gw(xs, xt, lambda_ema_beta=1.5)
    with pytest.raises(ValueError, match="slack_shared"):
        sampled_gw(xs, xt, s_shared=600)  # more than max(N, K) = 500 points
    with pytest.raises(ValueError, match="not linked to the anchor"):
        joint_embedding("tgt", {"src": xs, "tgt": xt}, {}, {}, out_dim=3)
    with pytest.raises(NotImplementedError, match="rank"):
        sampled_lowrank_gw(xs, xt, rank=30)


def test_build_knn_graph_is_sparse_symmetric_connected_with_euclidean_weights():
    rng = np.random.default_rng(0)
    two_clusters = np.r_[rng.normal(size=(100, 2)), rng.normal(size=(100, 2)) + 50]
    g = build_knn_graph(two_clusters, k=2)
    assert sp.issparse(g) and g.shape == (200, 200)
    assert connected_components(g, directed=False)[0] == 1
    assert abs(g - g.T).nnz == 0
    rows, cols = g.nonzero()
    d = cdist(two_clusters, two_clusters)
    np.testing.assert_allclose(np.asarray(g[rows, cols]).ravel(), d[rows, cols], rtol=1e-6)


def test_s_shared_sets_the_slack_mass_and_the_plan_still_moves_all_mass():
    xs, xt, ts, tt = spiral_pair()
    T, log = sampled_gw(xs, xt, k=5, s_shared=100, seed=1, log=True)
    assert float(np.asarray(T).sum()) == pytest.approx(1.0, abs=1e-6)
    assert abs_rho(T, ts, tt) >= 0.99
    r = gwalign.align(xs, xt, knn=5, slack_shared=100, progress=False, max_iterations=60)
    assert r.options.slack_shared == 100 and r.report["result"]["options"]["slack_shared"] == 100


def test_gw_term_without_structure_names_the_mode_and_matrices_only_drive_precomputed():
    xs, xt, _, _ = spiral_pair()
    xs, xt = xs[::4], xt[::4]  # 100 x 125 keeps it quick
    c = cdist(xs[:, :1], xt[:, :1])
    # C_linear alone is enough only for fgw_alpha=1; otherwise the mode's inputs are named.
    with pytest.raises(ValueError, match="distance_mode='dijkstra' requires X_source and X_target"):
        sampled_gw(C_linear=c)
    with pytest.raises(ValueError, match="'landmark' requires X_source and X_target"):
        sampled_gw(C_linear=c, fgw_alpha=0.25, distance_mode="landmark")
    with pytest.raises(ValueError, match=r"'precomputed' requires \(dist_source, dist_target\)"):
        sampled_gw(dist_source=cdist(xs, xs), C_linear=c, fgw_alpha=0.5,
                   distance_mode="precomputed")
    # Points plus matrices: a graph mode builds on the points and leaves the matrices alone;
    # "precomputed" (and a call without points) takes the matrices.
    rng = np.random.default_rng(11)
    noise_s, noise_t = rng.uniform(size=(100, 100)), rng.uniform(size=(125, 125))
    noise_s, noise_t = noise_s + noise_s.T, noise_t + noise_t.T
    np.fill_diagonal(noise_s, 0)
    np.fill_diagonal(noise_t, 0)
    run = dict(k=5, max_iter=40, seed=3)
    from_points = np.asarray(sampled_gw(xs, xt, **run))
    ignored = np.asarray(sampled_gw(xs, xt, dist_source=noise_s, dist_target=noise_t, **run))
    np.testing.assert_array_equal(ignored, from_points)
    used = np.asarray(sampled_gw(xs, xt, dist_source=noise_s, dist_target=noise_t,
                                 distance_mode="precomputed", **run))
    alone = np.asarray(sampled_gw(dist_source=noise_s, dist_target=noise_t, **run))
    np.testing.assert_array_equal(used, alone)
    assert not np.allclose(used, from_points)


def test_small_balanced_calls_run_the_sampled_entropic_solver_and_honour_its_parameters():
    # 60 x 70 without s_shared is small enough for gwalign's automatic exact solver; the drop-in
    # must still run the sampled loop its parameters describe.
    rng = np.random.default_rng(21)
    a = np.linspace(0, 2 * np.pi, 60, endpoint=False)
    b = np.linspace(0, 2 * np.pi, 70, endpoint=False)
    ring = np.c_[np.cos(a), np.sin(a)] + 0.02 * rng.normal(size=(60, 2))
    ellipse = np.c_[2 * np.cos(b), np.sin(b), 0.1 * rng.normal(size=70)]
    T, log = sampled_gw(ring, ellipse, k=6, M=20, max_iter=300, min_iter_before_converge=40,
                        log=True, seed=2)
    assert 40 <= log["n_iter"] <= 300 and len(log["err_list"]) == log["n_iter"]
    T = np.asarray(T)
    # An entropic plan spreads each row over several columns (an exact vertex would not).
    assert (T > 1e-12).sum() > 3 * 60
    sharper = np.asarray(sampled_gw(ring, ellipse, k=6, M=20, max_iter=300, epsilon=1e-4, seed=2))
    smoother = np.asarray(sampled_gw(ring, ellipse, k=6, M=20, max_iter=300, epsilon=5e-2, seed=2))
    assert sharper.max() > smoother.max()  # epsilon is not ignored
    # gwalign's own choice stays reachable by name.
    _, exact_log = sampled_gw(ring, ellipse, k=6, solver="exact", log=True)
    assert exact_log["n_iter"] >= 1
