#!/usr/bin/python3
"""A kNN graph with unit edge weights against a rotated, permuted copy, with gwalign's defaults.

The scenario of a new user who has a connectivity graph (scanpy's `connectivities` style: unit
weights, hop distances) and nothing else: points of the spiral benchmark's swiss roll (3-D,
`gwalign generate swissroll`, ground truth = the angle of each point), the target is the same
point set under a random rotation and a random permutation; each side's graph is the symmetrized
exact k-nearest-neighbour graph of its points with every edge weight 1 (scikit-learn
`kneighbors_graph(mode="connectivity")`, max with its transpose), written as `obsp/connectivities`
of an h5ad file with the angle as `obs/angle`. Then `gwalign align a.h5ad b.h5ad --rep
obsp:connectivities` with every other setting at its default (or --flags), timed by the CLI's own
total_seconds; |rho| is the CLI's (Spearman between matched angles).

Prints one JSON object: n, k, seconds, abs_rho, the solver plan gwalign chose (support, method,
reasons) and the wall time of the process.

Usage: /usr/bin/python3 bench/peers/knn_graph_defaults.py --gwalign build/tools/gwalign/gwalign
           [--n 10000] [--knn 200] [--seed 0] [--flags "--support sparse"]
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

try:
    import anndata
    import h5py
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp
    from sklearn.neighbors import kneighbors_graph
except ImportError as missing:  # ctest treats 77 as skipped
    print("knn_graph_defaults: %s (Debian: python3-anndata python3-sklearn)" % missing,
          file=sys.stderr)
    sys.exit(77)


def random_rotation(rng, d):
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    q *= np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


def write_side(path, points, angles, knn):
    graph = kneighbors_graph(points, knn, mode="connectivity", include_self=False)
    graph = graph.maximum(graph.T).tocsr().astype(np.float32)
    adata = anndata.AnnData(X=np.zeros((points.shape[0], 1), dtype=np.float32),
                            obs=pd.DataFrame({"angle": angles},
                                             index=[str(i) for i in range(points.shape[0])]))
    adata.obsp["connectivities"] = graph
    adata.write_h5ad(path)
    return graph.nnz


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gwalign", required=True)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--knn", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shape", choices=["swissroll", "spiral"], default="swissroll",
                    help="the point set (gwalign generate KIND)")
    ap.add_argument("--flags", default="", help="extra gwalign align flags")
    ap.add_argument("--keep", help="folder to keep the inputs and outputs in")
    args = ap.parse_args()

    work = args.keep or tempfile.mkdtemp(prefix="knn_graph_defaults_")
    os.makedirs(work, exist_ok=True)
    roll = os.path.join(work, "roll.h5")
    subprocess.run([args.gwalign, "generate", args.shape, "--n", str(args.n), "--seed",
                    str(args.seed), "-o", roll], check=True, stdout=subprocess.DEVNULL)
    with h5py.File(roll, "r") as f:
        points = np.asarray(f["points"], dtype=np.float64)
        angles = np.asarray(f["angles"], dtype=np.float64)
    rng = np.random.default_rng(args.seed + 1)
    perm = rng.permutation(args.n)
    rotated = (points @ random_rotation(rng, points.shape[1]).T)[perm]
    a = os.path.join(work, "a.h5ad")
    b = os.path.join(work, "b.h5ad")
    nnz = write_side(a, points, angles, args.knn)
    write_side(b, rotated, angles[perm], args.knn)
    report = os.path.join(work, "report.json")
    cmd = [args.gwalign, "align", a, b, "--rep", "obsp:connectivities", "-o",
           os.path.join(work, "plan.h5"), "--report", report, "--quiet"] + shlex.split(args.flags)
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    with open(report) as f:
        r = json.load(f)
    res = r.get("result", {})
    out = {"shape": args.shape, "n": args.n, "knn": args.knn, "edges": nnz, "flags": args.flags,
           "seconds": r.get("total_seconds"), "wall_seconds": wall, "abs_rho": r.get("abs_rho"),
           "iterations": r.get("iterations"), "support": res.get("support"),
           "solver": res.get("solver"), "solver_reason": res.get("solver_reason"),
           "plan": res.get("plan"), "gw_loss": res.get("gw_loss"),
           "command": " ".join(shlex.quote(c) for c in cmd)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
