#!/usr/bin/env bash
# File-based catalogs at catalog scale: render, migrate (both directions),
# validate and serve (no cache, --cache-only, from the cache) of a
# synthetic catalog of N bundles, each a whole opm process, with wall time
# and peak RSS. The catalog is the one bench/validate-scale.sh and
# bench/index-db-scale.sh use (bench/gencatalog: renamed copies of the
# shared corpus), added to a sqlite database in one `opm index add` call,
# then migrated to a catalog directory.
#
# Usage: bench/fbc-scale.sh            (SIZES="1000 5000 10000"; OPM=path, default: build it)
#   KEEP=DIR   keep the generated databases in DIR and reuse them (building
#              10,000 bundles takes minutes)
#   BASE=path  another opm (say, a build of an older commit): each output is
#              also made with it and compared byte for byte, and its figures
#              printed beside
set -euo pipefail
cd "$(dirname "$0")/.."
SIZES=${SIZES:-"1000 5000 10000"}
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
[ -d ../shared/corpus/real ] || { echo "bench: no corpus at ../shared/corpus/real" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "bench: /usr/bin/time not found (Debian: apt-get install -y time)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OPM=${OPM:-}
if [ -z "$OPM" ]; then
  go build -tags "$TAGS" -o "$work/opm" ./cmd/opm
  OPM=$work/opm
fi
OPM=$(realpath "$OPM")
BASE=${BASE:+$(realpath "$BASE")}
# opm is also grpc_health_probe when called by that name.
ln -s "$OPM" "$work/grpc_health_probe"
KEEP=${KEEP:-$work/keep}
mkdir -p "$KEEP"
export XDG_CACHE_HOME=$work/xdg # the verified-database log of this run only

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# timed LABEL CMD...: run CMD under /usr/bin/time, print wall, CPU (user +
# system) and peak RSS.
timed() {
  local label=$1; shift
  /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || { echo "bench: $label failed:"; cat "$work/err"; exit 1; }
  read -r secs user sys kb < "$work/time"
  printf '  %-40s %7.2f s wall %6.2f s CPU  %5d MB\n' "$label" "$secs" "$(echo "$user + $sys" | bc -l)" "$((kb / 1024))"
}

# serving LABEL OPM ARGS...: opm serve until the health service answers
# SERVING, print the time from exec and the peak RSS. The port is polled
# with bash's /dev/tcp every 5 ms until it accepts, and only then the probe
# runs: a probe started before the listener waits out gRPC's reconnect
# backoff (up to a second) and would add that to the figure.
serving() {
  local label=$1 bin=$2; shift 2
  local p; p=$(port)
  local start; start=$(date +%s%N)
  "$bin" serve "$@" -p "$p" -t "$work/tlog" 2>"$work/log" &
  local pid=$!
  until (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && "$work/grpc_health_probe" -addr "127.0.0.1:$p" -connect-timeout 1s >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo "bench: opm serve exited:"; cat "$work/log"; exit 1; }
    sleep 0.005
  done
  local end; end=$(date +%s%N)
  local hwm; hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  local ticks; ticks=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  kill -TERM "$pid"; wait "$pid" || true
  printf '  %-40s %7.2f s wall %6.2f s CPU  %5d MB  (to SERVING)\n' "$label" "$(echo "($end - $start) / 1000000000" | bc -l)" \
    "$(echo "$ticks / $(getconf CLK_TCK)" | bc -l)" "$((hwm / 1024))"
}

# one BIN TAG N: every command on the size-N catalog with BIN; outputs go
# to $work/TAG-*.
one() {
  local bin=$1 tag=$2 n=$3 db=$KEEP/db$3.db o=$work/$2
  rm -rf "$o-dir" "$o-cache" "$o.db"
  timed "render DB > file" sh -c "'$bin' render '$db' > '$o.json'"
  timed "migrate DB DIR" "$bin" migrate "$db" "$o-dir"
  timed "validate DIR" "$bin" validate "$o-dir"
  timed "migrate --to sqlite DIR DB" "$bin" migrate --to sqlite "$o-dir" "$o.db"
  timed "serve DIR --cache-dir C --cache-only" "$bin" serve "$o-dir" --cache-dir "$o-cache" --cache-only
  serving "serve DIR (no cache)" "$bin" "$o-dir"
  serving "serve DIR --cache-dir C (cache built)" "$bin" "$o-dir" --cache-dir "$o-cache"
}

for n in $SIZES; do
  if [ ! -f "$KEEP/db$n.db" ]; then
    rm -rf "$work/cat"
    go run ./bench/gencatalog -corpus ../shared/corpus -out "$work/cat" -n "$n" >/dev/null
    # shellcheck disable=SC2046
    (cd "$work/cat" && "$OPM" index add --mode semver --permissive --database "$KEEP/db$n.db" $(sed 's/^/-b /' bundles.txt) >/dev/null 2>&1)
    rm -rf "$work/cat"
  fi
  echo "$n bundles: database $(du -Lm "$KEEP/db$n.db" | cut -f1) MB, $(sqlite3 "$KEEP/db$n.db" 'select count(*) from package') packages"
  echo " opm:"
  one "$OPM" new "$n"
  echo "  (catalog directory $(du -sm "$work/new-dir" | cut -f1) MB)"
  if [ -n "$BASE" ]; then
    echo " base ($BASE):"
    one "$BASE" base "$n"
    cmp -s "$work/new.json" "$work/base.json" && echo "  render: identical" || echo "  render: DIFFERS"
    diff -r -q "$work/new-dir" "$work/base-dir" >/dev/null && echo "  migrate: identical" || echo "  migrate: DIFFERS"
    cmp -s "$work/new.db" "$work/base.db" && echo "  migrate --to sqlite: identical" || echo "  migrate --to sqlite: DIFFERS"
    cmp -s "$work/new-cache/index.db" "$work/base-cache/index.db" && echo "  serve cache: identical" || echo "  serve cache: DIFFERS"
  fi
  rm -rf "$work"/new* "$work"/base*
done
