#!/usr/bin/python3
"""Real data from Debian packages (bench/README.md): gwalign vs POT's entropic GW, one run.

Task `digits` -- scikit-learn's handwritten digits (sklearn/datasets/data/digits.csv.gz, 1,797 x 64,
labels 0-9). The target is a copy that is rotated (a random 64 x 64 orthogonal matrix), noised
(Gaussian, std = noise level x the overall std of the data) and row-shuffled, for every noise level
of --noise. Methods:
  * gwalign on the points (`--rep /points --mode precomputed --knn K`, for every K of --knn): it
    builds kNN graphs and uses their shortest paths (a geodesic, not the Euclidean, geometry);
  * gwalign on max-normalized Euclidean distance matrices (`--as-distances`);
  * POT ot.gromov.entropic_gromov_wasserstein (square loss) on the same Euclidean matrices, for
    every epsilon of --digits-pot-eps, bounded by --digits-pot-max-iter outer iterations (at
    n = 1,797 one outer iteration costs ~6-7 s here, so POT cannot run to convergence in budget).
  Scores (argmax of each plan row): exact-match rate (the match is the point's own rotated copy)
  and label-transfer accuracy (the matched point has the same digit label). The Euclidean metric
  is rotation-invariant, so GW has symmetric optima (e.g. mirror images of the whole cloud, digits
  that are near-duplicates) that are as good as the truth: exact match is the strict score, label
  transfer the forgiving one.

Task `graphs` -- node correctness on Les Miserables (networkx.les_miserables_graph(), 77 nodes, 254
edges; HOP distances: its edge weights are co-occurrence counts, i.e. similarities, not lengths)
and the C. elegans WormNet v3 benchmark network shipped in python3-networkx's examples (plain
text, two gene names per line, not gzipped; 2,445 genes and 78,736 edges in 46 components: the
largest connected component, 2,274 genes and 78,328 edges, is used). The target is a randomly
permuted copy with 5% of its edges removed (redrawn until connected); both sides are
max-normalized hop-count shortest-path matrices (scipy.sparse.csgraph), given to gwalign with
`--as-distances` and to POT as arrays. Score: node correctness (fraction of source nodes whose
argmax match is their true counterpart), and the same counting a match to a twin of the true
counterpart as right (twins: same neighbourhood in the source graph, e.g. leaves of one hub;
swapping them is an automorphism). Les Miserables runs --lesmis-instances instances
(permutation + removal each; its many degree-1 satellites are automorphic, so one instance is
partly a coin flip) and POT runs --lesmis-pot-eps; WormNet runs one instance, POT on
--worm-pot-eps bounded by --worm-pot-max-iter (14-19 s per outer iteration here). On every graph
instance POT's exact conditional-gradient GW (`ot.gromov.gromov_wasserstein`, its defaults) runs
too.

gwalign settings are fixed per family, chosen before seeing these instances' results, never tuned
per instance: digits -- defaults with the kNN variants above and --as-distances; graphs -- the
defaults and the small-graph flags of graph_matching_pot.py (`--eps 5e-3 -M 1000
--sinkhorn-max-iter 20 --eps-final 2e-4`). Where an instance is run once, gwalign runs with
--gwalign-seeds seeds: its seconds are the median (and min-max) over the seeds and its scores the
median with the per-seed values listed. POT is deterministic; each POT setting runs once. The
POT epsilon grids are small and were chosen after timed probes (digits, noise 0.1: eps 5e-3 reached
exact match 0.585 in 20 iterations and 1e-2 converged to a blurred plan, so the grid is 1e-3, 2e-3).

Seconds: gwalign's `total_seconds` from its report (everything after reading the inputs; with
points that includes the kNN graph and its shortest paths), plus the process wall time; POT's
time of the solver call only (the distance matrices are built once, their time is `prep_seconds`).
Output: one JSON object per line, a record per (method, setting, data set[, noise]) with method,
task, data, settings, seconds, n and score(s); then one summary object per task.
Exit status: 0, or 77 (skipped) when h5py, numpy, scipy, scikit-learn, networkx or POT is missing.

Usage: /usr/bin/python3 bench/peers/real_data.py --gwalign build-real/tools/gwalign/gwalign \
           [--task digits|graphs|all] [--seed 0] [--noise 0,0.1,0.3,0.5] [--knn 10,30] \
           [--gwalign-seeds 3] [--digits-pot-eps 1e-3,2e-3] [--digits-pot-max-iter 10] \
           [--lesmis-instances 8] [--lesmis-pot-eps 1e-3,5e-3,1e-2,5e-2] \
           [--worm-pot-eps 1e-3,5e-3] [--worm-pot-max-iter 15] [--no-pot]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

try:
    import h5py
    import networkx as nx
    import numpy as np
    import ot
    from scipy.sparse.csgraph import shortest_path
    from scipy.spatial.distance import pdist, squareform
    from sklearn.datasets import load_digits
except ImportError as missing:  # 77 = skipped, as in the other peer scripts
    print(f"skipping: {missing} (needs python3-h5py python3-networkx python3-numpy python3-pot "
          "python3-scipy python3-sklearn)")
    sys.exit(77)

WORMNET = "/usr/share/doc/python3-networkx/examples/algorithms/WormNet.v3.benchmark.txt"
SMALL_GRAPH_FLAGS = "--eps 5e-3 -M 1000 --sinkhorn-max-iter 20 --eps-final 2e-4"
EDGE_REMOVAL = 0.05


def emit(record):
    print(json.dumps(record), flush=True)
    return record


def floats(text):
    return [float(v) for v in text.split(",") if v.strip()]


class Gwalign:
    """Runs `gwalign align` on HDF5 files in a scratch folder; returns matchings and timings."""

    def __init__(self, binary, folder):
        self.binary, self.folder = binary, folder

    def put(self, name, **datasets):
        path = os.path.join(self.folder, name)
        with h5py.File(path, "w") as f:
            for key, value in datasets.items():
                f[key] = value
        return path

    def align(self, source, target, flags, seed):
        out = os.path.join(self.folder, "out.h5")
        command = [self.binary, "align", source, target, "--seed", str(seed), "--quiet",
                   "-o", out] + flags
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            sys.exit(f"gwalign failed ({done.returncode}): {' '.join(command)}\n{done.stderr}")
        with h5py.File(out, "r") as f:
            matching = f["matching"][...].astype(np.int64)
            report = json.loads(f["report"][()])
        return matching, report["total_seconds"], wall, report["result"]

    def over_seeds(self, source, target, flags, seeds, score):
        """Runs every seed; score(matching) -> dict of scores. Returns the record's common part."""
        runs = [self.align(source, target, flags, s) for s in seeds]
        per_seed = [score(m) for m, _, _, _ in runs]
        seconds = [t for _, t, _, _ in runs]
        record = {"seconds": statistics.median(seconds), "seconds_min": min(seconds),
                  "seconds_max": max(seconds),
                  "wall_seconds": statistics.median(w for _, _, w, _ in runs),
                  "seeds": list(seeds),
                  "iterations": [r["iterations"] for _, _, _, r in runs],
                  "plan_mass": [r["plan_mass"] for _, _, _, r in runs],
                  "threads": runs[0][3]["threads"]}
        for key in per_seed[0]:
            record[key] = statistics.median(s[key] for s in per_seed)
            record[key + "_per_seed"] = [s[key] for s in per_seed]
        return record


