#!/usr/bin/env bash
# libFuzzer harnesses of tests/fuzz/ (see tests/fuzz/README.md).
#   scripts/fuzz.sh --list              the target names, one per line
#   scripts/fuzz.sh TARGET SECONDS      build fuzz_TARGET if needed, fuzz it for SECONDS
#   scripts/fuzz.sh --all SECONDS       every target in turn, SECONDS each (what CI runs)
# The harness starts from the committed seed corpus (tests/fuzz/corpus/TARGET/, never written to;
# "solve" shares the options seeds);
# new inputs go to $FUZZ_BUILD_DIR/corpus/TARGET/ and a crashing input to
# $FUZZ_BUILD_DIR/artifacts/TARGET/. Exit status: 0 when no crash, 1 otherwise (the crash report,
# the reproducer's path and how to turn it into a regression test are printed).
# Environment: FUZZ_BUILD_DIR (default build-fuzz), JOBS (build parallelism, default nproc),
# FUZZ_ARGS (extra libFuzzer flags, e.g. "-max_len=4096"), FUZZ_FORKS (h5ad: fork-mode workers,
# default nproc).
# Toolchain: clang 14 with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer over the
# whole library (Debian packages clang-14, libclang-rt-14-dev, libomp-14-dev).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TARGETS=(h5ad graph options solve linear_ot cli)
BUILD_DIR="${FUZZ_BUILD_DIR:-build-fuzz}"
JOBS="${JOBS:-$(nproc)}"

usage() {
  echo "usage: scripts/fuzz.sh TARGET SECONDS | --all SECONDS | --list" >&2
  exit 64
}

# The committed seed folder of a target: "solve" reads the options harness's input format.
seed_corpus() {
  if [ "$1" = solve ]; then echo options; else echo "$1"; fi
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
    -DGWALIGN_BUILD_TOOLS=OFF -DGWALIGN_BUILD_FUZZERS=ON -DGWALIGN_PYTHON=OFF \
    "-DCMAKE_CXX_FLAGS=$sanitize -fno-omit-frame-pointer -gline-tables-only" \
    "-DCMAKE_C_FLAGS=$sanitize" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
}

# The first stack frame of a crash report that is not libFuzzer's, the sanitizer's, libc's (its
# memcpy family reports a source path under sysdeps/, not libc.so, and so do abort() and the stack
# protector's __stack_chk_fail, which end an overflow detected inside HDF5; ASan's interceptors of the
# str* functions, such as strdup reading an unterminated name, are frames of the fuzz binary) or
# the allocator's (for an out-of-memory report: the caller that asked for the memory; for a bad
# free: the code that freed).
first_frame() {
  grep -E '^ +#[0-9]+ ' \
    | grep -vE 'fuzzer::|gw_fuzz_cpu_watchdog|__sanitizer|__interceptor|__asan|__ubsan|libc\.so|sysdeps/|_start|__kmp|\(<unknown module>\)| in (main |malloc|calloc|realloc|free |operator (new|delete)|__mem(cpy|move|set)[a-z0-9_]*|str[a-z]* \(|abort |raise |__pthread_kill_implementation |__libc_message |__fortify_fail |__stack_chk_fail )' \
    | head -n 1
}

