#!/usr/bin/python3
"""PASTE's pairwise alignment (Zeira et al., Nature Methods 2022) with POT, beside `gwalign slices`.

The peer, as the paper describes its pairwise step: fused GW between two sections with
  C1, C2  the in-plane Euclidean distance matrices of the spots (n x n, k x k), divided by their
          maximum (--norm max; --norm none keeps the slide's units),
  M       the expression dissimilarity on the shared genes: KL divergence between the spots'
          count profiles (rows normalized to sum 1 after a pseudocount of 0.01, PASTE's choice), or
          the squared Euclidean distance of log1p counts (--cost euclidean),
  p, q    uniform, alpha = 0.1 on the GW term (--alpha), square loss,
solved by POT's ot.gromov.fused_gromov_wasserstein (conditional gradient, exact OT inner
solves). The plan then registers section B onto section A by a weighted Procrustes fit (PASTE's
"stacking": rotation + translation minimizing sum P_ij |R y_j + t - x_i|^2), written here from
the formula (SVD of the plan-weighted cross-covariance).

Both methods are scored the same way against the generator's ground truth (`gwalign generate
tissue`: obs['domain'], obsm['spatial_true'], uns['generator'] motion of each section):
  accuracy            label transfer: each B spot's domain predicted as the argmax over classes of
                      sum_i P_ij [domain_i = c] (PASTE's and moscot's push), fraction correct over
                      the spots the plan reaches (coverage = that fraction of B's spots)
  registration_error  mean distance between each B spot's registered position and its true
                      position carried into A's observed frame (A's generator motion applied to
                      B's true x, y), divided by B's diameter (the diagonal of its true
                      x, y bounding box)
gwalign is scored from its outputs (--gwalign-dir: the DIR of `gwalign slices A B --out-dir DIR`,
its plan_0_1.mtx and B's obsm['spatial_aligned']); its time is given with --gwalign-seconds
(measured by the caller around the command).

Prints one JSON object per method. Exit status 77 (skipped) when POT / anndata / scipy are missing.

Usage: /usr/bin/python3 bench/peers/paste_pot.py A.h5ad B.h5ad [--alpha 0.1] [--cost kl|euclidean]
           [--norm max|none] [--max-iter 200] [--gwalign-dir DIR --gwalign-seconds S] [--no-peer]
"""
import argparse
import json
import os
import sys
import time

try:
    import anndata as ad
    import numpy as np
    import ot
    import scipy.io
    import scipy.sparse as sp
