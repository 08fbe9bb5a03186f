#!/usr/bin/python3
"""Scores a registered stack of `gwalign generate tissue` sections, beside the best any
registration from the tissue pattern could do (the label oracle).

Inputs: the generator's DIR (section_0.h5ad ... with obsm['spatial_true'], obs['domain'],
uns['generator']) and the output DIR of `gwalign slices DIR/section_{0..N-1}.h5ad --out-dir OUT`
(each section's obsm['spatial_aligned']).

Printed (one JSON object):
  chain        per section, the mean distance between its registered position and its true one
               carried into the anchor section's observed frame (the anchor's generator motion
               applied to the true x, y), over its diameter (the diagonal of its true x, y
               bounding box) -- the issue's "registered within 2% of its diameter"; the anchor
               (--anchor, slices' reference, default section 0) scores 0 by construction
  pairs        per adjacent pair (s - 1, s): the same error with section s - 1 moved onto its
               truth first (the pair's own share), and that error as a motion: the rotation
               (degrees) and the offset of the registered centroid from the true one (in the
               tissue's x, y, comparable with the oracle's shift)
  oracle       the label oracle, per adjacent pair: the shift of section s's TRUE positions
               (+-range units, every step units) that maximizes the share of its cells whose
               domain equals the domain of the nearest cell of section s - 1 within 2 median
               spacings (at least 40% of the cells matched). A registration that reads the layer
               pattern -- from expression or from the true labels themselves -- cannot tell this
               shift from the truth, so its distance from zero (over the diameter) bounds what
               such a method can reach on this stack; `chain` adds the pairs' oracle shifts up
               from the anchor. With `generate tissue --layer-drift 0` the layers do not move
               between sections and the oracle's shifts are a few units.

Exit status 77 (skipped) when anndata / scipy are missing.

Usage: /usr/bin/python3 bench/peers/stack_score.py SECTIONS_DIR OUT_DIR [--anchor S]
           [--oracle-range 120] [--oracle-step 4] [--no-oracle]
"""
import argparse
import glob
import json
import os
import sys

try:
    import anndata as ad
    import numpy as np
    import scipy.sparse as sp
    from scipy.spatial import cKDTree
except ImportError as missing:  # pragma: no cover - environment without the peers' packages
    print(f"skipped: {missing}", file=sys.stderr)
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from paste_pot import procrustes, truth_in_frame  # noqa: E402


def load_sections(sections_dir):
    paths = sorted(glob.glob(os.path.join(sections_dir, "section_*.h5ad")),
                   key=lambda p: int(os.path.basename(p)[len("section_"):-len(".h5ad")]))
    if len(paths) < 2:
        sys.exit(f"{sections_dir}: fewer than two section_*.h5ad files")
    return [ad.read_h5ad(p) for p in paths]


def diameter(section):
    xy = np.asarray(section.obsm["spatial_true"])[:, :2]
    return float(np.hypot(*(xy.max(axis=0) - xy.min(axis=0))))


def registered(out_dir, s):
    path = os.path.join(out_dir, f"section_{s}.h5ad")
    return np.asarray(ad.read_h5ad(path).obsm["spatial_aligned"])[:, :2]


def residual_motion(anchor, current, truth):
    """The registration's own error as a motion: the rotation (degrees) carrying `truth` onto
    `current`, and where `current`'s centroid lies from the truth's, in the tissue's x, y."""
    rot, shift = procrustes(sp.identity(len(current)), current, truth)
    centre = truth.mean(axis=0)
    moved = rot @ centre + shift - centre
    angle = float(anchor.uns["generator"]["angle"])
    to_tissue = np.array([[np.cos(angle), np.sin(angle)], [-np.sin(angle), np.cos(angle)]])
    return float(np.degrees(np.arctan2(rot[1, 0], rot[0, 0]))), (to_tissue @ moved).tolist()


def oracle_shift(fixed, moving, reach, step):
    """The shift of `moving`'s true x, y that best matches `fixed`'s domain labels."""
    a = np.asarray(fixed.obsm["spatial_true"])[:, :2]
    b = np.asarray(moving.obsm["spatial_true"])[:, :2]
    la = fixed.obs["domain"].cat.codes.to_numpy()
    lb = moving.obs["domain"].cat.codes.to_numpy()
    tree = cKDTree(a)
    radius = 2.0 * float(np.median(tree.query(a, 2)[0][:, 1]))

    def agreement(dx, dy):
        dist, idx = tree.query(b + [dx, dy], distance_upper_bound=radius)
        ok = np.isfinite(dist)
        if ok.mean() < 0.4:
            return -1.0
        return float((la[idx[ok]] == lb[ok]).mean())

    offsets = np.arange(-reach, reach + step / 2, step)
    best = max(((agreement(dx, dy), dx, dy) for dx in offsets for dy in offsets), key=lambda t: t[0])
    return {"agreement_at_truth": agreement(0.0, 0.0), "best_agreement": best[0],
            "shift": [float(best[1]), float(best[2])]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sections_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--anchor", type=int, default=0)
    parser.add_argument("--oracle-range", type=float, default=120.0)
    parser.add_argument("--oracle-step", type=float, default=4.0)
    parser.add_argument("--no-oracle", action="store_true")
    args = parser.parse_args()

    sections = load_sections(args.sections_dir)
    count = len(sections)
    if not 0 <= args.anchor < count:
        sys.exit(f"--anchor {args.anchor} is not a section of {args.sections_dir} (0..{count - 1})")
    anchor = sections[args.anchor]
    truth = [truth_in_frame(anchor, s)[0] for s in sections]
    placed = [registered(args.out_dir, s) for s in range(count)]
    diam = [diameter(s) for s in sections]
    report = {"sections": count, "anchor": args.anchor,
              "chain": [float(np.linalg.norm(placed[s] - truth[s], axis=1).mean() / diam[s])
                        for s in range(count)],
              "pairs": []}
    for s in range(1, count):
        rot, shift = procrustes(sp.identity(len(placed[s - 1])), truth[s - 1], placed[s - 1])
        moved = placed[s] @ rot.T + shift
        angle, residual = residual_motion(anchor, moved, truth[s])
        report["pairs"].append({"pair": [s - 1, s],
                                "error": float(np.linalg.norm(moved - truth[s], axis=1).mean() / diam[s]),
                                "rotation_deg": angle, "offset": residual})
    if not args.no_oracle:
        total = np.zeros(2)
        oracle = []
        for s in range(1, count):
            o = oracle_shift(sections[s - 1], sections[s], args.oracle_range, args.oracle_step)
            o["pair"] = [s - 1, s]
            o["error"] = float(np.hypot(*o["shift"]) / diam[s])
            total += o["shift"]
            o["chain_from_0"] = float(np.hypot(*total) / diam[s])
            oracle.append(o)
        report["oracle"] = oracle
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
