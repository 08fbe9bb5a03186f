#!/usr/bin/python3
"""A dissociated atlas mapped onto a tissue section: `gwalign map` beside two peers, scored against
the synthetic tissue's truth (`gwalign generate tissue --sections 1 --atlas N`).

Peers, on the same files:
  knn     scanpy-ingest style label transfer: the shared genes' counts normalized to 10^4 per cell,
          log1p, a joint PCA (30 components, sklearn), and a 15-nearest-neighbour classifier
          trained on the atlas's labels (not a transport plan: no geometry, no coupling)
  fgw     the transport formulation moscot's mapping problem solves, with POT: fused GW between the
          atlas's PCA distances and the section's in-plane distances (both divided by their
          maximum), the feature cost the squared distance of the joint PCA scores (over its
          maximum), alpha 0.1 on the GW term, uniform marginals, POT's conditional gradient
          (ot.gromov.fused_gromov_wasserstein); labels pushed by the plan's argmax. Skipped above
          --peer-max-cells cells on either side (dense n x k, n x n and k x k matrices).
gwalign is scored from its outputs (--gwalign-dir: DIR of `gwalign map ATLAS SECTION --out-dir DIR`,
its plan.mtx); its time comes with --gwalign-seconds (measured by the caller).

Scores: celltype and domain accuracy over the section's cells the plan reaches (coverage: that
fraction). Prints one JSON object per method. Exit status 77 when anndata / scipy / sklearn / POT
are missing.

Usage: /usr/bin/python3 bench/peers/map_atlas.py ATLAS.h5ad SECTION.h5ad [--gwalign-dir DIR
           --gwalign-seconds S] [--no-peer] [--peer-max-cells 6000]
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
    from sklearn.decomposition import PCA
    from sklearn.neighbors import KNeighborsClassifier
except ImportError as missing:
    print(f"skipping: {missing} (install python3-anndata python3-scipy python3-sklearn python3-pot)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _openblas  # noqa: E402


def log_normalized(x):
    x = np.asarray(x.toarray() if sp.issparse(x) else x, dtype=np.float64)
    total = x.sum(axis=1, keepdims=True)
    return np.log1p(x / np.maximum(total, 1e-300) * 1e4)


def joint_pca(atlas, section):
    genes = [g for g in atlas.var_names if g in set(section.var_names)]
    if not genes:
        raise SystemExit("no shared genes")
    a, s = log_normalized(atlas[:, genes].X), log_normalized(section[:, genes].X)
    pca = PCA(n_components=min(30, len(genes)), random_state=0).fit(np.vstack([a, s]))
    return pca.transform(a), pca.transform(s)


def push_accuracy(plan, atlas, section, key):
    plan = sp.csr_matrix(plan)
    codes = atlas.obs[key].cat.codes.to_numpy()
    names = list(atlas.obs[key].cat.categories)
    onehot = sp.csr_matrix((np.ones(len(codes)), (np.arange(len(codes)), codes)),
                           shape=(len(codes), len(names)))
    votes = np.asarray((plan.T @ onehot).todense())
    reached = votes.sum(axis=1) > 1e-6 * plan.sum() / plan.shape[1]
    predicted = np.array(names, dtype=object)[votes.argmax(axis=1)]
    truth = section.obs[key].astype(str).to_numpy()
    return float(np.mean(predicted[reached] == truth[reached])), float(reached.mean())


def scores(plan, atlas, section):
    out = {}
    for key in ("celltype", "domain"):
        out[key + "_accuracy"], out["coverage"] = push_accuracy(plan, atlas, section, key)
    return out


def run_knn(atlas, section):
    start = time.perf_counter()
    fa, fs = joint_pca(atlas, section)
    out = {"method": "knn-classifier (joint PCA, k=15)"}
    for key in ("celltype", "domain"):
        c = KNeighborsClassifier(15).fit(fa, atlas.obs[key].astype(str).to_numpy())
        out[key + "_accuracy"] = float(np.mean(c.predict(fs) == section.obs[key].astype(str).to_numpy()))
    out["seconds"] = time.perf_counter() - start
    return out


def run_fgw(atlas, section):
    start = time.perf_counter()
    fa, fs = joint_pca(atlas, section)
    c1 = ot.dist(fa, fa, metric="euclidean")
    xy = np.asarray(section.obsm["spatial"], dtype=np.float64)
    c2 = ot.dist(xy, xy, metric="euclidean")
    c1 /= c1.max()
    c2 /= c2.max()
    m = ot.dist(fa, fs)
    m /= m.max()
    p = np.full(len(fa), 1.0 / len(fa))
    q = np.full(len(fs), 1.0 / len(fs))
    plan = ot.gromov.fused_gromov_wasserstein(m, c1, c2, p, q, loss_fun="square_loss", alpha=0.1,
                                              numItermaxEmd=10_000_000)
    out = {"method": "POT fused_gromov_wasserstein (alpha 0.1, joint PCA)"}
    out.update(scores(plan, atlas, section))
    out["seconds"] = time.perf_counter() - start
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("atlas")
    parser.add_argument("section")
    parser.add_argument("--gwalign-dir")
    parser.add_argument("--gwalign-seconds", type=float)
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--peer-max-cells", type=int, default=6000)
    args = parser.parse_args()
    _openblas.call()
    atlas, section = ad.read_h5ad(args.atlas), ad.read_h5ad(args.section)
    sizes = {"atlas_cells": atlas.n_obs, "section_cells": section.n_obs}
    if args.gwalign_dir:
        plan = scipy.io.mmread(os.path.join(args.gwalign_dir, "plan.mtx")).tocsr()
        out = {"method": "gwalign map", "seconds": args.gwalign_seconds, **sizes}
        out.update(scores(plan, atlas, section))
        print(json.dumps(out))
    if args.no_peer:
        return
    print(json.dumps({**run_knn(atlas, section), **sizes}))
    if max(atlas.n_obs, section.n_obs) <= args.peer_max_cells:
        print(json.dumps({**run_fgw(atlas, section), **sizes, "blas": _openblas.describe()}))
    else:
        print(json.dumps({"method": "POT fused_gromov_wasserstein", "skipped": "above --peer-max-cells", **sizes}))


if __name__ == "__main__":
    main()
