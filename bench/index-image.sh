#!/usr/bin/env bash
# Index image benchmark against Debian's docker-registry on loopback:
# `opm index add --from-index` of one bundle image onto an index image whose
# database holds >=300 and >=5,000 bundles (renamed copies of the corpus),
# as BenchmarkIndexImageAddOne in internal/index runs it (the same library
# calls as the command, minus process start). Prints, per add: wall time,
# MB the registry served and received, the database layer, and how much the
# image grew beyond one database layer after all the adds (0: the previous
# database layer is replaced, never stacked).
# Usage: bench/index-image.sh   (RUNS=N adds per size, default 5; SIZES=300 or 5000 for one size;
#        COMPRESSION=zstd for --layer-compression zstd; PROFILE=FILE for a CPU profile of the adds;
#        CACHE=off for adds without the database cache, each downloading the whole database layer;
#        PROCESS=1 to run each add as a whole `opm index add` process, built from this checkout, or
#        OPM=path for that binary: CPU and peak RSS are then the opm processes')
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
if [ -n "${PROCESS:-}${OPM:-}" ]; then
  command -v /usr/bin/time >/dev/null || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
fi
command -v docker-registry >/dev/null || { echo "bench: docker-registry not found (Debian: apt-get install -y docker-registry)" >&2; exit 2; }
[ -d ../shared/corpus/real ] || { echo "bench: no corpus at ../shared/corpus/real" >&2; exit 2; }
filter='BenchmarkIndexImageAddOne'
if [ -n "${SIZES:-}" ]; then filter="$filter/bundles=${SIZES}\$"; fi

TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
OPM=${OPM:-}
if [ -z "$OPM" ] && [ -n "${PROCESS:-}" ]; then
  OPM=$(mktemp -d)/opm
  trap 'rm -rf "$(dirname "$OPM")"' EXIT
  go build -tags "$TAGS" -o "$OPM" ./cmd/opm
fi
export BENCH_OPM=${OPM:+$(realpath "$OPM")}
export BENCH_LAYER_COMPRESSION=${COMPRESSION:-gzip} BENCH_CPUPROFILE=${PROFILE:+$(realpath -m "$PROFILE")} BENCH_DB_CACHE=${CACHE:-on}
go test -tags "$TAGS" \
  -count=1 -run '^$' -bench "$filter" -benchtime "${RUNS}x" -timeout 60m ./internal/index |
awk '
  /^Benchmark/ {
    size = $1; sub(/.*bundles=/, "", size); sub(/-[0-9]+$/, "", size)
    for (i = 3; i < NF; i += 2) v[$(i+1)] = $i
    phases = sprintf("fetch %.2f, add %.2f, write %.2f; opm CPU %.2f s", v["fetch-s/op"], v["add-s/op"], v["write-s/op"], v["cpu-s/op"])
    rss = sprintf("peak RSS of the adds %.0f MB (of the benchmark process, set-up included: %.0f MB)", v["adds-peak-RSS-MB"], v["peak-RSS-MB"])
    if (ENVIRON["BENCH_OPM"] != "") {
      phases = sprintf("whole opm processes; their CPU %.2f s", v["cpu-s/op"])
      rss = sprintf("peak RSS of the largest opm process %.0f MB", v["adds-peak-RSS-MB"])
    }
    printf "index of %d bundles (%d adds): %.2f s per add (%s); pulled %.1f MB, pushed %.1f MB per add; database layer %.1f MB; image growth beyond one database layer after all adds: %.1f MB; %s\n",
      v["bundles-in-db"], $2, v["ns/op"] / 1e9, phases, v["MB-pulled/op"], v["MB-pushed/op"], v["db-layer-MB"], v["growth-beyond-one-db-layer-MB"], rss
    next
  }
  /synthetic database|database .* MB, layer/ { sub(/^ */, ""); print "  " $0 }
'