# Runs one target; prints "fuzz TARGET: N executions in S s, C crashes".
run_target() {
  local target="$1" seconds="$2"
  configure
  cmake --build "$BUILD_DIR" -j "$JOBS" --target "fuzz_$target" >/dev/null
  local binary="$BUILD_DIR/tests/fuzz/fuzz_$target"
  local work="$BUILD_DIR/corpus/$target" artifacts="$BUILD_DIR/artifacts/$target"
  local log="$BUILD_DIR/fuzz_$target.log"
  # The triage's replays below write their own reports (libFuzzer's and the CPU-time watchdog's
  # artifacts) here, not into the current directory.
  local replays="$BUILD_DIR/artifacts/$target-replays"
  mkdir -p "$work" "$artifacts" "$replays"
  rm -f "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*
  rm -f "$replays"/*
  local asan_options="detect_leaks=1" mode=() unit_timeout=20 cpu_limit_ms=""
  if [ "$target" = h5ad ]; then
    # Debian's HDF5 1.10 has its own bugs on corrupt files (an over-read in H5HG_read, a hang in
    # the global heap; tests/fuzz/README.md, "HDF5's own bugs"), which gwalign cannot fix. This
    # harness therefore runs in fork mode, past crashes and timeouts, and every one is triaged
    # below: a report whose first frame is inside libhdf5 is HDF5's and is listed; any other
    # fails the run. replace_intrin=0: ASan's memcpy interceptor would report HDF5's internal
    # over-read from inside the uninstrumented library (gwalign's own loads and stores are still
    # checked).
    # allocator_may_return_null + max_allocation_size_mb: HDF5's huge requests on a corrupt length
    # (plain malloc) fail as HDF5 errors instead of killing the child, and below the limit HDF5
    # zero-fills what it asked for, so the limit is low: 64 MiB, four times the harness's read
    # budget (gw::io::set_max_read_bytes, 16 MiB), which every gwalign read is checked against
    # before it allocates; gwalign's own allocations go through operator new, which still aborts
    # with a report above the limit.
    asan_options="$asan_options:replace_intrin=0:allocator_may_return_null=1:max_allocation_size_mb=64"
    # A 16 MiB quarantine (ASan's default is 256 MiB): an input opens a file, HDF5 allocates and
    # frees a few MiB, and with the default every allocation of the next thousand inputs landed on
    # pages the allocator had not touched yet or had returned to the kernel -- page faults were a
    # fifth of a typical input's time (a 4 KiB fault costs ~12 us on the VMs we fuzz on). 16 MiB
    # still holds every block the current input and the few before it freed, so a use after free
    # within an input is reported as before.
    asan_options="$asan_options:quarantine_size_mb=16"
    # One child per core (FUZZ_FORKS overrides): every restart after one of HDF5's bugs costs a
    # process start, so a second worker keeps the core busy meanwhile.
    mode=(-fork="${FUZZ_FORKS:-$(nproc)}" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=0)
    # No per-input leak check: HDF5 keeps freed blocks on its own free lists across inputs, so
    # nearly every input allocates more than it frees, and libFuzzer then runs it a second time
    # and scans the whole heap for leaks -- half of this harness's time, finding only HDF5's
    # caches. Leaks are still checked: LeakSanitizer runs when each fork-mode child exits (same
    # suppressions), and the sanitizer build's test_fuzz_h5ad replays every corpus input under it.
    mode+=(-detect_leaks=0)
    unit_timeout=1  # a normal input takes milliseconds; HDF5's hangs would eat the budget
    # Finer than the 1-second timeout: the harness's CPU-time watchdog (tests/fuzz/cpu_watchdog.h)
    # stops an input after this much of its thread's CPU time and reports it as libFuzzer reports
    # a timeout. Corpus inputs take 1-50 ms here under ASan; HDF5's global-heap loops spin.
    cpu_limit_ms=300
  fi
  local status=0
  # shellcheck disable=SC2086
  ASAN_OPTIONS="${ASAN_OPTIONS:-$asan_options}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
  GW_FUZZ_CPU_LIMIT_MS="$cpu_limit_ms" \
  LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizer-suppressions/lsan.txt:print_suppressions=0" \
  OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" \
    "$binary" -max_total_time="$seconds" -timeout="$unit_timeout" -print_final_stats=1 "${mode[@]}" \
      -artifact_prefix="$artifacts/" ${FUZZ_ARGS:-} "$work" "tests/fuzz/corpus/$(seed_corpus "$target")" \
      >"$log" 2>&1 || status=$?
  local executions
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ -z "$executions" ]; then  # fork mode: the last status line "#N: cov: ..."
    executions=$(sed -n 's/^#\([0-9][0-9]*\): cov:.*/\1/p' "$log" | tail -n 1)
  fi
  local ours=0 theirs=0 alone=0 slow=0 file report frame recursion replay_status
  for file in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
    [ -e "$file" ] || continue
    # A timeout is replayed with the fuzzing run's own per-input limit, so that a slow input (not
    # only an endless one) stops where it spends its time and that frame says whose it is.
    local replay_timeout=20 replay_flags=()
    [[ "$(basename "$file")" == timeout-* ]] && replay_timeout="$unit_timeout"
    # An out-of-memory report of the resident-set limit shows only libFuzzer's own frames. One
    # allocation can be most of that limit (HDF5's variable-length conversion trusting a corrupt
    # length asks for ~2 GB), so the replay stops at any single allocation over half of it, and
    # the report names the caller that asked.
    [[ "$(basename "$file")" == oom-* ]] && replay_flags=(-malloc_limit_mb=1024)
    # A timeout replays under the same CPU-time watchdog as the run, so that it stops where the
    # run stopped; a crash replays without it.
    local replay_cpu_limit=""
    [[ "$(basename "$file")" == timeout-* ]] && replay_cpu_limit="$cpu_limit_ms"
    replay_status=0
    report=$(ASAN_OPTIONS="$asan_options" OMP_NUM_THREADS=1 GW_FUZZ_CPU_LIMIT_MS="$replay_cpu_limit" \
      timeout 600 "$binary" -artifact_prefix="$replays/" \
      -timeout="$replay_timeout" "${replay_flags[@]}" "$file" 2>&1) || replay_status=$?
    frame=$(first_frame <<<"$report" || true)
    # In fork mode a child runs many inputs in one process, and the artifact is the input it was
    # running when it died; an out-of-memory or crash that needed the state left by earlier inputs
    # (HDF5's leaks and caches accumulate towards the 2 GB limit) runs cleanly alone. Such inputs
    # are listed, not counted as gwalign's: there is nothing to reproduce.
    if [ "${#mode[@]}" -gt 0 ] && [ "$replay_status" -eq 0 ] && [ -z "$frame" ]; then
      alone=$((alone + 1))
      echo "fuzz $target: did not reproduce alone (fork-mode state): $(basename "$file")"
      continue
    fi
    # A hang is HDF5's when HDF5 was running and gwalign's frames below it do not repeat (a
    # runaway recursion in gwalign, such as a walk around a link cycle, repeats its frames). Only
    # hangs and stack overflows are judged so, and only on the first stack of the report: a
    # use-after-free or double-free report has three stacks (access, free, allocation) that name
    # the same harness line whoever freed the memory.
    recursion=""
    if [[ "$(basename "$file")" == timeout-* ]] || grep -q 'stack-overflow' <<<"$report"; then
      recursion=$(awk '/^ +#[0-9]+ /{seen=1; print; next} seen{exit}' <<<"$report" \
        | grep -oE '/(io|core|graph|tests)/[a-z_0-9]+\.(cpp|h):[0-9]+' | sort | uniq -c \
        | awk '$1 > 2' | head -n 1 || true)
    fi
    # A timeout stopped in gwalign's code with the short per-input limit may be an input that is
    # only slow on a loaded machine: it counts as a hang only if it also outlives a 60 s replay.
    if [[ "$(basename "$file")" == timeout-* ]] && [[ "$frame" != *libhdf5* ]] && [ -z "$recursion" ] \
      && ASAN_OPTIONS="$asan_options" OMP_NUM_THREADS=1 GW_FUZZ_CPU_LIMIT_MS="" \
        timeout 600 "$binary" -artifact_prefix="$replays/" -timeout=60 "$file" \
        >/dev/null 2>&1; then
      slow=$((slow + 1))
      echo "fuzz $target: slow, not a hang (finishes alone within 60 s): $(basename "$file"): ${frame## }"
      continue
    fi
    # HDF5 runs with ASan's memcpy checks off (replace_intrin=0, above), so its over-read in
    # H5HG_read can corrupt the heap silently and the report then comes later, from gwalign's
    # code (a bad free of a corrupted pointer). A crash in gwalign's frames is therefore replayed
    # once more with those checks on: if the first error is then inside libhdf5, HDF5 went wrong
    # first and the report is listed as HDF5's, with that frame.
    local first_error=""
    if [ "$target" = h5ad ] && [[ "$frame" != *libhdf5* ]] && [ -z "$recursion" ] \
      && [[ "$(basename "$file")" == crash-* ]]; then
      first_error=$(ASAN_OPTIONS="${asan_options/replace_intrin=0/replace_intrin=1}" \
        OMP_NUM_THREADS=1 timeout 600 "$binary" -artifact_prefix="$replays/" -timeout=20 "$file" \
        2>&1 | first_frame || true)
      [[ "$first_error" == *libhdf5* ]] && frame="$first_error (memcpy checks on; HDF5 corrupted memory first)"
    fi
    if [ "$target" = h5ad ] && [[ "$frame" == *libhdf5* ]] && [ -z "$recursion" ]; then
      theirs=$((theirs + 1))
      echo "fuzz $target: HDF5's own bug (not gwalign's): $(basename "$file"): ${frame## }"
    else
      ours=$((ours + 1))
      echo "fuzz $target: CRASH: $file"
      echo "  first frame: ${frame## }"
    fi
  done
  if [ "$ours" -gt 0 ] || { [ "$status" -ne 0 ] && [ "${#mode[@]}" -eq 0 ]; }; then
    tail -n 60 "$log"
    echo "fuzz $target: CRASH after ${executions:-?} executions (exit $status); reproducer in $artifacts/"
    echo "  replay: $binary FILE; fix the library, then commit the input as"
    echo "  tests/fuzz/regressions/$target/<bug-name> (replayed by ctest)"
    return 1
  fi
  echo "fuzz $target: ${executions:-?} executions in $seconds s, 0 crashes" \
    "$([ "$theirs" -gt 0 ] && echo "(and $theirs in HDF5 itself, listed above)")" \
    "$([ "$alone" -gt 0 ] && echo "($alone that did not reproduce alone, listed above)")" \
    "$([ "$slow" -gt 0 ] && echo "($slow slow inputs that finish, listed above)")"
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
