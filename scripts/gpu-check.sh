#!/usr/bin/env bash
# GPU check, one command on a machine with an NVIDIA GPU (H100/H200 class):
#   1. configures a CUDA build in build-gpu (sm_90, Release, the default portable CPU build) and builds it;
#   2. runs the GPU test suites: ctest -L gpu --output-on-failure;
#   3. runs the GPU benchmarks listed in GPU_BENCHES below (each prints one JSON object);
#   4. prints a short table last: the figures for bench/RESULTS.md and bench/history/gpu.md.
# Exit status: non-zero if the build, a GPU test or a benchmark failed (the table is printed
# whenever the build succeeded).
#
# Environment: BUILD_DIR (default <repo>/build-gpu), JOBS (default nproc), CUDA_ARCH (default 90),
# GPU_BENCH_FILTER (a grep -E pattern on the benchmark labels, e.g. 'sinkhorn'),
# GPU_SKIP_BUILD=1 (use the binaries already in BUILD_DIR: a device machine without the build's
# dependencies, given a build made elsewhere; steps 1 and the package install are skipped),
# GPU_CTEST_ARGS (extra ctest arguments, e.g. '-LE python' when the build's Python module does not
# match the machine's interpreter), GPU_BENCH_TIMEOUT (seconds per benchmark, default 300) and
# GPU_DEADLINE (seconds since the start after which no further benchmark starts, default none).
#
# Adding a benchmark: append "label|gwalign arguments" to GPU_BENCHES. The command must print one
# JSON object (--json); the table shows seconds_per_iter (or seconds), floor_seconds_per_iter and
# ratio_to_floor when present.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-gpu}"
JOBS="${JOBS:-$(nproc)}"
CUDA_ARCH="${CUDA_ARCH:-90}"
FILTER="${GPU_BENCH_FILTER:-.}"
SKIP_BUILD="${GPU_SKIP_BUILD:-0}"
BENCH_TIMEOUT="${GPU_BENCH_TIMEOUT:-300}"
DEADLINE="${GPU_DEADLINE:-0}"
read -r -a CTEST_EXTRA <<<"${GPU_CTEST_ARGS:-}"

GPU_BENCHES=(
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
  # The whole solve (kNN graphs, landmarks, loop, loss): the table's ms/iter column is total ms;
  # the JSON line above the table has abs_rho, iterations and the seconds of every phase.
  "spiral cuda 4000x5000|bench spiral --backend cuda --n 4000 --k 5000 --mode landmark --reps 3 --json"
  "spiral cuda 10000x12000|bench spiral --backend cuda --n 10000 --k 12000 --mode landmark --reps 1 --json"
  "spiral cuda 20000x25000|bench spiral --backend cuda --n 20000 --k 25000 --mode landmark --reps 1 --json"
  "spiral cuda 45000x45000|bench spiral --backend cuda --n 45000 --k 45000 --mode landmark --M 100 --reps 1 --json"
)

status=0
log() { printf '\n=== %s\n' "$*"; }

log "GPU"
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
else
  echo "nvidia-smi not found; continuing (the tests skip without a device)"
fi

if [[ "$SKIP_BUILD" != 1 && -f "$ROOT/scripts/deps.sh" ]]; then
  log "packages"
  # shellcheck source=scripts/deps.sh
  source "$ROOT/scripts/deps.sh"
  gwalign_install_deps || echo "could not install missing packages (offline?); trying to build anyway"
fi

if [[ "$SKIP_BUILD" != 1 ]]; then
  log "configure $BUILD"
  generator=()
  command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  if ! cmake -S "$ROOT" -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DGWALIGN_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH"; then
    echo "configure failed"
    exit 1
  fi

  log "build (-j$JOBS)"
  if ! cmake --build "$BUILD" -j"$JOBS"; then
    echo "build failed"
    exit 1
  fi
elif [[ ! -x "$BUILD/tools/gwalign/gwalign" ]]; then
  echo "GPU_SKIP_BUILD=1 but $BUILD/tools/gwalign/gwalign is missing; build first or unset GPU_SKIP_BUILD"
  exit 1
fi

log "ctest -L gpu"
if ! (cd "$BUILD" && ctest -L gpu --output-on-failure "${CTEST_EXTRA[@]}"); then
  echo "GPU tests FAILED"
  status=1
fi

log "GPU benchmarks"
GWALIGN="$BUILD/tools/gwalign/gwalign"
results=()
for entry in "${GPU_BENCHES[@]}"; do
  label="${entry%%|*}"
  arguments="${entry#*|}"
  echo "$label" | grep -Eq "$FILTER" || continue
  if [[ "$DEADLINE" != 0 && "$SECONDS" -ge "$DEADLINE" ]]; then
    echo "--- $label: not started (GPU_DEADLINE=$DEADLINE s reached)"
    results+=("$label|{\"skipped\": true}")
    continue
  fi
  echo "--- $label: gwalign $arguments"
  # shellcheck disable=SC2086  # the argument string is split on purpose
  if output="$(timeout "$BENCH_TIMEOUT" "$GWALIGN" $arguments)"; then
    json="$(printf '%s\n' "$output" | tail -n 1)"
    echo "$json"
    results+=("$label|$json")
  else
    echo "benchmark FAILED: $label"
    results+=("$label|{\"failed\": true}")
    status=1
  fi
done

log "summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1))"
python_bin="$(command -v python3 || true)"
if [[ -n "$python_bin" ]]; then
  printf '%s\n' "${results[@]}" | "$python_bin" -c '
import json, sys
rows = []
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line:
        continue
    label, _, text = line.partition("|")
    r = json.loads(text)
    per = r.get("seconds_per_iter", r.get("seconds"))
    floor = r.get("floor_seconds_per_iter")
    ratio = r.get("ratio_to_floor")
    fmt = lambda x, scale=1e3: "-" if x is None else "%.3f" % (x * scale)
    rows.append((label, "FAILED" if r.get("failed") else "not run" if r.get("skipped") else fmt(per), fmt(floor),
                 "-" if ratio is None else "%.2f" % ratio, str(r.get("cost_reads_per_iter", "-"))))
head = ("benchmark", "ms/iter", "floor ms/read", "ratio", "reads/iter")
widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)] if rows else [len(h) for h in head]
for row in [head] + rows:
    print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
'
else
  printf '%s\n' "${results[@]}"
fi
exit $status
