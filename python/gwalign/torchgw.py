"""Drop-in entry points for the reference sampled-GW package (TorchGW): ``sampled_gw``,
``build_knn_graph``, ``joint_embedding`` and ``sampled_lowrank_gw`` with its public signatures
(parameter names, order, defaults) and return types.

    from gwalign.torchgw import sampled_gw      # instead of: from torchgw import sampled_gw
    T = sampled_gw(X, Y, distance_mode="landmark", M=80)

Written from the package's documented API (its README and docstrings); none of its code is used.
Return types are the reference's: sampled_gw -> torch.Tensor (float64, on the CPU), or
(T, {"err_list", "n_iter", "gw_cost"}) with log=True; build_knn_graph -> scipy.sparse.csr_matrix;
joint_embedding -> {name: numpy.ndarray}. Without torch (which the reference requires)
sampled_gw returns a numpy array instead.

Parameter mapping onto gwalign.Options:
  M -> num_anchors, alpha -> momentum, max_iter -> max_iterations, tol -> tolerance,
  epsilon -> epsilon, k -> knn, min_iter_before_converge -> min_iterations,
  n_landmarks -> num_landmarks, distance_mode -> distance_mode, s_shared -> slack_shared,
  fgw_alpha -> fused_weight
  (C_linear is the feature cost), semi_relaxed + rho -> rho_b = rho (the target marginal is
  relaxed), multiscale / n_coarse -> multiscale / multiscale_size, mixed_precision -> precision
  "f32" (else "f64"), lambda_ema_beta -> lambda_ema = 1 - beta (TorchGW's beta weighs the new
  sample, gwalign's weighs the running average; None means no EMA, and so does 0 here),
  device "cuda" -> backend "cuda"; solver = "sampled" always (gwalign's automatic choice would
  run its exact, unregularized solver on small problems; solver="auto" by name restores it).
joint_embedding(anchor_name, data_by_name, graphs_by_name, transport_plans, lambda_reg=1.0,
out_dim=30) is gwalign.joint_embedding (the anchor's PCA, then Laplacian-smoothed barycentric
projections; see its docstring): {name: n x out_dim float64 ndarray}. Not supported
(NotImplementedError naming the parameter): differentiable=True (no autograd through the C++
solver) and the low-rank solver (sampled_lowrank_gw, any rank; semi_relaxed=True there is the
reference's ValueError). Other gwalign options can be passed to sampled_gw by name as extra
keyword arguments (e.g. seed=1, threads=2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import inspect

import numpy as np

from . import _align

if TYPE_CHECKING:  # the return annotations (strings: this module imports torch only when used)
    import torch
    from scipy.sparse import csr_matrix

__all__ = ["sampled_gw", "sampled_lowrank_gw", "build_knn_graph", "joint_embedding"]

_VALID_MODES = ("precomputed", "dijkstra", "landmark")


def _numpy(x):
    if x is None:
        return None
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _output(T):
    try:
        import torch
    except ImportError:
        return T
    return torch.from_numpy(np.ascontiguousarray(T))


def build_knn_graph(X, k=30) -> csr_matrix:
    """Symmetric kNN graph of the rows of X: a scipy.sparse.csr_matrix (n x n, weights =
    Euclidean distances), stitched until connected (gwalign.knn_graph)."""
    return _align.knn_graph(_numpy(X), k)


# The sampled loop's settings among sampled_gw's parameters (gwalign.Options field -> parameter).
_SAMPLED_LOOP_PARAMETERS = dict(num_anchors="M", momentum="alpha", max_iterations="max_iter",
                                tolerance="tol", epsilon="epsilon",
                                min_iterations="min_iter_before_converge", multiscale="multiscale")


def sampled_gw(X_source=None, X_target=None, p=None, q=None, *, distance_mode="dijkstra",
               dist_source=None, dist_target=None, n_landmarks=50, fgw_alpha=0.0, C_linear=None,
               s_shared=None, M=50, alpha=0.9, max_iter=500, tol=1e-5, epsilon=0.001, k=30,
               min_iter_before_converge=50, device=None, verbose=False, verbose_every=20,
               log=False, differentiable=False, grad_mode="implicit", semi_relaxed=False,
               rho=1.0, multiscale=False, n_coarse=None, lambda_ema_beta=None,
               mixed_precision=False,
               **gwalign_options) -> torch.Tensor | tuple[torch.Tensor, dict]:
    """Sampled Gromov-Wasserstein plan between two datasets (TorchGW's sampled_gw).

    Sides: (X_source, X_target) point clouds, (dist_source, dist_target) precomputed distance
    matrices (used with distance_mode="precomputed", or when no point clouds are given), or only
    C_linear with fgw_alpha=1 (plain entropic OT); fgw_alpha < 1 without either pair is a
    ValueError naming distance_mode. Returns T (N x K, a float64 torch.Tensor on the CPU; a
    numpy array when torch is not installed), or (T, {"err_list", "n_iter", "gw_cost"}) with
    log=True."""
    if differentiable:
        raise NotImplementedError("differentiable=True is not supported by gwalign.torchgw "
                                  "(no autograd through the C++ solver)")
    Xs, Xt = _numpy(X_source), _numpy(X_target)
    Ds, Dt = _numpy(dist_source), _numpy(dist_target)
    C = _numpy(C_linear)
    if Ds is not None and Dt is not None:
        N, K = Ds.shape[0], Dt.shape[0]
    elif Xs is not None and Xt is not None:
        N, K = Xs.shape[0], Xt.shape[0]
    elif C is not None:
        N, K = C.shape
    else:
        raise ValueError("Cannot infer dataset sizes. Provide (X_source, X_target), "
                         "(dist_source, dist_target), or C_linear.")
    if distance_mode not in _VALID_MODES:
        raise ValueError("distance_mode must be one of %s, got %r"
                         % (set(_VALID_MODES), distance_mode))
    if fgw_alpha > 0 and C is None:
        raise ValueError("fgw_alpha > 0 requires C_linear to be provided")
    if lambda_ema_beta is not None and not 0.0 <= lambda_ema_beta <= 1.0:
        raise ValueError("lambda_ema_beta must be in [0, 1], got %r" % (lambda_ema_beta,))
    have_points = Xs is not None and Xt is not None
    have_distances = Ds is not None and Dt is not None
    if float(fgw_alpha) < 1.0 and not (have_points or have_distances):
        # Only C_linear (or half a pair): the GW term has no structure to compare.
        needs = ("(dist_source, dist_target) or (X_source, X_target)"
                 if distance_mode == "precomputed" else "X_source and X_target")
        raise ValueError("distance_mode=%r requires %s when fgw_alpha < 1 (got fgw_alpha=%r; "
                         "only fgw_alpha=1 runs on C_linear alone)"
                         % (distance_mode, needs, fgw_alpha))
    options = dict(num_anchors=M, momentum=alpha, max_iterations=max_iter, tolerance=tol,
                   epsilon=epsilon, knn=k, min_iterations=min_iter_before_converge,
                   num_landmarks=n_landmarks, fused_weight=float(fgw_alpha),
                   precision="f32" if mixed_precision else "f64", multiscale=bool(multiscale))
    if semi_relaxed:
        options["rho_b"] = float(rho)
    if n_coarse is not None:
        options["multiscale_size"] = int(n_coarse)
    if s_shared is not None:
        options["slack_shared"] = float(s_shared)
    # None: no EMA. beta=0 would freeze the first sampled cost in the reference (its running
    # average never takes a new sample); gwalign's lambda_ema < 1 cannot express that, so 0 runs
    # without EMA here.
    if lambda_ema_beta:
        options["lambda_ema"] = 1.0 - float(lambda_ema_beta)
    if device is not None and str(device).startswith("cuda"):
        options["backend"] = "cuda"
    # sampled_gw is the sampled entropic solver: gwalign's automatic choice would run the exact
    # (unregularized) solver on small problems and ignore epsilon, M, alpha, tol, lambda_ema_beta,
    # mixed_precision, distance_mode and min_iter_before_converge. solver="auto" or "exact" can
    # still be passed by name.
    options["solver"] = "sampled"
    # The reference returns the dense n x k plan: asked for, it keeps the dense support too.
    options["plan_format"] = "dense"
    if gwalign_options.get("solver", "sampled") != "sampled":
        # Another solver by name: the sampled loop's parameters left at the reference's defaults
        # describe the solver not run and are dropped; one the caller changed stays a request
        # (gwalign then says which settings the chosen solver does not read).
        defaults = inspect.signature(sampled_gw).parameters
        given = dict(M=M, alpha=alpha, max_iter=max_iter, tol=tol, epsilon=epsilon,
                     min_iter_before_converge=min_iter_before_converge, multiscale=multiscale)
        for field, name in _SAMPLED_LOOP_PARAMETERS.items():
            if given[name] == defaults[name].default:
                options.pop(field, None)
    options.update(gwalign_options)
    # The matrices are the structure with distance_mode="precomputed" (the documented use) or
    # when no point clouds are given; with points and a graph mode the points' kNN graph is used
    # and the matrices are ignored, as in the reference.
    as_distances = have_distances and (distance_mode == "precomputed" or not have_points)
    if as_distances:
        source, target = Ds, Dt
    else:
        source, target = Xs, Xt
        # Point clouds: gwalign's kNN graph + the requested shortest-path mode.
        options.setdefault("distance_mode", distance_mode)
    if float(fgw_alpha) >= 1.0:
        source = target = None
    result = _align.align(source, target, p=_numpy(p), q=_numpy(q), as_distances=as_distances,
                          feature_cost=C if float(fgw_alpha) > 0 else None,
                          progress=bool(verbose), **options)
    T = _output(np.asarray(result.plan))
    if log:
        return T, {"err_list": [row["error"] for row in result.log],
                   "n_iter": int(result.iterations),
                   "gw_cost": float(result.gw_cost_estimate)}
    return T


def sampled_lowrank_gw(X_source=None, X_target=None, p=None, q=None, *, rank=20, lr_max_iter=5,
                       lr_dykstra_max_iter=50, distance_mode="dijkstra", dist_source=None,
                       dist_target=None, n_landmarks=50, fgw_alpha=0.0, C_linear=None,
                       s_shared=None, M=50, alpha=0.9, max_iter=500, tol=1e-5, epsilon=0.001,
                       k=30, min_iter_before_converge=50, device=None, verbose=False,
                       verbose_every=20, log=False, semi_relaxed=False, rho=1.0, multiscale=False,
                       n_coarse=None, lambda_ema_beta=None,
                       mixed_precision=False) -> torch.Tensor | tuple[torch.Tensor, dict]:
    """TorchGW's low-rank solver, with its signature: not supported. semi_relaxed=True is a
    ValueError (as in the reference, which checks it first); any other call raises
    NotImplementedError."""
    if semi_relaxed:
        raise ValueError("semi_relaxed is not supported by the low-rank solver "
                         "(sampled_lowrank_gw)")
    raise NotImplementedError("sampled_lowrank_gw (rank=%r) is not supported by gwalign.torchgw; "
                              "use sampled_gw, or gwalign.align with distance_mode='landmark'"
                              % (rank,))


def joint_embedding(anchor_name, data_by_name, graphs_by_name, transport_plans, lambda_reg=1.0,
                    out_dim=30) -> dict[str, np.ndarray]:
    """Joint embedding of several datasets from their transport plans (TorchGW's signature and
    return type).

    transport_plans maps (name_a, name_b) -> T (rows = name_a's points; either order, e.g.
    (query, anchor) as in TorchGW; numpy arrays, torch tensors or scipy.sparse matrices); every
    dataset must be linked to anchor_name by plans. Returns {name: (n_samples, out_dim) float64
    numpy.ndarray}, as the reference returns numpy arrays (whatever the inputs' type).
    gwalign.joint_embedding describes the method."""
    from ._embedding import joint_embedding as _joint_embedding
    return _joint_embedding(data_by_name, transport_plans, anchor=anchor_name,
                            graphs=graphs_by_name, dimension=int(out_dim),
                            lambda_reg=float(lambda_reg))
