#!/usr/bin/env bash
# GPU check: the GPU test suites and the GPU benchmark rows in one command, within one time budget.
#
# Three modes:
#
#   scripts/gpu-check.sh --prepare       on the build machine (nvcc needed, no GPU needed)
#       Configures BUILD_DIR (default <repo>/build-gpu: Release, CUDA sm_$CUDA_ARCH, the default
#       portable CPU build, no Python module), builds the CLI and every GPU test binary
#       (tests/*/test_*_cuda), and packs them, stripped, with the shared libraries they load
#       (all that ldd lists except the C library's own and the CUDA driver) into
#       BUILD_DIR/carry (about 54 MiB), then gzips that into BUILD_DIR/pack/carry.tar.gz (about
#       21 MiB), which is what travels: the device tool carries at most 64 MiB, working tree
#       (about 4 MiB) included. git ignores both (/build*/).
#
#   scripts/gpu-check.sh --carried       on the device machine, from the repository root
#       Unpacks build-gpu/pack/carry.tar.gz (when carried) into build-gpu/carry, runs the GPU
#       test binaries there (each with --gtest_brief=1), then the rows
#       of ROWS below in order, each under `timeout` for what is left of GPU_BUDGET; rows that
#       no longer fit are reported as not run. Everything goes to $OUT (the device tool's output
#       folder; else build-gpu/carry/out): gpu-check.log (the whole output), tests.log,
#       rows.jsonl (one "label<TAB>json" line per row) and table.txt. The table is printed last.
#
#   scripts/gpu-check.sh                 on a GPU machine that has the build dependencies
#       Builds BUILD_DIR itself (the packages of scripts/deps.sh first), then the same tests
#       (ctest -L gpu) and rows. GPU_SKIP_BUILD=1 uses the binaries already in BUILD_DIR.
#
# The device tool (one call; the machine holds none of this afterwards):
#   here:      scripts/gpu-check.sh --prepare            (then commit nothing: build-gpu is ignored)
#   run:       carry     ["build-gpu/pack"]
#              command   GPU_BUDGET=470 scripts/gpu-check.sh --carried
#              timeout_s 540
#   The budget covers tests and rows (8 minutes at most, with the machine's start outside it);
#   timeout_s leaves room for the copies. Fetch $OUT's files from the reply.
#
# Environment: BUILD_DIR, JOBS (default nproc), CUDA_ARCH (default 90), GPU_BUDGET (seconds for
# tests + rows, default 480), GPU_TEST_TIMEOUT (seconds per test binary, default 240),
# GPU_BENCH_TIMEOUT (seconds per row, default 300), GPU_ROWS (a grep -E pattern on row labels,
# default all), GPU_SKIP_TESTS=1 (rows only), GPU_CTEST_ARGS (extra ctest arguments, build mode),
# GPU_DEADLINE (older name of GPU_BUDGET).
#
# Exit status: non-zero if the build, a test binary or a row failed (rows cut by the budget are not
# failures; the table says "not run" or "timed out").
#
# Adding a row: append "label|gwalign arguments" to ROWS, most important first. The command must
# print one JSON object (--json) as its last line; the table shows seconds_per_iter (or seconds),
# floor_seconds_per_iter, ratio_to_floor, speedup_vs_cpu and the *_equal checks when present.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-gpu}"
JOBS="${JOBS:-$(nproc)}"
CUDA_ARCH="${CUDA_ARCH:-90}"
BUDGET="${GPU_BUDGET:-${GPU_DEADLINE:-480}}"
TEST_TIMEOUT="${GPU_TEST_TIMEOUT:-240}"
BENCH_TIMEOUT="${GPU_BENCH_TIMEOUT:-300}"
ROW_FILTER="${GPU_ROWS:-${GPU_BENCH_FILTER:-.}}"
SKIP_TESTS="${GPU_SKIP_TESTS:-0}"
MODE="build"
case "${1:-}" in
  --prepare) MODE="prepare" ;;
  --carried) MODE="carried" ;;
  "") ;;
  -h|--help) sed -n '2,45p' "${BASH_SOURCE[0]}"; exit 0 ;;
  *) echo "gpu-check.sh: unknown argument '$1' (use --prepare, --carried or nothing)" >&2; exit 64 ;;
