#!/usr/bin/python3
"""Real shapes: gwalign's CLI defaults vs POT's exact CG and entropic GW on asymmetric surface meshes.

Issue 36's protocol. For every SHAPE:N of --corpus:
  1. `gwalign generate mesh --shape SHAPE --vertices N --seed S --jitter J --out-dir DIR` writes
     the source mesh graph, its copy with every vertex moved by N(0, (J x bounding-box diagonal)^2)
     per coordinate and randomly permuted, and the true map (tools/datagen/mesh.h: nine
     procedural shapes -- head, bunny, teapot, cactus, quadruped, bird, hand, human, lizard --
     with asymmetric details, so the mirror map is a worse answer, not a second optimum).
  2. `gwalign align source.h5ad target.h5ad` with the CLI defaults (plus --flags) reads the two
     mesh graphs (edge lengths) and writes the matching (/matching: argmax of each plan row).
  3. POT 0.8.2 on the same geometry: all-pairs shortest paths of the two mesh graphs
     (scipy.sparse.csgraph.dijkstra), each divided by its maximum (as gwalign does), given to
     ot.gromov.gromov_wasserstein (exact conditional gradient from the product coupling p q^T,
     square loss, POT's defaults) and ot.gromov.entropic_gromov_wasserstein (square loss, epsilon
     from --pot-eps, max_iter --pot-max-iter); matching = argmax of each plan row. Each runs in
     its own process, killed after --pot-timeout seconds (then reported as "timeout"); sizes
     above --pot-max-n are not run (the matrices alone take 16 n^2 bytes).
Metric: the mean geodesic error of a matching m -- for source vertex i matched to target vertex
m(i), the shortest-path distance on the SOURCE mesh graph between i and the source vertex that
became m(i) (truth^-1(m(i))), averaged over vertices -- divided by the source's geodesic diameter,
in percent. Above --error-sample vertices the mean is taken over that many vertices drawn at random
(seeded; Dijkstra from each), otherwise over all. The diameter is the largest all-pairs distance
where those are computed (n <= --loss-max-n or POT runs), else the longest of four farthest-point
sweeps (a lower bound; on these shapes the sweeps end at the extremities).
Mirror-vs-truth loss ratio (where n <= --loss-max-n): the GW loss sum_ij (Dx_ij - Dy_m(i)m(j))^2
over vertex pairs of a random subset of at most 1,000 vertices (distances divided by their mean,
since the jitter lengthens every target geodesic by a few percent) for the best mirror map --
reflect the source's vertices through a plane through their centroid and match each to the
nearest source vertex, composed with the truth; the plane that gives the lowest loss among the
coordinate planes, the principal planes and 200 normals spread over a hemisphere -- over the same
loss of the true map. The loss of each method's matching is reported in the same units.
Seconds: gwalign's report total_seconds (everything after reading the inputs: shortest paths,
solve, rounding; process wall time in the JSON); POT's solver call only (its shortest-path
matrices are built once per pair, prep_seconds). starts/kept: where gwalign ran the exact solver,
the seconds of all its starts (the orientation check's embeddings and candidates included) over the kept start's
own seconds -- the start budget the exact solver spends beyond one start.

Output: a table on stdout; --json FILE writes the records (a JSON array, one object per pair).
--self-test checks the metric on one small head (identity map: error 0; the mirror map: > 5%) and
runs nothing else. Exit status: 0 (1 when the self-test fails), or 77 (skipped) when numpy,
scipy, h5py or POT cannot be imported.

Usage: /usr/bin/python3 bench/peers/real_shapes.py --gwalign build/tools/gwalign/gwalign \
           [--corpus head:1200,bunny:2000,teapot:1500] [--seed 0] [--jitter 0.01] \
           [--flags "..."] [--no-pot] [--pot-timeout 600] [--pot-eps 5e-3] [--json FILE]
       /usr/bin/python3 bench/peers/real_shapes.py --gwalign ... --self-test
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import warnings

try:
    import h5py
    import numpy as np
    import ot
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import dijkstra
    from scipy.spatial import cKDTree
except ImportError as missing:  # the ctest treats 77 as "skipped"
    print(f"skipping: {missing} (install python3-numpy python3-scipy python3-h5py python3-pot)")
    sys.exit(77)

KINDS = ("head", "bunny", "teapot", "cactus", "quadruped", "bird", "hand", "human", "lizard")
LOSS_SUBSET = 1000


# ----------------------------------------------------------------------------------------- inputs

def parse_corpus(spec):
    pairs = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        kind, _, size = item.partition(":")
        if kind not in KINDS or not size.isdigit():
            sys.exit(f"--corpus: '{item}' is not SHAPE:N with SHAPE one of {', '.join(KINDS)}")
        pairs.append((kind, int(size)))
    if not pairs:
        sys.exit("--corpus is empty; give e.g. head:1200,bunny:2000")
    return pairs


def generate(args, kind, size, folder):
    command = [args.gwalign, "generate", "mesh", "--shape", kind, "--vertices", str(size),
               "--seed", str(args.seed), "--jitter", repr(args.jitter), "--out-dir", folder]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"gwalign generate failed ({done.returncode}): {' '.join(command)}\n{done.stderr}")
    return (os.path.join(folder, name) for name in ("source.h5ad", "target.h5ad", "truth.h5"))


def read_side(path):
    """(vertex coordinates n x 3, the mesh graph as a scipy CSR matrix of edge lengths)."""
    with h5py.File(path, "r") as f:
        coords = f["X"][...]
        group = f["obsp/mesh"]
        n = coords.shape[0]
        graph = csr_matrix((group["data"][...], group["indices"][...], group["indptr"][...]),
                           shape=(n, n))
    return coords, graph


def read_truth(path):
    with h5py.File(path, "r") as f:
        return f["truth"][...].astype(np.int64)


# ----------------------------------------------------------------------------------------- metric

def sweep_diameter(graph, sweeps=4):
    """Longest distance found by repeated farthest-point sweeps from vertex 0 (a lower bound)."""
    start, best = 0, 0.0
    for _ in range(sweeps):
        row = dijkstra(graph, directed=False, indices=start)
        start = int(np.argmax(row))
        best = max(best, float(row[start]))
    return best


def error_sample(n, limit, seed):
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=limit, replace=False))


def geodesic_errors(graph, truth, matching, sample, source_distances=None):
    """Per sampled source vertex i: the source geodesic distance from i to truth^-1(matching(i))."""
    inverse = np.empty_like(truth)
    inverse[truth] = np.arange(truth.size)
    matched = inverse[np.asarray(matching, dtype=np.int64)[sample]]
    if source_distances is not None:
        return source_distances[sample, matched]
    rows = dijkstra(graph, directed=False, indices=sample)
    return rows[np.arange(sample.size), matched]


def error_percent(errors, diameter):
    return float(100.0 * errors.mean() / diameter)


# --------------------------------------------------------------------------------- mirror vs truth

def candidate_normals(coords):
    centred = coords - coords.mean(axis=0)
    _, _, principal = np.linalg.svd(centred, full_matrices=False)
    k = np.arange(200) + 0.5
    z = 1.0 - k / 200.0  # upper hemisphere: n and -n are the same plane
    r = np.sqrt(1.0 - z * z)
    golden = np.pi * (3.0 - np.sqrt(5.0))
    lattice = np.stack([r * np.cos(golden * np.arange(200)), r * np.sin(golden * np.arange(200)),
                        z], axis=1)
    return np.concatenate([np.eye(3), principal, lattice])


def mirror_maps(coords):
    """For each candidate plane through the centroid: source vertex -> nearest to its reflection."""
    tree = cKDTree(coords)
    centred = coords - coords.mean(axis=0)
    for normal in candidate_normals(coords):
        normal = normal / np.linalg.norm(normal)
        reflected = coords - 2.0 * np.outer(centred @ normal, normal)
        yield normal, tree.query(reflected)[1]


def subset_loss(dx, dy, subset, target_of):
    """sum over pairs of `subset` of (dx_ij - dy_t(i)t(j))^2 / |subset|^2, t = target_of."""
    mapped = target_of[subset]
    diff = dx[np.ix_(subset, subset)] - dy[np.ix_(mapped, mapped)]
    return float(np.mean(diff * diff))


def mirror_study(coords, dx, dy, truth, matchings, seed):
    """Mean-normalized losses on a vertex subset: truth, best mirror, and each method's matching."""
    dx, dy = dx / dx.mean(), dy / dy.mean()
    subset = error_sample(coords.shape[0], LOSS_SUBSET, seed + 1)
    truth_loss = subset_loss(dx, dy, subset, truth)
    best, best_normal = np.inf, None
    for normal, mirror in mirror_maps(coords):
        loss = subset_loss(dx, dy, subset, truth[mirror])
        if loss < best:
            best, best_normal = loss, normal
    return {
        "truth_loss": truth_loss, "mirror_loss": best, "mirror_over_truth": best / truth_loss,
        "mirror_normal": [round(float(v), 3) for v in best_normal],
        "matching_loss": {name: subset_loss(dx, dy, subset, np.asarray(m, dtype=np.int64))
                          for name, m in matchings.items()},
    }


