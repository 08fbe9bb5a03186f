#!/usr/bin/python3
"""kNN graph: gwalign vs scikit-learn on the same points, in one run.

Runs `gwalign bench knn --save FILE` (which times our kNN graph and writes the points and our
graph), then times scikit-learn's pipeline on the same points:
    kneighbors_graph(X, k, mode="distance", n_jobs=-1) -> G.maximum(G.T) -> connected_components
and checks that both produce the identical edge set (and weights to float32 rounding).
Prints one JSON object with both medians and the speedup.

Usage: /usr/bin/python3 bench/peers/knn_sklearn.py --gwalign build/tools/gwalign/gwalign \
           [--n 20000] [--d 3] [--k 30] [--reps 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.neighbors import kneighbors_graph


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gwalign", required=True, help="path to the gwalign binary")
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--k", type=int, default=30)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "knn.h5")
        ours = json.loads(subprocess.run(
            [args.gwalign, "bench", "knn", "--n", str(args.n), "--d", str(args.d), "--k", str(args.k),
             "--reps", str(args.reps), "--seed", str(args.seed), "--json", "--save", path],
            check=True, capture_output=True, text=True).stdout)
        with h5py.File(path, "r") as f:
            points = f["points"][...]
            g = f["graph"]
            shape = tuple(g.attrs["shape"])
            our_graph = csr_matrix((g["data"][...], g["indices"][...], g["indptr"][...]), shape=shape)

    times = []
    for _ in range(args.reps + 1):  # the first run is a warm-up, as in gwalign bench
        start = time.perf_counter()
        graph = kneighbors_graph(points, args.k, mode="distance", n_jobs=-1)
        graph = graph.maximum(graph.T).tocsr()
        n_components, _ = connected_components(graph, directed=False)
        times.append(time.perf_counter() - start)
    sk_seconds = statistics.median(times[1:])

    graph.sort_indices()
    our_graph.sort_indices()
    same_edges = (graph.shape == our_graph.shape and np.array_equal(graph.indptr, our_graph.indptr)
                  and np.array_equal(graph.indices, our_graph.indices))
    max_weight_diff = (float(np.max(np.abs(graph.data.astype(np.float32) - our_graph.data)))
                       if same_edges else None)
    print(json.dumps({
        "what": "knn_vs_sklearn",
        "n": args.n, "d": args.d, "k": args.k, "reps": args.reps,
        "gwalign_seconds": ours["seconds"],
        "sklearn_seconds": sk_seconds,
        "sklearn_seconds_min": min(times[1:]),
        "speedup": sk_seconds / ours["seconds"],
        "identical_edge_sets": bool(same_edges),
        "max_weight_diff": max_weight_diff,
        "edges": int(graph.nnz),
        "sklearn_components": int(n_components),
        "gwalign_components": ours["components"],
        "gwalign_threads": ours["threads"],
    }))
    return 0 if same_edges else 1


if __name__ == "__main__":
    import _openblas  # the peer on its CPU's BLAS kernels, not a generic fallback

    _openblas.call()
    sys.exit(main())
