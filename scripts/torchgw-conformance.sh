#!/usr/bin/env bash
# Runs the reference sampled-GW package's (TorchGW) own public-API tests against gwalign's drop-in
# gwalign.torchgw. Its tests are not in this repository (its licence forbids copying them): pass
# the tests/ folder of a checkout of the reference package.
#   scripts/torchgw-conformance.sh REFERENCE/tests [BUILD_DIR] [pytest args...]
# What it does: copies REFERENCE/tests/test_*.py into a scratch folder with our own fixtures
# (tests/conformance/torchgw/conftest.py: two_datasets, two_clusters) and puts a shim package
# `torchgw` (tests/conformance/torchgw/shim/: its public modules re-export sampled_gw,
# build_knn_graph, joint_embedding and sampled_lowrank_gw from gwalign.torchgw) ahead of
# BUILD_DIR/python (default build) on PYTHONPATH. Test files that import the reference's private
# internals (its Sinkhorn loops, distance providers, Triton kernels) cannot load against a shim of
# the public API and are skipped with their names printed; the low-rank solver and autograd
# (differentiable=True) are deselected, since gwalign.torchgw raises NotImplementedError for them.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: scripts/torchgw-conformance.sh REFERENCE/tests [BUILD_DIR] [pytest args]" >&2; exit 64; }
ref="$1"; shift
build="${1:-build}"; [ $# -ge 1 ] && shift
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -d "$ref" ] || { echo "torchgw-conformance: $ref is not a folder (the reference's tests/)" >&2; exit 66; }
[ -d "$build/python/gwalign" ] || { echo "torchgw-conformance: $build/python/gwalign not found; build gwalign with its Python package first" >&2; exit 66; }
build="$(cd "$build" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$root/tests/conformance/torchgw/conftest.py" "$work/"
for f in "$ref"/test_*.py; do
  # Private names of the reference (torchgw._sinkhorn..., torchgw._distances...) are not shimmed.
  if grep -qE '^\s*from torchgw[.a-z_]* import [^#]*\b_[A-Za-z]|^\s*from torchgw\._(distances|sinkhorn|triton|sampling)|^\s*import triton' "$f"; then
    echo "torchgw-conformance: skipping $(basename "$f") (imports the reference's private internals)"
    continue
  fi
  cp "$f" "$work/"
done
cd "$work"
PYTHONPATH="$root/tests/conformance/torchgw/shim:$build/python" OMP_WAIT_POLICY=PASSIVE \
  /usr/bin/python3 -m pytest -q -rA -p no:cacheprovider -k "not lowrank and not differentiable" "$@" .