# ---------------------------------------------------------------------------------------- gwalign

def run_gwalign(args, source, target, folder):
    plan, report = os.path.join(folder, "plan.h5"), os.path.join(folder, "report.json")
    command = [args.gwalign, "align", source, target, "-o", plan, "--report", report, "--quiet"]
    command += shlex.split(args.flags)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"gwalign failed ({done.returncode}): {' '.join(command)}\n{done.stderr}")
    with open(report) as f:
        rep = json.load(f)
    with h5py.File(plan, "r") as f:
        matching = f["matching"][...].astype(np.int64)
    result = rep["result"]
    # The exact solver's start budget: the time of all its starts (the orientation check's
    # candidates and embeddings included) over the kept start's own time.
    starts = result.get("starts") or []
    chosen = result.get("start_chosen", -1)
    budget = None
    sparse = (result.get("strategy") or {}).get("support") == "sparse"
    # The sparse path's starts are its coarse plans (with their fine probes), not exact starts.
    if not sparse and starts and 0 <= chosen < len(starts) and starts[chosen]["seconds"] > 0:
        check = (result.get("timings") or {}).get("orientation_embedding", 0.0)
        budget = (sum(s["seconds"] for s in starts) + check) / starts[chosen]["seconds"]
    return matching, {
        "starts": [{k: s.get(k) for k in ("name", "gw_loss", "objective", "iterations", "seconds",
                                          "skipped", "stopped")} for s in starts],
        "starts_over_kept": budget,
        "start_chosen_name": starts[chosen]["name"] if 0 <= chosen < len(starts) else None,
        "start_probe_seconds": (result.get("timings") or {}).get("start_probes", 0.0),
        "seconds": rep["total_seconds"], "wall_seconds": wall,
        "iterations": rep["iterations"], "termination": result.get("termination"),
        "solver": result.get("solver"), "gw_loss": result.get("gw_loss"),
        "start_chosen": result.get("start_chosen"), "threads": result.get("threads"),
        "command": " ".join(["gwalign", "align", "SOURCE", "TARGET"] + shlex.split(args.flags)),
    }


