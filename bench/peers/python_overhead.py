"""Python overhead of gwalign.align over the C++ solve, on `gwalign bench spiral`'s inputs.

    PYTHONPATH=build/python /usr/bin/python3 bench/peers/python_overhead.py \\
        --gwalign build/tools/gwalign/gwalign --n 2000 --k 2500 --reps 5 --threads 2

Generates the spiral / swiss roll with `gwalign generate` (the same generator and seed as the
benchmark), runs `gwalign bench spiral --json` for the C++ time, and times gwalign.align on the
same points with the benchmark's options. Reports per-call overhead (Python wall time of
gwalign.align minus the solver's own total_seconds of that call, over total_seconds; immune to
machine noise between runs), the ratio of the medians against the CLI benchmark, and checks that
both front ends ran the same solve (same iterations and GW loss). One JSON object on stdout.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

import h5py
import numpy as np

import gwalign

parser = argparse.ArgumentParser()
parser.add_argument("--gwalign", default="build/tools/gwalign/gwalign")
parser.add_argument("--n", type=int, default=2000)
parser.add_argument("--k", type=int, default=2500)
parser.add_argument("--reps", type=int, default=5)
parser.add_argument("--threads", type=int, default=0)
parser.add_argument("--seed", type=int, default=1)
args = parser.parse_args()

with tempfile.TemporaryDirectory() as tmp:
    paths = {}
    for kind, count in (("spiral", args.n), ("swissroll", args.k)):
        paths[kind] = os.path.join(tmp, kind + ".h5")
        subprocess.run([args.gwalign, "generate", kind, "--n", str(count), "--seed",
                        str(args.seed), "-o", paths[kind]], check=True, capture_output=True)
    with h5py.File(paths["spiral"]) as f:
        xs = np.asarray(f["points"])
    with h5py.File(paths["swissroll"]) as f:
        xt = np.asarray(f["points"])

# The options `gwalign bench spiral` sets (its defaults).
options = dict(distance_mode="landmark", knn=5, epsilon=0.005, num_anchors=80,
               max_iterations=300, num_landmarks=50, precision="f32", threads=args.threads,
               seed=args.seed, compute_gw_loss=True)

# One untimed call first: the first call imports scipy.sparse (~40 ms, once per process).
gwalign.align(xs[:50], xt[:50], knn=5, max_iterations=5, progress=False)
cli_runs, py_runs = [], []
for rep in range(args.reps):
    # Interleaved, so that load changes on a shared machine hit both front ends alike.
    out = subprocess.run([args.gwalign, "bench", "spiral", "--n", str(args.n), "--k",
                          str(args.k), "--reps", "1", "--threads", str(args.threads), "--seed",
                          str(args.seed), "--json"], check=True, capture_output=True, text=True)
    cli_runs.append(json.loads(out.stdout))
    start = time.perf_counter()
    r = gwalign.align(xs, xt, progress=False, **options)
    wall = time.perf_counter() - start
    py_runs.append((wall, r.total_seconds, r.iterations, r.gw_loss))

cli_seconds = [c["seconds"] for c in cli_runs]
walls = [w for w, _, _, _ in py_runs]
overheads = [(w - s) / s for w, s, _, _ in py_runs]
report = {
    "what": "python_overhead", "n": args.n, "k": args.k, "reps": args.reps,
    "threads": cli_runs[0]["threads"],
    "cli_median_seconds": statistics.median(cli_seconds),
    "cli_min_seconds": min(cli_seconds), "cli_max_seconds": max(cli_seconds),
    "python_median_seconds": statistics.median(walls),
    "python_min_seconds": min(walls), "python_max_seconds": max(walls),
    "median_ratio_python_over_cli": statistics.median(walls) / statistics.median(cli_seconds),
    "per_call_overhead_median": statistics.median(overheads),
    "per_call_overhead_max": max(overheads),
    "per_call_overhead_seconds_median": statistics.median(w - s for w, s, _, _ in py_runs),
    "same_solve": all(c["iterations"] == it and abs(c["gw_loss"] - loss) <= 1e-12 * abs(loss)
                      for c, (_, _, it, loss) in zip(cli_runs, py_runs)),
}
print(json.dumps(report, indent=2))
