#!/usr/bin/env bash
# The whole test suite in one command, on a fresh Debian 12 machine:
#   installs missing apt packages, configures (Release, CUDA when nvcc exists), builds, runs ctest.
# Environment: BUILD_DIR (default build), JOBS (default: number of cores), CTEST_ARGS (extra ctest
# arguments, e.g. "-L cpu").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/deps.sh
gwalign_install_deps

BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$JOBS"
# shellcheck disable=SC2086
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" ${CTEST_ARGS:-}