# -------------------------------------------------------------------------------------------- POT

def pot_worker(argv):
    """`--pot-worker METHOD C1.npy C2.npy OUT EPS MAX_ITER`: one POT solve, matching + seconds."""
    method, c1_path, c2_path, out, eps, max_iter = argv
    c1, c2 = np.load(c1_path), np.load(c2_path)
    p, q = ot.unif(c1.shape[0]), ot.unif(c2.shape[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        if method == "cg":
            plan = ot.gromov.gromov_wasserstein(c1, c2, p, q, "square_loss")
        else:
            plan = ot.gromov.entropic_gromov_wasserstein(
                c1, c2, p, q, "square_loss", epsilon=float(eps), max_iter=int(max_iter),
                tol=1e-9)
        seconds = time.perf_counter() - start
    finite = bool(np.all(np.isfinite(plan)))
    np.save(out + ".npy", np.argmax(plan, axis=1) if finite else np.zeros(0, dtype=np.int64))
    with open(out + ".json", "w") as f:
        json.dump({"seconds": seconds, "finite": finite, "plan_mass": float(plan.sum()),
                   "warnings": sorted({str(w.message).splitlines()[0] for w in caught})[:3]}, f)
    return 0


def run_pot(args, method, c1_path, c2_path, folder, eps):
    out = os.path.join(folder, f"pot_{method}_{eps}")
    command = [sys.executable, os.path.abspath(__file__), "--pot-worker", method, c1_path,
               c2_path, out, repr(eps), str(args.pot_max_iter)]
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.pot_timeout)
    except subprocess.TimeoutExpired:
        return None, {"status": "timeout", "seconds": args.pot_timeout}
    wall = time.perf_counter() - start
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return None, {"status": "failed", "error": last, "wall_seconds": wall}
    with open(out + ".json") as f:
        record = json.load(f)
    record.update(status="ok" if record["finite"] else "non-finite", wall_seconds=wall)
    matching = np.load(out + ".npy")
    return (matching if record["finite"] else None), record


# ------------------------------------------------------------------------------------------- pairs

def run_pair(args, kind, size, folder):
    source, target, truth_path = generate(args, kind, size, folder)
    coords, graph = read_side(source)
    _, target_graph = read_side(target)
    truth = read_truth(truth_path)
    n = coords.shape[0]
    record = {"what": "real_shapes", "shape": kind, "n": n, "requested": size,
              "edges": int(graph.nnz // 2), "seed": args.seed, "jitter": args.jitter}

    matchings = {}
    matchings["gwalign"], record["gwalign"] = run_gwalign(args, source, target, folder)

    run_pot_here = not args.no_pot and n <= args.pot_max_n
    dense = run_pot_here or n <= args.loss_max_n
    dx = dy = None
    if dense:
        start = time.perf_counter()
        dx = dijkstra(graph, directed=False)
        dy = dijkstra(target_graph, directed=False)
        record["prep_seconds"] = time.perf_counter() - start
        record["diameter"], record["diameter_method"] = float(dx.max()), "all pairs"
    else:
        record["diameter"], record["diameter_method"] = sweep_diameter(graph), "sweeps"

    if run_pot_here:
        c1_path, c2_path = os.path.join(folder, "c1.npy"), os.path.join(folder, "c2.npy")
        np.save(c1_path, dx / dx.max())
        np.save(c2_path, dy / dy.max())
        matchings["pot_cg"], record["pot_cg"] = run_pot(args, "cg", c1_path, c2_path, folder, 0.0)
        for eps in args.pot_eps:
            name = "pot_entropic" if len(args.pot_eps) == 1 else f"pot_entropic_{eps:g}"
            matchings[name], record[name] = run_pot(args, "entropic", c1_path, c2_path, folder,
                                                    eps)
            record[name]["epsilon"] = eps
    elif not args.no_pot:
        record["pot_cg"] = {"status": f"skipped (n > --pot-max-n {args.pot_max_n})"}

    sample = error_sample(n, args.error_sample, args.seed)
    record["error_vertices"] = int(sample.size)
    for name, matching in matchings.items():
        if matching is None:
            continue
        errors = geodesic_errors(graph, truth, matching, sample, dx)
        record[name]["error_percent"] = error_percent(errors, record["diameter"])
        record[name]["exact_matches"] = float(np.mean(matching == truth))
    if n <= args.loss_max_n:
        present = {k: v for k, v in matchings.items() if v is not None}
        record["losses"] = mirror_study(coords, dx, dy, truth, present, args.seed)
    return record


def cell(record, method, key, fmt):
    entry = record.get(method)
    if entry is None:
        return "-"
    if key not in entry:
        return entry.get("status", "-").split(" ")[0]
    return format(entry[key], fmt)


def print_table(records, with_pot, entropic_names):
    header = ["shape", "n", "gwalign err%", "s"] + (["POT CG err%", "s"] if with_pot else [])
    for name in entropic_names:
        header += [name.replace("pot_entropic", "POT ent") + " err%", "s"]
    header += ["starts/kept", "mirror/truth"]
    rows = [header]
    for r in records:
        row = [r["shape"], str(r["n"]), cell(r, "gwalign", "error_percent", ".2f"),
               cell(r, "gwalign", "seconds", ".1f")]
        if with_pot:
            row += [cell(r, "pot_cg", "error_percent", ".2f"), cell(r, "pot_cg", "seconds", ".1f")]
        for name in entropic_names:
            row += [cell(r, name, "error_percent", ".2f"), cell(r, name, "seconds", ".1f")]
        ratio = r.get("gwalign", {}).get("starts_over_kept")
        row.append(format(ratio, ".2f") if ratio is not None else "-")
        losses = r.get("losses")
        row.append(format(losses["mirror_over_truth"], ".1f") if losses else "-")
        rows.append(row)
    widths = [max(len(row[c]) for row in rows) for c in range(len(header))]
    for row in rows:
        print("  ".join(text.rjust(width) for text, width in zip(row, widths)), flush=True)


# -------------------------------------------------------------------------------------- self-test

def self_test(args):
    """The metric on a known case: identity -> 0, the x-mirror of a head -> clearly wrong."""
    with tempfile.TemporaryDirectory() as tmp:
        source, _, truth_path = generate(args, "head", 600, tmp)
        coords, graph = read_side(source)
        truth = read_truth(truth_path)
        n = coords.shape[0]
        dx = dijkstra(graph, directed=False)
        diameter = float(dx.max())
        sample = np.arange(n)
        identity = error_percent(geodesic_errors(graph, truth, truth, sample), diameter)
        reflected = coords * np.array([-1.0, 1.0, 1.0]) + np.array([2 * coords[:, 0].mean(), 0, 0])
        mirror = truth[cKDTree(coords).query(reflected)[1]]
        mirror_error = error_percent(geodesic_errors(graph, truth, mirror, sample), diameter)
        mirror_dense = error_percent(geodesic_errors(graph, truth, mirror, sample, dx), diameter)
        sweep = sweep_diameter(graph)
        checks = {
            "identity map error is 0": identity == 0.0,
            "mirror map error > 5% of the diameter": mirror_error > 5.0,
            "sampled-row and all-pairs errors agree": abs(mirror_error - mirror_dense) < 1e-9,
            "sweep diameter <= true diameter, within 5%": diameter * 0.95 <= sweep <= diameter,
        }
        print(json.dumps({"what": "real_shapes_self_test", "n": n, "identity_error": identity,
                          "mirror_error": mirror_error, "diameter": diameter,
                          "sweep_diameter": sweep, "checks": checks}))
        return 0 if all(checks.values()) else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gwalign", required=True, help="path to the gwalign binary")
    parser.add_argument("--corpus", default="head:1200,bunny:2000,teapot:1500",
                        help="SHAPE:N pairs, comma-separated (shapes: " + ", ".join(KINDS) + ")")
    parser.add_argument("--seed", type=int, default=0, help="generator, jitter and sample seed")
    parser.add_argument("--jitter", type=float, default=0.01,
                        help="target noise per coordinate, fraction of the bounding-box diagonal")
    parser.add_argument("--flags", default="", help="extra flags for gwalign align")
    parser.add_argument("--no-pot", action="store_true", help="gwalign only")
    parser.add_argument("--pot-timeout", type=float, default=600.0,
                        help="seconds before a POT run is killed (reported as timeout)")
    parser.add_argument("--pot-eps", default="5e-3",
                        help="epsilon(s) of POT's entropic GW on max-normalized distances")
    parser.add_argument("--pot-max-iter", type=int, default=1000,
                        help="outer iteration limit of POT's entropic GW")
    parser.add_argument("--pot-max-n", type=int, default=6000,
                        help="largest n POT runs at (its dense matrices take 16 n^2 bytes)")
    parser.add_argument("--loss-max-n", type=int, default=3000,
                        help="largest n for the mirror-vs-truth and matching losses (all pairs)")
    parser.add_argument("--error-sample", type=int, default=2000,
                        help="vertices the geodesic error is averaged over (all when n is at most "
                             "this)")
    parser.add_argument("--json", help="write the records to this file (a JSON array)")
    parser.add_argument("--self-test", action="store_true",
                        help="check the error metric on one small head and exit")
    args = parser.parse_args()
    args.pot_eps = [float(v) for v in args.pot_eps.split(",") if v.strip()]
    if args.self_test:
        return self_test(args)

    corpus = parse_corpus(args.corpus)
    entropic = [] if args.no_pot else (
        ["pot_entropic"] if len(args.pot_eps) == 1 else
        [f"pot_entropic_{eps:g}" for eps in args.pot_eps])
    records = []
    with tempfile.TemporaryDirectory() as tmp:
        for index, (kind, size) in enumerate(corpus):
            folder = os.path.join(tmp, f"{index}_{kind}_{size}")
            records.append(run_pair(args, kind, size, folder))
            print(json.dumps({k: records[-1][k] for k in ("shape", "n")} |
                             {"gwalign_error_percent": records[-1]["gwalign"]["error_percent"]}),
                  file=sys.stderr, flush=True)
    print_table(records, not args.no_pot, entropic)
    if args.json:
        partial = args.json + ".partial"
        with open(partial, "w") as f:
            json.dump(records, f, indent=1)
        os.replace(partial, args.json)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--pot-worker":
        sys.exit(pot_worker(sys.argv[2:]))
    import _openblas  # the peer on its CPU's BLAS kernels, not a generic fallback

    _openblas.call()
    sys.exit(main())
