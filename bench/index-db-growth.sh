#!/usr/bin/env bash
# index add --database into an empty database and into a large one (1 GiB by
# default): the same adds, whole opm processes. Every bundle of the shared
# corpus is added in turn to both databases, one bundle a call (the first of
# each package makes a new package, the others grow it), alternating which
# database goes first; then, into fresh copies, every package in one call. It
# prints the median time of each kind of add in each database and their
# ratio.
#
# Usage: make build && bench/index-db-growth.sh
#   OPM=path to opm (default bin/opm)   RUNS=passes over the corpus (default 2)
#   SIZE=bytes of the large database (default 1073741824)
#   LARGE=a grown database to reuse; without it one is built (about a minute)
#   and removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
OPM=$(realpath "${OPM:-bin/opm}")
RUNS=${RUNS:-2}
SIZE=${SIZE:-1073741824}
CORPUS=../shared/corpus/real
TAGS="containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub"
[ -x "$OPM" ] || { echo "bench: build opm first (make build)" >&2; exit 2; }
[ -d "$CORPUS" ] || { echo "bench: no corpus at $CORPUS" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache" # the verified-database log of this run only

large=${LARGE:-}
if [ -z "$large" ]; then
  large="$work/grown.db"
  echo "building a $((SIZE >> 20)) MiB database (BenchmarkDatabaseAdd's grown synthetic one)..." >&2
  OPM_BENCH_DB_SIZE=$SIZE OPM_BENCH_DB_KEEP="$large" \
    go test -tags "$TAGS" -run '^$' -bench 'BenchmarkDatabaseAdd/large/newpkg' -benchtime 1x -timeout 30m ./internal/index/ >/dev/null
fi
echo "large database: $(($(stat -c %s "$large") >> 20)) MiB, $(sqlite3 "$large" 'SELECT COUNT(*) FROM operatorbundle') bundles, $(sqlite3 "$large" 'SELECT COUNT(*) FROM channel_entry') channel entries"

# The corpus's bundles, package by package.
bundles=()
kinds=()
packages=()
for p in "$CORPUS"/*/; do
  packages+=("$p")
  first=1
  for v in "$p"*/; do
    [ -d "$v/manifests" ] || continue
    bundles+=("$v")
    if [ $first = 1 ]; then kinds+=(newpkg); else kinds+=(samepkg); fi
    first=0
  done
done

add() { # database bundle... → microseconds
  local db=$1 s e args=()
  shift
  for b in "$@"; do args+=(-b "$b"); done
  s=$(date +%s%N)
  "$OPM" index add --mode semver --permissive --database "$db" "${args[@]}" >/dev/null 2>&1 || true
  e=$(date +%s%N)
  echo $(((e - s) / 1000))
}

fresh() { # copy the large database, start an empty one, write each once
  rm -f "$work/empty.db" "$work/large.db"
  cp "$large" "$work/large.db"
  # The first write to a database opm has not verified pays sqlite's
  # whole-file check (docs/compatibility.md, "Integrity"); later ones do not.
  # Both databases get that first write from the repository's example bundle.
  e=$(add "$work/empty.db" testdata/bundles/valid)
  l=$(add "$work/large.db" testdata/bundles/valid)
  echo "run $run: first write (whole-file check): empty $((e / 1000)) ms, large $((l / 1000)) ms"
}

# both KIND I BUNDLE...: the same add into both databases, the one going
# first alternating with I, each time recorded under KIND.
both() {
  local kind=$1 i=$2 e l
  shift 2
  if [ $((i % 2)) = 0 ]; then
    e=$(add "$work/empty.db" "$@")
    l=$(add "$work/large.db" "$@")
  else
    l=$(add "$work/large.db" "$@")
    e=$(add "$work/empty.db" "$@")
  fi
  echo "$kind empty $e" >>"$work/times"
  echo "$kind large $l" >>"$work/times"
}

: >"$work/times"
for run in $(seq "$RUNS"); do
  fresh
  for i in "${!bundles[@]}"; do
    both "${kinds[$i]}" "$i" "${bundles[$i]}"
  done
  # Whole packages, one call each, into databases that hold none of them.
  fresh
  for i in "${!packages[@]}"; do
    mapfile -t vs < <(for v in "${packages[$i]}"*/; do [ -d "$v/manifests" ] && echo "$v"; done)
    both package "$i" "${vs[@]}"
  done
done

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
printf '%-8s %6s %12s %12s %7s\n' kind adds "empty (ms)" "large (ms)" ratio
for k in newpkg samepkg bundles package; do
  sel() { awk -v k="$k" -v d="$1" '(k == "bundles" ? $1 != "package" : $1 == k) && $2 == d { print $3 }' "$work/times"; }
  n=$(sel empty | wc -l)
  me=$(sel empty | median)
  ml=$(sel large | median)
  awk -v k="$k" -v n="$n" -v e="$me" -v l="$ml" 'BEGIN { printf "%-8s %6d %12.1f %12.1f %6.2fx\n", k, n, e / 1000, l / 1000, l / e }'
done
