#!/usr/bin/env bash
# opm serve benchmark: a file-based catalog of >=5,000 bundles (upstream's
# renders of the reference packages, copied under renamed packages, as the
# internal/fbc benchmarks build it), served as a whole opm process. Prints,
# per run, the time from exec to opm logging "serving registry" (the health
# service answers SERVING from then on; checked once with grpcurl after),
# polled every 10 ms, and the process's peak RSS (VmHWM), for:
#   1. no cache: the catalog is converted to a sqlite index at start-up;
#   2. --cache-dir --cache-only: building the cache, as an image build does;
#   3. --cache-dir: serving from the cache built in 2 (the digest of the
#      catalog files is checked first).
# Usage: bench/serve-fbc.sh   (RUNS=N runs of each, default 3; OPM=path to skip the build)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-3}
TAGS='containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub'
REF=../shared/reference/index
[ -d "$REF" ] || { echo "bench: no reference renders at $REF" >&2; exit 2; }
GRPCURL=$(command -v grpcurl || echo /root/go/bin/grpcurl)
[ -x "$GRPCURL" ] || { echo "bench: grpcurl not found (go install github.com/fullstorydev/grpcurl/cmd/grpcurl@v1.9.4)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OPM=${OPM:-}
if [ -z "$OPM" ]; then
  go build -tags "$TAGS" -o "$work/opm" ./cmd/opm
  OPM=$work/opm
fi

# One render per package (the replaces one when there is one), copied under
# renamed packages until the catalog holds at least 5,000 bundles.
. bench/refcatalog.sh
refcatalog "$work/catalog" "$REF" 5000
echo "catalog: $bundles bundles, $(ls "$work/catalog" | wc -l) packages, $(du -sm "$work/catalog" | cut -f1) MB"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# run LABEL ARGS...: serve until SERVING, print the figures, stop it.
run() {
  local label=$1; shift
  local p; p=$(port)
  local start; start=$(date +%s%N)
  "$OPM" serve "$work/catalog" -p "$p" -t "$work/tlog" "$@" 2>"$work/log" &
  local pid=$!
  until grep -q 'msg="serving registry"' "$work/log"; do
    kill -0 "$pid" 2>/dev/null || { echo "bench: opm serve exited:"; cat "$work/log"; exit 1; }
    sleep 0.01
  done
  local end; end=$(date +%s%N)
  "$GRPCURL" -plaintext "127.0.0.1:$p" grpc.health.v1.Health/Check | grep -q SERVING || { echo "bench: not SERVING"; exit 1; }
  local hwm; hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  kill -TERM "$pid"; wait "$pid" || true
  printf '%-34s SERVING after %5.2f s, peak RSS %4d MB\n' "$label" "$(echo "($end - $start) / 1000000000" | bc -l)" "$((hwm / 1024))"
}

for i in $(seq "$RUNS"); do run "no cache (convert at start-up)"; done
cache=$work/cache
for i in $(seq "$RUNS"); do
  rm -rf "$cache"
  /usr/bin/time -f '%e %M' -o "$work/time" "$OPM" serve "$work/catalog" --cache-dir "$cache" --cache-only 2>/dev/null
  read -r secs kb < "$work/time"
  printf '%-34s took %5.2f s, peak RSS %4d MB (cache %d MB)\n' "--cache-only (image build time)" "$secs" "$((kb / 1024))" "$(du -sm "$cache" | cut -f1)"
done
for i in $(seq "$RUNS"); do run "--cache-dir (cache built)" --cache-dir "$cache"; done
