#!/usr/bin/env bash
# opm's servers against upstream's, side by side: calls per second of
# GetPackage and GetBundleForChannel (and GetBundle) on a catalog of >=5,000
# bundles (built as bench/serve-fbc.sh builds it), through
#   registry serve: `opm registry serve` of the catalog converted to sqlite
#                   (the same database file for both servers), and
#   opm serve:      `opm serve` of the catalog directory,
# with 20 calls in flight on one connection, then on 20 connections. Each
# figure is measured RUNS times interleaved (ours, upstream's, ours, ...),
# and the median is printed with the ratio ours/upstream's. The two servers of a mode run side by side,
# the one not measured idle. Needs an upstream opm build:
#
#   UPSTREAM_OPM=/work/upstream/opm UPSTREAM_REGISTRY_OPM=/path/to/upstream-v1.73.0/opm bench/serve-compare.sh
#   (RUNS=N, default 3; DURATION=5s; MODES="registry serve"; OPM=path to skip the build; REF=reference dir)
#
# Upstream's HEAD has no `registry serve`: that mode compares with
# UPSTREAM_REGISTRY_OPM (a v1.73.0 build), and is skipped without one.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
DURATION=${DURATION:-5s}
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
REF=${REF:-../shared/reference/index}
[ -d "$REF" ] || { echo "bench: no reference renders at $REF" >&2; exit 2; }
: "${UPSTREAM_OPM:?set UPSTREAM_OPM to an upstream opm binary}"
work=$(mktemp -d)
cleanup() { [ -f "$work/pids" ] && while read -r p; do kill "$p" 2>/dev/null || true; done <"$work/pids"; rm -rf "$work"; }
trap cleanup EXIT
OPM=${OPM:-}
if [ -z "$OPM" ]; then
  go build -tags "$TAGS" -o "$work/opm" ./cmd/opm
  OPM=$work/opm
fi
go build -tags "$TAGS" -o "$work/servecalls" ./bench/servecalls

. bench/refcatalog.sh
refcatalog "$work/catalog" "$REF" 5000
"$OPM" migrate --to sqlite "$work/catalog" "$work/index.db" 2>/dev/null
echo "catalog: $bundles bundles, $(ls "$work/catalog" | wc -l) packages; $RUNS runs of $DURATION each, medians"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# start BIN MODE: start a server, wait until it answers; prints its address.
start() {
  local bin=$1 mode=$2 p; p=$(port)
  if [ "$mode" = registry ]; then
    "$bin" registry serve -d "$work/index.db" -p "$p" -t "$work/tlog" >"$work/log.$p" 2>&1 &
  else
    "$bin" serve "$work/catalog" -p "$p" -t "$work/tlog" >"$work/log.$p" 2>&1 &
  fi
  local pid=$!
  echo "$pid" >>"$work/pids"
  for _ in $(seq 1500); do
    if "$work/servecalls" -addr "127.0.0.1:$p" -method ListPackages -inflight 1 -duration 1ms -warmup 0 >/dev/null 2>&1; then
      echo "127.0.0.1:$p $pid"; return
    fi
    kill -0 "$pid" 2>/dev/null || { echo "bench: server exited:" >&2; cat "$work/log.$p" >&2; exit 1; }
    sleep 0.2
  done
  echo "bench: server not answering" >&2; exit 1
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# Both servers of a mode run side by side (idle while the other is
# measured); each figure alternates between them RUNS times.
for mode in ${MODES:-registry serve}; do
  up_bin=$UPSTREAM_OPM
  if [ "$mode" = registry ]; then
    # Upstream's HEAD has no registry serve (sqlite was removed); v1.73.0
    # has it.
    up_bin=${UPSTREAM_REGISTRY_OPM:-$UPSTREAM_OPM}
    if ! "$up_bin" registry serve --help >/dev/null 2>&1; then
      echo "registry serve: $up_bin has no registry serve; set UPSTREAM_REGISTRY_OPM to an upstream v1.73.0 build (skipped)"
      continue
    fi
  fi
  read -r ours_addr ours_pid < <(start "$OPM" "$mode")
  read -r up_addr up_pid < <(start "$up_bin" "$mode")
  label="opm serve"; [ "$mode" = registry ] && label="registry serve"
  for method in GetPackage GetBundleForChannel GetBundle; do
    for conns in 1 20; do
      : >"$work/ours"; : >"$work/up"
      for i in $(seq "$RUNS"); do
        "$work/servecalls" -addr "$ours_addr" -method "$method" -conns "$conns" -inflight 20 -duration "$DURATION" >>"$work/ours"
        "$work/servecalls" -addr "$up_addr" -method "$method" -conns "$conns" -inflight 20 -duration "$DURATION" >>"$work/up"
      done
      o=$(median <"$work/ours"); u=$(median <"$work/up")
      printf '%-15s %-20s %2d conn(s), 20 in flight: ours %7.0f/s  upstream %7.0f/s  ratio %.2f\n' \
        "$label" "$method" "$conns" "$o" "$u" "$(echo "$o / $u" | bc -l)"
    done
  done
  kill -TERM "$ours_pid" "$up_pid" 2>/dev/null || true
  wait "$ours_pid" "$up_pid" 2>/dev/null || true
done
