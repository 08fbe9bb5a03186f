#!/usr/bin/env bash
# libFuzzer harnesses of tests/fuzz/ (see tests/fuzz/README.md).
#   scripts/fuzz.sh --list              the target names, one per line
#   scripts/fuzz.sh TARGET SECONDS      build fuzz_TARGET if needed, fuzz it for SECONDS
#   scripts/fuzz.sh --all SECONDS       every target in turn, SECONDS each (what CI runs)
# The harness starts from the committed seed corpus (tests/fuzz/corpus/TARGET/, never written to);
# new inputs go to $FUZZ_BUILD_DIR/corpus/TARGET/ and a crashing input to
# $FUZZ_BUILD_DIR/artifacts/TARGET/. Exit status: 0 when no crash, 1 otherwise (the crash report,
# the reproducer's path and how to turn it into a regression test are printed).
# Environment: FUZZ_BUILD_DIR (default build-fuzz), JOBS (build parallelism, default nproc),
# FUZZ_ARGS (extra libFuzzer flags, e.g. "-max_len=4096").
# Toolchain: clang 14 with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer over the
# whole library (Debian packages clang-14, libclang-rt-14-dev, libomp-14-dev).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TARGETS=(h5ad graph options cli)
BUILD_DIR="${FUZZ_BUILD_DIR:-build-fuzz}"
JOBS="${JOBS:-$(nproc)}"

usage() {
  echo "usage: scripts/fuzz.sh TARGET SECONDS | --all SECONDS | --list" >&2
  exit 64
}

is_target() {
  local t
  for t in "${TARGETS[@]}"; do [ "$t" = "$1" ] && return 0; done
  return 1
}

configure() {
  if [ -f "$BUILD_DIR/build.ninja" ]; then return 0; fi
  local sanitize="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all"
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    -DGWALIGN_ENABLE_CUDA=OFF -DGWALIGN_BUILD_TESTS=OFF -DGWALIGN_BUILD_BENCH=OFF \
    -DGWALIGN_BUILD_TOOLS=OFF -DGWALIGN_BUILD_FUZZERS=ON \
    "-DCMAKE_CXX_FLAGS=$sanitize -fno-omit-frame-pointer -gline-tables-only" \
    "-DCMAKE_C_FLAGS=$sanitize" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
}

# Runs one target; prints "fuzz TARGET: N executions in S s, C crashes".
run_target() {
  local target="$1" seconds="$2"
  configure
  cmake --build "$BUILD_DIR" -j "$JOBS" --target "fuzz_$target" >/dev/null
  local work="$BUILD_DIR/corpus/$target" artifacts="$BUILD_DIR/artifacts/$target"
  local log="$BUILD_DIR/fuzz_$target.log"
  mkdir -p "$work" "$artifacts"
  local status=0
  # shellcheck disable=SC2086
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
  OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" \
    "$BUILD_DIR/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=60 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" ${FUZZ_ARGS:-} "$work" "tests/fuzz/corpus/$target" \
      >"$log" 2>&1 || status=$?
  local executions
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log"
    echo "fuzz $target: CRASH after ${executions:-?} executions (exit $status); reproducer in $artifacts/"
    echo "  replay: $BUILD_DIR/tests/fuzz/fuzz_$target $artifacts/<file>; fix the library, then commit the"
    echo "  input as tests/fuzz/regressions/$target/<bug-name> (replayed by ctest)"
    return 1
  fi
  echo "fuzz $target: ${executions:-?} executions in $seconds s, 0 crashes"
}

[ $# -ge 1 ] || usage
case "$1" in
  --list)
    printf '%s\n' "${TARGETS[@]}"
    ;;
  --all)
    [ $# -eq 2 ] || usage
    failed=0
    for t in "${TARGETS[@]}"; do run_target "$t" "$2" || failed=1; done
    exit "$failed"
    ;;
  *)
    [ $# -eq 2 ] || usage
    is_target "$1" || { echo "fuzz.sh: unknown target '$1' (scripts/fuzz.sh --list)" >&2; exit 64; }
    [[ "$2" =~ ^[0-9]+$ ]] || { echo "fuzz.sh: SECONDS must be a whole number, got '$2'" >&2; exit 64; }
    run_target "$1" "$2"
    ;;
esac
