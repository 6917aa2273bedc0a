#!/usr/bin/env bash
# Hostile catalogs (issue 27 items 5, 6 and 12), each command a whole opm
# process; prints exit status, wall time (for serve: from exec to serving,
# or to exiting when it refuses) and peak RSS (/usr/bin/time %M):
#   5. BLOBS tiny blobs (default 1,000,000) in 500 files, one package each,
#      every file far under --max-file-size: validate, render, serve (gRPC)
#      and serve --http --grpc=false;
#   6. one 20 KB blob (of a custom schema) nested 9,990 deep: render,
#      migrate and alpha convert-template, and the bytes they write;
#   12. one blob of KEYS keys (default 200,000; 2.4 MB) with repeats:
#      serve --http --grpc=false, whose store checks keys for duplicates.
# With OPM_BEFORE=path the same runs go first through that (older) binary.
# Usage: bench/hostile-catalogs.sh   (OPM=path to skip the build; ITEMS="5 6 12"
#        to choose; TIMEOUT=seconds per serve, default 600)
set -euo pipefail
cd "$(dirname "$0")/.."
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
BLOBS=${BLOBS:-1000000}
KEYS=${KEYS:-200000}
ITEMS=${ITEMS:-5 6 12}
TIMEOUT=${TIMEOUT:-600}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OPM=${OPM:-}
OPM_BEFORE=${OPM_BEFORE:-}
# opm reads OPM_* variables as flags (OPM_BEFORE would be refused as one).
export -n OPM OPM_BEFORE
if [ -z "$OPM" ]; then
  go build -tags "$TAGS" -o "$work/opm" ./cmd/opm
  OPM=$work/opm
fi

# Catalogs, generated once for every binary.
has() { case " $ITEMS " in *" $1 "*) return 0;; esac; return 1; }
if has 5; then
  python3 - "$work/tiny" "$BLOBS" <<'EOF'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
files = 500
for f in range(files):
    os.makedirs(f"{d}/p{f:03d}")
    per = n // files + (1 if f < n % files else 0)
    with open(f"{d}/p{f:03d}/catalog.json", "w") as o:
        o.write(('{"schema":"x","package":"p%03d"}\n' % f) * per)
EOF
  echo "item 5: $BLOBS tiny blobs in 500 files, $(du -sm "$work/tiny" | cut -f1) MB"
fi
if has 6; then
  mkdir -p "$work/deep/p"
  python3 - "$work/deep/p/catalog.json" <<'EOF'
import sys
n = 9990 - 1  # the blob itself is the first level
open(sys.argv[1], "w").write(
    '{"schema":"olm.package","name":"p","defaultChannel":"stable"}\n'
    '{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"}]}\n'
    '{"schema":"example.com/deep","package":"p","value":' + "[" * n + "]" * n + '}\n'
    '{"schema":"olm.bundle","name":"p.v1","package":"p","image":"example.com/p:1","properties":['
    '{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}\n')
EOF
  echo "item 6: one blob nested 9,990 deep, $(stat -c %s "$work/deep/p/catalog.json") bytes"
fi
if has 12; then
  mkdir -p "$work/keys"
  python3 - "$work/keys/catalog.json" "$KEYS" <<'EOF'
import sys
n = int(sys.argv[2])
# Keys k0..k(n-1), then k7 and k100000 again: repeats the store must drop.
keys = ['"k%d":%d' % (i, i) for i in range(n)] + ['"k7":-1', '"k%d":-2' % (n // 2)]
open(sys.argv[1], "w").write(
    '{"schema":"olm.package","name":"p"}\n'
    '{"schema":"example.com/many","package":"p",' + ",".join(keys) + '}\n')
EOF
  echo "item 12: one blob of $KEYS keys, $(stat -c %s "$work/keys/catalog.json") bytes"
fi

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# once BIN LABEL ARGS...: one command to its end.
once() {
  local bin=$1 label=$2; shift 2
  local rc=0
  /usr/bin/time -f '%e %M' -o "$work/time" timeout "$TIMEOUT" "$bin" "$@" > "$work/out" 2> "$work/err" || rc=$?
  [ "${DEBUG:-}" ] && head -c 600 "$work/err" >&2
  read -r secs kb < <(tail -1 "$work/time")
  printf '  %-30s exit %3d %8.2f s  peak RSS %5d MB  wrote %4d MB  %s\n' "$label" "$rc" "$secs" "$((kb / 1024))" \
    "$(( $(stat -c %s "$work/out") / 1048576 ))" "$(grep -m1 -o '[^ ]*catalog.json:[0-9]*: .\{0,70\}' "$work/err" || true)"
}

# serve BIN LABEL PATTERN ARGS...: opm serve until its log matches PATTERN
# (serving) or it exits (refused); then SIGTERM.
serve() {
  local bin=$1 label=$2 pattern=$3; shift 3
  local start end rc=0
  start=$(date +%s%N)
  /usr/bin/time -f '%M' -o "$work/time" "$bin" serve "$@" -t "" > /dev/null 2> "$work/err" &
  local pid=$! opm=""
  local how=exited
  while kill -0 "$pid" 2>/dev/null; do
    if grep -q "$pattern" "$work/err"; then how=serving; break; fi
    if (( ($(date +%s%N) - start) / 1000000000 > TIMEOUT )); then how="not serving after ${TIMEOUT}s"; break; fi
    sleep 0.05
  done
  end=$(date +%s%N)
  # Stop opm (time's child, by its id): time then writes the peak RSS.
  opm=$(pgrep -P "$pid" || true)
  if [ -n "$opm" ]; then kill -TERM "$opm" 2>/dev/null || true; fi
  wait "$pid" || rc=$?
  printf '  %-30s %-8s %8.2f s  peak RSS %5d MB  %s\n' "$label" "$how" "$(echo "($end - $start) / 1000000000" | bc -l)" \
    "$(( $(tail -1 "$work/time") / 1024 ))" "$(grep -m1 -o '[^ ]*catalog.json:[0-9]*: .\{0,70\}' "$work/err" || true)"
}

bench() { # BIN NAME
  local bin=$1
  echo "$2 ($bin):"
  if has 5; then
    once "$bin" "5: validate" validate "$work/tiny"
    once "$bin" "5: render" render "$work/tiny"
    serve "$bin" "5: serve (gRPC)" 'msg="serving registry"' "$work/tiny" -p "127.0.0.1:$(port)"
    serve "$bin" "5: serve --http --grpc=false" 'msg="serving HTTP"' "$work/tiny" --http "127.0.0.1:$(port)" --grpc=false
  fi
  if has 6; then
    once "$bin" "6: render" render "$work/deep"
    rm -rf "$work/migrated"
    once "$bin" "6: migrate" migrate "$work/deep" "$work/migrated"
    du -sm "$work/migrated" 2>/dev/null | awk '{printf "  %-30s %d MB written\n", "   (migrate'"'"'s directory)", $1}' || true
    rm -rf "$work/migrated"
    once "$bin" "6: alpha convert-template" alpha convert-template basic "$work/deep/p/catalog.json"
  fi
  if has 12; then
    serve "$bin" "12: serve --http --grpc=false" 'msg="serving HTTP"' "$work/keys" --http "127.0.0.1:$(port)" --grpc=false
  fi
}

if [ -n "$OPM_BEFORE" ]; then
  bench "$OPM_BEFORE" before
fi
bench "$OPM" after
