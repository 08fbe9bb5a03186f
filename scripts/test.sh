#!/usr/bin/env bash
# The whole test suite in one command, on a fresh Debian 12 machine:
#   installs missing apt packages; runs the CPU tests under AddressSanitizer + UBSan and the
#   threading tests under ThreadSanitizer (scripts/sanitize.sh), each fuzz harness for a short
#   fixed time (scripts/fuzz.sh); then configures (Release, CUDA when nvcc exists), builds and runs
#   the full ctest, whose summary is the last thing printed. A failed sanitizer or fuzz stage is
#   named after that summary and makes the script fail.
# Environment: BUILD_DIR (default build; the other stages use build-asan, build-tsan, build-fuzz),
# JOBS (default: number of cores), CTEST_ARGS (extra arguments of the main ctest, e.g. "-L cpu"),
# GWALIGN_SANITIZE (default 1; 0 skips the sanitizer stages), GWALIGN_FUZZ_SECONDS (seconds per
# fuzz harness, default 30; 0 skips fuzzing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/deps.sh
gwalign_install_deps

BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"
export JOBS
failed_stages=()
if [ "${GWALIGN_SANITIZE:-1}" != 0 ]; then
  ./scripts/sanitize.sh asan || failed_stages+=("asan (scripts/sanitize.sh asan)")
  ./scripts/sanitize.sh tsan || failed_stages+=("tsan (scripts/sanitize.sh tsan)")
fi
FUZZ_SECONDS="${GWALIGN_FUZZ_SECONDS:-30}"
if [ "$FUZZ_SECONDS" != 0 ]; then
  echo
  echo "gwalign: fuzzing each harness for $FUZZ_SECONDS s (scripts/fuzz.sh --all, build-fuzz)"
  mkdir -p "${FUZZ_BUILD_DIR:-build-fuzz}"
  fuzz_log="${FUZZ_BUILD_DIR:-build-fuzz}/fuzz-all.log"
  if ! ./scripts/fuzz.sh --all "$FUZZ_SECONDS" 2>&1 | tee "$fuzz_log"; then
    # The final lines are all a CI summary shows: name the crashing harnesses and frames there.
    crashes=$(grep -E '^fuzz [a-z_0-9]+: CRASH:|^  first frame:' "$fuzz_log" | head -n 6 | tr -s ' ' || true)
    failed_stages+=("fuzz (scripts/fuzz.sh --all): ${crashes:-see $fuzz_log}")
  fi
fi

echo
echo "gwalign: main build ($BUILD_DIR)"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$JOBS"
status=0
# shellcheck disable=SC2086
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" ${CTEST_ARGS:-} || status=$?
if [ ${#failed_stages[@]} -gt 0 ]; then
  printf 'gwalign: FAILED stage: %s\n' "${failed_stages[@]}"
  exit 1
fi
exit "$status"