def pot_entropic(c1, c2, eps, max_iter):
    """One timed POT entropic GW run; (argmax matching or None, seconds, notes)."""
    p, q = ot.unif(c1.shape[0]), ot.unif(c2.shape[0])
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        try:
            plan = ot.gromov.entropic_gromov_wasserstein(c1, c2, p, q, "square_loss", epsilon=eps,
                                                         max_iter=max_iter, tol=1e-9)
        except Exception as failure:  # small epsilons can break POT's Sinkhorn
            plan = None
            notes.append(f"{type(failure).__name__}: {failure}")
        seconds = time.perf_counter() - start
    notes += sorted({str(w.message).split(".")[0] for w in caught})
    if plan is None or not np.all(np.isfinite(plan)):
        notes.append("non-finite plan")
        return None, seconds, notes
    return np.argmax(plan, axis=1), seconds, notes


def pot_cg(c1, c2):
    """One timed run of POT's exact conditional-gradient GW (its defaults); (matching, seconds)."""
    p, q = ot.unif(c1.shape[0]), ot.unif(c2.shape[0])
    start = time.perf_counter()
    plan = ot.gromov.gromov_wasserstein(c1, c2, p, q, "square_loss")
    return np.argmax(plan, axis=1), time.perf_counter() - start


def normalized(d):
    return d / d.max()


