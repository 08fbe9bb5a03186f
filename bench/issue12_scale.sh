#!/usr/bin/env bash
# The must-show rows of issue 12 (sparse support past the dense plan), one process per run so that
# each peak_rss_bytes is that run's own. Prints one line per row with the figures the issue asks
# for, and the load average before each run (the machine may be shared).
#
#   bench/issue12_scale.sh [BUILD_DIR] [ROW...]
# ROW: compare (20,000 x 25,000 sparse vs dense), 100k, 1m, align (two 200,000-cell h5ad files);
# default: compare 100k align 1m. BUILD_DIR defaults to build/ (gwalign at
# BUILD_DIR/tools/gwalign/gwalign). Scratch files go to ${TMPDIR:-/tmp}/gwalign-issue12.
set -euo pipefail

build=${1:-build}
shift || true
rows=("$@")
[ ${#rows[@]} -eq 0 ] && rows=(compare 100k align 1m)
gw="$build/tools/gwalign/gwalign"
[ -x "$gw" ] || { echo "issue12_scale.sh: no gwalign at $gw (give the build directory)" >&2; exit 66; }
py=/usr/bin/python3
work="${TMPDIR:-/tmp}/gwalign-issue12"
mkdir -p "$work"
export OMP_WAIT_POLICY=PASSIVE

load() { cut -d' ' -f1-3 /proc/loadavg; }

# bench N K SUPPORT -> JSON file path
bench() {
  local out="$work/spiral_$1x$2_$3.json"
  echo "# load $(load): gwalign bench spiral --n $1 --k $2 --support $3 --reps 1 --json" >&2
  "$gw" bench spiral --n "$1" --k "$2" --support "$3" --reps 1 --json > "$out"
  echo "$out"
}

summary() {
  "$py" - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"{r['n']} x {r['k']} {r['support']}: abs_rho {r['abs_rho']:.5f}, {r['seconds']:.1f} s, "
      f"peak RSS {r['peak_rss_bytes'] / 2**20:.0f} MiB (estimate {r['estimated_peak_bytes'] / 2**20:.0f}), "
      f"gw_loss {r['gw_loss']:.5g} +- {r['gw_loss_stderr']:.2g}, iterations {r['iterations']}, "
      f"nnz {r['support_nnz']}, row / column marginal L1 {r['row_marginal_error']:.2g} / "
      f"{r['column_marginal_error']:.2g}")
PY
}

for row in "${rows[@]}"; do
  case "$row" in
    compare)
      sparse=$(bench 20000 25000 sparse)
      dense=$(bench 20000 25000 dense)
      summary "$sparse"
      summary "$dense"
      "$py" - "$sparse" "$dense" <<'PY'
import json, sys
s, d = (json.load(open(p)) for p in sys.argv[1:3])
drho = abs(s['abs_rho'] - d['abs_rho'])
dloss = abs(s['gw_loss'] - d['gw_loss']) / d['gw_loss']
speed = d['seconds'] / s['seconds']
mem = d['peak_rss_bytes'] / s['peak_rss_bytes']
ok = lambda c: 'ok' if c else 'MISSED'
print(f"20000 x 25000 sparse vs dense: |rho| difference {drho:.4f} (<= 0.002: {ok(drho <= 0.002)}), "
      f"gw_loss difference {100 * dloss:.1f}% (<= 10%: {ok(dloss <= 0.10)}), "
      f"speed-up {speed:.1f}x (>= 5: {ok(speed >= 5)}), memory ratio {mem:.1f}x (>= 10: {ok(mem >= 10)})")
PY
      ;;
    100k)
      summary "$(bench 100000 100000 sparse)"
      ;;
    1m)
      summary "$(bench 1000000 1000000 sparse)"
      ;;
    align)
      src="$work/spiral_200k.h5ad" tgt="$work/swissroll_200k.h5ad"
      [ -f "$src" ] || "$gw" generate spiral --n 200000 --seed 1 --embed 30 -o "$src" > /dev/null
      [ -f "$tgt" ] || "$gw" generate swissroll --n 200000 --seed 2 --embed 30 -o "$tgt" > /dev/null
      echo "# load $(load): gwalign align spiral_200k.h5ad swissroll_200k.h5ad --rep obsm:X_pca --report" >&2
      rm -f "$work/aligned_200k.h5ad"
      /usr/bin/time -f "%e s wall, peak RSS %M KiB" "$gw" align "$src" "$tgt" --rep obsm:X_pca --truth obs:angle \
        --report "$work/align_200k.json" --write-into-source -o "$work/aligned_200k.h5ad"
      "$py" - "$work/aligned_200k.h5ad" "$work/align_200k.json" <<'PY'
import json, sys
import anndata
a = anndata.read_h5ad(sys.argv[1])
plan = a.obsm['gw_plan']
rep = json.load(open(sys.argv[2]))
print(f"align 200000 x 200000 (h5ad, obsm/X_pca 30-D): support {rep['result'].get('support')}, "
      f"abs_rho {rep.get('abs_rho')}, {rep['total_seconds']:.1f} s, "
      f"obsm/gw_plan read by anndata as {type(plan).__name__} {plan.shape} with {plan.nnz} entries")
PY
      ;;
    *) echo "issue12_scale.sh: unknown row '$row' (compare, 100k, 1m, align)" >&2; exit 64 ;;
  esac
done
