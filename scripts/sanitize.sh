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
#                              race): the threading tests (concurrent solve() calls, the
#                              concurrent Dijkstra cache, the OpenMP kernels of sinkhorn, graph,
#                              distances and cellgraph; TSAN_TESTS below)
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
  # GWALIGN_MPI=OFF: OpenMPI keeps allocations alive past MPI_Finalize, which LeakSanitizer can
  # report from the ranks of the mpirun tests (those tests skip in a build without MPI).
  # -g1 (line tables and function names, no variable info) instead of RelWithDebInfo's -g: the
  # sanitizer's stack traces still name file:line, and the build is about a third faster (59 s ->
  # 39 s for the exact solver), which is most of this stage's time.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGWALIGN_ENABLE_CUDA=OFF \
    -DGWALIGN_BUILD_BENCH=OFF -DGWALIGN_PYTHON=OFF -DGWALIGN_MPI=OFF \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
    "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_C_FLAGS=$flags" \
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

# The test binaries of the threading stage. They are run directly rather than through a ctest
# label: gwalign_add_test passes one label through gtest discovery.
TSAN_TESTS=(solver/test_solver_threads sinkhorn/test_sinkhorn distances/test_distances
  graph/test_graph cellgraph/test_cellgraph pairwise/test_pairwise)
# Left out under clang: FastExp.RowKernelMatchesStdExp2 checks the float exp2 kernel to 4 ulps,
# which holds for GCC's code but not for clang 14's (26-44 ulps measured, same source): a numerics
# question for the kernel (sinkhorn/fast_exp_impl.h), not a threading one; the GCC builds run it.
TSAN_FILTER="-FastExp.RowKernelMatchesStdExp2"

run_tsan() {
  local dir="$PREFIX-tsan"
  header "ThreadSanitizer build ($dir, clang 14 + libomp + Archer): ${TSAN_TESTS[*]}"
  local flags="-fsanitize=thread -fno-omit-frame-pointer"
  # -gline-tables-only: file:line in the race reports (inlined frames included) at a fraction of
  # full debug info's compile time.
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGWALIGN_ENABLE_CUDA=OFF \
    -DGWALIGN_BUILD_BENCH=OFF -DGWALIGN_PYTHON=OFF \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
    "-DCMAKE_CXX_FLAGS=$flags" "-DCMAKE_C_FLAGS=$flags" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread" >/dev/null
  local targets=() test failed=()
  for test in "${TSAN_TESTS[@]}"; do targets+=("$(basename "$test")"); done
  cmake --build "$dir" -j "$JOBS" --target "${targets[@]}"
  # Archer is loaded by libomp as an OMPT tool; ignore_noninstrumented_modules keeps TSan quiet
  # about the uninstrumented system libraries (HDF5, libstdc++ internals). Two OpenMP threads, as
  # on the CI machine; OMP_WAIT_POLICY=passive as in every ctest run.
  for test in "${TSAN_TESTS[@]}"; do
    echo "--- $test (ThreadSanitizer)"
    if ! OMP_TOOL_LIBRARIES=/usr/lib/llvm-14/lib/libarcher.so ARCHER_OPTIONS="verbose=0" \
      OMP_WAIT_POLICY=passive OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" \
      TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:suppressions=$PWD/scripts/sanitizer-suppressions/tsan.txt" \
      "$dir/tests/$test" --gtest_brief=1 --gtest_filter="$TSAN_FILTER"; then
      failed+=("$test")
    fi
  done
  if [ ${#failed[@]} -gt 0 ]; then
    echo "gwalign: ThreadSanitizer stage FAILED: ${failed[*]}"
    return 1
  fi
  echo "gwalign: ThreadSanitizer stage: ${#TSAN_TESTS[@]} test binaries passed, no data race reported"
}

case "${1:-}" in
  asan) run_asan ;;
  tsan) run_tsan ;;
  *)
    echo "usage: scripts/sanitize.sh asan | tsan" >&2
    exit 64
    ;;
esac