# ---------------------------------------------------------------------------------------- digits


def noisy_rotated_copy(x, noise, rng):
    """(target rows, where) with target[where[i]] = rotate(x[i]) + noise."""
    q, r = np.linalg.qr(rng.standard_normal((x.shape[1], x.shape[1])))
    rotation = q * np.sign(np.diag(r))  # Haar-distributed orthogonal matrix
    moved = x @ rotation + rng.normal(0.0, noise * x.std(), size=x.shape)
    where = rng.permutation(x.shape[0])
    target = np.empty_like(moved)
    target[where] = moved
    return target, where


def digits_task(args, gw, rng):
    data = load_digits()
    x, labels = data.data.astype(np.float64), data.target
    n = x.shape[0]
    settings = [(f"points --mode precomputed --knn {k}",
                 ["--rep", "/points", "--mode", "precomputed", "--knn", str(k)]) for k in args.knn]
    settings.append(("--as-distances (max-normalized Euclidean)",
                     ["--rep", "/dist", "--as-distances"]))
    seeds = list(range(args.seed, args.seed + args.gwalign_seeds))
    records = []
    for noise in args.noise:
        target, where = noisy_rotated_copy(x, noise, rng)
        target_labels = np.empty_like(labels)
        target_labels[where] = labels

        def score(matching):
            return {"exact_match": float(np.mean(matching == where)),
                    "label_transfer": float(np.mean(target_labels[matching] == labels))}

        start = time.perf_counter()
        c1, c2 = normalized(squareform(pdist(x))), normalized(squareform(pdist(target)))
        prep = time.perf_counter() - start
        source_file = gw.put("digits_source.h5", points=x, dist=c1)
        target_file = gw.put("digits_target.h5", points=target, dist=c2)
        base = {"task": "digits", "data": "sklearn digits", "n": n, "noise": noise}
        for label, flags in settings:
            result = gw.over_seeds(source_file, target_file, flags, seeds, score)
            records.append(emit({**base, "method": "gwalign", "settings": label, **result}))
        if args.no_pot:
            continue
        for eps in args.digits_pot_eps:
            matching, seconds, notes = pot_entropic(c1, c2, eps, args.digits_pot_max_iter)
            scores = score(matching) if matching is not None else {"exact_match": 0.0,
                                                                   "label_transfer": 0.0}
            records.append(emit({
                **base, "method": "pot_entropic_gw",
                "settings": f"epsilon {eps:g}, max_iter {args.digits_pot_max_iter}, Euclidean",
                "epsilon": eps, "seconds": seconds, "prep_seconds": prep, **scores,
                "notes": notes}))
    summary = {"what": "summary", "task": "digits", "n": n, "rows": []}
    for noise in args.noise:
        row = {"noise": noise}
        for r in records:
            if r["noise"] == noise:
                row[f"{r['method']} {r['settings']}"] = {
                    k: round(r[k], 4) for k in ("exact_match", "label_transfer", "seconds")}
        summary["rows"].append(row)
    pot = [r for r in records if r["method"] != "gwalign"]
    ours = [r for r in records if r["method"] == "gwalign"]
    if pot:
        summary["pot_median_seconds"] = statistics.median(r["seconds"] for r in pot)
        summary["gwalign_median_seconds"] = statistics.median(r["seconds"] for r in ours)
    emit(summary)


