#!/usr/bin/env bash
# The CPU tests under sanitizers, each in its own build directory (what scripts/test.sh runs
# before the main suite):
#   scripts/sanitize.sh asan   GCC, -fsanitize=address,undefined -fno-sanitize-recover=all:
#                              every cpu test except the labels install (a consumer project
#                              cannot link instrumented libraries without the same flags) and
#                              interop (Python drives the CLI; POT's graph matching alone takes
#                              minutes, and the CLI paths it uses are covered by test_cli)
#   scripts/sanitize.sh tsan   clang 14, -fsanitize=thread with LLVM's OpenMP runtime (libomp)
#                              and its ThreadSanitizer tool Archer (libarcher), which tells TSan
#                              about OpenMP's barriers and tasks (GCC's libgomp is not
#                              instrumented, so a GCC TSan build reports its every barrier as a
#                              race): the tests labelled threading (concurrent solve() calls,
#                              the concurrent Dijkstra cache, the OpenMP kernels of sinkhorn,
#                              graph, distances and cellgraph)
# Each stage prints a header naming its build, then ctest's summary; a sanitizer report fails the
# test that triggered it (halt_on_error / -fno-sanitize-recover).
# Environment: SANITIZE_BUILD_PREFIX (default build: build-asan, build-tsan), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PREFIX="${SANITIZE_BUILD_PREFIX:-build}"
JOBS="${JOBS:-$(nproc)}"

header() {
  echo
  echo "======================================================================================"
  echo "gwalign: $1"
  echo "======================================================================================"
}

run_asan() {
  local dir="$PREFIX-asan"
  header "AddressSanitizer + UndefinedBehaviorSanitizer build ($dir): ctest -L cpu -LE 'install|interop'"
  local flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGWALIGN_ENABLE_CUDA=OFF \
    -DGWALIGN_BUILD_BENCH=OFF "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_C_FLAGS=$flags" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
  cmake --build "$dir" -j "$JOBS"
  # detect_leaks: LeakSanitizer too. The suppressions cover leaks inside third-party libraries
  # only (see the file).
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1" \
  LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizer-suppressions/lsan.txt:print_suppressions=0" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --test-dir "$dir" --output-on-failure -j "$JOBS" -L cpu -LE 'install|interop'
}

run_tsan() {
  local dir="$PREFIX-tsan"
  header "ThreadSanitizer build ($dir, clang 14 + libomp + Archer): ctest -L threading"
  local flags="-fsanitize=thread -fno-omit-frame-pointer"
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGWALIGN_ENABLE_CUDA=OFF \
    -DGWALIGN_BUILD_BENCH=OFF \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_C_FLAGS=$flags" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread" >/dev/null
  cmake --build "$dir" -j "$JOBS" \
    --target test_solver_threads test_sinkhorn test_distances test_graph test_cellgraph
  # Archer is loaded by libomp as an OMPT tool; ignore_noninstrumented_modules keeps TSan quiet
  # about the uninstrumented system libraries (HDF5, libstdc++ internals).
  OMP_TOOL_LIBRARIES=/usr/lib/llvm-14/lib/libarcher.so ARCHER_OPTIONS="verbose=0" \
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$PWD/scripts/sanitizer-suppressions/tsan.txt" \
    ctest --test-dir "$dir" --output-on-failure -j "$JOBS" -L threading
}

case "${1:-}" in
  asan) run_asan ;;
  tsan) run_tsan ;;
  *)
    echo "usage: scripts/sanitize.sh asan | tsan" >&2
    exit 64
    ;;
esac
