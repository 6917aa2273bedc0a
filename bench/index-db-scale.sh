#!/usr/bin/env bash
# index add --database at catalog scale: builds one database from a
# synthetic catalog (bench/gencatalog: renamed copies of ../shared/corpus)
# of N bundles, first with one `opm index add` call per package, then with
# one call for all of them, and prints wall time and peak RSS of each.
# Usage: bench/index-db-scale.sh   (N=5000; OPM=path to a built opm, default bin/opm;
#        ONLY=one or ONLY=per for one of the two runs)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-5000}
OPM=$(realpath "${OPM:-bin/opm}")
[ -x "$OPM" ] || { echo "bench: build opm first (make build)" >&2; exit 2; }
[ -d ../shared/corpus/real ] || { echo "bench: no corpus at ../shared/corpus/real" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go run ./bench/gencatalog -corpus ../shared/corpus -out "$work/cat" -n "$N" >/dev/null
cd "$work/cat"
sed "s#^$work/cat/##" bundles.txt > rel.txt
export XDG_CACHE_HOME="$work/cache"   # the verified-database log of this run only

ONLY=${ONLY:-}
count() { [ -f "$1" ] && sqlite3 "$1" 'select count(*) from operatorbundle' || echo "-"; }

# One call per package, in the order the generator wrote them.
if [ "$ONLY" != one ]; then
  start=$(date +%s.%N); peak=0; calls=0
  for p in $(cut -d/ -f1 rel.txt | sort -u); do
    # shellcheck disable=SC2046
    /usr/bin/time -f "%M" -o "$work/rss" "$OPM" index add --mode semver --permissive --database "$work/per.db" \
      $(grep "^$p/" rel.txt | sed 's/^/-b /') >/dev/null 2>&1
    rss=$(tail -1 "$work/rss"); [ "$rss" -gt "$peak" ] && peak=$rss
    calls=$((calls + 1))
  done
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" -v p="$peak" -v c="$calls" -v n="$N" \
    'BEGIN { printf "one call per package: %d calls, %.1f s wall (%.0f ms per call), peak RSS %.0f MB\n", c, e - s, (e - s) * 1000 / c, p / 1024 }'
fi

# One call for every bundle (-b repeated: one comma-joined argument would
# exceed the kernel's 128 KiB limit on a single argument).
if [ "$ONLY" != per ]; then
  # shellcheck disable=SC2046
  /usr/bin/time -f "%e %M" -o "$work/one" "$OPM" index add --mode semver --permissive --database "$work/one.db" \
    $(sed 's/^/-b /' rel.txt) >/dev/null 2>&1
  read -r wall rss < <(tail -1 "$work/one")
  awk -v w="$wall" -v r="$rss" -v n="$N" 'BEGIN { printf "one call for all %d bundles: %.1f s wall, peak RSS %.0f MB\n", n, w, r / 1024 }'
fi
echo "bundles in the databases: $(count "$work/per.db") (per package), $(count "$work/one.db") (one call)"
