#!/usr/bin/env bash
# Checks the rule of core/isa_dispatch_impl.h on the compiled kernel objects: an object compiled
# for target T (its path holds "_isa_T.dir") may define symbols with vague linkage (weak: W, V, u
# in nm) only inside T's namespaces (gw::...::isa_T::, gw_isa_T_eigen::). Anything else could be
# merged by the linker with another target's copy and run the wrong instructions.
# Arguments: object files, or ';'-separated lists of them (CMake's $<TARGET_OBJECTS:...>).
set -euo pipefail
NM="${NM:-nm}"
status=0
count=0
for arg in "$@"; do
  IFS=';' read -ra objects <<<"$arg"
  for object in "${objects[@]}"; do
    [ -n "$object" ] || continue
    isa=$(sed -n 's/.*_isa_\([a-z0-9]*\)\.dir.*/\1/p' <<<"$object")
    if [ -z "$isa" ]; then
      echo "check_isa_symbols: cannot tell the target of $object (expected a path with _isa_<target>.dir)" >&2
      exit 2
    fi
    count=$((count + 1))
    bad=$("$NM" -C --defined-only "$object" |
      awk '$2 ~ /^[WVu]$/ { $1 = ""; $2 = ""; print substr($0, 3) }' |
      grep -v -e "::isa_${isa}::" -e "gw_isa_${isa}_eigen::" -e '^DW\.ref\.__gxx_personality_v0$' || true)
    if [ -n "$bad" ]; then
      echo "FAIL $object (target $isa) defines shared weak symbols outside its target:" >&2
      echo "$bad" | head -20 >&2
      status=1
    fi
  done
done
if [ "$count" -eq 0 ]; then
  echo "check_isa_symbols: no object files given" >&2
  exit 2
fi
echo "checked $count kernel object files: $([ $status -eq 0 ] && echo clean || echo VIOLATIONS)"
exit $status
