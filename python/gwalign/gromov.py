"""Drop-in replacements for POT 0.8's Gromov-Wasserstein functions (``ot.gromov``).

    from gwalign import gromov            # instead of: from ot import gromov
    T = gromov.gromov_wasserstein(C1, C2, p, q, "square_loss")

Same signatures, return types, log keys and log value types as POT 0.8 (numpy arrays in, numpy
arrays and numpy float64 out; torch tensors in, torch tensors out, log["u"], log["v"], log["T"],
the distances and the entropic log["err"] entries included, as POT's backend gives them;
tests/python/test_dropin_api.py compares them with the installed POT). The solver underneath is
gwalign's sampled GW, not POT's conditional gradient / exact mirror descent, so:

* Only loss_fun="square_loss"; "kl_loss" raises NotImplementedError.
* C1 and C2 must be distance matrices (non-negative, symmetric, zero diagonal), as gwalign
  aligns metric spaces; other similarity matrices raise ValueError.
* gwalign divides each side by its largest entry before solving, so the problem solved is GW
  between C1 / max(C1) and C2 / max(C2); it is POT's problem exactly when max(C1) == max(C2)
  (and close when the scales are similar). gw_dist / fgw_dist and the log's losses are always
  evaluated on the C1, C2 given, with POT's formula sum (C1_ik - C2_jl)^2 T_ij T_kl.
* epsilon: POT's epsilon is in raw cost units (the cost is sum_kl (C1_ik - C2_jl)^2 T_kl, of
  order max(C)^2); gwalign's is in units of the max-normalized cost. The conversion is
  epsilon_gwalign = epsilon_pot / (max(C1) * max(C2)), which is exact when the two maxima agree.
  POT keeps epsilon constant and takes each Sinkhorn plan as is; so do these functions
  (epsilon_final = epsilon, momentum = 1).
* fused_gromov_wasserstein: POT minimizes (1 - alpha) <M, T> + alpha GW(T). In gwalign's units
  the GW gradient is 2 max(C1) max(C2) Lambda, so the feature weight is w = r / (1 + r) with
  r = (1 - alpha) / (2 alpha max(C1) max(C2)) and the feature cost is M as given.
* armijo is accepted and ignored (there is no line search); G0 is the starting plan.
* log["u"], log["v"] (POT: the duals of the last exact linear program of conditional gradient)
  are here the log-domain Sinkhorn potentials of the final linearized cost
  constC - 2 C1 T C2 at a small epsilon, an approximation of those duals; log["cost"] is
  <linearized cost, T>, log["result_code"] is 1 when the solve ended normally (converged,
  plateau or iteration limit), log["warning"] is None or the solver's message.
* Four restart probes by default (restarts=4; gwalign.align's default is 1): on POT-sized
  problems a sampled start is noisy, and the probe with the lowest GW loss continues.
Extra keyword arguments (**kwargs) are gwalign options (gwalign.option_names()), e.g. seed=,
num_anchors=, threads=; POT's numItermax maps to max_iterations and stopThr to tolerance.
"""

from __future__ import annotations

import numpy as np

from . import _align

__all__ = ["gromov_wasserstein", "gromov_wasserstein2", "entropic_gromov_wasserstein",
           "entropic_gromov_wasserstein2", "fused_gromov_wasserstein", "fused_gromov_wasserstein2"]


def _check_loss(loss_fun):
    if loss_fun != "square_loss":
        raise NotImplementedError(
            "gwalign.gromov supports loss_fun='square_loss' only, got %r" % (loss_fun,))


def _to_numpy(x):
    if x is None:
        return None
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _like(value, reference):
    """value (ndarray or float) in the array type of reference (torch tensor or numpy)."""
    if hasattr(reference, "detach"):
        import torch
        return torch.as_tensor(np.asarray(value), dtype=reference.dtype, device=reference.device)
    return value if np.ndim(value) else np.float64(value)


