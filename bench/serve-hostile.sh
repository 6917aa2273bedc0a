#!/usr/bin/env bash
# Issue 27's hostile clients against whole server processes, before and
# after: for each opm binary (OPM_BEFORE, when set, then this tree's build)
#   http:     `opm serve DIR --http --grpc=false --http-metas` gets
#             HTTP_CLIENTS (500) connections asking for /api/v1/all with gzip
#             that never read;
#   registry: `opm registry serve` gets STREAMS (5,000) ListBundles streams
#             spread over CONNS (625) connections, never read;
#   opm:      `opm serve DIR` gets the same streams;
# bench/hostileclients prints the server's RSS with them and at its peak,
# and the time of ordinary requests beside them; then, the hostile clients
# still connected, the server gets SIGTERM (the gRPC servers run with
# --stop-grace 0) and the time to its exit is printed (capped at
# STOP_WAIT, 20 s). The catalog is bench/refcatalog.sh's (5,040 bundles).
#
#   OPM_BEFORE=/tmp/opm-old bench/serve-hostile.sh   (OPM=path skips the build; CASES="http registry opm")
set -euo pipefail
cd "$(dirname "$0")/.."
# opm reads OPM_* variables as flags: keep this one from it.
BEFORE=${OPM_BEFORE:-}
unset OPM_BEFORE
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
REF=${REF:-../shared/reference/index}
[ -d "$REF" ] || { echo "bench: no reference renders at $REF" >&2; exit 2; }
HTTP_CLIENTS=${HTTP_CLIENTS:-500}
STREAMS=${STREAMS:-5000}
CONNS=${CONNS:-625}
STOP_WAIT=${STOP_WAIT:-20}
work=$(mktemp -d)
cleanup() { [ -f "$work/pids" ] && while read -r p; do kill -9 "$p" 2>/dev/null || true; done <"$work/pids"; rm -rf "$work"; }
trap cleanup EXIT
OPM=${OPM:-}
if [ -z "$OPM" ]; then
  go build -tags "$TAGS" -o "$work/opm" ./cmd/opm
  OPM=$work/opm
fi
go build -tags "$TAGS" -o "$work/hostile" ./bench/hostileclients
. bench/refcatalog.sh
refcatalog "$work/catalog" "$REF" 5000
"$OPM" migrate --to sqlite "$work/catalog" "$work/index.db" 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
echo "catalog: $bundles bundles; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ready ADDR KIND PID: wait until the server answers.
ready() {
  for _ in $(seq 3000); do
    if [ "$2" = http ]; then
      curl -sf -o /dev/null "http://$1/api/v1/metas?schema=olm.package&name=none" && return
    elif (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null; then
      sleep 0.5; return
    fi
    kill -0 "$3" 2>/dev/null || { echo "bench: server exited" >&2; return 1; }
    sleep 0.1
  done
  echo "bench: server not answering" >&2; return 1
}

# run LABEL BIN CASE
run() {
  local label=$1 bin=$2 case=$3 p addr pid kind=grpc
  p=$(port); addr=127.0.0.1:$p
  case $case in
    http) kind=http
      "$bin" serve "$work/catalog" --http "$addr" --grpc=false --http-metas -t "" >"$work/log" 2>&1 & ;;
    registry) "$bin" registry serve -d "$work/index.db" -p "$addr" -t "" --stop-grace 0 >"$work/log" 2>&1 & ;;
    opm) "$bin" serve "$work/catalog" -p "$addr" -t "" --stop-grace 0 >"$work/log" 2>&1 & ;;
  esac
  pid=$!; echo "$pid" >>"$work/pids"
  ready "$addr" "$kind" "$pid"
  local base; base=$(awk '/^VmRSS/ {printf "%.0f", $2/1000}' "/proc/$pid/status")
  rm -f "$work/out"
  if [ "$kind" = http ]; then
    "$work/hostile" -mode http -addr "$addr" -pid "$pid" -clients "$HTTP_CLIENTS" -probes 5 -hold 600s >"$work/out" 2>&1 &
  else
    "$work/hostile" -mode grpc -addr "$addr" -pid "$pid" -conns "$CONNS" -streams "$STREAMS" -probes 5 -hold 600s >"$work/out" 2>&1 &
  fi
  local client=$!; echo "$client" >>"$work/pids"
  while [ ! -s "$work/out" ] && kill -0 "$client" 2>/dev/null; do sleep 0.2; done
  sleep 0.2
  echo "$label $case: base RSS ${base} MB; $(cat "$work/out")"
  local start; start=$(date +%s.%N)
  kill -TERM "$pid"
  local n=0
  while kill -0 "$pid" 2>/dev/null && [ "$n" -lt $((STOP_WAIT * 10)) ]; do sleep 0.1; n=$((n + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$label $case: still running ${STOP_WAIT} s after SIGTERM (hostile clients connected)"
    kill -9 "$pid" 2>/dev/null || true
  else
    printf '%s %s: exited %.1f s after SIGTERM\n' "$label" "$case" "$(echo "$(date +%s.%N) - $start" | bc -l)"
  fi
  kill "$client" 2>/dev/null || true
  wait "$pid" "$client" 2>/dev/null || true
}

for case in ${CASES:-http registry opm}; do
  [ -n "$BEFORE" ] && run before "$BEFORE" "$case"
  run after "$OPM" "$case"
done