esac
CARRY="$BUILD/carry"
PACK="$BUILD/pack"
GPU_TESTS=(test_graph_cuda test_distances_cuda test_cellgraph_cuda test_sampling_cuda
           test_sinkhorn_cuda test_solver_cuda)

# Most important first: the budget cuts from the end.
ROWS=(
  # Geometry on the device, each against the CPU on the same input in the same process.
  "knn cuda 1M x 2-D, k 5|bench knn --backend cuda --n 1000000 --d 2 --k 5 --reps 3 --json"
  "landmarks cuda spiral 1M (knn 5, 50)|bench landmarks --backend cuda --points spiral --n 1000000 --reps 2 --json"
  "landmarks cuda swissroll 1M (knn 5, 50)|bench landmarks --backend cuda --points swissroll --n 1000000 --reps 2 --json"
  "apsp cuda 20000 x 3-D, k 10|bench apsp --backend cuda --n 20000 --d 3 --k 10 --reps 3 --json"
  "knn cuda 50000 x 30-D, k 30|bench knn --backend cuda --n 50000 --d 30 --k 30 --reps 3 --json"
  # The issue's solves: the whole gw::solve from points (table: total seconds).
  "solve cuda 4000x5000 dense landmark|bench spiral --backend cuda --n 4000 --k 5000 --mode landmark --support dense --reps 3 --json"
  "solve cuda 45000x45000 auto|bench spiral --backend cuda --n 45000 --k 45000 --support auto --reps 1 --json"
  "solve cuda 1Mx1M sparse|bench spiral --backend cuda --n 1000000 --k 1000000 --support sparse --reps 1 --json"
  "solve cpu 1Mx1M sparse|bench spiral --backend cpu --n 1000000 --k 1000000 --support sparse --reps 1 --json"
  # Earlier rows.
  "spiral cuda 10000x12000|bench spiral --backend cuda --n 10000 --k 12000 --mode landmark --reps 1 --json"
  "spiral cuda 20000x25000|bench spiral --backend cuda --n 20000 --k 25000 --mode landmark --reps 1 --json"
  "sinkhorn f32 4000x5000|bench sinkhorn --backend cuda --n 4000 --k 5000 --iters 100 --precision f32 --reps 5 --json"
  "sinkhorn f64 4000x5000|bench sinkhorn --backend cuda --n 4000 --k 5000 --iters 100 --precision f64 --reps 5 --json"
  "sinkhorn f32 20000x25000|bench sinkhorn --backend cuda --n 20000 --k 25000 --iters 100 --precision f32 --reps 3 --json"
  "sinkhorn f32 45000x45000|bench sinkhorn --backend cuda --n 45000 --k 45000 --iters 50 --precision f32 --reps 3 --json"
  "sinkhorn cpu f32 4000x5000|bench sinkhorn --backend cpu --n 4000 --k 5000 --iters 50 --precision f32 --reps 3 --json"
  "masks B=64 triples (removal; ratio = dense)|bench masks --backend cuda --batch 64 --reps 20 --json"
  "masks B=256 triples (removal; ratio = dense)|bench masks --backend cuda --batch 256 --reps 20 --json"
  "diffusion 64x512 C=64|bench diffusion --backend cuda --batch 64 --seq 512 --channels 64 --reps 5 --json"
  "diffusion 256x1024 C=512|bench diffusion --backend cuda --batch 256 --seq 1024 --channels 512 --reps 3 --json"
  "aggregate 1024x4096x128 sort|bench aggregate --backend cuda --batch 1024 --seq 4096 --hidden 128 --method sort --reps 5 --json"
  "aggregate 1024x4096x128 atomics|bench aggregate --backend cuda --batch 1024 --seq 4096 --hidden 128 --method atomics --reps 5 --json"
)

