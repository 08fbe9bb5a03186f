#!/usr/bin/python3
"""Writes data/tiny_source.h5ad and data/tiny_target.h5ad with Debian's anndata (python3-anndata).

Two small single-cell-like AnnData files for the CLI's interop tests and the README examples:
  tiny_source.h5ad  400 cells x 30 genes: a noisy 2-D spiral (r = linspace(0.3, 1, n),
                    theta = linspace(0, 9, n)) mapped linearly into 30 genes plus noise
  tiny_target.h5ad  480 cells x 40 genes: the same spiral rolled up as a swiss roll (x, h, y),
                    h ~ U(0, 1), mapped into 40 other genes
Each file has X (float32, dense), obsm/X_pca (10 principal components of the centred X, by SVD),
obsp/distances (the kNN distance graph on X_pca, k = 10, as scikit-learn's kneighbors_graph
writes it: CSR, directed, the layout scanpy uses), obs columns angle (the ground-truth theta),
weight (a positive marginal weight) and arm (categorical), and uns/description.

Seeded (numpy.random.default_rng), so rerunning gives the same arrays:
  /usr/bin/python3 data/make_tiny_h5ad.py [OUTPUT_DIR]      (default: the folder of this script)
"""
import os
import sys

import anndata
import numpy as np
import pandas as pd
from sklearn.neighbors import kneighbors_graph

NOISE = 0.02
# Enough cells that the 10-NN geodesics follow the spiral closely (with 200 / 240 cells the
# alignment quality swung between seeds: |rho| 0.76 to 0.9997).
N_SOURCE = 400
N_TARGET = 480
COMPONENTS = 10
NEIGHBOURS = 10


def spiral(n, rng):
    r = np.linspace(0.3, 1.0, n)
    theta = np.linspace(0.0, 9.0, n)
    x = (r + rng.normal(0.0, NOISE, n)) * np.cos(theta)
    y = (r + rng.normal(0.0, NOISE, n)) * np.sin(theta)
    return x, y, theta


def make(latent, theta, genes, rng, prefix):
    n = latent.shape[0]
    loadings = rng.normal(0.0, 1.0, (latent.shape[1], genes))
    x = latent @ loadings + rng.normal(0.0, 0.01, (n, genes))
    centred = x - x.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    pca = (u[:, :COMPONENTS] * s[:COMPONENTS]).astype(np.float32)
    obs = pd.DataFrame(
        {
            "angle": theta,
            "weight": 1.0 + rng.uniform(0.0, 1.0, n),
            "arm": pd.Categorical(np.where(theta < 4.5, "inner", "outer")),
        },
        index=["%s_%d" % (prefix, i) for i in range(n)],
    )
    var = pd.DataFrame(index=["gene_%s_%d" % (prefix, j) for j in range(genes)])
    adata = anndata.AnnData(X=x.astype(np.float32), obs=obs, var=var)
    adata.obsm["X_pca"] = pca
    adata.obsp["distances"] = kneighbors_graph(pca, NEIGHBOURS, mode="distance").tocsr()
    adata.uns["description"] = "gwalign tiny %s: seeded synthetic data, see data/README.md" % prefix
    return adata


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(20261121)

    x, y, theta = spiral(N_SOURCE, rng)
    source = make(np.column_stack([x, y]), theta, 30, rng, "src")

    x, y, theta = spiral(N_TARGET, rng)
    h = rng.uniform(0.0, 1.0, N_TARGET)
    target = make(np.column_stack([x, h, y]), theta, 40, rng, "tgt")

    source.write_h5ad(os.path.join(out, "tiny_source.h5ad"))
    target.write_h5ad(os.path.join(out, "tiny_target.h5ad"))
    print("wrote tiny_source.h5ad (%d x %d) and tiny_target.h5ad (%d x %d) with anndata %s"
          % (source.n_obs, source.n_vars, target.n_obs, target.n_vars, anndata.__version__))


if __name__ == "__main__":
    main()
