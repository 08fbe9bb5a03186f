#!/usr/bin/env bash
# The main job in one command, on a fresh Debian 12 machine: installs missing apt packages,
# builds Release (build dir `build`, the same configuration as scripts/test.sh) if needed,
# generates the bundled spiral / swiss roll data if absent, and aligns them with `gwalign align`,
# printing |rho|, iterations and seconds.
# Environment: BUILD_DIR (default build), JOBS (default: number of cores), OUT_DIR (where the plan
# and report go; default a fresh temporary directory).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/deps.sh
gwalign_install_deps

BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
GWALIGN="$BUILD_DIR/tools/gwalign/gwalign"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
# Ninja rebuilds only what changed, so this is quick when the binary is up to date. The Python
# package (gwalign_python: the extension gwalign._core and the pure-Python files, for the Python 3
# CMake found, Debian's /usr/bin/python3) is built too when it is configured, which it is when
# python3-dev and pybind11-dev are present (deps.sh installs them): README.md's Python lines,
# PYTHONPATH=build/python /usr/bin/python3 ..., then work right after this script.
targets=(gwalign_cli)
if grep -q '^build gwalign_python:' "$BUILD_DIR/build.ninja"; then
  targets+=(gwalign_python)
fi
cmake --build "$BUILD_DIR" --target "${targets[@]}" -j "$JOBS" >/dev/null

# The bundled inputs (committed; regenerated here only if missing), made by our own generator
# with a fixed seed, as data/README.md records.
[ -f data/spiral_400.h5 ] || "$GWALIGN" generate spiral --n 400 --seed 0 -o data/spiral_400.h5
[ -f data/swissroll_500.h5 ] || "$GWALIGN" generate swissroll --n 500 --seed 0 -o data/swissroll_500.h5

OUT_DIR="${OUT_DIR:-$(mktemp -d)}"
mkdir -p "$OUT_DIR"
echo "== gwalign align: spiral (400 points, 2-D) -> swiss roll (500 points, 3-D)"
# The benchmark's settings (bench/README.md, spiral): 5-NN graphs (the spiral's arms are closer
# than 30 neighbours), epsilon 0.005, 80 anchor pairs; everything else is gw::Options' default.
"$GWALIGN" align data/spiral_400.h5 data/swissroll_500.h5 --knn 5 --eps 0.005 --M 80 \
  -o "$OUT_DIR/spiral_to_swissroll.h5" --report "$OUT_DIR/spiral_to_swissroll.json"
echo
echo "plan, matching and report: $OUT_DIR/spiral_to_swissroll.h5 (inspect: $GWALIGN info $OUT_DIR/spiral_to_swissroll.h5)"
echo "full JSON report:          $OUT_DIR/spiral_to_swissroll.json"
if [ ${#targets[@]} -gt 1 ]; then
  # The interpreter the extension was built for (written by CMake into the package).
  info="$BUILD_DIR/python/gwalign/_build_info.py"
  python="$(sed -n 's/^python_executable = "\(.*\)"$/\1/p' "$info")"
  echo "Python package (README.md, Python): PYTHONPATH=$BUILD_DIR/python $python -c \"import gwalign\""
fi
