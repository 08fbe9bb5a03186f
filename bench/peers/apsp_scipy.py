#!/usr/bin/python3
"""All-pairs shortest paths: gwalign vs scipy.sparse.csgraph.dijkstra on the same graph, in one run.

Runs `gwalign bench apsp --save FILE --sample-rows R` (which times our all-pairs Dijkstra on the
kNN graph of n random points and writes the graph plus R of our distance rows), loads the graph
with h5py into a scipy CSR matrix (float32 lengths widened to float64, as scipy computes), then
times
    scipy.sparse.csgraph.dijkstra(G, directed=False)          # all pairs, what the issue names
    scipy.sparse.csgraph.dijkstra(G, directed=True)           # same answer on a symmetric graph,
                                                              # scipy's faster path (--no-directed
                                                              # skips it)
and compares our rows with scipy's (max relative error over finite entries; infinities must
match). Prints one JSON object with both medians and the speedups.

Usage: /usr/bin/python3 bench/peers/apsp_scipy.py --gwalign build/tools/gwalign/gwalign \
           [--n 5000] [--k 30] [--reps 3] [--sample-rows 5000]
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
from scipy.sparse.csgraph import dijkstra


def time_scipy(graph, directed, reps):
    times = []
    result = None
    for _ in range(reps):
        start = time.perf_counter()
        result = dijkstra(graph, directed=directed)
        times.append(time.perf_counter() - start)
    return times, result


def max_relative_error(ours, theirs):
    ours = ours.astype(np.float64)
    inf_ours = np.isinf(ours)
    inf_theirs = np.isinf(theirs)
    if not np.array_equal(inf_ours, inf_theirs):
        return float("inf"), int(np.count_nonzero(inf_ours != inf_theirs))
    finite = ~inf_theirs
    diff = np.abs(ours[finite] - theirs[finite])
    scale = np.maximum(np.abs(theirs[finite]), np.finfo(np.float64).tiny)
    # A reference 0 (a node's distance to itself) must be matched exactly.
    rel = np.where(theirs[finite] == 0.0, np.where(diff == 0.0, 0.0, np.inf), diff / scale)
    return (float(rel.max()) if rel.size else 0.0), 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gwalign", required=True, help="path to the gwalign binary")
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=3)
    parser.add_argument("--k", type=int, default=30)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int, default=0, help="gwalign threads (0 = all)")
    parser.add_argument("--sample-rows", type=int, default=None,
                        help="rows of our result to compare (default: all n)")
    parser.add_argument("--no-directed", action="store_true",
                        help="skip timing scipy's directed=True call")
    args = parser.parse_args()
    sample_rows = args.n if args.sample_rows is None else args.sample_rows

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "apsp.h5")
        ours = json.loads(subprocess.run(
            [args.gwalign, "bench", "apsp", "--n", str(args.n), "--d", str(args.d),
             "--k", str(args.k), "--reps", str(args.reps), "--seed", str(args.seed),
             "--threads", str(args.threads), "--json", "--save", path,
             "--sample-rows", str(sample_rows)],
            check=True, capture_output=True, text=True).stdout)
        with h5py.File(path, "r") as f:
            g = f["graph"]
            shape = tuple(int(s) for s in g.attrs["shape"])
            graph = csr_matrix((g["data"][...].astype(np.float64), g["indices"][...],
                                g["indptr"][...]), shape=shape)
            sources = f["distances/sources"][...] if sample_rows > 0 else np.zeros(0, np.int32)
            our_rows = f["distances/rows"][...] if sample_rows > 0 else None

    undirected_times, reference = time_scipy(graph, False, args.reps)
    report = {
        "what": "apsp_vs_scipy",
        "n": args.n, "d": args.d, "k": args.k, "reps": args.reps,
        "edges": int(graph.nnz),
        "gwalign_seconds": ours["seconds"],
        "gwalign_seconds_min": ours["seconds_min"],
        "gwalign_seconds_max": ours["seconds_max"],
        "gwalign_threads": ours["threads"],
        "scipy_seconds": statistics.median(undirected_times),
        "scipy_seconds_min": min(undirected_times),
        "scipy_seconds_max": max(undirected_times),
        "speedup": statistics.median(undirected_times) / ours["seconds"],
    }
    if not args.no_directed:
        directed_times, directed_result = time_scipy(graph, True, args.reps)
        report["scipy_directed_seconds"] = statistics.median(directed_times)
        report["speedup_vs_scipy_directed"] = statistics.median(directed_times) / ours["seconds"]
        report["scipy_directed_agrees"] = bool(np.allclose(directed_result, reference, rtol=1e-12,
                                                           atol=0.0))
    if sample_rows > 0:
        rel, inf_mismatches = max_relative_error(our_rows, reference[sources])
        report["compared_rows"] = int(sample_rows)
        report["max_relative_error"] = rel
        report["infinity_mismatches"] = inf_mismatches
        report["identical_to_1e-5"] = bool(rel <= 1e-5)
    print(json.dumps(report))
    return 0 if sample_rows == 0 or report["identical_to_1e-5"] else 1


if __name__ == "__main__":
    import _openblas  # the peer on its CPU's BLAS kernels, not a generic fallback

    _openblas.call()
    sys.exit(main())