# ---------------------------------------------------------------------------------------- graphs


def wormnet():
    """Largest connected component of the WormNet benchmark network, nodes relabelled 0..n-1."""
    graph = nx.read_edgelist(WORMNET)  # "geneA geneB" per line, unweighted
    giant = graph.subgraph(max(nx.connected_components(graph), key=len))
    info = {"file_nodes": graph.number_of_nodes(), "file_edges": graph.number_of_edges(),
            "components": nx.number_connected_components(graph)}
    return nx.convert_node_labels_to_integers(giant, ordering="sorted"), info


def hop_distances(graph, n):
    adjacency = nx.to_scipy_sparse_array(graph, nodelist=range(n), weight=None, format="csr")
    return normalized(shortest_path(adjacency, unweighted=True, directed=False))


def twin_classes(graph, n):
    """Class id per node; nodes with the same open neighbourhood (e.g. leaves of one hub) share
    one. Swapping two such twins is an automorphism, so no method can tell them apart."""
    ids = {}
    return np.array([ids.setdefault(frozenset(graph[v]), len(ids)) for v in range(n)])


def permuted_thinned(graph, rng):
    """(target, where): node i of graph is node where[i] of target; 5% of edges dropped."""
    n = graph.number_of_nodes()
    where = rng.permutation(n)
    moved = np.array([(where[u], where[v]) for u, v in graph.edges()])
    drop = int(round(EDGE_REMOVAL * len(moved)))
    for _ in range(1000):
        kept = moved[rng.permutation(len(moved))[drop:]]
        target = nx.empty_graph(n)
        target.add_edges_from(map(tuple, kept))
        if nx.is_connected(target):
            return target, where
    sys.exit("could not remove 5% of the edges and stay connected in 1000 draws")


def graph_instance_records(gw, name, graph, rng, seeds, pot_grid, pot_max_iter, no_pot, tag):
    n = graph.number_of_nodes()
    target, where = permuted_thinned(graph, rng)
    start = time.perf_counter()
    c1, c2 = hop_distances(graph, n), hop_distances(target, n)
    prep = time.perf_counter() - start
    source_file = gw.put(f"{tag}_source.h5", dist=c1)
    target_file = gw.put(f"{tag}_target.h5", dist=c2)

    twins = twin_classes(graph, n)
    source_of = np.argsort(where)

    def score(matching):
        return {"node_correctness": float(np.mean(matching == where)),
                "node_correctness_up_to_twins":
                    float(np.mean(twins[source_of[matching]] == twins))}

    base = {"task": "graphs", "data": name, "n": n, "edges": graph.number_of_edges(),
            "target_edges": target.number_of_edges(),
            "twin_nodes": int(n - len(set(twins.tolist())))}
    out = []
    for label, extra in (("defaults", []), ("small-graph flags", SMALL_GRAPH_FLAGS.split())):
        flags = ["--rep", "/dist", "--as-distances"] + extra
        result = gw.over_seeds(source_file, target_file, flags, seeds, score)
        out.append({**base, "method": "gwalign",
                    "settings": " ".join([f"{label}:", "--as-distances"] + extra), **result})
    if not no_pot:
        for eps in pot_grid:
            matching, seconds, notes = pot_entropic(c1, c2, eps, pot_max_iter)
            scores = (score(matching) if matching is not None else
                      {"node_correctness": 0.0, "node_correctness_up_to_twins": 0.0})
            out.append({**base, "method": "pot_entropic_gw",
                        "settings": f"epsilon {eps:g}, max_iter {pot_max_iter}",
                        "epsilon": eps, "seconds": seconds, "prep_seconds": prep, **scores,
                        "notes": notes})
        matching, seconds = pot_cg(c1, c2)
        out.append({**base, "method": "pot_cg_gw", "settings": "exact conditional gradient",
                    "seconds": seconds, "prep_seconds": prep, **score(matching)})
    return out


