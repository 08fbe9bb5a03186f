#!/usr/bin/python3
"""All-pairs GW distances: gwalign pairwise vs POT's exact conditional-gradient GW in a Python loop.

CAJAL-style tools compute a distance matrix over many small spaces by calling POT's
`ot.gromov.gromov_wasserstein` (conditional gradient with exact network-simplex sub-problems) once
per pair. This script reads a collection (`gwalign generate shapes ... -o C.h5`) and a finished
`gwalign pairwise C.h5 -o OUT.h5`, rebuilds the same distance matrices gwalign uses (Euclidean, or
with --points knn-geodesic the kNN graph's shortest paths; divided by the maximum), and
runs POT on a seeded sample of pairs (--pairs) or on all of them (--all), one BLAS thread (like
one CAJAL worker per core). It reports POT's seconds per pair (extrapolated to every pair of the
collection), gwalign's seconds per pair from its report (--report, the JSON of --json), the ratio,
and the objectives side by side on the same pairs: POT's `gwloss` of its plan vs gwalign's
/distances (the GW loss of its plan on the same matrices). With --all and /labels in the
collection it also reports leave-one-out 1-NN classification accuracy from both matrices.

--processes P runs the pairs in P worker processes (Python multiprocessing, one BLAS thread each:
how CAJAL uses a node) and also reports the whole machine against the whole machine: POT's wall
seconds per pair over gwalign's (`gwalign pairwise --threads P` with --report; the per-pair ratio
above compares one core with one core either way).

Usage: /usr/bin/python3 bench/peers/pairwise_pot.py --collection C.h5 --gwalign-output OUT.h5
           --report OUT.json [--pairs 200 | --all] [--points euclidean] [--seed 0] [--processes P]
"""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import json
import multiprocessing
import sys
import time

import _openblas

try:
    import h5py
    import numpy as np
    import ot
    from scipy.sparse.csgraph import connected_components, shortest_path
    from scipy.spatial.distance import cdist
    from sklearn.neighbors import kneighbors_graph
except ImportError as missing:
    print(f"skipping: {missing} (install python3-pot python3-h5py python3-scipy python3-sklearn)")
    sys.exit(77)


def distance_matrix(points, knn, metric):
    if metric == "euclidean":
        d = cdist(points, points)
        return d / d.max()
    graph = kneighbors_graph(points, min(knn, len(points) - 1), mode="distance")
    graph = graph.maximum(graph.T)
    if connected_components(graph, directed=False)[0] != 1:
        raise SystemExit("a kNN graph is disconnected; gwalign stitches it, this script does not")
    d = shortest_path(graph, directed=False)
    return d / d.max()


_SPACES = []


def solve_pair(pair):
    """POT's CG GW of one pair: (gw_dist, seconds). Reads the spaces a worker inherited by fork."""
    i, j = pair
    c1, c2 = _SPACES[i], _SPACES[j]
    p = ot.unif(len(c1))
    q = ot.unif(len(c2))
    start = time.perf_counter()
    _, log = ot.gromov.gromov_wasserstein(c1, c2, p, q, "square_loss", log=True)
    return log["gw_dist"], time.perf_counter() - start


def one_nn_accuracy(d, labels):
    d = d.copy()
    np.fill_diagonal(d, np.inf)
    d[np.isnan(d)] = np.inf
    return float(np.mean(labels[np.argmin(d, axis=1)] == labels))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--collection", required=True)
    parser.add_argument("--gwalign-output", required=True)
    parser.add_argument("--report", help="gwalign pairwise --json report of the same run")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--all", action="store_true")
    parser.add_argument("--points", choices=["euclidean", "knn-geodesic"], default="euclidean",
                        help="as gwalign pairwise --points")
    parser.add_argument("--knn", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", help="write POT's matrix (NaN where not computed) to this .npy")
    parser.add_argument("--processes", type=int, default=1,
                        help="worker processes for POT (one BLAS thread each); compare with "
                             "gwalign pairwise --threads P")
    args = parser.parse_args()
    if args.processes < 1:
        raise SystemExit("--processes: must be >= 1")

    with h5py.File(args.collection, "r") as f:
        n = len(f["spaces"])
        spaces = [distance_matrix(f[f"spaces/{i}/points"][()], args.knn, args.points) for i in range(n)]
        labels = f["labels"][()] if "labels" in f else None
    with h5py.File(args.gwalign_output, "r") as f:
        ours = f["distances"][()]
        complete = int(f.attrs["complete"])

    all_pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if args.all:
        pairs = all_pairs
    else:
        rng = np.random.default_rng(args.seed)
        pick = rng.choice(len(all_pairs), size=min(args.pairs, len(all_pairs)), replace=False)
        pairs = [all_pairs[k] for k in sorted(pick)]

    pot = np.full((n, n), np.nan)
    np.fill_diagonal(pot, 0.0)
    _SPACES[:] = spaces
    wall_start = time.perf_counter()
    if args.processes == 1:
        results = [solve_pair(pair) for pair in pairs]
    else:
        with multiprocessing.get_context("fork").Pool(args.processes) as pool:
            results = pool.map(solve_pair, pairs, chunksize=4)
    pot_wall = time.perf_counter() - wall_start
    seconds = [s for _, s in results]
    for (i, j), (gw, _) in zip(pairs, results):
        pot[i, j] = pot[j, i] = gw

    if args.save:
        np.save(args.save, pot)
    ours_sampled = np.array([ours[i, j] for i, j in pairs])
    pot_sampled = np.array([pot[i, j] for i, j in pairs])
    result = {
        "spaces": n,
        "pairs_total": len(all_pairs),
        "pairs_pot": len(pairs),
        "gwalign_complete": complete,
        "pot_seconds_per_pair_mean": float(np.mean(seconds)),
        "pot_seconds_per_pair_median": float(np.median(seconds)),
        "pot_seconds_extrapolated_all_pairs": float(np.mean(seconds) * len(all_pairs)),
        "pot_processes": args.processes,
        "pot_wall_seconds_per_pair": pot_wall / len(pairs),
        "objective_mean_gwalign": float(np.mean(ours_sampled)),
        "objective_mean_pot": float(np.mean(pot_sampled)),
        "objective_median_ratio_gwalign_over_pot": float(np.median(ours_sampled / pot_sampled)),
        "fraction_pairs_gwalign_at_most_pot": float(
            np.mean(ours_sampled <= pot_sampled * (1 + 1e-6) + 1e-12)),
        "pot_openblas_kernels": _openblas.describe(),
    }
    if args.report:
        with open(args.report) as f:
            report = json.load(f)
        ours_per_pair = report["pair_seconds"]["mean"]
        wall_per_pair = report["seconds"] / max(report["pairs_computed"], 1)
        result["gwalign_seconds_per_pair_mean"] = ours_per_pair
        result["gwalign_wall_seconds_per_pair"] = wall_per_pair
        result["speedup_per_pair_single_thread"] = float(np.mean(seconds) / ours_per_pair)
        result["gwalign_threads_per_rank"] = report.get("threads_per_rank")
        result["speedup_wall"] = float(pot_wall / len(pairs) / wall_per_pair)
    if args.all and labels is not None:
        result["one_nn_accuracy_gwalign"] = one_nn_accuracy(ours, labels)
        result["one_nn_accuracy_pot"] = one_nn_accuracy(pot, labels)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    _openblas.call()  # the peer on its CPU's BLAS kernels, not a generic fallback
    main()