def _log_like(lg, reference):
    """The log with POT's value types: arrays and distances (u, v, T, gw_dist, fgw_dist) and the
    entropic solver's err entries in the array type of `reference` (0-dim tensors for torch),
    conditional gradient's loss entries as numpy float64, as POT 0.8 gives them."""
    out = dict(lg)
    for key in ("u", "v", "T", "gw_dist", "fgw_dist"):
        if key in out:
            out[key] = _like(out[key], reference)
    if "err" in out:
        out["err"] = [_like(e, reference) for e in out["err"]]
    if "loss" in out:
        out["loss"] = [np.float64(x) for x in out["loss"]]
    return out


def _pot_kwargs(kwargs):
    out = dict(kwargs)
    if "numItermax" in out:
        out["max_iterations"] = out.pop("numItermax")
    if "stopThr" in out:
        out["tolerance"] = out.pop("stopThr")
    for ignored in ("verbose", "stopThr2", "numItermaxEmd"):
        out.pop(ignored, None)
    out.setdefault("progress", False)
    # POT-sized problems are small, where a sampled start is noisy: four restart probes (the one
    # with the lowest GW loss continues) cost 45 extra iterations and remove most bad starts.
    out.setdefault("restarts", 4)
    return out


def _linearized_cost(C1, C2, p, q, T):
    # POT's square-loss tensor: constC - hC1 T hC2^T with constC = C1^2 p 1^T + 1 q^T C2^2^T,
    # hC1 = C1, hC2 = 2 C2.
    constC = np.outer((C1 ** 2) @ p, np.ones_like(q)) + np.outer(np.ones_like(p), (C2 ** 2) @ q)
    return constC - 2.0 * C1 @ T @ C2.T


def _duals(cost, p, q, iterations=500):
    """Log-domain Sinkhorn potentials (f, g) of OT(p, q, cost) at epsilon = 1e-3 x the cost's
    range, centred like POT's emd duals (sum of f = 0 is not imposed; only f + g is defined)."""
    eps = 1e-3 * max(np.ptp(cost), 1e-300)
    f, g = np.zeros(len(p)), np.zeros(len(q))
    logp, logq = np.log(np.maximum(p, 1e-300)), np.log(np.maximum(q, 1e-300))

    def lse(a, axis):
        m = a.max(axis=axis, keepdims=True)
        return (m + np.log(np.exp(a - m).sum(axis=axis, keepdims=True))).squeeze(axis)

    for _ in range(iterations):
        f = eps * logp - eps * lse((g[None, :] - cost) / eps, 1)
        g = eps * logq - eps * lse((f[:, None] - cost) / eps, 0)
    return f, g


def _solve(C1, C2, p, q, G0, fused=None, **options):
    C1, C2 = _to_numpy(C1).astype(np.float64), _to_numpy(C2).astype(np.float64)
    p, q = _to_numpy(p).astype(np.float64), _to_numpy(q).astype(np.float64)
    scale = float(C1.max()) * float(C2.max())
    if fused is not None:
        M, alpha = fused
        if not 0.0 < alpha <= 1.0:
            raise ValueError("alpha must be in (0, 1], got %r" % (alpha,))
        r = (1.0 - alpha) / (2.0 * alpha * scale) if scale > 0 else 0.0
        options["fused_weight"] = r / (1.0 + r)
        if options["fused_weight"] > 0:
            options["feature_cost"] = _to_numpy(M).astype(np.float64)
    result = _align.align(C1, C2, p=p, q=q, as_distances=True, initial_plan=_to_numpy(G0),
                          **options)
    T = np.asarray(result.plan)
    return result, T, C1, C2, p, q


def _cg_log(result, T, C1, C2, p, q):
    cost = _linearized_cost(C1, C2, p, q, T)
    u, v = _duals(cost, p, q)
    gw = _align.gw_loss(C1, C2, T)
    return {
        "loss": [row["cost"] for row in result.log] + [gw],
        "u": u,
        "v": v,
        "cost": float(np.sum(cost * T)),
        "result_code": 1 if result.ok() else 0,
        "warning": None if result.ok() else result.message,
        "gw_dist": np.float64(gw),
    }