log() { printf '\n=== %s\n' "$*"; }

# ---- --prepare: build here, pack build-gpu/carry ------------------------------------------------

prepare() {
  log "configure $BUILD (CUDA sm_$CUDA_ARCH, Release)"
  local launchers=() generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  if command -v ccache >/dev/null 2>&1; then
    launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
               -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$ROOT" -B "$BUILD" "${generator[@]}" "${launchers[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DGWALIGN_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" -DGWALIGN_PYTHON=OFF \
    || { echo "configure failed"; return 1; }
  log "build (-j$JOBS): gwalign_cli ${GPU_TESTS[*]}"
  cmake --build "$BUILD" -j"$JOBS" --target gwalign_cli "${GPU_TESTS[@]}" \
    || { echo "build failed"; return 1; }

  log "pack $CARRY"
  rm -rf "$CARRY"
  mkdir -p "$CARRY/bin" "$CARRY/tests" "$CARRY/lib"
  cp "$BUILD/tools/gwalign/gwalign" "$CARRY/bin/"
  local t path
  for t in "${GPU_TESTS[@]}"; do
    path="$(find "$BUILD/tests" -name "$t" -type f -perm -u+x | head -n 1)"
    [[ -n "$path" ]] || { echo "missing test binary $t"; return 1; }
    cp "$path" "$CARRY/tests/"
  done
  strip --strip-unneeded "$CARRY"/bin/* "$CARRY"/tests/*
  # Shared libraries: everything but the C library's own (the device's newer glibc runs programs
  # built against this one) and the CUDA driver (the device's).
  ldd "$CARRY"/bin/* "$CARRY"/tests/* | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux[^/]*|libcuda)\.so' |
    while read -r lib; do cp -L "$lib" "$CARRY/lib/"; done
  strip --strip-unneeded "$CARRY"/lib/*.so* 2>/dev/null || true
  {
    echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), CUDA sm_$CUDA_ARCH"
    /usr/local/cuda/bin/nvcc --version 2>/dev/null | tail -n 1 || true
  } >"$CARRY/MANIFEST"
  cp "${BASH_SOURCE[0]}" "$CARRY/gpu-check.sh"
  du -sh "$CARRY"/bin "$CARRY"/tests "$CARRY"/lib
  echo "$CARRY: $(du -sh "$CARRY" | cut -f1) ($(find "$CARRY/lib" -type f | wc -l) libraries)"
  rm -rf "$PACK"
  mkdir -p "$PACK"
  tar -C "$BUILD" -czf "$PACK/carry.tar.gz" carry || { echo "packing failed"; return 1; }
  local kib
  kib="$(du -sk "$PACK" | cut -f1)"
  echo "$PACK/carry.tar.gz: $((kib / 1024)) MiB"
  if ((kib > 48 * 1024)); then
    echo "too large for the device tool (64 MiB with the working tree)"
    return 1
  fi
  echo "device tool: carry [\"${PACK#"$ROOT"/}\"], command \"GPU_BUDGET=470 scripts/gpu-check.sh --carried\", timeout_s 540"
}

# ---- running tests and rows under one budget ----------------------------------------------------

START=$SECONDS
remaining() { echo $((BUDGET - (SECONDS - START))); }

# run_tests <binary>...: each GPU test binary under timeout; failures set status.
run_tests() {
  local bin name left rc
  for bin in "$@"; do
    name="$(basename "$bin")"
    left="$(remaining)"
    if ((left < 15)); then
      echo "--- $name: not run (budget)" | tee -a "$TESTS_LOG"
      TEST_SUMMARY+=("$name: not run (budget)")
      continue
    fi
    ((left > TEST_TIMEOUT)) && left=$TEST_TIMEOUT
    echo "--- $name (timeout ${left}s)"
    local own="$OUT_DIR/.test-output"
    timeout "$left" "$bin" --gtest_brief=1 >"$own" 2>&1
    rc=$?
    { echo "--- $name (exit $rc)"; cat "$own"; } >>"$TESTS_LOG"
    local tail_line
    tail_line="$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$own" | tr '\n' ' ')"
    rm -f "$own"
    if ((rc == 0)); then
      TEST_SUMMARY+=("$name: ok ($tail_line)")
    elif ((rc == 124)); then
      TEST_SUMMARY+=("$name: TIMED OUT after ${left}s")
      STATUS=1
    else
      TEST_SUMMARY+=("$name: FAILED (exit $rc; see tests.log)")
      STATUS=1
    fi
    echo "${TEST_SUMMARY[-1]}"
  done
}

# run_rows <gwalign>: every row of ROWS matching GPU_ROWS, in order, within the budget.
run_rows() {
  local gwalign="$1" entry label arguments left output rc json
  for entry in "${ROWS[@]}"; do
    label="${entry%%|*}"
    arguments="${entry#*|}"
    echo "$label" | grep -Eq "$ROW_FILTER" || continue
    left="$(remaining)"
    if ((left < 10)); then
      echo "--- $label: not run (budget of ${BUDGET}s spent)"
      RESULTS+=("$label|{\"skipped\": true}")
      printf '%s\t%s\n' "$label" '{"skipped": true}' >>"$OUT_DIR/rows.jsonl"
      continue
    fi
    ((left > BENCH_TIMEOUT)) && left=$BENCH_TIMEOUT
    echo "--- $label: gwalign $arguments (timeout ${left}s)"
    # shellcheck disable=SC2086  # the argument string is split on purpose
    output="$(timeout "$left" "$gwalign" $arguments)"
    rc=$?
    json="$(printf '%s\n' "$output" | tail -n 1)"
    if ((rc == 0)) && [[ "$json" == \{* ]]; then
      echo "$json"
      RESULTS+=("$label|$json")
    elif ((rc == 124)); then
      echo "timed out after ${left}s: $label"
      RESULTS+=("$label|{\"timed_out\": true}")
    else
      printf '%s\n' "$output" | tail -n 5
      echo "row FAILED (exit $rc): $label"
      RESULTS+=("$label|{\"failed\": true}")
      STATUS=1
    fi
    printf '%s\t%s\n' "$label" "${RESULTS[-1]#*|}" >>"$OUT_DIR/rows.jsonl"
  done
}

print_table() {
  local python_bin
  python_bin="$(command -v python3 || true)"
  if [[ -z "$python_bin" ]]; then
    printf '%s\n' "${RESULTS[@]}"
    return
  fi
  printf '%s\n' "${RESULTS[@]}" | "$python_bin" -c '
import json, sys
rows = []
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line:
        continue
    label, _, text = line.partition("|")
    try:
        r = json.loads(text)
    except ValueError:
        r = {"failed": True}
    per = r.get("seconds_per_iter", r.get("seconds"))
    fmt = lambda x, scale=1e3: "-" if x is None else "%.3f" % (x * scale)
    state = ("FAILED" if r.get("failed") else "timed out" if r.get("timed_out")
             else "not run" if r.get("skipped") else fmt(per))
    ratio = r.get("ratio_to_floor")
    speedup = r.get("speedup_vs_cpu")
    checks = [k[:-6] + ("=ok" if v else "=DIFF") for k, v in r.items() if k.endswith("_equal")]
    rows.append((label, state, fmt(r.get("floor_seconds_per_iter")),
                 "-" if ratio is None else "%.2f" % ratio,
                 "-" if speedup is None else "%.1fx" % speedup,
                 " ".join(checks) or "-"))
head = ("row", "ms (per iter or total)", "floor ms", "ratio", "vs cpu", "checks")
widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(head)]
for row in [head] + rows:
    print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
'
}

gpu_banner() {
  log "GPU"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  else
    echo "nvidia-smi not found; continuing (the tests skip without a device)"
  fi
}

finish() {
  log "tests"
  printf '%s\n' "${TEST_SUMMARY[@]:-none run}"
  log "rows ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)," \
      "$((SECONDS - START)) of ${BUDGET}s)"
  print_table | tee "$OUT_DIR/table.txt"
}

STATUS=0
TEST_SUMMARY=()
RESULTS=()

case "$MODE" in
  prepare)
    prepare
    exit $?
    ;;
  carried)
    if [[ -f "$PACK/carry.tar.gz" ]]; then
      rm -rf "$CARRY"
      tar -C "$BUILD" -xzf "$PACK/carry.tar.gz" || { echo "cannot unpack $PACK/carry.tar.gz"; exit 74; }
    fi
    [[ -x "$CARRY/bin/gwalign" ]] || {
      echo "no $CARRY/bin/gwalign: run scripts/gpu-check.sh --prepare on the build machine and" \
           "carry build-gpu/pack"
      exit 66
    }
    OUT_DIR="${OUT:-$CARRY/out}"
    mkdir -p "$OUT_DIR"
    : >"$OUT_DIR/rows.jsonl"
    TESTS_LOG="$OUT_DIR/tests.log"
    : >"$TESTS_LOG"
    exec > >(tee "$OUT_DIR/gpu-check.log") 2>&1
    export LD_LIBRARY_PATH="$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    gpu_banner
    cat "$CARRY/MANIFEST" 2>/dev/null
    if [[ "$SKIP_TESTS" != 1 ]]; then
      log "GPU tests (budget ${BUDGET}s for tests and rows)"
      tests=()
      for t in "${GPU_TESTS[@]}"; do [[ -x "$CARRY/tests/$t" ]] && tests+=("$CARRY/tests/$t"); done
      run_tests "${tests[@]}"
    fi
    log "rows"
    run_rows "$CARRY/bin/gwalign"
    finish
    exit $STATUS
    ;;
  build)
    OUT_DIR="${OUT:-$BUILD/gpu-check-out}"
    mkdir -p "$OUT_DIR"
    : >"$OUT_DIR/rows.jsonl"
    TESTS_LOG="$OUT_DIR/tests.log"
    : >"$TESTS_LOG"
    read -r -a CTEST_EXTRA <<<"${GPU_CTEST_ARGS:-}"
    gpu_banner
    if [[ "${GPU_SKIP_BUILD:-0}" != 1 ]]; then
      if [[ -f "$ROOT/scripts/deps.sh" ]]; then
        log "packages"
        # shellcheck source=scripts/deps.sh
        source "$ROOT/scripts/deps.sh"
        gwalign_install_deps || echo "could not install missing packages (offline?); trying anyway"
      fi
      log "configure and build $BUILD"
      generator=()
      command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
      cmake -S "$ROOT" -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DGWALIGN_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" || exit 1
      cmake --build "$BUILD" -j"$JOBS" || exit 1
      START=$SECONDS  # the budget covers tests and rows, not the build
    elif [[ ! -x "$BUILD/tools/gwalign/gwalign" ]]; then
      echo "GPU_SKIP_BUILD=1 but $BUILD/tools/gwalign/gwalign is missing"
      exit 1
    fi
    if [[ "$SKIP_TESTS" != 1 ]]; then
      log "ctest -L gpu"
      if (cd "$BUILD" && timeout "$(remaining)" ctest -L gpu --output-on-failure \
            "${CTEST_EXTRA[@]}" >>"$TESTS_LOG" 2>&1); then
        TEST_SUMMARY+=("ctest -L gpu: ok")
      else
        TEST_SUMMARY+=("ctest -L gpu: FAILED (see $TESTS_LOG)")
        STATUS=1
      fi
      tail -n 5 "$TESTS_LOG"
    fi
    log "rows"
    run_rows "$BUILD/tools/gwalign/gwalign"
    finish
    exit $STATUS
    ;;
esac