def graphs_task(args, gw, rng):
    lesmis = nx.convert_node_labels_to_integers(nx.les_miserables_graph(), ordering="sorted")
    summary = {"what": "summary", "task": "graphs", "graphs": {}}
    # Les Miserables: instances carry the variability; one gwalign seed per instance.
    per_instance = []
    for i in range(args.lesmis_instances):
        records = graph_instance_records(gw, "les_miserables", lesmis, rng, [args.seed + i],
                                         args.lesmis_pot_eps, 1000, args.no_pot, "lesmis")
        for r in records:
            r["instance"] = i
            emit(r)
        per_instance += records
    worm, worm_info = wormnet()
    records = graph_instance_records(
        gw, "wormnet_lcc", worm, rng, list(range(args.seed, args.seed + args.gwalign_seeds)),
        args.worm_pot_eps, args.worm_pot_max_iter, args.no_pot, "worm")
    for r in records:
        emit({**r, **worm_info})
    for name, group in (("les_miserables", per_instance), ("wormnet_lcc", records)):
        table = {}
        for r in group:
            entry = table.setdefault(f"{r['method']} {r['settings']}",
                                     {"nc": [], "twins": [], "seconds": []})
            entry["nc"].append(r["node_correctness"])
            entry["twins"].append(r["node_correctness_up_to_twins"])
            entry["seconds"].append(r["seconds"])
        summary["graphs"][name] = {
            "n": group[0]["n"], "edges": group[0]["edges"],
            "instances": len({r.get("instance", 0) for r in group}),
            "methods": {k: {"node_correctness_mean": float(np.mean(v["nc"])),
                            "node_correctness_up_to_twins_mean": float(np.mean(v["twins"])),
                            "seconds_median": statistics.median(v["seconds"])}
                        for k, v in table.items()}}
    summary["wormnet_file"] = worm_info
    emit(summary)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gwalign", required=True, help="path to the gwalign binary")
    parser.add_argument("--task", choices=("digits", "graphs", "all"), default="all")
    parser.add_argument("--seed", type=int, default=0, help="data seed and first gwalign seed")
    parser.add_argument("--gwalign-seeds", type=int, default=3,
                        help="gwalign seeds per single-instance problem (timing median over them)")
    parser.add_argument("--noise", type=floats, default=floats("0,0.1,0.3,0.5"))
    parser.add_argument("--knn", type=lambda t: [int(v) for v in t.split(",") if v.strip()],
                        default=[10, 30], help="gwalign --knn values on the digit points")
    parser.add_argument("--digits-pot-eps", type=floats, default=floats("1e-3,2e-3"))
    parser.add_argument("--digits-pot-max-iter", type=int, default=10)
    parser.add_argument("--lesmis-instances", type=int, default=8)
    parser.add_argument("--lesmis-pot-eps", type=floats, default=floats("1e-3,5e-3,1e-2,5e-2"))
    parser.add_argument("--worm-pot-eps", type=floats, default=floats("1e-3,5e-3"))
    parser.add_argument("--worm-pot-max-iter", type=int, default=15)
    parser.add_argument("--no-pot", action="store_true", help="gwalign only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        gw = Gwalign(args.gwalign, folder)
        if args.task in ("digits", "all"):
            digits_task(args, gw, np.random.default_rng(args.seed))
        if args.task in ("graphs", "all"):
            graphs_task(args, gw, np.random.default_rng(args.seed + 1))
    return 0


if __name__ == "__main__":
    import _openblas  # the peer on its CPU's BLAS kernels, not a generic fallback

    _openblas.call()
    sys.exit(main())