def gromov_wasserstein(C1, C2, p, q, loss_fun="square_loss", log=False, armijo=False, G0=None,
                       **kwargs):
    """The GW coupling between (C1, p) and (C2, q); (T, log) when log=True (POT 0.8 keys)."""
    _check_loss(loss_fun)
    result, T, c1, c2, pn, qn = _solve(C1, C2, p, q, G0, **_pot_kwargs(kwargs))
    if log:
        return _like(T, C1), _log_like(_cg_log(result, T, c1, c2, pn, qn), C1)
    return _like(T, C1)


def gromov_wasserstein2(C1, C2, p, q, loss_fun="square_loss", log=False, armijo=False, G0=None,
                        **kwargs):
    """The GW distance (POT's gwloss of the coupling); (gw, log) with log["T"] when log=True."""
    _check_loss(loss_fun)
    result, T, c1, c2, pn, qn = _solve(C1, C2, p, q, G0, **_pot_kwargs(kwargs))
    lg = _cg_log(result, T, c1, c2, pn, qn)
    lg["T"] = T
    lg = _log_like(lg, C1)
    return (lg["gw_dist"], lg) if log else lg["gw_dist"]


def _entropic(C1, C2, p, q, epsilon, max_iter, tol):
    c1, c2 = _to_numpy(C1), _to_numpy(C2)
    scale = float(c1.max()) * float(c2.max())
    eps = epsilon / scale if scale > 0 else epsilon
    result, T, c1, c2, pn, qn = _solve(C1, C2, p, q, None, epsilon=eps, epsilon_final=eps,
                                       momentum=1.0, max_iterations=max_iter, tolerance=tol,
                                       min_iterations=min(50, max_iter), progress=False)
    lg = {"err": [row["error"] for row in result.log],
          "gw_dist": np.float64(_align.gw_loss(c1, c2, T))}
    return T, lg


def entropic_gromov_wasserstein(C1, C2, p, q, loss_fun, epsilon, max_iter=1000, tol=1e-9,
                                verbose=False, log=False):
    """Entropic GW coupling (epsilon in POT's raw cost units, converted as the module says)."""
    _check_loss(loss_fun)
    T, lg = _entropic(C1, C2, p, q, epsilon, max_iter, tol)
    return (_like(T, C1), _log_like(lg, C1)) if log else _like(T, C1)


def entropic_gromov_wasserstein2(C1, C2, p, q, loss_fun, epsilon, max_iter=1000, tol=1e-9,
                                 verbose=False, log=False):
    """Entropic GW distance; (gw, log) with log["T"] when log=True."""
    _check_loss(loss_fun)
    T, lg = _entropic(C1, C2, p, q, epsilon, max_iter, tol)
    lg["T"] = T
    lg = _log_like(lg, C1)
    return (lg["gw_dist"], lg) if log else lg["gw_dist"]


def _fused(M, C1, C2, p, q, alpha, G0, kwargs):
    result, T, c1, c2, pn, qn = _solve(C1, C2, p, q, G0, fused=(M, alpha), **_pot_kwargs(kwargs))
    lg = _cg_log(result, T, c1, c2, pn, qn)
    gw = lg.pop("gw_dist")
    fgw = (1.0 - alpha) * float(np.sum(_to_numpy(M) * T)) + alpha * float(gw)
    lg["loss"][-1] = fgw
    lg["fgw_dist"] = np.float64(fgw)
    return T, lg


def fused_gromov_wasserstein(M, C1, C2, p, q, loss_fun="square_loss", alpha=0.5, armijo=False,
                             G0=None, log=False, **kwargs):
    """Fused GW coupling of (1 - alpha) <M, T> + alpha GW(T); (T, log) when log=True."""
    _check_loss(loss_fun)
    T, lg = _fused(M, C1, C2, p, q, alpha, G0, kwargs)
    return (_like(T, C1), _log_like(lg, C1)) if log else _like(T, C1)


def fused_gromov_wasserstein2(M, C1, C2, p, q, loss_fun="square_loss", alpha=0.5, armijo=False,
                              G0=None, log=False, **kwargs):
    """Fused GW distance; (fgw, log) with log["T"] when log=True."""
    _check_loss(loss_fun)
    T, lg = _fused(M, C1, C2, p, q, alpha, G0, kwargs)
    lg["T"] = T
    lg = _log_like(lg, C1)
    return (lg["fgw_dist"], lg) if log else lg["fgw_dist"]
