#!/usr/bin/env python3
"""Time the same `gwalign bench` commands with two builds in one run, alternating, and print the
ratio of their medians (build A over build B) with the spread of the per-round ratios.

Made for the run-time dispatch check: the default (portable) build against a -march=native build
of the same tree, on the same machine in the same minutes, so load changes hit both alike.

  /usr/bin/python3 bench/compare_builds.py --a build/tools/gwalign/gwalign \
      --b build-native/tools/gwalign/gwalign --rounds 5 [--only sinkhorn,spiral400] [--json OUT]

Each round runs every benchmark once with A, then once with B (the order flips every round).
The reported value is the benchmark's own median over its --reps (seconds, or seconds per
iteration for Sinkhorn); ratio_to_floor is shown where the benchmark measures a floor."""
import argparse
import json
import statistics
import subprocess
import sys

# name -> (gwalign arguments, the JSON field timed, the floor-ratio field or None)
BENCHMARKS = {
    "sinkhorn": (["bench", "sinkhorn", "--n", "4000", "--k", "5000", "--iters", "30",
                  "--precision", "f32", "--reps", "3"], "seconds_per_iter", "ratio_to_floor"),
    "spiral400": (["bench", "spiral", "--n", "400", "--k", "500", "--mode", "landmark",
                   "--reps", "3"], "seconds", None),
    "spiral2000": (["bench", "spiral", "--n", "2000", "--k", "2500", "--mode", "landmark",
                    "--reps", "1"], "seconds", None),
    "diffusion": (["bench", "diffusion", "--batch", "64", "--seq", "512", "--channels", "64",
                   "--no-loop", "--reps", "3"], "seconds", None),
    "knn": (["bench", "knn", "--n", "20000", "--d", "3", "--k", "30", "--reps", "5"],
            "seconds", None),
    "aggregate": (["bench", "aggregate", "--batch", "1024", "--seq", "4096", "--hidden", "128",
                   "--reps", "3"], "seconds", "ratio_to_floor"),
}


def run(binary, args):
    out = subprocess.run([binary] + args + ["--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, help="gwalign binary A (e.g. the default build)")
    parser.add_argument("--b", required=True, help="gwalign binary B (e.g. the native build)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated subset of: " +
                        ",".join(BENCHMARKS))
    parser.add_argument("--json", help="also write the results to this file")
    opts = parser.parse_args()
    names = [n for n in opts.only.split(",") if n] or list(BENCHMARKS)
    for n in names:
        if n not in BENCHMARKS:
            sys.exit(f"compare_builds.py: unknown benchmark '{n}'; choose from {','.join(BENCHMARKS)}")
    results = {}
    for name in names:
        args, field, floor = BENCHMARKS[name]
        a_values, b_values, ratios, a_floor, b_floor, extra = [], [], [], [], [], {}
        for r in range(opts.rounds):
            order = [("a", opts.a), ("b", opts.b)] if r % 2 == 0 else [("b", opts.b), ("a", opts.a)]
            got = {}
            for which, binary in order:
                got[which] = run(binary, args)
            a_values.append(got["a"][field])
            b_values.append(got["b"][field])
            ratios.append(got["a"][field] / got["b"][field])
            if floor:
                a_floor.append(got["a"][floor])
                b_floor.append(got["b"][floor])
            extra = {"isa_a": got["a"].get("isa"), "isa_b": got["b"].get("isa")}
            if "abs_rho" in got["a"]:
                extra["abs_rho_a"] = got["a"]["abs_rho"]
                extra["abs_rho_b"] = got["b"]["abs_rho"]
        row = {
            "field": field,
            "a_median": statistics.median(a_values),
            "b_median": statistics.median(b_values),
            "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_max": max(ratios),
            "rounds": opts.rounds,
            **extra,
        }
        if floor:
            row["a_ratio_to_floor"] = statistics.median(a_floor)
            row["b_ratio_to_floor"] = statistics.median(b_floor)
        results[name] = row
        floor_text = (f"  floor A {row['a_ratio_to_floor']:.2f}x B {row['b_ratio_to_floor']:.2f}x"
                      if floor else "")
        print(f"{name:11s} {field:17s} A {row['a_median']:.4g}  B {row['b_median']:.4g}  "
              f"A/B {row['ratio_median']:.3f} ({row['ratio_min']:.3f}-{row['ratio_max']:.3f})"
              f"{floor_text}", flush=True)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
