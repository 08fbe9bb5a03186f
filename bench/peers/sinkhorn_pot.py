#!/usr/bin/python3
"""POT's log-domain Sinkhorn against `gwalign bench sinkhorn`, per iteration, on the same problem.

Runs `GWALIGN bench sinkhorn ... --save-problem FILE.h5` (our timing, with its streaming floor),
loads C, a, b, epsilon from that file with h5py, times
    ot.sinkhorn(a, b, C, reg=epsilon, method="sinkhorn_log", numItermax=I, stopThr=0)
and prints one JSON object with both per-iteration times and their ratio.

POT's time per iteration is taken as the difference between two iteration counts divided by their
difference, so its setup (-C/reg) and final plan materialization are not charged to iterations.
POT runs on float64 (its usual input; its numpy backend computes in float64 anyway because a and b
are float64) with numpy's single thread; gwalign is timed with all threads and with one thread.

Usage (Debian's python, which has POT and h5py):
    /usr/bin/python3 bench/peers/sinkhorn_pot.py build/tools/gwalign/gwalign \
        --n 4000 --k 5000 --iters 100 --eps 1e-3
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run_gwalign(binary, args, threads, problem=None):
    command = [binary, "bench", "sinkhorn", "--n", str(args.n), "--k", str(args.k),
               "--iters", str(args.iters), "--precision", "f32", "--eps", repr(args.eps),
               "--reps", str(args.reps), "--threads", str(threads), "--seed", str(args.seed),
               "--json"]
    if problem is not None:
        command += ["--save-problem", problem]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def time_pot(ot, a, b, cost, epsilon, iterations, reps):
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        ot.sinkhorn(a, b, cost, epsilon, method="sinkhorn_log", numItermax=iterations,
                    stopThr=0.0, warn=False)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), min(samples), max(samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gwalign", help="path to the gwalign binary")
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--k", type=int, default=5000)
    parser.add_argument("--iters", type=int, default=100, help="gwalign iterations per solve")
    parser.add_argument("--pot-iters", default="10,30",
                        help="two POT iteration counts; per-iteration = time difference / count "
                             "difference")
    parser.add_argument("--eps", type=float, default=1e-3)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    import h5py
    import numpy as np
    import ot

    with tempfile.TemporaryDirectory() as scratch:
        problem = os.path.join(scratch, "sinkhorn_problem.h5")
        ours = run_gwalign(args.gwalign, args, 0, problem)
        ours_one_thread = run_gwalign(args.gwalign, args, 1)
        with h5py.File(problem, "r") as f:
            cost = np.asarray(f["C"], dtype=np.float64)
            a = np.asarray(f["a"], dtype=np.float64)
            b = np.asarray(f["b"], dtype=np.float64)
            epsilon = float(f["epsilon"][()])

    low, high = (int(x) for x in args.pot_iters.split(","))
    if not 0 < low < high:
        sys.exit("--pot-iters needs two increasing positive counts, e.g. 10,30")
    t_low = time_pot(ot, a, b, cost, epsilon, low, args.reps)
    t_high = time_pot(ot, a, b, cost, epsilon, high, args.reps)
    pot_per_iter = (t_high[0] - t_low[0]) / (high - low)

    report = {
        "what": "sinkhorn_vs_pot",
        "n": args.n,
        "k": args.k,
        "epsilon": epsilon,
        "gwalign_threads": ours["threads"],
        "gwalign_seconds_per_iter": ours["seconds_per_iter"],
        "gwalign_seconds_per_iter_min": ours["seconds_per_iter_min"],
        "gwalign_seconds_per_iter_max": ours["seconds_per_iter_max"],
        "gwalign_floor_seconds_per_iter": ours["floor_seconds_per_iter"],
        "gwalign_ratio_to_floor": ours["ratio_to_floor"],
        "gwalign_1thread_seconds_per_iter": ours_one_thread["seconds_per_iter"],
        "pot_version": ot.__version__,
        "pot_iterations": [low, high],
        "pot_seconds": [t_low[0], t_high[0]],
        "pot_seconds_per_iter": pot_per_iter,
        "pot_over_gwalign": pot_per_iter / ours["seconds_per_iter"],
        "pot_over_gwalign_1thread": pot_per_iter / ours_one_thread["seconds_per_iter"],
    }
    print(json.dumps(report))


if __name__ == "__main__":
    import _openblas  # the peer on its CPU's BLAS kernels, not a generic fallback

    _openblas.call()
    main()
