#!/usr/bin/env bash
# Scale benchmark of `opm bundle validate` over a whole catalog in one
# process: a synthetic catalog of renamed copies of the shared corpus
# (bench/gencatalog) at 1,000, 5,000 and 10,000 bundles, each size validated
# by one `opm bundle validate DIR... -o json >/dev/null` under /usr/bin/time
# -v. Prints, per size: wall time, CPU (user+system) per bundle and peak RSS.
#
# Usage: bench/validate-scale.sh              (builds bin/opm first)
#        OPM=/path/to/opm SIZES="1000 10000" KEEP=1 bench/validate-scale.sh
# KEEP=1 keeps the generated catalog (its path is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

SIZES=${SIZES:-"1000 5000 10000"}
CORPUS=${CORPUS:-../shared/corpus}
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
[ -d "$CORPUS/real" ] || { echo "bench: no corpus at $CORPUS/real" >&2; exit 2; }
if [ -z "${OPM:-}" ]; then
  make -s build >/dev/null
  OPM=$repo/bin/opm
fi

max=0
for n in $SIZES; do [ "$n" -gt "$max" ] && max=$n; done
work=$(mktemp -d "${TMPDIR:-/tmp}/opm-validate-scale.XXXXXX")
if [ -n "${KEEP:-}" ]; then echo "catalog kept in $work" >&2; else trap 'rm -rf "$work"' EXIT; fi

# One catalog of the largest size; smaller sizes validate its first N
# bundles (whole packages but the last, in the order a shell glob gives).
go run ./bench/gencatalog -corpus "$CORPUS" -out "$work/catalog" -n "$max"
cd "$work/catalog"
echo "opm: $OPM ($("$OPM" version 2>/dev/null | head -1 || true)); $(nproc) CPUs"
printf '%8s  %9s  %12s  %9s  %13s  %9s  %s\n' bundles wall "CPU (u+s)" "system" "CPU/bundle" "peak RSS" findings
for n in $SIZES; do
  mapfile -t dirs < <(head -n "$n" bundles.txt)
  # One process for all of them: relative paths keep the list far below
  # ARG_MAX (10,000 bundles are ~400 KB of arguments; Linux allows 2 MB), so
  # nothing splits the run the way xargs would.
  rc=0
  /usr/bin/time -v -o "$work/time.$n" "$OPM" bundle validate "${dirs[@]}" -o json >"$work/out.json" || rc=$?
  # 0: passed, 1: findings failed the run; anything else is an error.
  if [ "$rc" -gt 1 ]; then
    echo "bench: opm exited $rc at $n bundles:" >&2
    cat "$work/time.$n" >&2
    exit 1
  fi
  findings=$(grep -c '"rule":' "$work/out.json" || true)
  awk -v n="$n" -v findings="$findings" -F': ' '
    /User time/ { u = $2 }
    /System time/ { s = $2 }
    /Maximum resident set size/ { rss = $2 }
    /Elapsed \(wall clock\)/ {
      k = split($2, p, ":"); w = 0
      for (i = 1; i <= k; i++) w = w * 60 + p[i]
    }
    END {
      printf "%8d  %8.1fs  %11.1fs  %8.1fs  %10.2f ms  %6.0f MB  %d\n", n, w, u + s, s, (u + s) * 1000 / n, rss / 1024, findings
    }' "$work/time.$n"
done