except ImportError as missing:
    print(f"skipping: {missing} (install python3-pot python3-anndata python3-scipy)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _openblas  # noqa: E402


def dense(x):
    return np.asarray(x.toarray() if sp.issparse(x) else x, dtype=np.float64)


def shared_counts(a, b):
    genes = [g for g in a.var_names if g in set(b.var_names)]
    if not genes:
        raise SystemExit("no shared genes")
    return dense(a[:, genes].X), dense(b[:, genes].X)


def kl_cost(xa, xb):
    """KL(a_i || b_j) between row-normalized profiles after a pseudocount of 0.01."""
    pa = xa + 0.01
    pb = xb + 0.01
    pa /= pa.sum(axis=1, keepdims=True)
    pb /= pb.sum(axis=1, keepdims=True)
    entropy = np.sum(pa * np.log(pa), axis=1, keepdims=True)
    return entropy - pa @ np.log(pb).T


def procrustes(plan, x, y):
    """R, t minimizing sum_ij P_ij |R y_j + t - x_i|^2 (rotation only, det R = +1)."""
    mass = plan.sum()
    r = np.asarray(plan.sum(axis=1)).ravel()
    c = np.asarray(plan.sum(axis=0)).ravel()
    xbar = r @ x / mass
    ybar = c @ y / mass
    h = (y - ybar).T @ (plan.T @ (x - xbar))
    u, _, vt = np.linalg.svd(h)
    s = np.eye(x.shape[1])
    s[-1, -1] = np.sign(np.linalg.det(vt.T @ u.T))
    rot = vt.T @ s @ u.T
    return rot, xbar - rot @ ybar


def truth_in_frame(fixed, moving):
    """B's true x, y carried by A's generator motion into A's observed frame."""
    g = fixed.uns["generator"]
    angle, centre, shift = float(g["angle"]), np.asarray(g["centre"]), np.asarray(g["translation"])
    rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    xy = np.asarray(moving.obsm["spatial_true"])[:, :2]
    return (xy - centre) @ rot.T + centre + shift, xy


def score(plan, fixed, moving, registered):
    plan = sp.csr_matrix(plan)
    dom_a = fixed.obs["domain"].cat.codes.to_numpy()
    dom_b = moving.obs["domain"].cat.codes.to_numpy()
    classes = len(fixed.obs["domain"].cat.categories)
    onehot = sp.csr_matrix((np.ones(len(dom_a)), (np.arange(len(dom_a)), dom_a)),
                           shape=(len(dom_a), classes))
    votes = np.asarray((plan.T @ onehot).todense())
    reached = votes.sum(axis=1) > 1e-6 * plan.sum() / plan.shape[1]
    predicted = votes.argmax(axis=1)
    truth, xy = truth_in_frame(fixed, moving)
    diameter = float(np.hypot(*(xy.max(axis=0) - xy.min(axis=0))))
    error = np.linalg.norm(registered - truth, axis=1).mean() / diameter
    return {"accuracy": float(np.mean(predicted[reached] == dom_b[reached])),
            "coverage": float(reached.mean()), "registration_error": float(error),
            "diameter": diameter}


def run_peer(fixed, moving, args):
    start = time.perf_counter()
    xa, xb = shared_counts(fixed, moving)
    ca = np.asarray(fixed.obsm["spatial"], dtype=np.float64)
    cb = np.asarray(moving.obsm["spatial"], dtype=np.float64)
    d1 = ot.dist(ca, ca, metric="euclidean")
    d2 = ot.dist(cb, cb, metric="euclidean")
    if args.norm == "max":
        d1 /= d1.max()
        d2 /= d2.max()
    if args.cost == "kl":
        m = kl_cost(xa, xb)
    else:
        m = ot.dist(np.log1p(xa), np.log1p(xb))
    p = np.full(len(ca), 1.0 / len(ca))
    q = np.full(len(cb), 1.0 / len(cb))
    prep = time.perf_counter() - start
    # POT's conditional gradient; its inner network simplex gets 10^7 pivots instead of the
    # default 10^5, which thousands of spots exhaust (POT then warns and returns a non-optimal
    # direction).
    plan = ot.gromov.fused_gromov_wasserstein(m, d1, d2, p, q, loss_fun="square_loss",
                                              alpha=args.alpha, numItermax=args.max_iter,
                                              numItermaxEmd=10_000_000)
    solve = time.perf_counter() - start - prep
    rot, shift = procrustes(plan, ca, cb)
    registered = cb @ rot.T + shift
    seconds = time.perf_counter() - start
    out = {"method": "paste-pot", "n": len(ca), "k": len(cb), "seconds": seconds,
           "prep_seconds": prep, "solve_seconds": solve, "alpha": args.alpha, "cost": args.cost,
           "norm": args.norm, "blas": _openblas.describe()}
    out.update(score(plan, fixed, moving, registered))
    return out


def run_gwalign(fixed, moving, args):
    plan = scipy.io.mmread(os.path.join(args.gwalign_dir, "plan_0_1.mtx")).tocsr()
    stem = os.path.splitext(os.path.basename(args.moving))[0]
    out_b = ad.read_h5ad(os.path.join(args.gwalign_dir, stem + ".h5ad"))
    registered = np.asarray(out_b.obsm["spatial_aligned"])[:, :2]
    out = {"method": "gwalign-slices", "n": plan.shape[0], "k": plan.shape[1],
           "seconds": args.gwalign_seconds, "plan_nnz": int(plan.nnz)}
    out.update(score(plan, fixed, moving, registered))
    if "domain_transferred" in out_b.obs:
        labels = out_b.obs["domain_transferred"].astype(str).to_numpy()
        truth = moving.obs["domain"].astype(str).to_numpy()
        out["accuracy_from_obs"] = float(np.mean(labels == truth))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("fixed")
    parser.add_argument("moving")
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--cost", choices=["kl", "euclidean"], default="kl")
    parser.add_argument("--norm", choices=["max", "none"], default="max")
    parser.add_argument("--max-iter", type=int, default=200)
    parser.add_argument("--gwalign-dir")
    parser.add_argument("--gwalign-seconds", type=float)
    parser.add_argument("--no-peer", action="store_true")
    args = parser.parse_args()
    _openblas.call()
    fixed, moving = ad.read_h5ad(args.fixed), ad.read_h5ad(args.moving)
    if args.gwalign_dir:
        print(json.dumps(run_gwalign(fixed, moving, args)), flush=True)
    if not args.no_peer:
        print(json.dumps(run_peer(fixed, moving, args)), flush=True)


if __name__ == "__main__":
    main()
