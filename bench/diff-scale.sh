#!/usr/bin/env bash
# opm diff at catalog scale: the synthetic catalog of bench/gencatalog
# (renamed copies of ../shared/corpus, N bundles), built into a sqlite index
# with one `opm index add --database` call and migrated to an FBC directory;
# then a modified copy of that directory (bench/diff-modify.py: packages
# removed and added, bundles removed, images changed, default channels moved,
# replaces edges cut, deprecations added). Each comparison is one whole
# `opm diff` process under /usr/bin/time; prints wall time, peak RSS and
# what the diff found, RUNS times each:
#   1. FBC dir vs itself (equal)
#   2. FBC dir vs modified FBC dir (-o text, then -o json)
#   3. sqlite db vs modified FBC dir (-o json: mixed kinds)
#   4. sqlite db vs itself (equal)
# CPU time (user+system) is printed beside wall time: on a shared machine it
# moves far less than the wall clock.
# Usage: bench/diff-scale.sh   (N=5000 RUNS=3; OPM=path to a built opm, default: build bin/opm;
#        KEEP=1 keeps the work directory; WORK=DIR reuses one kept before)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
N=${N:-5000}
RUNS=${RUNS:-3}
CORPUS=${CORPUS:-../shared/corpus}
[ -d "$CORPUS/real" ] || { echo "bench: no corpus at $CORPUS/real" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
if [ -z "${OPM:-}" ]; then
  make -s build >/dev/null
  OPM=$repo/bin/opm
fi
OPM=$(realpath "$OPM")
if [ -n "${WORK:-}" ]; then
  work=$WORK
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/opm-diff-scale.XXXXXX")
  if [ -n "${KEEP:-}" ]; then echo "work directory kept: $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
fi
export XDG_CACHE_HOME="$work/cache"

if [ -z "${WORK:-}" ]; then
go run ./bench/gencatalog -corpus "$CORPUS" -out "$work/bundles" -n "$N" >/dev/null
(
  cd "$work/bundles"
  sed "s#^$work/bundles/##" bundles.txt > rel.txt
  # -b repeated: one comma-joined argument would exceed the kernel's 128 KiB limit.
  # shellcheck disable=SC2046
  "$OPM" index add --mode semver --permissive --database "$work/index.db" $(sed 's/^/-b /' rel.txt) >/dev/null 2>&1
)
"$OPM" migrate --permissive "$work/index.db" "$work/catalog" 2>/dev/null
python3 "$repo/bench/diff-modify.py" "$work/catalog" "$work/modified"
fi
echo "catalog: $(sqlite3 "$work/index.db" 'select count(*) from operatorbundle') bundles, $(ls "$work/catalog" | wc -l) packages, $(du -sm "$work/catalog" | cut -f1) MB as FBC, $(du -sm "$work/index.db" | cut -f1) MB as sqlite; opm: $OPM; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"

# run LABEL ARGS...: one opm diff, its figures and its summary.
run() {
  local label=$1; shift
  local rc=0
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$OPM" diff "$@" >"$work/out" 2>"$work/err" || rc=$?
  if [ "$rc" -gt 1 ]; then echo "bench: opm diff $* exited $rc:" >&2; cat "$work/err" >&2; exit 1; fi
  read -r secs user sys kb < <(tail -1 "$work/time")
  local found
  if [ "$(head -c1 "$work/out")" = "{" ]; then
    found=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(", ".join(f"{k} {v}" for k,v in s.items() if v))' "$work/out")
  else
    found=$(tail -1 "$work/out")
  fi
  printf '%-32s %7.2f s wall %6.2f s CPU %5d MB  exit %d  %s\n' "$label" "$secs" "$(echo "$user + $sys" | bc -l)" "$((kb / 1024))" "$rc" "${found:0:120}"
}

for i in $(seq "$RUNS"); do
  run "fbc vs itself" "$work/catalog" "$work/catalog" --exit-code
  run "fbc vs modified (text)" "$work/catalog" "$work/modified" --exit-code
  run "fbc vs modified (json)" "$work/catalog" "$work/modified" -o json
  run "sqlite vs modified fbc (json)" "$work/index.db" "$work/modified" -o json
  run "sqlite vs itself" "$work/index.db" "$work/index.db" --exit-code
done
